// retcon: the datagram codec (layout in docs/PROTOCOL.md).
#include "net/wire.h"

#include <xxhash.h>

#include <cstring>
#include <limits>

namespace retcon::detail {

namespace {

constexpr size_t kHandshakeSize = 16;
constexpr uint8_t kFlagSpectator = 0x01;

void write_header(ByteWriter& w, const Header& h) noexcept {
  w.u8(kMagic0);
  w.u8(kMagic1);
  w.u8(h.version);
  w.u8(static_cast<uint8_t>(h.type));
  w.u32(h.nonce);
  w.u32(h.sequence);
  w.u32(0);  // checksum, sealed once the body is written
}

// XXH3 of everything but the checksum field itself, truncated to 32 bits. UDP's own 16-bit
// checksum is optional over IPv4 and user transports may have none; a garbled input that
// decoded would be a silent desync, the worst failure a rollback game can have.
uint32_t datagram_checksum(const uint8_t* data, size_t size) noexcept {
  const uint64_t head = XXH3_64bits(data, kChecksumOffset);
  return static_cast<uint32_t>(XXH3_64bits_withSeed(data + kHeaderSize, size - kHeaderSize, head));
}

void write_handshake(ByteWriter& w, const Handshake& h) noexcept {
  w.u32(h.challenge);
  w.u8(static_cast<uint8_t>(h.shape.num_players));
  w.u16(static_cast<uint16_t>(h.shape.input_size));
  w.u16(static_cast<uint16_t>(h.shape.frame_rate));
  w.u16(h.players_owned);
  w.u8(h.spectator ? kFlagSpectator : 0);
  w.u16(h.send_blob_size);
  w.u16(h.receive_blob_size);
}

bool read_handshake(ByteReader& r, Handshake* h) noexcept {
  h->challenge = r.u32();
  h->shape.num_players = r.u8();
  h->shape.input_size = r.u16();
  h->shape.frame_rate = r.u16();
  h->players_owned = r.u16();
  const uint8_t flags = r.u8();
  h->spectator = (flags & kFlagSpectator) != 0;
  h->send_blob_size = r.u16();
  h->receive_blob_size = r.u16();
  if (r.failed()) return true;  // the caller reports truncation
  const uint32_t players = h->shape.num_players;
  return players >= 1 && players <= uint32_t(kMaxPlayers) && h->shape.input_size >= 1 &&
         h->shape.input_size <= kMaxInputSize && h->shape.frame_rate >= 1 &&
         (h->players_owned >> players) == 0 && (flags & ~kFlagSpectator) == 0 &&
         h->send_blob_size <= kMaxBlobSize && h->receive_blob_size <= kMaxBlobSize;
}

bool read_inputs(ByteReader& r, InputsBody* b) noexcept {
  b->start_frame = r.i32();
  b->ack_frame = r.i32();
  b->count = r.u16();
  b->blob_size = r.u16();
  b->status_count = r.u8();
  const uint8_t disconnected = r.u8();
  if (r.failed()) return true;
  if (b->start_frame < 0 || b->ack_frame < kNullFrame || b->count == 0 || b->blob_size == 0 ||
      b->blob_size > kMaxBlobSize || b->status_count > kMaxPlayers ||
      b->start_frame > std::numeric_limits<Frame>::max() - b->count ||
      (b->status_count < 8 && (disconnected >> b->status_count) != 0)) {
    return false;
  }
  for (uint8_t i = 0; i < b->status_count; ++i) {
    b->status[i].disconnected = ((disconnected >> i) & 1) != 0;
    b->status[i].last_frame = r.i32();
    if (b->status[i].last_frame < kNullFrame) return false;
  }
  for (uint8_t i = b->status_count; i < kMaxPlayers; ++i) b->status[i] = ConnectStatus{};
  if (r.failed()) return true;
  b->payload_size = r.remaining();
  b->payload = r.skip(b->payload_size);
  return inputs_payload_valid(b->payload, b->payload_size, b->count, b->blob_size);
}

}  // namespace

void seal_datagram(uint8_t* data, size_t size) noexcept {
  if (data == nullptr || size < kHeaderSize) return;
  const uint32_t sum = datagram_checksum(data, size);
  for (size_t i = 0; i < 4; ++i) data[kChecksumOffset + i] = static_cast<uint8_t>(sum >> (8 * i));
}

const char* message_type_name(MessageType type) noexcept {
  switch (type) {
    case MessageType::handshake_request: return "handshake_request";
    case MessageType::handshake_reply: return "handshake_reply";
    case MessageType::inputs: return "inputs";
    case MessageType::input_ack: return "input_ack";
    case MessageType::quality_report: return "quality_report";
    case MessageType::quality_reply: return "quality_reply";
    case MessageType::keep_alive: return "keep_alive";
    case MessageType::disconnect: return "disconnect";
    case MessageType::checksum_report: return "checksum_report";
  }
  return "unknown";
}

const char* decode_error_name(DecodeError error) noexcept {
  switch (error) {
    case DecodeError::ok: return "ok";
    case DecodeError::truncated: return "truncated";
    case DecodeError::oversized: return "oversized";
    case DecodeError::bad_magic: return "bad_magic";
    case DecodeError::bad_version: return "bad_version";
    case DecodeError::bad_checksum: return "bad_checksum";
    case DecodeError::unknown_type: return "unknown_type";
    case DecodeError::malformed: return "malformed";
  }
  return "unknown";
}

DecodeError decode_message(const uint8_t* data, size_t size, Message* out) noexcept {
  if (out == nullptr) return DecodeError::malformed;
  *out = Message{};
  if (data == nullptr) return DecodeError::truncated;
  if (size > kMaxDatagramSize) return DecodeError::oversized;
  if (size < kHeaderSize) return DecodeError::truncated;
  ByteReader r(data, size);
  const uint8_t m0 = r.u8();
  const uint8_t m1 = r.u8();
  if (m0 != kMagic0 || m1 != kMagic1) return DecodeError::bad_magic;
  out->header.version = r.u8();
  const uint8_t type = r.u8();
  out->header.nonce = r.u32();
  out->header.sequence = r.u32();
  const uint32_t checksum = r.u32();
  if (type < uint8_t(MessageType::handshake_request) ||
      type > uint8_t(MessageType::checksum_report)) {
    return out->header.version != kProtocolVersion ? DecodeError::bad_version
                                                   : DecodeError::unknown_type;
  }
  out->header.type = static_cast<MessageType>(type);
  // Only the header layout is promised across versions; the body is not read.
  if (out->header.version != kProtocolVersion) return DecodeError::bad_version;
  if (checksum != datagram_checksum(data, size)) return DecodeError::bad_checksum;

  bool valid = true;
  switch (out->header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: valid = read_handshake(r, &out->handshake); break;
    case MessageType::inputs: valid = read_inputs(r, &out->inputs); break;
    case MessageType::input_ack:
      out->ack_frame = r.i32();
      valid = out->ack_frame >= kNullFrame;
      break;
    case MessageType::quality_report:
      out->quality.send_time_us = r.u64();
      out->quality.local_frame = r.i32();
      out->quality.frame_advantage = r.i32();
      break;
    case MessageType::quality_reply: out->echoed_time_us = r.u64(); break;
    case MessageType::keep_alive:
    case MessageType::disconnect: break;
    case MessageType::checksum_report:
      out->checksum.frame = r.i32();
      out->checksum.checksum = r.u64();
      valid = out->checksum.frame >= 0;
      break;
  }
  if (r.failed()) return DecodeError::truncated;
  if (!valid || r.remaining() != 0) return DecodeError::malformed;
  return DecodeError::ok;
}

size_t encode_message(const Message& m, uint8_t* out, size_t capacity) noexcept {
  if (out == nullptr || m.header.type == MessageType::inputs) return 0;
  ByteWriter w(out, capacity < kMaxDatagramSize ? capacity : kMaxDatagramSize);
  write_header(w, m.header);
  switch (m.header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: write_handshake(w, m.handshake); break;
    case MessageType::inputs: return 0;
    case MessageType::input_ack: w.i32(m.ack_frame); break;
    case MessageType::quality_report:
      w.u64(m.quality.send_time_us);
      w.i32(m.quality.local_frame);
      w.i32(m.quality.frame_advantage);
      break;
    case MessageType::quality_reply: w.u64(m.echoed_time_us); break;
    case MessageType::keep_alive:
    case MessageType::disconnect: break;
    case MessageType::checksum_report:
      w.i32(m.checksum.frame);
      w.u64(m.checksum.checksum);
      break;
  }
  static_assert(kHandshakeSize == 16);
  if (w.overflowed()) return 0;
  seal_datagram(out, w.size());
  return w.size();
}

InputsWriter::InputsWriter(uint8_t* out, size_t capacity, const Header& header,
                           Frame start_frame, Frame ack_frame, uint16_t blob_size,
                           const ConnectStatus* status, uint8_t status_count,
                           const uint8_t* reference) noexcept
    : writer_(out, capacity < kMaxDatagramSize ? capacity : kMaxDatagramSize),
      encoder_(writer_),
      previous_(reference),
      blob_size_(blob_size) {
  Header h = header;
  h.type = MessageType::inputs;
  write_header(writer_, h);
  writer_.i32(start_frame);
  writer_.i32(ack_frame);
  count_offset_ = writer_.size();
  writer_.u16(0);
  writer_.u16(blob_size);
  if (status_count > kMaxPlayers) status_count = kMaxPlayers;
  writer_.u8(status_count);
  uint8_t disconnected = 0;
  for (uint8_t i = 0; i < status_count; ++i) {
    if (status[i].disconnected) disconnected = static_cast<uint8_t>(disconnected | (1u << i));
  }
  writer_.u8(disconnected);
  for (uint8_t i = 0; i < status_count; ++i) writer_.i32(status[i].last_frame);
}

bool InputsWriter::append(const uint8_t* blob) noexcept {
  if (writer_.overflowed() || count_ == std::numeric_limits<uint16_t>::max()) return false;
  if (!encoder_.append(blob, previous_, blob_size_)) return false;
  previous_ = blob;
  ++count_;
  return true;
}

size_t InputsWriter::finish() noexcept {
  if (writer_.overflowed()) return 0;
  writer_.patch_u16(count_offset_, count_);
  seal_datagram(writer_.data(), writer_.size());
  return writer_.size();
}

InputsReader::InputsReader(const InputsBody& body, const uint8_t* reference) noexcept
    : decoder_(body.payload, body.payload_size),
      blob_size_(body.blob_size <= kMaxBlobSize ? body.blob_size : 0),
      left_(body.count) {
  std::memset(previous_, 0, sizeof previous_);
  if (reference != nullptr) std::memcpy(previous_, reference, blob_size_);
}

bool InputsReader::next(uint8_t* blob) noexcept {
  if (left_ == 0 || blob_size_ == 0) return false;
  if (!decoder_.next(blob, blob_size_)) {
    left_ = 0;
    return false;
  }
  for (uint16_t i = 0; i < blob_size_; ++i) {
    blob[i] = static_cast<uint8_t>(blob[i] ^ previous_[i]);
    previous_[i] = blob[i];
  }
  --left_;
  return true;
}

bool inputs_payload_valid(const uint8_t* payload, size_t size, uint16_t count,
                          uint16_t blob_size) noexcept {
  if (payload == nullptr && size != 0) return false;
  DeltaRunDecoder decoder(payload, size);
  uint8_t scratch[256];
  size_t left = size_t(count) * blob_size;
  while (left != 0) {
    const size_t n = left < sizeof scratch ? left : sizeof scratch;
    if (!decoder.next(scratch, n)) return false;
    left -= n;
  }
  return decoder.finished();
}

}  // namespace retcon::detail
