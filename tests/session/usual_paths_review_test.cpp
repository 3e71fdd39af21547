// A review of round 12's usual paths (issue 14: the kept bytes usual_tick_ and one_peer_, the
// usual receive, AddressWords) from the outside, the way a game or an attacker hits them mid-match:
// API misuse between the game's own calls (an input for a remote player, a local input of the
// wrong size, the same input twice, advance_frame before the frame's input, a poll whose clock
// went back), and strangers on the wire (garbage, and datagrams the match's machines really sent,
// replayed from an address no session knows). Against the general tick (tick_path_switch.h)
// every machine must send the same datagrams at the same ticks, tell its game the same events and
// answer every misuse alike; and the match must still play out: every machine's states are the
// lockstep reference's, nobody is disconnected, no machine's byte says usual where it is not.
// And a match whose addresses share their first 12 bytes (AddressWords decides only senders of
// up to 12 bytes), with a spoofer whose address differs from the peers' only past them: each
// machine finds every datagram's sender, the spoofer's replays are counted unknown and dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "retcon/p2p.h"
#include "session/tick_path_switch.h"
#include "support/match_checks.h"
#include "support/match_harness.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

struct Sent {
  uint64_t at_us;
  uint32_t to;  // the receiving machine's index, or ~0 for a stranger
  std::vector<uint8_t> bytes;
  bool operator==(const Sent& o) const { return at_us == o.at_us && to == o.to && bytes == o.bytes; }
};

struct Told {
  EventType type;
  PlayerIndex player;
  Frame frame;
  bool operator==(const Told& o) const { return type == o.type && player == o.player && frame == o.frame; }
};

struct Played {
  std::vector<std::vector<Sent>> sent;
  std::vector<std::vector<Told>> told;
  std::vector<int> answers;  // every misuse call's result, in order
  std::vector<Frame> confirmed;
  std::vector<uint64_t> unknown;  // dropped_unknown_address per machine
  uint64_t usual_ticks = 0, byte_wrong = 0, strangers_sent = 0, insiders_sent = 0;
  bool finished = false;
};

// One match of `machines` machines, the game and a stranger misbehaving at random (seeded).
Played play_misused(uint32_t seed, uint32_t machines, bool general, bool rejoin) {
  detail::set_general_ticks_for_tests(general);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.machines = machines;
  o.seed = seed;
  o.frames = 420;
  o.max_prediction = 4 + int32_t(rng() % 6);
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = true;
  o.desync_interval = 0;  // the usual tick has no desync detection
  o.allow_rejoin = rejoin;
  o.state_transfer = rejoin;
  o.link.latency_us = 5000 + rng() % 60000;
  o.link.jitter_us = rng() % 8000;
  o.link.loss = 0.01 * double(rng() % 4);
  Match match(o);
  Played out;
  out.sent.resize(machines);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    uint32_t index = ~0u;
    for (uint32_t k = 0; k < machines; ++k)
      if (match.machine(k).wire->address() == to) index = k;
    out.sent[m].push_back({match.now(), index, std::vector<uint8_t>(data, data + length)});
  };
  std::mt19937 misuse(seed * 13 + 7);
  match.before_input = [&](uint32_t m) {
    Machine& me = match.machine(m);
    const Frame f = me.session->current_frame();
    const PlayerIndex mine = PlayerIndex(m), other = PlayerIndex((m + 1) % machines);
    uint8_t in[kMaxInputSize] = {};
    switch (misuse() % 12) {
      case 0:  // an input for a remote player
        out.answers.push_back(int(me.session->add_local_input(other, in, o.input_size)));
        break;
      case 1:  // a local input of the wrong size, then none at all
        out.answers.push_back(int(me.session->add_local_input(mine, in, o.input_size + 1)));
        out.answers.push_back(int(me.session->add_local_input(PlayerIndex(machines + 3), in, o.input_size)));
        break;
      case 2: {  // advance before the frame's input (with a delay, that input came frames ago)
        if (o.input_delay != 0 || (!me.given.empty() && me.given.back() == f)) break;
        const Result r = me.session->advance_frame();
        EXPECT_EQ(r, Result::missing_local_input);
        EXPECT_EQ(me.session->current_frame(), f);
        out.answers.push_back(int(r));
        break;
      }
      case 3: {  // the frame's input given early (the harness gives it again: input_already_added)
        for (uint32_t i = 0; i < o.input_size; ++i) in[i] = match.input_byte(m, f, i);
        const Result r = me.session->add_local_input(mine, in, o.input_size);
        if (r == Result::ok && (me.given.empty() || me.given.back() != f)) me.given.push_back(f);
        out.answers.push_back(int(r));
        out.answers.push_back(int(me.session->add_local_input(mine, in, o.input_size)));
        break;
      }
      case 4:  // a poll whose clock went back (a game mixing two clocks)
        out.answers.push_back(int(me.session->poll(match.now() - 1 - misuse() % 200000)));
        break;
      case 5:  // a second poll at the same time
        out.answers.push_back(int(me.session->poll(match.now())));
        break;
      default:
        break;
    }
  };
  EXPECT_TRUE(match.build());
  InMemoryTransport* stranger = match.stranger();
  std::mt19937 wire(seed * 17 + 3);
  bool done = false;
  for (int t = 0; t < 6000 && !done; ++t) {
    match.tick();
    // The stranger: now and then garbage, or a datagram a machine sent (a handshake early on, an
    // inputs datagram later) replayed to one of the machines from the stranger's address.
    if (wire() % 5 == 0) {
      const uint32_t from = uint32_t(wire() % machines), to = uint32_t(wire() % machines);
      std::vector<uint8_t> bytes;
      const std::vector<Sent>& pool = out.sent[from];
      if (!pool.empty() && wire() % 3 != 0) {
        // Mostly recent ones; a sixth of the time one of the first ones (handshakes).
        const size_t pick = wire() % 6 == 0 ? wire() % std::min<size_t>(pool.size(), 8)
                                            : pool.size() - 1 - wire() % std::min<size_t>(pool.size(), 16);
        bytes = pool[pick].bytes;
        if (wire() % 4 == 0 && !bytes.empty()) bytes[wire() % bytes.size()] ^= uint8_t(1 + wire() % 255);
      } else {
        bytes.resize(1 + wire() % 120);
        for (uint8_t& b : bytes) b = uint8_t(wire());
      }
      // A third of them from the address of the machine whose datagram it is (a replay on the
      // path, or garbage under a peer's address: the wire's own address, not the simulator's).
      if (from != to && wire() % 3 == 0) {
        match.machine(from).wire->send(match.machine(to).wire->address(), bytes.data(), bytes.size());
        ++out.insiders_sent;
      } else {
        stranger->send(match.machine(to).wire->address(), bytes.data(), bytes.size());
        ++out.strangers_sent;
      }
    }
    for (uint32_t m = 0; m < machines; ++m) {
      out.usual_ticks += detail::usual_tick_for_tests(*match.machine(m).session);
      out.byte_wrong += !detail::usual_tick_holds_for_tests(*match.machine(m).session);
    }
    done = true;
    for (uint32_t m = 0; m < machines; ++m)
      if (match.machine(m).session->confirmed_frame() < o.frames) done = false;
  }
  out.finished = done;
  out.told.resize(machines);
  for (uint32_t m = 0; m < machines; ++m) {
    const Machine& me = match.machine(m);
    out.confirmed.push_back(me.session->confirmed_frame());
    out.unknown.push_back(me.session->dropped_unknown_address());
    for (const Event& e : me.game.events) out.told[m].push_back({e.type, e.player, e.frame});
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << "seed " << seed << " machine " << m;
    EXPECT_EQ(match.count_events(m, EventType::rejoin_requested), 0u) << "seed " << seed << " machine " << m;
    EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u) << "seed " << seed << " machine " << m;
  }
  expect_agree_with_reference(match, o.frames, true);
  detail::set_general_ticks_for_tests(false);
  return out;
}

TEST(UsualPathsReview, MisuseAndStrangersMidMatchPlayAsTheGeneralTick) {
  uint64_t datagrams = 0, usual = 0, strangers = 0, unknown = 0, insiders = 0;
  for (uint32_t seed = 1; seed <= 9; ++seed) {
    const uint32_t machines = 2 + seed % 3;  // two, three and four machines
    const bool rejoin = seed % 2 == 0;       // a stranger's handshake may be a rejoin's
    const Played general = play_misused(seed, machines, true, rejoin);
    const Played skipping = play_misused(seed, machines, false, rejoin);
    ASSERT_TRUE(general.finished) << "seed " << seed;
    ASSERT_TRUE(skipping.finished) << "seed " << seed;
    ASSERT_EQ(skipping.answers, general.answers) << "seed " << seed;
    for (uint32_t m = 0; m < machines; ++m) {
      ASSERT_EQ(skipping.sent[m].size(), general.sent[m].size()) << "seed " << seed << " machine " << m;
      for (size_t i = 0; i < general.sent[m].size(); ++i)
        ASSERT_TRUE(skipping.sent[m][i] == general.sent[m][i]) << "seed " << seed << " machine " << m << " datagram " << i;
      ASSERT_TRUE(skipping.told[m] == general.told[m]) << "seed " << seed << " machine " << m;
      datagrams += general.sent[m].size();
    }
    EXPECT_EQ(skipping.confirmed, general.confirmed) << "seed " << seed;
    EXPECT_EQ(skipping.unknown, general.unknown) << "seed " << seed;
    EXPECT_EQ(skipping.byte_wrong, 0u) << "seed " << seed;
    EXPECT_EQ(general.usual_ticks, 0u) << "seed " << seed;
    usual += skipping.usual_ticks;
    strangers += skipping.strangers_sent;
    insiders += skipping.insiders_sent;
    for (uint64_t u : skipping.unknown) unknown += u;
  }
  EXPECT_GT(datagrams, 5000u);
  EXPECT_GT(strangers, 500u);
  EXPECT_GT(insiders, 100u);
  EXPECT_GT(unknown, strangers / 2);  // most stranger datagrams are counted unknown (not all: rejoin asks)
  EXPECT_GT(usual, 4000u);            // the misuse does not keep the match off the usual tick
}

// Matches where a machine owns two players (its own poll is never the usual one, while the others'
// are, with a peer of two players: the drain frame by frame, every kept byte of a one-player peer
// off), one machine's outgoing link cut for longer than the notify delay (a lag switch: the others
// hear connection_interrupted, then connection_resumed) and, in every other match, the last machine
// leaving through disconnect_player on machine 0 (a cut while the others are on the usual tick);
// some machines have windows of their own (lowered to the smallest at the handshakes).
Played play_owners(uint32_t seed, bool general, const std::vector<uint32_t>& owner, bool drop) {
  detail::set_general_ticks_for_tests(general);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.owner = owner;
  uint32_t machines = 0;
  for (uint32_t m : owner) machines = std::max(machines, m + 1);
  o.machines = machines;
  o.seed = seed;
  o.frames = 480;
  o.max_prediction = 5 + int32_t(rng() % 5);
  // Windows of their own on some machines: every machine plays with the smallest (lowered when
  // its handshake with that machine completes, before the usual tick).
  for (uint32_t m = 0; m < machines; ++m) o.max_prediction_of.push_back(rng() % 2 == 0 ? o.max_prediction : 3 + int32_t(rng() % 9));
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = true;
  o.desync_interval = 0;
  o.retry_stalled = true;
  o.notify_delay_us = 250000;
  o.disconnect_timeout_us = 3000000;
  o.link.latency_us = 5000 + rng() % 40000;
  o.link.jitter_us = rng() % 5000;
  o.link.loss = 0.01 * double(rng() % 3);
  Match match(o);
  Played out;
  out.sent.resize(machines);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    uint32_t index = ~0u;
    for (uint32_t k = 0; k < machines; ++k)
      if (match.machine(k).wire->address() == to) index = k;
    out.sent[m].push_back({match.now(), index, std::vector<uint8_t>(data, data + length)});
  };
  EXPECT_TRUE(match.build());
  const uint32_t switcher = uint32_t(rng() % machines), leaver = machines - 1;
  const int switch_at = 150 + int(rng() % 100), switch_ticks = 25 + int(rng() % 20);
  const Frame leave_at = Frame(300 + rng() % 60);
  bool left = false, done = false;
  for (int t = 0; t < 8000 && !done; ++t) {
    if (t == switch_at || t == switch_at + switch_ticks)
      for (uint32_t k = 0; k < machines; ++k)
        if (k != switcher) match.block(switcher, k, t == switch_at);
    if (drop && !left && match.machine(leaver).session->current_frame() >= leave_at) {
      for (uint32_t p = 0; p < owner.size(); ++p)
        if (owner[p] == leaver) {
          out.answers.push_back(int(match.machine(0).session->disconnect_player(PlayerIndex(p))));
          break;
        }
      match.machine(leaver).stopped = true;
      left = true;
    }
    match.tick();
    for (uint32_t m = 0; m < machines; ++m) {
      if (match.machine(m).stopped) continue;
      out.usual_ticks += detail::usual_tick_for_tests(*match.machine(m).session);
      out.byte_wrong += !detail::usual_tick_holds_for_tests(*match.machine(m).session);
    }
    done = true;
    for (uint32_t m = 0; m < machines; ++m)
      if (!match.machine(m).stopped && match.machine(m).session->confirmed_frame() < o.frames) done = false;
  }
  for (int i = 0; i < 60; ++i) match.tick();
  out.finished = done;
  out.told.resize(machines);
  for (uint32_t m = 0; m < machines; ++m) {
    const Machine& me = match.machine(m);
    out.confirmed.push_back(me.session->confirmed_frame());
    for (const Event& e : me.game.events) out.told[m].push_back({e.type, e.player, e.frame});
    if (me.stopped) continue;
    EXPECT_EQ(me.game.frame_errors, 0) << "seed " << seed;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "seed " << seed;
    // The lag switch: heard as interrupted and resumed by every other machine still playing.
    if (m != switcher) {
      EXPECT_GE(match.count_events(m, EventType::connection_interrupted), 1u) << "seed " << seed << " machine " << m;
      EXPECT_GE(match.count_events(m, EventType::connection_resumed), 1u) << "seed " << seed << " machine " << m;
    }
    // The leaver's players, and only theirs, are disconnected everywhere still playing.
    size_t expected = 0;
    for (uint32_t p = 0; p < owner.size(); ++p) expected += drop && owner[p] == leaver;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), expected) << "seed " << seed << " machine " << m;
  }
  if (!drop) {
    expect_agree_with_reference(match, o.frames, true);
  } else {
    // The survivors agree frame by frame (the leaver's cut makes the reference theirs alone).
    for (uint32_t m = 1; m < machines; ++m) {
      if (match.machine(m).stopped) continue;
      Frame first_apart = -1;
      for (Frame f = 0; f < o.frames && first_apart < 0; ++f)
        if (match.machine(m).hashes[size_t(f)] != match.machine(0).hashes[size_t(f)]) first_apart = f;
      EXPECT_EQ(first_apart, -1) << "seed " << seed << " machine " << m;
    }
  }
  detail::set_general_ticks_for_tests(false);
  return out;
}

TEST(UsualPathsReview, MachinesOfTwoPlayersLagSwitchesAndLeaversPlayAsTheGeneralTick) {
  const std::vector<std::vector<uint32_t>> owners = {{0, 1, 1}, {0, 0, 1}, {0, 1, 1, 2}, {0, 1, 2, 2}, {0, 1, 0, 1}};
  uint64_t usual = 0, datagrams = 0;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const std::vector<uint32_t>& owner = owners[seed % owners.size()];
    const bool drop = seed % 2 == 0;
    const Played general = play_owners(seed, true, owner, drop), skipping = play_owners(seed, false, owner, drop);
    ASSERT_TRUE(general.finished) << "seed " << seed;
    ASSERT_TRUE(skipping.finished) << "seed " << seed;
    ASSERT_EQ(skipping.answers, general.answers) << "seed " << seed;
    for (size_t m = 0; m < general.sent.size(); ++m) {
      ASSERT_EQ(skipping.sent[m].size(), general.sent[m].size()) << "seed " << seed << " machine " << m;
      for (size_t i = 0; i < general.sent[m].size(); ++i)
        ASSERT_TRUE(skipping.sent[m][i] == general.sent[m][i]) << "seed " << seed << " machine " << m << " datagram " << i;
      ASSERT_TRUE(skipping.told[m] == general.told[m]) << "seed " << seed << " machine " << m;
      datagrams += general.sent[m].size();
    }
    EXPECT_EQ(skipping.confirmed, general.confirmed) << "seed " << seed;
    EXPECT_EQ(skipping.byte_wrong, 0u) << "seed " << seed;
    EXPECT_EQ(general.usual_ticks, 0u) << "seed " << seed;
    usual += skipping.usual_ticks;
  }
  EXPECT_GT(datagrams, 5000u);
  EXPECT_GT(usual, 2000u);  // the one-player machines of each match
}

// A transport whose addresses are `prefix` bytes of one value and then the in-memory address (5
// bytes): every machine's address has the same first `prefix` bytes and the same size. A prefix
// of 7 makes addresses of 12 bytes, which AddressWords decides (alike in their first word); one
// of 12 makes 17, alike in all 12 bytes the words hold, which AddressWords must leave to AddressProbe. Received addresses carry
// junk past their size (a transport need not clear it), so a sender is found by AddressWords only
// when the junk happens to match, else by AddressProbe.
class PrefixedTransport : public Transport {
 public:
  static constexpr uint8_t kPrefix = 0x5A;
  PrefixedTransport(InMemoryTransport& inner, uint32_t seed, uint32_t prefix)
      : inner_(inner), junk_(seed), prefix_(prefix) {}
  static PeerAddress wrap(const PeerAddress& inner, uint32_t prefix) {
    PeerAddress a;
    a.size = prefix + inner.size;
    std::memset(a.bytes, kPrefix, prefix);
    std::memcpy(a.bytes + prefix, inner.bytes, inner.size);
    return a;
  }
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    PeerAddress inner;
    if (to.size < prefix_) return Result::invalid_argument;
    inner.size = to.size - prefix_;
    std::memcpy(inner.bytes, to.bytes + prefix_, inner.size);
    if (log != nullptr) {
      log->emplace_back(data, data + length);
      if (log->size() > 32) log->pop_front();
    }
    return inner_.send(inner, data, length);
  }
  std::deque<std::vector<uint8_t>>* log = nullptr;  // the latest datagrams sent, when set
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    PeerAddress inner;
    if (!inner_.receive(&inner, buffer, capacity, length)) return false;
    *from = wrap(inner, prefix_);
    if (junk_() % 2 == 0)
      for (uint32_t i = from->size; i < PeerAddress::kCapacity; ++i) from->bytes[i] = uint8_t(junk_());
    return true;
  }

 private:
  InMemoryTransport& inner_;
  std::mt19937 junk_;
  uint32_t prefix_;
};

TEST(UsualPathsReview, PeersAlikeInTheirFirst12BytesAreToldApartAndASpooferIsNotAPeer) {
  for (uint32_t run = 0; run < 6; ++run) {
    const uint32_t machines = 2 + run % 3, prefix = run < 3 ? 7 : 12;
    InMemoryNetwork net;
    std::vector<InMemoryTransport*> wire;
    std::vector<std::unique_ptr<PrefixedTransport>> prefixed;
    std::vector<PeerAddress> address;
    for (uint32_t m = 0; m < machines; ++m) {
      wire.push_back(net.add_endpoint());
      prefixed.push_back(std::make_unique<PrefixedTransport>(*wire[m], 100 + m, prefix));
      address.push_back(PrefixedTransport::wrap(wire[m]->address(), prefix));
    }
    InMemoryTransport* spoofer = net.add_endpoint();
    ASSERT_EQ(address[0].size, prefix + 5);
    std::vector<TestGame> game(machines);
    std::vector<std::vector<uint64_t>> hashes(machines, std::vector<uint64_t>(700, 0));
    std::vector<std::unique_ptr<P2PSession>> s(machines);
    for (uint32_t m = 0; m < machines; ++m) {
      game[m].start_hashes = &hashes[m];
      P2PConfig c;
      c.session.num_players = machines;
      c.session.input_size = 2;
      c.session.max_state_size = 256;
      c.session.callbacks = bind_game(game[m]);
      c.network.transport = prefixed[m].get();
      c.network.rng_seed = 40 + m;
      c.desync_interval = 0;
      for (uint32_t p = 0; p < machines; ++p) {
        c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
        c.players[p].address = address[p];
      }
      ASSERT_EQ(create_p2p_session(c, &s[m]), Result::ok);
    }
    // What machine 1 sends, kept to replay: the spoofer's address has the peers' size and
    // differs from theirs only past the prefix.
    std::deque<std::vector<uint8_t>> heard;
    prefixed[1]->log = &heard;
    std::mt19937 rng(machines);
    uint64_t now = 0, spoofed = 0, usual = 0;
    const Frame frames = 500;
    bool done = false;
    for (int tick = 0; tick < 8000 && !done; ++tick) {
      now += 16667;
      for (uint32_t m = 0; m < machines; ++m) {
        s[m]->poll(now);
        if (!s[m]->running() || s[m]->current_frame() > frames + 20) continue;
        const Frame f = s[m]->current_frame();
        const uint8_t in[2] = {uint8_t(f / 9 + m), uint8_t(m * 3 + f / 31)};
        s[m]->add_local_input(PlayerIndex(m), in, 2);
        s[m]->advance_frame();
      }
      // Garbage, or one of machine 1's latest datagrams (to machine 0 in a two-machine match),
      // replayed to machine 0 from the spoofer.
      if (tick % 3 == 0) {
        std::vector<uint8_t> bytes(8 + rng() % 60);
        for (uint8_t& b : bytes) b = uint8_t(rng());
        if (!heard.empty() && rng() % 2 == 0) bytes = heard[rng() % heard.size()];
        spoofer->send(wire[0]->address(), bytes.data(), bytes.size());
        ++spoofed;
      }
      usual += detail::usual_tick_for_tests(*s[0]);
      for (uint32_t m = 0; m < machines; ++m) EXPECT_TRUE(detail::usual_tick_holds_for_tests(*s[m]));
      done = true;
      for (uint32_t m = 0; m < machines; ++m)
        if (s[m]->confirmed_frame() < frames) done = false;
    }
    ASSERT_TRUE(done) << machines << " machines, prefix " << prefix;
    EXPECT_GT(usual, 200u) << machines << " machines, prefix " << prefix;
    // The spoofer is nobody's peer: every one of its datagrams counted unknown on machine 0.
    EXPECT_EQ(s[0]->dropped_unknown_address(), spoofed) << machines << " machines, prefix " << prefix;
    for (uint32_t m = 1; m < machines; ++m) EXPECT_EQ(s[m]->dropped_unknown_address(), 0u);
    // Every machine's states agree, frame by frame.
    for (uint32_t m = 1; m < machines; ++m)
      for (Frame f = 0; f < frames; ++f) ASSERT_EQ(hashes[m][size_t(f)], hashes[0][size_t(f)]) << "machine " << m << " frame " << f;
    for (uint32_t m = 0; m < machines; ++m) {
      for (const Event& e : game[m].events) {
        EXPECT_NE(e.type, EventType::disconnected);
        EXPECT_NE(e.type, EventType::desync_detected);
      }
      EXPECT_EQ(game[m].frame_errors, 0);
    }
  }
}

}  // namespace
}  // namespace retcon::test
