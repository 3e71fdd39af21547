// Fighter: the adapter retcon::bind_game() expects. It owns the live state; retcon owns the
// save buffers. Counts the effects it plays so tests can check muting during re-simulation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fighter.h"

namespace fighter {

struct FighterGameCounters {
  uint64_t frames_advanced = 0;     // advance_frame calls without kAdvanceResimulating
  uint64_t frames_resimulated = 0;  // with it
  uint64_t effects_played = 0;      // effects produced (all of them from non-resimulated frames)
  uint64_t effects_by_type[kEffectTypeCount] = {};
  uint64_t saves = 0;
  uint64_t loads = 0;
  uint64_t bad_loads = 0;           // load_state with a length that is not a FighterState
};

class FighterGame {
 public:
  explicit FighterGame(int players = 2, uint32_t seed = 1);

  void reset(int players, uint32_t seed);

  // retcon::bind_game members.
  // Copies the state into `buffer`; returns sizeof(FighterState), which is more than
  // `capacity` (and nothing is written) when it does not fit.
  size_t save_state(retcon::Frame frame, uint8_t* buffer, size_t capacity);
  void load_state(retcon::Frame frame, const uint8_t* buffer, size_t length);
  void advance_frame(retcon::Frame frame, const retcon::FrameInputs& inputs, uint32_t flags);
  void describe_state(retcon::Frame frame, const uint8_t* buffer, size_t length,
                      const retcon::TextSink& sink);
  uint64_t checksum(retcon::Frame frame, const uint8_t* buffer, size_t length);

  const FighterState& state() const { return state_; }
  FighterState& state() { return state_; }
  // Effects of the last non-resimulated frame (empty after a resimulated one).
  const FighterEffects& last_effects() const { return effects_; }
  const FighterGameCounters& counters() const { return counters_; }

  static constexpr size_t state_size() { return sizeof(FighterState); }

 private:
  FighterState state_{};
  FighterEffects effects_{};
  FighterGameCounters counters_{};
};

}  // namespace fighter
