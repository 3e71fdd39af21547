// The README's limits table, each at the limit (it works: a real match over the in-memory
// network, or a session that runs) and one past it (a clear error code, no crash):
//   players 8, spectators 32, input size 256 bytes, state size 256 MiB per save,
//   prediction window 0..64 frames, input delay 0..32 frames.
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "retcon.h"
#include "support/match_checks.h"
#include "support/match_harness.h"

namespace retcon::test {
namespace {

SessionConfig config_for(TestGame& game, uint32_t players, uint32_t input_size = 4) {
  SessionConfig s;
  s.num_players = players;
  s.input_size = input_size;
  s.max_prediction = 8;
  s.max_state_size = 256;
  s.callbacks = bind_game(game);
  return s;
}

// A P2P config of machine 0 of `players` machines on `net` (addresses 1..players).
P2PConfig p2p_config(TestGame& game, InMemoryNetwork& net, uint32_t players) {
  P2PConfig c;
  c.session = config_for(game, players > kMaxPlayers ? kMaxPlayers : players);
  c.session.num_players = players;
  c.network.transport = net.add_endpoint();
  for (uint32_t p = 0; p < players && p < uint32_t(kMaxPlayers); ++p) {
    c.players[p].kind = p == 0 ? PlayerKind::local : PlayerKind::remote;
    c.players[p].address = make_memory_address(p + 1);
  }
  return c;
}

// ------------------------------------------------------------------ players: 8

TEST(Limits, EightPlayersPlayAP2PMatch) {
  MatchOptions o;
  o.machines = uint32_t(kMaxPlayers);
  o.frames = 300;
  o.link.latency_us = 30000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
  EXPECT_GT(match.machine(0).session->stats().rollbacks, 0u);
  EXPECT_GT(match.machine(7).session->checksums_compared(), 0u);
}

TEST(Limits, NinePlayersAreRefused) {
  TestGame game;
  SessionConfig s = config_for(game, kMaxPlayers + 1);
  std::unique_ptr<Session> local;
  EXPECT_EQ(create_local_session(s, &local), Result::invalid_argument);
  EXPECT_EQ(local, nullptr);
  EXPECT_STREQ(validate_session_config(s), "num_players must be 1..8");
  s.num_players = kMaxPlayers;
  EXPECT_EQ(create_local_session(s, &local), Result::ok);

  InMemoryNetwork net;
  std::unique_ptr<P2PSession> p2p;
  EXPECT_EQ(create_p2p_session(p2p_config(game, net, kMaxPlayers + 1), &p2p), Result::invalid_argument);
  EXPECT_EQ(p2p, nullptr);
  EXPECT_EQ(create_p2p_session(p2p_config(game, net, kMaxPlayers), &p2p), Result::ok);

  SpectatorConfig sc;
  sc.session = config_for(game, kMaxPlayers + 1);
  sc.network.transport = net.add_endpoint();
  sc.host = make_memory_address(1);
  std::unique_ptr<P2PSession> spectator;
  EXPECT_EQ(create_spectator_session(sc, &spectator), Result::invalid_argument);
  EXPECT_EQ(spectator, nullptr);
  sc.session.num_players = kMaxPlayers;
  EXPECT_EQ(create_spectator_session(sc, &spectator), Result::ok);

  // A player index past the session's (and past the limit) is invalid_player.
  const uint8_t in[4] = {};
  EXPECT_EQ(local->add_local_input(PlayerIndex(kMaxPlayers), in, 4), Result::invalid_player);
  EXPECT_EQ(local->set_input_delay(PlayerIndex(kMaxPlayers), 1), Result::invalid_player);
}

// ------------------------------------------------------------------ spectators: 32

TEST(Limits, ThirtyTwoSpectatorsFollowAHost) {
  MatchOptions o;
  o.machines = 2;
  o.spectators = uint32_t(kMaxSpectators);
  o.frames = 300;
  o.link.latency_us = 20000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  for (int i = 0; i < 300; ++i) match.tick();  // let the spectators catch up
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
  EXPECT_EQ(match.count_events(0, EventType::spectator_joined), size_t(kMaxSpectators));
  for (uint32_t k = 0; k < uint32_t(kMaxSpectators); ++k) {
    EXPECT_GE(match.machine(2 + k).session->current_frame(), o.frames) << "spectator " << k;
    PeerStats ps{};
    ASSERT_EQ(match.machine(0).session->spectator_stats(k, &ps), Result::ok);
    EXPECT_GT(ps.datagrams_received, 0u);
  }
  PeerStats ps{};
  EXPECT_EQ(match.machine(0).session->spectator_stats(uint32_t(kMaxSpectators), &ps), Result::not_found);
}

TEST(Limits, ThirtyThreeSpectatorsAreRefused) {
  TestGame game;
  InMemoryNetwork net;
  P2PConfig c = p2p_config(game, net, 2);
  c.num_spectators = uint32_t(kMaxSpectators) + 1;  // the array holds 32: only the count can say 33
  for (uint32_t k = 0; k < uint32_t(kMaxSpectators); ++k) c.spectators[k] = make_memory_address(100 + k);
  std::unique_ptr<P2PSession> s;
  EXPECT_EQ(create_p2p_session(c, &s), Result::invalid_argument);
  EXPECT_EQ(s, nullptr);
  c.num_spectators = uint32_t(kMaxSpectators);
  EXPECT_EQ(create_p2p_session(c, &s), Result::ok);
}

// ------------------------------------------------------------------ input size: 128 bytes

TEST(Limits, TwoFiftySixByteInputsCrossTheProtocol) {
  MatchOptions o;
  o.machines = 2;
  o.input_size = kMaxInputSize;
  o.frames = 300;
  o.link.latency_us = 40000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.1;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
  EXPECT_GT(match.machine(0).session->stats().rollbacks, 0u);
}

TEST(Limits, EightPlayersWith256ByteInputsAndPrediction64) {
  // Every per-player limit at once (spectators aside, see below): 8 machines, 256-byte inputs,
  // a 64-frame window, over a lossy link.
  MatchOptions o;
  o.machines = uint32_t(kMaxPlayers);
  o.input_size = kMaxInputSize;
  o.max_prediction = kMaxPredictionFrames;
  o.frames = 150;
  o.link.latency_us = 50000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.1;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  // A machine skipping a tick on time-sync advice has its newest confirmed inputs but has not
  // re-simulated with them yet (that happens at its next advance): let every machine advance.
  for (int i = 0; i < 10; ++i) match.tick(false);
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
  EXPECT_GT(match.machine(0).session->stats().rollbacks, 0u);
}

TEST(Limits, TwoFiftySixByteInputsOfFourPlayersReachASpectator) {
  // Every player's 256 bytes in one spectator frame: 1 KiB per frame, which these inputs do
  // not compress much, so one frame fills a datagram. The endpoint resends from the oldest
  // unacknowledged frame, so the stream then moves about one frame per round trip (~16 frames
  // a second at 60 ms): the spectator falls behind during the match and catches up after it.
  MatchOptions o;
  o.machines = 4;
  o.spectators = 1;
  o.input_size = kMaxInputSize;
  o.frames = 300;
  o.link.latency_us = 30000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  for (int i = 0; i < 3000 && match.machine(4).session->current_frame() <= o.frames; ++i) match.tick();
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
}

// Regression: with 256-byte inputs a spectator frame (8 x 256 bytes) could exceed a datagram when
// the inputs did not compress, and the spectator never left frame 0. The input size limit is now
// 128 bytes, so a whole frame (8 x 128 = 1 KiB) always fits one datagram.
TEST(Limits, LargestInputsOfEightPlayersReachASpectator) {
  MatchOptions o;
  o.machines = uint32_t(kMaxPlayers);
  o.spectators = 1;
  o.input_size = kMaxInputSize;
  o.frames = 120;
  o.link.latency_us = 30000;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  for (int i = 0; i < 3000 && match.machine(8).session->current_frame() <= o.frames; ++i) match.tick();
  EXPECT_GT(match.machine(8).session->current_frame(), o.frames);
  expect_agree_with_reference(match, o.frames, true);
}

// Regression, the P2P side of the one above: a machine owning several players sends all their
// inputs in one frame blob; with incompressible (random) bytes it must still fit a datagram.
TEST(Limits, SevenLocalPlayersWithLargestRandomInputsPlayAP2PMatch) {
  InMemoryNetwork net;
  InMemoryTransport* wires[2] = {net.add_endpoint(), net.add_endpoint()};
  TestGame games[2];
  std::unique_ptr<P2PSession> sessions[2];
  constexpr uint32_t kOwnedByZero = 7;
  for (int m = 0; m < 2; ++m) {
    P2PConfig c;
    c.session = config_for(games[m], kMaxPlayers, kMaxInputSize);
    c.network.transport = wires[m];
    for (uint32_t p = 0; p < uint32_t(kMaxPlayers); ++p) {
      const uint32_t owner = p < kOwnedByZero ? 0 : 1;
      c.players[p].kind = owner == uint32_t(m) ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = wires[owner]->address();
    }
    ASSERT_EQ(create_p2p_session(c, &sessions[m]), Result::ok);
  }
  std::mt19937 rng(5);
  uint64_t now = 0;
  for (int tick = 0; tick < 1200; ++tick) {
    now += 16667;
    for (uint32_t m = 0; m < 2; ++m) {
      sessions[m]->poll(now);
      if (!sessions[m]->running()) continue;
      for (uint32_t p = 0; p < uint32_t(kMaxPlayers); ++p) {
        if ((p < kOwnedByZero) != (m == 0)) continue;
        uint8_t in[kMaxInputSize];
        for (uint8_t& b : in) b = uint8_t(rng());
        sessions[m]->add_local_input(PlayerIndex(p), in, kMaxInputSize);
      }
      sessions[m]->advance_frame();
    }
  }
  EXPECT_GT(sessions[0]->confirmed_frame(), 600);
  EXPECT_GT(sessions[1]->confirmed_frame(), 600);
}

TEST(Limits, InputOfTwoFiftySevenBytesIsRefused) {
  TestGame game;
  SessionConfig s = config_for(game, 2, kMaxInputSize + 1);
  std::unique_ptr<Session> session;
  EXPECT_EQ(create_local_session(s, &session), Result::invalid_argument);
  EXPECT_STREQ(validate_session_config(s), "input_size must be 1..128 bytes");
  s.input_size = kMaxInputSize;
  ASSERT_EQ(create_local_session(s, &session), Result::ok);
  uint8_t in[kMaxInputSize + 1] = {};
  EXPECT_EQ(session->add_local_input(0, in, kMaxInputSize + 1), Result::invalid_input_size);
  EXPECT_EQ(session->add_local_input(0, in, kMaxInputSize), Result::ok);
}

// ------------------------------------------------------------------ state size: 256 MiB

TEST(Limits, StateSizeOf256MiBIsAcceptedAndOneByteMoreIsNot) {
  TestGame game;
  SessionConfig s = config_for(game, 2);
  // A local session that never saves allocates no save buffer, so the limit itself can be
  // created without committing 256 MiB per slot.
  s.max_state_size = kMaxStateSize;
  EXPECT_EQ(validate_session_config(s), nullptr);
  std::unique_ptr<Session> session;
  ASSERT_EQ(create_local_session(s, &session), Result::ok);
  const uint8_t in[4] = {1, 2, 3, 4};
  ASSERT_EQ(session->add_local_input(0, in, 4), Result::ok);
  ASSERT_EQ(session->add_local_input(1, in, 4), Result::ok);
  EXPECT_EQ(session->advance_frame(), Result::ok);

  s.max_state_size = kMaxStateSize + 1;
  EXPECT_STREQ(validate_session_config(s), "max_state_size must be 1 byte..256 MiB");
  EXPECT_EQ(create_local_session(s, &session), Result::invalid_argument);
  EXPECT_EQ(session, nullptr);
  SyncTestConfig st;
  st.session = s;
  EXPECT_EQ(create_sync_test_session(st, &session), Result::invalid_argument);
  InMemoryNetwork net;
  P2PConfig c = p2p_config(game, net, 2);
  c.session.max_state_size = kMaxStateSize + 1;
  std::unique_ptr<P2PSession> p2p;
  EXPECT_EQ(create_p2p_session(c, &p2p), Result::invalid_argument);
  SpectatorConfig sc;
  sc.session = c.session;
  sc.network.transport = net.add_endpoint();
  sc.host = make_memory_address(1);
  EXPECT_EQ(create_spectator_session(sc, &p2p), Result::invalid_argument);
  EXPECT_EQ(p2p, nullptr);
}

TEST(Limits, CApiStateSizeBoundary) {
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  cb.save_state = [](void*, int32_t, uint8_t*, size_t) -> size_t { return 1; };
  cb.load_state = [](void*, int32_t, const uint8_t*, size_t) {};
  cb.advance_frame = [](void*, int32_t, const retcon_frame_inputs*, uint32_t) {};
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.max_state_size = RETCON_MAX_STATE_SIZE;
  retcon_session* s = nullptr;
  ASSERT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
  c.max_state_size = RETCON_MAX_STATE_SIZE + 1;
  const char* reason = nullptr;
  EXPECT_EQ(retcon_session_config_validate(&c, &cb, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_NE(reason, nullptr);
  EXPECT_STREQ(reason, "max_state_size must be 1 byte..256 MiB");
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  // Far past it: a 64-bit size that does not fit the limit (nor, on 32-bit, size_t).
  c.max_state_size = UINT64_MAX;
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_INVALID_ARGUMENT);
  c.num_players = RETCON_MAX_PLAYERS + 1;
  c.max_state_size = 64;
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_INVALID_ARGUMENT);
  c.num_players = 2;
  c.input_size = RETCON_MAX_INPUT_SIZE + 1;
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_INVALID_ARGUMENT);
  c.input_size = 4;
  c.max_prediction = RETCON_MAX_PREDICTION_FRAMES + 1;
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
}

// ------------------------------------------------------------------ prediction window: 64

TEST(Limits, PredictionWindowOf64RollsBack64Frames) {
  // Sync test at the limit: every frame rolls back 64 frames and re-simulates them.
  TestGame game;
  SyncTestConfig c;
  c.session = config_for(game, 2);
  c.session.max_prediction = kMaxPredictionFrames;
  c.check_distance = kMaxPredictionFrames;
  std::unique_ptr<Session> s;
  ASSERT_EQ(create_sync_test_session(c, &s), Result::ok);
  for (Frame f = 0; f < 200; ++f) {
    const uint8_t a[4] = {uint8_t(f), 1, 2, 3}, b[4] = {uint8_t(f * 7), 4, 5, 6};
    ASSERT_EQ(s->add_local_input(0, a, 4), Result::ok);
    ASSERT_EQ(s->add_local_input(1, b, 4), Result::ok);
    ASSERT_EQ(s->advance_frame(), Result::ok) << "frame " << f;
  }
  const SessionStats st = s->stats();
  EXPECT_EQ(st.max_rollback_depth, uint32_t(kMaxPredictionFrames));
  EXPECT_GT(st.rollback_depth_histogram[kMaxPredictionFrames], 0u);
  EXPECT_EQ(game.frame_errors, 0);
  for (const Event& e : game.events) EXPECT_NE(e.type, EventType::sync_test_mismatch);
}

TEST(Limits, PredictionWindowOf64InAP2PMatchOverAOneSecondLink) {
  // One second each way: 60 frames of prediction before a remote input arrives.
  MatchOptions o;
  o.machines = 2;
  o.max_prediction = kMaxPredictionFrames;
  o.frames = 600;
  o.link.latency_us = 1000000;
  o.link.jitter_us = 50000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(8000));
  EXPECT_EQ(match.errors(), 0u);
  expect_agree_with_reference(match, o.frames, true);
  const SessionStats st = match.machine(0).session->stats();
  EXPECT_GT(st.rollbacks, 0u);
  EXPECT_GT(st.max_rollback_depth, 50u);
  EXPECT_LE(st.max_rollback_depth, uint32_t(kMaxPredictionFrames));
}

TEST(Limits, PredictionWindowOf65IsRefused) {
  TestGame game;
  SyncTestConfig c;
  c.session = config_for(game, 2);
  c.session.max_prediction = kMaxPredictionFrames + 1;
  c.check_distance = 2;
  std::unique_ptr<Session> s;
  EXPECT_EQ(create_sync_test_session(c, &s), Result::invalid_argument);
  EXPECT_STREQ(validate_session_config(c.session), "max_prediction must be 0..64");
  c.session.max_prediction = kMaxPredictionFrames;
  c.check_distance = kMaxPredictionFrames + 1;  // beyond the window it would check
  EXPECT_EQ(create_sync_test_session(c, &s), Result::invalid_argument);
  EXPECT_EQ(s, nullptr);
  InMemoryNetwork net;
  P2PConfig p = p2p_config(game, net, 2);
  p.session.max_prediction = kMaxPredictionFrames + 1;
  std::unique_ptr<P2PSession> p2p;
  EXPECT_EQ(create_p2p_session(p, &p2p), Result::invalid_argument);
  p.session.max_prediction = -1;
  EXPECT_EQ(create_p2p_session(p, &p2p), Result::invalid_argument);
  EXPECT_EQ(p2p, nullptr);
}

// ------------------------------------------------------------------ input delay: 32

// Records, for every frame, the first input byte of player 0 that frame ran with.
struct DelayGame {
  TestGame inner;
  std::vector<int> first_byte = std::vector<int>(400, -1);
  size_t save_state(Frame f, uint8_t* b, size_t c) { return inner.save_state(f, b, c); }
  void load_state(Frame f, const uint8_t* b, size_t n) { inner.load_state(f, b, n); }
  void advance_frame(Frame f, const FrameInputs& in, uint32_t flags) {
    if (size_t(f) < first_byte.size()) first_byte[size_t(f)] = in.player(0)[0];
    inner.advance_frame(f, in, flags);
  }
};

TEST(Limits, InputDelayOf32AppliesInputs32FramesLater) {
  DelayGame game;
  SessionConfig s;
  s.num_players = 1;
  s.input_size = 1;
  s.max_state_size = 256;
  s.callbacks = bind_game(game);
  std::unique_ptr<Session> session;
  ASSERT_EQ(create_local_session(s, &session), Result::ok);
  ASSERT_EQ(session->set_input_delay(0, kMaxInputDelay), Result::ok);
  for (Frame f = 0; f < 200; ++f) {
    const uint8_t in = uint8_t(1 + f % 200);
    ASSERT_EQ(session->add_local_input(0, &in, 1), Result::ok) << "frame " << f;
    ASSERT_EQ(session->advance_frame(), Result::ok) << "frame " << f;
  }
  for (Frame f = 0; f < kMaxInputDelay; ++f) EXPECT_EQ(game.first_byte[size_t(f)], 0) << "frame " << f;
  for (Frame f = kMaxInputDelay; f < 200; ++f)
    EXPECT_EQ(game.first_byte[size_t(f)], 1 + (f - kMaxInputDelay) % 200) << "frame " << f;
}

TEST(Limits, InputDelayOf32InAP2PMatchWithPredictionAtItsLimitToo) {
  MatchOptions o;
  o.machines = 3;
  o.max_prediction = kMaxPredictionFrames;
  o.frames = 400;
  o.link.latency_us = 60000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.1;
  Match match(o);
  ASSERT_TRUE(match.build());
  for (uint32_t m = 0; m < o.machines; ++m)
    ASSERT_EQ(match.machine(m).session->set_input_delay(PlayerIndex(m), kMaxInputDelay), Result::ok);
  ASSERT_TRUE(match.run(6000));
  EXPECT_EQ(match.errors(), 0u);
  // With the delay, frame f runs with the inputs given at f - 32: machines agree with each
  // other (the lockstep reference assumes no delay).
  const Frame upto = o.frames;
  for (uint32_t m = 1; m < o.machines; ++m)
    for (Frame f = 0; f <= upto; ++f)
      ASSERT_EQ(match.machine(m).hashes[size_t(f)], match.machine(0).hashes[size_t(f)]) << "machine " << m << " frame " << f;
  for (uint32_t m = 0; m < o.machines; ++m) EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u);
  EXPECT_GT(match.machine(0).session->checksums_compared(), 0u);
  // 32 frames of delay hide more than the 60-80 ms of latency: nothing is mispredicted.
  EXPECT_EQ(match.machine(0).session->stats().rollbacks, 0u);
}

TEST(Limits, InputDelayOf33IsRefused) {
  TestGame game;
  std::unique_ptr<Session> s;
  ASSERT_EQ(create_local_session(config_for(game, 2), &s), Result::ok);
  EXPECT_EQ(s->set_input_delay(0, kMaxInputDelay + 1), Result::invalid_argument);
  EXPECT_EQ(s->set_input_delay(0, -1), Result::invalid_argument);
  EXPECT_EQ(s->set_input_delay(0, kMaxInputDelay), Result::ok);
  InMemoryNetwork net;
  std::unique_ptr<P2PSession> p2p;
  ASSERT_EQ(create_p2p_session(p2p_config(game, net, 2), &p2p), Result::ok);
  EXPECT_EQ(p2p->set_input_delay(0, kMaxInputDelay + 1), Result::invalid_argument);
  EXPECT_EQ(p2p->set_input_delay(1, kMaxInputDelay), Result::invalid_player);  // remote player
  EXPECT_EQ(p2p->set_input_delay(0, kMaxInputDelay), Result::ok);
}

}  // namespace
}  // namespace retcon::test
