// Fighter: a small deterministic fighting game for 2 to 4 players, the retcon sample game.
// Integer math only. The API is free functions over one plain state struct.
#pragma once

#include <cstdint>

#include "fighter_effects.h"
#include "fighter_input.h"
#include "fighter_state.h"
#include "retcon/callbacks.h"
#include "retcon/types.h"

namespace fighter {

// Zero the state and start match 0, round 1. `players` is clamped to kMinPlayers..kMaxPlayers.
void fighter_init(FighterState& state, int players, uint32_t seed);

// Simulate one frame. Player i's input is read from `inputs` (missing players = no input).
// Effects are appended to `effects` (which may be null) only when `flags` lacks
// retcon::kAdvanceResimulating; the state evolves identically either way.
void fighter_step(FighterState& state, const retcon::FrameInputs& inputs, uint32_t flags,
                  FighterEffects* effects);

// 64-bit hash of the state's values (independent of byte order).
uint64_t fighter_checksum(const FighterState& state);

// Multi-line readable dump: frame, round state, and per player position, velocity, health,
// move and frame in move.
void fighter_describe(const FighterState& state, const retcon::TextSink& sink);
// The fields `a` and `b` differ in, one line each ("p0.health 1000 vs 999"); returns how many.
int fighter_diff(const FighterState& a, const FighterState& b, const retcon::TextSink& sink);

const char* move_name(int32_t move);
const char* phase_name(int32_t phase);

}  // namespace fighter
