// retcon: the checksum of a data datagram without a match key (wire.h, datagram_checksum), inline
// for the code that takes it per datagram: wire.cpp (every message's codec, the receiver's check)
// and the endpoint's inputs datagrams (every one sent, and the usual one received:
// take_usual_inputs). Private to those .cpp files: it brings in XXH3 as inline code
// (XXH_INLINE_ALL).
#pragma once

// Inlined, XXH3's short-input paths are a few dozen instructions, about what the call into
// libxxhash and its length dispatch cost on their own. Same algorithm, same values (the Windows
// build compiles everything this way already).
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "net/wire.h"

namespace retcon::detail {

// XXH3 of everything but the checksum field itself, truncated to 32 bits: the public header
// with the full 32-bit `sequence` (the data header holds only its low 16 bits), seeded with the
// connection's key, then the body. Always inline: every datagram sent and received takes it,
// through one call at most.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline uint32_t data_checksum(const uint8_t* data, size_t size, uint64_t connection_key, uint32_t sequence) noexcept {
  uint8_t associated[8];
  std::memcpy(associated, data, 4);
  for (size_t i = 0; i < 4; ++i) associated[4 + i] = static_cast<uint8_t>(sequence >> (8 * i));
  // XXH3_64bits of those 8 bytes is its 4-to-8-byte path with seed 0 (the same value), here
  // without that call and its length dispatch.
  const uint64_t head = XXH3_len_4to8_64b(associated, sizeof associated, XXH3_kSecret, 0);
  // A body of up to 16 bytes (most inputs datagrams) straight to the short path that
  // XXH3_64bits_withSeed dispatches it to (the same value), without that call and its dispatch.
  const uint8_t* const body = data + kDataHeaderSize;
  const size_t length = size - kDataHeaderSize;
  if (length <= 16) return static_cast<uint32_t>(XXH3_len_0to16_64b(body, length, XXH3_kSecret, head ^ connection_key));
  return static_cast<uint32_t>(XXH3_64bits_withSeed(body, length, head ^ connection_key));
}

}  // namespace retcon::detail
