// retcon: see endpoint.h for the contract; docs/PROTOCOL.md for the message exchange.
#include "net/endpoint.h"

#include <algorithm>
#include <bit>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "net/data_checksum.h"
#include "net/usual_riders.h"

namespace retcon::detail {

namespace {

// Smoothing as in TCP (RFC 6298): a new sample moves the estimate by 1/8, the variation by 1/4.
uint64_t smooth(uint64_t average, uint64_t sample, uint64_t weight) noexcept {
  return (average * (weight - 1) + sample) / weight;
}

uint64_t distance(uint64_t a, uint64_t b) noexcept { return a > b ? a - b : b - a; }

// A poll's outcome is its first failure.
void note(Result& result, Result r) noexcept {
  if (r != Result::ok && result == Result::ok) result = r;
}

}  // namespace

const char* endpoint_state_name(EndpointState state) noexcept {
  switch (state) {
    case EndpointState::idle: return "idle";
    case EndpointState::synchronizing: return "synchronizing";
    case EndpointState::running: return "running";
    case EndpointState::interrupted: return "interrupted";
    case EndpointState::disconnected: return "disconnected";
  }
  return "unknown";
}

const char* drop_reason_name(DropReason reason) noexcept {
  switch (reason) {
    case DropReason::truncated: return "truncated";
    case DropReason::oversized: return "oversized";
    case DropReason::bad_magic: return "bad_magic";
    case DropReason::bad_version: return "bad_version";
    case DropReason::bad_checksum: return "bad_checksum";
    case DropReason::unknown_type: return "unknown_type";
    case DropReason::malformed: return "malformed";
    case DropReason::bad_nonce: return "bad_nonce";
    case DropReason::replayed: return "replayed";
    case DropReason::out_of_window: return "out_of_window";
    case DropReason::wrong_state: return "wrong_state";
    case DropReason::count_: break;
  }
  return "unknown";
}

void Endpoint::log(LogLevel level, const char* format, ...) const noexcept {
  if (config_.logger.log == nullptr || level < config_.logger.min_level) return;
  char line[256];  // on the stack: logging must not allocate
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  config_.logger.log(config_.logger.user, level, line);
}

Result Endpoint::init(const EndpointConfig& config) {
  config_ = config;
  initialized_ = false;
  refresh_usual_queue();  // false until init succeeds
  refresh_estimate_terms();  // the patience reads config_ (a failed init keeps the new config_)
  const char* bad = nullptr;
  const SessionShape& s = config.shape;
  if (s.num_players < 1 || s.num_players > uint32_t(kMaxPlayers)) bad = "shape.num_players";
  else if (s.input_size < 1 || s.input_size > kMaxInputSize) bad = "shape.input_size";
  else if (s.frame_rate < 1 || s.frame_rate > 65535) bad = "shape.frame_rate";
  else if (s.max_prediction > uint32_t(kMaxPredictionFrames)) bad = "shape.max_prediction";
  else if ((config.players_owned >> s.num_players) != 0) bad = "players_owned";
  else if (config.send_blob_size > kMaxBlobSize) bad = "send_blob_size";
  else if (config.receive_blob_size > kMaxBlobSize) bad = "receive_blob_size";
  else if (config.sync_round_trips < 1 || config.sync_round_trips > 1000) bad = "sync_round_trips";
  else if (config.send_queue_frames < 2 ||
           config.send_queue_frames > config.max_send_queue_frames) bad = "send_queue_frames";
  else if (config.input_batch_frames < 1 || config.input_batch_frames > 60) {
    bad = "input_batch_frames";
  } else if (config.receive_window_frames < 2 || config.receive_window_frames > (1u << 20)) {
    bad = "receive_window_frames";
  } else if (config.disconnect_timeout_us != 0 &&
             config.notify_delay_us > config.disconnect_timeout_us) bad = "notify_delay_us";
  else if (config.has_match_key &&
           std::all_of(config.match_key, config.match_key + kMatchKeySize,
                       [](uint8_t b) { return b == 0; })) {
    bad = "match_key (all zeros)";
  }
  if (bad != nullptr) {
    log(LogLevel::error, "endpoint config: invalid %s", bad);
    return Result::invalid_argument;
  }

  // Incompressible blobs this large cannot travel in one datagram (compressible ones can).
  const size_t worst = kDataHeaderSize + (config.has_match_key ? kSealedOverhead : 0) + kInputsFixedSize + kInputsStatusSize * size_t(s.num_players) +
                       config.send_blob_size + (config.send_blob_size + 127) / 128;
  if (worst > kMaxDatagramSize) {
    log(LogLevel::warning, "send_blob_size %u: a blob of noise would not fit one datagram",
        unsigned(config.send_blob_size));
  }

  if (config.has_match_key && !match_keys_supported()) {
    log(LogLevel::error, "endpoint: match keys need libsodium, and this build of retcon has none "
                         "(RETCON_WITH_SODIUM=OFF, as on Windows)");
    return Result::unsupported;
  }
  if (!auth_.configure(config.has_match_key ? config.match_key : nullptr,
                       config.allow_aes256gcm)) {
    log(LogLevel::error, "endpoint: libsodium failed to start");
    return Result::internal_error;
  }
  // A fresh seed per connection unless the owner gives one (tests): nonces and challenges a
  // blind attacker cannot predict.
  rng_.reseed(config.rng_seed != 0 ? config.rng_seed : os_entropy_u64());
  do local_nonce_ = rng_.next_u32(); while (local_nonce_ == 0);  // 0 means "unknown"
  remote_nonce_ = 0;
  next_sequence_ = 0;
  replay_window_.reset();
  set_state(EndpointState::idle);
  sync_done_ = 0;
  heard_data_ = false;
  peer_request_at_ = 0;
  sent_request_ = false;
  peer_reply_due_ = false;
  stranger_count_ = 0;
  saw_other_version_ = false;
  remote_hello_ = Handshake{};
  reject_reason_ = RejectReason::none;
  sent_anything_ = false;
  disconnect_notices_left_ = 0;
  timers_due_at_ = 0;

  send_capacity_ = config.send_queue_frames;
  send_ring_.assign(size_t(send_capacity_) * config.send_blob_size, 0);
  // The run kept ready never needs more than a datagram holds.
  prepared_.init(config.send_blob_size, kMaxDatagramSize);
  delta_tokens_.assign(max_encoded_delta_size(config.send_blob_size), 0);
  last_sent_ = last_acked_ = last_flushed_ = kNullFrame;
  out_base_ = 0;
  inputs_dirty_ = false;
  urgent_ = stalled_ = false;
  loss_recent_until_ = unacked_since_ = 0;
  polled_ = PollMark{};  // a mark of the last connection is none of this one's
  last_inputs_sent_at_ = 0;
  spoke_again_ = false;
  frame_us_ = 1000000u / s.frame_rate;
  quiet_gap_us_ = quiet_gap_us(config.resend_interval_us, frame_us_);
  receive_ring_.assign(size_t(config.receive_window_frames) * config.receive_blob_size, 0);
  last_received_ = kNullFrame;
  next_pop_ = 0;
  pop_index_ = 0;
  in_base_ = 0;
  receive_paused_ = false;
  ack_due_ = false;
  ack_due_since_ = 0;
  const size_t widest = config.send_blob_size > config.receive_blob_size
                            ? config.send_blob_size : config.receive_blob_size;
  zeros_.assign(widest + 1, 0);
  start_expansion();  // in_base_ 0

  for (int i = 0; i < kMaxPlayers; ++i) {
    local_status_[i] = remote_status_[i] = ConnectStatus{};
    status_floor_[i] = kNullFrame;
  }
  remote_reports_cut_ = false;
  any_disconnected_ = status_disconnected_ = false;
  local_frame_ = 0;
  local_advantage_ = 0;
  report_due_ = false;
  report_due_since_ = 0;
  probe_.reset();
  silences_.reset();
  have_rtt_ = false;
  srtt_us_ = jitter_us_ = 0;
  refresh_estimate_terms();  // (config_ and frame_us_ are set above)
  remote_frame_ = kNullFrame;
  remote_advantage_ = 0;
  remote_report_at_ = 0;
  remote_estimate_.reset();
  event_head_ = event_count_ = 0;
  outgoing_checksum_count_ = 0;
  checksums_due_since_ = 0;
  incoming_checksum_head_ = incoming_checksum_count_ = 0;
  stats_ = EndpointStats{};
  refresh_quiet();  // not running: false
  initialized_ = true;
  refresh_usual_queue();
  return Result::ok;
}

Result Endpoint::start(uint64_t now_us) {
  if (!initialized_ || state_ != EndpointState::idle) return Result::wrong_state;
  set_state(EndpointState::synchronizing);
  challenge_ = rng_.next();
  next_handshake_at_ = now_us;
  started_at_ = now_us;
  last_received_at_ = now_us;
  push_event({EndpointEventType::synchronizing, 0, config_.sync_round_trips});
  return Result::ok;
}

// ---------------------------------------------------------------------------------------------
// Receiving

void Endpoint::drop(DropReason reason) noexcept { ++stats_.dropped[size_t(reason)]; }

void Endpoint::push_event(const EndpointEvent& event) noexcept {
  if (event_count_ == kEventCapacity) {
    // The newest state matters more than the oldest progress report.
    event_head_ = (event_head_ + 1) % kEventCapacity;
    --event_count_;
    ++stats_.events_overflowed;
  }
  events_[(event_head_ + event_count_) % kEventCapacity] = event;
  ++event_count_;
}

bool Endpoint::pop_event(EndpointEvent* event) noexcept {
  if (event_count_ == 0 || event == nullptr) return false;
  *event = events_[event_head_];
  event_head_ = (event_head_ + 1) % kEventCapacity;
  --event_count_;
  return true;
}

void Endpoint::reject(RejectReason reason) noexcept {
  if (state_ == EndpointState::disconnected) return;
  reject_reason_ = reason;
  set_state(EndpointState::disconnected);
  polled_.valid = false;  // out of running (polled_at)
  // The peer's requests keep being answered with our shape (see on_datagram), so it notices
  // the mismatch too instead of retrying forever. Another version cannot read our replies.
  if (reason == RejectReason::refused) log(LogLevel::error, "handshake rejected: the peer refuses this connection");
  else log(LogLevel::error, "handshake rejected: peer %s differs",
           reason == RejectReason::version ? "protocol version" : "session shape");
  EndpointEvent e{EndpointEventType::handshake_rejected};
  e.reason = reason;
  push_event(e);
}

void Endpoint::become_disconnected(bool by_peer) noexcept {
  if (state_ == EndpointState::disconnected) return;
  set_state(EndpointState::disconnected);
  polled_.valid = false;  // out of running (polled_at)
  log(LogLevel::info, "peer disconnected (%s)", by_peer ? "notice" : "timeout");
  EndpointEvent e{EndpointEventType::disconnected};
  e.by_peer = by_peer;
  push_event(e);
}

bool Endpoint::compatible(const Handshake& remote) const noexcept {
  return shapes_agree(remote.shape, config_.shape) &&
         remote.send_blob_size == config_.receive_blob_size &&
         remote.receive_blob_size == config_.send_blob_size;
}

namespace {

DropReason drop_reason_of(DecodeError error) noexcept {
  switch (error) {
    case DecodeError::truncated: return DropReason::truncated;
    case DecodeError::oversized: return DropReason::oversized;
    case DecodeError::bad_magic: return DropReason::bad_magic;
    case DecodeError::bad_version: return DropReason::bad_version;
    case DecodeError::bad_checksum: return DropReason::bad_checksum;
    case DecodeError::unknown_type: return DropReason::unknown_type;
    case DecodeError::ok:
    case DecodeError::malformed: break;
  }
  return DropReason::malformed;
}

}  // namespace

// Small steps of every received datagram (the inputs case, the bookkeeping of an accepted one),
// inlined into both paths of on_datagram: as calls, their saved registers cost more than their work.
#if defined(__GNUC__)
#define RETCON_RECEIVE_INLINE __attribute__((always_inline)) inline
#else
#define RETCON_RECEIVE_INLINE inline
#endif

// Nothing an unverified datagram says changes our state. A datagram is verified when it
// carries the peer's nonce (learnt from a reply echoing our challenge) and passes the
// connection-keyed checksum (no key) or the AEAD (key); a reply is verified by echoing our
// current 64-bit challenge. Requests are only ever answered.
void Endpoint::on_datagram(const uint8_t* data, size_t length, uint64_t now_us) {
  if (now_us > now_) now_ = now_us;  // when an acknowledgement became due
  ++stats_.datagrams_received;
  stats_.bytes_received += length;
  // The usual datagram: inputs, protocol 7, without a key, from our verified peer on a
  // connection that is not over. The general path below takes it exactly so (a valid public
  // header, from_peer, no bad nonce, the checksum, then the inputs body); this way only skips
  // the steps that cannot apply: the header's general decode, the message type switch, the
  // AEAD branch.
  // The four leading bytes (magic, version, type) are compared as one word.
  static constexpr uint8_t kUsualHead[4] = {kMagic0, kMagic1, kProtocolVersion, uint8_t(MessageType::inputs)};
  if (length >= kDataHeaderSize && length <= kMaxDatagramSize) {
    uint32_t head, usual;
    std::memcpy(&head, data, sizeof head);
    std::memcpy(&usual, kUsualHead, sizeof usual);
    // The next sequence after the highest accepted (the usual datagram: in order, so fresh).
    const uint16_t low = uint16_t(data[4] | (data[5] << 8));
    // And the time not before the last one: now_ is now_us then (take_usual_inputs reads it there).
    if (head == usual && usual_receive_ && replay_window_.next_is(low) && now_us == now_) {
      // A pad's 4-byte input (the usual one) with its size a constant throughout.
      if (config_.receive_blob_size == 4) return take_usual_inputs<4>(data, length);
      return take_usual_inputs<0>(data, length);
    }
    // What take_usual_inputs would hand over at once: inputs of our verified peer, without a
    // key, on a connection that is not over, but out of order, with the receiving side paused or
    // interrupted or a shape the usual path does not take (usual_receive_ false).
    if (head == usual && remote_nonce_ != 0 && (state_ == EndpointState::synchronizing || running()) &&
        !auth_.keyed() && !general_receive_) {
      const uint32_t sequence = widen_sequence(uint16_t(data[4] | (data[5] << 8)), replay_window_.highest());
      on_inputs_datagram(data, length, sequence, now_us);
      return;
    }
  }
  on_other_datagram(data, length, now_us);
}

// Every inputs datagram take_usual_inputs hands over (`sequence` widened): decoded into the body,
// then handled, each step deciding as it does for any message.
void Endpoint::on_inputs_datagram(const uint8_t* data, size_t length, uint32_t sequence, uint64_t now_us) {
  InputsBody& body = received_.inputs;
  const DecodeError error = auth_.open_plain_inputs(
      data, length, sequence, InputsSeek{uint16_t(config_.receive_blob_size), last_received_ + 1}, &body);
  if (error != DecodeError::ok) {
    drop(drop_reason_of(error));
    return;
  }
  if (!replay_window_.fresh(sequence)) {
    drop(DropReason::replayed);
    return;
  }
  if (!handle_inputs_message(body, now_us)) return;
  heard_data_ = true;
  on_accepted(sequence, now_us);
}

// The usual inputs datagram of a match, taken in one pass: the next sequence (on_datagram asked),
// no statuses, a start frame of one to three bytes (read_usual_start: below 2^21), fewer than 128
// frames, some of them new and all inside the receive window, every test passed (checksum,
// payload, acknowledgement, window). It checks what decode_inputs_body, handle_inputs_message and
// handle_inputs check, in registers, without the decoded body in between; the frames go straight
// into the receive ring. Any other datagram, or one that fails a test, it hands to the general
// path (on_inputs_datagram, a tail call: the caller keeps nothing for it) with nothing changed
// that anything reads: that decodes it afresh and decides (a drop, counted, or what the general
// path takes that this one does not). It writes the ring only once every test passed (the
// expansion cannot fail after the walk measured the payload), so a datagram it leaves changed
// nothing (but the body's riders, which every decode of a datagram rewrites).
template <size_t kBlob>
void Endpoint::take_usual_inputs(const uint8_t* data, size_t length) {
  // The body's fixed fields, as read_usual_inputs reads them (and nothing it does not take).
  const uint8_t* p = data + kDataHeaderSize;
  const uint8_t* const end = data + length;
  if (end - p < 5) return hand_over_inputs(data, length);
  uint32_t start;
  if (!read_usual_start(&p, end, &start)) return hand_over_inputs(data, length);
  const uint32_t ack_delta = p[0], count = p[1];
  const uint8_t flags = p[2];
  if (ack_delta >= 0x80 || count - 1 >= 0x7F) return hand_over_inputs(data, length);
  p += 3;
  const Frame first = Frame(start);
  // Riders (a report, a reply, checksums, a silence note): read into the body's, handled last.
  Riders* const riders = flags != 0 ? &received_.inputs.riders : nullptr;
  if (riders != nullptr) {
    const uint8_t* after = p;  // a copy: `p` itself stays in a register
    if (!take_usual_riders(&after, end, flags, first, riders))
      return hand_over_inputs(data, length);
    p = after;
  }
  const Frame ack = first + (Frame(ack_delta >> 1) ^ -Frame(ack_delta & 1));  // unzigzag
  const Frame end_frame = first + Frame(count) - 1;
  // handle_inputs_message's, handle_ack's and handle_inputs' tests, all passing with something new
  // that fits: the first new frame's reference held, no gap before it, the last one inside the
  // window (so last_received_ < window_end too).
  const Frame last = last_received_;
  const size_t blob = kBlob != 0 ? kBlob : config_.receive_blob_size;
  if (!usual_frames_fit(ack, first, end_frame, last, Frame(config_.receive_window_frames)))
    return hand_over_inputs(data, length);
  // The payload: exactly `count` blobs of our size (measure_payload's walk), noting where the first
  // new frame starts when the datagram repeats frames we hold. Before the checksum (either failing
  // hands the datagram over, so their order decides nothing): the walk's values then live across
  // fewer instructions.
  const size_t payload_size = size_t(end - p);
  const size_t held = size_t(last + 1 - first);  // 0..count-1
  size_t offset = 0, into = 0;
  if (!delta_tokens_expected(p, payload_size, held * blob, size_t(count) * blob, &offset, &into))
    return hand_over_inputs(data, length);
  uint32_t checksum;  // little-endian on the wire
  std::memcpy(&checksum, data + kDataPublicHeaderSize, 4);
  if constexpr (std::endian::native == std::endian::big)
    checksum = (checksum >> 24) | ((checksum >> 8) & 0xFF00u) | ((checksum << 8) & 0xFF0000u) | (checksum << 24);
  // Inline (net/data_checksum.h): since this function hands over by a tail call, its values
  // around the check cost fewer saved registers than a call does.
  if (checksum != data_checksum(data, length, auth_.plain_receive_key(), replay_window_.highest() + 1))
    return hand_over_inputs(data, length);
  // As handle_inputs: the reference is the last frame held (zeros before the stream's first).
  uint8_t* const ring = receive_ring_.data();
  uint8_t* const ring_end = ring + size_t(config_.receive_window_frames) * blob;
  uint8_t* newest;
  if constexpr (kBlob == 4) {
    newest = expand_measured_words(p, offset, into, size_t(end_frame - last), expansion_reference_, expansion_slot_,
                                   ring, ring_end);
  } else {
    newest = expand_measured_sized<kBlob>(p, offset, into, size_t(end_frame - last), blob, expansion_reference_,
                                          expansion_slot_, ring, ring_end);
  }
  expansion_reference_ = newest;
  expansion_slot_ = newest + blob == ring_end ? ring : newest + blob;
  // Taken: what handle_inputs, handle_inputs_message and on_inputs_datagram do with it.
  if (ack > last_acked_) {  // handle_ack (ack <= last_sent_ was tested)
    last_acked_ = ack;
    unacked_since_ = now_;
  }
  last_received_ = end_frame;
  remote_estimate_.on_input_progress(now_);  // the peer played at least one more frame
  want_ack();
  heard_data_ = true;
  if (riders != nullptr) return accept_riding(*riders, now_);
  accept_next(now_);
}

// What take_usual_inputs does not take, as on_datagram hands it over otherwise: the next sequence,
// at now_ (on_datagram's now_us).
void Endpoint::hand_over_inputs(const uint8_t* data, size_t length) {
  on_inputs_datagram(data, length, replay_window_.highest() + 1, now_);
}

// The rest of the usual datagram with riders, as on_inputs_datagram takes it: the riders, then
// on_accepted's steps (in that order: a reply rider moves the jitter the silence test reads).
void Endpoint::accept_riding(const Riders& riders, uint64_t now_us) noexcept {
  handle_waiting_riders(riders, now_us);
  accept_next(now_us);
}

void Endpoint::on_other_datagram(const uint8_t* data, size_t length, uint64_t now_us) {
  if (state_ == EndpointState::idle) {
    drop(DropReason::wrong_state);
    return;
  }
  Header header;
  const DecodeError head = decode_public_header(data, length, &header);
  if (head != DecodeError::ok) {
    drop(drop_reason_of(head));
    // Another version cannot be verified, so it never stops the handshake; if the peer really
    // speaks one, the handshake timeout says so (handshake_rejected, reason version).
    if (head == DecodeError::bad_version && state_ == EndpointState::synchronizing) {
      saw_other_version_ = true;
    }
    return;
  }
  const bool handshake = is_handshake(header.type);
  // Data messages carry no nonce: once the peer is known, its connection key (or the match
  // key's AEAD) is what tells them from anybody else's.
  const bool from_peer = remote_nonce_ != 0 && (!handshake || header.nonce == remote_nonce_);
  // After a shape rejection the peer's requests are still answered, so it learns it too.
  const bool rejected_peer_request = state_ == EndpointState::disconnected &&
                                     reject_reason_ == RejectReason::shape && from_peer &&
                                     header.type == MessageType::handshake_request;
  if (state_ == EndpointState::disconnected && !rejected_peer_request) {
    drop(DropReason::wrong_state);
    return;
  }
  // Our own nonce coming back is a reflection of our own handshake (a reflected data message
  // fails its check: each direction has its own key).
  if (handshake ? header.nonce == 0 || header.nonce == local_nonce_ : !from_peer) {
    drop(DropReason::bad_nonce);
    return;
  }
  // Decoded into a member, and only the body this type uses is written (the header is not read
  // again): a Message is a few hundred bytes, and a local one, or a reset of this one, would be
  // initialised once more per datagram.
  Message& m = received_;
  // An inputs datagram: decoding notes where the first frame we lack starts (InputsSeek).
  const DecodeError error = auth_.open(data, length, header, &m, replay_window_.highest(),
                                       InputsSeek{uint16_t(config_.receive_blob_size), last_received_ + 1});
  if (error != DecodeError::ok) {
    drop(drop_reason_of(error));
    return;
  }
  if (header.type == MessageType::handshake_request) {
    handle_request(m, from_peer, now_us);
    // A request moves no replay window and proves nothing, but one thing: once we run, a
    // request of our peer (its nonce) says it is still finishing its own side of the handshake
    // (it needs more round trips than we did: under loss it can take seconds). Until it has, it
    // sends nothing else, and our silence timer must not end the connection for that (a split:
    // we drop it while it completes and runs). Its input stream still has to move in time
    // (the session's liveness in frames), so a replayed request keeps nothing alive for long.
    // Once its data flows, its requests are old ones (duplicated or reordered): they say nothing.
    // Only the silence timer sees it (nothing else of ours changes for it).
    if (from_peer && running() && !heard_data_) peer_request_at_ = now_us;
    return;
  }
  if (header.type == MessageType::handshake_reply) {
    if (!handle_reply(m, now_us)) return;
  } else {
    if (!replay_window_.fresh(m.header.sequence)) {
      drop(DropReason::replayed);
      return;
    }
    // Only a datagram that passed every check moves the replay window and counts as a sign of
    // life: a forged one with a far-ahead sequence number must not lock the real peer out.
    if (!handle(m, now_us)) return;
    heard_data_ = true;
  }
  on_accepted(m.header.sequence, now_us);
}

// A datagram passed every check (on_datagram).
RETCON_RECEIVE_INLINE void Endpoint::on_accepted(uint32_t sequence, uint64_t now_us) noexcept {
  replay_window_.commit(sequence);
  heard_after(now_us);
  if (state_ == EndpointState::interrupted) {
    set_state(EndpointState::running);
    log(LogLevel::info, "connection resumed");
    push_event({EndpointEventType::resumed});
  }
}

// The end of on_accepted for the usual datagram (the next sequence, a connection not interrupted:
// usual_receive_).
RETCON_RECEIVE_INLINE void Endpoint::accept_next(uint64_t now_us) noexcept {
  replay_window_.commit_next();
  heard_after(now_us);
}

// The peer was heard at `now_us`: after a silence (rarely: once a quiet gap passed), the steps
// that notice it.
RETCON_RECEIVE_INLINE void Endpoint::heard_after(uint64_t now_us) noexcept {
  // Most datagrams come sooner than either gap below: one compare (quiet_gap_us_, set at init).
  if (now_us >= last_received_at_ + quiet_gap_us_) heard_after_gap(now_us);
  last_received_at_ = now_us;
}

void Endpoint::heard_after_gap(uint64_t now_us) noexcept {
  // The peer speaks again after a silence (a blackout): what it may be stalled on goes out at
  // the next poll, not at the next (slowed) resend.
  if (running() && peer_silent(now_us)) {
    spoke_again_ = true;
    not_quiet();
  }
  if (running()) silences_.on_received(last_received_at_, now_us);
}

void Endpoint::handle_request(const Message& m, bool from_peer, uint64_t now_us) noexcept {
  if (from_peer) {
    peer_reply_due_ = true;
    not_quiet();
    peer_reply_challenge_ = m.handshake.challenge;
  } else if (remote_nonce_ == 0) {
    // Anyone may send requests from the peer's address: answer a few, remember nothing else.
    if (stranger_count_ < kStrangerReplies) {
      stranger_challenges_[stranger_count_++] = m.handshake.challenge;
      not_quiet();
    } else {
      stranger_challenges_[rng_.up_to(kStrangerReplies - 1)] = m.handshake.challenge;
    }
  } else {
    drop(DropReason::bad_nonce);  // we know our peer: someone else's request
    return;
  }
  // The peer has just started: send our own request now instead of at the next retry, so both
  // sides finish within a round trip of each other. Only until the peer answered one (then its
  // replies pace our requests), and at most one per kEarlyRequestGapUs, so forged requests
  // cannot turn us into a flood.
  if (state_ == EndpointState::synchronizing && remote_nonce_ == 0 &&
      (!sent_request_ || now_us >= last_request_at_ + kEarlyRequestGapUs)) {
    next_handshake_at_ = std::min(next_handshake_at_, now_us);
  }
}

bool Endpoint::handle_reply(const Message& m, uint64_t now_us) noexcept {
  if (state_ != EndpointState::synchronizing || m.handshake.challenge != challenge_) {
    drop(DropReason::replayed);  // a duplicate, a reply to an older request, or a guess
    return false;
  }
  // Verified: only the holder of the peer's address could read our challenge.
  if (m.header.nonce != remote_nonce_) {
    if (remote_nonce_ != 0) log(LogLevel::warning, "peer restarted its handshake");
    remote_nonce_ = m.header.nonce;
    replay_window_.reset();
    sync_done_ = 0;
    auth_.bind(local_nonce_, remote_nonce_, m.handshake.aes256gcm);
    refresh_usual_receive();
  }
  // A verified refusal (it echoes our challenge: a blind attacker cannot make one) ends the
  // handshake: the peer's game said no (a rejoin), retrying would only be refused again.
  if (m.handshake.refused) {
    remote_hello_ = m.handshake;
    reject(RejectReason::refused);
    return true;
  }
  if (!compatible(m.handshake)) {
    remote_hello_ = m.handshake;
    reject(RejectReason::shape);
    return true;
  }
  remote_hello_ = m.handshake;
  refresh_usual_receive();
  ++sync_done_;
  push_event({EndpointEventType::synchronizing, sync_done_, config_.sync_round_trips});
  if (sync_done_ >= config_.sync_round_trips) {
    set_state(EndpointState::running);
    next_quality_at_ = now_us;
    log(LogLevel::info, "synchronized after %d round trips (%s)", sync_done_,
        aead_algorithm_name(auth_.algorithm()));
    push_event({EndpointEventType::synchronized});
  } else {
    challenge_ = rng_.next();
    next_handshake_at_ = now_us;  // the next round trip starts at the next poll
  }
  return true;
}

bool Endpoint::plausible_report(const QualityReport& r) const noexcept {
  if (r.frame_advantage > kMaxFrameSkew || r.frame_advantage < -kMaxFrameSkew) return false;
  if (r.local_frame < 0) return false;
  // The peer cannot be far behind the inputs it sent us (input delay <= 32) ...
  if (last_received_ != kNullFrame && r.local_frame < last_received_ - kMaxFrameSkew) return false;
  // ... nor far ahead of ours, which it needs to advance (prediction <= 64).
  if (config_.send_blob_size != 0 && int64_t(r.local_frame) > int64_t(last_sent_) + kMaxFrameSkew) return false;
  return true;
}

bool Endpoint::handle(const Message& m, uint64_t now_us) {
  switch (m.header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: return false;  // on_datagram's
    case MessageType::inputs: return handle_inputs_message(m.inputs, now_us);
    case MessageType::input_ack:
      if (m.ack_frame > last_sent_) {
        drop(DropReason::out_of_window);  // acknowledges frames never sent
        return false;
      }
      if (m.ack_frame < last_acked_) {
        drop(DropReason::replayed);  // older than what we know: changes nothing
        return false;
      }
      last_acked_ = m.ack_frame;
      return true;
    case MessageType::quality_report: return handle_report(m.quality, now_us, false);
    case MessageType::quality_reply: return handle_quality_reply(m.reply, now_us, false);
    case MessageType::keep_alive: return true;
    case MessageType::disconnect: become_disconnected(true); return true;
    case MessageType::channel_data:
    case MessageType::channel_ack:
      if (channel_sink_ == nullptr) {
        drop(DropReason::unknown_type);
        return false;
      }
      if (!running()) {
        drop(DropReason::wrong_state);
        return false;
      }
      channel_sink_->on_channel(m.header.type, m.channel_body, m.channel_size, now_us);
      return true;
    case MessageType::checksum_report: return handle_checksum(m.checksum, false);
  }
  return false;
}

void Endpoint::drop_report(DropReason reason, bool riding) noexcept {
  // A rider is part of a datagram that was taken: counted apart, so `dropped` stays a count of
  // datagrams.
  if (riding) ++stats_.riders_dropped;
  else drop(reason);
}

bool Endpoint::handle_report(const QualityReport& report, uint64_t now_us, bool riding) noexcept {
  if (!plausible_report(report)) {
    drop_report(DropReason::out_of_window, riding);
    return false;
  }
  remote_frame_ = report.local_frame;
  remote_advantage_ = report.frame_advantage;
  remote_report_at_ = now_us;
  remote_estimate_.on_report(report.local_frame, last_received_, now_us, frame_us_, input_patience_us());
  probe_.on_report(report.id, now_us);
  not_quiet();  // a reply is due (a rider)
  return true;
}

bool Endpoint::handle_quality_reply(const QualityReply& reply, uint64_t now_us, bool riding) noexcept {
  uint64_t rtt_us = 0;
  // A reply answers one of our recent reports, once, and was held no longer than it was out.
  if (!probe_.on_reply(reply, now_us, &rtt_us)) {
    drop_report(DropReason::malformed, riding);
    return false;
  }
  handle_rtt_sample(rtt_us);
  return true;
}

bool Endpoint::handle_checksum(const ChecksumReport& report, bool riding) noexcept {
  // The peer can only checksum a frame it confirmed, so one we sent.
  if (config_.send_blob_size != 0 && report.frame > last_sent_) {
    drop_report(DropReason::out_of_window, riding);
    return false;
  }
  if (incoming_checksum_count_ == kChecksumCapacity) {
    incoming_checksum_head_ = (incoming_checksum_head_ + 1) % kChecksumCapacity;
    --incoming_checksum_count_;
    ++stats_.checksums_overflowed;
  }
  incoming_checksums_[(incoming_checksum_head_ + incoming_checksum_count_) % kChecksumCapacity] = report;
  ++incoming_checksum_count_;
  return true;
}

// After the frames they came with (a report's frame is judged against the inputs just taken,
// as when it came in its own datagram right after them). A bad rider is counted
// (riders_dropped); the inputs stand.
void Endpoint::handle_waiting_riders(const Riders& riders, uint64_t now_us) noexcept {
  if (riders.has_report) handle_report(riders.report, now_us, true);
  if (riders.has_reply) handle_quality_reply(riders.reply, now_us, true);
  for (uint8_t i = 0; i < riders.checksum_count; ++i) handle_checksum(riders.checksums[i], true);
  // Taken as said: the lateness monitor believes it only as far as our own silence agrees.
  if (riders.has_silence) silences_.on_note(riders.silence, now_us);
}

bool Endpoint::handle_ack(Frame ack) noexcept {
  if (ack > last_sent_) return false;  // acknowledges frames never sent: not our peer's
  if (ack > last_acked_) {
    last_acked_ = ack;
    unacked_since_ = now_;  // what is still unacknowledged went out at the latest now
  }
  return true;
}

void Endpoint::want_ack() noexcept {
  if (ack_due_) return;
  ack_due_ = true;
  ack_due_since_ = now_;
}

RETCON_RECEIVE_INLINE bool Endpoint::handle_inputs_message(const InputsBody& body, uint64_t now_us) {
  if (remote_hello_.shape.num_players == 0 || body.blob_size != config_.receive_blob_size ||
      (body.disconnected >> config_.shape.num_players) != 0) {
    drop(DropReason::malformed);
    return false;
  }
  if (!handle_inputs(body)) return false;
  handle_riders(body.riders, now_us);
  return true;
}

bool Endpoint::handle_inputs(const InputsBody& body) {
  if (!handle_ack(body.ack_frame)) {
    drop(DropReason::out_of_window);
    return false;
  }
  // Only disconnected players' statuses travel; with nobody disconnected (the usual datagram)
  // there is nothing to check or take.
  if (body.disconnected != 0 && !take_statuses(body)) return false;

  const Frame start = body.start_frame;
  const Frame end = start + body.count - 1;  // the codec rules out overflow
  const Frame last = last_received_;
  const Frame window = Frame(config_.receive_window_frames);
  if (end <= last) {
    // Nothing new: the peer has not seen our acknowledgement yet. Recent repeats are the
    // protocol working; frames older than anything we still hold are not. Either our
    // acknowledgement was lost or the peer resends while it waits for us: send at once.
    want_ack();
    note_loss(now_);
    if (end <= last - window) {
      drop(DropReason::out_of_window);
      return false;
    }
    return true;
  }
  // (Worked out in 64 bits: near the largest frame next_pop_ + window passes it; no frame can
  // lie past the largest, so the end is capped there.)
  const Frame window_end =
      Frame(std::min<int64_t>(int64_t(next_pop_) + window - 1, std::numeric_limits<Frame>::max()));
  if (receive_paused_) return true;  // the owner takes no frames yet (see pause_receive)
  // The first frame's reference must be held (received_input(start - 1), or zeros before the
  // stream's first frame), and no gap may open before it. Frames after `start` we hold already
  // are skipped, so the reference of the first new one is the last we hold.
  if (start > last + 1 || last >= window_end ||
      (start != in_base_ && (start - 1 < in_base_ || start - 1 <= last - window))) {
    drop(DropReason::out_of_window);
    want_ack();
    return false;
  }
  // Expanded straight into the receive ring: frames we hold already are skipped unexpanded
  // (ours is the next one's reference), then each new frame is the slot before it XOR its delta.
  // The codec validated the payload (exactly count blobs of this size); the checks here are
  // defensive only. A frame's slot is never its predecessor's (the window is >= 2 frames).
  DeltaRunDecoder decoder(body.payload, body.payload_size);
  const size_t blob = config_.receive_blob_size;
  if (start <= last) {
    // By position when decoding noted where our next frame starts (on_datagram asked it to):
    // the tokens of the frames we hold are not walked a second time.
    if (body.seek_frame == last + 1) {
      if (!decoder.seek(body.seek_offset, body.seek_into)) return true;
    } else if (!decoder.discard(size_t(last - start + 1) * blob)) {
      return true;
    }
  }
  // The reference: the last frame held (start - 1 when nothing was skipped), zeros before the first.
  uint8_t* const ring = receive_ring_.data();
  uint8_t* const ring_end = ring + size_t(window) * blob;
  const uint8_t* previous = expansion_reference_;
  uint8_t* slot = expansion_slot_;
  const Frame stop = end < window_end ? end : window_end;
  for (Frame f = last + 1; f <= stop; ++f) {
    if (!decoder.apply(slot, previous, blob)) break;
    last_received_ = f;
    previous = slot;
    slot += blob;
    if (slot == ring_end) slot = ring;
  }
  expansion_reference_ = previous;
  expansion_slot_ = slot;
  remote_estimate_.on_input_progress(now_);  // the peer played at least one more frame
  want_ack();
  return true;
}

// An inputs datagram's statuses, when it names a disconnected player. False when dropped.
bool Endpoint::take_statuses(const InputsBody& body) noexcept {
  const uint32_t players = config_.shape.num_players;
  // A disconnected player's last frame is one the peer had: not far beyond what we sent it.
  // Except a rejoin's cut (live_at - 1, our floor for that player): the live frame is stamped
  // seconds ahead (the state transfer's time), and a peer that cuts the player there (its
  // machine never came) reports it long before we reach it; dropping those datagrams cost us
  // every input of that peer until we dropped it, each survivor playing on alone (a desync).
  for (uint32_t i = 0; i < players && config_.send_blob_size != 0; ++i) {
    if (body.status[i].disconnected && body.status[i].last_frame > last_sent_ + kMaxFrameSkew &&
        body.status[i].last_frame > status_floor_[i]) {
      drop(DropReason::out_of_window);
      return false;
    }
  }
  for (uint32_t i = 0; i < players; ++i) {
    // Reordered datagrams must not move a player's status backwards. While connected, the last
    // frame only grows (protocol 2 does not send it: it stays -1); once disconnected it is the
    // agreed cut, which only ever moves earlier. A connected player decodes as {false, -1},
    // which changes nothing (a connected player's last frame is never below -1).
    ConnectStatus& s = remote_status_[i];
    const ConnectStatus& in = body.status[i];
    if (in.disconnected && in.last_frame < status_floor_[i]) {
      // Its cut before it rejoined: old news.
    } else if (in.disconnected) {
      s.last_frame = s.disconnected ? std::min(s.last_frame, in.last_frame) : in.last_frame;
      s.disconnected = true;
      remote_reports_cut_ = true;
    } else if (!s.disconnected && in.last_frame > s.last_frame) {
      s.last_frame = in.last_frame;
    }
  }
  return true;
}

void Endpoint::handle_rtt_sample(uint64_t rtt_us) noexcept {
  if (!have_rtt_) {
    have_rtt_ = true;
    srtt_us_ = rtt_us;
    jitter_us_ = rtt_us / 2;
    refresh_estimate_terms();
    return;
  }
  jitter_us_ = smooth(jitter_us_, distance(srtt_us_, rtt_us), 4);
  srtt_us_ = smooth(srtt_us_, rtt_us, 8);
  refresh_estimate_terms();
}

// ---------------------------------------------------------------------------------------------
// Inputs in and out

uint8_t* Endpoint::receive_slot(Frame frame) noexcept {
  return receive_ring_.data() +
         size_t(uint32_t(frame) % config_.receive_window_frames) * config_.receive_blob_size;
}

// A stream that starts at `frame` (a state transfer: the receiver loads that frame's state):
// both sides take `frame` as the first frame, delta-coded against zeros as frame 0 is. What was
// queued before is dropped. The receiver pauses first (pause_receive), so that no datagram of
// the old stream was acknowledged: those all start at frame 0 and are refused once the new
// stream starts later (their reference frame is not held).
void Endpoint::restart_outgoing_at(Frame frame) noexcept {
  if (frame < 0) return;
  out_base_ = frame;
  last_sent_ = last_acked_ = last_flushed_ = frame - 1;
  inputs_dirty_ = false;
  prepared_.reset(frame);
  refresh_usual_send();
}

void Endpoint::refresh_usual_send() noexcept {
  usual_end_ = std::numeric_limits<Frame>::min();
  const Frame frame = last_sent_ + 1;
  if (!usual_queue_ || frame <= out_base_ || send_capacity_ == 0) return;
  // send_input_general's tests, for this frame and those after it: room in the queue (up to
  // send_capacity_ frames from the oldest kept) and a slot before it in the ring (not index 0).
  const Frame oldest_kept = std::max(out_base_, last_acked_ - 1);
  const uint32_t index = uint32_t(frame) % send_capacity_;
  if (index == 0) return;
  const int64_t end = std::min(int64_t(oldest_kept) + send_capacity_, int64_t(frame) - index + send_capacity_);
  usual_end_ = Frame(std::min<int64_t>(end, std::numeric_limits<Frame>::max()));
  usual_frame_ = frame;
  usual_slot_ = send_ring_.data() + size_t(index) * config_.send_blob_size;
}

void Endpoint::restart_incoming_at(Frame frame) noexcept {
  if (frame < 0) return;
  in_base_ = frame;
  last_received_ = frame - 1;
  next_pop_ = frame;
  pop_index_ = config_.receive_window_frames != 0 ? uint32_t(frame) % config_.receive_window_frames : 0;
  receive_paused_ = false;
  refresh_usual_receive();
  start_expansion();
}

Result Endpoint::grow_send_ring() {
  const uint32_t bigger = send_capacity_ * 2;
  if (bigger > config_.max_send_queue_frames) return Result::input_out_of_window;
  std::vector<uint8_t> ring(size_t(bigger) * config_.send_blob_size, 0);
  const size_t blob = config_.send_blob_size;
  // From the frame before the acknowledged one: a status-only repeat (send_inputs) uses it.
  for (Frame f = std::max(out_base_, last_acked_ - 1); f <= last_sent_; ++f) {
    std::memcpy(ring.data() + size_t(uint32_t(f) % bigger) * blob, send_slot(f), blob);
  }
  send_ring_ = std::move(ring);
  send_capacity_ = bigger;
  log(LogLevel::debug, "send queue grown to %u frames", bigger);
  return Result::ok;
}

Result Endpoint::send_input_general(Frame frame, const uint8_t* blob) {
  if (!initialized_ || state_ == EndpointState::disconnected) return Result::wrong_state;
  if (blob == nullptr || config_.send_blob_size == 0 || frame != last_sent_ + 1 ||
      frame == std::numeric_limits<Frame>::max()) {
    return Result::invalid_argument;
  }
  const Frame oldest_kept = std::max(out_base_, last_acked_ - 1);
  if (uint32_t(frame - oldest_kept) + 1 > send_capacity_) {
    const Result grown = grow_send_ring();
    if (grown != Result::ok) return grown;
  }
  const size_t size = config_.send_blob_size;
  const uint32_t index = uint32_t(frame) % send_capacity_;
  uint8_t* const slot = send_ring_.data() + size_t(index) * size;
  copy_bytes(slot, blob, size);  // an input: a few bytes
  // Its delta against the frame before (the slot before, around the ring), coded once: appended
  // to the run the datagrams carry.
  const uint8_t* const previous =
      frame == out_base_ ? zeros_.data() : index != 0 ? slot - size : send_ring_.data() + size_t(send_capacity_ - 1) * size;
  // Behind (it was full): prepare_run appends this frame later.
  const bool append = prepared_.next() == frame;
  if (size <= kDeltaTokenReach && equal_bytes(slot, previous, size)) {
    // The input did not change (most frames): one zero run, which may wait to share a datagram.
    if (append) prepared_.append_unchanged(size);
  } else {
    const EncodedDelta delta = encode_delta(slot, previous, size, delta_tokens_.data());
    // A changed input goes out at once; an unchanged one may wait to share a datagram.
    if (!delta.unchanged) inputs_dirty_ = true;
    if (append) prepared_.append(delta, delta_tokens_.data());
  }
  last_sent_ = frame;
  refresh_usual_send();
  return Result::ok;
}

void Endpoint::queue_changed_coded(const uint8_t* slot, size_t size) noexcept {
  // Straight to the changed-delta coder, not encode_delta's second comparison.
  const EncodedDelta delta = encode_changed_delta(slot, slot - size, size, delta_tokens_.data());
  // A changed input goes out at once; an unchanged one may wait to share a datagram.
  if (!delta.unchanged) inputs_dirty_ = true;
  prepared_.append(delta, delta_tokens_.data());  // when the run is full, prepare_run catches up later
}

void Endpoint::rejoin_remote_player(PlayerIndex player, Frame floor) noexcept {
  if (player < 0 || player >= kMaxPlayers) return;
  remote_status_[player] = ConnectStatus{};
  status_floor_[player] = floor;
}


void Endpoint::set_local_frame(Frame frame, int32_t frame_advantage) noexcept {
  local_frame_ = frame;
  // The peer drops reports beyond the skew bound, so ours stay inside it.
  local_advantage_ = std::clamp(frame_advantage, -kMaxFrameSkew, kMaxFrameSkew);
}

bool Endpoint::peer_silent(uint64_t now_us) const noexcept {
  // In play the peer sends every frame or two; this long without a word is an outage.
  return now_us > last_received_at_ + config_.resend_interval_us + 4 * frame_us_ + 2 * jitter_us_;
}

Result Endpoint::send_checksum(Frame frame, uint64_t checksum) {
  if (!initialized_ || frame < 0) return Result::invalid_argument;
  if (outgoing_checksum_count_ == kChecksumCapacity) {
    // Keep the newest: older frames are the likeliest to have been compared already.
    std::memmove(outgoing_checksums_, outgoing_checksums_ + 1,
                 sizeof(ChecksumReport) * (kChecksumCapacity - 1));
    --outgoing_checksum_count_;
    ++stats_.checksums_overflowed;
  }
  if (outgoing_checksum_count_ == 0) checksums_due_since_ = now_;
  outgoing_checksums_[outgoing_checksum_count_++] = ChecksumReport{frame, checksum};
  not_quiet();  // a rider waits
  return Result::ok;
}

bool Endpoint::pop_checksum(Frame* frame, uint64_t* checksum) noexcept {
  if (incoming_checksum_count_ == 0 || frame == nullptr || checksum == nullptr) return false;
  const ChecksumReport& r = incoming_checksums_[incoming_checksum_head_];
  *frame = r.frame;
  *checksum = r.checksum;
  incoming_checksum_head_ = (incoming_checksum_head_ + 1) % kChecksumCapacity;
  --incoming_checksum_count_;
  return true;
}

size_t Endpoint::max_channel_body() const noexcept {
  return auth_.plain_capacity(MessageType::channel_data) - kDataHeaderSize;
}

Result Endpoint::send_channel(MessageType type, const uint8_t* body, size_t size, Transport& transport,
                              const PeerAddress& to) {
  if (!running()) return Result::wrong_state;
  if ((type != MessageType::channel_data && type != MessageType::channel_ack) || body == nullptr || size == 0 ||
      size > max_channel_body())
    return Result::invalid_argument;
  Message m;
  m.header = next_header(type);
  m.channel_body = body;
  m.channel_size = size;
  return send_message(transport, to, m);
}

void Endpoint::send_disconnect() noexcept {
  if (state_ == EndpointState::idle || state_ == EndpointState::disconnected) {
    set_state(EndpointState::disconnected);
    return;
  }
  set_state(EndpointState::disconnected);
  polled_.valid = false;  // out of running (polled_at)
  peer_reply_due_ = false;
  refresh_quiet();
  disconnect_notices_left_ = kDisconnectNotices;
}

// ---------------------------------------------------------------------------------------------
// Sending

Handshake Endpoint::local_hello(uint64_t challenge) const noexcept {
  Handshake h;
  h.challenge = challenge;
  h.shape = config_.shape;
  h.players_owned = config_.players_owned;
  h.spectator = config_.spectator;
  h.send_blob_size = config_.send_blob_size;
  h.receive_blob_size = config_.receive_blob_size;
  h.aes256gcm = auth_.offers_aes256gcm();
  return h;
}

Header Endpoint::next_header(MessageType type) noexcept {
  Header h;
  h.type = type;
  h.nonce = local_nonce_;
  h.sequence = next_sequence_++;
  return h;
}

Result Endpoint::send(Transport& transport, const PeerAddress& to, size_t length) {
  if (length == 0) return Result::internal_error;
  // Before the peer is verified only handshakes can be sealed (nobody to address the rest to).
  if (!is_handshake(static_cast<MessageType>(datagram_[3])) && !auth_.bound()) return Result::ok;
  // Every datagram is built right after its next_header(): its sequence is the last one drawn.
  length = auth_.seal(datagram_, length, sizeof datagram_, rng_, next_sequence_ - 1);
  if (length == 0) return Result::internal_error;
  ++stats_.datagrams_sent;
  stats_.bytes_sent += length;
  note_sent();
  last_sent_at_ = now_;  // any datagram is a sign of life: it resets the keep-alive timer
  if (transport.send(to, datagram_, length) != Result::ok) {
    ++stats_.send_failures;
    return Result::transport_error;
  }
  return Result::ok;
}

// Inlined into send_inputs and send_inputs_general, its only callers: every inputs datagram is sealed and sent
// here, and as a call its saved registers and arguments cost more than its checks.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline Result Endpoint::send_data(Transport& transport, const PeerAddress& to, size_t length) {
  if (length == 0) return Result::internal_error;
  if (!auth_.bound()) return Result::ok;  // nobody to address it to yet
  // Bound, and `length` an inputs datagram's its writers built (header to kMaxDatagramSize).
  if (!auth_.keyed()) {
    // seal_bound_data without a key: the checksum alone, here inline (net/data_checksum.h).
    const uint32_t sum = data_checksum(datagram_, length, auth_.plain_send_key(), next_sequence_ - 1);
    for (size_t i = 0; i < 4; ++i) datagram_[kDataPublicHeaderSize + i] = static_cast<uint8_t>(sum >> (8 * i));
  } else {
    length = auth_.seal_bound_data(datagram_, length, rng_, next_sequence_ - 1);
    if (length == 0) return Result::internal_error;
  }
  ++stats_.datagrams_sent;
  stats_.bytes_sent += length;
  note_sent();
  last_sent_at_ = now_;
  if (transport.send(to, datagram_, length) != Result::ok) {
    ++stats_.send_failures;
    return Result::transport_error;
  }
  return Result::ok;
}

Result Endpoint::send_message(Transport& transport, const PeerAddress& to, const Message& m) {
  return send(transport, to, encode_message(m, datagram_, auth_.plain_capacity(m.header.type)));
}

Result Endpoint::send_reply(Transport& transport, const PeerAddress& to, uint64_t challenge) {
  Message m;
  m.header = next_header(MessageType::handshake_reply);
  m.handshake = local_hello(challenge);
  return send_message(transport, to, m);
}

void Endpoint::catch_up_run() noexcept {
  // Coded again from the queue, as send_input coded them.
  while (prepared_.next() <= last_sent_) {
    const Frame f = prepared_.next();
    const EncodedDelta delta = encode_delta(send_slot(f), reference_of(f), config_.send_blob_size, delta_tokens_.data());
    if (!prepared_.append(delta, delta_tokens_.data())) break;
  }
}

const Riders* Endpoint::gather_riders(Frame start, size_t capacity) noexcept {
  // What waits to ride goes along when it leaves room for the first frame (always, but for
  // blobs of hundreds of bytes); otherwise it goes alone later (send_riders_alone).
  const size_t before_frame = kDataHeaderSize + kInputsFixedSize + kInputsStatusSize * config_.shape.num_players;
  // The first frame's tokens on their own: their most when even that leaves room for every rider
  // (inputs of up to a few hundred bytes), else coded to know.
  constexpr size_t kMostRiders = kReportRiderSize + kReplyRiderSize + kMaxRiddenChecksums * kChecksumRiderSize +
                                 kSilenceRiderSize;
  const size_t most_frame = max_encoded_delta_size(config_.send_blob_size);
  const size_t first_frame =
      before_frame + most_frame + kMostRiders <= capacity
          ? most_frame
          : encode_delta(send_slot(start), reference_of(start), config_.send_blob_size, delta_tokens_.data()).size;
  const size_t fixed = before_frame + first_frame;
  // Only the flags: the writers read no absent rider's fields.
  riders_.has_report = riders_.has_reply = riders_.has_silence = false;
  riders_.checksum_count = 0;
  bool any = false;
  if (riders_waiting() && fixed + riders_size() <= capacity) {
    take_riders(&riders_, now_);
    any = true;
  }
  // Our latest silence from the peer, for a while after it ended (a few bytes; never waits).
  SilenceNote note;
  if (silences_.note_due(now_, &note) && fixed + (any ? riders_.max_size() : 0) + kSilenceRiderSize <= capacity) {
    riders_.has_silence = true;
    riders_.silence = note;
  }
  return riders_.empty() ? nullptr : &riders_;
}

// Whether gather_riders would take one usual rider alone for the frames from last_acked_ + 1 on:
// a quality report or a reply waits, nothing else (no checksum, no silence note due), and the
// capacity has room for every rider with the first frame at its largest (gather_riders' first
// answer, so its room test passes). A disconnected player's status changes nothing here: the
// datagram is then InputsWriter's, with the riders gather_riders would have taken.
inline bool Endpoint::usual_rider_waits(size_t capacity) const noexcept {
  constexpr size_t kMostRiders = kReportRiderSize + kReplyRiderSize + kMaxRiddenChecksums * kChecksumRiderSize +
                                 kSilenceRiderSize;
  const size_t before_frame = kDataHeaderSize + kInputsFixedSize + kInputsStatusSize * config_.shape.num_players;
  SilenceNote note;
  return !general_riders_for_tests_ && report_due_ != probe_.reply_due() && outgoing_checksum_count_ == 0 &&
         before_frame + max_encoded_delta_size(config_.send_blob_size) + kMostRiders <= capacity &&
         !silences_.note_due(now_, &note);
}

// gather_riders' answer where usual_rider_waits: take_riders for the one rider, in riders_.
inline const Riders* Endpoint::take_usual_rider() noexcept {
  riders_.has_silence = false;
  riders_.checksum_count = 0;
  riders_.has_report = report_due_;
  riders_.has_reply = !report_due_;
  if (report_due_) {
    report_due_ = false;
    riders_.report = QualityReport{probe_.report_sent(now_), local_frame_, local_advantage_};
  } else {
    riders_.reply = probe_.take_reply(now_);
  }
  refresh_quiet();
  return &riders_;
}

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline Result Endpoint::send_inputs_inline(Transport& transport, const PeerAddress& to) {
  // The usual datagram: every unacknowledged frame (some are), their tokens kept ready
  // (prepared_), no rider waiting, no silence note due and no disconnected player's status.
  // Asked first, with nothing else worked out: every other datagram is send_inputs_general's,
  // which asks again from the start (prepare_run, asked twice, cuts nothing the second time).
  const Frame start = last_acked_ + 1;
  SilenceNote note;
  if (start <= last_sent_ && !status_disconnected_ && !riders_waiting() && !silences_.note_due(now_, &note) &&
      prepare_run(start)) {
    const size_t capacity = auth_.plain_capacity(MessageType::inputs);
    const size_t length = write_plain_inputs(datagram_, capacity, next_sequence_, last_received_, prepared_);
    if (length != 0) {
      ++next_sequence_;
      return send_data(transport, to, length);
    }
  }
  return send_inputs_general(transport, to);
}

Result Endpoint::send_inputs(Transport& transport, const PeerAddress& to) { return send_inputs_inline(transport, to); }

Result Endpoint::send_inputs_general(Transport& transport, const PeerAddress& to) {
  Frame start = last_acked_ + 1;
  // Nothing unacknowledged: repeat the last acknowledged frame (the receiver takes it as
  // redundancy) so that the connect status it carries reaches the peer.
  const bool repeat = start > last_sent_ && last_acked_ >= out_base_;
  if (repeat) start = last_acked_;
  const size_t capacity = auth_.plain_capacity(MessageType::inputs);
  // Riders are rare (a report every half second, its reply, checksums, a silence note); most
  // datagrams here carry one usual rider (take_usual_rider), the others gather_riders' choice.
  SilenceNote note;
  const bool usual = !repeat && usual_rider_waits(capacity) && prepare_run(start);
  const Riders* riders = usual ? take_usual_rider()
                         : riders_waiting() || silences_.note_due(now_, &note) ? gather_riders(start, capacity)
                                                                                 : nullptr;
  const bool prepared = usual || (!repeat && prepare_run(start));
  if (prepared && !status_disconnected_) {
    // With riders (most datagrams here), in one pass too.
    const size_t length =
        riders == nullptr ? write_plain_inputs(datagram_, capacity, next_sequence_, last_received_, prepared_)
                          : write_riding_inputs(datagram_, capacity, next_sequence_, last_received_, prepared_, *riders);
    if (length != 0) {
      ++next_sequence_;
      return send_data(transport, to, length);
    }
  }
  // Only disconnected players' statuses travel: with none, none is looked at.
  InputsWriter writer(datagram_, capacity, next_header(MessageType::inputs), start, last_received_,
                      config_.send_blob_size, local_status_,
                      status_disconnected_ ? uint8_t(config_.shape.num_players) : uint8_t(0), nullptr, riders);
  if (!prepared || !writer.append_prepared(prepared_)) {
    // Frame by frame, oldest first, as many as fit: the rest goes next time.
    const uint8_t* previous = reference_of(start);
    for (Frame f = start; f <= last_sent_; ++f) {
      const uint8_t* blob = send_slot(f);
      if (!writer.append(blob, previous)) break;
      previous = blob;
    }
  }
  if (writer.count() == 0) {
    ++stats_.oversized_blobs;
    log(LogLevel::error, "input blob of %u bytes does not fit one datagram",
        unsigned(config_.send_blob_size));
    return Result::internal_error;
  }
  // send_data writes the checksum (keyed) or seals it with an AEAD: no XXH3 here.
  return send_data(transport, to, writer.finish(Seal::none));
}

template <bool kInline>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void Endpoint::send_inputs_now(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result) {
  if (last_flushed_ <= last_acked_) unacked_since_ = now_us;
  if constexpr (kInline) {
    note(result, send_inputs_inline(transport, to));
  } else {
    note(result, send_inputs(transport, to));
  }
  note_spoke();
  inputs_dirty_ = false;
  ack_due_ = false;  // the inputs datagram carries our acknowledgement
  last_inputs_sent_at_ = now_us;
  last_flushed_ = last_sent_;  // what did not fit follows as the acknowledgements come
}

// The inputs part of a poll: loss detection, the send policy, resends, and an acknowledgement
// that waited for an inputs datagram. Running only. Inlined into its two callers (poll_again in
// every advance's pass, poll_full): as a call its saved registers cost more than its tests.
template <bool kAgain>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void Endpoint::send_inputs_due(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result) {
  // Each test below is worked out only where the decision can depend on it (they are all pure,
  // so the order changes nothing): this runs in both send passes of every tick, and most of the
  // time most of it is moot.
  const bool unacked = last_sent_ > last_acked_;
  const bool pending = last_sent_ > last_flushed_;
  // Frames out longer than a round trip (and its jitter, and a frame) without an
  // acknowledgement: a datagram or its acknowledgement was lost. Not again (poll_again): the
  // poll at this time asked already, and what it asks has not changed since but by that poll's
  // own send, which leaves the answer no (unacked_since_ is now, or as it was when asked).
  if (!kAgain && have_rtt_ && last_flushed_ > last_acked_ &&
      now_us > unacked_since_ + srtt_us_ + 2 * jitter_us_ + 2 * frame_us_) {
    note_loss(now_us);
  }
  // The send policy's two answers, each asked only where needed (inputs_due, ack_overdue).
  const SendPolicyConfig policy{config_.input_batch_frames, config_.loss_hold_frames};
  // Nothing pending but frames unacknowledged: resend them now and then (loss recovery when
  // no new frame is coming, e.g. while the owner waits at its prediction limit). While the
  // owner is stalled, every frame time: after a blackout the first datagram through then
  // ends the peer's stall at once.
  // While the peer is silent (a blackout: nothing it sends arrives, so most likely nothing we
  // send arrives either) the backlog goes every resend_interval_us only, and at once when the
  // peer speaks again.
  auto resend_after = [&] {
    return stalled_ && !peer_silent(now_us) ? std::min(config_.resend_interval_us, frame_us_ + frame_us_ / 2)
                                            : config_.resend_interval_us;
  };
  // Reports, replies and checksums ride on the next inputs datagram; once they waited their
  // patience out, they take one now if frames are unacknowledged (a resend), or go alone
  // (send_riders_due).
  auto riders_late = [&] {
    return riders_waiting() && now_us >= riders_waiting_since() + rider_patience_us();
  };
  bool send = false;
  if (unacked) {
    if (pending) {
      if (spoke_again_) {
        send = true;
      } else {
        send = inputs_due(policy, send_input_now(now_us));
      }
    } else {
      send = spoke_again_ || now_us >= last_inputs_sent_at_ + resend_after();  // a resend
    }
    if (!send) send = config_.send_blob_size > 0 && riders_late();
  } else {
    note_spoke();
    // A player is disconnected and no frame is on its way: the status alone must still travel,
    // since peers may be waiting at their prediction limit for exactly that news (to agree on
    // the player's cut). Repeated as a resend, since the datagram may be lost.
    send = any_disconnected_ && last_acked_ >= out_base_ && config_.send_blob_size > 0 &&
           now_us >= last_inputs_sent_at_ + resend_after();
  }
  if (send) send_inputs_now<false>(now_us, transport, to, result);
  // An acknowledgement waits a little for an inputs datagram to ride on, unless we send none.
  if (ack_due_ && (config_.send_blob_size == 0 || ack_overdue(send_input_now(now_us))))
    send_ack_alone(transport, to, result);
}

#if defined(__GNUC__)
__attribute__((flatten))
#endif
// Flattened: GCC otherwise keeps XXH3's final mix of the checksum's header hash (XXH3_rrmxmx) a
// call of its own in every datagram advance_frame sends.
#if defined(__GNUC__)
__attribute__((flatten))
#endif
Result Endpoint::send_pending(uint64_t now_us, Transport& transport, const PeerAddress& to) {
  now_ = now_us;
  Result result = Result::ok;
  send_inputs_now<true>(now_us, transport, to, result);  // our acknowledgement rides on it
  remember_poll(now_us);
  return result;
}

void Endpoint::send_ack_alone(Transport& transport, const PeerAddress& to, Result& result) {
  ack_due_ = false;
  Message m;
  m.header = next_header(MessageType::input_ack);
  m.ack_frame = last_received_;
  note(result, send_message(transport, to, m));
}

uint64_t Endpoint::riders_waiting_since() const noexcept {
  uint64_t since = std::numeric_limits<uint64_t>::max();
  if (report_due_) since = std::min(since, report_due_since_);
  if (probe_.reply_due()) since = std::min(since, probe_.reply_due_since());
  if (outgoing_checksum_count_ > 0) since = std::min(since, checksums_due_since_);
  return since;
}

uint64_t Endpoint::rider_patience_us() const noexcept {
  // An inputs datagram goes at least every batch of frames while frames are played (and every
  // 1.5 frames while stalled with frames unacknowledged); a side that sends no inputs has none
  // to wait for.
  if (config_.send_blob_size == 0) return 0;
  return uint64_t(config_.input_batch_frames + 1) * frame_us_;
}

size_t Endpoint::riders_size() const noexcept {
  const size_t checksums = std::min(outgoing_checksum_count_, kMaxRiddenChecksums);
  return (report_due_ ? kReportRiderSize : 0) + (probe_.reply_due() ? kReplyRiderSize : 0) +
         checksums * kChecksumRiderSize;
}

void Endpoint::take_riders(Riders* riders, uint64_t now_us) noexcept {
  if (report_due_) {
    report_due_ = false;
    riders->has_report = true;
    riders->report = QualityReport{probe_.report_sent(now_us), local_frame_, local_advantage_};
  }
  if (probe_.reply_due()) {
    riders->has_reply = true;
    riders->reply = probe_.take_reply(now_us);
  }
  const size_t n = std::min(outgoing_checksum_count_, kMaxRiddenChecksums);
  for (size_t i = 0; i < n; ++i) riders->checksums[i] = outgoing_checksums_[i];
  riders->checksum_count = uint8_t(n);
  // The rest move up and wait for the next datagram (from now: they are not late yet).
  if (n != 0)
    std::memmove(outgoing_checksums_, outgoing_checksums_ + n, sizeof(ChecksumReport) * (outgoing_checksum_count_ - n));
  outgoing_checksum_count_ -= n;
  if (outgoing_checksum_count_ > 0) checksums_due_since_ = now_us;
  refresh_quiet();
}

Result Endpoint::send_riders_alone(Transport& transport, const PeerAddress& to, uint64_t now_us) {
  Result result = Result::ok;
  if (probe_.reply_due()) {
    Message m;
    m.header = next_header(MessageType::quality_reply);
    m.reply = probe_.take_reply(now_us);
    note(result, send_message(transport, to, m));
  }
  if (report_due_) {
    report_due_ = false;
    Message m;
    m.header = next_header(MessageType::quality_report);
    m.quality = QualityReport{probe_.report_sent(now_us), local_frame_, local_advantage_};
    note(result, send_message(transport, to, m));
  }
  for (size_t i = 0; i < outgoing_checksum_count_; ++i) {
    Message m;
    m.header = next_header(MessageType::checksum_report);
    m.checksum = outgoing_checksums_[i];
    note(result, send_message(transport, to, m));
  }
  outgoing_checksum_count_ = 0;
  refresh_quiet();
  return result;
}

// What did not fit (or found no inputs datagram) and waited long enough goes alone.
void Endpoint::send_late_riders(uint64_t now_us, Transport& transport, const PeerAddress& to, Result& result) {
  if (now_us >= riders_waiting_since() + rider_patience_us())
    note(result, send_riders_alone(transport, to, now_us));
}

// A second poll at the time of the last one (the session's send pass after advancing): poll()
// decided everything then, so only what can have changed since needs a look: frames queued
// since, the owner's urgency, a player's status, checksums queued since. Nothing changed:
// nothing to do (the usual case when an unchanged input waits to share a datagram).
Result Endpoint::poll_again(uint64_t now_us, Transport& transport, const PeerAddress& to) {
  if (!polled_at(now_us)) return poll(now_us, transport, to);
  return poll_polled_again(now_us, transport, to);
}

Result Endpoint::poll_changed(uint64_t now_us, Transport& transport, const PeerAddress& to) {
  if (last_sent_ == polled_.last_sent && urgent_ == polled_.urgent && stalled_ == polled_.stalled &&
      any_disconnected_ == polled_.any_disconnected && outgoing_checksum_count_ == 0) {
    return Result::ok;
  }
  now_ = now_us;
  Result result = Result::ok;
  send_inputs_due</*kAgain=*/true>(now_us, transport, to, result);
  send_riders_due(now_us, transport, to, result);
  remember_poll(now_us);
  return result;
}

Result Endpoint::poll_full(uint64_t now_us, Transport& transport, const PeerAddress& to) {
  if (state_ == EndpointState::idle) return Result::wrong_state;
  now_ = now_us;
  Result result = Result::ok;
  polled_.valid = false;
  // Messages are built where they are sent: a Message is ~300 bytes to initialise and most
  // polls send none or only inputs.

  if (state_ == EndpointState::disconnected) {
    if (peer_reply_due_) {  // after a shape rejection, so the peer sees it too
      peer_reply_due_ = false;
      refresh_quiet();
      note(result, send_reply(transport, to, peer_reply_challenge_));
    }
    for (; disconnect_notices_left_ > 0; --disconnect_notices_left_) {
      Message m;
      m.header = next_header(MessageType::disconnect);
      note(result, send_message(transport, to, m));
    }
    return result;
  }

  if (running() && config_.disconnect_timeout_us != 0) {
    // A peer still finishing its handshake is heard by its requests (on_datagram).
    const uint64_t heard = std::max(last_received_at_, peer_request_at_);
    const uint64_t silence = now_us > heard ? now_us - heard : 0;
    if (silence >= config_.disconnect_timeout_us) {
      become_disconnected(false);
      return result;
    }
    if (state_ == EndpointState::running && config_.notify_delay_us != 0 &&
        silence >= config_.notify_delay_us) {
      set_state(EndpointState::interrupted);
      log(LogLevel::warning, "connection interrupted");
      EndpointEvent e{EndpointEventType::interrupted};
      e.timeout_us = config_.disconnect_timeout_us - silence;
      push_event(e);
    }
  }

  if (state_ == EndpointState::synchronizing && config_.handshake_timeout_us != 0 &&
      now_us >= started_at_ + config_.handshake_timeout_us) {
    // Handshakes of another version that never answered ours: most likely an older or newer
    // retcon (never decided on one datagram, which anybody could forge).
    if (saw_other_version_ && sync_done_ == 0) {
      reject(RejectReason::version);
    } else {
      log(LogLevel::warning, "handshake timed out");
      become_disconnected(false);
    }
    return result;
  }
  // A connection ends before its sequence numbers (the AEAD nonces) could repeat: 2^32
  // datagrams, over two years at 60 a second.
  if (next_sequence_ >= kLastSequence) {
    log(LogLevel::error, "sequence numbers exhausted");
    become_disconnected(false);
    return result;
  }
  if (peer_reply_due_) {
    peer_reply_due_ = false;
    note(result, send_reply(transport, to, peer_reply_challenge_));
  }
  for (size_t i = 0; i < stranger_count_; ++i) {
    note(result, send_reply(transport, to, stranger_challenges_[i]));
  }
  stranger_count_ = 0;
  refresh_quiet();  // no reply owed now
  if (state_ == EndpointState::synchronizing && now_us >= next_handshake_at_) {
    Message m;
    m.header = next_header(MessageType::handshake_request);
    m.handshake = local_hello(challenge_);
    note(result, send_message(transport, to, m));
    sent_request_ = true;
    last_request_at_ = now_us;
    next_handshake_at_ = now_us + config_.handshake_retry_us;
  }
  if (running()) {
    if (now_us >= next_quality_at_ && !report_due_) report_falls_due(now_us);
    send_inputs_due</*kAgain=*/false>(now_us, transport, to, result);
    send_riders_due(now_us, transport, to, result);
    if (!sent_anything_ || now_us >= last_sent_at_ + config_.keepalive_interval_us) {
      Message m;
      m.header = next_header(MessageType::keep_alive);
      note(result, send_message(transport, to, m));
    }
    remember_poll(now_us);  // only while running (polled_at)
  }
  return result;
}

}  // namespace retcon::detail

namespace retcon::detail {

EndpointStats Endpoint::stats() const noexcept {
  EndpointStats s = stats_;
  s.ping_us = srtt_us_;
  s.jitter_us = jitter_us_;
  s.send_queue_length = uint32_t(last_sent_ - last_acked_);
  return s;
}

}  // namespace retcon::detail
