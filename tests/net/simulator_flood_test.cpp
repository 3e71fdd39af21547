// The NetworkSimulator under a flood: each poll reads at most its budget from the inner
// transport (the rest waits there), the delay line holds at most its capacity (the rest is a
// counted drop), memory stays bounded, and a match through a flooded simulator still runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "retcon/transport.h"
#include "retcon/p2p.h"
#include "support/test_game.h"
#include "support/two_machines.h"

namespace retcon::test {
namespace {

// Counts what the simulator takes from the inner transport.
class CountingTransport final : public Transport {
 public:
  explicit CountingTransport(Transport& inner) : inner_(inner) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override { return inner_.send(to, data, length); }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    const bool got = inner_.receive(from, buffer, capacity, length);
    received += got;
    return got;
  }
  uint64_t received = 0;

 private:
  Transport& inner_;
};

// A socket under a flood: a stranger's junk datagrams (as many as `pending`) interleaved with
// the real ones of the inner transport, `ratio` junk for each real one, generated on the fly
// (a queue of 200k datagrams would be the test's own memory, not the simulator's).
class FloodMixer final : public Transport {
 public:
  FloodMixer(Transport& inner, uint32_t ratio) : inner_(inner), ratio_(ratio) {
    PeerAddress::from_bytes(reinterpret_cast<const uint8_t*>("stranger"), 8, &stranger_);
  }
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override { return inner_.send(to, data, length); }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    const bool real_turn = ratio_ == 0 || turn_++ % (ratio_ + 1) == ratio_;
    if ((pending == 0 || real_turn) && inner_.receive(from, buffer, capacity, length)) return true;
    if (pending == 0) return false;
    --pending;
    if (from) *from = stranger_;
    std::memset(buffer, 0x5a, 64);
    *length = 64;
    return true;
  }
  uint64_t pending = 0;

 private:
  Transport& inner_;
  uint32_t ratio_;
  uint64_t turn_ = 0;
  PeerAddress stranger_;
};

// Drains one poll (receive until false); returns the datagrams delivered.
size_t poll_once(NetworkSimulator& sim) {
  PeerAddress from;
  uint8_t buffer[2048];
  size_t length = 0, n = 0;
  while (sim.receive(&from, buffer, sizeof buffer, &length)) ++n;
  return n;
}

TEST(SimulatorFlood, TwoHundredThousandDatagramsArriveInBoundedPollsAndBoundedMemory) {
  InMemoryNetwork net;
  FloodMixer flood(*net.add_endpoint(), 0);
  constexpr uint64_t kFlood = 200000;
  flood.pending = kFlood;
  CountingTransport counted(flood);
  NetworkSimulator sim(counted, 1);
  LinkProfile slow;
  slow.latency_us = 50000;  // everything is held a while: the delay line fills
  slow.jitter_us = 20000;
  sim.set_incoming(slow);
  SimulatorLimits limits;
  limits.receive_budget = 1000;
  limits.capacity = 2048;
  sim.set_limits(limits);

  uint64_t now = 0, delivered = 0;
  size_t peak_bytes = 0, peak_held = 0;
  int polls = 0;
  while (delivered + sim.incoming_stats().dropped_capacity < kFlood && polls < 100000) {
    now += 16667;
    sim.set_time(now);
    const uint64_t before = counted.received;
    delivered += poll_once(sim);
    ++polls;
    // One poll reads no more than its budget, whatever is waiting.
    ASSERT_LE(counted.received - before, limits.receive_budget) << "poll " << polls;
    peak_held = std::max(peak_held, sim.in_flight());
    peak_bytes = std::max(peak_bytes, sim.buffer_bytes());
  }
  EXPECT_EQ(counted.received, kFlood);  // everything was read, over several polls
  EXPECT_GE(polls, int(kFlood / limits.receive_budget));
  EXPECT_LE(peak_held, limits.capacity);
  // Bounded by the capacity (slots of an MTU each, plus bookkeeping), not by the flood.
  EXPECT_LE(peak_bytes, size_t(limits.capacity) * 1800 + 65536 + 2 * 64 * 1800);
  EXPECT_EQ(delivered + sim.incoming_stats().dropped_capacity, kFlood);
  EXPECT_GT(sim.incoming_stats().budget_exhausted, 0u);
  EXPECT_EQ(sim.incoming_stats().delivered, delivered);
}

TEST(SimulatorFlood, BeyondCapacityDatagramsAreCountedDrops) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*a, 1);
  LinkProfile held;
  held.latency_us = 1000000;
  sim.set_outgoing(held);
  SimulatorLimits limits;
  limits.capacity = 100;
  sim.set_limits(limits);
  const uint8_t data[10] = {};
  for (int i = 0; i < 250; ++i) ASSERT_EQ(sim.send(b->address(), data, sizeof data), Result::ok);
  EXPECT_EQ(sim.in_flight(), 100u);
  EXPECT_EQ(sim.outgoing_stats().dropped_capacity, 150u);
  sim.set_time(1000000);
  EXPECT_EQ(sim.in_flight(), 0u);
  EXPECT_EQ(b->pending(), 100u);
}

TEST(SimulatorFlood, EqualDueTimesLeaveInOrderAndEarlierOnesFirst) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*a, 1);
  LinkProfile jittery;
  jittery.latency_us = 1000;
  jittery.jitter_us = 50000;
  sim.set_outgoing(jittery);
  for (uint8_t i = 0; i < 200; ++i) ASSERT_EQ(sim.send(b->address(), &i, 1), Result::ok);
  sim.set_time(100000);
  // Delivered in due order: with jitter, not in send order, but every one once.
  std::vector<int> seen(200, 0);
  PeerAddress from;
  uint8_t byte = 0;
  size_t length = 0;
  int n = 0;
  while (b->receive(&from, &byte, 1, &length)) {
    ++seen[byte];
    ++n;
  }
  EXPECT_EQ(n, 200);
  for (int count : seen) EXPECT_EQ(count, 1);
}

// A stranger floods one player's machine in the middle of a match (30 junk datagrams for every
// real one, 200k in all): its simulator reads the flood over many polls, the match may stall a
// while, then finishes with both machines' states equal frame by frame.
TEST(SimulatorFlood, AMatchThroughAFloodedSimulatorStillRuns) {
  InMemoryNetwork net;
  InMemoryTransport* wires[2] = {net.add_endpoint(), net.add_endpoint()};
  FloodMixer flood(*wires[0], 30);
  std::unique_ptr<NetworkSimulator> sims[2] = {std::make_unique<NetworkSimulator>(flood, 1),
                                               std::make_unique<NetworkSimulator>(*wires[1], 2)};
  TestGame games[2];
  std::vector<uint64_t> hashes[2];
  std::unique_ptr<P2PSession> sessions[2];
  LinkProfile link;
  link.latency_us = 20000;
  for (uint32_t i = 0; i < 2; ++i) {
    sims[i]->set_outgoing(link);
    hashes[i].assign(2000, 0);
    games[i].start_hashes = &hashes[i];
    games[i].events.reserve(4096);
    const PeerAddress addresses[2] = {wires[0]->address(), wires[1]->address()};
    const P2PConfig c = two_player_config(i, games[i], sims[i].get(), addresses, 5 + i, 1);
    ASSERT_EQ(create_p2p_session(c, &sessions[i]), Result::ok);
  }
  constexpr Frame kFrames = 1200;
  uint64_t now = 0;
  for (int t = 0; t < 20000; ++t) {
    now += 16667;
    if (t == 200) flood.pending = 200000;
    bool done = true;
    for (uint32_t i = 0; i < 2; ++i) {
      sims[i]->set_time(now);
      sessions[i]->poll(now);
      if (sessions[i]->confirmed_frame() < kFrames) done = false;
      if (!sessions[i]->running() || sessions[i]->current_frame() >= kFrames + 60) continue;
      const uint8_t in = uint8_t(sessions[i]->current_frame() / 9 + i);
      sessions[i]->add_local_input(PlayerIndex(i), &in, 1);
      sessions[i]->advance_frame();
    }
    if (done) break;
  }
  EXPECT_EQ(flood.pending, 0u);
  EXPECT_EQ(sessions[0]->dropped_unknown_address(), 200000u);
  EXPECT_GT(sims[0]->incoming_stats().budget_exhausted, 0u);
  EXPECT_LE(sims[0]->buffer_bytes(), size_t(8192) * 1800 + 65536 + 2 * 64 * 1800);
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_GE(sessions[i]->confirmed_frame(), kFrames) << "machine " << i;
    EXPECT_EQ(games[i].frame_errors, 0);
    for (const Event& e : games[i].events) {
      EXPECT_NE(e.type, EventType::disconnected);
      EXPECT_NE(e.type, EventType::desync_detected);
    }
  }
  for (Frame f = 0; f <= kFrames; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << "frame " << f;
}


// Busy work on the game thread, on the clock (not a sleep): what rejecting an expensive
// datagram costs.
void spend_microseconds(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The time budget: a poll whose caller spends long on each datagram ends at the next look at
// the clock once the budget is spent; nothing is lost, the rest comes in order in later polls.
TEST(SimulatorFlood, TimeBudgetEndsAPollThatRunsLongAndLosesNothing) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*b, 1);
  SimulatorLimits limits;
  limits.receive_time_budget_us = 300;
  sim.set_limits(limits);
  for (int i = 0; i < 300; ++i) {
    const uint8_t d[2] = {uint8_t(i), uint8_t(i >> 8)};
    ASSERT_EQ(a->send(b->address(), d, sizeof d), Result::ok);
  }
  std::vector<int> got;
  std::vector<size_t> per_poll;
  PeerAddress from;
  uint8_t buffer[16];
  size_t length = 0;
  for (int poll = 0; poll < 100 && got.size() < 300; ++poll) {
    size_t n = 0;
    while (sim.receive(&from, buffer, sizeof buffer, &length)) {
      got.push_back(buffer[0] | buffer[1] << 8);
      ++n;
      spend_microseconds(20);
    }
    per_poll.push_back(n);
  }
  ASSERT_EQ(got.size(), 300u);
  for (int i = 0; i < 300; ++i) ASSERT_EQ(got[size_t(i)], i);
  // 300 us at 20 us a datagram is 15; the clock is read every 32 steps (a read or a datagram
  // handed out), so a poll ends within 32 more. A slower machine only ends it sooner.
  ASSERT_GE(per_poll.size(), 3u);
  for (size_t n : per_poll) EXPECT_LE(n, 15u + 32u);
  EXPECT_GE(sim.incoming_stats().time_budget_stops, 2u);
  // Off: the same load comes in one poll, and nothing is counted.
  limits.receive_time_budget_us = 0;
  sim.set_limits(limits);
  const uint64_t stops = sim.incoming_stats().time_budget_stops;
  for (int i = 0; i < 300; ++i) ASSERT_EQ(a->send(b->address(), buffer, 2), Result::ok);
  size_t n = 0;
  while (sim.receive(&from, buffer, sizeof buffer, &length)) {
    ++n;
    spend_microseconds(2);
  }
  EXPECT_EQ(n, 300u);
  EXPECT_EQ(sim.incoming_stats().time_budget_stops, stops);
}

// The default limits keep a seeded simulator repeatable: the same seed and the same calls give
// the same datagrams in the same polls whether the caller is quick or slow (a loaded machine,
// a sanitizer build). With a wall-clock budget on by default, a slow caller's polls ended early
// and a flooded match under ASan came out differently (SimulatorFlood.AMatchThroughAFlooded...).
TEST(SimulatorFlood, DefaultLimitsGiveTheSameRunForTheSameSeedHoweverSlowTheCaller) {
  EXPECT_EQ(SimulatorLimits{}.receive_time_budget_us, 0u) << "a wall-clock budget is opt-in";
  std::vector<size_t> per_poll[2];
  std::vector<int> order[2];
  for (int run = 0; run < 2; ++run) {
    InMemoryNetwork net;
    InMemoryTransport* a = net.add_endpoint();
    InMemoryTransport* b = net.add_endpoint();
    NetworkSimulator sim(*b, 7);
    LinkProfile link;
    link.jitter_us = 30000;
    link.loss = 0.1;
    sim.set_incoming(link);
    uint64_t now = 0;
    PeerAddress from;
    uint8_t buffer[16];
    size_t length = 0;
    for (int tick = 0; tick < 20; ++tick) {
      now += 16667;
      sim.set_time(now);
      for (int i = 0; i < 100; ++i) {
        const uint8_t d[2] = {uint8_t(tick), uint8_t(i)};
        ASSERT_EQ(a->send(b->address(), d, sizeof d), Result::ok);
      }
      size_t n = 0;
      while (sim.receive(&from, buffer, sizeof buffer, &length)) {
        order[run].push_back(buffer[0] << 8 | buffer[1]);
        ++n;
        if (run == 1) spend_microseconds(40);  // 100 datagrams: 4 ms a poll, twice the UDP budget
      }
      per_poll[run].push_back(n);
    }
  }
  EXPECT_EQ(per_poll[0], per_poll[1]);
  EXPECT_EQ(order[0], order[1]);
}

// A socket whose every read costs 20 us (Winsock under Wine: a system call through the Wine
// server per datagram) and which never runs dry: a stranger's junk, with one datagram in ten
// from the player's peer.
class SlowEndlessSocket final : public Transport {
 public:
  SlowEndlessSocket() {
    PeerAddress::from_bytes(reinterpret_cast<const uint8_t*>("stranger"), 8, &stranger_);
    PeerAddress::from_bytes(reinterpret_cast<const uint8_t*>("the peer"), 8, &peer);
  }
  Result send(const PeerAddress&, const uint8_t*, size_t) override { return Result::ok; }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    spend_microseconds(20);
    if (from) *from = turn_++ % 10 == 9 ? peer : stranger_;
    const size_t n = std::min<size_t>(capacity, 64);
    std::memset(buffer, 0x5a, n);
    *length = n;
    return true;
  }
  PeerAddress peer;

 private:
  PeerAddress stranger_;
  uint64_t turn_ = 0;
};

// Reads alone can use up a poll's time (32 reads of 20 us are past a 300 us budget at the first
// look at the clock): the reading stops, but what is due still comes out in that poll, the
// peer's datagrams among it. Before, every such poll ended before handing out anything, and
// under a flood nothing ever came out again (found under Wine: a match never started).
TEST(SimulatorFlood, SlowReadsThatUseUpThePollStillHandOutWhatIsDue) {
  SlowEndlessSocket socket;
  NetworkSimulator sim(socket, 3);
  SimulatorLimits limits;
  limits.receive_time_budget_us = 300;
  sim.set_limits(limits);
  size_t from_peer = 0;
  for (int poll = 0; poll < 20; ++poll) {
    sim.set_time(uint64_t(poll) * 16667);
    PeerAddress from;
    uint8_t buffer[128];
    size_t length = 0, n = 0;
    while (sim.receive(&from, buffer, sizeof buffer, &length)) {
      ++n;
      from_peer += from == socket.peer;
    }
    EXPECT_GE(n, 1u) << "poll " << poll;
    EXPECT_LE(n, 32u) << "poll " << poll;  // up to the next look at the clock
  }
  EXPECT_GE(from_peer, 20u);
  EXPECT_GE(sim.incoming_stats().time_budget_stops, 20u);
}

// Counts what one poll takes from a transport (receive until false).
class PollCounter final : public Transport {
 public:
  explicit PollCounter(Transport& inner) : inner_(inner) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override { return inner_.send(to, data, length); }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    const bool got = inner_.receive(from, buffer, capacity, length);
    this_poll_ = got ? this_poll_ + 1 : 0;
    most_per_poll = std::max(most_per_poll, this_poll_);
    return got;
  }
  void flush() override { inner_.flush(); }
  size_t most_per_poll = 0;

 private:
  Transport& inner_;
  size_t this_poll_ = 0;
};

// Once the inner transport says "nothing more" in a poll, the simulator does not ask it again
// until the next poll: the inner transport's own budget holds through the simulator (before,
// every receive() on the simulator started a fresh poll of the inner one).
TEST(SimulatorFlood, TheInnerTransportsBudgetHoldsThroughTheSimulator) {
  std::unique_ptr<UdpTransport> sender, receiver;
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sender), Result::ok);
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &receiver), Result::ok);
  ASSERT_EQ(receiver->set_receive_budget(10), Result::ok);
  PeerAddress to;
  ASSERT_EQ(make_ip_address("127.0.0.1", receiver->local_port(), &to), Result::ok);
  PollCounter counted(*receiver);
  NetworkSimulator sim(counted, 1);
  for (uint8_t i = 0; i < 25; ++i) ASSERT_EQ(sender->send(to, &i, 1), Result::ok);
  sender->flush();
  std::vector<size_t> per_poll;
  for (int poll = 0; poll < 10; ++poll) per_poll.push_back(poll_once(sim));
  EXPECT_EQ(per_poll[0], 10u);
  EXPECT_EQ(per_poll[1], 10u);
  EXPECT_EQ(per_poll[2], 5u);
  EXPECT_EQ(counted.most_per_poll, 10u);
}

// Drops a stranger's datagrams only after spending `cost_us` on each, as a session rejecting
// forged authenticated ones would; passes the rest on at once.
class CostlyStrangers final : public Transport {
 public:
  CostlyStrangers(Transport& inner, const PeerAddress& stranger, int cost_us)
      : inner_(inner), stranger_(stranger), cost_us_(cost_us) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override { return inner_.send(to, data, length); }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    for (;;) {
      PeerAddress sender;
      if (!inner_.receive(&sender, buffer, capacity, length)) {
        this_poll_ = 0;
        return false;
      }
      most_per_poll = std::max(most_per_poll, ++this_poll_);
      if (!(sender == stranger_)) {
        if (from) *from = sender;
        return true;
      }
      spend_microseconds(cost_us_);
      ++rejected;
    }
  }
  void flush() override { inner_.flush(); }
  size_t most_per_poll = 0;  // datagrams the simulator handed out in one poll of the session
  uint64_t rejected = 0;

 private:
  Transport& inner_;
  PeerAddress stranger_;
  int cost_us_;
  size_t this_poll_ = 0;
};

// A stranger floods a player's machine over real UDP (loopback, port 0) through the simulator
// with datagrams that each cost the game thread 5 us to reject (30 a tick, and bursts of 400):
// no poll of the session runs
// past the time budget plus one stride of the clock, the simulator's memory stays bounded, and
// the match runs to frame 300 with both machines' states equal frame by frame.
TEST(SimulatorFlood, AFloodOverUdpThroughTheSimulatorNeverWedgesThePoll) {
  std::unique_ptr<UdpTransport> sock[3];
  PeerAddress addr[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sock[i]), Result::ok);
    ASSERT_EQ(make_ip_address("127.0.0.1", sock[i]->local_port(), &addr[i]), Result::ok);
  }
  sock[0]->set_receive_time_budget(0);  // the simulator's own budget is the one under test
  NetworkSimulator sim(*sock[0], 7);
  LinkProfile link;
  link.latency_us = 10000;
  sim.set_incoming(link);
  SimulatorLimits limits;
  limits.receive_time_budget_us = 300;
  sim.set_limits(limits);
  CostlyStrangers costly(sim, addr[2], 5);
  TestGame games[2];
  std::vector<uint64_t> hashes[2];
  std::unique_ptr<P2PSession> sessions[2];
  for (int m = 0; m < 2; ++m) {
    hashes[m].assign(400, 0);
    games[m].start_hashes = &hashes[m];
    Transport* transport = m == 0 ? static_cast<Transport*>(&costly) : sock[1].get();
    const P2PConfig c = two_player_config(uint32_t(m), games[m], transport, addr, 40 + uint64_t(m), 1);
    ASSERT_EQ(create_p2p_session(c, &sessions[m]), Result::ok);
  }
  const uint8_t junk[64] = {0x52, 0x43, 5};
  uint64_t now = 0;
  size_t peak_bytes = 0;
  // Up to 9,000 ticks (the loop ends once both confirmed frame 300): the simulator's budget is wall-clock
  // time, so a slower or loaded machine reads fewer datagrams a poll, the socket drops more (the
  // peer's among them) and the match advances more slowly; it must still get there. Seen: 260
  // frames in 3,000 ticks under Wine on a loaded CI machine.
  for (int tick = 0; tick < 9000 && (sessions[0]->confirmed_frame() < 300 || sessions[1]->confirmed_frame() < 300);
       ++tick) {
    const int burst = tick % 25 == 10 ? 400 : 30;
    for (int i = 0; i < burst; ++i) sock[2]->send(addr[0], junk, sizeof junk);
    sock[2]->flush();
    now += 16667;
    sim.set_time(now);
    for (int m = 0; m < 2; ++m) {
      sessions[m]->poll(now);
      if (!sessions[m]->running() || sessions[m]->current_frame() > 320) continue;
      const uint8_t in = uint8_t(sessions[m]->current_frame() / 7 + m);
      sessions[m]->add_local_input(PlayerIndex(m), &in, 1);
      sessions[m]->advance_frame();
    }
    peak_bytes = std::max(peak_bytes, sim.buffer_bytes());
  }
  ASSERT_GE(sessions[0]->confirmed_frame(), 300);
  ASSERT_GE(sessions[1]->confirmed_frame(), 300);
  for (Frame f = 0; f <= 300; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << f;
  for (const Event& e : games[0].events) EXPECT_NE(e.type, EventType::disconnected);
  // The flood reached the game thread: on Linux the game rejects ~12,300 junk datagrams, under
  // Wine (a system call per read, so fewer read before the socket drops the rest) ~9,800. The
  // bound leaves room for a slower machine.
  EXPECT_GT(costly.rejected, 5000u);
  // 300 us at 5 us a datagram is 60 of them, and the clock is read every 32 steps (reads and
  // hand-outs): a poll never handed out more than 60 + 32 (a slower machine only hands out
  // fewer). Without the time budget a poll took every due one (a burst: hundreds).
  EXPECT_LE(costly.most_per_poll, 60u + 32u);
  EXPECT_GT(sim.incoming_stats().time_budget_stops, 0u);
  EXPECT_LE(peak_bytes, size_t(limits.capacity) * 1800 + 65536 + 2 * 64 * 1800);
}

}  // namespace
}  // namespace retcon::test
