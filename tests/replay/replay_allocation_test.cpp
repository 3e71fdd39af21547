// Recording with memory reserved up front allocates nothing per frame (the rest of retcon's
// steady state allocates nothing either, so a recorded session stays allocation-free).
#include <gtest/gtest.h>

#include <memory>

#include "retcon/replay.h"
#include "retcon/session.h"
#include "support/alloc_counter.h"
#include "support/test_game.h"

namespace retcon {
namespace {

TEST(ReplayAllocation, ReservedRecordingAllocatesNothingPerFrame) {
  test::TestGame game;
  ReplayRecorder rec;
  ReplayRecorderConfig c;
  c.num_players = 2;
  c.input_size = 2;
  c.max_state_size = 256;
  c.checksum_interval = 3;
  c.store_states = true;
  c.reserve_frames = 1000;
  ASSERT_EQ(rec.init(c, bind_game(game)), Result::ok);
  SyncTestConfig s;
  s.session.num_players = 2;
  s.session.input_size = 2;
  s.session.max_state_size = 256;
  s.session.callbacks = rec.callbacks();
  s.check_distance = 4;
  std::unique_ptr<Session> session;
  ASSERT_EQ(create_sync_test_session(s, &session), Result::ok);
  auto frame = [&](Frame f) {
    for (PlayerIndex p = 0; p < 2; ++p) {
      const uint8_t in[2] = {uint8_t(f * 7 + p), uint8_t(f >> 3)};
      session->add_local_input(p, in, 2);
    }
    session->advance_frame();
    rec.commit(session->confirmed_frame());
  };
  for (Frame f = 0; f < 20; ++f) frame(f);  // warm-up
  const uint64_t before = test::allocation_count();
  for (Frame f = 20; f < 990; ++f) frame(f);
  EXPECT_EQ(test::allocation_count() - before, 0u);
  EXPECT_EQ(rec.error(), Result::ok);
  EXPECT_GE(rec.recorded_frames(), 989);
}

}  // namespace
}  // namespace retcon
