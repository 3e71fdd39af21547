// Fighter input: 2 bytes per player per frame, what retcon carries over the wire.
//
// The two bytes are a little-endian uint16 of bit flags:
//   byte 0  bit 0 (0x0001)  left
//           bit 1 (0x0002)  right
//           bit 2 (0x0004)  up    = jump
//           bit 3 (0x0008)  down  = crouch
//           bit 4 (0x0010)  light attack
//           bit 5 (0x0020)  heavy attack
//           bit 6 (0x0040)  block
//           bit 7 (0x0080)  reserved, send 0
//   byte 1  bits 8..15      reserved, send 0
// The game masks reserved bits away, so a newer client setting them cannot change the state.
// Left+right together cancel (no walk); attacks trigger on the press, not while held.
#pragma once

#include <cstdint>

#include "retcon/types.h"

namespace fighter {

inline constexpr uint32_t kInputSize = 2;

inline constexpr uint16_t kInputLeft = 1u << 0;
inline constexpr uint16_t kInputRight = 1u << 1;
inline constexpr uint16_t kInputUp = 1u << 2;
inline constexpr uint16_t kInputDown = 1u << 3;
inline constexpr uint16_t kInputLight = 1u << 4;
inline constexpr uint16_t kInputHeavy = 1u << 5;
inline constexpr uint16_t kInputBlock = 1u << 6;
inline constexpr uint16_t kInputUsedMask = 0x7F;

inline void write_input(uint16_t bits, uint8_t* out) {
  out[0] = static_cast<uint8_t>(bits & 0xFFu);
  out[1] = static_cast<uint8_t>(bits >> 8);
}

inline uint16_t decode_input(const uint8_t* in, uint32_t size) {
  if (in == nullptr || size == 0) return 0;
  uint32_t v = in[0];
  if (size >= 2) v |= uint32_t{in[1]} << 8;
  return static_cast<uint16_t>(v & kInputUsedMask);
}

// Input of `player` from a frame's inputs; zero when the frame does not carry that player.
inline uint16_t read_input(const retcon::FrameInputs& in, int player) {
  if (in.bytes == nullptr || player < 0 || static_cast<uint32_t>(player) >= in.player_count) {
    return 0;
  }
  return decode_input(in.player(player), in.input_size);
}

}  // namespace fighter
