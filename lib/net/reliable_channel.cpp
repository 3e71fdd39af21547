// retcon: see reliable_channel.h for the contract; docs/PROTOCOL.md ("Reliable channel") for
// the bodies.
#include "net/reliable_channel.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "net/byte_io.h"

namespace retcon::detail {

namespace {

enum DataKind : uint8_t { kMessage = 1, kChunk = 2, kCancel = 3 };
constexpr size_t kChunkHeader = 1 + 4 + 4 + 8 + 4 + 4 + 4;  // kind, id, total, hash, tag, frame, index
constexpr size_t kAckWords = kChannelChunkWindow / 64;  // the chunk bitmap, in u64s
constexpr uint64_t kUnknownRttTimeoutUs = 200000;
constexpr uint32_t kMaxRestarts = 3;

// A received message's acknowledgement is sent again this many times, at least this far apart
// (ReliableChannel::ack_repeats_ says why): just under a 60 Hz tick, so one per later tick.
constexpr uint8_t kMessageAckRepeats = 2;
constexpr uint64_t kMessageAckRepeatGapUs = 15000;

// Resend after a round trip plus the receiver's acknowledgement delay (up to a tick) and margin.
uint64_t resend_timeout(uint64_t rtt_us) noexcept {
  if (rtt_us == 0) return kUnknownRttTimeoutUs;
  return std::max<uint64_t>(rtt_us + rtt_us / 4 + 20000, 30000);
}

uint32_t chunk_count(uint64_t total) noexcept { return uint32_t((total + kChannelChunkSize - 1) / kChannelChunkSize); }

void set_bit(std::vector<uint64_t>& bits, uint32_t i) noexcept { bits[i / 64] |= uint64_t{1} << (i % 64); }

}  // namespace

Result ReliableChannel::init(const ChannelConfig& config) {
  if (config.max_blob_size > (size_t{1} << 31) || config.max_datagrams_per_poll == 0) return Result::invalid_argument;
  config_ = config;
  max_chunks_ = chunk_count(config.max_blob_size);
  const size_t words = (size_t(max_chunks_) + 63) / 64 + 1;
  out_acked_.assign(words, 0);
  in_received_.assign(words, 0);
  initialized_ = true;
  reset();
  stats_ = ChannelStats{};
  return Result::ok;
}

void ReliableChannel::reset() noexcept {
  const NoteIdleOnReturn note{*this};
  peer_gone();
  out_msg_base_ = out_msg_next_ = 0;
  for (OutMessage& m : out_msgs_) m.acked = m.sent = false;
  in_msg_next_ = 0;
  for (InMessage& m : in_msgs_) m.present = false;
  in_ = Incoming{};
  in_status_ = kReceiving;
  in_status_id_ = 0;
  refused_id_ = 0;
  ack_due_ = false;
  ack_repeats_ = 0;
  event_head_ = event_count_ = 0;
  note_waiting();
}

void ReliableChannel::peer_gone() noexcept {
  const NoteIdleOnReturn note{*this};
  if (in_.active && !in_.complete) push_event({ChannelEventType::blob_aborted, in_.tag, in_.frame, in_.total});
  if (in_.active && !in_.complete) in_.active = false;
  out_blob_ = nullptr;
}

void ReliableChannel::push_event(const ChannelEvent& e) noexcept {
  constexpr uint32_t n = sizeof events_ / sizeof events_[0];
  if (event_count_ == n) {  // keep the newest
    event_head_ = (event_head_ + 1) % n;
    --event_count_;
  }
  events_[(event_head_ + event_count_) % n] = e;
  ++event_count_;
  waiting_ = true;
}

bool ReliableChannel::pop_event(ChannelEvent* event) noexcept {
  if (event_count_ == 0 || event == nullptr) return false;
  constexpr uint32_t n = sizeof events_ / sizeof events_[0];
  *event = events_[event_head_];
  event_head_ = (event_head_ + 1) % n;
  --event_count_;
  note_waiting();
  return true;
}

size_t ReliableChannel::chunk_size(uint32_t total, uint32_t index) const noexcept {
  const size_t start = size_t(index) * kChannelChunkSize;
  return std::min(kChannelChunkSize, size_t(total) - start);
}

// ---------------------------------------------------------------- messages

Result ReliableChannel::send_message(ChannelStream stream, const uint8_t* data, size_t size) noexcept {
  const NoteIdleOnReturn note{*this};
  if (!initialized_) return Result::wrong_state;
  if (data == nullptr || size == 0 || size > kMaxChannelMessage) return Result::invalid_argument;
  if (out_msg_next_ - out_msg_base_ >= kChannelMessageWindow) return Result::input_out_of_window;
  OutMessage& m = out_msgs_[out_msg_next_ % kChannelMessageWindow];
  m.seq = out_msg_next_++;
  m.stream = uint8_t(stream);
  m.size = uint16_t(size);
  m.acked = m.sent = false;
  std::memcpy(m.data, data, size);
  return Result::ok;
}

bool ReliableChannel::pop_waiting_message(ChannelStream* stream, uint8_t* out, size_t* size) noexcept {
  const NoteIdleOnReturn note{*this};
  InMessage& m = in_msgs_[in_msg_next_ % kChannelMessageWindow];
  if (!m.present || stream == nullptr || out == nullptr || size == nullptr) return false;
  std::memcpy(out, m.data, m.size);
  *stream = ChannelStream(m.stream);
  *size = m.size;
  m.present = false;
  ++in_msg_next_;
  note_waiting();
  ack_due_ = true;  // the window moved: tell the sender
  return true;
}

void ReliableChannel::ack_message(uint32_t seq) noexcept {
  if (seq - out_msg_base_ >= out_msg_next_ - out_msg_base_) return;  // not waiting
  out_msgs_[seq % kChannelMessageWindow].acked = true;
}

// ---------------------------------------------------------------- blobs

Result ReliableChannel::send_blob(uint32_t tag, Frame frame, const uint8_t* data, size_t size) noexcept {
  const NoteIdleOnReturn note{*this};
  if (!initialized_) return Result::wrong_state;
  if (out_blob_ != nullptr) return Result::wrong_state;
  if (data == nullptr || size == 0 || size > config_.max_blob_size) return Result::invalid_argument;
  out_blob_ = data;
  out_total_ = uint32_t(size);
  out_chunks_ = chunk_count(size);
  out_hash_ = XXH3_64bits(data, size);
  out_tag_ = tag;
  out_frame_ = frame;
  do ++out_id_; while (out_id_ == 0);
  out_base_ = out_next_new_ = 0;
  out_restarts_ = 0;
  std::fill(out_acked_.begin(), out_acked_.end(), 0);
  return Result::ok;
}

void ReliableChannel::cancel_blob() noexcept {
  const NoteIdleOnReturn note{*this};
  out_blob_ = nullptr;
}

uint32_t ReliableChannel::blob_chunks_acked() const noexcept {
  if (out_blob_ == nullptr) return 0;
  uint32_t n = 0;
  for (uint32_t i = 0; i < out_chunks_; ++i) n += chunk_acked(i);
  return n;
}

void ReliableChannel::finish_outgoing(ChannelEventType type) noexcept {
  if (out_blob_ == nullptr) return;
  if (type == ChannelEventType::blob_sent) ++stats_.blobs_sent;
  push_event({type, out_tag_, out_frame_, out_total_});
  out_blob_ = nullptr;
}

void ReliableChannel::ack_chunk(uint32_t index) noexcept {
  if (index >= out_next_new_ || chunk_acked(index)) return;
  set_bit(out_acked_, index);
}

void ReliableChannel::set_receive_buffer(uint8_t* buffer, size_t capacity) noexcept {
  if (in_.active && buffer != in_buffer_) {
    if (!in_.complete) push_event({ChannelEventType::blob_aborted, in_.tag, in_.frame, in_.total});
    in_.active = false;
  }
  in_buffer_ = buffer;
  in_capacity_ = buffer == nullptr ? 0 : std::min(capacity, config_.max_blob_size);
}

bool ReliableChannel::received_blob(uint32_t* tag, Frame* frame, const uint8_t** data, size_t* size) const noexcept {
  if (!in_.active || !in_.complete || in_.released) return false;
  if (tag) *tag = in_.tag;
  if (frame) *frame = in_.frame;
  if (data) *data = in_buffer_;
  if (size) *size = in_.total;
  return true;
}

void ReliableChannel::release_blob() noexcept {
  if (in_.active && in_.complete) in_.released = true;
}

void ReliableChannel::on_chunk(uint32_t id, uint32_t total, uint64_t hash, uint32_t tag, Frame frame, uint32_t index,
                               const uint8_t* payload, size_t size, uint64_t now_us) noexcept {
  ack_due_ = true;
  const bool same = in_.active && in_.id == id;
  if (same && in_.complete) return;  // a resend: the ack says complete
  if (!same) {
    if (id == refused_id_) return;
    if (total > in_capacity_ || in_buffer_ == nullptr) {
      refused_id_ = id;
      in_status_ = kRefused;
      in_status_id_ = id;
      ++stats_.blobs_refused;
      push_event({ChannelEventType::incoming_refused, tag, frame, total});
      return;
    }
    if (in_.active && in_.complete && !in_.released) {
      in_status_ = kBusy;  // the owner has not taken the last blob yet: the sender retries
      in_status_id_ = id;
      return;
    }
    const bool resume = in_.active && !in_.complete && in_.total == total && in_.hash == hash;
    if (in_.active && !in_.complete && !resume)
      push_event({ChannelEventType::blob_aborted, in_.tag, in_.frame, in_.total});
    if (!resume) {
      in_ = Incoming{};
      in_.total = total;
      in_.chunks = chunk_count(total);
      in_.hash = hash;
      std::fill(in_received_.begin(), in_received_.begin() + std::ptrdiff_t(in_.chunks / 64 + 1), 0);
    }
    in_.active = true;
    in_.id = id;
    in_.tag = tag;
    in_.frame = frame;
    in_status_ = kReceiving;
    in_status_id_ = id;
  }
  if (in_.total != total || in_.hash != hash) {
    ++stats_.dropped;  // the same id with another shape: not from this sender's transfer
    return;
  }
  in_.last_chunk_at = now_us;
  if (chunk_received(index)) return;
  std::memcpy(in_buffer_ + size_t(index) * kChannelChunkSize, payload, size);
  set_bit(in_received_, index);
  ++in_.received;
  ++stats_.chunks_received;
  while (in_.next_missing < in_.chunks && chunk_received(in_.next_missing)) ++in_.next_missing;
  if (in_.received < in_.chunks) return;
  if (XXH3_64bits(in_buffer_, in_.total) != in_.hash) {
    // Every chunk passed the datagram checks yet the whole differs: start over (the sender
    // restarts on kCorrupt; a blob changed under the sender would be caught the same way).
    ++stats_.blobs_failed_hash;
    std::fill(in_received_.begin(), in_received_.begin() + std::ptrdiff_t(in_.chunks / 64 + 1), 0);
    in_.received = in_.next_missing = 0;
    in_status_ = kCorrupt;
    return;
  }
  in_.complete = true;
  in_status_ = kComplete;
  ++stats_.blobs_received;
  push_event({ChannelEventType::blob_received, in_.tag, in_.frame, in_.total});
}

// ---------------------------------------------------------------- wire

void ReliableChannel::on_datagram(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) noexcept {
  const NoteIdleOnReturn note{*this};
  if (!initialized_ || body == nullptr) return;
  if (type == MessageType::channel_data) on_data(body, size, now_us);
  else if (type == MessageType::channel_ack) on_ack(body, size, now_us);
  else ++stats_.dropped;
}

void ReliableChannel::on_data(const uint8_t* body, size_t size, uint64_t now_us) noexcept {
  ByteReader r(body, size);
  const uint8_t kind = r.u8();
  if (kind == kMessage) {
    const uint32_t seq = r.u32();
    const uint8_t stream = r.u8();
    const size_t length = r.remaining();
    if (r.failed() || length == 0 || length > kMaxChannelMessage) {
      ++stats_.dropped;
      return;
    }
    ack_due_ = true;
    ack_repeats_ = kMessageAckRepeats;  // see ack_repeats_
    ack_repeat_at_ = now_us + kMessageAckRepeatGapUs;
    if (seq - in_msg_next_ >= kChannelMessageWindow) return;  // a duplicate, or too far ahead
    InMessage& m = in_msgs_[seq % kChannelMessageWindow];
    if (m.present) return;
    std::memcpy(m.data, r.skip(length), length);
    m.stream = stream;
    m.size = uint16_t(length);
    m.present = true;
    note_waiting();
    ++stats_.messages_received;
    return;
  }
  if (kind == kChunk) {
    const uint32_t id = r.u32(), total = r.u32();
    const uint64_t hash = r.u64();
    const uint32_t tag = r.u32();
    const Frame frame = r.i32();
    const uint32_t index = r.u32();
    const size_t length = r.remaining();
    if (r.failed() || id == 0 || total == 0 || total > (uint32_t{1} << 31) || frame < kNullFrame) {
      ++stats_.dropped;
      return;
    }
    if (chunk_count(total) > max_chunks_) {  // larger than we could ever take: refused
      if (id != refused_id_) {
        ++stats_.blobs_refused;
        push_event({ChannelEventType::incoming_refused, tag, frame, total});
      }
      refused_id_ = id;
      in_status_ = kRefused;
      in_status_id_ = id;
      ack_due_ = true;
      return;
    }
    if (index >= chunk_count(total) || length != chunk_size(total, index)) {
      ++stats_.dropped;
      return;
    }
    on_chunk(id, total, hash, tag, frame, index, r.skip(length), length, now_us);
    return;
  }
  if (kind == kCancel) {
    const uint32_t id = r.u32();
    if (r.failed() || r.remaining() != 0) {
      ++stats_.dropped;
      return;
    }
    if (in_.active && in_.id == id && !in_.complete) {
      push_event({ChannelEventType::blob_aborted, in_.tag, in_.frame, in_.total});
      in_.active = false;
    }
    return;
  }
  ++stats_.dropped;
}

void ReliableChannel::on_ack(const uint8_t* body, size_t size, uint64_t) noexcept {
  ByteReader r(body, size);
  const uint32_t msg_next = r.u32(), msg_bits = r.u32(), id = r.u32();
  const uint8_t status = r.u8();
  const uint32_t chunk_next = r.u32();
  uint64_t chunk_bits[kAckWords];
  for (uint64_t& w : chunk_bits) w = r.u64();
  if (r.failed() || r.remaining() != 0 || status > kCorrupt) {
    ++stats_.dropped;
    return;
  }
  // An acknowledgement of messages never sent is not our peer's: refuse all of it. One behind
  // our base is an old one, reordered: its message part says nothing new.
  const int32_t ahead = int32_t(msg_next - out_msg_base_);
  if (ahead > int32_t(out_msg_next_ - out_msg_base_)) {
    ++stats_.dropped;
    return;
  }
  for (int32_t k = 0; k < ahead; ++k) ack_message(out_msg_base_ + uint32_t(k));
  for (uint32_t i = 0; i < 32; ++i)
    if ((msg_bits >> i) & 1u) ack_message(msg_next + 1 + i);
  while (out_msg_base_ != out_msg_next_ && out_msgs_[out_msg_base_ % kChannelMessageWindow].acked) ++out_msg_base_;

  if (out_blob_ == nullptr || id != out_id_) return;
  switch (status) {
    case kComplete: finish_outgoing(ChannelEventType::blob_sent); return;
    case kRefused: finish_outgoing(ChannelEventType::blob_refused); return;
    case kBusy: return;  // resent on the timeout until the receiver has room
    case kCorrupt:
      if (++out_restarts_ > kMaxRestarts) {
        finish_outgoing(ChannelEventType::blob_refused);
        return;
      }
      std::fill(out_acked_.begin(), out_acked_.end(), 0);
      out_base_ = out_next_new_ = 0;
      return;
    default: break;
  }
  if (chunk_next > out_next_new_) {
    ++stats_.dropped;  // acknowledges chunks never sent
    return;
  }
  for (uint32_t i = out_base_; i < chunk_next; ++i) ack_chunk(i);
  for (uint32_t i = 0; i < kChannelChunkWindow; ++i)
    if ((chunk_bits[i / 64] >> (i % 64)) & 1u) ack_chunk(chunk_next + 1 + i);
  while (out_base_ < out_chunks_ && chunk_acked(out_base_)) ++out_base_;
}

bool ReliableChannel::send_ack(ChannelOutput& out) noexcept {
  ByteWriter w(scratch_, sizeof scratch_);
  // Received counts, not delivered: the owner may pop later.
  uint32_t next = in_msg_next_;
  while (next - in_msg_next_ < kChannelMessageWindow && in_msgs_[next % kChannelMessageWindow].present) ++next;
  w.u32(next);
  uint32_t bits = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    const uint32_t seq = next + 1 + i;
    if (seq - in_msg_next_ < kChannelMessageWindow && in_msgs_[seq % kChannelMessageWindow].present) bits |= 1u << i;
  }
  w.u32(bits);
  w.u32(in_status_id_);
  w.u8(in_status_);
  const bool receiving = in_.active && in_.id == in_status_id_ && in_status_ == kReceiving;
  const uint32_t chunk_next = receiving ? in_.next_missing : 0;
  w.u32(chunk_next);
  uint64_t chunk_bits[kAckWords] = {};
  if (receiving)
    for (uint32_t i = 0; i < kChannelChunkWindow && chunk_next + 1 + i < in_.chunks; ++i)
      if (chunk_received(chunk_next + 1 + i)) chunk_bits[i / 64] |= uint64_t{1} << (i % 64);
  for (uint64_t word : chunk_bits) w.u64(word);
  return out.send(MessageType::channel_ack, scratch_, w.size());
}

bool ReliableChannel::send_chunk(ChannelOutput& out, uint32_t index) noexcept {
  const size_t size = chunk_size(out_total_, index);
  ByteWriter w(scratch_, sizeof scratch_);
  w.u8(kChunk);
  w.u32(out_id_);
  w.u32(out_total_);
  w.u64(out_hash_);
  w.u32(out_tag_);
  w.i32(out_frame_);
  w.u32(index);
  w.bytes(out_blob_ + size_t(index) * kChannelChunkSize, size);
  if (w.overflowed()) return false;
  tokens_ -= double(size + kChunkHeader);
  return out.send(MessageType::channel_data, scratch_, w.size());
}

void ReliableChannel::poll_busy(uint64_t now_us, uint64_t rtt_us, ChannelOutput& out) noexcept {
  const NoteIdleOnReturn note{*this};
  if (!initialized_) return;
  if (in_.active && !in_.complete && now_us > in_.last_chunk_at + config_.stall_timeout_us) {
    push_event({ChannelEventType::blob_aborted, in_.tag, in_.frame, in_.total});
    in_.active = false;
  }
  if (idle()) {  // the usual poll: what the loops below would come to
    tokens_at_ = now_us;
    tokens_ = 0;
    return;
  }
  uint32_t budget = config_.max_datagrams_per_poll;
  if (!ack_due_ && ack_repeats_ > 0 && now_us >= ack_repeat_at_) {
    ack_due_ = true;
    --ack_repeats_;
    ack_repeat_at_ = now_us + kMessageAckRepeatGapUs;
  }
  if (ack_due_ && budget > 0) {
    ack_due_ = false;
    send_ack(out);
    --budget;
  }
  const uint64_t rto = resend_timeout(rtt_us);
  for (uint32_t s = out_msg_base_; s != out_msg_next_ && budget > 0; ++s) {
    OutMessage& m = out_msgs_[s % kChannelMessageWindow];
    if (m.acked || (m.sent && now_us < m.sent_at + rto)) continue;
    ByteWriter w(scratch_, sizeof scratch_);
    w.u8(kMessage);
    w.u32(m.seq);
    w.u8(m.stream);
    w.bytes(m.data, m.size);
    (m.sent ? stats_.messages_resent : stats_.messages_sent)++;
    m.sent = true;
    m.sent_at = now_us;
    out.send(MessageType::channel_data, scratch_, w.size());
    --budget;
  }
  if (out_blob_ == nullptr) {
    tokens_at_ = now_us;
    tokens_ = 0;
    return;
  }
  // Pacing: tokens accrue at bytes_per_second, at most 40 ms worth plus a few chunks (the owner
  // polls once per frame; a longer gap must not turn into a burst that queues in front of the
  // next inputs datagram).
  const double burst = double(4 * (kChannelChunkSize + kChunkHeader)) + double(config_.bytes_per_second) * 0.04;
  if (now_us > tokens_at_) tokens_ += double(now_us - tokens_at_) * double(config_.bytes_per_second) / 1e6;
  tokens_at_ = now_us;
  tokens_ = std::min(tokens_, burst);
  for (uint32_t i = out_base_; i < out_next_new_ && budget > 0 && tokens_ >= 0; ++i) {
    if (chunk_acked(i) || now_us < out_sent_at_[i % kChannelChunkWindow] + rto) continue;
    if (!send_chunk(out, i)) return;
    out_sent_at_[i % kChannelChunkWindow] = now_us;
    ++stats_.chunks_resent;
    --budget;
  }
  while (out_next_new_ < out_chunks_ && out_next_new_ < out_base_ + kChannelChunkWindow && budget > 0 &&
         tokens_ >= 0) {
    if (!send_chunk(out, out_next_new_)) return;
    out_sent_at_[out_next_new_ % kChannelChunkWindow] = now_us;
    ++out_next_new_;
    ++stats_.chunks_sent;
    --budget;
  }
}

}  // namespace retcon::detail
