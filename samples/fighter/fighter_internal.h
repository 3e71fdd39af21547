// Fighter: pieces of one step shared between the rules files. Not part of the game's API.
#pragma once

#include <cstdint>

#include "fighter_effects.h"
#include "fighter_state.h"

namespace fighter::detail {

// Emits effects, or drops them when muted (re-simulation) or when nobody listens.
struct Emitter {
  FighterEffects* out;
  void emit(int32_t type, int32_t player, int32_t other, int32_t x, int32_t y,
            int32_t variant = 0) const {
    if (out != nullptr) out->push(FighterEffect{type, player, other, x, y, variant});
  }
};

inline uint32_t rng_next(uint32_t& s) {
  // xorshift32: tiny, good enough for cosmetic variation, and never stuck (seeded non-zero).
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

inline bool on_ground(const FighterPlayer& p) { return p.y <= 0 && p.vy <= 0; }
inline bool alive(const FighterPlayer& p) { return p.health > 0; }

// Index of the living opponent nearest to player i (ties: lowest index), or -1.
int nearest_opponent(const FighterState& s, int i);

// fighter_player.cpp: one fighter's move state machine and movement.
void control_player(FighterState& s, int i, const Emitter& fx);
void move_player(FighterPlayer& p, int i, const Emitter& fx);

// fighter_combat.cpp: bodies push each other apart; attacks land.
void separate_bodies(FighterState& s);
void resolve_hits(FighterState& s, const Emitter& fx);

}  // namespace fighter::detail
