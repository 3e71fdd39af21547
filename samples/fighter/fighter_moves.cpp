// Fighter: the moves table. Startup/active/recovery in frames at 60 fps.
#include "fighter_moves.h"

namespace fighter {
namespace {

// name, startup, active, recovery, damage, chip, hitstun, blockstun, kb_x, kb_y, reach x0/x1/y0/y1
constexpr MoveData kMoves[kMoveCount] = {
    {"idle", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"walk", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"crouch", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Jump: 4 squat frames, airborne until landing, then kMoveLanding for `recovery` frames.
    {"jump", 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"landing", 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Light: a fast high jab; crouching fighters duck under it.
    {"light", 4, 3, 8, 50, 0, 14, 8, 3 * kFixOne, 0, px(10), px(58), px(60), px(84)},
    // Heavy: a slow mid kick that pops the victim up and pushes far.
    {"heavy", 10, 4, 18, 120, 12, 24, 14, 6 * kFixOne, 5 * kFixOne, px(12), px(74), px(28),
     px(70)},
    // Block: guard up after 2 frames, held while the button is, 6 frames to drop it.
    {"block", 2, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"block-release", 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"hitstun", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"blockstun", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"knocked-out", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

}  // namespace

const MoveData& move_data(int32_t move) {
  if (move < 0 || move >= kMoveCount) return kMoves[kMoveIdle];
  return kMoves[move];
}

const char* move_name(int32_t move) { return move_data(move).name; }

bool hurtbox(const FighterPlayer& p, Box* out) {
  if (p.move == kMoveKnockedOut) return false;
  const int32_t height = p.move == kMoveCrouch ? kCrouchHeight : kStandHeight;
  *out = Box{p.x - kBodyHalfWidth, p.y, p.x + kBodyHalfWidth, p.y + height};
  return true;
}

bool hitbox(const FighterPlayer& p, Box* out) {
  if (!move_in_active_frames(p)) return false;
  const MoveData& m = move_data(p.move);
  if (p.facing >= 0) {
    *out = Box{p.x + m.reach_x0, p.y + m.reach_y0, p.x + m.reach_x1, p.y + m.reach_y1};
  } else {
    *out = Box{p.x - m.reach_x1, p.y + m.reach_y0, p.x - m.reach_x0, p.y + m.reach_y1};
  }
  return true;
}

}  // namespace fighter
