#include <memory>
#include <cstring>
#include <random>

#include <gtest/gtest.h>
#ifndef RETCON_NO_RAPIDCHECK
#include <rapidcheck/gtest.h>
#endif

#include "retcon/session.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

struct SyncTestRun {
  TestGame game;
  std::unique_ptr<Session> session;

  Result start(uint32_t players, uint32_t input_size, int32_t max_prediction, int32_t distance,
               int32_t interval = 1) {
    game.events.reserve(4096);
    SyncTestConfig c;
    c.session.num_players = players;
    c.session.input_size = input_size;
    c.session.max_prediction = max_prediction;
    c.session.max_state_size = 128;
    c.session.callbacks = bind_game(game);
    c.check_distance = distance;
    c.check_interval = interval;
    return create_sync_test_session(c, &session);
  }
  // Random inputs, as a game's scripted or random players would give.
  void run(int frames, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> in(16);
    for (int f = 0; f < frames; ++f) {
      for (PlayerIndex p = 0; p < PlayerIndex(players_); ++p) {
        for (auto& b : in) b = uint8_t(rng());
        ASSERT_EQ(session->add_local_input(p, in.data(), input_size_), Result::ok);
      }
      ASSERT_EQ(session->advance_frame(), Result::ok);
    }
  }
  uint32_t players_ = 2, input_size_ = 4;
  size_t mismatches() const {
    size_t n = 0;
    for (const Event& e : game.events) n += e.type == EventType::sync_test_mismatch;
    return n;
  }
};

TEST(SyncTest, DeterministicGamePassesAtEveryDistance) {
  for (int32_t d = 1; d <= kMaxPredictionFrames; ++d) {
    SyncTestRun run;
    ASSERT_EQ(run.start(2, 4, kMaxPredictionFrames, d), Result::ok) << d;
    run.run(d + 20, uint64_t(d));
    EXPECT_EQ(run.mismatches(), 0u) << "distance " << d;
    EXPECT_EQ(run.game.frame_errors, 0) << d;
    EXPECT_EQ(run.session->current_frame(), d + 20);
  }
}

TEST(SyncTest, DetectsInjectedNonDeterminismAtEveryDistanceAndNamesTheFrame) {
  for (int32_t d = 1; d <= kMaxPredictionFrames; ++d) {
    SyncTestRun run;
    ASSERT_EQ(run.start(2, 4, kMaxPredictionFrames, d), Result::ok);
    const Frame bad = 10 + d;  // re-simulations of this frame and later fold in hidden state
    run.game.nondeterministic_from = bad;
    run.run(bad + d + 5, 7);
    ASSERT_GT(run.mismatches(), 0u) << "distance " << d;
    const Event& e = run.game.events.front();
    EXPECT_EQ(e.type, EventType::sync_test_mismatch);
    // The state after simulating `bad` (the start of bad + 1) is the first that differs.
    EXPECT_EQ(e.frame, bad + 1) << "distance " << d;
    EXPECT_NE(e.checksum_local, e.checksum_remote);
    EXPECT_NE(e.text_local, nullptr);
    EXPECT_NE(run.game.first_text_local, run.game.first_text_remote);
    EXPECT_NE(run.game.first_text_local.find("frame " + std::to_string(bad + 1)), std::string::npos);
  }
}

TEST(SyncTest, RejectsDistanceOutsideOneToMaxPrediction) {
  SyncTestRun run;
  EXPECT_EQ(run.start(2, 4, 8, 0), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 8, 9), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 0, 1), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 8, 8), Result::ok);
}

TEST(SyncTest, CostsOneLoadPerFrame) {
  SyncTestRun run;
  ASSERT_EQ(run.start(2, 4, 8, 7), Result::ok);
  run.run(100, 3);
  EXPECT_EQ(run.game.loads, 99u) << "frame 0 has nothing to roll back to";
  const SessionStats s = run.session->stats();
  EXPECT_EQ(s.rollbacks, 99u);
  EXPECT_EQ(s.max_rollback_depth, 7u);
}

// check_interval N: roll back every N frames only. A deterministic game still passes.
TEST(SyncTest, DeterministicGamePassesWithEveryInterval) {
  for (int32_t d = 1; d <= kMaxPredictionFrames; ++d) {
    for (int32_t n : {2, 3, d, 7, 16}) {
      SyncTestRun run;
      ASSERT_EQ(run.start(2, 4, kMaxPredictionFrames, d, n), Result::ok);
      run.run(d + 3 * n + 5, uint64_t(d * 100 + n));
      EXPECT_EQ(run.mismatches(), 0u) << "distance " << d << " interval " << n;
      EXPECT_EQ(run.game.frame_errors, 0) << d << " " << n;
    }
  }
}

// ... and injected non-determinism is still found, by the first check whose re-simulation
// covers the bad frame, which names a frame after it and no later than itself.
TEST(SyncTest, DetectsInjectedNonDeterminismWithIntervals) {
  for (int32_t d = 1; d <= kMaxPredictionFrames; ++d) {
    for (int32_t n : {2, 3, d, 7}) {
      SyncTestRun run;
      ASSERT_EQ(run.start(2, 4, kMaxPredictionFrames, d, n), Result::ok);
      const Frame bad = 10 + d;
      run.game.nondeterministic_from = bad;
      Frame first_check = bad + 1;  // the first check at or after bad + 1 re-simulates bad
      while (first_check % n != 0) ++first_check;
      run.run(first_check + 1, 11);
      ASSERT_GT(run.mismatches(), 0u) << "distance " << d << " interval " << n;
      const Event& e = run.game.events.front();
      EXPECT_GT(e.frame, bad) << d << " " << n;
      EXPECT_LE(e.frame, first_check) << d << " " << n;
      EXPECT_NE(e.checksum_local, e.checksum_remote);
    }
  }
}

// With interval == distance each frame is re-simulated once: per check one load, d steps and
// two saves (the checked frame, which is the next check's source, and its re-simulation).
TEST(SyncTest, IntervalEqualToDistanceResimulatesEachFrameOnce) {
  SyncTestRun run;
  ASSERT_EQ(run.start(2, 4, 8, 7, 7), Result::ok);
  run.run(70, 5);
  // Checks at 7, 14, ..., 63.
  EXPECT_EQ(run.game.loads, 9u);
  EXPECT_EQ(run.game.resimulated, 63u);
  EXPECT_EQ(run.game.saves, 10u + 9u) << "frames 0, 7, ..., 63 and 9 re-simulated states";
  const SessionStats s = run.session->stats();
  EXPECT_EQ(s.rollbacks, 9u);
  EXPECT_EQ(s.frames_resimulated, 63u);
}

// At interval 1 and distance 1 a frame costs two saves, one load and no hash at all: the
// re-simulated bytes are compared with the first simulation's directly.
TEST(SyncTest, DistanceOneCostsTwoSavesOneLoadNoHash) {
  SyncTestRun run;
  ASSERT_EQ(run.start(2, 4, 8, 1, 1), Result::ok);
  run.run(50, 6);
  EXPECT_EQ(run.game.loads, 49u);
  EXPECT_EQ(run.game.saves, 50u + 49u);
  EXPECT_EQ(run.session->stats().checksums, 0u);
}

TEST(SyncTest, RejectsIntervalOutsideOneTo3600) {
  SyncTestRun run;
  EXPECT_EQ(run.start(2, 4, 8, 2, 0), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 8, 2, -1), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 8, 2, kMaxCheckInterval + 1), Result::invalid_argument);
  EXPECT_EQ(run.start(2, 4, 8, 2, kMaxCheckInterval), Result::ok);
}

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
RC_GTEST_PROP(SyncTestProperty, IntervalsFlagInjectedNonDeterminismNeverADeterministicGame, ()) {
  const int32_t max_prediction = *rc::gen::inRange(1, kMaxPredictionFrames + 1);
  const int32_t distance = *rc::gen::inRange(1, max_prediction + 1);
  const int32_t interval = *rc::gen::inRange(1, 20);
  const bool inject = *rc::gen::arbitrary<bool>();
  const Frame bad = *rc::gen::inRange(0, 40);
  SyncTestRun run;
  run.players_ = *rc::gen::inRange(1u, 5u);
  run.input_size_ = *rc::gen::inRange(1u, 17u);
  RC_ASSERT(run.start(run.players_, run.input_size_, max_prediction, distance, interval) == Result::ok);
  if (inject) run.game.nondeterministic_from = bad;
  Frame first_check = bad + 1;
  while (first_check % interval != 0) ++first_check;
  run.run(first_check + 1, *rc::gen::arbitrary<uint64_t>());
  RC_ASSERT(run.game.frame_errors == 0);
  if (!inject) {
    RC_ASSERT(run.mismatches() == 0u);
  } else {
    RC_ASSERT(run.mismatches() > 0u);
    RC_ASSERT(run.game.events.front().frame > bad);
    RC_ASSERT(run.game.events.front().frame <= first_check);
  }
}

RC_GTEST_PROP(SyncTestProperty, FlagsInjectedNonDeterminismNeverADeterministicGame, ()) {
  const int32_t max_prediction = *rc::gen::inRange(1, kMaxPredictionFrames + 1);
  const int32_t distance = *rc::gen::inRange(1, max_prediction + 1);
  const bool inject = *rc::gen::arbitrary<bool>();
  const Frame bad = *rc::gen::inRange(0, 40);
  SyncTestRun run;
  run.players_ = *rc::gen::inRange(1u, 5u);
  run.input_size_ = *rc::gen::inRange(1u, 17u);
  RC_ASSERT(run.start(run.players_, run.input_size_, max_prediction, distance) == Result::ok);
  if (inject) run.game.nondeterministic_from = bad;
  run.run(bad + distance + 3, *rc::gen::arbitrary<uint64_t>());
  RC_ASSERT(run.game.frame_errors == 0);
  if (!inject) {
    RC_ASSERT(run.mismatches() == 0u);
  } else {
    RC_ASSERT(run.mismatches() > 0u);
    RC_ASSERT(run.game.events.front().frame == bad + 1);
  }
}
#endif

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// A game whose saved bytes hold a field that differs on every save (as a pointer or padding
// would): the default XXH3 checksum sees a difference, the game's own checksum does not.
struct GameWithNoisySave {
  TestGame inner;
  uint32_t noise = 0;
  uint64_t checksum_calls = 0;
  size_t save_state(Frame f, uint8_t* buffer, size_t capacity) {
    const size_t n = inner.save_state(f, buffer, capacity - 4);
    if (n > capacity - 4) return n + 4;
    ++noise;
    std::memcpy(buffer + n, &noise, 4);
    return n + 4;
  }
  void load_state(Frame f, const uint8_t* buffer, size_t length) { inner.load_state(f, buffer, length - 4); }
  void advance_frame(Frame f, const FrameInputs& in, uint32_t flags) { inner.advance_frame(f, in, flags); }
  void on_event(const Event& e) { inner.on_event(e); }
};
struct GameWithOwnChecksum : GameWithNoisySave {
  uint64_t checksum(Frame, const uint8_t* buffer, size_t length) {
    ++checksum_calls;
    return detail_hash(buffer, length - 4);  // ignores the noisy tail
  }
  static uint64_t detail_hash(const uint8_t* b, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
    return h;
  }
};

template <class Game>
size_t run_sync_test(Game& game) {
  game.inner.events.reserve(1024);
  SyncTestConfig c;
  c.session.num_players = 1;
  c.session.input_size = 1;
  c.session.max_prediction = 4;
  c.session.max_state_size = 256;
  c.session.callbacks = bind_game(game);
  c.check_distance = 3;
  std::unique_ptr<Session> s;
  EXPECT_EQ(create_sync_test_session(c, &s), Result::ok);
  for (int f = 0; f < 50; ++f) {
    const uint8_t in = uint8_t(f);
    EXPECT_EQ(s->add_local_input(0, &in, 1), Result::ok);
    EXPECT_EQ(s->advance_frame(), Result::ok);
  }
  size_t mismatches = 0;
  for (const Event& e : game.inner.events) mismatches += e.type == EventType::sync_test_mismatch;
  return mismatches;
}

TEST(SyncTest, GameChecksumReplacesXxh3WhenSavedBytesHoldNoise) {
  GameWithNoisySave noisy;
  EXPECT_GT(run_sync_test(noisy), 0u) << "the default checksum hashes the noisy bytes";
  GameWithOwnChecksum own;
  EXPECT_EQ(run_sync_test(own), 0u);
  EXPECT_GT(own.checksum_calls, 50u);
}

}  // namespace
}  // namespace retcon::test
