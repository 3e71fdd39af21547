// Fighter: checksum of the state. Hashes the values of its 32-bit fields (not raw bytes), so the
// result is the same on little- and big-endian machines.
#include <cstring>

#include "fighter.h"

namespace fighter {

uint64_t fighter_checksum(const FighterState& state) {
  constexpr size_t kWords = sizeof(FighterState) / sizeof(uint32_t);
  uint32_t words[kWords];
  std::memcpy(words, &state, sizeof state);
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 over each word's 4 bytes, low byte first
  for (uint32_t w : words) {
    for (int b = 0; b < 4; ++b) {
      h ^= (w >> (8 * b)) & 0xFFu;
      h *= 0x100000001b3ull;
    }
  }
  // Final avalanche (splitmix64) so nearby states give unrelated checksums.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace fighter
