#include "core/rollback_driver.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/driver_harness.h"

namespace retcon::test {
namespace {

uint8_t in(int v) { return uint8_t(v); }

// The recording tests' set-up: `players` players of 4-byte inputs (or `input_size`), window 8, saves and loads
// by r.game, and every frame handed to r.record(frame, inputs) before r.game steps it (so
// re-simulations are recorded too). Recording holds `TestGame game`.
template <class Recording>
SessionConfig recording_config(Recording& r, uint32_t players, uint32_t input_size = 4) {
  SessionConfig c = sized_config(players, input_size, 8);
  c.callbacks.user = &r;
  c.callbacks.save_state = [](void* u, Frame f, uint8_t* b, size_t n) {
    return static_cast<Recording*>(u)->game.save_state(f, b, n);
  };
  c.callbacks.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
    static_cast<Recording*>(u)->game.load_state(f, b, n);
  };
  c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
    auto* self = static_cast<Recording*>(u);
    self->record(f, *in);
    self->game.advance_frame(f, *in, flags);
  };
  return c;
}

TEST(RollbackDriver, RejectsBadArguments) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 4), Result::ok);
  const uint8_t v = 1;
  EXPECT_EQ(h.driver.add_local_input(1, &v, 1), Result::invalid_player) << "player 1 is remote";
  EXPECT_EQ(h.driver.add_local_input(5, &v, 1), Result::invalid_player);
  EXPECT_EQ(h.driver.add_local_input(-1, &v, 1), Result::invalid_player);
  EXPECT_EQ(h.driver.add_local_input(0, nullptr, 1), Result::invalid_argument);
  EXPECT_EQ(h.driver.add_local_input(0, &v, 2), Result::invalid_input_size);
  EXPECT_EQ(h.driver.add_remote_input(0, 0, &v), Result::invalid_player) << "player 0 is local";
  EXPECT_EQ(h.driver.add_remote_input(1, 5, &v), Result::input_out_of_window) << "gap";
  EXPECT_EQ(h.driver.add_remote_input(1, 100000, &v), Result::input_out_of_window);
  EXPECT_EQ(h.driver.set_input_delay(0, -1), Result::invalid_argument);
  EXPECT_EQ(h.driver.set_input_delay(0, kMaxInputDelay + 1), Result::invalid_argument);
  EXPECT_EQ(h.driver.set_input_delay(1, 2), Result::invalid_player);
  EXPECT_EQ(h.driver.advance(), Result::missing_local_input);
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.add_local_input(0, &v, 1), Result::input_already_added);
}

TEST(RollbackDriver, OneLoadPerCorrectionHoweverManyInputsWereWrong) {
  DriverHarness h;
  ASSERT_EQ(h.init(3, 1, 1, 8), Result::ok);
  for (int f = 0; f < 6; ++f) {
    const uint8_t v = in(f);
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  EXPECT_EQ(h.game.loads, 0u);
  // Both remote players send 6 frames that all differ from the zero prediction.
  for (Frame f = 0; f < 6; ++f) {
    const uint8_t a = in(10 + f), b = in(20 + f);
    ASSERT_EQ(h.driver.add_remote_input(1, f, &a), Result::ok);
    ASSERT_EQ(h.driver.add_remote_input(2, f, &b), Result::ok);
  }
  EXPECT_EQ(h.driver.first_incorrect(), 0);
  const uint8_t v = 6;
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.loads, 1u);
  EXPECT_EQ(h.game.resimulated, 6u);
  EXPECT_EQ(h.driver.stats().rollbacks, 1u);
  EXPECT_EQ(h.driver.stats().rollback_depth_histogram[6], 1u);
  EXPECT_EQ(h.game.frame_errors, 0);
}

TEST(RollbackDriver, CorrectPredictionsNeverRollBack) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 8), Result::ok);
  const uint8_t five = 5;
  ASSERT_EQ(h.driver.add_remote_input(1, 0, &five), Result::ok);
  for (int f = 0; f < 5; ++f) {
    ASSERT_EQ(h.driver.add_local_input(0, &five, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  // Carry-forward predicted 5 for frames 1..4: the real inputs agree.
  for (Frame f = 1; f < 5; ++f) ASSERT_EQ(h.driver.add_remote_input(1, f, &five), Result::ok);
  EXPECT_EQ(h.driver.first_incorrect(), kNullFrame);
  ASSERT_EQ(h.driver.add_local_input(0, &five, 1), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.loads, 0u);
  EXPECT_EQ(h.driver.confirmed_frame(), 4);
}

TEST(RollbackDriver, PredictionWindowBlocksWithClearStatusAndNeverDropsARollback) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 3), Result::ok);
  const uint8_t v = 1;
  for (int f = 0; f < 3; ++f) {
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::prediction_limit);
  EXPECT_EQ(h.driver.frame(), 3);
  EXPECT_EQ(h.driver.stats().frames_stalled, 1u);
  EXPECT_EQ(h.driver.add_local_input(0, &v, 1), Result::input_already_added) << "same frame";
  const uint8_t r = 9;
  ASSERT_EQ(h.driver.add_remote_input(1, 0, &r), Result::ok);  // mispredicted frame 0
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.loads, 1u) << "the correction happened";
  EXPECT_EQ(h.driver.frame(), 4);
}

// A window lowered at run time (P2P: a player with a smaller max_prediction shook hands): frames
// already simulated past it stay within reach, advancing is refused until the confirmed frame
// catches up, and the correction of the oldest of them still happens (the ring is sized by the
// configured window). Outside 0..max_prediction it is refused.
TEST(RollbackDriver, ALoweredWindowStallsUntilConfirmedFramesCatchUpAndLosesNoRollback) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 8), Result::ok);
  EXPECT_EQ(h.driver.prediction_window(), 8);
  EXPECT_EQ(h.driver.set_prediction_window(9), Result::invalid_argument);
  EXPECT_EQ(h.driver.set_prediction_window(-1), Result::invalid_argument);
  const uint8_t v = 1;
  for (int f = 0; f < 6; ++f) {
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  ASSERT_EQ(h.driver.set_prediction_window(2), Result::ok);
  EXPECT_EQ(h.driver.prediction_window(), 2);
  EXPECT_EQ(h.driver.max_prediction(), 8) << "memory stays sized by the configured window";
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::prediction_limit) << "6 frames past the unknown input, the window is 2";
  // The remote inputs of frames 0..3 arrive, frame 0 mispredicted: the rollback reaches back 6
  // frames (deeper than the new window), and 2 frames past the oldest unknown fit again.
  const uint8_t r = 9;
  for (Frame f = 0; f < 4; ++f) ASSERT_EQ(h.driver.add_remote_input(1, f, &r), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::prediction_limit) << "frame 6 is 3 past the unknown frame 4";
  EXPECT_EQ(h.game.loads, 1u) << "the correction happened anyway";
  EXPECT_EQ(h.driver.stats().max_rollback_depth, 6u);
  ASSERT_EQ(h.driver.add_remote_input(1, 4, &r), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.driver.frame(), 7);
  EXPECT_EQ(h.game.frame_errors, 0);
  ASSERT_EQ(h.driver.set_prediction_window(0), Result::ok) << "lockstep from now on";
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::prediction_limit);
}

// window_full() at its edge for every window in use (lockstep included): with the remote
// inputs known through frame k, exactly the frames up to k + window run, the next is refused,
// and one more input lets exactly one more frame run. With no remote player it is never full.
TEST(RollbackDriver, TheWindowAdmitsExactlyItsFramesPastTheLastKnownInput) {
  for (int32_t window : {0, 1, 3, 8}) {
    SCOPED_TRACE(window);
    DriverHarness h;
    ASSERT_EQ(h.init(2, 1, 1, 8), Result::ok);
    ASSERT_EQ(h.driver.set_prediction_window(window), Result::ok);
    const uint8_t v = 1;
    constexpr Frame kKnown = 5;
    for (Frame f = 0; f <= kKnown; ++f) ASSERT_EQ(h.driver.add_remote_input(1, f, &v), Result::ok);
    for (Frame f = 0; f <= kKnown + window; ++f) {
      ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
      EXPECT_FALSE(h.driver.window_full()) << f;
      ASSERT_EQ(h.driver.advance(), Result::ok) << f;
    }
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    EXPECT_TRUE(h.driver.window_full());
    EXPECT_EQ(h.driver.advance(), Result::prediction_limit);
    EXPECT_EQ(h.driver.frame(), kKnown + window + 1);
    ASSERT_EQ(h.driver.add_remote_input(1, kKnown + 1, &v), Result::ok);
    EXPECT_FALSE(h.driver.window_full());
    ASSERT_EQ(h.driver.advance(), Result::ok);
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    EXPECT_EQ(h.driver.advance(), Result::prediction_limit);
    EXPECT_EQ(h.driver.frame(), kKnown + window + 2);
  }
  DriverHarness alone;  // local players only: nothing to wait for
  ASSERT_EQ(alone.init(2, 2, 1, 0), Result::ok);
  const uint8_t v = 1;
  for (Frame f = 0; f < 20; ++f) {
    ASSERT_EQ(alone.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(alone.driver.add_local_input(1, &v, 1), Result::ok);
    EXPECT_FALSE(alone.driver.window_full());
    ASSERT_EQ(alone.driver.advance(), Result::ok) << f;
  }
}

TEST(RollbackDriver, ZeroPredictionIsLockstep) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 0), Result::ok);
  const uint8_t v = 1;
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::prediction_limit) << "the remote input of frame 0 is missing";
  ASSERT_EQ(h.driver.add_remote_input(1, 0, &v), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.saves, 0u) << "nothing can roll back, so nothing is saved";
}

TEST(RollbackDriver, DelayIncreaseRepeatsLastInputAndDecreaseDropsSamples) {
  DriverHarness h;
  ASSERT_EQ(h.init(1, 1, 1, 0), Result::ok);
  ASSERT_EQ(h.driver.set_input_delay(0, 2), Result::ok);
  std::vector<uint8_t> seen;
  h.game.events.reserve(1);
  auto tick = [&](uint8_t v) {
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  };
  tick(1);  // frame 0 (delay fill: frames 0,1 = 0), input 1 -> frame 2
  tick(2);  // frame 1, input 2 -> frame 3
  ASSERT_EQ(h.driver.set_input_delay(0, 4), Result::ok);
  tick(3);  // frame 2, input 3 -> frame 6; frames 4,5 repeat 2
  ASSERT_EQ(h.driver.set_input_delay(0, 1), Result::ok);
  tick(4);  // frame 3: target 4 already has an input: sample dropped
  tick(5);  // frame 4: dropped (target 5)
  tick(6);  // frame 5: dropped (target 6)
  tick(7);  // frame 6: target 7
  for (Frame f = 0; f <= 7; ++f) seen.push_back(*h.driver.confirmed_input(0, f));
  EXPECT_EQ(seen, (std::vector<uint8_t>{0, 0, 1, 2, 2, 2, 3, 7}));
  EXPECT_EQ(h.driver.frame(), 7);
}

// The send pass of a P2P session reads min_local_delay() every frame instead of walking its
// local players: it must follow every delay change and every change of who is local.
TEST(RollbackDriver, MinLocalDelayFollowsEveryDelayAndLocalChange) {
  DriverHarness h;
  ASSERT_EQ(h.init(3, 2, 1, 4), Result::ok);
  EXPECT_EQ(h.driver.min_local_delay(), 0);
  ASSERT_EQ(h.driver.set_input_delay(0, 5), Result::ok);
  EXPECT_EQ(h.driver.min_local_delay(), 0) << "player 1 is local with delay 0";
  ASSERT_EQ(h.driver.set_input_delay(1, 3), Result::ok);
  EXPECT_EQ(h.driver.min_local_delay(), 3);
  EXPECT_EQ(h.driver.set_input_delay(2, 1), Result::invalid_player) << "player 2 is remote";
  EXPECT_EQ(h.driver.min_local_delay(), 3) << "a refused delay changes nothing";
  EXPECT_EQ(h.driver.set_input_delay(1, -1), Result::invalid_argument);
  EXPECT_EQ(h.driver.min_local_delay(), 3);
  h.driver.set_local(1, false);
  EXPECT_EQ(h.driver.min_local_delay(), 5) << "only local players count";
  h.driver.set_local(0, false);
  EXPECT_EQ(h.driver.min_local_delay(), INT32_MAX) << "no local player";
  h.driver.set_local(1, true);
  EXPECT_EQ(h.driver.min_local_delay(), 3);
  // The frames it sends for follow the same delays: the input given now is for frame 3.
  const uint8_t v = 7;
  ASSERT_EQ(h.driver.add_local_input(1, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.last_confirmed(1), 3);
}

TEST(RollbackDriver, SaveThatDoesNotFitIsReportedNotACrash) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 4, SaveMode::automatic, 40), Result::ok);  // < 45-byte minimum save
  const uint8_t v = 1;
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::save_failed);
  EXPECT_EQ(h.driver.frame(), 0);
  ASSERT_EQ(h.game.events.size(), 1u);
  EXPECT_EQ(h.game.events[0].type, EventType::save_failed);
  EXPECT_EQ(h.game.advances, 0u) << "the frame was not simulated without a save";
}

// The usual rollback (every frame saved, nobody absent) runs its own loop: a save that fails
// in it is reported and returned, but the re-simulation goes on to the live frame, which the
// next advance simulates from the right state.
TEST(RollbackDriver, ASaveFailingInsideARollbackIsReportedAndTheRerunStillEndsRight) {
  auto local = [](Frame f) { return uint32_t(f) * 3 + 1; };
  auto remote = [](Frame f) { return 1000 + uint32_t(f) * 7; };
  struct Failing {
    TestGame game;
    bool fail = false;  // saves report a size beyond max_state_size
    detail::RollbackDriver driver;
  } h;
  SessionConfig c;
  c.num_players = 2;
  c.input_size = 4;
  c.max_prediction = 8;
  c.max_state_size = 256;
  c.save_mode = SaveMode::every_frame;
  c.callbacks = bind_game(h.game);
  c.callbacks.user = &h;
  c.callbacks.save_state = [](void* u, Frame f, uint8_t* b, size_t n) -> size_t {
    auto* self = static_cast<Failing*>(u);
    const size_t used = self->game.save_state(f, b, n);
    return self->fail ? n + 1 : used;
  };
  c.callbacks.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
    static_cast<Failing*>(u)->game.load_state(f, b, n);
  };
  c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
    static_cast<Failing*>(u)->game.advance_frame(f, *in, flags);
  };
  c.callbacks.on_event = [](void* u, const Event* e) { static_cast<Failing*>(u)->game.on_event(*e); };
  c.callbacks.describe_state = nullptr;
  c.callbacks.checksum = nullptr;
  h.game.events.reserve(64);
  ASSERT_EQ(h.driver.init(c, 8, SaveMode::every_frame), Result::ok);
  h.driver.set_local(0, true);
  h.driver.set_local(1, false);
  const uint32_t first = remote(0);
  ASSERT_EQ(h.driver.add_remote_input(1, 0, reinterpret_cast<const uint8_t*>(&first)), Result::ok);
  for (Frame f = 0; f < 6; ++f) {  // frames 1..5 predicted (the remote input of frame 0 repeated)
    const uint32_t v = local(f);
    ASSERT_EQ(h.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  for (Frame f = 1; f < 7; ++f) {
    const uint32_t v = remote(f);
    ASSERT_EQ(h.driver.add_remote_input(1, f, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
  }
  h.fail = true;  // every save from now on needs more than max_state_size
  const uint32_t v6 = local(6);
  ASSERT_EQ(h.driver.add_local_input(0, &v6, 4), Result::ok);
  EXPECT_EQ(h.driver.advance(), Result::save_failed);
  EXPECT_EQ(h.driver.stats().rollbacks, 1u);
  EXPECT_EQ(h.driver.frame(), 6) << "the live frame does not run after a failed rollback";
  ASSERT_FALSE(h.game.events.empty());
  EXPECT_EQ(h.game.events[0].type, EventType::save_failed);
  h.fail = false;
  EXPECT_EQ(h.driver.advance(), Result::ok) << "the input of frame 6 is still there";
  EXPECT_EQ(h.driver.stats().rollbacks, 1u) << "the failed save does not bring the rollback back";
  TestGame lockstep;
  for (Frame f = 0; f < 7; ++f) {
    const uint32_t both[2] = {local(f), remote(f)};
    const InputStatus status[2] = {};
    lockstep.step(FrameInputs{reinterpret_cast<const uint8_t*>(both), status, 4, 2});
  }
  EXPECT_EQ(h.game.frame_errors, 0);
  EXPECT_EQ(h.game.state.frame, 7);
  EXPECT_EQ(h.game.hash(), lockstep.hash());
}

TEST(RollbackDriver, DisconnectedPlayerGetsZerosWithStatusAfterAgreedFrame) {
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 1, 8), Result::ok);
  const uint8_t v = 3;
  for (Frame f = 0; f < 4; ++f) {
    ASSERT_EQ(h.driver.add_remote_input(1, f, &v), Result::ok);
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
  }
  for (Frame f = 4; f < 7; ++f) {
    ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);  // predicted 3 for player 1
  }
  ASSERT_EQ(h.driver.disconnect_player(1, 3), Result::ok);
  ASSERT_EQ(h.driver.add_local_input(0, &v, 1), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.loads, 1u) << "frames 4..6 re-run with the disconnected zeros";
  EXPECT_EQ(h.driver.confirmed_frame(), 7);
  EXPECT_FALSE(h.driver.window_full());
}

// The driver hands the game a frame's inputs straight from its shared ring while nobody is
// absent, and builds them player by player (zeros for the absent) otherwise (update_absence).
// A match with rollbacks across every edge of that: a cut announced late and then moved earlier
// (agreed), frames inside the rejoin gap, the rejoin's first frames predicted, a lowered
// prediction window, four-byte inputs (the drivers' usual path). It must end in the state of a
// lockstep run that knew everything up front: the same inputs, zeros while absent.
TEST(RollbackDriver, CutsAndARejoinUnderRollbackEndInTheLockstepState) {
  auto local = [](Frame f) { return uint32_t(f) * 3 + 1; };
  auto remote = [](Frame f) { return 1000 + uint32_t(f) * 7; };
  constexpr Frame kCut = 15, kRejoin = 34, kEnd = 56;
  // Rollback: the remote inputs arrive three frames late; the cut is heard at 17 when frame 20
  // starts, moved to 15 (agreed) when frame 22 starts; the rejoin at 34 is known at frame 30.
  DriverHarness a;
  ASSERT_EQ(a.init(2, 1, 4, 8), Result::ok);
  ASSERT_EQ(a.driver.set_prediction_window(4), Result::ok);  // the peer's window is smaller
  Frame delivered = -1;
  bool absent = false;
  for (Frame f = 0; f < kEnd; ++f) {
    const Frame upto = f + 3 >= kEnd ? kEnd : f - 3;
    for (; !absent && delivered < upto; ++delivered) {
      const uint32_t v = remote(delivered + 1);
      ASSERT_EQ(a.driver.add_remote_input(1, delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok)
          << delivered + 1;
    }
    if (f == 20) {
      ASSERT_EQ(a.driver.disconnect_player(1, 17, false), Result::ok);
      absent = true;
    }
    if (f == 22) {
      ASSERT_EQ(a.driver.disconnect_player(1, kCut, true), Result::ok);
    }
    if (f == 30) {
      ASSERT_EQ(a.driver.rejoin_player(1, kRejoin), Result::ok);
      absent = false;
      delivered = kRejoin - 1;
    }
    const uint32_t v = local(f);
    ASSERT_EQ(a.driver.add_local_input(0, &v, 4), Result::ok) << f;
    ASSERT_EQ(a.driver.advance(), Result::ok) << f;
  }
  EXPECT_GT(a.driver.stats().rollbacks, 10u);
  // Lockstep: every remote input and the statuses known before the frames they touch.
  DriverHarness b;
  ASSERT_EQ(b.init(2, 1, 4, 8), Result::ok);
  for (Frame f = 0; f <= kCut; ++f) {
    const uint32_t v = remote(f);
    ASSERT_EQ(b.driver.add_remote_input(1, f, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
  }
  ASSERT_EQ(b.driver.disconnect_player(1, kCut, true), Result::ok);
  ASSERT_EQ(b.driver.rejoin_player(1, kRejoin), Result::ok);
  for (Frame f = kRejoin; f <= kEnd; ++f) {
    const uint32_t v = remote(f);
    ASSERT_EQ(b.driver.add_remote_input(1, f, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
  }
  for (Frame f = 0; f < kEnd; ++f) {
    const uint32_t v = local(f);
    ASSERT_EQ(b.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(b.driver.advance(), Result::ok);
  }
  EXPECT_EQ(b.driver.stats().rollbacks, 0u);
  EXPECT_EQ(a.game.frame_errors, 0);
  EXPECT_EQ(a.game.state.frame, b.game.state.frame);
  EXPECT_EQ(a.game.hash(), b.game.hash()) << "the rolled-back run ended elsewhere";
  EXPECT_GE(a.driver.confirmed_frame(), kEnd - 1);
}

// add_local_input takes the usual input (a connected local player, an input of a size
// add_confirmed_small copies) after one test of a per-player byte; every other case takes the
// full path. Both paths, and the moves between them (a local player cut, then rejoined), under
// rollback (the remote inputs arrive two frames late): the game must end in the state of a
// lockstep run of the same inputs, zeros while absent. Every small size (1, 2, 4, 8 bytes: each
// its own copy in add_confirmed_small); three-byte inputs never take the usual path.
void local_inputs_reach_the_game(uint32_t size) {
  SCOPED_TRACE(size);
  auto input = [](PlayerIndex p, Frame f) { return uint64_t(f) * 0x0102030405060708u + uint64_t(p) * 0x50607u + 1; };
  constexpr Frame kCut = 5, kCutHeard = 8, kRejoinHeard = 11, kRejoin = 14, kEnd = 24;
  DriverHarness h;
  ASSERT_EQ(h.init(3, 2, size, 8), Result::ok);  // players 0 and 1 local, 2 remote
  Frame delivered = -1;
  for (Frame f = 0; f < kEnd; ++f) {
    for (; delivered < f - 2 || (f == kEnd - 1 && delivered < f); ++delivered) {
      const uint64_t v = input(2, delivered + 1);
      ASSERT_EQ(h.driver.add_remote_input(2, delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
    }
    if (f == kCutHeard) {
      ASSERT_EQ(h.driver.disconnect_player(1, kCut, true), Result::ok);
    }
    if (f == kRejoinHeard) {
      ASSERT_EQ(h.driver.rejoin_player(1, kRejoin), Result::ok);
    }
    const uint64_t v0 = input(0, f), v1 = input(1, f);
    // The caller's mistakes, on either path, are refused and change nothing.
    EXPECT_EQ(h.driver.add_local_input(2, &v0, size), Result::invalid_player);
    EXPECT_EQ(h.driver.add_local_input(3, &v0, size), Result::invalid_player);
    EXPECT_EQ(h.driver.add_local_input(1, nullptr, size), Result::invalid_argument);
    EXPECT_EQ(h.driver.add_local_input(1, &v1, size + 1), Result::invalid_input_size);
    ASSERT_EQ(h.driver.add_local_input(0, &v0, size), Result::ok) << f;
    ASSERT_EQ(h.driver.add_local_input(1, &v1, size), Result::ok) << f;
    EXPECT_EQ(h.driver.add_local_input(1, &v1, size), Result::input_already_added) << f;
    EXPECT_EQ(h.driver.add_local_input(0, &v0, size), Result::input_already_added) << f;
    ASSERT_EQ(h.driver.advance(), Result::ok) << f;
  }
  EXPECT_GT(h.driver.stats().rollbacks, 5u);
  EXPECT_EQ(h.game.frame_errors, 0);
  TestGame lockstep;
  for (Frame f = 0; f < kEnd; ++f) {
    uint8_t bytes[3 * 8] = {};
    for (PlayerIndex p = 0; p < 3; ++p) {
      const uint64_t v = p == 1 && f > kCut && f < kRejoin ? 0 : input(p, f);
      std::memcpy(bytes + size_t(p) * size, &v, size);
    }
    const InputStatus status[3] = {};
    lockstep.step(FrameInputs{bytes, status, size, 3});
  }
  EXPECT_EQ(h.game.state.frame, kEnd);
  EXPECT_EQ(h.game.hash(), lockstep.hash()) << "an input was lost, doubled or taken for the wrong frame";
}

TEST(RollbackDriver, LocalInputsOfEveryPathReachTheGameAsInLockstep) {
  for (uint32_t size : {1u, 2u, 3u, 4u, 8u}) local_inputs_reach_the_game(size);
}

// step() writes a frame's decisions into the view it hands the game only when the source has
// some queued, and clears them after that frame: a frame simulated after the queue emptied
// (the usual frame) must not see the last frame's decisions again, nor a frame before it.
TEST(RollbackDriver, DecisionsReachOnlyTheirFramesAfterTheQueueEmpties) {
  struct Source {
    uint32_t queued = 1;
    uint8_t payload[2] = {7, 9};
    Decision decision{payload, 2, 0};
  } source;
  DriverHarness h;
  ASSERT_EQ(h.init(1, 1, 4, 8, SaveMode::every_frame), Result::ok);
  detail::DecisionSource ds;
  ds.user = &source;
  ds.queued = &source.queued;
  ds.for_frame = [](void* u, Frame frame, const Decision** out) -> uint32_t {
    auto* s = static_cast<Source*>(u);
    if (frame != 3 && frame != 6) return 0;
    *out = &s->decision;
    return 1;
  };
  h.driver.set_decision_source(ds);
  TestGame lockstep;
  for (Frame f = 0; f < 12; ++f) {
    if (f == 7) source.queued = 0;  // both decisions applied: nothing queued any more
    const uint32_t v = uint32_t(f) * 5 + 1;
    ASSERT_EQ(h.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
    const InputStatus status[1] = {};
    FrameInputs in{reinterpret_cast<const uint8_t*>(&v), status, 4, 1};
    if (f == 3 || f == 6) {
      in.decisions = &source.decision;
      in.decision_count = 1;
    }
    lockstep.step(in);
    ASSERT_EQ(h.game.hash(), lockstep.hash()) << "frame " << f << " saw other decisions than its own";
  }
}

// The statuses the game is handed: plain frames write only the other players' (a connected
// local player's stays confirmed from update_absence on), frames with someone absent use their
// own array. Every call, re-simulations included, across a local player's cut and rejoin gap
// and back, with the remote inputs two frames late: local players confirmed unless absent,
// the absent one disconnected, the remote one confirmed exactly when its input was there.
TEST(RollbackDriver, EveryFrameHandsTheGameTheStatusesOfThatMoment) {
  struct Recording {
    TestGame game;
    detail::RollbackDriver driver;
    Frame delivered = -1;   // the remote player's newest input given to the driver
    bool cut_heard = false;
    struct Call {
      Frame frame, delivered;
      bool cut_heard;
      InputStatus status[3];
    };
    std::vector<Call> calls;
    void record(Frame f, const FrameInputs& in) {
      calls.push_back({f, delivered, cut_heard, {in.status[0], in.status[1], in.status[2]}});
    }
  } r;
  constexpr Frame kCut = 5, kCutHeard = 8, kRejoinHeard = 11, kRejoin = 14, kEnd = 22;
  r.calls.reserve(256);
  ASSERT_EQ(r.driver.init(recording_config(r, 3), 8, SaveMode::automatic), Result::ok);
  r.driver.set_local(0, true);
  r.driver.set_local(1, true);
  r.driver.set_local(2, false);
  for (Frame f = 0; f < kEnd; ++f) {
    for (; r.delivered < f - 2; ++r.delivered) {
      const uint32_t v = 7 + uint32_t(r.delivered + 1) % 3;  // changes every frame: rollbacks
      ASSERT_EQ(r.driver.add_remote_input(2, r.delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
    }
    if (f == kCutHeard) {
      ASSERT_EQ(r.driver.disconnect_player(1, kCut, true), Result::ok);
      r.cut_heard = true;
    }
    if (f == kRejoinHeard) {
      ASSERT_EQ(r.driver.rejoin_player(1, kRejoin), Result::ok);
    }
    const uint32_t v = uint32_t(f);
    ASSERT_EQ(r.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(r.driver.add_local_input(1, &v, 4), Result::ok);
    ASSERT_EQ(r.driver.advance(), Result::ok) << f;
  }
  EXPECT_GT(r.driver.stats().rollbacks, 5u);
  size_t absent_calls = 0, plain_after_absent = 0;
  bool seen_absent = false;
  for (const Recording::Call& call : r.calls) {
    const bool absent = call.cut_heard && call.frame > kCut && call.frame < kRejoin;
    absent_calls += absent;
    seen_absent = seen_absent || absent;
    plain_after_absent += seen_absent && !absent;
    SCOPED_TRACE(call.frame);
    EXPECT_EQ(call.status[0], InputStatus::confirmed);
    EXPECT_EQ(call.status[1], absent ? InputStatus::disconnected : InputStatus::confirmed);
    EXPECT_EQ(call.status[2], call.frame <= call.delivered ? InputStatus::confirmed : InputStatus::predicted);
  }
  EXPECT_GT(absent_calls, 5u);
  EXPECT_GT(plain_after_absent, 5u);
}

// confirmed_frame() keeps the lowest confirmed input exact across an input of the player that
// held it alone (the second lowest says so) and recomputes otherwise. Three players (one local,
// two remote) whose inputs arrive in random bursts, so the lowest moves between them and is
// often shared (ties): after every input and every frame it must equal the lowest input of all
// (capped by the frame simulated), as a scan of the players says.
TEST(RollbackDriver, ConfirmedFrameFollowsTheLowestInputThroughTiesAndBursts) {
  DriverHarness h;
  ASSERT_EQ(h.init(3, 1, 4, 8), Result::ok);
  std::mt19937 rng(20261203);
  Frame sent[3] = {-1, -1, -1};
  auto expected = [&] {
    Frame lowest = h.driver.frame() - 1;
    for (PlayerIndex p = 0; p < 3; ++p) lowest = std::min(lowest, h.driver.last_confirmed(p));
    return lowest;
  };
  int ties = 0, asked = 0;
  for (Frame f = 0; f < 400; ++f) {
    for (PlayerIndex p = 1; p < 3; ++p) {
      // Up to three inputs at once, never more than the window ahead of the slowest.
      const uint32_t burst = uint32_t(rng() % 4);
      for (uint32_t k = 0; k < burst && sent[p] < h.driver.frame() + 2; ++k) {
        const uint32_t v = uint32_t(rng() % 3);
        ASSERT_EQ(h.driver.add_remote_input(p, sent[p] + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
        ++sent[p];
        if (rng() % 2) {  // asked between inputs too (the session asks on every send pass)
          ASSERT_EQ(h.driver.confirmed_frame(), expected()) << "frame " << f;
          ++asked;
        }
      }
    }
    ties += h.driver.last_confirmed(1) == h.driver.last_confirmed(2);
    const uint32_t v = uint32_t(f);
    ASSERT_EQ(h.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(h.driver.confirmed_frame(), expected()) << "frame " << f;
    const Result r = h.driver.advance();
    ASSERT_TRUE(r == Result::ok || r == Result::prediction_limit) << int(r);
    ASSERT_EQ(h.driver.confirmed_frame(), expected()) << "frame " << f;
  }
  EXPECT_GT(ties, 50);
  EXPECT_GT(asked, 100);
  EXPECT_GT(h.driver.frame(), 300);
}

// The frames nobody is absent at predict in one of two loops: the carry-forward inline, the
// game's predictor out of line. Either way every call (re-simulations included) hands the game,
// for the remote player, its real input when known and otherwise exactly what that predictor
// says; the local player's input is always its own.
void predictions_follow_the_predictor(bool custom, uint32_t size) {
  SCOPED_TRACE(testing::Message() << "custom " << custom << " size " << size);
  struct Recording {
    TestGame game;
    detail::RollbackDriver driver;
    Frame delivered = -1;
    uint64_t last_real = 0;  // the remote player's newest real input
    int predicted = 0, wrong = 0;
    bool custom = false;
    uint32_t size = 4;
    uint64_t mask = 0;  // the bytes of a value an input of `size` holds
    void record(Frame f, const FrameInputs& in) {
      uint64_t mine = 0, theirs = 0;
      std::memcpy(&mine, in.player(0), size);
      std::memcpy(&theirs, in.player(1), size);
      const uint64_t real = (0x1000u + uint64_t(f) / 3) & mask;
      uint64_t want = real;
      if (in.status[1] == InputStatus::predicted) {
        ++predicted;
        want = custom ? (0xC0DE0000u + uint64_t(f)) & mask : last_real;
      }
      wrong += in.status[0] != InputStatus::confirmed || mine != ((uint64_t(f) * 7) & mask) ||
               (in.status[1] == InputStatus::predicted) != (f > delivered) || theirs != want;
    }
  } r;
  r.custom = custom;
  r.size = size;
  r.mask = size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
  auto remote = [](Frame f) { return 0x1000u + uint64_t(f) / 3; };  // changes every third frame
  SessionConfig c = recording_config(r, 2, size);
  if (custom) {
    c.predictor.predict = [](void*, PlayerIndex, Frame frame, const uint8_t*, uint8_t* out, size_t n) {
      const uint64_t v = 0xC0DE0000u + uint64_t(frame);
      std::memcpy(out, &v, n);
    };
  }
  ASSERT_EQ(r.driver.init(c, 8, SaveMode::automatic), Result::ok);
  r.driver.set_local(0, true);
  r.driver.set_local(1, false);
  for (Frame f = 0; f < 40; ++f) {
    for (; r.delivered < f - 3; ++r.delivered) {  // three frames late
      const uint64_t v = remote(r.delivered + 1);
      ASSERT_EQ(r.driver.add_remote_input(1, r.delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
      r.last_real = v & r.mask;
    }
    const uint64_t v = uint64_t(f) * 7;
    ASSERT_EQ(r.driver.add_local_input(0, &v, size), Result::ok);
    ASSERT_EQ(r.driver.advance(), Result::ok) << f;
  }
  EXPECT_GT(r.driver.stats().rollbacks, 5u);
  EXPECT_GT(r.predicted, 50);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(r.game.frame_errors, 0);
}

// Every input size: the carry-forward is written into the remote player's place in the frame's
// row (its queue's slot), wherever the size puts it; 3 bytes is not a small size.
TEST(RollbackDriver, PredictionsComeFromTheCarryForwardOrTheGamesPredictor) {
  for (uint32_t size : {1u, 2u, 3u, 4u, 8u}) {
    predictions_follow_the_predictor(false, size);
    predictions_follow_the_predictor(true, size);
  }
}

// The usual rollback asks once whether decisions are queued and re-runs its frames without
// asking for them when none are; with some queued it takes the loop that hands every re-run
// frame its decisions. A remote player three frames late (rollbacks over the decisions' frames),
// decisions on frames 4 and 9 queued until frame 20: the game ends in the lockstep state.
TEST(RollbackDriver, ARollbackReRunsTheDecisionsOfTheFramesItReRuns) {
  struct Source {
    uint32_t queued = 1;
    uint8_t payload[1] = {42};
    Decision decision{payload, 1, 1};
  } source;
  auto remote = [](Frame f) { return 0x100u + uint32_t(f) / 2; };
  DriverHarness h;
  ASSERT_EQ(h.init(2, 1, 4, 8), Result::ok);
  detail::DecisionSource ds;
  ds.user = &source;
  ds.queued = &source.queued;
  ds.for_frame = [](void* u, Frame frame, const Decision** out) -> uint32_t {
    if (frame != 4 && frame != 9) return 0;
    *out = &static_cast<Source*>(u)->decision;
    return 1;
  };
  h.driver.set_decision_source(ds);
  Frame delivered = -1;
  for (Frame f = 0; f < 30; ++f) {
    if (f == 20) source.queued = 0;  // frames 4 and 9 are confirmed by now: never re-run again
    for (; delivered < f - 3; ++delivered) {
      const uint32_t v = remote(delivered + 1);
      ASSERT_EQ(h.driver.add_remote_input(1, delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
    }
    const uint32_t v = uint32_t(f) * 5;
    ASSERT_EQ(h.driver.add_local_input(0, &v, 4), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok) << f;
  }
  for (; delivered < 30; ++delivered) {
    const uint32_t v = remote(delivered + 1);
    ASSERT_EQ(h.driver.add_remote_input(1, delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
  }
  const uint32_t last = 30 * 5;
  ASSERT_EQ(h.driver.add_local_input(0, &last, 4), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  EXPECT_GT(h.driver.stats().rollbacks, 5u);
  EXPECT_EQ(h.game.frame_errors, 0);
  TestGame lockstep;
  for (Frame f = 0; f <= 30; ++f) {
    const uint32_t both[2] = {uint32_t(f) * 5, remote(f)};
    const InputStatus status[2] = {};
    FrameInputs in{reinterpret_cast<const uint8_t*>(both), status, 4, 2};
    if (f == 4 || f == 9) {
      in.decisions = &source.decision;
      in.decision_count = 1;
    }
    lockstep.step(in);
  }
  EXPECT_EQ(h.game.state.frame, 31);
  EXPECT_EQ(h.game.hash(), lockstep.hash()) << "a re-run frame lost or doubled its decision";
}

TEST(RollbackDriver, SparseSavingSavesOnlyConfirmedFramesAndStaysCorrect) {
  DriverHarness h, ref;
  ASSERT_EQ(h.init(2, 1, 1, 6, SaveMode::sparse), Result::ok);
  ASSERT_EQ(ref.init(2, 2, 1, 0), Result::ok);
  for (Frame f = 0; f < 60; ++f) {
    const uint8_t l = uint8_t(f * 7), r = uint8_t(f / 3);
    ASSERT_EQ(h.driver.add_local_input(0, &l, 1), Result::ok);
    ASSERT_EQ(h.driver.advance(), Result::ok);
    if (f >= 4) {
      const uint8_t late = uint8_t((f - 4) / 3);
      ASSERT_EQ(h.driver.add_remote_input(1, f - 4, &late), Result::ok);
    }
    ASSERT_EQ(ref.driver.add_local_input(0, &l, 1), Result::ok);
    ASSERT_EQ(ref.driver.add_local_input(1, &r, 1), Result::ok);
    ASSERT_EQ(ref.driver.advance(), Result::ok);
  }
  for (Frame f = 56; f <= 60; ++f) {
    const uint8_t late = f < 60 ? uint8_t(f / 3) : 0;
    ASSERT_EQ(h.driver.add_remote_input(1, f, &late), Result::ok);
  }
  const uint8_t l = 0;
  ASSERT_EQ(h.driver.add_local_input(0, &l, 1), Result::ok);
  ASSERT_EQ(h.driver.advance(), Result::ok);
  ASSERT_EQ(ref.driver.add_local_input(0, &l, 1), Result::ok);
  ASSERT_EQ(ref.driver.add_local_input(1, &l, 1), Result::ok);
  ASSERT_EQ(ref.driver.advance(), Result::ok);
  EXPECT_EQ(h.game.hash(), ref.game.hash());
  EXPECT_LT(h.game.saves, 40u) << "sparse saving saves far fewer states than frames";
  EXPECT_EQ(h.game.frame_errors, 0);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// The session's drain of a peer, frame by frame as before accept_remote_run: each frame taken
// while can_accept holds. Returns how many were taken.
uint32_t drain_one_by_one(detail::RollbackDriver& d, PlayerIndex player, Frame frame, const uint8_t* inputs,
                          size_t stride, uint32_t count) {
  uint32_t taken = 0;
  for (; taken < count && d.can_accept(player, frame + Frame(taken)); ++taken)
    (void)d.add_remote_input(player, frame + Frame(taken), inputs + size_t(taken) * stride);
  return taken;
}

// RollbackDriver::accept_remote_run takes a usual run of a remote player's inputs at once, or
// nothing: two drivers, one fed runs (frame by frame whenever the run is refused), the other
// frame by frame, play the same match (a local player, two remote ones, runs of 1..12 frames
// whose inputs change at random, the remote players running ahead of the window so that runs
// cross its end, one remote player cut midway): the same frames taken, the same rollbacks and
// the same states, for every small input size and one the run never takes (3 bytes).
TEST(RollbackDriver, RemoteRunsAreTakenAsFrameByFrame) {
  for (uint32_t size : {1u, 2u, 3u, 4u, 8u}) {
    DriverHarness runs, single;
    ASSERT_EQ(runs.init(3, 1, size, 6), Result::ok);
    ASSERT_EQ(single.init(3, 1, size, 6), Result::ok);
    std::mt19937 rng(size);
    std::vector<uint8_t> inputs(16 * size);
    Frame next[3] = {0, 0, 0};
    uint32_t refused = 0, taken_in_runs = 0, across_the_window = 0;
    bool advanced = true;
    for (int tick = 0; tick < 400; ++tick) {
      std::vector<uint8_t> local(size, uint8_t(tick / 3));
      for (DriverHarness* h : {&runs, &single})
        if (advanced) {
          ASSERT_EQ(h->driver.add_local_input(0, local.data(), size), Result::ok);
        }
      if (tick == 250) {
        ASSERT_EQ(runs.driver.disconnect_player(2, next[2] - 1), Result::ok);
        ASSERT_EQ(single.driver.disconnect_player(2, next[2] - 1), Result::ok);
      }
      for (PlayerIndex p = 1; p <= 2; ++p) {
        const uint32_t count = uint32_t(rng() % 13);  // 0..12 frames, up to well past the window
        for (uint8_t& b : inputs) b = rng() % 4 == 0 ? uint8_t(rng()) : b;
        const uint32_t by_run = runs.driver.accept_remote_run(p, next[p], inputs.data(), size, count);
        if (by_run != 0) {
          EXPECT_EQ(by_run, count);
          taken_in_runs += by_run;
        } else {
          ++refused;
        }
        const uint32_t a = by_run != 0 ? by_run : drain_one_by_one(runs.driver, p, next[p], inputs.data(), size, count);
        const uint32_t b = drain_one_by_one(single.driver, p, next[p], inputs.data(), size, count);
        ASSERT_EQ(a, b) << "size " << size << " tick " << tick << " player " << p;
        if (by_run == 0 && a > 0 && a < count) ++across_the_window;
        next[p] += Frame(a);
        EXPECT_EQ(runs.driver.first_incorrect(), single.driver.first_incorrect()) << tick;
        EXPECT_EQ(runs.driver.last_confirmed(p), single.driver.last_confirmed(p)) << tick;
      }
      const Result ra = runs.driver.advance(), rb = single.driver.advance();
      ASSERT_EQ(ra, rb) << "size " << size << " tick " << tick;
      advanced = ra == Result::ok;
      ASSERT_EQ(runs.game.state.chain, single.game.state.chain) << "size " << size << " tick " << tick;
      EXPECT_EQ(runs.driver.confirmed_frame(), single.driver.confirmed_frame());
    }
    EXPECT_EQ(runs.game.loads, single.game.loads);
    EXPECT_EQ(runs.game.frame_errors, 0);
    EXPECT_GT(refused, 50u) << "runs refused: a local player's, past the window, the cut player's";
    if (size != 3) {
      EXPECT_GT(taken_in_runs, 200u);
      EXPECT_GT(across_the_window, 5u) << "runs that cross the window: taken frame by frame, in part";
    }
    EXPECT_EQ(runs.driver.accept_remote_run(0, 0, inputs.data(), size, 1), 0u) << "a local player";
    EXPECT_EQ(runs.driver.accept_remote_run(1, next[1] + 1, inputs.data(), size, 1), 0u) << "a gap";
    EXPECT_EQ(runs.driver.accept_remote_run(7, 0, inputs.data(), size, 1), 0u) << "no such player";
    EXPECT_EQ(runs.driver.accept_remote_run(1, -1, inputs.data(), size, 1), 0u) << "a negative frame";
    DriverHarness fresh;  // nothing confirmed yet: last + 1 is 0
    ASSERT_EQ(fresh.init(2, 1, size, 6), Result::ok);
    EXPECT_EQ(fresh.driver.accept_remote_run(1, -1, inputs.data(), size, 1), 0u) << "a negative frame";
  }
}


// The recording drivers' saves and loads: through `r->game` (a TestGame), with `r` as the user.
template <class Recording>
void save_and_load_through_game(SessionConfig& c, Recording* r) {
  c.callbacks.user = r;
  c.callbacks.save_state = [](void* u, Frame f, uint8_t* buf, size_t n) {
    return static_cast<Recording*>(u)->game.save_state(f, buf, n);
  };
  c.callbacks.load_state = [](void* u, Frame f, const uint8_t* buf, size_t n) {
    static_cast<Recording*>(u)->game.load_state(f, buf, n);
  };
}

// step() and simulate() (the sync test's frame) hand the game the frame's row at once when
// nobody else plays and nobody is absent, and go through step_frame otherwise. Two drivers get
// the same inputs: A runs advance() (the general frame), B the sync test's composition (check,
// save, step, finish, and every fourth frame a load and simulate() of the last three). Every
// live call must see the same frame, inputs and statuses in both, and each of B's re-simulated
// calls what its live call of that frame saw. Three configurations: every player local (B's fast
// path), a local player cut at frame 5 (heard at 8) and rejoining at 14 (heard at 11: from then
// on nobody else plays, but the frames of its gap still take the general path, live and
// re-simulated), and a remote player (step() takes the general path).
void step_and_simulate_match_advance(int config) {
  SCOPED_TRACE(config);
  struct Call {
    Frame frame;
    uint32_t flags;
    uint32_t inputs[3];
    InputStatus status[3];
    bool operator==(const Call& o) const {
      return frame == o.frame && flags == o.flags && std::memcmp(inputs, o.inputs, sizeof inputs) == 0 &&
             std::memcmp(status, o.status, sizeof status) == 0;
    }
  };
  struct Recording {
    TestGame game;
    detail::RollbackDriver driver;
    std::vector<Call> live, resim;
  } a, b;
  auto config_for = [](Recording& r) {
    SessionConfig c = sized_config(3, 4, 8);
    save_and_load_through_game(c, &r);
    c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
      auto* self = static_cast<Recording*>(u);
      Call call{f, flags, {}, {}};
      for (PlayerIndex p = 0; p < 3; ++p) {
        std::memcpy(&call.inputs[p], in->player(p), 4);
        call.status[p] = in->status[p];
      }
      (flags & kAdvanceResimulating ? self->resim : self->live).push_back(call);
      self->game.advance_frame(f, *in, flags);
    };
    return c;
  };
  const bool remote = config == 2;
  for (Recording* r : {&a, &b}) {
    ASSERT_EQ(r->driver.init(config_for(*r), 8, SaveMode::every_frame), Result::ok);
    for (PlayerIndex p = 0; p < 3; ++p) r->driver.set_local(p, !(remote && p == 2));
    r->live.reserve(64);
    r->resim.reserve(256);
  }
  auto input = [](PlayerIndex p, Frame f) { return 0x100u * uint32_t(p + 1) + uint32_t(f) % 5; };
  constexpr Frame kEnd = 24, kCut = 5, kCutHeard = 8, kRejoinHeard = 11, kRejoin = 14;
  Frame delivered = -1;
  for (Frame f = 0; f < kEnd; ++f) {
    for (; remote && delivered < f - 2; ++delivered) {  // the remote input two frames late
      const uint32_t v = input(2, delivered + 1);
      for (Recording* r : {&a, &b})
        ASSERT_EQ(r->driver.add_remote_input(2, delivered + 1, reinterpret_cast<const uint8_t*>(&v)), Result::ok);
    }
    if (config == 1 && f == kCutHeard) {
      for (Recording* r : {&a, &b}) ASSERT_EQ(r->driver.disconnect_player(1, kCut, true), Result::ok);
    }
    if (config == 1 && f == kRejoinHeard) {
      for (Recording* r : {&a, &b}) ASSERT_EQ(r->driver.rejoin_player(1, kRejoin), Result::ok);
    }
    for (Recording* r : {&a, &b}) {
      for (PlayerIndex p = 0; p < 3; ++p) {
        if (!r->driver.is_local(p)) continue;
        const uint32_t v = input(p, f);
        ASSERT_EQ(r->driver.add_local_input(p, &v, 4), Result::ok);
      }
    }
    ASSERT_EQ(a.driver.advance(), Result::ok) << f;
    ASSERT_EQ(b.driver.check_local_inputs(), Result::ok);
    ASSERT_EQ(b.driver.save(f), Result::ok);
    if (f >= 3 && f % 4 == 0) {
      ASSERT_EQ(b.driver.load(f - 3), Result::ok);
      b.driver.simulate(f - 3, f, kAdvanceResimulating);
      ASSERT_EQ(b.driver.load(f), Result::ok);
    }
    b.driver.step(f, kAdvanceNone);
    b.driver.finish_frame();
  }
  ASSERT_EQ(a.live.size(), size_t(kEnd));
  ASSERT_EQ(b.live.size(), size_t(kEnd));
  for (Frame f = 0; f < kEnd; ++f) EXPECT_TRUE(a.live[size_t(f)] == b.live[size_t(f)]) << "frame " << f;
  EXPECT_GT(b.resim.size(), 10u);
  for (const Call& call : b.resim) {
    Call live = b.live[size_t(call.frame)];
    live.flags = call.flags;
    if (config == 1 && call.frame > kCut && call.frame < kCutHeard) {
      // Simulated live before the cut was heard; re-simulated after: absent.
      live.inputs[1] = 0;
      live.status[1] = InputStatus::disconnected;
    }
    if (remote && live.status[2] == InputStatus::predicted && call.frame <= delivered) continue;  // confirmed since
    EXPECT_TRUE(call == live) << "re-simulated frame " << call.frame;
  }
  if (config == 1) {
    const auto absent = std::count_if(b.resim.begin(), b.resim.end(),
                                      [](const Call& c) { return c.status[1] == InputStatus::disconnected; });
    EXPECT_GT(absent, 3) << "simulate() re-ran frames with the cut player absent";
    EXPECT_EQ(b.live[kRejoin - 1].status[1], InputStatus::disconnected) << "the rejoin gap's last frame";
    EXPECT_EQ(b.live[kRejoin].status[1], InputStatus::confirmed);
  }
  if (config == 0) {
    EXPECT_EQ(a.game.hash(), b.game.hash());  // (B never rolls back: with a cut or late inputs it differs)
  }
}

TEST(RollbackDriver, StepAndSimulateHandTheGameWhatAdvanceDoes) {
  for (int config : {0, 1, 2}) step_and_simulate_match_advance(config);
}

// Two drivers that play the same match, one through the usual rollback and one through the
// general re-run (a decision source that may always have something, and never has, makes the
// driver step frame by frame, writing each frame's predictions), each recording every call its
// game gets: frame, flags, inputs and statuses.
struct RecordedCall {
  Frame frame;
  uint32_t flags;
  std::vector<uint8_t> inputs;
  std::vector<InputStatus> status;
  bool operator==(const RecordedCall&) const = default;
};
struct RecordingDriver {
  TestGame game;
  detail::RollbackDriver driver;
  std::vector<RecordedCall> calls;
  uint32_t queued = 1;
};
// How the general driver is kept off the usual paths: a decision source that may always have
// something (the general re-run of a rollback, the live frame's decisions test), or the game's
// own predictor doing the carry-forward (every frame the general way: advance_other and
// step_frame live, the general re-run, predictions written by the game's predictor).
enum class GeneralBy { decisions, predictor };
struct UsualAndGeneral {
  RecordingDriver usual, general;
  detail::DecisionSource never;
  // Both drivers with `players` players of `size`-byte inputs, the first `locals` local;
  // `checkpoints`: their depth (0: none), as a P2P session keeps them.
  ::testing::AssertionResult init(uint32_t players, uint32_t size, uint32_t locals,
                                  GeneralBy by = GeneralBy::decisions, int32_t checkpoints = 0) {
    for (RecordingDriver* r : {&usual, &general}) {
      SessionConfig c = sized_config(players, size, 8);
      if (r == &general && by == GeneralBy::predictor) {
        c.predictor.predict = [](void*, PlayerIndex, Frame, const uint8_t* last, uint8_t* out, size_t n) {
          if (last != nullptr) {
            std::memcpy(out, last, n);
          } else {
            std::memset(out, 0, n);
          }
        };
      }
      c.callbacks = bind_game(r->game);
      save_and_load_through_game(c, r);
      c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
        auto* self = static_cast<RecordingDriver*>(u);
        RecordedCall call{f, flags, {}, {}};
        call.inputs.assign(in->bytes, in->bytes + size_t(in->input_size) * in->player_count);
        call.status.assign(in->status, in->status + in->player_count);
        self->calls.push_back(std::move(call));
        self->game.advance_frame(f, *in, flags);
      };
      if (r->driver.init(c, 8, SaveMode::every_frame) != Result::ok) return ::testing::AssertionFailure() << "init";
      if (checkpoints > 0 && r->driver.enable_checkpoints(checkpoints) != Result::ok)
        return ::testing::AssertionFailure() << "checkpoints";
      for (uint32_t p = 0; p < players; ++p) r->driver.set_local(PlayerIndex(p), p < locals);
      r->calls.reserve(4096);
    }
    if (by == GeneralBy::predictor) return ::testing::AssertionSuccess();
    never.user = &general;
    never.queued = &general.queued;
    never.for_frame = [](void*, Frame, const Decision**) -> uint32_t { return 0; };
    general.driver.set_decision_source(never);
    return ::testing::AssertionSuccess();
  }
  // Both take `player` back two frames behind (never at or before the confirmed frame), with
  // the same result; on success its next input is for that frame.
  void rejoin_alike(PlayerIndex player, Frame& next, uint64_t& rejoins) {
    const Frame at = std::max(usual.driver.confirmed_frame() + 1, usual.driver.frame() - 2);
    const Result a = usual.driver.rejoin_player(player, at);
    ASSERT_EQ(a, general.driver.rejoin_player(player, at));
    if (a == Result::ok) {
      next = at;
      ++rejoins;
    }
  }
  // Both advance: the same result and the same calls (`check` sees the usual one's before
  // they are cleared).
  template <class Check>
  ::testing::AssertionResult advance_alike(int tick, Check&& check) {
    const Result a = usual.driver.advance(), b = general.driver.advance();
    if (a != b) return ::testing::AssertionFailure() << "tick " << tick << ": results differ";
    if (usual.calls != general.calls) return ::testing::AssertionFailure() << "tick " << tick << ": calls differ";
    check(usual.calls);
    usual.calls.clear();
    general.calls.clear();
    return ::testing::AssertionSuccess();
  }
  void expect_same_counts() const {
    EXPECT_EQ(usual.driver.stats().rollbacks, general.driver.stats().rollbacks);
    EXPECT_EQ(usual.driver.stats().frames_resimulated, general.driver.stats().frames_resimulated);
    EXPECT_EQ(usual.game.hash(), general.game.hash());
  }
};

// Every player's inputs, frame by frame: each frame a new random input one time in `one_in`,
// else the one before.
class InputHistory {
 public:
  InputHistory(uint32_t players, uint32_t size, uint32_t one_in, std::mt19937& rng)
      : history_(players), size_(size), one_in_(one_in), rng_(rng) {}
  const uint8_t* of(uint32_t p, Frame f) {
    std::vector<uint8_t>& h = history_[p];
    while (h.size() < size_t(f + 1) * size_) {
      const bool change = rng_() % one_in_ == 0 || h.empty();
      for (uint32_t b = 0; b < size_; ++b) h.push_back(change ? uint8_t(rng_()) : h[h.size() - size_]);
    }
    return h.data() + size_t(f) * size_;
  }

 private:
  std::vector<std::vector<uint8_t>> history_;
  uint32_t size_, one_in_;
  std::mt19937& rng_;
};

// The usual rollback (carry-forward prediction, nothing queued, every frame saved, nobody
// absent) re-runs its frames with the other players' predictions written before the loop and
// their statuses written only where one changes (resimulate_usual); the general re-run walks
// the others every frame. Two drivers, one each way (UsualAndGeneral), play the same matches
// (2..8 players, one or two local, inputs of 1, 2, 4, 8 and 3 bytes (no fast copy) that change
// now and then, remote inputs arriving in runs of random length and lateness, so the frames
// re-run mix confirmed and predicted players): every call the game gets (frame, flags, inputs,
// statuses) and every count must be the same.
TEST(RollbackDriver, UsualRollbackHandsTheGameWhatTheGeneralReRunDoes) {
  std::mt19937 rng(29);
  uint64_t mixed = 0, resimulated = 0;
  for (int match = 0; match < 48; ++match) {
    const uint32_t players = 2 + uint32_t(match) % 7;
    const uint32_t locals = 1 + uint32_t(match / 7) % 2;
    const uint32_t size = std::array<uint32_t, 5>{1, 2, 4, 8, 3}[size_t(match) % 5];
    SCOPED_TRACE(testing::Message() << "players " << players << " local " << locals << " size " << size);
    UsualAndGeneral pair;
    ASSERT_TRUE(pair.init(players, size, locals));
    InputHistory inputs(players, size, 4, rng);
    std::vector<Frame> next(players, 0);
    for (int tick = 0; tick < 160; ++tick) {
      const Frame now = pair.usual.driver.frame();
      ASSERT_EQ(now, pair.general.driver.frame());
      for (uint32_t p = 0; p < locals; ++p)
        for (RecordingDriver* r : {&pair.usual, &pair.general}) {
          const Result a = r->driver.add_local_input(PlayerIndex(p), inputs.of(p, now), size);
          ASSERT_TRUE(a == Result::ok || a == Result::input_already_added);
        }
      for (uint32_t p = locals; p < players; ++p) {
        // A run of 0..4 frames, never past the frame about to run (the window takes the rest).
        const Frame last = std::min<Frame>(now, next[p] + Frame(rng() % 5));
        for (; next[p] < last; ++next[p]) {
          const Result a = pair.usual.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p]));
          const Result b = pair.general.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p]));
          ASSERT_EQ(a, b);
          if (a != Result::ok) break;
        }
      }
      ASSERT_TRUE(pair.advance_alike(tick, [&](const std::vector<RecordedCall>& calls) {
        for (const RecordedCall& call : calls) {
          if (!(call.flags & kAdvanceResimulating)) continue;
          ++resimulated;
          const bool confirmed = std::count(call.status.begin() + locals, call.status.end(), InputStatus::confirmed) > 0;
          const bool predicted = std::count(call.status.begin() + locals, call.status.end(), InputStatus::predicted) > 0;
          mixed += confirmed && predicted;
        }
      }));
    }
    pair.expect_same_counts();
    if (players > 2) {
      EXPECT_GT(pair.usual.driver.stats().rollbacks, 10u);
    }
  }
  EXPECT_GT(resimulated, 5000u);
  EXPECT_GT(mixed, 500u) << "re-run frames where some others are confirmed and some predicted";
}

// The usual rollback leaves the predictions of a player with no input confirmed since they were
// written (InputQueue::carried()): remote players here go quiet for a few ticks at random (so
// several rollbacks pass while their predictions stand), one is cut and later rejoins (its
// queue restarts: its predictions must be written again). Every call the game receives is
// compared with the general re-run's (UsualAndGeneral).
TEST(RollbackDriver, UsualRollbackKeepsStandingPredictionsAsTheGeneralReRunWritesThem) {
  std::mt19937 rng(31);
  uint64_t rollbacks = 0, rejoins = 0;
  for (int match = 0; match < 42; ++match) {
    const uint32_t players = 3 + uint32_t(match) % 6;
    const uint32_t size = std::array<uint32_t, 5>{1, 2, 4, 8, 3}[size_t(match) % 5];
    SCOPED_TRACE(testing::Message() << "players " << players << " size " << size);
    UsualAndGeneral pair;
    ASSERT_TRUE(pair.init(players, size, 1));
    RecordingDriver& usual = pair.usual;
    RecordingDriver& general = pair.general;
    InputHistory inputs(players, size, 3, rng);
    std::vector<Frame> next(players, 0);
    std::vector<int> quiet(players, 0);
    const uint32_t cut = players - 1;  // cut at tick 60, back from tick 100 on
    for (int tick = 0; tick < 200; ++tick) {
      const Frame now = usual.driver.frame();
      ASSERT_EQ(now, general.driver.frame());
      for (RecordingDriver* r : {&usual, &general}) {
        const Result a = r->driver.add_local_input(0, inputs.of(0, now), size);
        ASSERT_TRUE(a == Result::ok || a == Result::input_already_added);
      }
      if (tick == 60) {
        const Frame after = next[cut] - 1;
        ASSERT_EQ(usual.driver.disconnect_player(PlayerIndex(cut), after), general.driver.disconnect_player(PlayerIndex(cut), after));
      }
      if (tick == 100) {
        ASSERT_NO_FATAL_FAILURE(pair.rejoin_alike(PlayerIndex(cut), next[cut], rejoins));
      }
      for (uint32_t p = 1; p < players; ++p) {
        if (p == cut && tick >= 60 && tick < 100) continue;
        if (quiet[p] > 0) {
          --quiet[p];
          continue;
        }
        if (rng() % 6 == 0) quiet[p] = 1 + int(rng() % 4);
        const Frame last = std::min<Frame>(now, next[p] + Frame(rng() % 5));
        for (; next[p] < last; ++next[p]) {
          const Result a = usual.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p]));
          ASSERT_EQ(a, general.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p])));
          if (a != Result::ok) break;
        }
      }
      ASSERT_TRUE(pair.advance_alike(tick, [](const std::vector<RecordedCall>&) {}));
    }
    pair.expect_same_counts();
    rollbacks += usual.driver.stats().rollbacks;
  }
  EXPECT_GT(rollbacks, 1500u);
  EXPECT_GT(rejoins, 30u);
}

// advance()'s usual frame (every frame saved, the carry-forward prediction: the save, then
// step_live, whose predict_live writes the others' statuses and predictions, a pad's 4 bytes
// with the size a constant) against the general frame (advance_other and step_frame, with the
// game's predictor doing the carry-forward: GeneralBy::predictor), in matches of 2..8 players,
// one to three local, inputs of 4, 1, 2, 8 and 3 bytes, with checkpoints or without. Remote
// inputs arrive in runs of random lateness, some ahead of the live frame, and go quiet for a
// while; the window in use is lowered and raised (frames refused); a local input goes missing
// now and then; one remote player is cut (the cut agreed at once or later) and rejoins (its
// gap's frames step absent). Every result, every call the game gets and every count must be the
// same.
TEST(RollbackDriver, UsualFramesHandTheGameWhatTheGeneralFramesDo) {
  std::mt19937 rng(37);
  uint64_t predicted = 0, confirmed = 0, stalls = 0, absent = 0, missing = 0, rejoins = 0;
  for (int match = 0; match < 60; ++match) {
    const uint32_t players = 2 + uint32_t(match) % 7;
    const uint32_t locals = 1 + uint32_t(match / 7) % std::min<uint32_t>(3, players - 1);
    const uint32_t size = std::array<uint32_t, 5>{4, 1, 2, 8, 3}[size_t(match) % 5];
    SCOPED_TRACE(testing::Message() << "players " << players << " local " << locals << " size " << size);
    UsualAndGeneral pair;
    ASSERT_TRUE(pair.init(players, size, locals, GeneralBy::predictor, match % 2 ? 24 : 0));
    RecordingDriver& usual = pair.usual;
    RecordingDriver& general = pair.general;
    InputHistory inputs(players, size, 3, rng);
    std::vector<Frame> next(players, 0);
    std::vector<int> quiet(players, 0);
    const uint32_t cut = players - 1;  // remote: cut at tick 60, back from tick 100 on
    const bool agreed_late = match % 3 == 0;
    for (int tick = 0; tick < 180; ++tick) {
      const Frame now = usual.driver.frame();
      ASSERT_EQ(now, general.driver.frame());
      if (rng() % 25 == 0) {
        const int32_t window = int32_t(rng() % 9);
        for (RecordingDriver* r : {&usual, &general}) ASSERT_EQ(r->driver.set_prediction_window(window), Result::ok);
      }
      for (uint32_t p = 0; p < locals; ++p) {
        if (rng() % 20 == 0) continue;  // missing this tick (unless given before a refusal)
        for (RecordingDriver* r : {&usual, &general}) {
          const Result a = r->driver.add_local_input(PlayerIndex(p), inputs.of(p, now), size);
          ASSERT_TRUE(a == Result::ok || a == Result::input_already_added);
        }
      }
      if (tick == 60) {
        const Frame after = next[cut] - 1;
        for (RecordingDriver* r : {&usual, &general})
          ASSERT_EQ(r->driver.disconnect_player(PlayerIndex(cut), after, !agreed_late), Result::ok);
      }
      if (tick == 70 && agreed_late) {
        for (RecordingDriver* r : {&usual, &general}) r->driver.agree_disconnect(PlayerIndex(cut));
      }
      if (tick == 100) {
        ASSERT_NO_FATAL_FAILURE(pair.rejoin_alike(PlayerIndex(cut), next[cut], rejoins));
      }
      for (uint32_t p = locals; p < players; ++p) {
        if (p == cut && tick >= 60 && tick < 100) continue;
        if (quiet[p] > 0) {
          --quiet[p];
          continue;
        }
        if (rng() % 8 == 0) quiet[p] = 1 + int(rng() % 5);
        // A run of 0..5 frames, up to two frames ahead of the one about to run.
        const Frame last = std::min<Frame>(now + 2, next[p] + Frame(rng() % 6));
        for (; next[p] < last; ++next[p]) {
          const Result a = usual.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p]));
          ASSERT_EQ(a, general.driver.add_remote_input(PlayerIndex(p), next[p], inputs.of(p, next[p])));
          if (a != Result::ok) break;
        }
      }
      const Result a = usual.driver.advance(), b = general.driver.advance();
      ASSERT_EQ(a, b) << "tick " << tick;
      stalls += a == Result::prediction_limit;
      missing += a == Result::missing_local_input;
      ASSERT_TRUE(usual.calls == general.calls) << "tick " << tick;
      for (const RecordedCall& call : usual.calls) {
        if (call.flags & kAdvanceResimulating) continue;
        predicted += std::count(call.status.begin(), call.status.end(), InputStatus::predicted) > 0;
        confirmed += std::count(call.status.begin() + locals, call.status.end(), InputStatus::confirmed) > 0;
        absent += std::count(call.status.begin(), call.status.end(), InputStatus::disconnected) > 0;
      }
      usual.calls.clear();
      general.calls.clear();
    }
    pair.expect_same_counts();
  }
  EXPECT_GT(predicted, 3000u) << "live frames predicting someone";
  EXPECT_GT(confirmed, 1000u) << "live frames with another player's input known";
  EXPECT_GT(stalls, 200u);
  EXPECT_GT(absent, 500u) << "live frames with the cut player absent";
  EXPECT_GT(missing, 100u);
  EXPECT_GT(rejoins, 40u);
}

// window_full() and confirmed_frame() as compute_horizons would answer from scratch (the first
// unknown remote input and the lowest newest input, a cut that may still move counting as its
// frame, a settled one not at all; against the window in use, and the frame simulated),
// whatever the driver kept and whichever way it worked them out (two players without a cut:
// pair_horizons; more, without a cut: the walks over the kept local and remote lists; a cut:
// the full walk): random drivers (2..5 players, one or two local) take random calls (local and
// remote inputs, one by one or in runs, lowered and raised windows, cuts agreed at once or
// later, rejoins, advances), and after random ones of them both are asked and compared, as is
// every advance's refusal.
Frame confirmed_frame_from_scratch(const detail::RollbackDriver& d) {
  int64_t lowest = INT32_MAX;
  for (uint32_t i = 0; i < d.num_players(); ++i) {
    const PlayerIndex p = PlayerIndex(i);
    Frame after = kNullFrame;
    const Frame last = d.last_confirmed(p);
    if (d.is_disconnected(p, &after) && last >= after) {
      if (!d.cut_agreed(p)) lowest = std::min<int64_t>(lowest, after);
      continue;
    }
    lowest = std::min<int64_t>(lowest, last);
  }
  return Frame(std::min<int64_t>(lowest, int64_t(d.frame()) - 1));
}

bool window_full_from_scratch(const detail::RollbackDriver& d) {
  int64_t unknown = INT32_MAX;
  for (uint32_t i = 0; i < d.num_players(); ++i) {
    const PlayerIndex p = PlayerIndex(i);
    if (d.is_local(p)) continue;
    Frame after = kNullFrame;
    const Frame last = d.last_confirmed(p);
    if (d.is_disconnected(p, &after) && last >= after) {
      if (!d.cut_agreed(p)) unknown = std::min<int64_t>(unknown, int64_t(after) + 1);
      continue;
    }
    unknown = std::min<int64_t>(unknown, int64_t(last) + 1);
  }
  return unknown <= int64_t(d.frame()) - d.prediction_window();
}

TEST(RollbackDriver, HorizonsAreTheFromScratchAnswersAfterAnyCalls) {
  std::mt19937 rng(41);
  uint64_t full = 0, room = 0, refused = 0, confirmed = 0;
  for (int run = 0; run < 300; ++run) {
    const uint32_t players = 2 + uint32_t(run) % 4;
    const uint32_t locals = 1 + uint32_t(run / 4) % 2;
    DriverHarness h;
    ASSERT_EQ(h.init(players, locals, 1, 8), Result::ok);
    detail::RollbackDriver& d = h.driver;
    std::vector<Frame> next(players, 0);
    for (int step = 0; step < 120; ++step) {
      const uint32_t p = uint32_t(rng() % players);
      const PlayerIndex player = PlayerIndex(p);
      const uint8_t v = uint8_t(rng() % 3);
      switch (rng() % 10) {
        case 0:
          ASSERT_EQ(d.set_prediction_window(int32_t(rng() % 9)), Result::ok);
          break;
        case 1:
          if (!d.is_local(player) && rng() % 4 == 0) {
            const Frame after = std::max<Frame>(d.last_confirmed(player) - Frame(rng() % 3), d.confirmed_frame());
            (void)d.disconnect_player(player, after, rng() % 2 == 0);
          } else if (d.is_disconnected(player) && !d.cut_agreed(player)) {
            d.agree_disconnect(player);
          } else if (d.is_disconnected(player) && rng() % 2 == 0) {
            const Frame at = std::max(d.confirmed_frame() + 1, d.frame() - Frame(rng() % 3));
            if (d.rejoin_player(player, at) == Result::ok) next[p] = at;
          } else if (d.is_local(player) && !d.is_disconnected(player) && rng() % 8 == 0) {
            // The rejoining machine's own player: its inputs restart at `at`, maybe before the
            // frame simulated (until its next input it holds the confirmed frame back).
            (void)d.rejoin_player(player, std::max(d.confirmed_frame() + 1, d.frame() - Frame(rng() % 3)));
          }
          break;
        case 2: case 3: case 4: {
          if (d.is_local(player)) break;
          std::vector<uint8_t> run_inputs(1 + rng() % 4, v);
          const Frame frame = next[p];
          if (rng() % 2 == 0 &&
              d.accept_remote_run(player, frame, run_inputs.data(), 1, uint32_t(run_inputs.size())) != 0) {
            next[p] += Frame(run_inputs.size());
            break;
          }
          for (uint8_t& x : run_inputs) {
            if (d.add_remote_input(player, next[p], &x) != Result::ok) break;
            next[p] = d.last_confirmed(player) + 1;
          }
          break;
        }
        default: {
          for (uint32_t l = 0; l < locals; ++l) (void)d.add_local_input(PlayerIndex(l), &v, 1);
          const bool expect_full = window_full_from_scratch(d);
          const Result r = d.advance();
          // (missing: a local player rejoined this frame, its input of the frame not given again)
          ASSERT_TRUE(r == Result::ok || r == Result::prediction_limit || r == Result::missing_local_input) << step;
          if (r != Result::missing_local_input) {
            ASSERT_EQ(r == Result::prediction_limit, expect_full) << "run " << run << " step " << step;
          }
          refused += r == Result::prediction_limit;
          break;
        }
      }
      if (rng() % 3 == 0) {
        const bool expect = window_full_from_scratch(d);
        ASSERT_EQ(d.window_full(), expect) << "run " << run << " step " << step;
        (expect ? full : room) += 1;
      }
      if (rng() % 3 == 0) {
        ASSERT_EQ(d.confirmed_frame(), confirmed_frame_from_scratch(d)) << "run " << run << " step " << step;
        ++confirmed;
      }
    }
  }
  EXPECT_GT(full, 500u);
  EXPECT_GT(room, 2000u);
  EXPECT_GT(refused, 500u);
  EXPECT_GT(confirmed, 2500u);
}

// add_local_input's usual input (InputQueue::add_ahead_small: no comparison with a prediction,
// the frame has not run) is stored as the general path stores it, the last input included: a
// local player taken over as remote (set_local) is predicted from the input it gave last. For
// each small size, player 0 gives inputs with a delay of three (its first input takes the
// general path, the rest the usual one), then turns remote: frames after its newest input
// must carry that input forward, predicted.
TEST(RollbackDriver, ALocalInputTakenAheadIsTheOneItsPredictionsCarry) {
  for (uint32_t size : {1u, 2u, 4u, 8u}) {
    SCOPED_TRACE(size);
    struct Recording {
      TestGame game;
      std::vector<std::pair<uint64_t, InputStatus>> seen;  // player 0's input and status per frame
      void record(Frame, const FrameInputs& in) {
        uint64_t v = 0;
        std::memcpy(&v, in.player(0), in.input_size);
        seen.emplace_back(v, in.status[0]);
      }
    } r;
    detail::RollbackDriver d;
    ASSERT_EQ(d.init(recording_config(r, 2, size), 8, SaveMode::every_frame), Result::ok);
    d.set_local(0, true);
    d.set_local(1, true);
    ASSERT_EQ(d.set_input_delay(0, 3), Result::ok);
    auto input = [](Frame f) { return 0x1111111111111111u * uint64_t(f + 1); };
    for (Frame f = 0; f < 5; ++f) {  // player 0's inputs of frames 3..7
      const uint64_t v0 = input(f + 3), v1 = 0;
      ASSERT_EQ(d.add_local_input(0, &v0, size), Result::ok);
      ASSERT_EQ(d.add_local_input(1, &v1, size), Result::ok);
      ASSERT_EQ(d.advance(), Result::ok);
    }
    d.set_local(0, false);
    for (Frame f = 5; f < 10; ++f) {
      const uint64_t v1 = 0;
      ASSERT_EQ(d.add_local_input(1, &v1, size), Result::ok);
      ASSERT_EQ(d.advance(), Result::ok);
    }
    ASSERT_EQ(r.seen.size(), 10u);
    const uint64_t mask = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
    for (Frame f = 3; f < 8; ++f) EXPECT_EQ(r.seen[size_t(f)].first, input(f) & mask) << f;
    for (Frame f = 8; f < 10; ++f) {
      EXPECT_EQ(r.seen[size_t(f)].first, input(7) & mask) << f;
      EXPECT_EQ(r.seen[size_t(f)].second, InputStatus::predicted) << f;
    }
  }
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// take_remote_run near the largest frame. Its exact horizons for two players (one local) add
// the window to the run's last frame without a saturating sum, which holds because
// fits_window_exactly keeps fits_below_ a window short of the largest frame (frames above take
// the frame-by-frame path). Two drivers from a state just below the top, one fed runs by
// take_remote_run (frame by frame where it refuses), the other frame by frame: the same
// confirmed frame, window, first wrong frame and game state all the way up, and runs refused
// near the top (the cap left out fails it: the window's sum wraps and the frames stall).
TEST(RollbackDriver, RemoteRunsNearTheLargestFrameAreTakenAsFrameByFrame) {
  constexpr Frame kTop = std::numeric_limits<Frame>::max();
  const Frame start = kTop - 300;
  DriverHarness runs, single;
  std::vector<uint8_t> state(256);
  for (DriverHarness* h : {&runs, &single}) {
    ASSERT_EQ(h->init(2, 1, 4, 8), Result::ok);
    h->game.state.frame = start;
    const size_t size = h->game.save_state(start, state.data(), state.size());
    ASSERT_EQ(h->driver.start_from(start, state.data(), size), Result::ok);
  }
  std::mt19937 rng(77);
  std::vector<uint8_t> inputs(16 * 4);
  Frame next = start;  // the remote player's next frame
  uint32_t taken = 0, refused = 0;
  bool added = false;
  for (int tick = 0; runs.driver.frame() < kTop - 3 && tick < 2000; ++tick) {
    const uint32_t local = uint32_t(tick) * 7;
    if (!added) {
      ASSERT_EQ(runs.driver.add_local_input(0, &local, 4), Result::ok);
      ASSERT_EQ(single.driver.add_local_input(0, &local, 4), Result::ok);
      added = true;
    }
    // A run of 0..4 frames, mostly behind the live frame (late: rollbacks), at times up to two
    // past it, never past kTop - 2.
    const Frame ahead = rng() % 4 == 0 ? 2 : -1;
    const Frame last = std::min<Frame>({next + Frame(rng() % 5) - 1, runs.driver.frame() + ahead, kTop - 2});
    if (last >= next) {
      for (uint8_t& b : inputs) b = rng() % 3 == 0 ? uint8_t(rng()) : b;
      if (runs.driver.take_remote_run(1, last, inputs.data(), 4)) {
        ++taken;
      } else {
        ++refused;
        drain_one_by_one(runs.driver, 1, next, inputs.data(), 4, uint32_t(last - next) + 1);
      }
      const uint32_t b = drain_one_by_one(single.driver, 1, next, inputs.data(), 4, uint32_t(last - next) + 1);
      ASSERT_EQ(runs.driver.last_confirmed(1), single.driver.last_confirmed(1)) << "tick " << tick;
      next += Frame(b);
    }
    ASSERT_EQ(runs.driver.confirmed_frame(), single.driver.confirmed_frame()) << "tick " << tick;
    ASSERT_EQ(runs.driver.window_full(), single.driver.window_full()) << "tick " << tick;
    ASSERT_EQ(runs.driver.first_incorrect(), single.driver.first_incorrect()) << "tick " << tick;
    const Result a = runs.driver.advance(), b = single.driver.advance();
    ASSERT_EQ(a, b) << "tick " << tick;
    if (a == Result::ok) added = false;
    ASSERT_EQ(runs.game.state.chain, single.game.state.chain) << "tick " << tick;
  }
  EXPECT_GE(runs.driver.frame(), kTop - 3);
  EXPECT_EQ(runs.game.frame_errors, 0);
  EXPECT_GT(runs.driver.stats().rollbacks, 20u);
  EXPECT_GT(taken, 50u);
  EXPECT_GT(refused, 10u) << "runs reaching fits_below_'s cap";
}

}  // namespace
}  // namespace retcon::test
