// retcon: one peer connection, sans-IO. An Endpoint turns datagrams into a reliable, ordered
// stream of fixed-size per-frame input blobs in each direction, plus the handshake, liveness
// (interrupted / disconnected), time-sync data, checksum reports and a disconnect notice.
//
// It never reads a clock or touches a socket: the owner passes the time in microseconds of
// any monotonic clock, hands it every datagram from the peer's address (on_datagram), and
// calls poll() each tick to let it send what is due through a Transport. Everything is
// preallocated by init(); steady-state traffic allocates nothing.
//
// Reliability: every inputs datagram carries all unacknowledged frames that fit (oldest
// first, delta-compressed), and the acknowledged frame rides on every inputs datagram and on
// input_ack. Loss costs nothing but a later datagram; no per-packet retransmit state exists.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "net/datagram_auth.h"
#include "net/prepared_inputs.h"
#include "net/quality_probe.h"
#include "net/random.h"
#include "net/replay_window.h"
#include "net/remote_frame_estimator.h"
#include "net/send_policy.h"
#include "net/silence_log.h"
#include "net/wire.h"
#include "retcon/callbacks.h"
#include "retcon/result.h"
#include "retcon/transport.h"

namespace retcon::detail {

// Receives the bodies of reliable-channel datagrams (lib/net/reliable_channel.h), which the
// endpoint opens (DatagramAuth), numbers and counts like every other message but does not read.
class ChannelSink {
 public:
  virtual ~ChannelSink() = default;
  virtual void on_channel(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) = 0;
};

struct EndpointConfig {
  SessionShape shape;               // must equal the peer's, or the handshake is rejected
  uint16_t players_owned = 0;       // bit i: we own player i (told to the peer)
  bool spectator = false;           // we are a spectator (told to the peer)
  // Bytes per frame we send (our local players x input size; 0 = we send no inputs) and
  // expect to receive (the peer's players x input size; a spectator receives all players).
  // They must mirror the peer's, or the handshake is rejected.
  uint16_t send_blob_size = 0;
  uint16_t receive_blob_size = 0;
  uint64_t notify_delay_us = 750000;         // silence before `interrupted`; 0: never
  uint64_t disconnect_timeout_us = 5000000;  // silence before `disconnected`; 0 disables both
  int32_t sync_round_trips = 5;              // handshake round trips before `synchronized`
  uint64_t handshake_retry_us = 200000;      // resend a handshake request unanswered this long
  uint64_t handshake_timeout_us = 0;         // give up (disconnected) after this; 0: never
  uint64_t keepalive_interval_us = 200000;   // send something at least this often
  uint64_t quality_interval_us = 500000;     // quality report (ping, frame advantage) period
  uint64_t resend_interval_us = 50000;       // resend unacked inputs when no new one is pending
  // Send policy (see net/send_policy.h): when nothing is urgent (set_urgent), no loss was seen
  // for loss_hold_frames and an input did not change, up to this many frames share one
  // datagram. 1: every frame goes out at once. 1..60.
  uint32_t input_batch_frames = 2;
  uint32_t loss_hold_frames = 0;
  uint32_t send_queue_frames = 256;          // initial unacked-frame ring; doubles when full
  uint32_t max_send_queue_frames = 4096;     // beyond this send_input fails
  // Received frames held. A frame at or beyond (next frame to pop + this) is not accepted
  // (nor acknowledged) until the owner pops more: the peer simply resends it later.
  uint32_t receive_window_frames = 256;
  // For the connection nonce, handshake challenges and handshake AEAD nonces. 0 (the default):
  // a fresh seed from the operating system's entropy at every init(). Tests set one to get the
  // same bytes on every run; a game should not (a blind attacker could then predict nonces).
  uint64_t rng_seed = 0;
  // The match key: with one, every datagram is authenticated and encrypted (DatagramAuth) and
  // both sides must hold the same key. An all-zero key is refused (a lobby that forgot to fill
  // it must not silently run unauthenticated).
  bool has_match_key = false;
  uint8_t match_key[kMatchKeySize] = {};
  bool allow_aes256gcm = true;  // offer AES-256-GCM when the CPU has it (false: ChaCha20 only)
  Logger logger;
};

// The most frames a peer's report may claim it is ahead of or behind what it can know (its frame
// advantage, its frame against the frames exchanged, a disconnected player's last frame, a
// checksum's frame). Far beyond any legitimate gap (prediction 64 + input delay 32); anything
// larger is a counted drop, never advice to wait that long.
inline constexpr int32_t kMaxFrameSkew = 256;

enum class EndpointState : uint8_t { idle, synchronizing, running, interrupted, disconnected };
const char* endpoint_state_name(EndpointState state) noexcept;

enum class EndpointEventType : uint8_t {
  synchronizing,       // count of total handshake round trips done
  synchronized,        // handshake complete: the endpoint runs
  interrupted,         // nothing heard for notify_delay_us; timeout_us until disconnected
  resumed,             // heard again after interrupted
  disconnected,        // timed out, or the peer sent a disconnect notice (by_peer)
  handshake_rejected,  // the peer's protocol version or session shape differs (reason)
};

// refused: the peer's verified reply says it refuses this connection (a refused rejoin).
enum class RejectReason : uint8_t { none, version, shape, refused };

struct EndpointEvent {
  EndpointEventType type;
  int32_t count = 0;
  int32_t total = 0;
  uint64_t timeout_us = 0;
  bool by_peer = false;
  RejectReason reason = RejectReason::none;
};

// Why a datagram was dropped. Unknown sender addresses are the owner's to count.
enum class DropReason : uint8_t {
  truncated,
  oversized,
  bad_magic,
  bad_version,
  bad_checksum,   // garbled: the datagram's checksum does not match its bytes
  unknown_type,
  malformed,      // a field out of range or inconsistent with the session (e.g. blob size)
  bad_nonce,      // not from this connection (or before the handshake named it)
  replayed,       // a sequence number already seen or too old to tell, or a stale reply
  out_of_window,  // frames that leave a gap or lie beyond the receive window, bogus acks
  wrong_state,    // e.g. anything after disconnection
  count_,
};
inline constexpr size_t kDropReasonCount = size_t(DropReason::count_);
const char* drop_reason_name(DropReason reason) noexcept;

struct EndpointStats {
  uint64_t ping_us = 0;            // smoothed round-trip time
  uint64_t jitter_us = 0;          // smoothed round-trip variation
  uint32_t send_queue_length = 0;  // frames sent but not acknowledged
  uint64_t bytes_sent = 0;
  uint64_t datagrams_sent = 0;
  uint64_t bytes_received = 0;     // everything handed to on_datagram, dropped or not
  uint64_t datagrams_received = 0;
  uint64_t dropped[kDropReasonCount] = {};
  uint64_t send_failures = 0;      // Transport::send errors
  uint64_t events_overflowed = 0;  // oldest events discarded because nobody popped them
  uint64_t checksums_overflowed = 0;
  uint64_t oversized_blobs = 0;    // polls where the oldest unacked blob alone did not fit
  // Reports riding on an inputs datagram that was taken (its frames stood) but failed their own
  // checks (an implausible report, a bogus reply, a checksum of a frame never sent).
  uint64_t riders_dropped = 0;
};

class Endpoint {
 public:
  Endpoint() = default;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Validates the config and preallocates. Result::invalid_argument names the field via the
  // logger. May be called again to reuse the endpoint for a new connection.
  Result init(const EndpointConfig& config);
  // Begins the handshake. Result::wrong_state unless init() succeeded and start() was not called.
  Result start(uint64_t now_us);

  // Hand over one datagram received from the peer's address. Never fails: bad datagrams are
  // dropped and counted in stats().dropped.
  void on_datagram(const uint8_t* data, size_t length, uint64_t now_us);
  // Check timeouts and send whatever is due to `to`. Returns Result::transport_error when a
  // send failed (counted; the protocol recovers by itself), else ok.
  // Inline: most polls of a running connection find nothing due (quiet_at), and the session
  // polls every endpoint every tick.
  Result poll(uint64_t now_us, Transport& transport, const PeerAddress& to) {
    return poll(now_us, transport, to, [this] { return urgent_; });
  }
  // The same with the owner's urgency asked only where a decision reads it: `urgency()` (a
  // bool, as set_urgent's first argument) is called at most twice and kept as set_urgent keeps
  // it, and only while frames are pending and unacknowledged, and then only when the send
  // policy would not send them without it (see reads_urgency). The stall is told before
  // (set_stalled): every poll may read it.
  template <class Urgency>
  Result poll(uint64_t now_us, Transport& transport, const PeerAddress& to, Urgency&& urgency) {
    if (!poll_quietly(now_us, urgency)) return poll_loudly(now_us, transport, to, urgency);
    return Result::ok;
  }
  // poll() in two steps, for an owner that has work of its own only when something may be due
  // (the session's pass: what a quality report carries, its channel, its flush). poll_quietly:
  // true when the poll at `now_us` has nothing to do (quiet_at; it took its mark and is done;
  // nothing is sent, no report falls due; one may wait to ride, riders_wait, and then only with
  // quiet_allowed() false). Otherwise false, having changed nothing a poll reads: poll_loudly is
  // then the rest of poll().
  template <class Urgency>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool poll_quietly(uint64_t now_us, Urgency&& urgency) {
    if (!quiet_at(now_us, urgency)) return false;
    now_ = now_us;
    remember_poll(now_us);
    return true;
  }
  template <class Urgency>
  Result poll_loudly(uint64_t now_us, Transport& transport, const PeerAddress& to, Urgency&& urgency) {
    if (reads_urgency()) urgent_ = urgency();
    return poll_full(now_us, transport, to);
  }
  // The same, called again at the time of the last poll() (a second send pass in one tick): only
  // what changed since (frames queued, urgency, status, checksums) is looked at; the timers,
  // reports and handshakes poll() already saw to. Any other time, or not running: poll().
  Result poll_again(uint64_t now_us, Transport& transport, const PeerAddress& to);
  // True when poll() last ran at `now_us`, completely, and the endpoint is running: a mark is
  // taken only while running, and every way out of running (init, a rejection, a disconnection)
  // drops it, so the state needs no look here.
  bool polled_at(uint64_t now_us) const noexcept { return polled_.valid && polled_.at_us == now_us; }
  // poll_again once polled_at(now_us) is known to hold (the session's pass asks first).
  // Inline for the usual call, a frame queued since the poll and nothing else to see to (it is
  // unacknowledged and not yet sent, the peer was not silent, no report, reply or checksum
  // waited its patience out): poll_changed would then ask only the send policy, and send
  // nothing else (riders not yet late ride on the inputs datagram if one goes, and wait
  // otherwise; only late ones would go alone). Held back (no acknowledgement overdue either),
  // the mark is all; sent, send_pending. Any other call: poll_changed. The kept quiet byte
  // (quiet_allowed_: no rider waits, the peer did not speak again) answers the last two
  // questions when set, as it usually is.
  Result poll_polled_again(uint64_t now_us, Transport& transport, const PeerAddress& to) {
    return poll_polled_again(now_us, transport, to, [this] { return urgent_; });
  }
  // The same with the urgency asked as poll() with it asks.
  template <class Urgency>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Result poll_polled_again(uint64_t now_us, Transport& transport, const PeerAddress& to, Urgency&& urgency) {
    if (last_sent_ != polled_.last_sent && last_sent_ > last_acked_ && last_sent_ > last_flushed_ &&
        (quiet_allowed_ ||
         (!spoke_again_ && !(riders_waiting() && now_us >= riders_waiting_since() + rider_patience_us())))) {
      if (inputs_due_or_urgent(now_us, urgency)) return send_pending(now_us, transport, to);
      // Not due, so no acknowledgement is overdue either (one would send the frames).
      if (!ack_due_ || config_.send_blob_size != 0) {
        now_ = now_us;
        remember_poll(now_us);
        return Result::ok;
      }
    }
    if (reads_urgency()) urgent_ = urgency();
    return poll_changed(now_us, transport, to);
  }

  // --- outgoing inputs: frames consecutive from 0, send_blob_size bytes each.
  // invalid_argument for a gap, a repeat, or a null blob; wrong_state when disconnected;
  // input_out_of_window when max_send_queue_frames frames are unacknowledged.
  // Inline at the call: the usual frame (an input of 4 to 8 bytes, the next one in order, room in
  // the queue, the run up to date, not the first slot of the ring) is queued here with the same
  // checks and the same effect as send_input_general, which takes every other case.
  // The set-up, the state, the order, the queue's room and the ring's wrap are asked of the kept
  // usual frame (usual_frame_, usual_end_: refresh_usual_send), the run being up to date of the
  // run itself.
  __attribute__((always_inline)) Result send_input(Frame frame, const uint8_t* blob) {
    const size_t size = config_.send_blob_size;
    if (frame != usual_frame_ || frame >= usual_end_ || blob == nullptr || prepared_.next() != frame)
      return send_input_general(frame, blob);
    uint8_t* const slot = usual_slot_;
    // No instruction: it only hides where `blob` points, so that a caller's array shorter than 4
    // bytes (for an endpoint of smaller inputs, which never comes here) is no -Warray-bounds.
    asm("" : "+r"(blob));
    // Against the slot before (the frame before's input), then into its slot: 4 to 8 bytes as
    // two words each (overlapping below 8), in registers, whatever the caller inlines around.
    uint32_t in0, in1, was0, was1;
    std::memcpy(&in0, blob, 4);
    std::memcpy(&in1, blob + size - 4, 4);
    std::memcpy(&was0, slot - size, 4);
    std::memcpy(&was1, slot - 4, 4);
    std::memcpy(slot, &in0, 4);
    std::memcpy(slot + size - 4, &in1, 4);
    if (((in0 ^ was0) | (in1 ^ was1)) == 0) {
      prepared_.append_unchanged(size);  // when the run is full, prepare_run catches up later
    } else {
      queue_changed(slot, size);
    }
    last_sent_ = frame;
    usual_frame_ = frame + 1;  // below usual_end_, so below the largest frame
    usual_slot_ = slot + size;
    return Result::ok;
  }
  Result send_input_general(Frame frame, const uint8_t* blob);
  Frame last_sent_frame() const noexcept { return last_sent_; }
  // State transfer: the outgoing stream starts over at `frame` (the receiver loads that
  // frame's state); send_input continues with `frame`. Frames queued before are dropped.
  void restart_outgoing_at(Frame frame) noexcept;
  Frame last_acked_frame() const noexcept { return last_acked_; }

  // --- incoming inputs, in order, each frame once.
  Frame last_received_frame() const noexcept { return last_received_; }
  // The blob of `frame` while it is held (the newest receive_window_frames), else null.
  const uint8_t* received_input(Frame frame) const noexcept {
    if (frame < in_base_ || frame > last_received_ ||
        frame <= last_received_ - Frame(config_.receive_window_frames)) {
      return nullptr;
    }
    return receive_ring_.data() +
           size_t(uint32_t(frame) % config_.receive_window_frames) * config_.receive_blob_size;
  }
  // The next frame not yet popped. `*blob` stays valid until the next on_datagram().
  bool pop_input(Frame* frame, const uint8_t** blob) noexcept {
    if (next_pop_ > last_received_ || frame == nullptr || blob == nullptr) return false;
    *frame = next_pop_;
    *blob = received_input(next_pop_);
    ++next_pop_;
    if (++pop_index_ == config_.receive_window_frames) pop_index_ = 0;
    return true;
  }
  // The frames pop_input would hand next, as one run of the receive ring: their count (up to the
  // newest frame held or the ring's end; 0 when none), the first one's frame and blob (the
  // others' follow, receive_blob_size bytes apart). pop_inputs(n) then pops the first n of them.
  // Both inline: the session drains every poll. Every frame from next_pop_ to last_received_ is
  // held (received_input is not null for any): the stream starts with both at in_base_
  // (restart_incoming_at, init), next_pop_ only rises and never past last_received_ + 1, and a
  // frame is stored only below next_pop_ + receive_window_frames (take_usual_inputs,
  // handle_inputs). So only "anything held?" is asked, and the ring index is kept (pop_index_).
  uint32_t peek_inputs(Frame* frame, const uint8_t** blob) const noexcept {
    const Frame next = next_pop_;
    if (next > last_received_) return 0;
    const uint32_t index = pop_index_;
    *frame = next;
    *blob = receive_ring_.data() + size_t(index) * config_.receive_blob_size;
    const uint32_t held = uint32_t(last_received_ - next) + 1;
    const uint32_t to_end = config_.receive_window_frames - index;
    return held < to_end ? held : to_end;
  }
  void pop_inputs(uint32_t count) noexcept {
    next_pop_ += Frame(count);
    pop_index_ += count;  // at most the run to the ring's end (peek_inputs)
    if (pop_index_ >= config_.receive_window_frames) pop_index_ -= config_.receive_window_frames;
  }
  // The session's one-call drain: the blob of `first` when the frames first..last are held as
  // one run of the receive ring that starts at the next frame to pop (first is next_pop(), last
  // at most the newest frame received, the run not past the ring's end), else null; the others'
  // blobs follow, receive_blob_size bytes apart, and pop_inputs(last - first + 1) pops them.
  // The caller knows the count already (the driver's next frame to the newest received), so
  // this asks only whether the ring holds them so. Frames first..last_received_ are all held
  // (see peek_inputs), and last - first is below the window there: an unsigned compare.
  const uint8_t* held_run(Frame first, Frame last) const noexcept {
    if (first != next_pop_ || last > last_received_) return nullptr;
    // last < first wraps to a huge count: refused too.
    if (uint32_t(last - first) >= config_.receive_window_frames - pop_index_) return nullptr;
    return receive_ring_.data() + size_t(pop_index_) * config_.receive_blob_size;
  }
  // The ring index of the next frame to pop (next_pop_ modulo the window), kept by the pops;
  // public for the test that compares it after every call.
  uint32_t pop_index() const noexcept { return pop_index_; }
  Frame next_pop() const noexcept { return next_pop_; }
  // State transfer, receiving side: pause_receive() before asking for a state (no frame is
  // stored or acknowledged, so the peer's old stream never moves past frame 0), then
  // restart_incoming_at(frame) when the peer says where its new stream starts (or at 0 to take
  // the stream from the start after all). Both resume receiving.
  // Whether the usual inputs datagram may take the straight path now (take_usual_inputs), from
  // the connection's state; usual_receive() is the byte on_datagram keeps of it, public with
  // usual_receive_now() for the test that compares them after every call. Not while interrupted
  // (the general path's on_accepted resumes the connection), and only with a receive window of
  // kUsualWindow frames or more (a datagram's frames, fewer, then never reach back past it).
  static constexpr uint32_t kUsualWindow = 128;
  bool usual_receive_now() const noexcept {
    return !general_receive_ && remote_nonce_ != 0 &&
           (state_ == EndpointState::synchronizing || state_ == EndpointState::running) &&
           !auth_.keyed() && !receive_paused_ && remote_hello_.shape.num_players != 0 &&
           size_t(config_.receive_blob_size) - 1 < kMaxBlobSize && config_.receive_window_frames >= kUsualWindow;
  }
  bool usual_receive() const noexcept { return usual_receive_; }
  // Tests: every datagram takes the general path (on_other_datagram: the public header, the
  // message's decode, the type's handling), for the tests that compare the usual paths with it.
  void set_general_receive(bool general) noexcept {
    general_receive_ = general;
    refresh_usual_receive();
  }
  // take_usual_inputs' tests of a datagram's frames (ack, first..end_frame: from a varint of at
  // most three bytes and a count below 128, far from the ends of the range), `last` and `window`
  // being last_received_ and the receive window: an acknowledgement we can have (kNullFrame ..
  // last_sent_), something new inside the window (last < end_frame <= next_pop_ + window - 1),
  // and the first new frame's reference held with no gap before it (first <= last + 1, and first
  // is the stream's first frame or first - 1 >= in_base_ and first - 1 > last - window).
  // usual_frames_fit_general asks it test by test. usual_frames_fit asks it in four compares, on
  // the receive ring's invariants (in_base_ - 1 <= last <= next_pop_ + window - 1, see
  // peek_inputs) and the usual path's window (kUsualWindow or more): the frames held before the
  // first new one, last + 1 - first, are fewer than the count (no gap, something new), so fewer
  // than the window (the reference is held once first >= in_base_), and end_frame is at least
  // next_pop_. Public for the test that compares the two.
  bool usual_frames_fit(Frame ack, Frame first, Frame end_frame, Frame last, Frame window) const noexcept {
    const uint32_t held = uint32_t(last) + 1u - uint32_t(first);
    return held < uint32_t(end_frame - first) + 1u && uint32_t(end_frame) - uint32_t(next_pop_) < uint32_t(window) &&
           first >= in_base_ && uint32_t(ack) + 1u <= uint32_t(last_sent_) + 1u;
  }
  bool usual_frames_fit_general(Frame ack, Frame first, Frame end_frame, Frame last, Frame window) const noexcept {
    return !(ack < kNullFrame || ack > last_sent_ || end_frame <= last || int64_t(end_frame) > int64_t(next_pop_) + window - 1 ||
             first > last + 1 || (first != in_base_ && (first - 1 < in_base_ || first - 1 <= last - window)));
  }
  // Whether quiet_at may answer "nothing to do" at all, from the connection's state: running, no
  // handshake reply owed (the peer's or strangers'), the peer not just back from a silence, no
  // player disconnected, no rider waiting, something sent already (else a keep-alive is due).
  // quiet_allowed() is the byte kept of it (refresh_quiet), public with quiet_allowed_now() for
  // the test that compares them after every call. The sequence limit is not in it (next_sequence_
  // moves with every datagram): quiet_at asks that apart.
  bool quiet_allowed_now() const noexcept {
    return state_ == EndpointState::running && !peer_reply_due_ && stranger_count_ == 0 && !spoke_again_ &&
           !any_disconnected_ && !riders_waiting() && sent_anything_;
  }
  bool quiet_allowed() const noexcept { return quiet_allowed_; }
  // The connection's state quiet but for riders waiting (a report, a reply, checksums), none of
  // which waited its patience out at `now_us`: poll_full sends none of them before (send_inputs_due
  // adds them to a resend only once late, send_riders_due sends them alone only then), so
  // quiet_at's other questions decide as for an endpoint without riders. After a quiet answer
  // with the byte false, a report may be waiting: its owner tells it what it carries
  // (set_local_frame) as before a loud poll. Out of line: inlined in quiet_at it cost the usual
  // poll more than the call costs the polls with riders (p2p 2 64: -2, 8 peers -9).
  [[gnu::noinline]] bool riders_wait(uint64_t now_us) const noexcept {
    return state_ == EndpointState::running && !peer_reply_due_ && stranger_count_ == 0 && !spoke_again_ &&
           !any_disconnected_ && sent_anything_ && riders_waiting() &&
           now_us < riders_waiting_since() + rider_patience_us();
  }
  // Whether send_input may queue a frame inline at all, from the endpoint's set-up and state:
  // initialized, not disconnected, inputs of 4 to 8 bytes. usual_queue() is the byte kept of it
  // (init and set_state refresh it), public with usual_queue_now() for the test that compares
  // them after every call.
  bool usual_queue_now() const noexcept {
    return initialized_ && state_ != EndpointState::disconnected && size_t(config_.send_blob_size) - 4 <= 4;
  }
  bool usual_queue() const noexcept { return usual_queue_; }
  // Tests: every riding datagram takes gather_riders' path (not take_usual_rider's), to compare.
  void set_general_riders_for_tests(bool on) noexcept { general_riders_for_tests_ = on; }
  void pause_receive() noexcept {
    receive_paused_ = true;
    refresh_usual_receive();
  }
  bool receive_paused() const noexcept { return receive_paused_; }
  void restart_incoming_at(Frame frame) noexcept;

  // --- connection status of every player, as this side sees it and as the peer reports it.
  // Inline, as the two above: the session calls them per frame and per send pass.
  void set_local_connect_status(const ConnectStatus* status, uint32_t count) noexcept {
    if (status == nullptr) return;
    const uint32_t n = count < uint32_t(kMaxPlayers) ? count : uint32_t(kMaxPlayers);
    bool any = false;
    for (uint32_t i = 0; i < n; ++i) {
      local_status_[i] = status[i];
      any |= status[i].disconnected;
    }
    any_disconnected_ = any;
    refresh_quiet();
    // Every entry the inputs datagrams carry, those beyond `count` included (kept from before).
    uint32_t sent = 0;
    for (uint32_t i = 0; i < config_.shape.num_players && i < uint32_t(kMaxPlayers); ++i)
      sent |= uint32_t(local_status_[i].disconnected) << i;
    status_disconnected_ = sent != 0;
  }
  // Inline: the session asks for every player of every peer each poll.
  const ConnectStatus& remote_connect_status(PlayerIndex player) const noexcept {
    static constexpr ConnectStatus kNone{};
    if (player < 0 || player >= kMaxPlayers) return kNone;
    return remote_status_[player];
  }
  // False while the peer never reported any player disconnected (remote_connect_status is then
  // connected for all): the session's per-datagram question, answered without asking per player.
  bool remote_reported_cut() const noexcept { return remote_reports_cut_; }
  // Rejoin: `player` plays again from `floor` + 1. The peer's report of it starts over
  // (connected), and reports of it disconnected before `floor` (its old cut, in datagrams sent
  // before the peer knew) are ignored from now on.
  void rejoin_remote_player(PlayerIndex player, Frame floor) noexcept;

  // --- send policy: the owner says whether confirmations matter now (see net/send_policy.h).
  // `stalled`: the owner cannot advance (its window is full): unacknowledged frames are then
  // resent every frame time instead of every resend_interval_us.
  void set_urgent(bool urgent, bool stalled = false) noexcept {
    urgent_ = urgent;
    stalled_ = stalled;
  }
  // The urgency is read only by the send policy's inputs answer, which is asked only while
  // frames are pending (queued since the last inputs datagram) and unacknowledged; the stall,
  // by the resend timer, in every poll. poll and poll_polled_again with an urgency callable
  // ask it only then (and only when the policy's other reasons do not send the frames anyway):
  // the urgency kept from before decides nothing otherwise. (poll_again's look at what changed
  // since the poll at the same time may then see it unchanged where it did change, or changed
  // where it did not: with nothing that reads it, it decides nothing either way.)
  bool reads_urgency() const noexcept { return last_sent_ > last_flushed_ && last_sent_ > last_acked_; }
  void set_stalled(bool stalled) noexcept { stalled_ = stalled; }
  // True while loss was seen recently (everything then goes out at once).
  // Inline: the session asks in every send pass while its window is half full.
  bool loss_recent(uint64_t now_us) const noexcept {
    return now_us < loss_recent_until_;
  }

  // --- time sync. The owner tells its frame and advantage; they go out in quality reports.
  void set_local_frame(Frame frame, int32_t frame_advantage) noexcept;
  // True when a quality report waits or falls due at `now_us`: only a report carries what
  // set_local_frame tells, and one can go only after a poll at or after that time saw it due.
  bool report_may_go(uint64_t now_us) const noexcept { return report_due_ || now_us >= next_quality_at_; }
  uint64_t ping_us() const noexcept { return srtt_us_; }
  uint64_t jitter_us() const noexcept { return jitter_us_; }
  Frame remote_frame() const noexcept { return remote_frame_; }
  int32_t remote_frame_advantage() const noexcept { return remote_advantage_; }
  // When the last quality report arrived (0: none yet).
  uint64_t remote_report_at() const noexcept { return remote_report_at_; }
  // When the last datagram that passed every check arrived (a sign of life of any kind).
  uint64_t last_received_at() const noexcept { return last_received_at_; }
  // Our latest silence from the peer and the peer's latest note of its own silence from us
  // (late-input detection: net/silence_log.h).
  const SilenceLog& silences() const noexcept { return silences_; }
  // How soon after the previous datagram one that passed every check can end no silence: neither
  // the peer silent (peer_silent: more than resend_interval_us + 4 frames + twice the jitter) nor
  // a silence to log (SilenceLog::kMinGapUs). Accepting a datagram sooner than that skips both
  // tests (one compare). Bounded, so adding it to a time cannot wrap. Public for its test.
  static constexpr uint64_t quiet_gap_us(uint64_t resend_interval_us, uint64_t frame_us) noexcept {
    const uint64_t silent = (resend_interval_us < SilenceLog::kMinGapUs ? resend_interval_us : SilenceLog::kMinGapUs) +
                            4 * (frame_us < SilenceLog::kMinGapUs ? frame_us : SilenceLog::kMinGapUs) + 1;
    return silent < SilenceLog::kMinGapUs ? silent : SilenceLog::kMinGapUs;
  }
  // The peer's frame now, from what it did: its newest input minus its input delay, plus the
  // one-way trip while its inputs flow (see RemoteFrameEstimator). kNullFrame before a report.
  // Inline: the session asks every send pass and every frame.
  // Its terms that change only with the round trip are kept (estimate_terms_, refreshed by init
  // and every round-trip sample).
  Frame estimated_remote_frame(uint64_t now_us) const noexcept {
    return remote_estimate_.estimate_reaching(last_received_, now_us, estimate_terms_.reach_us,
                                              estimate_terms_.patience_us, frame_us_);
  }
  // The same from the round trip as it is now, and whether the kept terms are what it gives
  // (the test compares them after every call).
  Frame estimated_remote_frame_now(uint64_t now_us) const noexcept {
    return remote_estimate_.estimate(last_received_, now_us, srtt_us_ / 2, input_patience_us(), frame_us_);
  }
  bool estimate_terms_current() const noexcept {
    return estimate_terms_.reach_us == srtt_us_ / 2 + frame_us_ / 2 && estimate_terms_.patience_us == input_patience_us() &&
           estimate_terms_.loss_after_us == srtt_us_ + 2 * jitter_us_ + 2 * frame_us_;
  }

  // --- checksum reports (unreliable: sent once; a lost one only skips one comparison).
  Result send_checksum(Frame frame, uint64_t checksum);
  bool pop_checksum(Frame* frame, uint64_t* checksum) noexcept;

  // --- the reliable channel beside the inputs. Without a sink, channel datagrams are dropped
  // (unknown_type), as a peer without the channel would. send_channel seals and sends one body
  // at once (call it after poll(), so the tick's inputs go first); wrong_state unless running,
  // invalid_argument for another type, an empty body or one that does not fit a datagram.
  void set_channel_sink(ChannelSink* sink) noexcept { channel_sink_ = sink; }
  Result send_channel(MessageType type, const uint8_t* body, size_t size, Transport& transport,
                      const PeerAddress& to);
  // The largest body send_channel takes (less with a match key: the AEAD's overhead).
  size_t max_channel_body() const noexcept;

  // Tell the peer we leave: the state becomes disconnected, the next poll sends the notice.
  void send_disconnect() noexcept;

  // --- state and events.
  EndpointState state() const noexcept { return state_; }
  bool running() const noexcept {
    return state_ == EndpointState::running || state_ == EndpointState::interrupted;
  }
  int32_t sync_progress() const noexcept { return sync_done_; }
  // Handshakes of another protocol version arrived (unverifiable, so never acted on at once):
  // a session giving up on a handshake reports a version mismatch instead of a timeout.
  bool saw_other_version() const noexcept { return saw_other_version_; }
  int32_t sync_total() const noexcept { return config_.sync_round_trips; }
  RejectReason reject_reason() const noexcept { return reject_reason_; }
  // What the peer said about itself in the handshake (valid once one arrived).
  const Handshake& remote_handshake() const noexcept { return remote_hello_; }
  // The AEAD protecting data messages (none without a key, or before the peer is verified).
  AeadAlgorithm aead_algorithm() const noexcept { return auth_.algorithm(); }
  uint32_t local_nonce() const noexcept { return local_nonce_; }
  bool pop_event(EndpointEvent* event) noexcept;
  // Inline: the session asks every poll, and most polls no event waits.
  bool has_event() const noexcept { return event_count_ != 0; }
  EndpointStats stats() const noexcept;
  uint64_t datagrams_received() const noexcept { return stats_.datagrams_received; }
  // Every datagram handed to the transport so far (the session flushes only after sends).
  uint64_t datagrams_sent() const noexcept { return stats_.datagrams_sent; }

 private:
  static constexpr size_t kEventCapacity = 64;
  static constexpr size_t kChecksumCapacity = 32;
  static constexpr int kDisconnectNotices = 3;  // copies, since nobody will resend it
  // A connection ends before its sequence numbers (the AEAD nonces) could repeat (poll).
  static constexpr uint32_t kLastSequence = 0xFFFFFF00u;

  void push_event(const EndpointEvent& event) noexcept;
  void drop(DropReason reason) noexcept;
  void reject(RejectReason reason) noexcept;
  void become_disconnected(bool by_peer) noexcept;
  bool compatible(const Handshake& remote) const noexcept;
  void handle_request(const Message& message, bool from_peer, uint64_t now_us) noexcept;
  bool handle_reply(const Message& message, uint64_t now_us) noexcept;
  bool plausible_report(const QualityReport& report) const noexcept;
  // on_datagram's two paths: the usual inputs datagram (take_usual_inputs, which hands any other
  // inputs datagram to on_inputs_datagram), and every other (see there).
  // Both out of line: on_datagram hands over to them by tail calls, and inlined there their
  // saved registers would cost the usual datagram's way through it.
  [[gnu::noinline]] void on_inputs_datagram(const uint8_t* data, size_t length, uint32_t sequence, uint64_t now_us);
  // kBlob: the receive blob size as a constant (4), or 0 (config_ says).
  template <size_t kBlob>
  void take_usual_inputs(const uint8_t* data, size_t length);
  void hand_over_inputs(const uint8_t* data, size_t length);
  [[gnu::noinline]] void on_other_datagram(const uint8_t* data, size_t length, uint64_t now_us);
  void on_accepted(uint32_t sequence, uint64_t now_us) noexcept;
  void accept_riding(const Riders& riders, uint64_t now_us) noexcept;
  void accept_next(uint64_t now_us) noexcept;
  void heard_after(uint64_t now_us) noexcept;
  void heard_after_gap(uint64_t now_us) noexcept;
  // usual_receive_ from what it stands for: called wherever one of those changes (set_state for
  // the state).
  void refresh_usual_receive() noexcept { usual_receive_ = usual_receive_now(); }
  // quiet_allowed_ from what it stands for: called wherever one of those changes (set_state for
  // the state). Where a change surely makes it false (a reply owed, a rider queued, the peer
  // back from a silence) it is simply cleared (not_quiet). The two written with every datagram
  // (sent_anything_, spoke_again_) are written only when they change (note_sent, note_spoke).
  void refresh_quiet() noexcept { quiet_allowed_ = quiet_allowed_now(); }
  // quiet_at once a report falls due and no other timer is: the first thing poll_full does then
  // (no silence limit reached, no reply owed), done here as there; the report then waits to ride
  // like any rider (riders_wait). False, as quiet_at, where poll_full has more to do. Out of
  // line: once every quality interval.
  [[gnu::noinline]] bool report_rides(uint64_t now_us) noexcept {
    if (report_due_) return false;  // one waits already: poll_full's question is not this one
    report_falls_due(now_us);
    return riders_wait(now_us);
  }
  // Time for a quality report (poll_full, or quiet_at at the same point of its questions): it
  // waits to ride, the next one an interval later.
  void report_falls_due(uint64_t now_us) noexcept {
    report_due_ = true;
    not_quiet();  // a rider waits
    report_due_since_ = now_us;
    next_quality_at_ = now_us + config_.quality_interval_us;
  }
  void refresh_usual_queue() noexcept {
    usual_queue_ = usual_queue_now();
    refresh_usual_send();
  }
  // usual_frame_, usual_end_ and usual_slot_ from the queue as it is: called wherever the set-up,
  // the state, the newest frame queued, the stream's start or the ring change (send_input keeps
  // them itself for the frame it queues). The acknowledgement only grows between those (it moves
  // usual_end_ on, never back): kept as it was, the end is at worst early, where
  // send_input_general queues the frame and works them out again.
  void refresh_usual_send() noexcept;
  void not_quiet() noexcept { quiet_allowed_ = false; }
  void set_state(EndpointState state) noexcept {
    state_ = state;
    refresh_usual_receive();
    refresh_quiet();
    refresh_usual_queue();
  }
  // A datagram went out: sent_anything_ is set once per connection (the first one).
  void note_sent() noexcept {
    if (!sent_anything_) {
      sent_anything_ = true;
      refresh_quiet();
    }
  }
  // An inputs datagram answers the peer that spoke again after a silence (spoke_again_ cleared).
  void note_spoke() noexcept {
    if (spoke_again_) {
      spoke_again_ = false;
      refresh_quiet();
    }
  }
  // False when the message was dropped (and counted).
  bool handle(const Message& message, uint64_t now_us);
  bool handle_inputs_message(const InputsBody& body, uint64_t now_us);
  bool handle_inputs(const InputsBody& body);
  bool take_statuses(const InputsBody& body) noexcept;
  // Reports, replies and checksum reports, alone or `riding` on an inputs datagram. False when
  // dropped (and counted: in `dropped` when alone, in riders_dropped when riding).
  void drop_report(DropReason reason, bool riding) noexcept;
  bool handle_report(const QualityReport& report, uint64_t now_us, bool riding) noexcept;
  bool handle_quality_reply(const QualityReply& reply, uint64_t now_us, bool riding) noexcept;
  bool handle_checksum(const ChecksumReport& report, bool riding) noexcept;
  void handle_riders(const Riders& riders, uint64_t now_us) noexcept {
    if (!riders.empty()) handle_waiting_riders(riders, now_us);  // most datagrams carry none
  }
  void handle_waiting_riders(const Riders& riders, uint64_t now_us) noexcept;
  // Riders waiting to go (a report, a reply, checksums), when the oldest began to wait, and how
  // long they may wait for an inputs datagram before they go alone.
  bool riders_waiting() const noexcept {
    return report_due_ || probe_.reply_due() || outgoing_checksum_count_ > 0;
  }
  uint64_t riders_waiting_since() const noexcept;
  uint64_t rider_patience_us() const noexcept;
  // What is waiting, up to what one datagram carries; taken (no longer waiting) once written.
  size_t riders_size() const noexcept;
  void take_riders(Riders* riders, uint64_t now_us) noexcept;
  Result send_riders_alone(Transport& transport, const PeerAddress& to, uint64_t now_us);
  void want_ack() noexcept;
  bool handle_ack(Frame ack) noexcept;
  void handle_rtt_sample(uint64_t rtt_us) noexcept;
  uint64_t input_patience_us() const noexcept {
    // Inputs may pause a batch, a lost datagram until the next and the jitter before the peer
    // counts as stalled.
    return (config_.input_batch_frames + 2) * frame_us_ + 2 * jitter_us_;
  }
  bool peer_silent(uint64_t now_us) const noexcept;
  Handshake local_hello(uint64_t challenge) const noexcept;
  Header next_header(MessageType type) noexcept;
  Result send(Transport& transport, const PeerAddress& to, size_t length);
  // send() for the data message just built in datagram_ (next_header drew its sequence).
  Result send_data(Transport& transport, const PeerAddress& to, size_t length);
  Result send_reply(Transport& transport, const PeerAddress& to, uint64_t challenge);
  Result send_message(Transport& transport, const PeerAddress& to, const Message& message);
  // The inputs datagram due now: the usual one (see there) built here, every other by
  // send_inputs_general (out of line: its frame, the InputsWriter and the riders, stays off the
  // usual path).
  // Out of line for the polls' sends (send_inputs_due); send_pending, advance_frame's usual
  // send, builds it inline (send_inputs_inline), without a second call's saved registers.
  Result send_inputs(Transport& transport, const PeerAddress& to);
  Result send_inputs_inline(Transport& transport, const PeerAddress& to);
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  Result send_inputs_general(Transport& transport, const PeerAddress& to);
  // The reference of `frame`'s delta: the frame before, or zeros at the stream's first frame.
  const uint8_t* reference_of(Frame frame) noexcept {
    return frame == out_base_ ? zeros_.data() : send_slot(frame - 1);
  }
  // Cuts prepared_ to start at `start` and appends what waited (it was full). True when it then
  // holds exactly the frames from `start` to last_sent_.
  // Inline: every inputs datagram asks, and the run is usually whole after the cut.
  bool prepare_run(Frame start) noexcept {
    prepared_.trim(start);
    if (prepared_.next() <= last_sent_) catch_up_run();
    return prepared_.first() == start && prepared_.next() == last_sent_ + 1;
  }
  // Appends to prepared_ the frames queued while it was full (or that a cut emptied it past).
  // send_input's changed input (an input of 4 to 8 bytes), in its slot: its tokens straight into
  // the run, unless the run is near its limit (then queue_changed_coded: out of line). Inline in
  // send_input: as a call (one frame in three) its saved registers cost more than the
  // registers it takes there (p2p 2 64 -3, 8 peers -23 per peer-frame).
  __attribute__((always_inline)) void queue_changed(const uint8_t* slot, size_t size) noexcept {
    if (!prepared_.append_changed_word(slot, slot - size, size)) return queue_changed_coded(slot, size);
    inputs_dirty_ = true;  // a changed input goes out at once
  }
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void queue_changed_coded(const uint8_t* slot, size_t size) noexcept;
  void catch_up_run() noexcept;
  // What rides on the inputs datagram starting at `start` (send_inputs): null when nothing.
  const Riders* gather_riders(Frame start, size_t capacity) noexcept;
  bool usual_rider_waits(size_t capacity) const noexcept;
  const Riders* take_usual_rider() noexcept;
  template <bool kAgain>
  void send_inputs_due(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result);
  // send_inputs_due's two sends: the pending frames (with our acknowledgement), or the
  // acknowledgement alone (out of line: rare, and its message is a large local).
  // kInline: with send_inputs_inline (send_pending), else with the call.
  template <bool kInline>
  void send_inputs_now(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result);
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void send_ack_alone(Transport& transport, const PeerAddress& to, Result& result);
  // poll_polled_again's two out-of-line parts: the pending frames sent (the send policy said
  // so, nothing else due), and every other call (what changed since the poll looked at, as
  // poll_full would).
  Result send_pending(uint64_t now_us, Transport& transport, const PeerAddress& to);
  Result poll_changed(uint64_t now_us, Transport& transport, const PeerAddress& to);
  // Both polls of every tick ask; riders rarely wait.
  void send_riders_due(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result) {
    if (riders_waiting()) send_late_riders(now_us, transport, to, result);
  }
  void send_late_riders(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result);
  void note_loss(uint64_t now_us) noexcept {
    loss_recent_until_ = now_us + uint64_t(config_.loss_hold_frames) * frame_us_;
  }
  // Only while running (polled_at: invariant above).
  void remember_poll(uint64_t now_us) noexcept {
    polled_ = PollMark{true, now_us, last_sent_, urgent_, stalled_, any_disconnected_};
  }
  Result poll_full(uint64_t now_us, Transport& transport, const PeerAddress& to);
  // The send policy's input now (net/send_policy.h), for quiet_at, send_inputs_due and
  // poll_polled_again alike; each asks inputs_due and ack_overdue only where it needs them.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  SendPolicyInput send_input_now(uint64_t now_us) const noexcept {
    SendPolicyInput in;
    in.now_us = now_us;
    in.frame_us = frame_us_;
    in.pending_frames = last_sent_ > last_flushed_ ? uint32_t(last_sent_ - last_flushed_) : 0;
    in.changed = inputs_dirty_;
    in.last_inputs_at_us = last_inputs_sent_at_;
    in.ack_due = ack_due_;
    in.ack_due_since_us = ack_due_since_;
    in.urgent = urgent_;
    return in;
  }
  // True when poll_full at `now_us` would send nothing and change nothing but the poll's mark:
  // the usual poll of a running connection between the frames it sends. It asks poll_full's
  // questions in its order, each one answered "nothing" or the answer is no (then poll_full
  // runs and decides as ever); where poll_full's answer needs more than a few fields (a peer
  // silent, riders waiting, a disconnected player's status repeated) it says no at once.
  // inputs_due with the urgency asked last (kept in urgent_ when asked): frames pending and
  // unacknowledged only.
  template <class Urgency>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool inputs_due_or_urgent(uint64_t now_us, Urgency& urgency) noexcept {
    SendPolicyInput in = send_input_now(now_us);
    in.urgent = false;
    if (inputs_due(SendPolicyConfig{config_.input_batch_frames, config_.loss_hold_frames}, in)) return true;
    urgent_ = urgency();
    return urgent_;
  }
  template <class Urgency>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool quiet_at(uint64_t now_us, Urgency& urgency) noexcept {
    // One kept byte for the connection's state (quiet_allowed_now), the sequence limit apart.
    // Riders waiting (not in the byte) leave the rest of the questions to decide until their
    // patience runs out (riders_wait).
    if (!quiet_allowed_ && !riders_wait(now_us)) return false;
    if (next_sequence_ >= kLastSequence) return false;
    // The timers that only ever move later while the connection runs (the silence limits from
    // the last datagram or request heard, the next quality report, the keep-alive from the last
    // datagram sent): their earliest, as last worked out, is a bound before which none is due,
    // so most polls compare once (it is worked out again about every keep-alive interval).
    if (now_us >= timers_due_at_) {
      uint64_t at = last_sent_at_ + config_.keepalive_interval_us;
      if (config_.disconnect_timeout_us != 0) {
        // Silence (now - heard, 0 before it) reaching either limit: now >= heard + limit.
        const uint64_t heard = last_received_at_ > peer_request_at_ ? last_received_at_ : peer_request_at_;
        uint64_t limit = config_.disconnect_timeout_us;
        if (config_.notify_delay_us != 0 && config_.notify_delay_us < limit) limit = config_.notify_delay_us;
        if (heard + limit < at) at = heard + limit;
      }
      if (now_us >= at) return false;
      if (now_us >= next_quality_at_ && !report_rides(now_us)) return false;
      if (next_quality_at_ < at) at = next_quality_at_;
      timers_due_at_ = at;
    }
    // send_inputs_due: loss seen, a resend, the send policy's inputs or acknowledgement.
    if (have_rtt_ && last_flushed_ > last_acked_ && now_us > unacked_since_ + estimate_terms_.loss_after_us)
      return false;
    const bool unacked = last_sent_ > last_acked_;
    const bool pending = last_sent_ > last_flushed_;
    if (unacked && !pending) {
      // resend_after(): the shorter interval whenever it may apply (stalled).
      const uint64_t resend = stalled_ && frame_us_ + frame_us_ / 2 < config_.resend_interval_us
                                  ? frame_us_ + frame_us_ / 2
                                  : config_.resend_interval_us;
      if (now_us >= last_inputs_sent_at_ + resend) return false;
    }
    if (!pending && !ack_due_) return true;
    // The send policy's two answers, each asked only as far as needed (inputs_due, ack_overdue).
    if (unacked && pending && inputs_due_or_urgent(now_us, urgency)) return false;
    return !(ack_due_ && (config_.send_blob_size == 0 || ack_overdue(send_input_now(now_us))));
  }
  Result grow_send_ring();
  uint8_t* send_slot(Frame frame) noexcept {
    return send_ring_.data() + size_t(uint32_t(frame) % send_capacity_) * config_.send_blob_size;
  }
  uint8_t* receive_slot(Frame frame) noexcept;
  // Where the frame after last_received_ goes when the stream (re)starts at in_base_: its slot,
  // and zeros as its reference (expansion_reference_ and expansion_slot_).
  void start_expansion() noexcept {
    expansion_reference_ = zeros_.data();
    expansion_slot_ = receive_ring_.data() +
                      size_t(uint32_t(in_base_) % config_.receive_window_frames) * config_.receive_blob_size;
  }
  void log(LogLevel level, const char* format, ...) const noexcept
// MinGW: libstdc++ formats like C99 (__USE_MINGW_ANSI_STDIO), not like msvcrt.
#if defined(__MINGW32__)
      __attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__)
      __attribute__((format(printf, 3, 4)))
#endif
      ;

  EndpointConfig config_;
  bool initialized_ = false;
  EndpointState state_ = EndpointState::idle;
  Xoshiro256 rng_{0};
  DatagramAuth auth_;
  uint32_t local_nonce_ = 0;
  // 0 until a handshake reply echoing our current challenge names the peer (a blind attacker
  // cannot see the challenge, so cannot claim the connection).
  uint32_t remote_nonce_ = 0;
  uint32_t next_sequence_ = 0;

  // Replay protection: the highest sequence seen and a bitmap of the 64 below it.
  ReplayWindow replay_window_;

  // Handshake. Requests bind nothing: they are answered statelessly (the reply echoes their
  // challenge). Before the peer is known, up to kStrangerReplies requests per poll are answered
  // (a random one replaced when more come); afterwards only the peer's.
  static constexpr size_t kStrangerReplies = 4;
  static constexpr uint64_t kEarlyRequestGapUs = 2000;  // see handle_request
  uint64_t challenge_ = 0;
  int32_t sync_done_ = 0;
  uint64_t next_handshake_at_ = 0;
  uint64_t last_request_at_ = 0;
  bool sent_request_ = false;
  uint64_t started_at_ = 0;
  bool peer_reply_due_ = false;
  uint64_t peer_reply_challenge_ = 0;
  uint64_t stranger_challenges_[kStrangerReplies] = {};
  size_t stranger_count_ = 0;
  bool saw_other_version_ = false;  // handshakes of another version arrived (unverifiable)
  Handshake remote_hello_;
  RejectReason reject_reason_ = RejectReason::none;

  // Liveness.
  uint64_t last_received_at_ = 0;
  uint64_t quiet_gap_us_ = 0;  // quiet_gap_us() of this configuration (on_accepted)
  bool heard_data_ = false;  // a data message of the peer's arrived (it runs): its requests are old
  uint64_t peer_request_at_ = 0;  // its last request while we ran and it did not (on_datagram)
  uint64_t last_sent_at_ = 0;
  uint64_t now_ = 0;  // the time of the poll in progress
  // What the last complete poll() saw (poll_again: nothing of it changed, nothing to do).
  // Valid only while running: taken only then, dropped on every way out (polled_at).
  struct PollMark {
    bool valid = false;
    uint64_t at_us = 0;
    Frame last_sent = kNullFrame;
    bool urgent = false, stalled = false, any_disconnected = false;
  };
  PollMark polled_;
  // quiet_at: the earliest of the timers that only move later while running, as last worked out
  // (0: work it out at the next poll; init() clears it for a new connection).
  uint64_t timers_due_at_ = 0;
  bool sent_anything_ = false;
  // Every test of quiet_at on the connection's state, in one byte (quiet_allowed_now): asked by
  // every poll of every endpoint. Kept by refresh_quiet, not_quiet, note_sent and note_spoke.
  bool quiet_allowed_ = false;
  int disconnect_notices_left_ = 0;

  // Outgoing inputs: frames [max(last_acked_, 0), last_sent_] live in the ring; the acked
  // one stays as the reference the next datagram's first delta is taken against.
  std::vector<uint8_t> send_ring_;
  // The tokens of the unacknowledged frames as the next inputs datagram carries them, each
  // frame's delta appended once when it is queued (net/prepared_inputs.h).
  PreparedInputs prepared_;
  std::vector<uint8_t> delta_tokens_;  // one frame's delta, coded (max_encoded_delta_size)
  Riders riders_;                      // what rides on the datagram being built (gather_riders)
  bool general_riders_for_tests_ = false;  // usual_rider_waits always false (set_general_riders_for_tests)
  uint32_t send_capacity_ = 0;
  Frame last_sent_ = kNullFrame;
  Frame last_acked_ = kNullFrame;
  Frame last_flushed_ = kNullFrame;  // the newest frame an inputs datagram carried
  Frame out_base_ = 0;               // the first frame of the outgoing stream (restart_outgoing_at)
  // send_input's usual frame kept (refresh_usual_send): the frame it may queue inline
  // (usual_frame_, last_sent_ + 1) while it is below usual_end_ (the queue's room as of the
  // acknowledgement then, and the ring's end, whose next slot is its first: the slot before that
  // frame's is not the one before it), in usual_slot_. usual_end_ is the lowest frame when the
  // set-up or the state queue nothing inline (usual_queue_), or the stream's first frame is next
  // (its reference is zeros).
  Frame usual_frame_ = 0;
  Frame usual_end_ = std::numeric_limits<Frame>::min();
  uint8_t* usual_slot_ = nullptr;
  bool inputs_dirty_ = false;        // a pending frame's input differs from the one before
  bool urgent_ = false;              // the owner wants confirmations now
  bool stalled_ = false;             // the owner cannot advance
  // When the last loss observed stops being recent (note_loss): its time plus loss_hold_frames
  // frames, worked out when it is seen so loss_recent compares once (0: none seen).
  uint64_t loss_recent_until_ = 0;
  uint64_t unacked_since_ = 0;       // when the oldest unacknowledged datagram went out
  uint64_t last_inputs_sent_at_ = 0;
  bool spoke_again_ = false;         // a datagram arrived after the peer was silent
  uint64_t frame_us_ = 16667;        // one frame time, from shape.frame_rate

  // Incoming inputs.
  // Where expanding the frames after last_received_ into the receive ring starts, kept as the
  // frames are stored (handle_inputs, take_usual_inputs; start_expansion when the stream starts):
  // the newest frame's slot (zeros before the stream's first frame), the reference of the next
  // one, and the next one's slot. Not worked out from last_received_ per datagram (a division).
  const uint8_t* expansion_reference_ = nullptr;
  uint8_t* expansion_slot_ = nullptr;
  std::vector<uint8_t> receive_ring_;
  Frame last_received_ = kNullFrame;
  Frame next_pop_ = 0;
  uint32_t pop_index_ = 0;       // uint32_t(next_pop_) % receive_window_frames (peek_inputs)
  Frame in_base_ = 0;            // the first frame of the incoming stream (restart_incoming_at)
  bool receive_paused_ = false;  // frames are neither stored nor acknowledged (pause_receive)
  // Every test of take_usual_inputs that holds for a whole connection, in one byte (the others
  // are the datagram's own): our verified peer (its nonce and shape known), no key, synchronizing
  // or running (not interrupted), receiving, a blob size the usual path expands, a receive window
  // of kUsualWindow frames or more. Kept by refresh_usual_receive.
  bool usual_receive_ = false;
  bool general_receive_ = false;  // set_general_receive (tests)
  // send_input's checks of the set-up and the state in one byte (usual_queue_now): every frame asks.
  bool usual_queue_ = false;
  bool ack_due_ = false;
  uint64_t ack_due_since_ = 0;
  std::vector<uint8_t> zeros_;    // the reference before frame 0

  ConnectStatus local_status_[kMaxPlayers];
  bool any_disconnected_ = false;  // some local_status_ entry is disconnected
  // Some entry of the first num_players (what inputs datagrams carry) is disconnected.
  bool status_disconnected_ = false;
  ChannelSink* channel_sink_ = nullptr;
  Message received_;  // the datagram on_datagram is decoding (see there)
  ConnectStatus remote_status_[kMaxPlayers];
  bool remote_reports_cut_ = false;  // some remote_status_ entry was disconnected (since init)
  Frame status_floor_[kMaxPlayers] = {};  // see rejoin_remote_player (init: kNullFrame, none)

  // Time sync.
  Frame local_frame_ = 0;
  int32_t local_advantage_ = 0;
  uint64_t next_quality_at_ = 0;
  bool report_due_ = false;         // a quality report waits to go (riding, or alone)
  uint64_t report_due_since_ = 0;
  QualityProbe probe_;              // our reports' ids and times; the reply we owe
  SilenceLog silences_;             // silences both ways (told on inputs datagrams)
  bool have_rtt_ = false;
  uint64_t srtt_us_ = 0;
  uint64_t jitter_us_ = 0;
  // estimated_remote_frame's terms from the round trip (refresh_estimate_terms): the one-way trip
  // plus half a frame, and input_patience_us(); and quiet_at's: how long the oldest
  // unacknowledged datagram may wait before its loss counts (the round trip, twice the jitter,
  // two frames).
  struct EstimateTerms {
    uint64_t reach_us = 0;
    uint64_t patience_us = 0;
    uint64_t loss_after_us = 0;
  } estimate_terms_;
  void refresh_estimate_terms() noexcept {
    estimate_terms_ = EstimateTerms{srtt_us_ / 2 + frame_us_ / 2, input_patience_us(),
                                    srtt_us_ + 2 * jitter_us_ + 2 * frame_us_};
  }
  Frame remote_frame_ = kNullFrame;
  int32_t remote_advantage_ = 0;
  uint64_t remote_report_at_ = 0;
  RemoteFrameEstimator remote_estimate_;

  // Fixed-capacity rings.
  EndpointEvent events_[kEventCapacity] = {};
  size_t event_head_ = 0;
  size_t event_count_ = 0;
  ChecksumReport outgoing_checksums_[kChecksumCapacity] = {};
  size_t outgoing_checksum_count_ = 0;
  uint64_t checksums_due_since_ = 0;  // when the oldest waiting checksum report was queued
  ChecksumReport incoming_checksums_[kChecksumCapacity] = {};
  size_t incoming_checksum_head_ = 0;
  size_t incoming_checksum_count_ = 0;

  uint8_t datagram_[kMaxDatagramSize] = {};
  EndpointStats stats_;
};

}  // namespace retcon::detail
