// retcon: the datagram codec (layout in docs/PROTOCOL.md).
#include "net/wire.h"

#include <bit>
#include <cstring>
#include <limits>

#include "net/data_checksum.h"

namespace retcon::detail {

namespace {

constexpr size_t kHandshakeSize = 21;
constexpr uint8_t kFlagSpectator = 0x01;
constexpr uint8_t kFlagAes256Gcm = 0x02;
constexpr uint8_t kFlagRefused = 0x04;  // a reply: the sender refuses this connection (a rejoin)
constexpr uint8_t kKnownFlags = kFlagSpectator | kFlagAes256Gcm | kFlagRefused;

void write_header(ByteWriter& w, const Header& h) noexcept {
  if (!is_handshake(h.type)) {
    // A data header in one store (every datagram has one): the low 16 bits of the sequence (the
    // receiver widens them: widen_sequence), the checksum sealed once the body is written.
    const uint8_t bytes[kDataHeaderSize] = {kMagic0, kMagic1, h.version, static_cast<uint8_t>(h.type),
                                            static_cast<uint8_t>(h.sequence),
                                            static_cast<uint8_t>(h.sequence >> 8), 0, 0, 0, 0};
    w.bytes(bytes, sizeof bytes);
    return;
  }
  w.u8(kMagic0);
  w.u8(kMagic1);
  w.u8(h.version);
  w.u8(static_cast<uint8_t>(h.type));
  w.u32(h.nonce);
  w.u32(h.sequence);
  w.u32(0);  // checksum, sealed once the body is written
}

uint8_t handshake_flags(const Handshake& h) noexcept {
  return uint8_t((h.spectator ? kFlagSpectator : 0) | (h.aes256gcm ? kFlagAes256Gcm : 0) |
                 (h.refused ? kFlagRefused : 0));
}

void write_handshake(ByteWriter& w, const Handshake& h) noexcept {
  w.u64(h.challenge);
  w.u8(static_cast<uint8_t>(h.shape.num_players));
  w.u16(static_cast<uint16_t>(h.shape.input_size));
  w.u16(static_cast<uint16_t>(h.shape.frame_rate));
  w.u8(static_cast<uint8_t>(h.shape.max_prediction));
  w.u16(h.players_owned);
  w.u8(handshake_flags(h));
  w.u16(h.send_blob_size);
  w.u16(h.receive_blob_size);
}

bool read_handshake(ByteReader& r, Handshake* h) noexcept {
  h->challenge = r.u64();
  h->shape.num_players = r.u8();
  h->shape.input_size = r.u16();
  h->shape.frame_rate = r.u16();
  h->shape.max_prediction = r.u8();
  h->players_owned = r.u16();
  const uint8_t flags = r.u8();
  h->spectator = (flags & kFlagSpectator) != 0;
  h->aes256gcm = (flags & kFlagAes256Gcm) != 0;
  h->refused = (flags & kFlagRefused) != 0;
  h->send_blob_size = r.u16();
  h->receive_blob_size = r.u16();
  if (r.failed()) return true;  // the caller reports truncation
  const uint32_t players = h->shape.num_players;
  return players >= 1 && players <= uint32_t(kMaxPlayers) && h->shape.input_size >= 1 &&
         h->shape.input_size <= kMaxInputSize && h->shape.frame_rate >= 1 &&
         h->shape.max_prediction <= uint32_t(kMaxPredictionFrames) &&
         (h->players_owned >> players) == 0 && (flags & ~kKnownFlags) == 0 &&
         h->send_blob_size <= kMaxBlobSize && h->receive_blob_size <= kMaxBlobSize;
}

uint32_t zigzag(int32_t v) noexcept {
  return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}

int32_t unzigzag(uint32_t v) noexcept {
  return static_cast<int32_t>((v >> 1) ^ (0u - (v & 1u)));
}

// A frame written relative to `base` (the inputs datagram's start frame, or 0 in a standalone
// message): zigzag, so a frame a little before or after the base takes one byte.
void write_frame(ByteWriter& w, Frame frame, Frame base) noexcept {
  w.varint(zigzag(int32_t(int64_t(frame) - base)));
}

// False when the varint is bad or the frame lands outside 0..2^31-1.
bool read_frame(ByteReader& r, Frame base, Frame* frame) noexcept {
  uint32_t v = 0;
  if (!r.varint(&v)) return false;
  const int64_t f = int64_t(base) + unzigzag(v);
  if (r.failed()) return true;  // the caller reports truncation
  if (f < 0 || f > std::numeric_limits<Frame>::max()) return false;
  *frame = Frame(f);
  return true;
}

// The bodies of quality_report, quality_reply and checksum_report, and the same fields riding on
// an inputs datagram (docs/PROTOCOL.md "Riders"): one codec, frames relative to `base`.
void write_report(ByteWriter& w, const QualityReport& q, Frame base) noexcept {
  w.u8(q.id);
  write_frame(w, q.local_frame, base);
  w.varint(zigzag(q.frame_advantage));
}

bool read_report(ByteReader& r, Frame base, QualityReport* q) noexcept {
  q->id = r.u8();
  uint32_t advantage = 0;
  const bool valid = read_frame(r, base, &q->local_frame) && r.varint(&advantage);
  q->frame_advantage = unzigzag(advantage);
  return valid;
}

void write_reply(ByteWriter& w, const QualityReply& q) noexcept {
  w.u8(q.id);
  w.varint(q.hold_us);
}

bool read_reply(ByteReader& r, QualityReply* q) noexcept {
  q->id = r.u8();
  return r.varint(&q->hold_us) && q->hold_us <= kMaxReplyHoldUs;
}

void write_checksum(ByteWriter& w, const ChecksumReport& c, Frame base) noexcept {
  write_frame(w, c.frame, base);
  w.u64(c.checksum);
}

bool read_checksum(ByteReader& r, Frame base, ChecksumReport* c) noexcept {
  const bool valid = read_frame(r, base, &c->frame);
  c->checksum = r.u64();
  return valid;
}

void write_silence(ByteWriter& w, const SilenceNote& n) noexcept {
  w.varint(n.gap_ms);
  w.varint(n.ago_ms);
}

bool read_silence(ByteReader& r, SilenceNote* n) noexcept {
  return r.varint(&n->gap_ms) && r.varint(&n->ago_ms) && n->gap_ms >= 1 && n->gap_ms <= kMaxSilenceGapMs &&
         n->ago_ms <= kMaxSilenceAgoMs;
}

bool silence_fits(const SilenceNote& n) noexcept {
  return n.gap_ms >= 1 && n.gap_ms <= kMaxSilenceGapMs && n.ago_ms <= kMaxSilenceAgoMs;
}

// The flags byte of an inputs body: what follows the count.
constexpr uint8_t kFlagDisconnected = 0x01;   // the disconnected mask and last frames
constexpr uint8_t kFlagReport = 0x02;         // a quality report rides
constexpr uint8_t kFlagReply = 0x04;          // a quality reply rides
constexpr unsigned kChecksumCountShift = 3;   // bits 3-5: checksum reports riding (0..7)
constexpr uint8_t kFlagSilence = 0x40;        // a silence note rides
constexpr uint8_t kKnownInputsFlags = 0x7F;
static_assert(kMaxRiddenChecksums == 7, "bits 3-5 of the flags count them");
static_assert(kFlagReport == 0x02 && kFlagReply == 0x04, "take_usual_riders and write_riding_inputs (wire.h) spell them");

// Which riders an inputs datagram carries (InputsWriter and write_riding_inputs alike): riders
// whose values the wire cannot hold are left out (the endpoint never makes them), and the
// flags byte names the others.
struct RiderPlan {
  bool report = false, reply = false, silence = false;
  uint8_t checksums = 0;
  uint8_t flags = 0;  // without kFlagDisconnected
};

RiderPlan plan_riders(const Riders* riders) noexcept {
  RiderPlan plan;
  if (riders == nullptr) return plan;
  plan.report = riders->has_report && riders->report.local_frame >= 0;
  plan.reply = riders->has_reply && riders->reply.hold_us <= kMaxReplyHoldUs;
  while (plan.checksums < riders->checksum_count && plan.checksums < kMaxRiddenChecksums &&
         riders->checksums[plan.checksums].frame >= 0)
    ++plan.checksums;
  plan.silence = riders->has_silence && silence_fits(riders->silence);
  plan.flags = uint8_t((plan.report ? kFlagReport : 0) | (plan.reply ? kFlagReply : 0) |
                       (plan.checksums << kChecksumCountShift) | (plan.silence ? kFlagSilence : 0));
  return plan;
}

uint8_t* put_u64(uint8_t* p, uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, 8);
  } else {
    for (size_t i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  }
  return p + 8;
}

// write_riders straight into a buffer known to have room for them (kMostRidingHead): the same
// bytes (ByteWriter's varint is put_varint's, its u64 little-endian).
uint8_t* put_riders(uint8_t* p, const Riders& riders, const RiderPlan& plan, Frame start_frame) noexcept {
  if (plan.report) {
    *p++ = riders.report.id;
    p = put_varint(p, zigzag(int32_t(int64_t(riders.report.local_frame) - start_frame)));
    p = put_varint(p, zigzag(riders.report.frame_advantage));
  }
  if (plan.reply) {
    *p++ = riders.reply.id;
    p = put_varint(p, riders.reply.hold_us);
  }
  for (uint8_t i = 0; i < plan.checksums; ++i) {
    p = put_varint(p, zigzag(int32_t(int64_t(riders.checksums[i].frame) - start_frame)));
    p = put_u64(p, riders.checksums[i].checksum);
  }
  if (plan.silence) {
    p = put_varint(p, riders.silence.gap_ms);
    p = put_varint(p, riders.silence.ago_ms);
  }
  return p;
}

// The riders `plan` names, after the flags (and the disconnected players' statuses).
void write_riders(ByteWriter& w, const Riders& riders, const RiderPlan& plan, Frame start_frame) noexcept {
  if (plan.report) write_report(w, riders.report, start_frame);
  if (plan.reply) write_reply(w, riders.reply);
  for (uint8_t i = 0; i < plan.checksums; ++i) write_checksum(w, riders.checksums[i], start_frame);
  if (plan.silence) write_silence(w, riders.silence);
}

// The riders the flags name, each written (an absent one's fields are left as they were).
bool read_riders(ByteReader& r, uint8_t flags, Frame start_frame, Riders* riders_out) noexcept {
  Riders& riders = *riders_out;
  riders.has_report = (flags & kFlagReport) != 0;
  if (riders.has_report && !read_report(r, start_frame, &riders.report)) return false;
  riders.has_reply = (flags & kFlagReply) != 0;
  if (riders.has_reply && !read_reply(r, &riders.reply)) return false;
  riders.checksum_count = uint8_t((flags >> kChecksumCountShift) & 7u);
  for (uint8_t i = 0; i < riders.checksum_count; ++i)
    if (!read_checksum(r, start_frame, &riders.checksums[i])) return false;
  riders.has_silence = (flags & kFlagSilence) != 0;
  if (riders.has_silence && !read_silence(r, &riders.silence)) return false;
  return true;
}

// The payload of `count` frames (b->payload, b->payload_size set): the blob size is not sent,
// every blob has it, so the tokens must stand for count of them exactly. One walk also notes
// where the frame the receiver wants next starts (`seek`), when it lies after the first.
// False: the payload is not count whole blobs of a size the protocol allows.
inline bool measure_payload(InputsBody* b, size_t count, const InputsSeek& seek) noexcept {
  const Frame ahead = seek.frame - b->start_frame;  // both in -1..2^31-1
  const size_t skip = ahead > 0 && ahead < Frame(count) ? size_t(ahead) * seek.blob_size : SIZE_MAX;
  size_t delta_bytes = 0, seek_offset = 0, seek_into = 0;
  if (!delta_tokens_find(b->payload, b->payload_size, skip, &delta_bytes, &seek_offset, &seek_into) ||
      delta_bytes % count != 0)
    return false;
  const size_t blob_size = delta_bytes / count;
  if (blob_size < 1 || blob_size > kMaxBlobSize) return false;
  b->blob_size = uint16_t(blob_size);
  // The noted position is that frame's only when the blobs are the size the receiver assumed.
  if (skip != SIZE_MAX && blob_size == seek.blob_size) {
    b->seek_frame = seek.frame;
    b->seek_offset = uint32_t(seek_offset);
    b->seek_into = uint32_t(seek_into);
  } else {
    b->seek_frame = kNullFrame;
  }
  return true;
}

// Layout in docs/PROTOCOL.md: start_frame, ack_frame - start_frame (zigzag), count, flags, then
// by the flags the disconnected mask with each disconnected player's last_frame + 1, a quality
// report, a quality reply, checksum reports, a silence note; then the payload, whose decoded length gives the
// blob size.
bool read_inputs(ByteReader& r, InputsBody* b, const InputsSeek& seek) noexcept {
  // Only what a datagram can leave behind is reset, not the whole body: the statuses when the
  // last one decoded here named a disconnected player (they are written only after
  // `disconnected` is, so with it 0 they are all still connected), and the riders' presence
  // (an absent rider's fields are not read). Every other field is written below on success.
  static constexpr ConnectStatus kConnected[kMaxPlayers] = {};
  if (b->disconnected != 0) {
    std::memcpy(b->status, kConnected, sizeof b->status);
    b->disconnected = 0;
  }
  uint32_t start = 0, ack_delta = 0, count = 0;
  bool valid = r.varint(&start) && r.varint(&ack_delta) && r.varint(&count);
  const uint8_t flags = r.u8();
  if (r.failed()) return true;  // the caller reports truncation
  const int64_t ack = int64_t(start) + unzigzag(ack_delta);
  valid = valid && start <= uint32_t(std::numeric_limits<Frame>::max()) && ack >= kNullFrame &&
          ack <= std::numeric_limits<Frame>::max() && count >= 1 &&
          count <= std::numeric_limits<uint16_t>::max() &&
          start <= uint32_t(std::numeric_limits<Frame>::max()) - count && (flags & ~kKnownInputsFlags) == 0;
  if (!valid) return false;
  b->start_frame = Frame(start);
  b->ack_frame = Frame(ack);
  b->count = uint16_t(count);
  if ((flags & kFlagDisconnected) != 0) {
    b->disconnected = r.u8();
    if (r.failed()) return true;
    if (b->disconnected == 0) return false;  // the flag says someone is: one encoding per value
  }
  // Nobody disconnected (the usual datagram): every status stays as reset above.
  for (int i = 0; i < kMaxPlayers && b->disconnected != 0; ++i) {
    if (((b->disconnected >> i) & 1) == 0) continue;
    uint32_t last = 0;
    if (!r.varint(&last)) return false;
    if (r.failed()) return true;
    if (last > uint32_t(std::numeric_limits<Frame>::max()) + 1u) return false;
    b->status[i].disconnected = true;
    b->status[i].last_frame = Frame(int64_t(last) - 1);
  }
  Riders& riders = b->riders;
  if ((flags & (kFlagReport | kFlagReply | (7u << kChecksumCountShift) | kFlagSilence)) == 0) {
    riders.has_report = riders.has_reply = riders.has_silence = false;  // the usual datagram
    riders.checksum_count = 0;
  } else if (!read_riders(r, flags, b->start_frame, &riders)) {
    return false;
  }
  if (r.failed()) return true;
  b->payload_size = r.remaining();
  b->payload = r.skip(b->payload_size);
  return measure_payload(b, count, seek);
}

}  // namespace

// XXH3 of everything but the checksum field itself, truncated to 32 bits. UDP's own 16-bit
// checksum is optional over IPv4 and user transports may have none; a garbled input that
// decoded would be a silent desync, the worst failure a rollback game can have.
namespace {
void put_checksum(uint8_t* at, uint32_t sum) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(at, &sum, 4);
  } else {
    for (size_t i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(sum >> (8 * i));
  }
}
}  // namespace

uint32_t datagram_checksum(const uint8_t* data, size_t size, uint64_t connection_key,
                           uint32_t sequence) noexcept {
  const MessageType type = static_cast<MessageType>(data[3]);
  if (!is_handshake(type)) return data_checksum(data, size, connection_key, sequence);
  const uint64_t head = XXH3_64bits(data, kHandshakePublicHeaderSize);
  return static_cast<uint32_t>(
      XXH3_64bits_withSeed(data + kHandshakeHeaderSize, size - kHandshakeHeaderSize, head ^ connection_key));
}

uint32_t data_datagram_checksum(const uint8_t* data, size_t size, uint64_t connection_key,
                                uint32_t sequence) noexcept {
  return data_checksum(data, size, connection_key, sequence);
}

void seal_data_datagram(uint8_t* data, size_t size, uint64_t connection_key, uint32_t sequence) noexcept {
  if (data == nullptr || size < kDataHeaderSize || is_handshake(static_cast<MessageType>(data[3]))) return;
  put_checksum(data + kDataPublicHeaderSize, data_checksum(data, size, connection_key, sequence));
}

void seal_datagram(uint8_t* data, size_t size, uint64_t connection_key, uint32_t sequence_base) noexcept {
  if (data == nullptr || size < kMinHeaderSize) return;
  const MessageType type = static_cast<MessageType>(data[3]);
  if (size < header_size(type)) return;
  uint32_t sequence = 0;
  if (is_handshake(type)) connection_key = 0;
  else sequence = widen_sequence(ByteReader(data + 4, 2).u16(), sequence_base);
  put_checksum(data + public_header_size(type), datagram_checksum(data, size, connection_key, sequence));
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
    case MessageType::channel_data: return "channel_data";
    case MessageType::channel_ack: return "channel_ack";
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

DecodeError decode_public_header(const uint8_t* data, size_t size, Header* out) noexcept {
  if (out == nullptr) return DecodeError::malformed;
  *out = Header{};
  if (data == nullptr) return DecodeError::truncated;
  if (size > kMaxDatagramSize) return DecodeError::oversized;
  if (size < kMinHeaderSize) return DecodeError::truncated;
  ByteReader r(data, size);
  const uint8_t m0 = r.u8();
  const uint8_t m1 = r.u8();
  if (m0 != kMagic0 || m1 != kMagic1) return DecodeError::bad_magic;
  out->version = r.u8();
  const uint8_t type = r.u8();
  // Only the first four bytes are promised across versions; the rest is not read.
  const bool known = type >= uint8_t(MessageType::handshake_request) &&
                     type <= uint8_t(MessageType::channel_ack);
  if (known) out->type = static_cast<MessageType>(type);
  if (out->version != kProtocolVersion) return DecodeError::bad_version;
  if (!known) return DecodeError::unknown_type;
  if (is_handshake(out->type)) {
    if (size < kHandshakePublicHeaderSize) return DecodeError::truncated;
    out->nonce = r.u32();
    out->sequence = r.u32();
  } else {
    out->sequence = r.u16();
  }
  return DecodeError::ok;
}

DecodeError decode_message(const uint8_t* data, size_t size, Message* out,
                           Integrity integrity) noexcept {
  if (out == nullptr) return DecodeError::malformed;
  *out = Message{};
  const DecodeError header = decode_public_header(data, size, &out->header);
  if (header != DecodeError::ok) return header;
  return decode_message_body(data, size, out->header, out, integrity);
}

DecodeError decode_message_body(const uint8_t* data, size_t size, const Header& header, Message* out,
                                Integrity integrity) noexcept {
  if (out == nullptr || data == nullptr) return DecodeError::malformed;
  out->header = header;
  const bool handshake = is_handshake(header.type);
  if (size < header_size(header.type)) return DecodeError::truncated;
  if (!handshake) out->header.sequence = widen_sequence(uint16_t(header.sequence), integrity.sequence_base);
  ByteReader r(data, size);
  r.skip(public_header_size(header.type));
  const uint32_t checksum = r.u32();
  if (!integrity.authenticated) {
    const uint64_t key = handshake ? 0 : integrity.connection_key;
    if (checksum != datagram_checksum(data, size, key, out->header.sequence)) return DecodeError::bad_checksum;
  }

  bool valid = true;
  switch (header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply:
      out->handshake = Handshake{};
      valid = read_handshake(r, &out->handshake);
      // Only a reply refuses (a request that did would be nonsense: malformed).
      if (header.type == MessageType::handshake_request && out->handshake.refused) valid = false;
      break;
    case MessageType::inputs: valid = read_inputs(r, &out->inputs, integrity.seek); break;
    case MessageType::input_ack:
      out->ack_frame = r.i32();
      valid = out->ack_frame >= kNullFrame;
      break;
    case MessageType::quality_report:
      out->quality = QualityReport{};
      valid = read_report(r, 0, &out->quality);
      break;
    case MessageType::quality_reply:
      out->reply = QualityReply{};
      valid = read_reply(r, &out->reply);
      break;
    case MessageType::keep_alive:
    case MessageType::disconnect: break;
    case MessageType::checksum_report:
      out->checksum = ChecksumReport{};
      valid = read_checksum(r, 0, &out->checksum);
      break;
    case MessageType::channel_data:
    case MessageType::channel_ack:
      out->channel_size = r.remaining();
      out->channel_body = r.skip(out->channel_size);
      if (out->channel_size == 0) return DecodeError::truncated;
      break;
  }
  if (r.failed()) return DecodeError::truncated;
  if (!valid || r.remaining() != 0) return DecodeError::malformed;
  return DecodeError::ok;
}

namespace {
// read_inputs for the usual body: a start frame of one to three bytes (read_usual_start), an acknowledgement within 63
// frames of it, fewer than 128 frames, nobody disconnected (riders or not), read straight from
// the bytes. DecodeError::ok (used here as "not the usual body") with nothing written for any
// other body: read_inputs then reads it, and decides what an invalid one is. Else the result
// decode_message_body gives (truncated and malformed as read_inputs tells them apart).
enum class Usual : uint8_t { no, ok, truncated, malformed };
Usual read_usual_inputs(const uint8_t* p, const uint8_t* end, const InputsSeek& seek, InputsBody* b) noexcept {
  if (end - p < 5) return Usual::no;  // start, ack, count, flags, a token
  uint32_t start;
  if (!read_usual_start(&p, end, &start)) return Usual::no;  // not minimal, or longer
  const uint8_t ack_delta = p[0], count = p[1], flags = p[2];
  if (ack_delta >= 0x80 || count == 0 || count >= 0x80 || (flags & (kFlagDisconnected | ~kKnownInputsFlags)) != 0)
    return Usual::no;
  const int32_t ack = int32_t(start) + unzigzag(ack_delta);
  if (ack < kNullFrame) return Usual::no;
  p += 3;
  // As read_inputs leaves a body: statuses all connected; riders as the flags say.
  if (b->disconnected != 0) {
    for (ConnectStatus& s : b->status) s = ConnectStatus{};
    b->disconnected = 0;
  }
  b->start_frame = Frame(start);
  b->ack_frame = ack;
  b->count = count;
  if (flags == 0) {
    b->riders.has_report = b->riders.has_reply = b->riders.has_silence = false;  // the usual datagram
    b->riders.checksum_count = 0;
  } else {
    ByteReader r(p, size_t(end - p));
    const bool valid = read_riders(r, flags, b->start_frame, &b->riders);
    if (r.failed()) return Usual::truncated;
    if (!valid) return Usual::malformed;
    p = end - r.remaining();
  }
  b->payload = p;
  b->payload_size = size_t(end - p);
  return measure_payload(b, count, seek) ? Usual::ok : Usual::malformed;
}
}  // namespace

bool read_usual_riders(const uint8_t** at, const uint8_t* end, uint8_t flags, Frame start_frame,
                       Riders* out) noexcept {
  if ((flags & (kFlagDisconnected | ~kKnownInputsFlags)) != 0 || end < *at) return false;
  ByteReader r(*at, size_t(end - *at));
  if (!read_riders(r, flags, start_frame, out) || r.failed()) return false;
  *at = end - r.remaining();
  return true;
}

DecodeError decode_inputs_body(const uint8_t* data, size_t size, uint32_t sequence, uint64_t connection_key,
                               const InputsSeek& seek, InputsBody* out) noexcept {
  if (out == nullptr || data == nullptr) return DecodeError::malformed;
  if (size < kDataHeaderSize) return DecodeError::truncated;
  const uint32_t checksum = ByteReader(data + kDataPublicHeaderSize, 4).u32();
  if (checksum != data_checksum(data, size, connection_key, sequence)) return DecodeError::bad_checksum;
  switch (read_usual_inputs(data + kDataHeaderSize, data + size, seek, out)) {
    case Usual::no: break;
    case Usual::ok: return DecodeError::ok;
    case Usual::truncated: return DecodeError::truncated;
    case Usual::malformed: return DecodeError::malformed;
  }
  // decode_message_body's inputs case and its end checks (read_inputs takes the rest as payload).
  ByteReader r(data + kDataHeaderSize, size - kDataHeaderSize);
  const bool valid = read_inputs(r, out, seek);
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
      if (m.quality.local_frame < 0) return 0;
      write_report(w, m.quality, 0);
      break;
    case MessageType::quality_reply:
      if (m.reply.hold_us > kMaxReplyHoldUs) return 0;
      write_reply(w, m.reply);
      break;
    case MessageType::keep_alive:
    case MessageType::disconnect: break;
    case MessageType::checksum_report:
      if (m.checksum.frame < 0) return 0;
      write_checksum(w, m.checksum, 0);
      break;
    case MessageType::channel_data:
    case MessageType::channel_ack:
      if (m.channel_body == nullptr || m.channel_size == 0) return 0;
      w.bytes(m.channel_body, m.channel_size);
      break;
  }
  static_assert(kHandshakeSize == 21);
  if (w.overflowed()) return 0;
  seal_datagram(out, w.size(), 0, m.header.sequence);
  return w.size();
}

InputsWriter::InputsWriter(uint8_t* out, size_t capacity, const Header& header,
                           Frame start_frame, Frame ack_frame, uint16_t blob_size,
                           const ConnectStatus* status, uint8_t status_count,
                           const uint8_t* reference, const Riders* riders) noexcept
    : writer_(out, writer_capacity(capacity)),
      encoder_(writer_),
      previous_(reference),
      sequence_(header.sequence),
      blob_size_(blob_size) {
  if (status_count > kMaxPlayers) status_count = kMaxPlayers;
  uint8_t disconnected = 0;
  for (uint8_t i = 0; i < status_count; ++i) {
    if (status[i].disconnected) disconnected = static_cast<uint8_t>(disconnected | (1u << i));
  }
  const RiderPlan plan = plan_riders(riders);
  const uint8_t flags = uint8_t((disconnected != 0 ? kFlagDisconnected : 0) | plan.flags);
  const uint32_t start = uint32_t(start_frame);
  const uint32_t ack = zigzag(int32_t(int64_t(ack_frame) - start_frame));
  // Header, start, ack, the count's byte, flags, the mask and the last frames: at most this
  // many bytes, written with one check when they fit (every datagram but a tiny capacity's).
  constexpr size_t kMostBeforeRiders = kDataHeaderSize + 5 + 5 + 1 + 1 + 1 + 5 * size_t(kMaxPlayers);
  if (uint8_t* const at = writer_.raw(kMostBeforeRiders)) {
    const uint8_t head[kDataHeaderSize] = {kMagic0, kMagic1, header.version, uint8_t(MessageType::inputs),
                                           static_cast<uint8_t>(header.sequence),
                                           static_cast<uint8_t>(header.sequence >> 8), 0, 0, 0, 0};
    std::memcpy(at, head, sizeof head);
    uint8_t* p = put_varint(at + kDataHeaderSize, start);
    p = put_varint(p, ack);
    count_offset_ = writer_.size() + size_t(p - at);
    *p++ = 0;  // the count, known at finish(); the room for a longer one is kept apart
    *p++ = flags;
    if (disconnected != 0) {
      *p++ = disconnected;
      for (uint8_t i = 0; i < status_count; ++i)
        if (status[i].disconnected) p = put_varint(p, uint32_t(int64_t(status[i].last_frame) + 1));
    }
    writer_.commit(size_t(p - at));
  } else {
    Header h = header;
    h.type = MessageType::inputs;
    write_header(writer_, h);
    writer_.varint(start);
    writer_.varint(ack);
    count_offset_ = writer_.size();
    writer_.u8(0);
    writer_.u8(flags);
    if (disconnected != 0) writer_.u8(disconnected);
    for (uint8_t i = 0; i < status_count; ++i) {
      if (status[i].disconnected) writer_.varint(uint32_t(int64_t(status[i].last_frame) + 1));
    }
  }
  if (plan.flags != 0) write_riders(writer_, *riders, plan, start_frame);
}

size_t write_riding_inputs_general(uint8_t* out, size_t capacity, uint32_t sequence, Frame ack_frame,
                                   const PreparedInputs& run, const Riders& riders) noexcept {
  const uint32_t count = run.frames();
  const Frame start_frame = run.first();
  if (out == nullptr || count == 0 || count > 0xFFFF || start_frame < 0) return 0;
  // InputsWriter's room (its writer stops kCountRoom - 1 = 2 bytes short of the capacity, with
  // a one-byte count): what fits there fits here, and nothing else.
  const size_t cap = capacity < kMaxDatagramSize ? capacity : kMaxDatagramSize;
  if (cap < 2) return 0;
  const uint32_t start = uint32_t(start_frame);
  const uint32_t ack = zigzag(int32_t(int64_t(ack_frame) - start_frame));
  const RiderPlan plan = plan_riders(&riders);
  const size_t payload = run.size();
  const uint8_t head[kDataHeaderSize] = {kMagic0, kMagic1, kProtocolVersion, uint8_t(MessageType::inputs),
                                         static_cast<uint8_t>(sequence), static_cast<uint8_t>(sequence >> 8),
                                         0, 0, 0, 0};
  size_t count_offset = 0;
  size_t size = 0;
  if (kMostRidingHead + payload <= cap - 2) {
    // Room for the widest head and riders (every datagram but in a tiny capacity): written
    // straight, without a check per field.
    std::memcpy(out, head, sizeof head);
    uint8_t* p = put_varint(out + kDataHeaderSize, start);
    p = put_varint(p, ack);
    count_offset = size_t(p - out);
    *p++ = 0;  // the count's byte (below)
    *p++ = plan.flags;
    if (plan.flags != 0) p = put_riders(p, riders, plan, start_frame);
    run.write(p);
    size = size_t(p - out) + payload;
  } else {
    // Field by field, each checked: the same bytes, or 0 where InputsWriter's would not fit.
    ByteWriter w(out, cap - 2);
    uint8_t* const at = w.raw(kDataHeaderSize + varint_size(start) + varint_size(ack) + 1 + 1);  // exactly
    if (at == nullptr) return 0;
    std::memcpy(at, head, sizeof head);
    uint8_t* p = put_varint(at + kDataHeaderSize, start);
    p = put_varint(p, ack);
    count_offset = size_t(p - out);
    *p++ = 0;
    *p++ = plan.flags;
    w.commit(size_t(p - at));
    if (plan.flags != 0) write_riders(w, riders, plan, start_frame);
    uint8_t* const tokens = w.raw(payload);
    if (tokens == nullptr) return 0;
    run.write(tokens);
    w.commit(payload);
    size = w.size();
  }
  if (count < 0x80) {
    out[count_offset] = static_cast<uint8_t>(count);
  } else {
    // A longer count's varint takes the room kept beyond the writer's (as InputsWriter::finish).
    uint8_t wide[3];
    const size_t n = size_t(put_varint(wide, count) - wide);
    std::memmove(out + count_offset + n, out + count_offset + 1, size - count_offset - 1);
    std::memcpy(out + count_offset, wide, n);
    size += n - 1;
  }
  return size;
}

bool InputsWriter::append(const uint8_t* blob) noexcept {
  if (writer_.overflowed() || count_ == std::numeric_limits<uint16_t>::max()) return false;
  if (!encoder_.append(blob, previous_, blob_size_)) return false;
  previous_ = blob;
  ++count_;
  return true;
}

size_t InputsWriter::finish(Seal seal) noexcept {
  if (writer_.overflowed() || count_ == 0) return 0;
  uint8_t* at = writer_.data() + count_offset_;
  size_t size = writer_.size();
  if (count_ < 0x80) {
    *at = static_cast<uint8_t>(count_);  // the usual count: the one byte kept for it
  } else {
    // A longer count's varint takes the room kept beyond the writer's capacity.
    uint8_t count[kCountRoom];
    ByteWriter cw(count, sizeof count);
    cw.varint(count_);
    std::memmove(at + cw.size(), at + 1, size - count_offset_ - 1);
    std::memcpy(at, count, cw.size());
    size += cw.size() - 1;
  }
  if (seal == Seal::checksum) seal_datagram(writer_.data(), size, 0, sequence_);
  return size;
}

InputsReader::InputsReader(const InputsBody& body, const uint8_t* reference) noexcept
    : decoder_(body.payload, body.payload_size),
      blob_size_(body.blob_size <= kMaxBlobSize ? body.blob_size : 0),
      left_(body.count) {
  // Only the first blob_size bytes are ever read.
  if (reference != nullptr) std::memcpy(previous_, reference, blob_size_);
  else std::memset(previous_, 0, blob_size_);
}

bool InputsReader::next(uint8_t* blob) noexcept {
  if (left_ == 0 || blob_size_ == 0) return false;
  if (!decoder_.apply(blob, previous_, blob_size_)) {
    left_ = 0;
    return false;
  }
  std::memcpy(previous_, blob, blob_size_);
  --left_;
  return true;
}

bool InputsReader::skip(uint16_t frames, const uint8_t* last) noexcept {
  if (frames == 0) return true;
  if (frames > left_ || last == nullptr || !decoder_.discard(size_t(frames) * blob_size_)) {
    left_ = 0;
    return false;
  }
  std::memcpy(previous_, last, blob_size_);
  left_ = uint16_t(left_ - frames);
  return true;
}

bool inputs_payload_valid(const uint8_t* payload, size_t size, uint16_t count,
                          uint16_t blob_size) noexcept {
  return delta_tokens_valid(payload, size, size_t(count) * blob_size);
}

}  // namespace retcon::detail
