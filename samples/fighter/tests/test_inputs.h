// Fighter tests: building one frame's inputs and running bots.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "fighter.h"
#include "fighter_bot.h"
#include "fighter_game.h"

namespace fighter::test {

// One frame of inputs for up to kMaxPlayers, as retcon hands them to the game.
struct Inputs {
  uint8_t bytes[kMaxPlayers * kInputSize] = {};
  retcon::InputStatus status[kMaxPlayers] = {};
  uint32_t players = 2;

  Inputs() = default;
  Inputs(std::initializer_list<uint16_t> bits) {
    players = static_cast<uint32_t>(bits.size());
    int p = 0;
    for (uint16_t b : bits) set(p++, b);
  }
  void set(int player, uint16_t bits) { write_input(bits, bytes + player * kInputSize); }
  retcon::FrameInputs frame() const { return {bytes, status, kInputSize, players}; }
};

inline void step(FighterState& s, std::initializer_list<uint16_t> bits, uint32_t flags = 0,
                 FighterEffects* fx = nullptr) {
  Inputs in(bits);
  fighter_step(s, in.frame(), flags, fx);
}

// Skips the round intro with no input.
inline void skip_intro(FighterState& s) {
  while (s.phase == kPhaseIntro) step(s, {0, 0, 0, 0});
}

// A recorded bot match: every frame's inputs, and the checksum after each frame.
struct Recording {
  std::vector<Inputs> inputs;
  std::vector<uint64_t> checksums;
};

inline Recording record_bots(int players, uint32_t game_seed, uint32_t bot_seed, int frames) {
  FighterGame game(players, game_seed);
  std::vector<FighterBot> bots;
  for (int p = 0; p < players; ++p) bots.emplace_back(bot_seed + static_cast<uint32_t>(p), p);
  Recording r;
  for (int f = 0; f < frames; ++f) {
    Inputs in;
    in.players = static_cast<uint32_t>(players);
    for (int p = 0; p < players; ++p) in.set(p, bots[static_cast<size_t>(p)].next_input(game.state()));
    game.advance_frame(game.state().frame, in.frame(), 0);
    r.inputs.push_back(in);
    r.checksums.push_back(fighter_checksum(game.state()));
  }
  return r;
}

}  // namespace fighter::test
