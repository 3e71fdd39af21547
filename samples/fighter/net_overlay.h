// Fighter: the numbers the network overlay shows. Plain data, filled by whatever drives the game
// (a local loop now, a retcon session later); the renderer only reads it.
#pragma once

#include <cstdint>

namespace fighter {

struct NetOverlay {
  static constexpr int kHistory = 120;  // frames of rollback graph

  bool visible = false;
  int32_t ping_ms = 0;
  int32_t frame_advantage = 0;    // frames we are ahead of the remote (negative: behind)
  uint64_t rollbacks = 0;         // total so far
  uint64_t frames_resimulated = 0;
  int32_t input_delay = 0;        // the delay in use (adaptive: chosen before each round)
  int32_t late_player = -1;       // a lateness warning to show (a late_inputs event), -1: none
  int32_t late_frames = 0;        // how late that player's inputs came, frames
  // Rollback depth (frames re-simulated) per frame, a ring; the newest at history_head - 1.
  uint8_t history[kHistory] = {};
  int32_t history_head = 0;

  void push_rollback_depth(int32_t frames) {
    history[history_head] = static_cast<uint8_t>(frames < 0 ? 0 : (frames > 255 ? 255 : frames));
    history_head = (history_head + 1) % kHistory;
  }
  // i = 0 is the oldest entry.
  int32_t history_at(int i) const { return history[(history_head + i) % kHistory]; }
};

}  // namespace fighter
