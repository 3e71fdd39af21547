// Rejoin: a player whose machine dropped comes back into the running match (docs/PROTOCOL.md
// "Rejoin"). The messages, and the host's hold that makes every machine turn the player live at
// the same frame.
//
// The rejoining machine (P2PConfig::rejoining) handshakes with the others from any address;
// each of them hands the request to its game (rejoin_requested), which accepts or refuses it
// (P2PSession::answer_rejoin). Once accepted everywhere, the rejoiner asks one machine (the host:
// the lowest-numbered player it is synchronized with) on channel stream 1. The host picks a final
// state of frame S and a frame T, far enough ahead for the state to arrive and the rejoiner to
// catch up, and:
//   - tells every other player machine on stream 2 (a rejoin notice: player, its agreed cut, S, T),
//     and holds its own inputs of frames >= T until each of them acknowledged the notice, so
//     nobody confirms T without knowing that the player is live from T (the rule of timed
//     decisions, session/decision_exchange.h). A machine whose notice's sender leaves before
//     the rejoin is confirmed there relays it to the player machines other than the rejoiner,
//     with the same hold: a host dying before its notice reached every machine leaves no
//     machine unaware of T (the ones that had it tell the others; a duplicate is ignored);
//   - sends the rejoiner an offer (S, T, the state's size, every player's connect status) and
//     then the state, on stream 1.
// Every machine then simulates the player as disconnected up to T - 1 and with its real inputs
// from T on (RollbackDriver::rejoin_player). Every machine streams its local inputs to the
// rejoiner from S on; the rejoiner's own first input frame is T.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/byte_io.h"
#include "net/reliable_channel.h"
#include "retcon/types.h"
#include "session/peer.h"

namespace retcon::detail {

// Stream 1 (state transfer) between player machines: the purpose byte says "rejoin".
inline constexpr uint8_t kRejoinPurpose = 2;
enum class RejoinKind : uint8_t { request = 1, offer = 2, declined = 3 };
// The blob's tag (TransferPurpose::spectate is 1).
inline constexpr uint32_t kRejoinBlobTag = 2;
// Stream 2 (decisions): a rejoin notice. Its own kind byte beside decisions (1) and delay changes.
inline constexpr uint8_t kRejoinNoticeKind = 16;

struct RejoinOffer {
  Frame state_frame = kNullFrame;  // S: the state's frame; every input stream restarts there
  Frame live_at = kNullFrame;      // T: the rejoining player's first live frame
  uint32_t size = 0;               // the state's bytes
  uint32_t num_players = 0;
  ConnectStatus status[kMaxPlayers] = {};  // the host's view of every player (the cuts before S)
  // What the state does not hold but every machine's next frames depend on (protocol 6): the
  // digest of the timed decisions before S (mixed into the checksums peers compare; the
  // decisions from S on come from their senders), and the last input delay change the host
  // applied (delay_frame kNullFrame: none), the delay every machine's local players use until
  // the next change.
  uint64_t decisions_digest = 0;
  Frame delay_frame = kNullFrame;
  int32_t delay = 0;
};

struct RejoinNotice {
  PlayerIndex player = -1;
  Frame cut = kNullFrame;  // the player's agreed last frame before it left
  Frame state_frame = kNullFrame;
  Frame live_at = kNullFrame;
};

inline constexpr size_t kMaxRejoinMessage = 2 + 4 + 4 + 4 + 1 + kMaxPlayers * 5 + 8 + 4 + 1;

inline size_t encode_rejoin_request(uint8_t* out) noexcept {
  out[0] = uint8_t(RejoinKind::request);
  out[1] = kRejoinPurpose;
  return 2;
}

inline size_t encode_rejoin_declined(uint8_t* out) noexcept {
  out[0] = uint8_t(RejoinKind::declined);
  out[1] = kRejoinPurpose;
  return 2;
}

inline size_t encode_rejoin_offer(const RejoinOffer& o, uint8_t* out) noexcept {
  ByteWriter w(out, kMaxRejoinMessage);
  w.u8(uint8_t(RejoinKind::offer));
  w.u8(kRejoinPurpose);
  w.i32(o.state_frame);
  w.u32(o.size);
  w.i32(o.live_at);
  w.u8(uint8_t(o.num_players));
  for (uint32_t p = 0; p < o.num_players; ++p) {
    w.u8(o.status[p].disconnected ? 1 : 0);
    w.i32(o.status[p].last_frame);
  }
  w.u64(o.decisions_digest);
  w.i32(o.delay_frame);
  w.u8(uint8_t(o.delay));
  return w.overflowed() ? 0 : w.size();
}

// The kind of a stream-1 message between player machines; false when it is not a rejoin one.
inline bool rejoin_kind(const uint8_t* body, size_t size, RejoinKind* kind) noexcept {
  if (size < 2 || body[1] != kRejoinPurpose) return false;
  if (body[0] < uint8_t(RejoinKind::request) || body[0] > uint8_t(RejoinKind::declined)) return false;
  if (body[0] != uint8_t(RejoinKind::offer) && size != 2) return false;
  *kind = RejoinKind(body[0]);
  return true;
}

// False for anything malformed: nothing a peer sends is trusted.
inline bool decode_rejoin_offer(const uint8_t* body, size_t size, uint32_t num_players, RejoinOffer* out) noexcept {
  ByteReader r(body, size);
  RejoinOffer o;
  if (r.u8() != uint8_t(RejoinKind::offer) || r.u8() != kRejoinPurpose) return false;
  o.state_frame = r.i32();
  o.size = r.u32();
  o.live_at = r.i32();
  o.num_players = r.u8();
  if (r.failed() || o.num_players != num_players || o.state_frame < 0 || o.size == 0 || o.live_at < o.state_frame)
    return false;
  for (uint32_t p = 0; p < o.num_players; ++p) {
    const uint8_t d = r.u8();
    o.status[p].last_frame = r.i32();
    if (d > 1 || o.status[p].last_frame < kNullFrame) return false;
    o.status[p].disconnected = d == 1;
  }
  o.decisions_digest = r.u64();
  o.delay_frame = r.i32();
  o.delay = r.u8();
  if (r.failed() || r.remaining() != 0 || o.delay_frame < kNullFrame || o.delay > kMaxInputDelay) return false;
  *out = o;
  return true;
}

inline size_t encode_rejoin_notice(const RejoinNotice& n, uint8_t* out) noexcept {
  ByteWriter w(out, kMaxRejoinMessage);
  w.u8(kRejoinNoticeKind);
  w.u8(uint8_t(n.player));
  w.i32(n.cut);
  w.i32(n.state_frame);
  w.i32(n.live_at);
  return w.overflowed() ? 0 : w.size();
}

inline bool decode_rejoin_notice(const uint8_t* body, size_t size, uint32_t num_players, RejoinNotice* out) noexcept {
  ByteReader r(body, size);
  RejoinNotice n;
  if (r.u8() != kRejoinNoticeKind) return false;
  n.player = PlayerIndex(r.u8());
  n.cut = r.i32();
  n.state_frame = r.i32();
  n.live_at = r.i32();
  if (r.failed() || r.remaining() != 0 || uint32_t(n.player) >= num_players || n.cut < kNullFrame ||
      n.state_frame <= n.cut || n.live_at < n.state_frame)
    return false;
  *out = n;
  return true;
}

// The host's hold (see the top of this file): its inputs of frames >= live_at stay away from
// each player machine it told until that machine acknowledged the notice (or left).
class RejoinHold {
 public:
  void start(Frame live_at) noexcept {
    active_ = true;
    frame_ = live_at;
    for (bool& s : sent_to_) s = false;
  }
  // A machine relaying a notice it received (its sender left before the rejoin was confirmed:
  // if the host died before its notice reached them all, the others still hear it): as start(), but
  // a hold still waiting for acknowledgements keeps its peers and its earlier frame.
  void relay(const Peer* peers, uint32_t peer_count, Frame live_at) noexcept {
    for (uint32_t i = 0; i < peer_count; ++i)
      if (hold_from(peers, i) != INT32_MAX) {
        frame_ = frame_ < live_at ? frame_ : live_at;
        return;
      }
    start(live_at);
  }
  // Player peer `peer` has a new connection (it rejoins): the sequence numbers of its old
  // channel mean nothing on the new one (an old hold would wait for ever).
  void forget(uint32_t peer) noexcept {
    if (peer < kMaxPlayers) sent_to_[peer] = false;
  }
  void sent(uint32_t peer, uint32_t seq) noexcept {
    if (peer >= kMaxPlayers) return;
    sent_to_[peer] = true;
    seq_[peer] = seq;
  }
  // The first frame whose local input must not go to player peer `i` yet (INT32_MAX: none
  // held): that peer may not confirm the live frame before it holds the notice.
  Frame hold_from(const Peer* peers, uint32_t i) const noexcept {
    if (!active_ || i >= uint32_t(kMaxPlayers) || !sent_to_[i] || peers[i].dropped) return INT32_MAX;
    return peers[i].channel.acknowledged_through(seq_[i]) ? INT32_MAX : frame_;
  }
  // False when hold_from holds nothing from any peer (never started).
  bool may_hold() const noexcept { return active_; }

 private:
  bool active_ = false;
  Frame frame_ = kNullFrame;
  bool sent_to_[kMaxPlayers] = {};
  uint32_t seq_[kMaxPlayers] = {};
};

}  // namespace retcon::detail
