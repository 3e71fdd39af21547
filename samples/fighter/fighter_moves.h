// Fighter: frame data of every move and the boxes a fighter occupies and threatens.
#pragma once

#include <cstdint>

#include "fighter_state.h"

namespace fighter {

// Physics constants, fixed point (kFixOne per pixel).
inline constexpr int32_t kBodyHalfWidth = px(18);
inline constexpr int32_t kStandHeight = px(96);
inline constexpr int32_t kCrouchHeight = px(56);
inline constexpr int32_t kWalkForward = 3 * kFixOne;
inline constexpr int32_t kWalkBack = 5 * kFixOne / 2;
inline constexpr int32_t kJumpVx = 3 * kFixOne;
inline constexpr int32_t kJumpVy = 13 * kFixOne;
inline constexpr int32_t kGravity = 160;
inline constexpr int32_t kFriction = 96;
inline constexpr int32_t kBufferFrames = 6;

// Axis-aligned box in world space, half-open: [x0, x1) x [y0, y1), y up.
struct Box {
  int32_t x0, y0, x1, y1;
};

inline bool boxes_overlap(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// Frame data. Attacks also carry a hitbox relative to the body centre, mirrored by facing.
struct MoveData {
  const char* name;
  int32_t startup;    // frames before the move does anything
  int32_t active;     // frames it hits (0: lasts while a condition holds, e.g. airborne)
  int32_t recovery;   // frames after, unable to act
  int32_t damage;     // on hit
  int32_t chip;       // on block
  int32_t hitstun;
  int32_t blockstun;
  int32_t knockback_x;  // fixed point per frame, away from the attacker
  int32_t knockback_y;  // launch speed; > 0 pops the victim into the air
  int32_t reach_x0, reach_x1;  // hitbox in front of the body centre
  int32_t reach_y0, reach_y1;  // hitbox height above the feet
};

const MoveData& move_data(int32_t move);

inline bool move_is_attack(int32_t move) { return move == kMoveLight || move == kMoveHeavy; }
inline int32_t move_total_frames(const MoveData& m) { return m.startup + m.active + m.recovery; }
inline bool move_in_active_frames(const FighterPlayer& p) {
  if (!move_is_attack(p.move)) return false;
  const MoveData& m = move_data(p.move);
  return p.move_frame >= m.startup && p.move_frame < m.startup + m.active;
}

// Where the fighter can be hit. Knocked-out fighters have none (returns false).
bool hurtbox(const FighterPlayer& p, Box* out);
// Where the fighter's attack hits this frame; false outside an attack's active frames.
bool hitbox(const FighterPlayer& p, Box* out);

}  // namespace fighter
