// Adaptive delay applied at one frame on every machine: a timed message on the decisions stream
// (kind 2) that says "from frame F on, every local player's input delay is D", with the round
// trips the sender chose it from (for the event every machine raises). Unlike a game decision
// it changes no simulated state (each machine's delay only decides which frame its own inputs
// land on, and the driver keeps every frame's input unique), so it needs no hold: it is sent a
// round trip ahead and applied when the receiver's frame reaches F (at once, and said so, if it
// arrives later). docs/PROTOCOL.md "Timed decisions" documents the body.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/byte_io.h"
#include "retcon/types.h"

namespace retcon::detail {

inline constexpr uint8_t kDelayChangeKind = 2;
inline constexpr size_t kDelayChangeSize = 1 + 1 + 4 + 1 + 4 + 1 + 2 * kMaxPlayers;

struct DelayChange {
  PlayerIndex sender = -1;  // the first player of the machine that chose it
  Frame frame = kNullFrame;
  int32_t delay = 0;
  uint32_t median_rtt_us = 0;
  uint32_t peers = 0;
  uint16_t rtt_ms[kMaxPlayers] = {};  // per player: the sender's RTT to its machine (0: none)
};

inline size_t encode_delay_change(const DelayChange& c, uint8_t* out, size_t capacity) noexcept {
  ByteWriter w(out, capacity);
  w.u8(kDelayChangeKind);
  w.u8(uint8_t(c.sender));
  w.i32(c.frame);
  w.u8(uint8_t(c.delay));
  w.u32(c.median_rtt_us);
  w.u8(uint8_t(c.peers));
  for (uint16_t ms : c.rtt_ms) w.u16(ms);
  return w.overflowed() ? 0 : w.size();
}

// False for anything but a well-formed body with a valid sender, frame and delay.
inline bool decode_delay_change(const uint8_t* body, size_t size, DelayChange* out) noexcept {
  if (size != kDelayChangeSize) return false;
  ByteReader r(body, size);
  if (r.u8() != kDelayChangeKind) return false;
  DelayChange c;
  c.sender = PlayerIndex(r.u8());
  c.frame = r.i32();
  c.delay = r.u8();
  c.median_rtt_us = r.u32();
  c.peers = r.u8();
  for (uint16_t& ms : c.rtt_ms) ms = r.u16();
  if (r.failed() || c.sender >= kMaxPlayers || c.frame < 0 || c.delay > kMaxInputDelay || c.peers >= kMaxPlayers)
    return false;
  *out = c;
  return true;
}

}  // namespace retcon::detail
