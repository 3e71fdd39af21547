// Inputs for property tests: player-like streams and the documented input-delay rule.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "retcon/types.h"

namespace retcon::test {

using Bytes = std::vector<uint8_t>;

// Inputs that hold a value for a while, then change, as a player's do.
inline std::vector<Bytes> player_stream(std::mt19937_64& rng, size_t frames, uint32_t size) {
  std::vector<Bytes> out;
  Bytes current(size, 0);
  while (out.size() < frames) {
    for (auto& b : current)
      if (rng() % 3 == 0) b = uint8_t(rng());
    const size_t hold = 1 + rng() % 6;
    for (size_t i = 0; i < hold && out.size() < frames; ++i) out.push_back(current);
  }
  return out;
}

// The documented delay rule, restated independently of the library: an input given at frame f
// with delay d belongs to frame f + d; a gap repeats the previous input; a frame already taken
// drops it.
struct LocalInputModel {
  std::vector<Bytes> by_frame;
  void add(Frame frame, int32_t delay, const Bytes& input) {
    const size_t target = size_t(frame + delay);
    if (by_frame.size() > target) return;
    while (by_frame.size() < target) by_frame.push_back(by_frame.empty() ? Bytes(input.size(), 0) : by_frame.back());
    by_frame.push_back(input);
  }
};

}  // namespace retcon::test
