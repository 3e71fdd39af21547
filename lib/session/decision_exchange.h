// Timed decisions between the machines of a match: stamping, delivery, and the rule that makes
// every machine apply each decision on the same frame (docs/PROTOCOL.md "Timed decisions").
//
// The rule, in one line: a machine never sends its input of frame F to a player machine that
// has not acknowledged its decisions for frames <= F (per peer: one that stops acknowledging
// holds back only its own stream, the others do not see us stall); a host
// never streams frame F to a spectator before the spectator acknowledged the decisions of frames
// <= F (it forwards each decision as soon as it has it, so that wait is rare).
// Nobody confirms frame F without the sender's input of F, so every machine holds a decision
// before it can confirm its frame; a late one only costs a rollback (or, when it is later than
// the prediction window, a wait), never a divergence. A sender cut before a decision's frame
// may have sent it to some machines only: such a decision applies nowhere (the cut is agreed,
// so that is the same everywhere). Stamping a frame too close for the round trips is refused
// with the earliest frame that works, so the hold normally never happens.
#pragma once

#include <cstdint>

#include "core/rollback_driver.h"
#include "session/decision_queue.h"
#include "session/peer.h"

namespace retcon::detail {

// A machine has at most this many of its own decisions in flight (see DecisionExchange::send).
inline constexpr uint32_t kMaxDecisionsInFlight = kDecisionsPerSender / 2;
// The header of a decision message on channel stream 2: kind, sender, frame.
inline constexpr size_t kDecisionHeaderSize = 1 + 1 + 4;
inline constexpr uint8_t kDecisionKind = 1;
// A decision stamped further ahead than this (10 minutes at 60 Hz) is refused: it would sit in
// every machine's queue for that long.
inline constexpr Frame kMaxDecisionLead = 36000;
// A received decision or delay change may name a frame at most kMaxReceivedDecisionLead past the
// newest frame this machine knows of the match (its own frame, or the sender's newest input it
// holds): the sender's own limit plus how far an honest sender's frame can be ahead of that.
// Between players that is the prediction window and the input delay (<= 64 + 32); a host may be
// ahead of a spectator by the frames it has queued for it (at most 4096 unacknowledged) and its
// hold (600 frames). Anything further is a counted drop, never stored: a peer cannot park
// entries in our queue for days or send frames near INT32_MAX.
inline constexpr Frame kDecisionLeadSlack = 8192;
inline constexpr Frame kMaxReceivedDecisionLead = kMaxDecisionLead + kDecisionLeadSlack;
// Whether a received frame is further ahead than that of `known` (kNullFrame: nothing known yet,
// a machine waiting for a state, whose own frame says nothing of the match's: not judged now,
// see DecisionExchange::drop_too_far).
inline bool decision_frame_too_far(Frame frame, Frame known) noexcept {
  return known != kNullFrame && int64_t(frame) > int64_t(known < 0 ? 0 : known) + kMaxReceivedDecisionLead;
}
// Messages of a spectator's channel window that forwarded decisions leave free.
inline constexpr uint32_t kReservedForTransfer = 4;

size_t encode_decision(uint8_t* out, size_t capacity, PlayerIndex sender, Frame frame, const uint8_t* bytes,
                       size_t size) noexcept;
bool decode_decision(const uint8_t* body, size_t size, PlayerIndex* sender, Frame* frame, const uint8_t** bytes,
                     size_t* length) noexcept;

struct DecisionStats {
  uint64_t sent = 0, received = 0, forwarded = 0;
  uint64_t dropped = 0;  // malformed, from a player the peer does not own, or for a frame already final
  uint64_t too_far = 0;  // of those: further ahead than kMaxReceivedDecisionLead
};

class DecisionExchange {
 public:
  // `retention`: frames a decision is kept after its frame was confirmed (rollbacks of a late
  // disconnect cut and desync comparison reach that far back). `filter_cuts`: P2P machines
  // drop decisions of a sender cut before their frame; spectators apply what the host forwards.
  Result init(RollbackDriver& driver, int32_t retention, uint32_t per_sender);

  // ---- the sender
  // The first frame a new decision may name: after every local input taken so far, plus the
  // round trip (and jitter, and a frame) so that the acknowledgements are back before the
  // input of that frame is due.
  Frame earliest_frame(uint64_t rtt_us, uint64_t jitter_us, uint64_t frame_us) const noexcept;
  // Applies the decision here and queues it for every player peer still in the match.
  // input_out_of_window when `frame` is before earliest_frame() or too far ahead; prediction_limit
  // when kMaxDecisionsInFlight are in flight or a peer's channel is full (retry later).
  Result send(PlayerIndex me, Frame frame, const uint8_t* bytes, size_t size, Peer* peers, uint32_t player_peers,
              Frame earliest_frame) noexcept;
  // The first frame whose local input must not go to player peer `i` yet: its first own
  // decision that peer has not acknowledged (INT32_MAX: none held).
  Frame hold_from(const Peer* peers, uint32_t player_peers, uint32_t i) const noexcept {
    if (own_active_ == 0) return INT32_MAX;  // asked per peer every send: usually none in flight
    return hold_from_active(peers, player_peers, i);
  }
  // False when hold_from holds nothing from any peer (no own decision in flight).
  bool may_hold() const noexcept { return own_active_ != 0; }

  // A new connection to player peer `i` (a rejoining machine, session/rejoin.h): every own
  // decision still kept goes to it again, in sending order, and the hold counts only these
  // sends (the old connection's acknowledgements are void). The receiver drops those inside
  // its state. False when its channel could not take them all (logged by the caller).
  bool resend_own(uint32_t i, Peer& peer, PlayerIndex me) noexcept;
  // The rejoining machine, once its state of `frame` is loaded (see DecisionQueue::restart_at).
  void restart_at(Frame frame, uint64_t digest) noexcept { queue_.restart_at(frame, digest); }

  // ---- receivers
  // A stream-2 message from `peer`. For a player peer the sender must be one of its players.
  // `known`: the newest frame this machine knows of the match from the peer's side (see
  // decision_frame_too_far; kNullFrame while it waits for a state).
  void on_message(const Peer& peer, bool from_host, const uint8_t* body, size_t size, Frame known) noexcept;
  // Once a machine that waited for a state knows the match's frame: what arrived meanwhile
  // further ahead of `known` than a received decision may be is dropped and counted.
  void drop_too_far(Frame known) noexcept;

  // ---- spectators (hosts): sends every decision that applies to each spectator not gone, as
  // far as its channel takes them; then ready_to_stream() tells whether spectator `i` holds
  // (and has acknowledged) every decision of frames <= f.
  void forward(Peer* spectators, uint32_t count) noexcept;
  bool ready_to_stream(uint32_t i, const Peer& spectator, Frame f) const noexcept;

  // Drops what no rollback, comparison or spectator stream needs any more (frames before
  // `before`), and forgets own decisions whose frame is far enough behind `confirmed`.
  void retire(Frame before, Frame confirmed) noexcept {
    queue_.retire_before(before);
    if (own_active_ != 0) forget_own_before(confirmed);  // every frame: usually none in flight
  }

  uint64_t digest_before(Frame f) const noexcept { return queue_.digest_before(f); }
  bool any() const noexcept { return queue_.any_ever(); }
  const DecisionStats& stats() const noexcept { return stats_; }
  DecisionQueue& queue() noexcept { return queue_; }

 private:
  Frame hold_from_active(const Peer* peers, uint32_t player_peers, uint32_t i) const noexcept;
  void forget_own_before(Frame confirmed) noexcept;
  struct Own {
    bool active = false;
    Frame frame = kNullFrame;
    uint32_t seq[kMaxPlayers] = {};  // per player peer: the channel message number
    bool sent_to[kMaxPlayers] = {};
  };
  struct Forward {  // decisions sent to one spectator and not yet acknowledged
    struct Sent { Frame frame; uint32_t seq; };
    Sent sent[kChannelMessageWindow] = {};
    uint32_t head = 0, count = 0;
  };
  static bool applies(void* self, PlayerIndex sender, Frame frame);
  void count_too_far(PlayerIndex sender, Frame frame, Frame known, uint64_t n) noexcept;

  RollbackDriver* driver_ = nullptr;
  DecisionQueue queue_;
  Own own_[kMaxDecisionsInFlight];
  uint32_t own_active_ = 0;  // entries of own_ active (0, the usual case: nothing to hold or retire)
  Forward forward_[kMaxSpectators];
  int32_t retention_ = 0;
  DecisionStats stats_;
};

}  // namespace retcon::detail
