// What differs in a rejected handshake, for the handshake_rejected event: a static sentence
// naming the field, with our value and the peer's (event.count and event.total).
#pragma once

#include <cstdint>

#include "net/endpoint.h"

namespace retcon::detail {

struct HandshakeMismatch {
  const char* message;
  int32_t ours = 0, theirs = 0;
};

// The window (max_prediction) is never a reason: players with different ones play together
// (see SessionShape::max_prediction).
inline HandshakeMismatch handshake_mismatch(RejectReason reason, const SessionShape& ours,
                                            const Handshake& theirs) noexcept {
  if (reason == RejectReason::refused)
    return {"handshake rejected: the peer refuses this connection (its game refused our rejoin)", 0, 0};
  if (reason == RejectReason::version)
    return {"handshake rejected: the peer speaks another protocol version (count: ours, total: theirs)",
            int32_t(kProtocolVersion), -1};
  if (theirs.shape.num_players != ours.num_players)
    return {"handshake rejected: the peer's num_players differs (count: ours, total: theirs)",
            int32_t(ours.num_players), int32_t(theirs.shape.num_players)};
  if (theirs.shape.input_size != ours.input_size)
    return {"handshake rejected: the peer's input_size differs (count: ours, total: theirs)",
            int32_t(ours.input_size), int32_t(theirs.shape.input_size)};
  if (theirs.shape.frame_rate != ours.frame_rate)
    return {"handshake rejected: the peer's frame_rate differs (count: ours, total: theirs)",
            int32_t(ours.frame_rate), int32_t(theirs.shape.frame_rate)};
  return {"handshake rejected: the peer owns other players than this machine's player_kinds and addresses say "
          "(total: bytes of inputs it sends per frame)",
          0, int32_t(theirs.send_blob_size)};
}

}  // namespace retcon::detail
