// Both states on a desync (opt-in, P2PConfig::share_desync_states): when a peer's checksum of a
// confirmed frame differs from ours, both machines send each other their saved state of that
// frame over the reliable channel (stream 3 announces it, a blob tagged kDesyncStateTag carries
// it), and each game gets a desync_states event with both states' bytes and descriptions, so it
// can diff them field by field (docs/NETWORKING.md "Both states on a desync").
//
// The states of the frames whose checksums peers may still report are kept here (copies, a few
// slots of desync_state_max_size bytes, allocated at create): the ring has moved on by the time
// a peer's report arrives, and sparse saving never saves most of them. Under sparse saving each
// simulation of a checksummed frame is staged (the driver's checksum probe), so the copy is the
// one the checksum was taken of.
//
// One exchange per peer (the first desync with it: later ones of a desynced match say nothing
// new), one blob at a time, paced like every transfer: inputs never wait for it. A state is
// taken only when its bytes give the checksum the peer announced (and, when we have it, the one
// it reported in the checksum exchange): anything else is dropped, logged and counted. A notice
// whose state does not start arriving within kDesyncNoticeTimeoutUs (a peer that announces and
// never sends, or a forgery) is forgotten: it pins no slot and takes no place for longer, and a
// state that comes without a notice (or larger than the cap) is not held either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/checksum.h"
#include "core/rollback_driver.h"
#include "net/byte_io.h"
#include "session/peer.h"

namespace retcon::detail {

// The blob tag of a desync state (state-transfer purposes are 1, 2, ...: never this).
inline constexpr uint32_t kDesyncStateTag = 0x44;  // 'D'

// The checksum peers compare: the state's own, with the digest of the timed decisions before the
// frame mixed in when there are any.
inline uint64_t desync_sum(uint64_t state_sum, uint64_t decisions_digest) noexcept {
  if (decisions_digest == 0) return state_sum;
  const uint64_t both[2] = {state_sum, decisions_digest};
  return xxh3_64(both, sizeof both);
}

// Stream 3, kind 1: "my state of `frame` follows as a blob" (docs/PROTOCOL.md).
struct DesyncStateNotice {
  Frame frame = kNullFrame;
  uint32_t size = 0;
  uint64_t sum = 0;     // the checksum compared (desync_sum of the state's and the digest)
  uint64_t digest = 0;  // the decisions digest before the frame (0: none)
};

inline constexpr size_t kDesyncNoticeSize = 25;
// How long a peer's notice waits for its state to start arriving (the state itself may take
// longer: while it arrives, the notice waits). A state that arrived waits as long for its notice.
inline constexpr uint64_t kDesyncNoticeTimeoutUs = 10000000;

inline size_t encode_desync_notice(const DesyncStateNotice& n, uint8_t* out) noexcept {
  ByteWriter w(out, kDesyncNoticeSize);
  w.u8(1);
  w.i32(n.frame);
  w.u32(n.size);
  w.u64(n.sum);
  w.u64(n.digest);
  return w.size();
}

// False for anything malformed: another kind, a wrong length, a negative frame, an empty state.
inline bool decode_desync_notice(const uint8_t* data, size_t size, DesyncStateNotice* out) noexcept {
  ByteReader r(data, size);
  DesyncStateNotice n;
  const uint8_t kind = r.u8();
  n.frame = r.i32();
  n.size = r.u32();
  n.sum = r.u64();
  n.digest = r.u64();
  if (r.failed() || r.remaining() != 0 || kind != 1 || n.frame < 0 || n.size == 0) return false;
  *out = n;
  return true;
}

class DesyncStates {
 public:
  // `cap`: the largest state sent or taken (<= max_state_size); `peers`: the player peers.
  // Allocates the kept slots and one receive buffer per player peer, counted against the memory
  // budget (out_of_memory beyond it).
  Result init(RollbackDriver& driver, size_t cap, int32_t interval, Peer* peers, uint32_t player_peers);
  bool enabled() const noexcept { return cap_ > 0; }
  size_t cap() const noexcept { return cap_; }

  // ---- keeping: the state of checksummed frame `frame` (sparse saving: every simulation of it;
  // otherwise the final one, at record time), then its checksum once it is final.
  void stage(Frame frame, const uint8_t* data, size_t size) noexcept;
  void record(Frame frame, uint64_t sum, uint64_t digest) noexcept;
  // A disconnect cut changed the inputs after `after`: those states are taken again.
  void forget_after(Frame after) noexcept;
  // Our kept state of `frame` (recorded), or null.
  const SavedState* kept(Frame frame) const noexcept;

  // ---- exchange. A peer's checksum of `frame` differs from ours: send it our state.
  void on_mismatch(uint32_t peer, Frame frame, uint64_t remote_sum) noexcept;
  // A stream-3 message of player peer `peer`.
  void on_message(uint32_t peer, const uint8_t* body, size_t size) noexcept;
  // A channel event of a player peer (events of other tags are not ours: ignored).
  void on_channel_event(uint32_t peer, const ChannelEvent& e) noexcept;
  // Player peer `peer` has a new connection (it rejoins, session/rejoin.h): the exchange with it
  // starts over (the old one ended when it left), and its channel takes desync states into our
  // buffer again (a rejoining machine lent the host's channel its state buffer meanwhile).
  void reconnect(uint32_t peer) noexcept;
  // Sends what waits for a free channel, hands complete exchanges to the game, and forgets
  // notices and states that waited too long (now_us: the session's clock).
  void poll(RollbackDriver& driver, uint64_t now_us) noexcept;

  uint64_t states_received() const noexcept { return received_; }
  uint64_t states_refused() const noexcept { return refused_; }
  // Per player peer, for PeerStats (kept across its reconnections).
  struct Counts {
    uint64_t received = 0, too_large = 0, mismatch = 0, unsolicited = 0, notices_expired = 0;
  };
  const Counts& counts(uint32_t peer) const noexcept { return counts_[peer < kMaxPlayers ? peer : 0]; }

 private:
  struct Slot {
    SavedState state;      // data: cap_ bytes of slots_memory_
    bool recorded = false;  // its checksum was taken: final
    uint64_t sum = 0, digest = 0;
    uint32_t pins = 0;      // a blob in flight or an exchange waiting for it: not reused
    uint64_t age = 0;       // when it was staged (the oldest unpinned slot is reused first)
  };
  // Per player peer. Usually one state each way (both sides see the desync at the same frame);
  // when checksum reports were lost the two sides may first see different frames, and each
  // answers the other's notice with its state of that frame too: at most two each way.
  static constexpr uint32_t kPerPeer = 2;
  struct Exchange {
    // Ours, in order: slots pinned until their blob is delivered (or refused).
    int32_t out_slot[kPerPeer] = {-1, -1};
    Frame out_frame[kPerPeer] = {kNullFrame, kNullFrame};
    uint32_t out_count = 0, out_next = 0;
    bool notice_sent = false, sending = false;
    // The peer's notices, and our state of each frame (pinned for the event).
    DesyncStateNotice notices[kPerPeer];
    int32_t notice_slot[kPerPeer] = {-1, -1};
    bool notice_done[kPerPeer] = {};
    uint64_t notice_at[kPerPeer] = {};  // when it came, or its state was last seen arriving
    uint32_t notice_count = 0;
    bool blob_in = false;  // a blob of ours arrived (the channel holds it until released)
    uint64_t blob_in_at = 0;
    // The peer's checksum reports of the frames that differed (the notice must agree).
    Frame report_frame[kPerPeer] = {kNullFrame, kNullFrame};
    uint64_t report_sum[kPerPeer] = {};
    uint32_t report_count = 0;
    bool gone = false;
  };

  Slot* find(Frame frame) noexcept;
  int32_t index_of(Frame frame) const noexcept;
  void pin(int32_t slot) noexcept {
    if (slot >= 0) ++slots_[slot].pins;
  }
  void unpin(int32_t& slot) noexcept {
    if (slot >= 0 && slots_[slot].pins > 0) --slots_[slot].pins;
    slot = -1;
  }
  void queue_send(Exchange& x, Frame frame) noexcept;
  void try_send(uint32_t peer, RollbackDriver& driver) noexcept;
  void try_finish(uint32_t peer, RollbackDriver& driver) noexcept;
  void emit(uint32_t peer, const DesyncStateNotice& n, int32_t mine, const uint8_t* data, size_t size,
            RollbackDriver& driver) noexcept;
  void forget(uint32_t peer) noexcept;
  void expire(uint32_t peer, RollbackDriver& driver) noexcept;

  size_t cap_ = 0;
  Peer* peers_ = nullptr;
  uint32_t player_peers_ = 0;
  std::unique_ptr<uint8_t[]> slots_memory_;
  std::unique_ptr<Slot[]> slots_;
  uint32_t slot_count_ = 0;
  uint64_t clock_ = 0;
  uint64_t now_us_ = 0;  // the session's clock at the last poll
  std::unique_ptr<uint8_t[]> receive_memory_;  // player_peers_ buffers of cap_ bytes
  Exchange exchanges_[kMaxPlayers];
  std::string text_local_, text_remote_;
  uint64_t received_ = 0, refused_ = 0;
  Counts counts_[kMaxPlayers];
};

}  // namespace retcon::detail
