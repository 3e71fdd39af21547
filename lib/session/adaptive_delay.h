// Adaptive input delay: the base delay a match should use, from the round trips to the peers.
//
// The proven rule (a shipped 4-player platformer's): before each round, never during one, about
// half the median round trip in frames, clamped to a range (2..4 frames at 60 Hz there). Half the
// round trip is the one-way trip: with that much delay an input reaches the other machines about
// when its frame is played there, so they seldom roll back. The median, so that one far-away
// player does not make everyone pay; with an even count the lower of the two middle ones.
//
// Pure arithmetic: the session gathers the RTTs (Endpoint::ping_us) and emits the event.
#pragma once

#include <algorithm>
#include <utility>
#include <cstdint>

#include "retcon/p2p.h"

namespace retcon::detail {

// A static sentence naming the bad setting of `rule`, or null.
inline const char* validate_delay_rule(const AdaptiveDelayRule& rule) noexcept {
  if (rule.rtt_percent < 1 || rule.rtt_percent > 400) return "rtt_percent must be 1..400";
  if (rule.min_frames < 0 || rule.min_frames > kMaxInputDelay) return "min_frames must be 0..32";
  if (rule.max_frames < rule.min_frames || rule.max_frames > kMaxInputDelay)
    return "max_frames must be min_frames..32";
  return nullptr;
}

// The lower median of `count` (>= 1) values; reorders them.
inline uint64_t lower_median(uint64_t* values, uint32_t count) noexcept {
  for (uint32_t i = 1; i < count; ++i)  // insertion sort of at most kMaxPlayers
    for (uint32_t j = i; j > 0 && values[j - 1] > values[j]; --j) std::swap(values[j - 1], values[j]);
  return values[(count - 1) / 2];
}

// The delay in frames for a median round trip: rtt_percent of it, rounded to the nearest frame,
// clamped to the rule's range.
inline int32_t delay_for_rtt(uint64_t median_rtt_us, uint64_t frame_us, const AdaptiveDelayRule& rule) noexcept {
  if (frame_us == 0) return rule.min_frames;
  const uint64_t scaled = median_rtt_us * rule.rtt_percent / 100;
  const uint64_t frames = (scaled + frame_us / 2) / frame_us;
  return int32_t(std::clamp<uint64_t>(frames, uint64_t(rule.min_frames), uint64_t(rule.max_frames)));
}

}  // namespace retcon::detail
