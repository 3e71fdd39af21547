// Fighter: bodies pushing each other apart, and attacks landing (hit or block).
#include "fighter_input.h"
#include "fighter_internal.h"
#include "fighter_moves.h"

namespace fighter::detail {
namespace {

struct PendingHit {
  int attacker;
  int victim;
  int32_t move;  // the attack, kept: a trade puts the attacker in hitstun before it applies
};

bool is_guarding(const FighterPlayer& victim, const FighterPlayer& attacker) {
  const bool guard_up = (victim.move == kMoveBlock &&
                         victim.move_frame >= move_data(kMoveBlock).startup) ||
                        victim.move == kMoveBlockstun;
  // The guard only covers the side the victim faces.
  return guard_up && on_ground(victim) && (attacker.x - victim.x) * victim.facing >= 0;
}

void apply_hit(FighterState& s, int a, int v, int32_t move, const Emitter& fx) {
  FighterPlayer& attacker = s.p[a];
  FighterPlayer& victim = s.p[v];
  const MoveData& m = move_data(move);
  attacker.hit_mask |= 1 << v;
  const int32_t away = victim.x > attacker.x ? 1 : (victim.x < attacker.x ? -1 : attacker.facing);
  const int32_t spark_x = (attacker.x + victim.x) / 2;
  const int32_t spark_y = victim.y + (m.reach_y0 + m.reach_y1) / 2;
  // The PRNG advances on every landed attack whether or not effects are heard.
  const int32_t variant = static_cast<int32_t>(rng_next(s.rng) & 3u);

  if (is_guarding(victim, attacker)) {
    const int32_t chip = m.chip < victim.health ? m.chip : victim.health - 1;  // chip never KOs
    victim.health -= chip > 0 ? chip : 0;
    victim.move = kMoveBlockstun;
    victim.move_frame = 0;
    victim.stun = m.blockstun;
    victim.vx = away * (m.knockback_x / 2);
    attacker.damage_dealt += chip > 0 ? chip : 0;
    fx.emit(kEffectBlock, v, a, spark_x, spark_y, variant);
    return;
  }

  const int32_t damage = m.damage < victim.health ? m.damage : victim.health;
  victim.health -= damage;
  attacker.damage_dealt += damage;
  victim.combo = victim.move == kMoveHitstun ? victim.combo + 1 : 1;
  victim.move = kMoveHitstun;
  victim.move_frame = 0;
  victim.stun = m.hitstun;
  victim.buffered_move = kMoveIdle;
  victim.buffer_frames = 0;
  victim.vx = away * m.knockback_x;
  if (m.knockback_y > 0) victim.vy = m.knockback_y;
  fx.emit(kEffectHit, v, a, spark_x, spark_y, variant);
  if (victim.health == 0) {
    victim.move = kMoveKnockedOut;
    victim.stun = 0;
    victim.vy = victim.vy > 4 * kFixOne ? victim.vy : 4 * kFixOne;  // a little KO pop
    fx.emit(kEffectKnockOut, v, a, victim.x, victim.y);
  }
}

}  // namespace

void separate_bodies(FighterState& s) {
  const int32_t min_gap = 2 * kBodyHalfWidth;
  for (int i = 0; i < s.players; ++i) {
    for (int j = i + 1; j < s.players; ++j) {
      FighterPlayer& a = s.p[i];
      FighterPlayer& b = s.p[j];
      if (!alive(a) || !alive(b)) continue;
      if (a.y >= b.y + kStandHeight || b.y >= a.y + kStandHeight) continue;  // one jumps over
      const int32_t dx = b.x - a.x;
      const int32_t dist = dx >= 0 ? dx : -dx;
      if (dist >= min_gap) continue;
      const int32_t overlap = min_gap - dist;
      const int32_t dir = dx > 0 ? 1 : (dx < 0 ? -1 : (i % 2 == 0 ? 1 : -1));
      const int32_t push_a = overlap / 2;
      const int32_t push_b = overlap - push_a;
      a.x -= dir * push_a;
      b.x += dir * push_b;
      // A wall pushes back onto the other body instead.
      if (a.x < kWallLeft) { b.x += kWallLeft - a.x; a.x = kWallLeft; }
      if (a.x > kWallRight) { b.x -= a.x - kWallRight; a.x = kWallRight; }
      if (b.x < kWallLeft) { a.x += kWallLeft - b.x; b.x = kWallLeft; }
      if (b.x > kWallRight) { a.x -= b.x - kWallRight; b.x = kWallRight; }
    }
  }
}

void resolve_hits(FighterState& s, const Emitter& fx) {
  // Collect first, apply after: two attacks that connect on the same frame both land (a trade),
  // whatever the player order.
  PendingHit hits[kMaxPlayers * kMaxPlayers];
  int count = 0;
  for (int a = 0; a < s.players; ++a) {
    Box hit;
    if (!alive(s.p[a]) || !hitbox(s.p[a], &hit)) continue;
    for (int v = 0; v < s.players; ++v) {
      Box hurt;
      if (v == a || (s.p[a].hit_mask & (1 << v)) != 0 || !hurtbox(s.p[v], &hurt)) continue;
      if (boxes_overlap(hit, hurt)) hits[count++] = PendingHit{a, v, s.p[a].move};
    }
  }
  for (int k = 0; k < count; ++k) {
    if (alive(s.p[hits[k].victim])) apply_hit(s, hits[k].attacker, hits[k].victim, hits[k].move, fx);
  }
}

}  // namespace fighter::detail
