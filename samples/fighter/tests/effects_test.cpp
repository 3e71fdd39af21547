// Fighter: effects are produced on normal frames and muted during re-simulation, without the
// state noticing the difference.
#include <gtest/gtest.h>

#include "frame_source.h"
#include "test_inputs.h"

namespace fighter::test {
namespace {

TEST(Effects, MutedWhenResimulatingButStateIsIdentical) {
  const Recording rec = record_bots(2, 3, 11, 3000);
  FighterGame loud(2, 3);
  FighterGame muted(2, 3);
  for (size_t f = 0; f < rec.inputs.size(); ++f) {
    loud.advance_frame(loud.state().frame, rec.inputs[f].frame(), retcon::kAdvanceNone);
    muted.advance_frame(muted.state().frame, rec.inputs[f].frame(), retcon::kAdvanceResimulating);
    ASSERT_EQ(fighter_checksum(loud.state()), fighter_checksum(muted.state())) << f;
    ASSERT_EQ(muted.last_effects().count, 0) << f;
  }
  EXPECT_GT(loud.counters().effects_played, 0u);
  EXPECT_GT(loud.counters().effects_by_type[kEffectHit], 0u);
  EXPECT_EQ(loud.counters().frames_advanced, rec.inputs.size());
  EXPECT_EQ(muted.counters().effects_played, 0u);
  EXPECT_EQ(muted.counters().frames_resimulated, rec.inputs.size());
  EXPECT_EQ(muted.counters().frames_advanced, 0u);
}

TEST(Effects, StepLeavesTheEffectListAloneWhenResimulating) {
  FighterState s;
  fighter_init(s, 2, 1);
  FighterEffects fx;
  for (int i = 0; i < kIntroFrames + 5; ++i) {
    step(s, {kInputUp, 0}, retcon::kAdvanceResimulating, &fx);
  }
  EXPECT_EQ(fx.count, 0);
  FighterState t;
  fighter_init(t, 2, 1);
  FighterEffects heard;
  for (int i = 0; i < kIntroFrames + 5; ++i) step(t, {kInputUp, 0}, 0, &heard);
  EXPECT_GE(heard.count, 2);  // round start, jump
  EXPECT_EQ(heard.items[0].type, kEffectRoundStart);
}

TEST(Effects, LocalRollbackSelfTestIsConsistentAndPlaysEachEffectOnce) {
  LocalFrameSource plain(2, 8, 0);
  LocalFrameSource rolling(2, 8, 7);
  FighterBot bots[2] = {FighterBot(1, 0), FighterBot(2, 1)};
  FighterBot bots2[2] = {FighterBot(1, 0), FighterBot(2, 1)};
  for (int f = 0; f < 2500; ++f) {
    for (int p = 0; p < 2; ++p) {
      plain.set_local_input(p, bots[p].next_input(plain.state()));
      rolling.set_local_input(p, bots2[p].next_input(rolling.state()));
    }
    plain.tick();
    rolling.tick();
    ASSERT_EQ(fighter_checksum(plain.state()), fighter_checksum(rolling.state())) << f;
  }
  EXPECT_EQ(rolling.mismatches(), 0u);
  EXPECT_GT(rolling.overlay().rollbacks, 0u);
  EXPECT_GT(rolling.game().counters().frames_resimulated, 0u);
  // Re-simulated frames played nothing: both heard exactly the same effects.
  EXPECT_EQ(plain.game().counters().effects_played, rolling.game().counters().effects_played);
  EXPECT_EQ(plain.overlay().rollbacks, 0u);
}

}  // namespace
}  // namespace fighter::test
