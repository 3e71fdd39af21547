// retcon: peer-to-peer and spectator sessions over any Transport.
#pragma once

#include <cstdint>
#include <memory>

#include "retcon/session.h"
#include "retcon/transport.h"

namespace retcon {

enum class PlayerKind : uint32_t { local = 0, remote = 1 };

struct PlayerSetup {
  PlayerKind kind = PlayerKind::local;
  PeerAddress address;  // remote players: the peer machine (several players may share one)
};

struct NetworkConfig {
  Transport* transport = nullptr;          // not owned; must outlive the session
  uint32_t frame_rate = 60;                // checked by both sides in the handshake
  uint64_t notify_delay_us = 750000;       // silence before connection_interrupted (0 disables)
  uint64_t disconnect_timeout_us = 5000000;  // silence before a peer is dropped (0 disables)
  int32_t sync_round_trips = 5;            // handshake round trips before synchronized
  // Seed of the connection nonces and handshake challenges. 0 (the default, what a game should
  // use): fresh entropy from the operating system for every connection. Tests set one to get
  // the same run every time; a fixed seed lets a blind attacker predict nonces.
  uint64_t rng_seed = 0;
  // The match key (docs/SECURITY.md): 32 random bytes the lobby or matchmaker gives every
  // machine of one match. With has_match_key every datagram is authenticated and encrypted
  // (AES-256-GCM or ChaCha20-Poly1305), and only machines holding the same key can connect;
  // without it the session resists blind spoofing only. An all-zero key is refused.
  bool has_match_key = false;
  uint8_t match_key[32] = {};
  // Send policy (docs/NETWORKING.md). Inputs go out at once whenever a confirmation matters:
  // lockstep, a prediction window within two frames of full, a stalled frame, a link so slow
  // that a late datagram would not fit the peer's window, an input that changed, and (only
  // with loss_hold_frames > 0) a window half full while loss was seen in the last
  // `loss_hold_frames` frames. Only when none holds may up to `input_batch_frames` unchanged
  // frames share one datagram (1: always send each frame at once; 1..60). loss_hold_frames
  // defaults to 0 (off): at 50 ms +-8 and 5% loss it cost ~20% more bytes for no fewer stalls.
  uint32_t input_batch_frames = 2;
  uint32_t loss_hold_frames = 0;
  // A peer whose handshake has made no round trip for this long is given up (disconnected
  // event; the others start without it, or hear cannot_continue when nobody is left). Counted
  // from the last round trip, so a slow link that answers still gets through. 0 disables it: a
  // peer that never answers is then waited for forever.
  uint64_t handshake_timeout_us = 10000000;
  // State transfer (docs/NETWORKING.md "Late spectators"): a host sends a spectator that joins
  // a running match a recent confirmed saved state, which the spectator loads and plays on from,
  // instead of replaying the whole match from frame 0. Set it on the host to serve states and on
  // the spectator to ask for one (a host without it declines, and the spectator plays from
  // frame 0). Each side allocates one max_state_size buffer at create. Off by default.
  bool state_transfer = false;
  // The pace of a state on its way, per connection: the game's share of the link for transfers
  // (inputs always go first). 16 KiB/s..1 GiB/s; default 1 MiB/s.
  uint64_t transfer_bytes_per_second = 1u << 20;
};

// Adaptive input delay (P2PSession::choose_input_delay): rtt_percent of the median round trip to
// the peers, in frames (rounded), clamped to min_frames..max_frames. The defaults are the rule a
// shipped 4-player game uses at 60 Hz: half the median RTT, 2..4 frames.
struct AdaptiveDelayRule {
  uint32_t rtt_percent = 50;  // 1..400
  int32_t min_frames = 2;     // 0..32
  int32_t max_frames = 4;     // min_frames..32
};

struct P2PConfig {
  SessionConfig session;
  NetworkConfig network;
  PlayerSetup players[kMaxPlayers];        // the first session.num_players entries are used
  uint32_t num_spectators = 0;
  PeerAddress spectators[kMaxSpectators];  // machines this host streams confirmed inputs to
  // Desync detection: every `desync_interval` frames peers exchange the checksum of a frame
  // both have confirmed, and compare. 0 disables it. On by default.
  int32_t desync_interval = 30;
  // Both states on a desync (docs/NETWORKING.md): on the first desync with a peer, the two
  // machines send each other their saved state of that frame over the reliable channel (paced
  // like a state transfer: inputs never wait), and each game gets a desync_states event with
  // both states' bytes and descriptions. Needs desync_interval > 0, and the peer's flag too.
  // A state larger than desync_state_max_size (0: max_state_size; at most max_state_size) is
  // neither sent nor taken. Memory: about 2 to 16 kept states (the frames whose checksums peers
  // may still report) plus one receive buffer per remote machine, of that size each, allocated
  // at create and counted against memory_budget. Off by default.
  bool share_desync_states = false;
  size_t desync_state_max_size = 0;
  // A P2P session needs a remote player or a spectator: with neither (every player is local by
  // default) create refuses, since that is almost always a forgotten setting. Set this for a
  // session that deliberately runs alone.
  bool allow_local_only = false;
  // Late-input detection: a late_inputs event when a remote player's input arrives this many
  // frames later than the network explains (0: no events; the statistics are kept anyway).
  // 0..600. An honest peer stays far below 15 even on the worst links the simulator models.
  int32_t late_input_threshold = 15;
  // Automatic adaptive delay: the machine of the lowest-numbered player still in the match
  // applies `adaptive_delay_rule` (P2PSession::apply_input_delay) once the match runs and every
  // round trip is measured, and again whenever the game calls between_rounds() (every machine
  // may call it; only that machine acts). Off by default.
  bool adaptive_delay = false;
  AdaptiveDelayRule adaptive_delay_rule;
  // Rejoin (docs/NETWORKING.md "Rejoin"): a machine whose players were disconnected (agreed cut)
  // may come back into the running match from any address. Each request is told to the game
  // (event rejoin_requested, `player` the slot it claims) and goes ahead only once the game
  // accepts it (P2PSession::answer_rejoin). With a match key only a holder of the key can ask;
  // without one, the game's answer is the only gate (docs/SECURITY.md). Needs state_transfer
  // on the machine that hosts the rejoin. With it (and state_transfer) a running match whose
  // remote players are all gone is not "cannot_continue": the survivor plays on alone and they
  // may come back; the game decides how long it waits. Off by default: requests are dropped like
  // any stranger's datagram.
  bool allow_rejoin = false;
  // This session is a player machine coming back into a running match (its local players'
  // slots): it handshakes with the others, receives a confirmed state and the inputs since,
  // catches up and plays from the frame every machine agreed on (events player_rejoining and
  // player_rejoined). It runs (running(), add_local_input) once the state is loaded; its local
  // inputs before that frame are ignored. Needs state_transfer.
  bool rejoining = false;
};

struct SpectatorConfig {
  SessionConfig session;                   // num_players and input_size as the host's
  NetworkConfig network;
  PeerAddress host;
  // When more than this many confirmed frames wait, advance_frame runs extra frames (up to
  // catchup_max_frames per call) so the spectator catches up with the match.
  int32_t catchup_threshold = 8;
  int32_t catchup_max_frames = 3;
};

// Per remote peer (or spectator) numbers. All counts are exact since the session started.
struct PeerStats {
  uint32_t state;                 // 0 idle, 1 synchronizing, 2 running, 3 interrupted, 4 disconnected
  uint64_t ping_us;
  uint64_t jitter_us;
  uint32_t send_queue_length;     // our frames the peer has not acknowledged
  int32_t local_frames_ahead;     // how far our frame is ahead of the peer's (estimated now)
  int32_t remote_frames_ahead;    // the same, as the peer last reported it about us
  uint64_t bytes_sent, datagrams_sent, bytes_received, datagrams_received;
  uint64_t dropped_truncated, dropped_oversized, dropped_bad_magic, dropped_bad_version,
      dropped_unknown_type, dropped_malformed, dropped_bad_nonce, dropped_replayed,
      dropped_out_of_window, dropped_wrong_state;
  uint64_t send_failures;
  uint64_t dropped_bad_checksum;  // garbled in transit (or forged): checksum does not match
  // Late-input detection (remote players only; zero for spectators): per input frame of the
  // peer, how many frames later than the network explains it arrived (latency, jitter, clock
  // skew and two-way outages taken out; see docs/NETWORKING.md "Late inputs"). Buckets: 0,
  // 1-2, 3-4, 5-8, 9-15, 16-31, 32-63, 64 and more. An honest peer stays in the first buckets.
  uint64_t lateness_histogram[8];
  int32_t lateness_max_frames;    // the worst seen
  uint32_t late_input_events;     // late_inputs events raised for this peer
  // Both states on a desync (P2PConfig::share_desync_states on this machine; zero otherwise and
  // for spectators): the peer's desync states handed to the game (desync_states events), and
  // those refused, by reason (docs/NETWORKING.md "Both states on a desync"):
  uint64_t desync_states_received;
  uint64_t desync_states_refused_too_large;    // larger than our desync_state_max_size: no byte stored
  uint64_t desync_states_refused_mismatch;     // bytes that do not give the checksum the peer announced
                                               // or reported: forged, or another checksum function
  uint64_t desync_states_refused_unsolicited;  // not asked for: a state without its notice (for 10 s),
                                               // a notice beyond two, of a frame already noticed, or
                                               // malformed, or once the peer left
  uint64_t desync_notices_expired;             // notices whose state never started arriving (10 s)
};

struct DelayChoice {
  int32_t delay = 0;           // what the rule gives, frames
  int32_t previous = 0;        // the delay of our local players now (the first one's)
  uint64_t median_rtt_us = 0;  // the median it came from
  uint32_t peers = 0;          // round trips used (remote machines with a measured RTT)
  uint64_t rtt_us[kMaxPlayers] = {};  // per player: its machine's RTT (0: local or not measured)
  Frame frame = kNullFrame;    // apply_input_delay: the frame it takes effect on every machine
};

class P2PSession : public Session {
 public:
  // True once every peer finished the handshake; inputs are refused before (not_synchronized).
  virtual bool running() const = 0;
  // Remote players share a peer; `player` names any player of that peer. not_found otherwise.
  virtual Result peer_stats(PlayerIndex player, PeerStats* out) const = 0;
  virtual Result spectator_stats(uint32_t spectator, PeerStats* out) const = 0;
  // Time sync. When this machine runs ahead of a peer, it is advised to wait a few frames (also
  // told by a timesync event). The advice is used up as the game waits: every frame time that
  // passes without the frame advancing (a skipped tick, a stall) counts as one frame waited,
  // so a loop that skips ticks while frames_to_wait() > 0 stops waiting by itself. The advice is
  // filtered (jitter and single reports do not cause waits), capped, and 0 while the peers are
  // within a frame of each other. The simplest correct game loop asks once per tick:
  //   session->poll(now);
  //   if (!session->should_wait()) { add_local_input(...); advance_frame(); }
  // should_wait() spreads a wait of several frames over ticks that advance in between (one
  // skipped tick at a time), which players notice least.
  virtual int32_t frames_to_wait() const = 0;
  virtual bool should_wait() const = 0;
  // Catching up after a stall. Frames refused by the prediction window (a blackout, a peer that
  // froze) are owed, up to 30; while some are, and the window has room, this is true right after
  // a frame advanced: run one more frame in the same tick. At most one extra frame every other
  // frame time (1.5x speed), so both peers of a blackout regain the lost time side by side:
  //   if (!session->should_wait()) {
  //     add_local_input(...); advance_frame();
  //     if (session->should_catch_up()) { add_local_input(...); advance_frame(); }
  //   }
  // A game that never asks loses nothing but that time (the match ends later).
  virtual bool should_catch_up() const = 0;
  // Drop a remote player (and every player of that peer): peers agree on their last frame.
  virtual Result disconnect_player(PlayerIndex player) = 0;
  // Datagrams from addresses not in the session, dropped and counted.
  virtual uint64_t dropped_unknown_address() const = 0;
  // Desync reports received and compared so far (for tests and overlays).
  virtual uint64_t checksums_compared() const = 0;
  // Adaptive input delay: computes the delay `rule` gives for the round trips measured to the
  // remote machines now (dropped ones excluded), reports it with an input_delay_chosen event and
  // in `out`, and changes nothing: the game applies it (set_input_delay) between rounds, on
  // every machine at the same frame. invalid_argument for a bad rule or null `out`;
  // not_synchronized before any RTT is measured; unsupported for spectators.
  virtual Result choose_input_delay(const AdaptiveDelayRule& rule, DelayChoice* out) = 0;

  // Timed decisions: facts every machine must apply on the same frame (the round ends, the next
  // stage is X, a player is kicked). `size` bytes (1..kMaxDecisionSize) are handed to
  // advance_frame in FrameInputs::decisions every time `frame` is simulated, on every machine
  // and spectator, re-simulations included; they are part of the desync checksum. Any player
  // machine may send them (the game decides who: usually the host). `frame` must be at least
  // earliest_decision_frame() (after the local inputs already taken, plus the round trip to
  // the slowest peer), else input_out_of_window, with that frame in `*earliest` (may be null)
  // either way. At most 16 decisions of one machine are in flight (until their frame is about
  // two prediction windows plus 96 frames in the past): prediction_limit beyond, retry later.
  // invalid_argument for null bytes or a bad size, not_synchronized before running,
  // unsupported for spectators. Why every machine agrees: docs/PROTOCOL.md "Timed decisions".
  virtual Result send_decision(const void* bytes, size_t size, Frame frame, Frame* earliest) = 0;
  // The first frame send_decision accepts now (grows with the round trip to the slowest peer).
  virtual Frame earliest_decision_frame() const = 0;

  // Adaptive delay applied: chooses like choose_input_delay (and reports input_delay_chosen),
  // then sets every local player's input delay on every player machine from `frame` on
  // (kNullFrame: earliest_decision_frame()), through a timed message. Every machine raises
  // input_delay_applied when its frame reaches it: `frame` the frame it took effect here
  // (the same everywhere unless the message came later than that; then `checksum_remote` says
  // which frame was planned), `count` the new delay, `total` the old one, `checksum_local` the
  // median RTT, `text_local` the RTTs used, `player` the deciding machine's first player. Call
  // it between rounds (automatic mode: P2PConfig::adaptive_delay). Errors as choose_input_delay
  // and send_decision (`out->frame` says the frame).
  virtual Result apply_input_delay(const AdaptiveDelayRule& rule, Frame frame, DelayChoice* out) = 0;
  // Automatic adaptive delay: "a round is over". wrong_state without P2PConfig::adaptive_delay;
  // ok (doing nothing) on machines other than the deciding one.
  virtual Result between_rounds() = 0;
  // Rejoin (P2PConfig::allow_rejoin): the game's answer to a rejoin_requested event for
  // `player`'s slot. Refused: that address is ignored from then on, the match goes on. not_found
  // when no request for that player waits; unsupported for sessions without rejoin.
  virtual Result answer_rejoin(PlayerIndex player, bool accept) {
    (void)player;
    (void)accept;
    return Result::unsupported;
  }
};

Result create_p2p_session(const P2PConfig& config, std::unique_ptr<P2PSession>* out);
// A static sentence naming the first bad setting of `config` (session settings included), or
// null when create would accept it.
const char* validate_p2p_config(const P2PConfig& config) noexcept;
const char* validate_spectator_config(const SpectatorConfig& config) noexcept;

// A spectator: all players remote, confirmed inputs only (no prediction, never rolls back).
Result create_spectator_session(const SpectatorConfig& config, std::unique_ptr<P2PSession>* out);

}  // namespace retcon
