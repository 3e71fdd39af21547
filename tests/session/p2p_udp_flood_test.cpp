// UdpTransport batching and its per-poll budget, on loopback sockets bound to port 0 with a
// virtual clock: a tick's sends leave together, one receive call serves a poll, and a flood of
// stranger datagrams can neither wedge a poll nor stop a match.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "retcon/p2p.h"
#include "support/test_game.h"
#include "support/two_machines.h"

namespace retcon::test {
namespace {

struct Sockets {
  std::unique_ptr<UdpTransport> sock[3];
  PeerAddress addr[3];
  void open() {
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sock[i]), Result::ok);
      ASSERT_EQ(make_ip_address("127.0.0.1", sock[i]->local_port(), &addr[i]), Result::ok);
    }
  }
};

// Drains what one poll of a session would: receive until false.
std::vector<std::vector<uint8_t>> drain(UdpTransport& t) {
  std::vector<std::vector<uint8_t>> got;
  uint8_t buffer[1500];
  size_t length = 0;
  PeerAddress from;
  while (t.receive(&from, buffer, sizeof buffer, &length)) got.emplace_back(buffer, buffer + length);
  return got;
}

TEST(UdpBatching, QueuedSendsArriveInOrderAfterFlush) {
  Sockets s;
  s.open();
  s.sock[0]->flush();  // the owner flushes: sends are queued from now on
  for (uint8_t i = 0; i < 40; ++i) {
    const uint8_t d[3] = {i, uint8_t(i * 3), 7};
    ASSERT_EQ(s.sock[0]->send(s.addr[1], d, sizeof d), Result::ok);
  }
  s.sock[0]->flush();
  std::vector<std::vector<uint8_t>> got;
  for (int poll = 0; poll < 10 && got.size() < 40; ++poll) {
    auto more = drain(*s.sock[1]);
    got.insert(got.end(), more.begin(), more.end());
  }
  ASSERT_EQ(got.size(), 40u);
  for (uint8_t i = 0; i < 40; ++i) EXPECT_EQ(got[i], (std::vector<uint8_t>{i, uint8_t(i * 3), 7}));
  // The receiver's calls: on the io_uring ring none (the datagrams were posted while this
  // thread's sendmmsg ran), on recvmmsg one per poll. udp_receive_path_test.cpp runs both paths.
  const bool ring = s.sock[1]->receive_path() == UdpTransport::ReceivePath::completion_ring;
#if defined(__linux__)
  // 40 datagrams: one sendmmsg of 32 when the batch filled, one of 8 at flush; two receive
  // calls (32, then a short batch of 8) and none to learn that nothing more waits.
  EXPECT_EQ(s.sock[0]->system_calls(), 2u);
  EXPECT_EQ(s.sock[1]->system_calls(), ring ? 0u : 2u);
#endif
  // An empty poll costs one call (none on the ring) and finds nothing.
  const uint64_t before = s.sock[1]->system_calls();
  EXPECT_TRUE(drain(*s.sock[1]).empty());
  EXPECT_EQ(s.sock[1]->system_calls(), before + (ring ? 0u : 1u));
}

TEST(UdpBatching, BudgetLeavesTheRestForTheNextPoll) {
  Sockets s;
  s.open();
  EXPECT_EQ(s.sock[1]->set_receive_budget(0), Result::invalid_argument);
  ASSERT_EQ(s.sock[1]->set_receive_budget(10), Result::ok);
  for (uint8_t i = 0; i < 25; ++i) ASSERT_EQ(s.sock[0]->send(s.addr[1], &i, 1), Result::ok);
  s.sock[0]->flush();
  EXPECT_EQ(drain(*s.sock[1]).size(), 10u);
  EXPECT_EQ(s.sock[1]->receive_budget_stops(), 1u);
  EXPECT_EQ(drain(*s.sock[1]).size(), 10u);
  const auto last = drain(*s.sock[1]);
  ASSERT_EQ(last.size(), 5u);
  EXPECT_EQ(last.back(), std::vector<uint8_t>{24});
  EXPECT_EQ(s.sock[1]->receive_budget_stops(), 2u);
}

// The time budget: a poll whose caller spends long on each datagram (say, rejecting forged
// authenticated ones) stops at the next batch boundary once the budget is spent; nothing is lost,
// the rest comes in order in the next polls. The "work" is a busy loop on the clock, not a sleep.
TEST(UdpBatching, TimeBudgetStopsAPollThatRunsLongAndLosesNothing) {
  Sockets s;
  s.open();
  ASSERT_EQ(s.sock[1]->set_receive_budget(100000), Result::ok);
  s.sock[1]->set_receive_time_budget(200);
  for (uint8_t i = 0; i < 100; ++i) ASSERT_EQ(s.sock[0]->send(s.addr[1], &i, 1), Result::ok);
  s.sock[0]->flush();
  std::vector<uint8_t> got;
  std::vector<size_t> per_poll;
  uint8_t buffer[64];
  size_t length = 0;
  PeerAddress from;
  for (int poll = 0; poll < 20 && got.size() < 100; ++poll) {
    size_t n = 0;
    while (s.sock[1]->receive(&from, buffer, sizeof buffer, &length)) {
      got.push_back(buffer[0]);
      ++n;
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    per_poll.push_back(n);
  }
  ASSERT_EQ(got.size(), 100u);
  for (uint8_t i = 0; i < 100; ++i) EXPECT_EQ(got[i], i);
  ASSERT_GE(per_poll.size(), 4u);
  EXPECT_EQ(per_poll[0], 32u);  // one batch (32 x 20 us > 200 us), then the budget stops the poll
  EXPECT_GE(s.sock[1]->receive_budget_stops(), 3u);
  // Off: the same load comes in one poll.
  s.sock[1]->set_receive_time_budget(0);
  for (uint8_t i = 0; i < 100; ++i) ASSERT_EQ(s.sock[0]->send(s.addr[1], &i, 1), Result::ok);
  s.sock[0]->flush();
  EXPECT_EQ(drain(*s.sock[1]).size(), 100u);
}

// Counts what each poll of the session takes from the socket.
class CountingTransport final : public Transport {
 public:
  explicit CountingTransport(Transport& inner) : inner_(inner) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    return inner_.send(to, data, length);
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    const bool got = inner_.receive(from, buffer, capacity, length);
    this_poll_ = got ? this_poll_ + 1 : 0;
    if (this_poll_ > most_per_poll) most_per_poll = this_poll_;
    return got;
  }
  void flush() override { inner_.flush(); }
  uint32_t most_per_poll = 0;

 private:
  Transport& inner_;
  uint32_t this_poll_ = 0;
};

// A stranger floods machine 0 with junk all match long. Every poll handles at most the budget
// (the rest waits, counted), and the match runs to frame 300 with both machines agreeing.
TEST(UdpBatching, FloodNeitherWedgesAPollNorStopsAMatch) {
  Sockets s;
  s.open();
  constexpr uint32_t kBudget = 64;
  ASSERT_EQ(s.sock[0]->set_receive_budget(kBudget), Result::ok);
  TestGame game[2];
  std::vector<uint64_t> hashes[2];
  std::unique_ptr<P2PSession> session[2];
  CountingTransport counted(*s.sock[0]);
  for (int m = 0; m < 2; ++m) {
    hashes[m].assign(400, 0);
    game[m].start_hashes = &hashes[m];
    Transport* transport = m == 0 ? static_cast<Transport*>(&counted) : s.sock[m].get();
    const P2PConfig c = two_player_config(uint32_t(m), game[m], transport, s.addr, 300 + m);
    ASSERT_EQ(create_p2p_session(c, &session[m]), Result::ok);
  }
  const uint8_t junk[64] = {0x52, 0x43, 3, 3};
  uint64_t now = 0, flooded = 0;
  for (int tick = 0; tick < 3000 && (session[0]->confirmed_frame() < 300 || session[1]->confirmed_frame() < 300);
       ++tick) {
    // 200 junk datagrams per tick (12,000/s at 60 fps): more than three polls' budget.
    for (int i = 0; i < 200; ++i) s.sock[2]->send(s.addr[0], junk, sizeof junk);
    s.sock[2]->flush();
    flooded += 200;
    now += 16667;
    for (int m = 0; m < 2; ++m) {
      session[m]->poll(now);
      if (!session[m]->running() || session[m]->current_frame() > 320) continue;
      const uint8_t in[2] = {uint8_t(session[m]->current_frame() / 5 + m), uint8_t(m)};
      session[m]->add_local_input(m, in, 2);
      session[m]->advance_frame();
    }
  }
  ASSERT_GE(session[0]->confirmed_frame(), 300);
  ASSERT_GE(session[1]->confirmed_frame(), 300);
  for (Frame f = 0; f <= 300; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << f;
  // No poll took more than the budget, and the flood did fill it: the rest waited, counted.
  EXPECT_EQ(counted.most_per_poll, kBudget);
  EXPECT_GT(s.sock[0]->receive_budget_stops(), 0u);
  EXPECT_GT(flooded, 10000u);
}

}  // namespace
}  // namespace retcon::test
