// retcon: a reliable channel beside the input stream of one connection, sans-IO. It carries
//  - small reliable messages (1..kMaxChannelMessage bytes), each on a numbered stream (what it is
//    about: state-transfer control, timed decisions, ...; the channel does not read it), delivered
//    once each and in the order they were sent (one order across all streams);
//  - blobs (a saved state, up to the size given at init), in 1024-byte chunks that are
//    acknowledged selectively, resent on loss, paced by a byte rate, and checked whole (XXH3-64
//    of the blob) before the receiver sees them.
// It owns no socket and no clock: the owner hands it the bodies of channel_data / channel_ack
// datagrams that its Endpoint received (so they are authenticated and numbered like every other
// message: DatagramAuth opens them), and calls poll() after the Endpoint's own poll, so that
// inputs always go first; what is due goes out through a ChannelOutput (the Endpoint seals it).
// docs/PROTOCOL.md documents the bodies.
//
// Everything is allocated by init() (buffers sized from max_blob_size); nothing allocates later.
// One blob at a time in each direction. The sender's blob is not copied: it must stay unchanged
// until blob_sent, blob_refused or cancel_blob(). The receiver writes into a buffer its owner
// lends (set_receive_buffer), so several channels can share one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "net/wire.h"
#include "retcon/result.h"
#include "retcon/types.h"

namespace retcon::detail {

inline constexpr size_t kChannelChunkSize = 1024;
inline constexpr size_t kMaxChannelMessage = 256;
inline constexpr uint32_t kChannelMessageWindow = 32;  // unacknowledged messages, each way
inline constexpr uint32_t kChannelChunkWindow = 256;   // chunks in flight (the ack bitmap's width)

// Message streams: who a message is for. The channel carries any stream number; these are the
// ones retcon's sessions use (a session drops messages of a stream it does not know).
enum class ChannelStream : uint8_t {
  state_transfer = 1,  // state requests and answers (lib/session/state_transfer.h)
  decisions = 2,       // timed decisions (issue 12)
  desync_states = 3,   // both states on a desync (lib/session/desync_states.h)
};

struct ChannelConfig {
  size_t max_blob_size = 0;            // largest blob sent or received; 0: messages only
  uint64_t bytes_per_second = 1u << 20;  // pace of chunks (messages are never held back)
  uint32_t max_datagrams_per_poll = 16;
  // An incoming blob with no new chunk for this long is given up (blob_aborted).
  uint64_t stall_timeout_us = 5000000;
};

// Where poll() sends a datagram body: type is channel_data or channel_ack.
class ChannelOutput {
 public:
  virtual ~ChannelOutput() = default;
  virtual bool send(MessageType type, const uint8_t* body, size_t size) = 0;
};

enum class ChannelEventType : uint8_t {
  blob_received,  // an incoming blob is complete and verified: take it with received_blob()
  blob_sent,      // the receiver confirmed our blob whole
  blob_refused,   // the receiver cannot take our blob (too large for it): given up
  blob_aborted,   // an incoming blob stopped arriving (stall timeout, cancel, or the peer left)
  // We refused a peer's blob before storing a byte of it (larger than our buffer, or no buffer):
  // once per blob, with its tag, frame and size, so the owner can count what it turned away.
  incoming_refused,
};

struct ChannelEvent {
  ChannelEventType type;
  uint32_t tag = 0;
  Frame frame = kNullFrame;
  uint32_t size = 0;
};

struct ChannelStats {
  uint64_t messages_sent = 0, messages_resent = 0, messages_received = 0;
  uint64_t chunks_sent = 0, chunks_resent = 0, chunks_received = 0;
  uint64_t blobs_sent = 0, blobs_received = 0, blobs_failed_hash = 0;
  uint64_t blobs_refused = 0;  // incoming blobs refused before a byte was stored (incoming_refused)
  uint64_t dropped = 0;  // bodies that were malformed or out of range
};

class ReliableChannel {
 public:
  Result init(const ChannelConfig& config);
  // A new connection: both directions start over; a transfer in progress is reported aborted.
  void reset() noexcept;

  // ---- messages: invalid_argument for an empty or too long one; input_out_of_window when
  // kChannelMessageWindow messages wait for acknowledgement (messages_free() says how many fit).
  Result send_message(ChannelStream stream, const uint8_t* data, size_t size) noexcept;
  // The next message in order into `out` (capacity >= kMaxChannelMessage), with its stream;
  // false when none. The owner dispatches by stream.
  // Inline test first: asked every poll, and a message is rarely waiting.
  bool pop_message(ChannelStream* stream, uint8_t* out, size_t* size) noexcept {
    return has_message() && pop_waiting_message(stream, out, size);
  }
  bool has_message() const noexcept { return in_msgs_[in_msg_next_ % kChannelMessageWindow].present; }
  uint32_t messages_unacknowledged() const noexcept { return out_msg_next_ - out_msg_base_; }
  uint32_t messages_free() const noexcept { return kChannelMessageWindow - messages_unacknowledged(); }
  // The number the next send_message gets (messages count from 0 per connection).
  uint32_t next_message_seq() const noexcept { return out_msg_next_; }
  // True once the receiver acknowledged every message up to and including `seq` (one sent).
  bool acknowledged_through(uint32_t seq) const noexcept { return int32_t(seq - out_msg_base_) < 0; }

  // ---- outgoing blob. wrong_state while another is in progress; invalid_argument when larger
  // than max_blob_size (or empty). `tag` and `frame` travel with it for the receiver.
  Result send_blob(uint32_t tag, Frame frame, const uint8_t* data, size_t size) noexcept;
  void cancel_blob() noexcept;
  bool sending_blob() const noexcept { return out_blob_ != nullptr; }
  // Nothing to send: no acknowledgement due, no message unacknowledged, no blob going out. A
  // poll of an idle channel sends nothing (the session skips its second poll in a tick then).
  // Inline, one flag: the session asks twice a tick per peer. Kept by every member function that
  // changes what it depends on (NoteIdleOnReturn, on every return).
  bool idle() const noexcept { return idle_; }
  // What idle() keeps, worked out from the state (its tests compare the two after every call).
  bool idle_from_state() const noexcept {
    return !ack_due_ && ack_repeats_ == 0 && out_msg_base_ == out_msg_next_ && out_blob_ == nullptr;
  }
  uint32_t blob_chunks_acked() const noexcept;

  // ---- incoming blob, written into the owner's buffer (null: incoming blobs are refused).
  void set_receive_buffer(uint8_t* buffer, size_t capacity) noexcept;
  bool receiving_blob() const noexcept { return in_.active && !in_.complete; }
  // The verified blob after blob_received, until release_blob().
  bool received_blob(uint32_t* tag, Frame* frame, const uint8_t** data, size_t* size) const noexcept;
  void release_blob() noexcept;

  // ---- wire.
  void on_datagram(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) noexcept;
  // Sends acknowledgements, messages and (paced) chunks that are due. `rtt_us`: the
  // connection's smoothed round trip (0 when unknown), for the resend timeout.
  // Inline for the usual poll (nothing to send, no blob coming in): what poll_busy() comes to.
  void poll(uint64_t now_us, uint64_t rtt_us, ChannelOutput& out) noexcept {
    if (!poll_idle(now_us)) poll_busy(now_us, rtt_us, out);
  }
  // The usual poll alone: true when it was all (nothing to send, no blob coming in), before
  // an owner builds the output that a busy poll needs.
  bool poll_idle(uint64_t now_us) noexcept {
    if (!initialized_ || in_.active || !idle()) return false;
    tokens_at_ = now_us;
    tokens_ = 0;
    return true;
  }
  // The peer is gone: transfers in either direction end (blob_aborted for an incoming one).
  void peer_gone() noexcept;

  bool pop_event(ChannelEvent* event) noexcept;
  // Inline: the session asks every poll, and most polls no event waits.
  bool has_event() const noexcept { return event_count_ != 0; }
  // has_event() || has_message(), kept as a flag by every call that changes either (the
  // session asks every poll for every peer; has_message() alone is an index into the ring).
  bool waiting() const noexcept { return waiting_; }
  const ChannelStats& stats() const noexcept { return stats_; }

 private:
  bool pop_waiting_message(ChannelStream* stream, uint8_t* out, size_t* size) noexcept;
  void poll_busy(uint64_t now_us, uint64_t rtt_us, ChannelOutput& out) noexcept;
  struct OutMessage {
    uint32_t seq = 0;
    uint8_t stream = 0;
    uint16_t size = 0;
    bool acked = false;
    bool sent = false;
    uint64_t sent_at = 0;
    uint8_t data[kMaxChannelMessage] = {};
  };
  struct InMessage {
    bool present = false;
    uint8_t stream = 0;
    uint16_t size = 0;
    uint8_t data[kMaxChannelMessage] = {};
  };
  struct Incoming {
    bool active = false, complete = false, released = false;
    uint32_t id = 0, total = 0, chunks = 0, tag = 0, received = 0;
    uint64_t hash = 0;
    Frame frame = kNullFrame;
    uint32_t next_missing = 0;
    uint64_t last_chunk_at = 0;
  };
  enum InStatus : uint8_t { kReceiving = 0, kComplete = 1, kRefused = 2, kBusy = 3, kCorrupt = 4 };

  void push_event(const ChannelEvent& e) noexcept;
  void on_data(const uint8_t* body, size_t size, uint64_t now_us) noexcept;
  void on_ack(const uint8_t* body, size_t size, uint64_t now_us) noexcept;
  void on_chunk(uint32_t id, uint32_t total, uint64_t hash, uint32_t tag, Frame frame, uint32_t index,
                const uint8_t* payload, size_t size, uint64_t now_us) noexcept;
  void ack_message(uint32_t seq) noexcept;
  void ack_chunk(uint32_t index) noexcept;
  bool chunk_acked(uint32_t index) const noexcept { return (out_acked_[index / 64] >> (index % 64)) & 1u; }
  bool chunk_received(uint32_t index) const noexcept { return (in_received_[index / 64] >> (index % 64)) & 1u; }
  size_t chunk_size(uint32_t total, uint32_t index) const noexcept;
  bool send_ack(ChannelOutput& out) noexcept;
  bool send_chunk(ChannelOutput& out, uint32_t index) noexcept;
  void finish_outgoing(ChannelEventType type) noexcept;
  // At the top of every member function that may change what idle_from_state() reads (the
  // acknowledgement due or repeating, the messages unacknowledged, the outgoing blob): idle_
  // is worked out again on each of its returns.
  struct NoteIdleOnReturn {
    ReliableChannel& channel;
    ~NoteIdleOnReturn() { channel.idle_ = channel.idle_from_state(); }
  };

  ChannelConfig config_;
  uint32_t max_chunks_ = 0;
  bool initialized_ = false;

  // Outgoing messages: seq out_msg_base_ .. out_msg_next_-1 wait for acknowledgement.
  OutMessage out_msgs_[kChannelMessageWindow];
  uint32_t out_msg_base_ = 0, out_msg_next_ = 0;
  // Incoming messages: in_msg_next_ is the next to deliver.
  InMessage in_msgs_[kChannelMessageWindow];
  uint32_t in_msg_next_ = 0;

  // Outgoing blob.
  const uint8_t* out_blob_ = nullptr;
  uint32_t out_id_ = 0, out_total_ = 0, out_chunks_ = 0, out_tag_ = 0;
  Frame out_frame_ = kNullFrame;
  uint64_t out_hash_ = 0;
  uint32_t out_base_ = 0;      // every chunk before it is acknowledged
  uint32_t out_next_new_ = 0;  // the first chunk never sent
  uint32_t out_restarts_ = 0;  // the receiver found the whole blob corrupt
  std::vector<uint64_t> out_acked_;   // bit per chunk
  uint64_t out_sent_at_[kChannelChunkWindow] = {};  // per chunk in flight (index % window)
  double tokens_ = 0;
  uint64_t tokens_at_ = 0;

  // Incoming blob.
  uint8_t* in_buffer_ = nullptr;
  size_t in_capacity_ = 0;
  Incoming in_;
  std::vector<uint64_t> in_received_;  // bit per chunk
  uint32_t refused_id_ = 0;            // the last id refused (status refused), 0: none
  uint8_t in_status_ = kReceiving;
  uint32_t in_status_id_ = 0;          // the id in_status_ is about

  bool ack_due_ = false;
  // A message's acknowledgement goes out again on later polls (kMessageAckRepeats times, a tick
  // or more apart): a sender may hold its inputs until it hears it (a rejoin notice, a timed
  // decision), and with every copy of the acknowledgement lost the receiver stalls for a
  // resend timeout and a round trip per loss, long enough under heavy loss for its liveness
  // watch to drop a healthy peer. Messages are rare, so the repeats cost a few small datagrams.
  uint8_t ack_repeats_ = 0;
  uint64_t ack_repeat_at_ = 0;
  bool idle_ = true;  // idle_from_state() as of the last change (idle)
  bool waiting_ = false;  // has_event() || has_message() as of the last change (waiting)
  void note_waiting() noexcept { waiting_ = has_event() || has_message(); }
  ChannelEvent events_[16] = {};
  uint32_t event_head_ = 0, event_count_ = 0;
  ChannelStats stats_;
  uint8_t scratch_[kMaxDatagramSize] = {};
};

}  // namespace retcon::detail
