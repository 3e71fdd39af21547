// Fighter: the seam between a front end (window, keyboard) and whatever runs the simulation.
// The window gives local inputs and asks for the state to draw; LocalFrameSource runs the game
// directly, a retcon session adapter can implement the same interface later.
#pragma once

#include <cstdint>

#include "fighter_game.h"
#include "net_overlay.h"

namespace fighter {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // This tick's input of a player controlled on this machine.
  virtual void set_local_input(int player, uint16_t bits) = 0;
  // Run the frames due this tick (0 when stalled, several when catching up); returns how many.
  virtual int tick() = 0;
  virtual const FighterState& state() const = 0;
  // Effects of the frames run by the last tick (never those of re-simulated frames).
  virtual const FighterEffects& effects() const = 0;
  virtual NetOverlay overlay() const { return NetOverlay{}; }
};

// Runs the game on this machine, one frame per tick. With rollback_test > 0 it also rolls back
// that many frames every tick and re-simulates them (a local sync test), which exercises
// save/load and effect muting and fills the overlay with real rollback numbers.
class LocalFrameSource final : public FrameSource {
 public:
  LocalFrameSource(int players, uint32_t seed, int rollback_test = 0);

  void set_local_input(int player, uint16_t bits) override;
  int tick() override;
  const FighterState& state() const override { return game_.state(); }
  const FighterEffects& effects() const override { return effects_; }
  NetOverlay overlay() const override { return overlay_; }

  const FighterGame& game() const { return game_; }
  // Frames whose re-simulation produced a different checksum (must stay 0).
  uint64_t mismatches() const { return mismatches_; }

 private:
  static constexpr int kRing = 16;
  struct Saved {
    FighterState state;
    uint8_t inputs[kMaxPlayers * kInputSize];
    uint64_t checksum_after;
  };

  void step(uint8_t* inputs, uint32_t flags);

  FighterGame game_;
  FighterEffects effects_{};
  NetOverlay overlay_{};
  uint16_t local_[kMaxPlayers] = {};
  int rollback_test_;
  Saved ring_[kRing] = {};
  uint64_t mismatches_ = 0;
};

}  // namespace fighter
