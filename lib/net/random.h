// retcon: a small seeded RNG (xoshiro256** seeded through splitmix64). The library may not
// read a clock or a global RNG, and tests need the same run from the same seed everywhere,
// so every component that draws random numbers owns one of these.
#pragma once

#include <cstdint>

namespace retcon::detail {

inline uint64_t splitmix64(uint64_t& state) noexcept {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) noexcept { reseed(seed); }

  void reseed(uint64_t seed) noexcept {
    for (uint64_t& word : s_) word = splitmix64(seed);
  }

  uint64_t next() noexcept {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  uint32_t next_u32() noexcept { return static_cast<uint32_t>(next() >> 32); }

  // Uniform in [0, 1) from the top 53 bits: exact in a double, so identical on every platform.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, bound]; bound 0 gives 0. The modulo bias is irrelevant for simulation.
  uint64_t up_to(uint64_t bound) noexcept {
    return bound == 0 ? 0 : (bound == UINT64_MAX ? next() : next() % (bound + 1));
  }

  bool chance(double probability) noexcept { return probability > 0.0 && uniform() < probability; }

 private:
  static uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace retcon::detail
