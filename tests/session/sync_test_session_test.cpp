#include <memory>
#include <random>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "retcon/session.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

struct SyncTestRun {
  TestGame game;
  std::unique_ptr<Session> session;

  Result start(uint32_t players, uint32_t input_size, int32_t max_prediction, int32_t distance) {
    game.events.reserve(4096);
    SyncTestConfig c;
    c.session.num_players = players;
    c.session.input_size = input_size;
    c.session.max_prediction = max_prediction;
    c.session.max_state_size = 128;
    c.session.callbacks = bind_game(game);
    c.check_distance = distance;
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

}  // namespace
}  // namespace retcon::test
