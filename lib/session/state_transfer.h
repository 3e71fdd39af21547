// State transfer: the messages of reliable-channel stream 1 (docs/PROTOCOL.md "State transfer").
// A machine that needs a running match's state (a late spectator) sends a request; the host
// answers at once, accepted or declined, and once it has a final state, an offer (the frame its
// state is of, and the size of the blob that follows on the same channel, tagged with the
// purpose). The offer comes before the state so the receiver knows where the host's input
// stream now starts. A host that answers nothing at all (a retcon before state transfer, which
// drops stream-1 messages) is taken as declined once the request was acknowledged a while ago.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/byte_io.h"
#include "net/reliable_channel.h"
#include "retcon/p2p.h"
#include "retcon/types.h"

namespace retcon::detail {

enum class TransferKind : uint8_t { request = 1, offer = 2, declined = 3, accepted = 4 };
// What the state is for; also the blob's tag.
enum class TransferPurpose : uint8_t { spectate = 1 };
// Declined: the spectator plays the match from frame 0 (the host streams it from there).
enum class DeclineReason : uint8_t { not_enabled = 1, not_started = 2 };

struct TransferMessage {
  TransferKind kind = TransferKind::request;
  TransferPurpose purpose = TransferPurpose::spectate;
  Frame frame = kNullFrame;  // offer: the state's frame, where the input stream restarts
  uint32_t size = 0;         // offer: the state's size in bytes
  DeclineReason reason = DeclineReason::not_enabled;
};

inline constexpr size_t kMaxTransferMessage = 10;

// The reliable channel of a connection that may carry states of up to `max_state` bytes (0:
// messages only), paced at the game's share. The channel's 16 datagrams per poll stay: at
// 60 ticks a second they cap a transfer near 1 MB/s, and larger bursts measured slower under
// loss (more chunks resent before their acknowledgements came back).
inline ChannelConfig transfer_channel_config(const NetworkConfig& n, size_t max_state) noexcept {
  ChannelConfig c;
  c.max_blob_size = n.state_transfer ? max_state : 0;
  c.bytes_per_second = n.transfer_bytes_per_second;
  return c;
}

// Bytes written to `out` (capacity >= kMaxTransferMessage).
inline size_t encode_transfer(const TransferMessage& m, uint8_t* out) noexcept {
  ByteWriter w(out, kMaxTransferMessage);
  w.u8(uint8_t(m.kind));
  w.u8(uint8_t(m.purpose));
  if (m.kind == TransferKind::offer) {
    w.i32(m.frame);
    w.u32(m.size);
  } else if (m.kind == TransferKind::declined) {
    w.u8(uint8_t(m.reason));
  }
  return w.size();
}

// False for anything malformed: an unknown kind or purpose, a wrong length, a negative frame,
// an empty state. Nothing a peer sends is trusted.
inline bool decode_transfer(const uint8_t* data, size_t size, TransferMessage* out) noexcept {
  ByteReader r(data, size);
  TransferMessage m;
  const uint8_t kind = r.u8(), purpose = r.u8();
  if (r.failed() || purpose != uint8_t(TransferPurpose::spectate)) return false;
  m.purpose = TransferPurpose(purpose);
  switch (kind) {
    case uint8_t(TransferKind::request): m.kind = TransferKind::request; break;
    case uint8_t(TransferKind::accepted): m.kind = TransferKind::accepted; break;
    case uint8_t(TransferKind::offer):
      m.kind = TransferKind::offer;
      m.frame = r.i32();
      m.size = r.u32();
      if (m.frame < 0 || m.size == 0) return false;
      break;
    case uint8_t(TransferKind::declined):
      m.kind = TransferKind::declined;
      m.reason = DeclineReason(r.u8());
      if (m.reason != DeclineReason::not_enabled && m.reason != DeclineReason::not_started) return false;
      break;
    default: return false;
  }
  if (r.failed() || r.remaining() != 0) return false;
  *out = m;
  return true;
}

}  // namespace retcon::detail
