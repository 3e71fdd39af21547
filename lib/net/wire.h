// retcon: the datagram codec. Every datagram is one message: a header (magic, protocol
// version, type, a sequence number, a check field) and a body by type. Handshakes carry a
// 16-byte header with the sender's connection nonce and a 32-bit sequence; every other message
// (a *data* message) a 10-byte one with the low 16 bits of the sequence and no nonce (the
// connection-keyed check binds it to the connection). docs/PROTOCOL.md documents the layout byte
// by byte; a test checks its examples against this code. This is the plain (unkeyed) layout;
// with a match key DatagramAuth (net/datagram_auth.h) turns it into the sealed layout and back.
// Decoding is bounds-checked: a bad datagram yields a DecodeError, never an out-of-bounds read.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "net/byte_io.h"
#include "net/input_compression.h"
#include "net/prepared_inputs.h"
#include "retcon/types.h"

namespace retcon::detail {

inline constexpr uint8_t kMagic0 = 0x52;  // 'R'
inline constexpr uint8_t kMagic1 = 0x43;  // 'C'
// 2: compact inputs body (varints; last frames only of disconnected players).
// 3: 64-bit handshake challenges, connection-keyed checksums, AEAD with a match key.
// 4: the reliable channel carries timed decisions (stream 2), which every machine must apply.
// 5: rejoin messages.
// 6: the short data header (10 bytes: no nonce, a 16-bit sequence).
// 7: quality reports, their replies and checksum reports ride on inputs datagrams; the blob
//    size is implied by the payload; a quality reply echoes a report id and the time it was held.
inline constexpr uint8_t kProtocolVersion = 7;
// Below every common path MTU (1280 for IPv6 minus headers), so datagrams never fragment.
inline constexpr size_t kMaxDatagramSize = 1200;
// Handshakes: magic, version, type, nonce (4), sequence (4), checksum (4).
inline constexpr size_t kHandshakeHeaderSize = 16;
// Data messages: magic, version, type, sequence (low 16 bits), checksum (4).
inline constexpr size_t kDataHeaderSize = 10;
// The header without its checksum. Sealed datagrams carry only this part in the clear (as the
// AEAD's associated data).
inline constexpr size_t kHandshakePublicHeaderSize = 12;
inline constexpr size_t kDataPublicHeaderSize = 6;
// The shortest datagram of any type: what decode_public_header needs to read a data header.
inline constexpr size_t kMinHeaderSize = kDataHeaderSize;
inline constexpr size_t kMaxBlobSize = size_t(kMaxPlayers) * kMaxInputSize;
// The most an inputs body takes before its riders and payload: start_frame (5-byte varint), ack
// delta (5), count (3), flags (1) and the disconnected mask (1), plus 5 per disconnected player.
inline constexpr size_t kInputsFixedSize = 15;
inline constexpr size_t kInputsStatusSize = 5;
// Riders (reports carried by an inputs datagram): at most this many checksum reports in one, and
// the most bytes each kind takes.
inline constexpr size_t kMaxRiddenChecksums = 7;
inline constexpr size_t kReportRiderSize = 11;    // id, local frame (zigzag), advantage (zigzag)
inline constexpr size_t kReplyRiderSize = 6;      // id, hold (varint)
inline constexpr size_t kChecksumRiderSize = 13;  // frame (zigzag), checksum (8)
inline constexpr size_t kSilenceRiderSize = 5;    // gap (varint, <= 65535 ms), ago (varint, <= 2000 ms)
// A quality reply says how long its sender held the report before answering; never more than
// this (a receiver takes anything longer as malformed).
inline constexpr uint32_t kMaxReplyHoldUs = 1000000;
// A silence note: the longest silence it tells (a sender clamps longer ones to this) and how long
// after a silence ended it is still told.
inline constexpr uint32_t kMaxSilenceGapMs = 65535;
inline constexpr uint32_t kMaxSilenceAgoMs = 2000;

enum class MessageType : uint8_t {
  handshake_request = 1,
  handshake_reply = 2,
  inputs = 3,
  input_ack = 4,
  quality_report = 5,
  quality_reply = 6,
  keep_alive = 7,
  disconnect = 8,
  checksum_report = 9,
  // The reliable channel (lib/net/reliable_channel.h): bodies the endpoint passes on unread.
  channel_data = 10,
  channel_ack = 11,
};
const char* message_type_name(MessageType type) noexcept;
inline bool is_handshake(MessageType type) noexcept {
  return type == MessageType::handshake_request || type == MessageType::handshake_reply;
}
inline size_t header_size(MessageType type) noexcept {
  return is_handshake(type) ? kHandshakeHeaderSize : kDataHeaderSize;
}
inline size_t public_header_size(MessageType type) noexcept {
  return is_handshake(type) ? kHandshakePublicHeaderSize : kDataPublicHeaderSize;
}
// The full sequence number a data message's low 16 bits stand for: the one nearest `base`
// (the highest sequence accepted from the sender so far; 0 before any). A sender never gets
// 32,768 datagrams ahead of what its receiver accepted: the disconnect timeout (5 s) ends the
// connection long before (a few hundred datagrams).
inline uint32_t widen_sequence(uint16_t low, uint32_t base) noexcept {
  uint32_t full = (base & 0xFFFF0000u) | low;
  const int64_t ahead = int64_t(full) - int64_t(base);
  if (ahead < -0x8000 && full <= 0xFFFEFFFFu) full += 0x10000u;
  else if (ahead > 0x8000 && full >= 0x10000u) full -= 0x10000u;
  return full;
}

enum class DecodeError : uint8_t {
  ok = 0,
  truncated,     // shorter than its header or its body needs
  oversized,     // longer than kMaxDatagramSize
  bad_magic,
  bad_version,   // the header is otherwise readable: Message::header says what was sent
  bad_checksum,  // garbled on the way (or forged without care)
  unknown_type,
  malformed,     // a field out of range, bytes after the body, or an input payload that
                 // does not decode to a whole number (1..1024) of bytes per blob
};
const char* decode_error_name(DecodeError error) noexcept;

struct Header {
  uint8_t version = kProtocolVersion;
  MessageType type = MessageType::keep_alive;
  // The sender's random connection id, fixed for the connection. Handshakes only: 0 in a
  // decoded data message (not on the wire).
  uint32_t nonce = 0;
  // Per sender, +1 per datagram; used to drop replays. Data messages carry its low 16 bits:
  // decode_public_header gives those, decode_message the widened value (Integrity).
  uint32_t sequence = 0;
};

struct SessionShape {
  uint32_t num_players = 0;  // 1..kMaxPlayers
  uint32_t input_size = 0;   // 1..kMaxInputSize
  uint32_t frame_rate = 0;   // frames per second, 1..65535
  // The sender's configured rollback window, 0..kMaxPredictionFrames (0: lockstep; a spectator
  // sends 0). Not a reason to refuse: players with different windows play together, each
  // lowering the window it uses to the smallest of the players it completed a handshake with,
  // so a cut agreed elsewhere never comes later than its checkpoints reach (docs/NETWORKING.md,
  // "How late a cut can come"). A spectator's is never read.
  uint32_t max_prediction = 0;
  bool operator==(const SessionShape&) const = default;
};

// Whether two sides may play together: the same match shape. The window is not compared (see
// max_prediction above).
constexpr bool shapes_agree(const SessionShape& a, const SessionShape& b) noexcept {
  return a.num_players == b.num_players && a.input_size == b.input_size && a.frame_rate == b.frame_rate;
}

// Body of handshake_request and handshake_reply.
struct Handshake {
  uint64_t challenge = 0;   // request: fresh random; reply: the request's, echoed
  SessionShape shape;
  uint16_t players_owned = 0;  // bit i: the sender owns player i
  bool spectator = false;
  uint16_t send_blob_size = 0;     // bytes per frame the sender sends (0: sends none)
  uint16_t receive_blob_size = 0;  // bytes per frame the sender expects to receive
  bool aes256gcm = false;  // the sender can run AES-256-GCM (used when both can, with a key)
  // A reply only: the sender refuses this connection (a rejoin its game refused; docs/PROTOCOL.md
  // "Rejoin"). Believed only from a reply that echoes our current challenge.
  bool refused = false;
  bool operator==(const Handshake&) const = default;
};

struct ConnectStatus {
  bool disconnected = false;
  Frame last_frame = kNullFrame;
  bool operator==(const ConnectStatus&) const = default;
};

struct QualityReport {
  uint8_t id = 0;  // the sender's count of its reports (mod 256); the reply echoes it
  Frame local_frame = 0;
  int32_t frame_advantage = 0;
  bool operator==(const QualityReport&) const = default;
};

// The answer to a quality report: its id, and how long the answering side held the report
// before this reply went out (it waits for an inputs datagram to ride on). The reporter's
// round-trip time is the time since it sent the report minus the hold: the network's, not our
// batching's.
struct QualityReply {
  uint8_t id = 0;
  uint32_t hold_us = 0;  // <= kMaxReplyHoldUs
  bool operator==(const QualityReply&) const = default;
};

struct ChecksumReport {
  Frame frame = 0;
  uint64_t checksum = 0;
  bool operator==(const ChecksumReport&) const = default;
};

// The sender heard nothing from the receiver for `gap_ms`, and that silence ended `ago_ms`
// before this datagram left (late-input detection: an outage that cut both ways explains inputs
// that came late; session/lateness_monitor.h). Told on every inputs datagram for
// kMaxSilenceAgoMs after a silence, so a lost datagram or two do not hide it.
struct SilenceNote {
  uint32_t gap_ms = 0;  // 1..kMaxSilenceGapMs
  uint32_t ago_ms = 0;  // 0..kMaxSilenceAgoMs
  bool operator==(const SilenceNote&) const = default;
};

// Reports that ride on an inputs datagram instead of taking a datagram (and its 10-byte
// header) each. The same fields as the standalone messages; on the wire their frames are
// relative to the datagram's start frame (one byte instead of two or three).
struct Riders {
  bool has_report = false;
  QualityReport report;
  bool has_reply = false;
  QualityReply reply;
  uint8_t checksum_count = 0;  // <= kMaxRiddenChecksums
  ChecksumReport checksums[kMaxRiddenChecksums];
  bool has_silence = false;
  SilenceNote silence;
  bool empty() const noexcept { return !has_report && !has_reply && checksum_count == 0 && !has_silence; }
  // The most bytes they take on the wire (at most kReportRiderSize + kReplyRiderSize +
  // kMaxRiddenChecksums * kChecksumRiderSize + kSilenceRiderSize = 113).
  size_t max_size() const noexcept {
    return (has_report ? kReportRiderSize : 0) + (has_reply ? kReplyRiderSize : 0) +
           size_t(checksum_count) * kChecksumRiderSize + (has_silence ? kSilenceRiderSize : 0);
  }
};

// Body of inputs. `payload` points into the decoded datagram: expand it with InputsReader.
struct InputsBody {
  Frame start_frame = 0;        // the first blob's frame
  Frame ack_frame = kNullFrame; // the sender has every frame up to this one from us
  uint16_t count = 0;           // blobs in the payload
  // Not on the wire (protocol 7): the payload's decoded length divided by count. The receiver
  // checks it against the size the handshake agreed.
  uint16_t blob_size = 0;
  uint8_t disconnected = 0;     // bit i: the sender sees player i as disconnected
  // Per player; last_frame travels only for disconnected players (kNullFrame for the others).
  ConnectStatus status[kMaxPlayers];
  Riders riders;
  const uint8_t* payload = nullptr;
  size_t payload_size = 0;
  // Not on the wire: where the delta bytes of frame `seek_frame` start in the payload, when the
  // decoder was asked for that frame (Integrity::seek) and the blob size came out as the one
  // asked for (kNullFrame otherwise): the token at payload + seek_offset, with seek_into of its
  // delta bytes belonging to earlier frames (DeltaRunDecoder::seek).
  Frame seek_frame = kNullFrame;
  uint32_t seek_offset = 0;
  uint32_t seek_into = 0;
};

// A decoded message: `header.type` says which body member is meaningful.
struct Message {
  Header header;
  Handshake handshake;       // handshake_request, handshake_reply
  InputsBody inputs;         // inputs
  Frame ack_frame = kNullFrame;  // input_ack
  QualityReport quality;     // quality_report
  QualityReply reply;        // quality_reply
  ChecksumReport checksum;   // checksum_report
  // channel_data, channel_ack: the body (1 byte or more), pointing into the decoded datagram
  // (with a match key: into the DatagramAuth that opened it, until its next open()).
  const uint8_t* channel_body = nullptr;
  size_t channel_size = 0;
};

// The checksum field: low 32 bits of XXH3 of the body, seeded with XXH3 of the associated data
// XOR `connection_key`. The associated data is the public header (12 bytes) of a handshake, and
// for a data message its first 4 bytes followed by the full 32-bit `sequence` (so a datagram
// replayed 65,536 datagrams later does not check). The key is the connection's secret (both
// sides' random nonces, see DatagramAuth) for every message but the handshake's, whose sender
// cannot know it yet (0): it is what ties a data message, which carries no nonce, to its
// connection. `sequence` is ignored for handshakes (theirs is in the header).
uint32_t datagram_checksum(const uint8_t* data, size_t size, uint64_t connection_key,
                           uint32_t sequence) noexcept;

// Writes the checksum field of a finished datagram (encoders seal with key 0; the endpoint
// reseals with its connection key; tests use it to craft datagrams garbled in a specific field
// yet carrying a valid checksum). `connection_key` is ignored for handshake messages. A data
// message's full sequence is widened from its low 16 bits against `sequence_base` (pass the
// full sequence itself, or 0 for one below 32,768).
void seal_datagram(uint8_t* data, size_t size, uint64_t connection_key = 0,
                   uint32_t sequence_base = 0) noexcept;
// seal_datagram for a data message whose full sequence the caller has (its sender): the same
// checksum, without reading the sequence back out of the header and widening it.
void seal_data_datagram(uint8_t* data, size_t size, uint64_t connection_key, uint32_t sequence) noexcept;
// The checksum seal_data_datagram writes, for a data message of `size` >= kDataHeaderSize bytes
// (its sender's own: type and size known). Written little-endian at data + kDataPublicHeaderSize.
uint32_t data_datagram_checksum(const uint8_t* data, size_t size, uint64_t connection_key,
                                uint32_t sequence) noexcept;

// Reads the public header: magic, version, type, then the nonce and sequence of a handshake
// (12 bytes) or the 16-bit sequence of a data message (6 bytes; `out->sequence` is those 16
// bits, `out->nonce` 0). bad_version (version and type filled) for another version, whatever its
// type or length from byte 4 on; unknown_type for an unknown type of this version.
DecodeError decode_public_header(const uint8_t* data, size_t size, Header* out) noexcept;

// What a receiver of inputs datagrams wants of the next one: the frame it needs first (the one
// after the last it holds) and the blob size the handshake agreed. Decoding walks the payload's
// tokens anyway (the blob size is their total over the count) and notes on the way where that
// frame starts (InputsBody::seek_frame), so the receiver skips the frames it holds by position.
// Changes nothing else about the result. Default: nothing wanted.
struct InputsSeek {
  uint16_t blob_size = 0;
  Frame frame = kNullFrame;
};

// How decode_message checks a datagram's integrity.
struct Integrity {
  bool authenticated = false;  // opened by DatagramAuth (AEAD): no checksum field to check
  uint64_t connection_key = 0; // see datagram_checksum
  uint32_t sequence_base = 0;  // see widen_sequence: the highest sequence accepted so far
  InputsSeek seek;             // an inputs datagram's frame to note the position of
};

// Decodes one datagram. On bad_version, `out->header` is still filled.
DecodeError decode_message(const uint8_t* data, size_t size, Message* out,
                           Integrity integrity = {}) noexcept;

// decode_message for bytes whose public header decode_public_header already read as `header`
// (it returned ok): the same checks and the same result, without reading the header again or
// resetting the whole Message. Only `out->header` and the body `header.type` names are written;
// the other bodies keep what they held (for a receiver that decodes every datagram into one
// Message and reads only the body its type names). Of an inputs body's riders, those absent
// (has_report false, ...) keep what they held too: only a present rider's fields are read.
DecodeError decode_message_body(const uint8_t* data, size_t size, const Header& header, Message* out,
                                Integrity integrity = {}) noexcept;

// decode_message_body for an inputs datagram without a match key, the receiver's usual one: the
// caller read its public header (decode_public_header would return ok, type inputs) and widened
// its sequence (`sequence`, as Integrity::sequence_base does). The same checks and result as
// decode_message_body with that key and seek; only `out` (the inputs body) is written.
DecodeError decode_inputs_body(const uint8_t* data, size_t size, uint32_t sequence, uint64_t connection_key,
                               const InputsSeek& seek, InputsBody* out) noexcept;

// The start frame of a usual inputs body and the three fixed bytes after it (acknowledgement
// delta, count, flags): a minimal varint of one to three bytes, so every frame below 2^21 (over
// nine hours at 60 fps; the sender's short datagram, write_plain_short, goes as far). False for
// anything else (four or more bytes, not minimal, or fewer than the start and three bytes before
// `end`): the general decoder then decides. *at has at least 5 bytes before `end`.
inline bool read_usual_start(const uint8_t** at, const uint8_t* end, uint32_t* start) noexcept {
  const uint8_t* p = *at;
  const uint32_t b0 = p[0];
  if (b0 < 0x80) {
    *start = b0;
    *at = p + 1;
    return true;
  }
  const uint32_t b1 = p[1];
  if (b1 < 0x80) {
    *start = (b0 & 0x7Fu) | (b1 << 7);
    *at = p + 2;
    return b1 != 0;  // a final 0 is not minimal
  }
  if (end - p < 6) return false;
  const uint32_t b2 = p[2];
  *start = (b0 & 0x7Fu) | ((b1 & 0x7Fu) << 7) | (b2 << 14);
  *at = p + 3;
  return b2 != 0 && b2 < 0x80;
}

// The riders an inputs body's `flags` name, read from *at (up to `end`) as decode_inputs_body reads
// them: true, with *at past them, when the flags name riders only (no disconnected player, no
// unknown flag) and they read whole and valid; false otherwise (decode_inputs_body then tells
// what the body is).
bool read_usual_riders(const uint8_t** at, const uint8_t* end, uint8_t flags, Frame start_frame,
                       Riders* out) noexcept;

// Encodes any message but inputs (use InputsWriter). Returns the datagram size, 0 when it
// does not fit `capacity` or the type is inputs.
size_t encode_message(const Message& message, uint8_t* out, size_t capacity) noexcept;

// Whether an encoder writes the checksum field. A datagram that travels sealed by an AEAD
// (authenticated sessions) needs no checksum of its own: its encoder skips the XXH3 pass
// (Seal::none leaves the field 0) and the receiver skips the check (see decode_message).
enum class Seal : uint8_t { checksum, none };

// Builds an inputs datagram blob by blob, oldest first, until one does not fit.
class InputsWriter {
 public:
  // `reference` is the blob of start_frame - 1 (zeros before frame 0); `capacity` is capped
  // at kMaxDatagramSize. `status` has `status_count` (<= kMaxPlayers) entries; only the
  // disconnected ones take room (a bit and their last frame). `riders` (null: none) are
  // written before the payload: the caller leaves room for the first blob
  // (Riders::max_size()); riders beyond kMaxRiddenChecksums checksums are not written.
  InputsWriter(uint8_t* out, size_t capacity, const Header& header, Frame start_frame,
               Frame ack_frame, uint16_t blob_size, const ConnectStatus* status,
               uint8_t status_count, const uint8_t* reference,
               const Riders* riders = nullptr) noexcept;
  // False when the blob did not fit (the datagram is unchanged) or the header did not.
  bool append(const uint8_t* blob) noexcept;
  // append() with its reference given (the blob before it; for a writer made without one).
  bool append(const uint8_t* blob, const uint8_t* previous) noexcept {
    previous_ = previous;
    return append(blob);
  }
  // The frames of `run` (their tokens kept ready: net/prepared_inputs.h) as the datagram's
  // frames, all of them: the same bytes as appending them one by one. False, with nothing
  // written, when they do not all fit or a frame was appended already (then append them one
  // by one). Nothing may be appended after them.
  bool append_prepared(const PreparedInputs& run) noexcept {
    const size_t size = run.size();
    if (count_ != 0 || run.frames() > kMaxCount) return false;
    uint8_t* const at = writer_.raw(size);
    if (at == nullptr) return false;
    run.write(at);
    writer_.commit(size);
    count_ = uint16_t(run.frames());
    return true;
  }
  // The same for a blob whose delta against the blob before it was coded once by
  // encode_delta (the endpoint does this when a frame is queued): bytes are spliced, not
  // re-coded. Gives the same datagram as append(blob). Do not mix with append() afterwards
  // unless `blob` is given (the reference of a later append).
  // Inline, as the encoder's per-frame calls: a datagram makes several.
  bool append_encoded(const EncodedDelta& delta, const uint8_t* tokens,
                      const uint8_t* blob = nullptr) noexcept {
    if (writer_.overflowed() || count_ == kMaxCount) return false;
    if (!encoder_.append_encoded(delta, tokens)) return false;
    if (blob != nullptr) previous_ = blob;
    ++count_;
    return true;
  }
  // `frames` frames whose input did not change (each delta all zeros, as encode_delta codes an
  // unchanged blob) at once: the same datagram as appending them one by one. False, with
  // nothing written, when they might not all fit (then append them one by one).
  bool append_unchanged(uint32_t frames) noexcept {
    if (writer_.overflowed() || frames > uint32_t(kMaxCount - count_)) return false;
    if (!encoder_.append_zeros(size_t(frames) * blob_size_)) return false;
    count_ = uint16_t(count_ + frames);  // previous_ still holds their blob: it did not change
    return true;
  }
  uint16_t count() const noexcept { return count_; }
  // Bytes written so far (the count's varint counted at its widest).
  size_t size() const noexcept { return writer_.size() + (kCountRoom - 1); }
  // Finishes the datagram and returns its size (0 if even the header did not fit).
  size_t finish(Seal seal = Seal::checksum) noexcept;

 private:
  static constexpr size_t kCountRoom = 3;  // the longest varint of a 16-bit count
  static constexpr uint16_t kMaxCount = 0xFFFF;
  // The writer writes a one-byte count and stops kCountRoom - 1 bytes short of the capacity:
  // what fits is what fits with the count at its widest, and finish() moves nothing unless the
  // count takes more than a byte (128 frames or more).
  static size_t writer_capacity(size_t capacity) noexcept {
    const size_t cap = capacity < kMaxDatagramSize ? capacity : kMaxDatagramSize;
    return cap > kCountRoom - 1 ? cap - (kCountRoom - 1) : 0;
  }
  ByteWriter writer_;
  DeltaRunEncoder encoder_;
  const uint8_t* previous_;
  size_t count_offset_ = 0;
  uint32_t sequence_;
  uint16_t blob_size_;
  uint16_t count_ = 0;
};

// The bytes from `out` that write_plain_inputs may write beyond a shorter datagram.
inline constexpr size_t kPlainInputsScratch = kDataHeaderSize + 3 + 3 + 1 + 16;

// The fields of write_plain_short's usual datagram at `out` (see there) with `flags` (0: no rider,
// no disconnected player): the header, the start frame (kStartBytes), the acknowledgement, the
// count and the flags, in two word stores (the byte after the flags is garbage). Returns the byte
// after the flags.
template <size_t kStartBytes>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline uint8_t* put_short_head(uint8_t* out, uint32_t sequence, uint32_t start, uint32_t ack, uint32_t count,
                               uint8_t flags) noexcept {
  static_assert(kStartBytes == 2 || kStartBytes == 3);
  // The header: magic, version, type, the sequence's low 16 bits and the checksum's first two
  // bytes (0: sealed once the body is written).
  const uint64_t header = uint64_t{kMagic0} | uint64_t{kMagic1} << 8 | uint64_t{kProtocolVersion} << 16 |
                          uint64_t(MessageType::inputs) << 24 | uint64_t(sequence & 0xFFFFu) << 32;
  std::memcpy(out, &header, 8);
  // Then the checksum's last two bytes (0), the start frame's varint, the acknowledgement's and
  // the count's and the flags: one word.
  const uint64_t varint = kStartBytes == 2 ? uint64_t((start & 0x7Fu) | 0x80u) | uint64_t(start >> 7) << 8
                                           : uint64_t((start & 0x7Fu) | 0x80u) |
                                                 uint64_t(((start >> 7) & 0x7Fu) | 0x80u) << 8 |
                                                 uint64_t(start >> 14) << 16;
  const uint64_t fields = varint << 16 | uint64_t(ack) << (8 * (2 + kStartBytes)) |
                          uint64_t(count) << (8 * (3 + kStartBytes)) | uint64_t(flags) << (8 * (4 + kStartBytes));
  std::memcpy(out + 8, &fields, 8);
  return out + kDataHeaderSize + kStartBytes + 3;
}

// write_plain_inputs' usual datagram (see there): a start frame whose varint takes kStartBytes
// (2: from 128 to 16,383; 3: below 2^21), an acknowledgement and a count below 128 (a byte each)
// and a short run (PreparedInputs::is_short), at `out`, which has room for kPlainInputsScratch bytes
// (its fields, then 1 + 16 that write_short writes whatever the run's size). The same bytes as
// write_plain_inputs writes for them; returns their size.
template <size_t kStartBytes>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline size_t write_plain_short(uint8_t* out, uint32_t sequence, uint32_t start, uint32_t ack, uint32_t count,
                                const PreparedInputs& run) noexcept {
  uint8_t* const end = run.write_short(put_short_head<kStartBytes>(out, sequence, start, ack, count, 0));
  return size_t(end - out);
}

// The usual inputs datagram in one pass: every frame of `run` (their tokens kept ready:
// net/prepared_inputs.h; the first is the start frame), no rider and no disconnected player
// (flags 0). Exactly the bytes InputsWriter writes for them with Seal::none (checksum field 0),
// and the same frames fit: 0 when they do not all fit `capacity` (build it with InputsWriter).
// The bytes after the datagram, up to kPlainInputsScratch from `out` (never past `capacity`),
// may be overwritten (write_plain_short moves whole words).
// Inline: every inputs datagram but those with riders is this one (always: the endpoint's usual
// path and its general one both build it).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline size_t write_plain_inputs(uint8_t* out, size_t capacity, uint32_t sequence, Frame ack_frame,
                                 const PreparedInputs& run) noexcept {
  const uint32_t count = run.frames();
  const Frame start_frame = run.first();
  const uint32_t start = uint32_t(start_frame);
  const int32_t ack_delta = int32_t(int64_t(ack_frame) - start_frame);
  const uint32_t ack = (uint32_t(ack_delta) << 1) ^ uint32_t(ack_delta >> 31);  // zigzag
  // InputsWriter's room: what fits with the count at its widest (3 bytes), so that the same
  // frames fit here as there. Sized exactly only when the widest varints might not fit.
  const size_t cap = capacity < kMaxDatagramSize ? capacity : kMaxDatagramSize;
  constexpr size_t kWidest = kDataHeaderSize + 5 + 5 + 3 + 1;
  if constexpr (std::endian::native == std::endian::little) {
    // The usual datagram: a short run (17 bytes at most, so it fits whenever the widest fields
    // and 17 bytes do), a start frame from 128 on and below 2^21 (a match's first 9 hours at
    // 60 Hz), a nearby acknowledgement and fewer than 128 frames: its fields in two word stores,
    // its run in two moves (write_plain_short).
    static_assert(kPlainInputsScratch <= kWidest + 17);  // within the capacity asked for
    const bool usual = out != nullptr && run.is_short() && ack < 0x80 && count - 1 < 0x7F && cap >= kWidest + 17;
    if (usual && start - 0x80 < 0x4000 - 0x80) return write_plain_short<2>(out, sequence, start, ack, count, run);
    if (usual && start - 0x4000 < (1u << 21) - 0x4000)
      return write_plain_short<3>(out, sequence, start, ack, count, run);
  }
  const size_t payload = run.size();
  if (out == nullptr || count == 0 || count > 0xFFFF || start_frame < 0) return 0;
  if (kWidest + payload > cap && kDataHeaderSize + varint_size(start) + varint_size(ack) + 3 + 1 + payload > cap)
    return 0;
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = kProtocolVersion;
  out[3] = uint8_t(MessageType::inputs);
  out[4] = static_cast<uint8_t>(sequence);
  out[5] = static_cast<uint8_t>(sequence >> 8);
  out[6] = out[7] = out[8] = out[9] = 0;  // the checksum, sealed once the body is written
  uint8_t* p = put_varint(out + kDataHeaderSize, start);
  p = put_varint(p, ack);
  p = put_varint(p, count);
  *p++ = 0;  // flags: no disconnected player, no rider
  run.write(p);
  return size_t(p - out) + payload;
}

// write_plain_inputs with `riders` (InputsWriter leaves out those the wire cannot hold, and so
// does this): exactly the bytes InputsWriter writes for them and the frames of `run` with
// Seal::none, and 0 when it would not fit them all (build it with InputsWriter then).
// Out of line: a datagram in a dozen carries riders, most of them the usual ones that
// write_riding_inputs writes inline (below).
size_t write_riding_inputs_general(uint8_t* out, size_t capacity, uint32_t sequence, Frame ack_frame,
                                   const PreparedInputs& run, const Riders& riders) noexcept;

// The most bytes before an inputs datagram's frames without disconnected players: the header,
// start and acknowledgement at their widest, the count's byte, the flags and every rider.
inline constexpr size_t kMostRidingHead = kDataHeaderSize + 5 + 5 + 1 + 1 + kReportRiderSize + kReplyRiderSize +
                                          kMaxRiddenChecksums * kChecksumRiderSize + kSilenceRiderSize;

// The bytes from `out` that write_riding_inputs may write beyond a shorter datagram: its usual
// datagram's fields, a report (the larger usual rider) and the 1 + 16 bytes write_short writes.
inline constexpr size_t kRidingInputsScratch = kDataHeaderSize + 3 + 3 + kReportRiderSize + 1 + 16;
static_assert(kRidingInputsScratch <= kMostRidingHead + 2 + 17);  // within the capacity asked for

// write_riding_inputs_general's usual datagram: the usual riders (a quality report alone or a
// quality reply alone, each one the wire holds: what take_usual_riders reads on the other side)
// on write_plain_short's usual fields and short run, in a capacity with room for the widest head
// and every rider (so the general writer's straight branch, whose bytes these are). Anything else
// goes to write_riding_inputs_general. The bytes after the datagram, up to kRidingInputsScratch
// from `out`, may be overwritten (write_short moves 16 bytes). Inline: the general writer's plan and checks for each
// field cost a riding datagram ~100 instructions more (one inputs datagram in seven rides).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline size_t write_riding_inputs(uint8_t* out, size_t capacity, uint32_t sequence, Frame ack_frame,
                                  const PreparedInputs& run, const Riders& riders) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    const uint32_t count = run.frames();
    const Frame start_frame = run.first();
    const uint32_t start = uint32_t(start_frame);
    const int32_t ack_delta = int32_t(int64_t(ack_frame) - start_frame);
    const uint32_t ack = (uint32_t(ack_delta) << 1) ^ uint32_t(ack_delta >> 31);  // zigzag
    const bool alone = riders.checksum_count == 0 && !riders.has_silence && riders.has_report != riders.has_reply;
    const bool held = riders.has_report ? riders.report.local_frame >= 0 : riders.reply.hold_us <= kMaxReplyHoldUs;
    const bool usual = alone && held && run.is_short() && ack < 0x80 && count - 1 < 0x7F &&
                       capacity >= kMostRidingHead + 2 + 17 && start - 0x80 < (1u << 21) - 0x80;
    if (usual) {
      const uint8_t flags = riders.has_report ? 0x02 : 0x04;  // kFlagReport, kFlagReply (wire.cpp)
      uint8_t* p = start < 0x4000 ? put_short_head<2>(out, sequence, start, ack, count, flags)
                                  : put_short_head<3>(out, sequence, start, ack, count, flags);
      if (riders.has_report) {
        const int32_t frame = int32_t(int64_t(riders.report.local_frame) - start_frame);
        const int32_t advantage = riders.report.frame_advantage;
        *p++ = riders.report.id;
        p = put_varint(p, (uint32_t(frame) << 1) ^ uint32_t(frame >> 31));  // zigzag
        p = put_varint(p, (uint32_t(advantage) << 1) ^ uint32_t(advantage >> 31));
      } else {
        *p++ = riders.reply.id;
        p = put_varint(p, riders.reply.hold_us);
      }
      return size_t(run.write_short(p) - out);
    }
  }
  return write_riding_inputs_general(out, capacity, sequence, ack_frame, run, riders);
}

// Expands the payload of a decoded inputs body, one blob per call, in frame order.
class InputsReader {
 public:
  // `reference` is the blob of body.start_frame - 1 (zeros before frame 0).
  InputsReader(const InputsBody& body, const uint8_t* reference) noexcept;
  // Writes the next blob (body.blob_size bytes). False after the last one.
  bool next(uint8_t* blob) noexcept;
  // Skips `frames` blobs the caller already holds, without expanding them; `last` is the
  // caller's copy of the last skipped blob (the reference of the next). False past the end.
  bool skip(uint16_t frames, const uint8_t* last) noexcept;

 private:
  DeltaRunDecoder decoder_;
  uint8_t previous_[kMaxBlobSize];
  uint16_t blob_size_;
  uint16_t left_;
};

// Checks an inputs payload decodes to exactly count * blob_size bytes, without a reference.
// (decode_message derives the blob size from the payload: delta_tokens_length / count.)
// Walks the tokens only (no byte is expanded), so decode_message can afford it before the
// endpoint expands the payload once.
bool inputs_payload_valid(const uint8_t* payload, size_t size, uint16_t count,
                          uint16_t blob_size) noexcept;

}  // namespace retcon::detail
