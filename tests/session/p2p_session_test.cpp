#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "net/wire.h"
#include "support/match_checks.h"
#include "support/match_harness.h"
#include "support/two_machines.h"

namespace retcon::test {
namespace {

TEST(P2PSession, TwoPeersOverPerfectNetworkStayInSync) {
  MatchOptions o;
  o.frames = 300;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(2000));
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames);
  EXPECT_EQ(match.count_events(0, EventType::running), 1u);
  EXPECT_GT(match.machine(0).session->checksums_compared(), 5u);
}

TEST(P2PSession, TwoPeersWithLatencyLossAndJitterRollBackAndAgree) {
  MatchOptions o;
  o.frames = 600;
  o.link.latency_us = 50000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.1;
  o.link.duplicate = 0.05;
  o.link.reorder = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(5000));
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames);
  EXPECT_GT(match.machine(0).session->stats().rollbacks, 0u);
  PeerStats ps{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &ps), Result::ok);
  EXPECT_GT(ps.ping_us, 80000u);
  EXPECT_LT(ps.ping_us, 200000u);
}

TEST(P2PSession, FourPeersAndASpectator) {
  MatchOptions o;
  o.machines = 4;
  o.spectators = 1;
  o.frames = 400;
  o.link.latency_us = 30000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(6000));
  for (int i = 0; i < 300; ++i) match.tick();  // let the spectator catch up
  expect_agree_with_reference(match, o.frames);
  Machine& spectator = match.machine(4);
  EXPECT_GE(spectator.session->current_frame(), o.frames);
  EXPECT_EQ(match.count_events(0, EventType::spectator_joined), 1u);
}

TEST(P2PSession, SeveralLocalPlayersPerMachine) {
  MatchOptions o;
  o.machines = 3;
  o.owner = {0, 1, 0, 2, 1, 0};  // six players on three machines, interleaved
  o.frames = 400;
  o.spectators = 1;
  o.link.latency_us = 40000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(6000));
  for (int i = 0; i < 200; ++i) match.tick();
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames);
  EXPECT_GE(match.machine(3).session->current_frame(), o.frames) << "the spectator follows";
}

TEST(P2PSession, DatagramsFromUnknownAddressesAreDroppedAndCounted) {
  MatchOptions o;
  o.frames = 120;
  Match match(o);
  ASSERT_TRUE(match.build());
  InMemoryTransport* stranger = match.stranger();
  ASSERT_TRUE(match.run(1000));
  const uint8_t junk[5] = {1, 2, 3, 4, 5};
  for (int i = 0; i < 3; ++i) stranger->send(match.machine(0).wire->address(), junk, sizeof junk);
  match.tick();
  EXPECT_EQ(match.machine(0).session->dropped_unknown_address(), 3u);
  expect_agree_with_reference(match, o.frames);
}

TEST(P2PSession, GarbageFromAPeerAddressIsDroppedCountedAndTheMatchStaysInSync) {
  MatchOptions o;
  o.frames = 500;
  o.link.latency_us = 30000;
  Match match(o);
  ASSERT_TRUE(match.build());
  std::mt19937_64 rng(5);
  const PeerAddress target = match.machine(0).wire->address();
  InMemoryTransport& forger = *match.machine(1).wire;  // datagrams "from" the real peer
  for (int t = 0; t < 3000 && match.machine(0).session->confirmed_frame() < o.frames; ++t) {
    match.tick();
    if (t < 60 || t % 3) continue;
    uint8_t d[1500];
    size_t n = 0;
    switch (t % 5) {
      case 0: n = 0; break;                                                   // empty
      case 1: n = 1 + rng() % 11; for (size_t i = 0; i < n; ++i) d[i] = uint8_t(rng()); break;  // truncated
      case 2: n = 1300; std::memset(d, 0x52, n); break;                      // oversized
      case 3: n = 40; for (size_t i = 0; i < n; ++i) d[i] = uint8_t(rng());   // garbled, right magic
        d[0] = 0x52; d[1] = 0x43; d[2] = detail::kProtocolVersion; d[3] = uint8_t(1 + rng() % 9); break;
      case 4: n = 20; std::memset(d, 0, n); d[0] = 0x52; d[1] = 0x43; d[2] = 99; d[3] = 3; break;  // wrong version
    }
    forger.send(target, d, n);
  }
  match.run(2000);
  expect_agree_with_reference(match, o.frames);
  PeerStats st{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &st), Result::ok);
  EXPECT_GT(st.dropped_truncated, 0u);
  EXPECT_GT(st.dropped_oversized, 0u);
  EXPECT_GT(st.dropped_bad_version, 0u);
  EXPECT_GT(st.dropped_bad_checksum, 0u) << "garbled datagrams";
}

TEST(P2PSession, DesyncDetectedWithinTheIntervalNamingTheFirstBadFrameCompared) {
  MatchOptions o;
  o.frames = 300;
  o.desync_interval = 10;
  o.link.latency_us = 40000;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).game.diverge_at = 95;  // the state at the start of frame 96 differs
  match.run(3000);
  for (uint32_t m = 0; m < 2; ++m) {
    const auto& events = match.machine(m).game.events;
    auto it = std::find_if(events.begin(), events.end(), [](const Event& e) { return e.type == EventType::desync_detected; });
    ASSERT_NE(it, events.end()) << "machine " << m;
    EXPECT_EQ(it->frame, 100) << "first checksum frame at or after 96";
    EXPECT_NE(it->checksum_local, it->checksum_remote);
    EXPECT_NE(it->text_local, nullptr) << "the local state is described";
  }
}

// Regression: between a poll that brought a correction and the advance that re-simulates it,
// frame_checksum answered for frames after the correction from their stale saved states (the
// value changed once the rollback ran). It says wrong_state for them now.
TEST(P2PSession, FrameChecksumNeverAnswersFromAStaleStateWhileACorrectionIsPending) {
  MatchOptions o;
  o.frames = 600;
  o.link.latency_us = 50000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  std::map<Frame, uint64_t> told;  // what frame_checksum said between a poll and the advance
  uint64_t refused = 0, compared = 0;
  for (int t = 0; t < 3000 && match.machine(0).session->confirmed_frame() < o.frames; ++t) {
    match.tick();  // the advance re-simulates what the last poll corrected
    Machine& a = match.machine(0);
    for (const auto& [f, sum] : told) {
      uint64_t now = 0;
      if (a.session->frame_checksum(f, &now) != Result::ok) continue;
      ++compared;
      EXPECT_EQ(now, sum) << "frame " << f << " changed after frame_checksum answered for it";
    }
    told.clear();
    // Mid-frame: a poll brings inputs (maybe corrections); the advance comes only next tick.
    a.sim->set_time(match.now() + 9000);
    a.session->poll(match.now() + 9000);
    const Frame confirmed = a.session->confirmed_frame();
    for (Frame f = std::max<Frame>(0, confirmed - 8); f <= confirmed + 1; ++f) {
      uint64_t sum = 0;
      const Result r = a.session->frame_checksum(f, &sum);
      if (r == Result::wrong_state) ++refused;
      if (r == Result::ok) told[f] = sum;
    }
  }
  EXPECT_GT(refused, 0u) << "corrections were pending at some polls";
  EXPECT_GT(compared, 1000u);
}

TEST(P2PSession, NoFalseDesyncWhileCorrectionsArePending) {
  // Regression: checksums used to be taken of frames whose inputs had just arrived but whose
  // rollback had not run yet, reporting desyncs on a deterministic game.
  MatchOptions o;
  o.frames = 900;
  o.desync_interval = 1;  // every frame
  o.link.latency_us = 70000;
  o.link.jitter_us = 30000;
  o.link.loss = 0.15;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(8000));
  expect_agree_with_reference(match, o.frames);
  EXPECT_GT(match.machine(0).session->checksums_compared(), 700u);
  EXPECT_GT(match.machine(0).session->stats().rollbacks, 50u);
}

TEST(P2PSession, InterruptedThenResumedAfterAShortBlackout) {
  MatchOptions o;
  o.frames = 600;
  o.link.latency_us = 20000;
  o.link.blackouts.push_back({2000000, 3500000});  // 1.5 s of silence from 2 s on
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 5000000;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(6000));
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_GE(match.count_events(m, EventType::connection_interrupted), 1u) << m;
    EXPECT_GE(match.count_events(m, EventType::connection_resumed), 1u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
  }
  expect_agree_with_reference(match, o.frames);
}

// The frame of every `disconnected` event about `player` on machine m (none: empty).
std::vector<Frame> disconnect_frames(Match& match, uint32_t m, PlayerIndex player) {
  std::vector<Frame> out;
  for (const Event& e : match.machine(m).game.events)
    if (e.type == EventType::disconnected && e.player == player) out.push_back(e.frame);
  return out;
}

// Regression: each machine used to name its own last frame of the player (A 352, B 354), not
// the cut they later agreed on.
TEST(P2PSession, PeerThatVanishesIsDroppedAndEveryoneNamesTheSameAgreedFrame) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    MatchOptions o;
    o.machines = 3;
    o.frames = 600;
    o.link.latency_us = 30000;
    o.link.jitter_us = 10000;
    o.link.loss = 0.05;
    o.notify_delay_us = 300000;
    o.disconnect_timeout_us = 1000000;
    o.seed = seed;
    Match match(o);
    ASSERT_TRUE(match.build());
    for (int t = 0; t < 200; ++t) match.tick();
    match.machine(2).stopped = true;  // crashes: sends nothing more
    ASSERT_TRUE(match.run(8000)) << "seed " << seed;
    const std::vector<Frame> a = disconnect_frames(match, 0, 2), b = disconnect_frames(match, 1, 2);
    ASSERT_EQ(a.size(), 1u) << "seed " << seed;
    ASSERT_EQ(b.size(), 1u) << "seed " << seed;
    EXPECT_EQ(a[0], b[0]) << "seed " << seed << ": both machines name the agreed cut";
    const std::vector<uint64_t> ref = match.reference({-2, -2, a[0]});
    for (uint32_t m = 0; m < 2; ++m) {
      Machine& me = match.machine(m);
      for (Frame f = 0; f <= o.frames; ++f)
        ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "seed " << seed << " machine " << m << " frame " << f;
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u);
    }
  }
}

TEST(P2PSession, DroppingAPlayerByApiIsAgreedByEveryoneAndNamedTheSame) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    MatchOptions o;
    o.machines = 3;
    o.frames = 500;
    o.link.latency_us = 25000;
    o.link.jitter_us = 15000;
    o.seed = seed;
    Match match(o);
    ASSERT_TRUE(match.build());
    for (int t = 0; t < 150; ++t) match.tick();
    ASSERT_EQ(match.machine(0).session->disconnect_player(2), Result::ok);
    EXPECT_EQ(match.machine(0).session->disconnect_player(2), Result::player_disconnected);
    match.machine(2).stopped = true;
    ASSERT_TRUE(match.run(8000));
    for (uint32_t m = 0; m < 2; ++m) EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u);
    const std::vector<Frame> a = disconnect_frames(match, 0, 2), b = disconnect_frames(match, 1, 2);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0], b[0]) << "seed " << seed;
    const std::vector<uint64_t> ref = match.reference({-2, -2, a[0]});
    for (uint32_t m = 0; m < 2; ++m)
      for (Frame f = 0; f <= o.frames; ++f)
        ASSERT_EQ(match.machine(m).hashes[size_t(f)], ref[size_t(f)]) << "seed " << seed << " machine " << m << " frame " << f;
  }
}

// The tick is event-driven (p2p_session.cpp, cuts_active_): a machine that dropped nobody runs
// disconnect agreement only once a peer's datagram reports a player gone. Machine 1 here loses
// no link and none of its timers can fire (5 s timeout): it learns of machine 0's cut of player
// 2 only from machine 0's reports, and must act on the first one, not wait for its own timeout.
TEST(P2PSession, AMachineThatLostNobodyTakesTheCutFromAPeersReportAtOnce) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    MatchOptions o;
    o.machines = 3;
    o.frames = 100000;
    o.link.latency_us = 25000;
    o.seed = seed;
    Match match(o);
    ASSERT_TRUE(match.build());
    for (int t = 0; t < 150; ++t) match.tick();
    ASSERT_EQ(match.machine(0).session->disconnect_player(2), Result::ok);
    match.machine(2).stopped = true;
    for (int t = 0; t < 30; ++t) match.tick();  // half a second: a few round trips, no timeout
    const std::vector<Frame> a = disconnect_frames(match, 0, 2), b = disconnect_frames(match, 1, 2);
    ASSERT_EQ(a.size(), 1u) << "seed " << seed;
    ASSERT_EQ(b.size(), 1u) << "seed " << seed;
    EXPECT_EQ(a[0], b[0]) << "seed " << seed;
    // And the two play on together.
    const Frame before = match.machine(1).session->current_frame();
    for (int t = 0; t < 60; ++t) match.tick();
    EXPECT_GT(match.machine(1).session->current_frame(), before + 50) << "seed " << seed;
    for (uint32_t m = 0; m < 2; ++m) EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u);
  }
}

// Regression: with sparse saving the frames peers compare were almost never saved, so one
// machine computed 1 checksum in 900 frames and a desync went unreported.
TEST(P2PSession, SparseSavingStillDetectsADesync) {
  for (const bool inject : {false, true}) {
    MatchOptions o;
    o.frames = 900;
    o.desync_interval = 30;
    o.save_mode = SaveMode::sparse;
    o.link.latency_us = 40000;
    o.link.jitter_us = 10000;
    o.link.loss = 0.05;
    Match match(o);
    ASSERT_TRUE(match.build());
    if (inject) match.machine(1).game.diverge_at = 450;  // the state at the start of 451 differs
    match.run(6000);
    if (!inject) {
      expect_agree_with_reference(match, o.frames, true);
      EXPECT_GE(match.machine(0).session->checksums_compared(), 25u) << "every 30th frame of 900 compared";
      EXPECT_GE(match.machine(1).session->checksums_compared(), 25u);
      continue;
    }
    for (uint32_t m = 0; m < 2; ++m) {
      const auto& events = match.machine(m).game.events;
      auto it = std::find_if(events.begin(), events.end(), [](const Event& e) { return e.type == EventType::desync_detected; });
      ASSERT_NE(it, events.end()) << "machine " << m;
      EXPECT_EQ(it->frame, 480) << "the first checksum frame after 451";
    }
  }
}

TEST(P2PSession, SpectatorLeavingNeverDisturbsTheHost) {
  MatchOptions o;
  o.frames = 500;
  o.spectators = 2;
  o.disconnect_timeout_us = 1000000;
  o.notify_delay_us = 300000;
  Match match(o);
  ASSERT_TRUE(match.build());
  for (int t = 0; t < 150; ++t) match.tick();
  match.machine(2).stopped = true;  // the first spectator goes away
  ASSERT_TRUE(match.run(4000));
  for (int t = 0; t < 100; ++t) match.tick();
  EXPECT_EQ(match.count_events(0, EventType::spectator_left), 1u);
  expect_agree_with_reference(match, o.frames);
  EXPECT_GE(match.machine(3).session->current_frame(), o.frames) << "the other spectator kept up";
}

TEST(P2PSession, TimeSyncKeepsPeersWithinAFrameOrTwo) {
  MatchOptions o;
  o.frames = 1200;
  o.link.latency_us = 60000;
  Match match(o);
  ASSERT_TRUE(match.build());
  // Machine 1 starts late: for 40 ticks only machine 0 runs.
  for (int t = 0; t < 40; ++t) {
    match.machine(1).stopped = true;
    match.tick();
  }
  match.machine(1).stopped = false;
  ASSERT_TRUE(match.run(6000));
  PeerStats a{}, b{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &a), Result::ok);
  ASSERT_EQ(match.machine(1).session->peer_stats(0, &b), Result::ok);
  EXPECT_LE(std::abs(a.local_frames_ahead - b.local_frames_ahead), 3) << a.local_frames_ahead << " vs " << b.local_frames_ahead;
  EXPECT_GE(match.count_events(0, EventType::timesync) + match.count_events(1, EventType::timesync), 1u);
}

// Between a session and its simulator: counts what was sent and not flushed yet.
class FlushWatch final : public Transport {
 public:
  explicit FlushWatch(Transport& inner) : inner_(inner) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    ++unflushed;
    ++sends;
    return inner_.send(to, data, length);
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    return inner_.receive(from, buffer, capacity, length);
  }
  void flush() override {
    unflushed = 0;
    ++flushes;
    inner_.flush();
  }
  uint64_t unflushed = 0, sends = 0, flushes = 0;

 private:
  Transport& inner_;
};

// The session flushes only after a send pass that sent something (most send nothing), and no
// datagram is ever left waiting in a batching transport when poll or advance_frame returns:
// each would reach the peer a tick late over UDP (sendmmsg at flush).
TEST(P2PSession, EveryDatagramIsFlushedBeforePollOrAdvanceReturns) {
  InMemoryNetwork net;
  InMemoryTransport* wires[2] = {net.add_endpoint(), net.add_endpoint()};
  std::unique_ptr<NetworkSimulator> sims[2];
  std::unique_ptr<FlushWatch> watches[2];
  TestGame games[2];
  std::vector<uint64_t> hashes[2];
  std::unique_ptr<P2PSession> sessions[2];
  LinkProfile link;
  link.latency_us = 30000;
  link.jitter_us = 5000;
  link.loss = 0.05;
  for (uint32_t m = 0; m < 2; ++m) {
    sims[m] = std::make_unique<NetworkSimulator>(*wires[m], 11 + m);
    sims[m]->set_outgoing(link);
    watches[m] = std::make_unique<FlushWatch>(*sims[m]);
    hashes[m].assign(1400, 0);
    games[m].start_hashes = &hashes[m];
    const PeerAddress addresses[2] = {wires[0]->address(), wires[1]->address()};
    const P2PConfig c = two_player_config(m, games[m], watches[m].get(), addresses, 5 + m);
    ASSERT_EQ(create_p2p_session(c, &sessions[m]), Result::ok);
  }
  uint64_t now = 0, ticks = 0;
  for (int t = 0; t < 1200; ++t) {
    now += 16667;
    for (uint32_t m = 0; m < 2; ++m) {
      sims[m]->set_time(now);
      ASSERT_EQ(sessions[m]->poll(now), Result::ok);
      ASSERT_EQ(watches[m]->unflushed, 0u) << "tick " << t << ", machine " << m << ": poll";
      ++ticks;
      if (!sessions[m]->running() || sessions[m]->should_wait()) continue;
      const uint16_t in = uint16_t((sessions[m]->current_frame() / 7) * (m + 1));
      sessions[m]->add_local_input(PlayerIndex(m), &in, sizeof in);
      const Result r = sessions[m]->advance_frame();
      ASSERT_TRUE(r == Result::ok || r == Result::prediction_limit) << int(r);
      ASSERT_EQ(watches[m]->unflushed, 0u) << "tick " << t << ", machine " << m << ": advance_frame";
    }
  }
  // The match ran (both far into it, in step) and the flushes followed the sends, not the passes.
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_GT(sessions[m]->confirmed_frame(), 1000);
    EXPECT_GT(watches[m]->sends, 0u);
    EXPECT_LE(watches[m]->flushes, watches[m]->sends);
    EXPECT_LT(watches[m]->flushes, ticks);
  }
  // Both ran the same match: the state every confirmed frame started from is the same.
  const Frame confirmed = std::min(sessions[0]->confirmed_frame(), sessions[1]->confirmed_frame());
  for (Frame f = 1; f <= confirmed; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << "frame " << f;
}

TEST(P2PSession, RejectsBadConfiguration) {
  TestGame game;
  P2PConfig c;
  c.session.num_players = 2;
  c.session.input_size = 2;
  c.session.max_state_size = 256;
  c.session.callbacks = bind_game(game);
  std::unique_ptr<P2PSession> s;
  EXPECT_EQ(create_p2p_session(c, &s), Result::invalid_argument) << "no transport";
  InMemoryNetwork net;
  c.network.transport = net.add_endpoint();
  c.players[0].kind = PlayerKind::local;
  c.players[1].kind = PlayerKind::remote;
  EXPECT_EQ(create_p2p_session(c, &s), Result::invalid_argument) << "remote without address";
  c.players[1].address = make_memory_address(9);
  c.players[1].kind = static_cast<PlayerKind>(7);
  EXPECT_EQ(create_p2p_session(c, &s), Result::invalid_argument) << "unknown kind";
  c.players[1].kind = PlayerKind::remote;
  c.players[0].kind = PlayerKind::remote;
  c.players[0].address = make_memory_address(8);
  EXPECT_EQ(create_p2p_session(c, &s), Result::invalid_argument) << "no local player";
  c.players[0].kind = PlayerKind::local;
  ASSERT_EQ(create_p2p_session(c, &s), Result::ok);
  const uint8_t in[2] = {};
  EXPECT_EQ(s->add_local_input(0, in, 2), Result::not_synchronized);
  EXPECT_EQ(s->advance_frame(), Result::not_synchronized);
  EXPECT_EQ(s->disconnect_player(0), Result::invalid_player);
  EXPECT_EQ(s->disconnect_player(5), Result::invalid_player);
  PeerStats ps;
  EXPECT_EQ(s->peer_stats(0, &ps), Result::not_found);
  EXPECT_EQ(s->peer_stats(1, nullptr), Result::invalid_argument);
}

}  // namespace
}  // namespace retcon::test
