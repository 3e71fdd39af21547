#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "retcon/session.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

SessionConfig config_for(TestGame& game, uint32_t players) {
  SessionConfig c;
  c.num_players = players;
  c.input_size = 2;
  c.max_state_size = 128;
  c.callbacks = bind_game(game);
  return c;
}

TEST(LocalSession, RunsFromTheFirstFrameWithoutSynchronizing) {
  TestGame game;
  std::unique_ptr<Session> s;
  ASSERT_EQ(create_local_session(config_for(game, 2), &s), Result::ok);
  const uint8_t in[2] = {1, 2};
  for (int f = 0; f < 10; ++f) {
    ASSERT_EQ(s->add_local_input(0, in, 2), Result::ok);
    ASSERT_EQ(s->add_local_input(1, in, 2), Result::ok);
    ASSERT_EQ(s->advance_frame(), Result::ok);
  }
  EXPECT_EQ(s->current_frame(), 10);
  EXPECT_EQ(s->confirmed_frame(), 9);
  EXPECT_EQ(game.advances, 10u);
  EXPECT_EQ(game.saves, 0u) << "a local session never rolls back, so it saves nothing by default";
  EXPECT_EQ(s->poll(12345), Result::ok);
}

TEST(LocalSession, InputDelayShiftsInputsAndStartsWithZeros) {
  TestGame delayed_game, direct_game;
  std::unique_ptr<Session> delayed, direct;
  ASSERT_EQ(create_local_session(config_for(delayed_game, 1), &delayed), Result::ok);
  ASSERT_EQ(create_local_session(config_for(direct_game, 1), &direct), Result::ok);
  ASSERT_EQ(delayed->set_input_delay(0, 3), Result::ok);
  const uint8_t zero[2] = {0, 0};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(direct->add_local_input(0, zero, 2), Result::ok);
    ASSERT_EQ(direct->advance_frame(), Result::ok);
  }
  for (int f = 0; f < 20; ++f) {
    const uint8_t in[2] = {uint8_t(f), uint8_t(f * 3)};
    ASSERT_EQ(delayed->add_local_input(0, in, 2), Result::ok);
    ASSERT_EQ(delayed->advance_frame(), Result::ok);
    if (f < 17) {
      ASSERT_EQ(direct->add_local_input(0, in, 2), Result::ok);
      ASSERT_EQ(direct->advance_frame(), Result::ok);
    }
  }
  EXPECT_EQ(delayed_game.hash(), direct_game.hash());
}

TEST(LocalSession, SavesEveryFrameWhenAsked) {
  TestGame game;
  SessionConfig c = config_for(game, 1);
  c.save_mode = SaveMode::every_frame;
  std::unique_ptr<Session> s;
  ASSERT_EQ(create_local_session(c, &s), Result::ok);
  const uint8_t in[2] = {1, 1};
  for (int f = 0; f < 5; ++f) {
    ASSERT_EQ(s->add_local_input(0, in, 2), Result::ok);
    ASSERT_EQ(s->advance_frame(), Result::ok);
  }
  EXPECT_EQ(game.saves, 5u);
  EXPECT_EQ(s->stats().saves, 5u);
}

// add_local_input holds no guard (it reaches no callback) but is refused from inside one like
// every other call: an input taken mid-frame would land in the frame being simulated.
TEST(LocalSession, AddLocalInputFromInsideACallbackIsRefusedAndChangesNothing) {
  struct Reentrant {
    TestGame game;
    Session* session = nullptr;
    std::vector<Result> results;
  } r;
  SessionConfig c = config_for(r.game, 1);
  c.callbacks.user = &r;
  c.callbacks.save_state = [](void* u, Frame f, uint8_t* b, size_t n) {
    return static_cast<Reentrant*>(u)->game.save_state(f, b, n);
  };
  c.callbacks.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
    static_cast<Reentrant*>(u)->game.load_state(f, b, n);
  };
  c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
    auto* self = static_cast<Reentrant*>(u);
    const uint8_t other[2] = {99, 99};
    self->results.push_back(self->session->add_local_input(0, other, 2));
    self->game.advance_frame(f, *in, flags);
  };
  c.callbacks.describe_state = nullptr;
  c.callbacks.checksum = nullptr;
  TestGame plain;
  std::unique_ptr<Session> s, reference;
  ASSERT_EQ(create_local_session(c, &s), Result::ok);
  ASSERT_EQ(create_local_session(config_for(plain, 1), &reference), Result::ok);
  r.session = s.get();
  for (int f = 0; f < 10; ++f) {
    const uint8_t in[2] = {uint8_t(f), uint8_t(7 * f)};
    ASSERT_EQ(s->add_local_input(0, in, 2), Result::ok);
    ASSERT_EQ(s->advance_frame(), Result::ok);
    ASSERT_EQ(reference->add_local_input(0, in, 2), Result::ok);
    ASSERT_EQ(reference->advance_frame(), Result::ok);
  }
  ASSERT_EQ(r.results.size(), 10u);
  for (Result res : r.results) EXPECT_EQ(res, Result::wrong_state);
  EXPECT_EQ(r.game.hash(), plain.hash()) << "an input given from inside the frame was taken";
  const uint8_t in[2] = {1, 1};
  EXPECT_EQ(s->add_local_input(0, in, 2), Result::ok) << "outside the callbacks the session takes inputs again";
}

TEST(LocalSession, RejectsInvalidConfigurationWithAReason) {
  TestGame game;
  std::unique_ptr<Session> s;
  SessionConfig c = config_for(game, 2);
  EXPECT_EQ(create_local_session(c, nullptr), Result::invalid_argument);
  c.num_players = 0;
  EXPECT_EQ(create_local_session(c, &s), Result::invalid_argument);
  EXPECT_STREQ(validate_session_config(c), "num_players must be 1..8");
  c.num_players = 9;
  EXPECT_EQ(create_local_session(c, &s), Result::invalid_argument);
  c = config_for(game, 2);
  c.input_size = kMaxInputSize + 1;
  EXPECT_NE(validate_session_config(c), nullptr);
  c = config_for(game, 2);
  c.max_state_size = 0;
  EXPECT_NE(validate_session_config(c), nullptr);
  c = config_for(game, 2);
  c.callbacks.advance_frame = nullptr;
  EXPECT_STREQ(validate_session_config(c), "callbacks.advance_frame is required");
  c = config_for(game, 2);
  c.max_prediction = kMaxPredictionFrames + 1;
  EXPECT_NE(validate_session_config(c), nullptr);
  EXPECT_EQ(s, nullptr);
  // At the limits it works.
  c = config_for(game, kMaxPlayers);
  c.input_size = kMaxInputSize;
  c.max_prediction = kMaxPredictionFrames;
  EXPECT_EQ(create_local_session(c, &s), Result::ok);
}

TEST(ResultNames, EveryResultHasAStableName) {
  EXPECT_STREQ(result_name(Result::ok), "ok");
  EXPECT_STREQ(result_name(Result::prediction_limit), "prediction_limit");
  EXPECT_STREQ(result_name(static_cast<Result>(9999)), "unknown_result");
  for (int i = 0; i <= int(Result::unsupported); ++i)
    EXPECT_STRNE(result_name(static_cast<Result>(i)), "unknown_result") << i;
}

}  // namespace
}  // namespace retcon::test
