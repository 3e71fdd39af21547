// Fighter: moves, hits, damage, knockback, hitstun, blocking.
#include <gtest/gtest.h>

#include "fighter_moves.h"
#include "test_inputs.h"

namespace fighter::test {
namespace {

// Two fighters on the ground, `gap` pixels apart, p0 on the left facing right.
FighterState face_off(int32_t gap_px) {
  FighterState s;
  fighter_init(s, 2, 1);
  skip_intro(s);
  s.p[0].x = px(300);
  s.p[1].x = px(300 + gap_px);
  s.p[0].facing = 1;
  s.p[1].facing = -1;
  return s;
}

// Presses `button` for p0 on one frame, then idles until p1's health changes (or max frames).
// Returns the number of frames run, including the press.
int attack_until_contact(FighterState& s, uint16_t button, uint16_t p1_held = 0, int max = 40) {
  const int32_t health = s.p[1].health;
  step(s, {button, p1_held});
  int frames = 1;
  while (s.p[1].health == health && frames < max &&
         !(s.p[1].move == kMoveBlockstun)) {
    step(s, {0, p1_held});
    ++frames;
  }
  return frames;
}

TEST(Rules, LightAttackHitsAfterStartupWithDamageKnockbackAndHitstun) {
  FighterState s = face_off(60);
  const MoveData& light = move_data(kMoveLight);
  FighterEffects fx;
  step(s, {kInputLight, 0}, 0, &fx);
  EXPECT_EQ(s.p[0].move, kMoveLight);
  for (int i = 0; i < light.startup - 1; ++i) step(s, {0, 0}, 0, &fx);
  EXPECT_EQ(s.p[1].health, kMaxHealth) << "no hit during startup";
  fx.clear();
  step(s, {0, 0}, 0, &fx);  // first active frame
  EXPECT_EQ(s.p[1].health, kMaxHealth - light.damage);
  EXPECT_EQ(s.p[1].move, kMoveHitstun);
  EXPECT_EQ(s.p[1].stun, light.hitstun);
  EXPECT_EQ(s.p[1].vx, light.knockback_x) << "pushed away from the attacker (right)";
  EXPECT_EQ(s.p[0].damage_dealt, light.damage);
  bool saw_hit = false;
  for (int i = 0; i < fx.count; ++i) saw_hit |= fx.items[i].type == kEffectHit;
  EXPECT_TRUE(saw_hit);

  // Hitstun lasts exactly `hitstun` frames; knockback moves p1 away meanwhile.
  const int32_t x_at_hit = s.p[1].x;
  for (int i = 0; i < light.hitstun - 1; ++i) {
    step(s, {0, 0});
    ASSERT_EQ(s.p[1].move, kMoveHitstun) << i;
  }
  step(s, {0, 0});
  EXPECT_NE(s.p[1].move, kMoveHitstun);
  EXPECT_GT(s.p[1].x, x_at_hit);
  // One hit per attack, however many active frames overlap.
  EXPECT_EQ(s.p[1].health, kMaxHealth - light.damage);
}

TEST(Rules, AttackMoveRunsStartupActiveRecoveryThenIdle) {
  FighterState s = face_off(300);  // out of range
  const MoveData& heavy = move_data(kMoveHeavy);
  step(s, {kInputHeavy, 0});
  for (int f = 1; f < move_total_frames(heavy); ++f) {
    step(s, {0, 0});
    ASSERT_EQ(s.p[0].move, kMoveHeavy) << f;
    Box b;
    EXPECT_EQ(hitbox(s.p[0], &b), f >= heavy.startup && f < heavy.startup + heavy.active) << f;
  }
  step(s, {0, 0});
  EXPECT_EQ(s.p[0].move, kMoveIdle);
  EXPECT_EQ(s.p[1].health, kMaxHealth);
}

TEST(Rules, HeavyAttackLaunches) {
  FighterState s = face_off(60);
  const MoveData& heavy = move_data(kMoveHeavy);
  EXPECT_EQ(attack_until_contact(s, kInputHeavy), heavy.startup + 1);
  EXPECT_EQ(s.p[1].health, kMaxHealth - heavy.damage);
  EXPECT_GT(s.p[1].vy, 0);
  step(s, {0, 0});
  EXPECT_GT(s.p[1].y, 0) << "in the air";
}

TEST(Rules, BlockTakesChipAndBlockstunOnly) {
  FighterState s = face_off(60);
  const MoveData& heavy = move_data(kMoveHeavy);
  step(s, {0, kInputBlock});
  step(s, {0, kInputBlock});
  step(s, {0, kInputBlock});
  ASSERT_EQ(s.p[1].move, kMoveBlock);
  attack_until_contact(s, kInputHeavy, kInputBlock);
  EXPECT_EQ(s.p[1].move, kMoveBlockstun);
  EXPECT_EQ(s.p[1].health, kMaxHealth - heavy.chip);
  EXPECT_EQ(s.p[1].stun, heavy.blockstun);
  EXPECT_EQ(s.p[1].y, 0) << "no launch on block";
}

TEST(Rules, BlockDoesNotCoverTheBack) {
  FighterState s = face_off(60);
  for (int i = 0; i < 3; ++i) step(s, {0, kInputBlock});
  s.p[1].facing = 1;  // guarding the wrong side
  attack_until_contact(s, kInputLight, kInputBlock);
  EXPECT_EQ(s.p[1].move, kMoveHitstun);
  EXPECT_EQ(s.p[1].health, kMaxHealth - move_data(kMoveLight).damage);
}

TEST(Rules, CrouchDucksUnderTheLightAttack) {
  FighterState s = face_off(60);
  step(s, {0, kInputDown});
  ASSERT_EQ(s.p[1].move, kMoveCrouch);
  for (int i = 0; i < move_total_frames(move_data(kMoveLight)) + 2; ++i) {
    step(s, {static_cast<uint16_t>(i == 0 ? kInputLight : 0), kInputDown});
  }
  EXPECT_EQ(s.p[1].health, kMaxHealth);
}

TEST(Rules, SimultaneousAttacksTrade) {
  FighterState s = face_off(60);
  for (int i = 0; i < 10; ++i) {
    step(s, {static_cast<uint16_t>(i == 0 ? kInputLight : 0),
             static_cast<uint16_t>(i == 0 ? kInputLight : 0)});
  }
  EXPECT_EQ(s.p[0].health, kMaxHealth - move_data(kMoveLight).damage);
  EXPECT_EQ(s.p[1].health, kMaxHealth - move_data(kMoveLight).damage);
}

TEST(Rules, JumpHasSquatAirborneAndLanding) {
  FighterState s = face_off(300);
  const MoveData& jump = move_data(kMoveJump);
  step(s, {kInputUp | kInputRight, 0});
  for (int i = 0; i < jump.startup - 1; ++i) {
    step(s, {kInputUp | kInputRight, 0});
    ASSERT_EQ(s.p[0].y, 0) << "still squatting";
  }
  step(s, {kInputRight, 0});
  EXPECT_GT(s.p[0].y, 0);
  EXPECT_GT(s.p[0].vx, 0);
  int frames = 0;
  while (s.p[0].y > 0 && frames < 200) {
    step(s, {0, 0});
    ++frames;
  }
  EXPECT_GT(frames, 20);
  EXPECT_EQ(s.p[0].move, kMoveLanding);
  for (int i = 0; i < jump.recovery; ++i) step(s, {0, 0});
  EXPECT_EQ(s.p[0].move, kMoveIdle);
}

TEST(Rules, WalkingAndWalls) {
  FighterState s = face_off(300);
  const int32_t x = s.p[0].x;
  step(s, {kInputRight, 0});
  EXPECT_EQ(s.p[0].x, x + kWalkForward);
  for (int i = 0; i < 400; ++i) step(s, {kInputLeft, 0});
  EXPECT_EQ(s.p[0].x, kWallLeft);
}

TEST(Rules, BodiesDoNotOverlap) {
  FighterState s = face_off(100);
  for (int i = 0; i < 60; ++i) step(s, {kInputRight, kInputLeft});
  EXPECT_GE(s.p[1].x - s.p[0].x, 2 * kBodyHalfWidth);
}

TEST(Rules, AttackPressedDuringRecoveryIsBufferedBriefly) {
  FighterState s = face_off(300);
  const MoveData& light = move_data(kMoveLight);
  step(s, {kInputLight, 0});
  for (int i = 1; i < move_total_frames(light) - 2; ++i) step(s, {0, 0});
  step(s, {kInputLight, 0});  // two frames before the end
  step(s, {0, 0});
  step(s, {0, 0});
  EXPECT_EQ(s.p[0].move, kMoveLight);
  EXPECT_EQ(s.p[0].move_frame, 0) << "second jab started the frame the first ended";
}

}  // namespace
}  // namespace fighter::test
