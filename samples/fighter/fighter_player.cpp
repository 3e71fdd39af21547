// Fighter: one fighter's move state machine (startup / active / recovery) and movement.
#include "fighter_input.h"
#include "fighter_internal.h"
#include "fighter_moves.h"

namespace fighter::detail {
namespace {

void set_move(FighterPlayer& p, int32_t move) {
  if (p.move == move) return;  // walking on keeps counting frames
  p.move = move;
  p.move_frame = 0;
}

void start_move(FighterPlayer& p, int32_t move) {
  p.move = move;
  p.move_frame = 0;
  p.hit_mask = 0;
}

int32_t horizontal(uint32_t buttons) {
  const bool l = (buttons & kInputLeft) != 0;
  const bool r = (buttons & kInputRight) != 0;
  return l == r ? 0 : (r ? 1 : -1);
}

void face_opponent(FighterState& s, int i) {
  const int o = nearest_opponent(s, i);
  if (o < 0) return;
  FighterPlayer& p = s.p[i];
  if (s.p[o].x > p.x) p.facing = 1;
  if (s.p[o].x < p.x) p.facing = -1;
}

// A fighter free to act chooses its next move from the held buttons.
void neutral(FighterState& s, int i) {
  FighterPlayer& p = s.p[i];
  const bool grounded = on_ground(p);
  if (grounded) face_opponent(s, i);
  if (p.buffered_move != kMoveIdle) {
    start_move(p, p.buffered_move);
    p.buffered_move = kMoveIdle;
    p.buffer_frames = 0;
    return;
  }
  if (!grounded) {
    set_move(p, kMoveIdle);  // falling after an air attack
    return;
  }
  const uint32_t b = p.buttons;
  if (b & kInputBlock) return start_move(p, kMoveBlock);
  if (b & kInputUp) return start_move(p, kMoveJump);
  if (b & kInputDown) return set_move(p, kMoveCrouch);
  const int32_t dir = horizontal(b);
  if (dir != 0) {
    set_move(p, kMoveWalk);
    p.vx = dir * (dir == p.facing ? kWalkForward : kWalkBack);
    return;
  }
  set_move(p, kMoveIdle);
}

}  // namespace

int nearest_opponent(const FighterState& s, int i) {
  int best = -1;
  int32_t best_dist = 0;
  for (int o = 0; o < s.players; ++o) {
    if (o == i || !alive(s.p[o])) continue;
    const int32_t d = s.p[o].x > s.p[i].x ? s.p[o].x - s.p[i].x : s.p[i].x - s.p[o].x;
    if (best < 0 || d < best_dist) {
      best = o;
      best_dist = d;
    }
  }
  return best;
}

void control_player(FighterState& s, int i, const Emitter& fx) {
  FighterPlayer& p = s.p[i];
  const uint32_t pressed = p.buttons & ~p.prev_buttons;
  if (pressed & kInputHeavy) {
    p.buffered_move = kMoveHeavy;
    p.buffer_frames = kBufferFrames;
  } else if (pressed & kInputLight) {
    p.buffered_move = kMoveLight;
    p.buffer_frames = kBufferFrames;
  } else if (p.buffer_frames > 0 && --p.buffer_frames == 0) {
    p.buffered_move = kMoveIdle;
  }

  p.move_frame += 1;
  if (!alive(p)) {  // health can only reach 0 through a hit, but a loaded state may say so
    if (p.move != kMoveKnockedOut) start_move(p, kMoveKnockedOut);
    return;
  }
  const bool grounded = on_ground(p);
  switch (p.move) {
    case kMoveKnockedOut:
      return;
    case kMoveHitstun:
      if (p.stun > 0) --p.stun;
      if (p.stun > 0 || !grounded) return;
      p.combo = 0;
      break;
    case kMoveBlockstun:
      if (p.stun > 0) --p.stun;
      if (p.stun > 0) return;
      if (p.buttons & kInputBlock) {  // guard stays up
        start_move(p, kMoveBlock);
        p.move_frame = move_data(kMoveBlock).startup;
        return;
      }
      break;
    case kMoveLight:
    case kMoveHeavy: {
      const MoveData& m = move_data(p.move);
      if (p.move_frame == m.startup) fx.emit(kEffectSwing, i, -1, p.x, p.y, p.move);
      if (p.move_frame < move_total_frames(m)) return;
      break;
    }
    case kMoveJump: {
      const MoveData& m = move_data(kMoveJump);
      if (p.move_frame == m.startup) {
        p.vx = horizontal(p.buttons) * kJumpVx;
        p.vy = kJumpVy;
        fx.emit(kEffectJump, i, -1, p.x, p.y);
        return;
      }
      if (p.move_frame > m.startup && !grounded && p.buffered_move != kMoveIdle) break;
      return;
    }
    case kMoveLanding:
      if (p.move_frame < move_data(kMoveJump).recovery) return;
      break;
    case kMoveBlock:
      if (p.move_frame < move_data(kMoveBlock).startup || (p.buttons & kInputBlock)) return;
      start_move(p, kMoveBlockRelease);
      return;
    case kMoveBlockRelease:
      if (p.move_frame < move_data(kMoveBlock).recovery) return;
      break;
    default:
      break;
  }
  neutral(s, i);
}

void move_player(FighterPlayer& p, int i, const Emitter& fx) {
  const bool airborne = !on_ground(p);
  if (airborne) {
    p.vy -= kGravity;
  } else if (p.move == kMoveHitstun || p.move == kMoveBlockstun || p.move == kMoveKnockedOut) {
    // Knockback slides to a stop.
    if (p.vx > 0) p.vx = p.vx > kFriction ? p.vx - kFriction : 0;
    if (p.vx < 0) p.vx = p.vx < -kFriction ? p.vx + kFriction : 0;
  } else if (p.move != kMoveWalk) {
    p.vx = 0;
  }
  p.x += p.vx;
  p.y += p.vy;
  if (airborne && p.y <= 0) {
    p.y = 0;
    p.vy = 0;
    if (p.move == kMoveJump) {
      start_move(p, kMoveLanding);
      fx.emit(kEffectLand, i, -1, p.x, p.y);
    }
  }
  if (p.x < kWallLeft) p.x = kWallLeft;
  if (p.x > kWallRight) p.x = kWallRight;
}

}  // namespace fighter::detail
