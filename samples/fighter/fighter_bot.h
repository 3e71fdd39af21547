// Fighter: input generators. FighterBot plays like a (mediocre) person, deterministically from
// its seed and what it sees in the state; ScriptedInputs is a fixed repeating pattern of holds
// and presses, a pure function of the frame number (for wire-size measurements).
#pragma once

#include <cstdint>

#include "fighter_state.h"

namespace fighter {

class FighterBot {
 public:
  FighterBot(uint32_t seed, int player);

  // The bot's input for the frame about to be simulated from `state`. Call once per frame.
  uint16_t next_input(const FighterState& state);
  // Same, written as the 2 wire bytes.
  void next_input(const FighterState& state, uint8_t out[2]);

  int player() const { return player_; }

 private:
  enum Intent : int32_t { kIdle, kApproach, kRetreat, kCrouch, kJumpIn, kJumpUp, kGuard };

  uint32_t random();
  int32_t random_between(int32_t lo, int32_t hi);  // inclusive
  void choose_intent(int32_t distance_px, bool opponent_attacking);

  uint32_t rng_;
  int player_;
  int32_t intent_ = kIdle;
  int32_t intent_left_ = 0;     // frames the current intent is held
  uint16_t press_ = 0;          // attack button being pressed
  int32_t press_left_ = 0;
  int32_t attack_cooldown_ = 0;
  int32_t seen_attack_frame_ = -1;  // opponent attack already reacted to (its start frame)
};

class ScriptedInputs {
 public:
  explicit ScriptedInputs(int player);
  // Input of this player at `frame`; the pattern repeats every period() frames.
  uint16_t at(int32_t frame) const;
  static int32_t period();

 private:
  int32_t offset_;
};

}  // namespace fighter
