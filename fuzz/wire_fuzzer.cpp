// Fuzz target 1: the datagram codec (lib/net/wire.h).
//
// Any byte string is handed to decode_message (and, as the endpoint decodes, to
// decode_public_header then decode_message_body into a reused Message: the same result). When it decodes, it must survive a round trip:
// every message but inputs re-encodes to exactly the same bytes (the format has one encoding
// per value); an inputs message is expanded with InputsReader, re-encoded with InputsWriter
// (which may choose other run-length tokens), decoded again, and must give the same fields and
// the same blobs. Independently, the input's tail is used as raw blobs for an encode/decode round
// trip of the delta/run-length compression, so the encoder sees arbitrary blob contents.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fuzz_input.h"
#include "net/datagram_auth.h"
#include "net/wire.h"

using namespace retcon;
using namespace retcon::detail;

namespace {

bool same_riders(const Riders& a, const Riders& b) {
  if (a.has_report != b.has_report || a.has_reply != b.has_reply || a.checksum_count != b.checksum_count) return false;
  if (a.has_report && !(a.report == b.report)) return false;
  if (a.has_reply && !(a.reply == b.reply)) return false;
  for (uint8_t i = 0; i < a.checksum_count; ++i)
    if (!(a.checksums[i] == b.checksums[i])) return false;
  if (a.has_silence != b.has_silence || (a.has_silence && !(a.silence == b.silence))) return false;
  return true;
}

// Protocol 2 carries a bitmask of disconnected players and a last frame only for those.
bool same_status(const InputsBody& a, const InputsBody& b) {
  if (a.disconnected != b.disconnected) return false;
  for (int i = 0; i < kMaxPlayers; ++i)
    if (!(a.status[i] == b.status[i])) return false;
  return true;
}

// The fields a decoded message of its type has (decode_message_body writes no other body).
bool same_message(const Message& a, const Message& b) {
  if (a.header.version != b.header.version || a.header.type != b.header.type ||
      a.header.nonce != b.header.nonce || a.header.sequence != b.header.sequence)
    return false;
  switch (a.header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: return a.handshake == b.handshake;
    case MessageType::inputs: {
      const InputsBody& x = a.inputs;
      const InputsBody& y = b.inputs;
      return x.start_frame == y.start_frame && x.ack_frame == y.ack_frame && x.count == y.count &&
             x.blob_size == y.blob_size && same_status(x, y) && same_riders(x.riders, y.riders) &&
             x.payload == y.payload && x.payload_size == y.payload_size;
    }
    case MessageType::input_ack: return a.ack_frame == b.ack_frame;
    case MessageType::quality_report: return a.quality == b.quality;
    case MessageType::quality_reply: return a.reply == b.reply;
    case MessageType::checksum_report: return a.checksum == b.checksum;
    case MessageType::channel_data:
    case MessageType::channel_ack: return a.channel_body == b.channel_body && a.channel_size == b.channel_size;
    case MessageType::keep_alive:
    case MessageType::disconnect: return true;
  }
  return false;
}

// What the endpoint runs: decode_public_header, then decode_message_body into one Message it
// reuses for every datagram (here across inputs, so it still holds an earlier input's fields).
// The same result, and the same fields, as decode_message into a fresh Message.
void check_body_decode(const uint8_t* data, size_t size, DecodeError expected, const Message& fresh) {
  static Message reused;
  Header header;
  const DecodeError head = decode_public_header(data, size, &header);
  if (head != DecodeError::ok) {
    FUZZ_CHECK(head == expected);
    return;
  }
  const DecodeError error = decode_message_body(data, size, header, &reused);
  FUZZ_CHECK(error == expected);
  if (error == DecodeError::ok) FUZZ_CHECK(same_message(reused, fresh));
}

bool expand(const InputsBody& body, uint8_t* out);

// What a receiver asks of an inputs datagram (InputsSeek: the frame it lacks first, the blob size
// it agreed): the same result and fields, plus, when the blobs are that size and the frame is
// past the first, where the frame starts; expanding from there (DeltaRunDecoder::seek) gives the
// same blobs as expanding every frame before it.
void check_seek(const uint8_t* data, size_t size, DecodeError expected, const Message& fresh) {
  Header header;
  if (decode_public_header(data, size, &header) != DecodeError::ok || header.type != MessageType::inputs) return;
  static Message sought;
  const InputsBody& body = fresh.inputs;
  for (int variant = 0; variant < 2; ++variant) {
    Integrity integrity;
    // The blob size as decoded (the usual receiver), or another (nothing may be noted then).
    const uint16_t blob_size = expected == DecodeError::ok ? body.blob_size : uint16_t(1 + size % 8);
    integrity.seek.blob_size = uint16_t(variant == 0 ? blob_size : blob_size + 1);
    // 0..count frames past the start (count: past the last).
    const Frame k = expected == DecodeError::ok ? Frame(size % (size_t(body.count) + 1)) : Frame(size % 4);
    integrity.seek.frame = (expected == DecodeError::ok ? body.start_frame : 0) + k;
    const DecodeError error = decode_message_body(data, size, header, &sought, integrity);
    FUZZ_CHECK(error == expected);
    // The endpoint's way for the usual inputs datagram (decode_inputs_body: its own reading of
    // the usual body, read_inputs for any other) into a reused body: the same result and fields.
    static InputsBody direct;
    const DecodeError direct_error = decode_inputs_body(data, size, widen_sequence(uint16_t(header.sequence), 0), 0,
                                                        integrity.seek, &direct);
    FUZZ_CHECK(direct_error == expected);
    if (error != DecodeError::ok) continue;
    FUZZ_CHECK(same_message(sought, fresh));
    Message direct_message = sought;
    direct_message.inputs = direct;
    FUZZ_CHECK(same_message(direct_message, fresh));
    FUZZ_CHECK(direct.seek_frame == sought.inputs.seek_frame);
    if (direct.seek_frame != kNullFrame)
      FUZZ_CHECK(direct.seek_offset == sought.inputs.seek_offset && direct.seek_into == sought.inputs.seek_into);
    const bool noted = variant == 0 && k >= 1 && k < Frame(body.count);
    FUZZ_CHECK(sought.inputs.seek_frame == (noted ? integrity.seek.frame : kNullFrame));
    if (!noted) continue;
    static uint8_t all[kMaxDatagramSize * 128];
    FUZZ_CHECK(expand(body, all));
    DeltaRunDecoder decoder(sought.inputs.payload, sought.inputs.payload_size);
    FUZZ_CHECK(decoder.seek(sought.inputs.seek_offset, sought.inputs.seek_into));
    uint8_t blob[kMaxBlobSize];
    for (Frame f = k; f < Frame(body.count); ++f) {
      const size_t at = size_t(f) * body.blob_size;
      FUZZ_CHECK(decoder.apply(blob, all + at - body.blob_size, body.blob_size));
      FUZZ_CHECK(std::memcmp(blob, all + at, body.blob_size) == 0);
    }
    FUZZ_CHECK(decoder.finished());
  }
}

// Expands every blob of `body` (reference: zeros) into `out` (count * blob_size bytes).
bool expand(const InputsBody& body, uint8_t* out) {
  static const uint8_t zeros[kMaxBlobSize] = {};
  InputsReader reader(body, zeros);
  for (uint16_t i = 0; i < body.count; ++i)
    if (!reader.next(out + size_t(i) * body.blob_size)) return false;
  uint8_t extra[kMaxBlobSize];
  return !reader.next(extra);  // exactly count blobs
}

void check_inputs_round_trip(const Message& m, const uint8_t* data, size_t size) {
  const InputsBody& body = m.inputs;
  FUZZ_CHECK(body.count >= 1 && body.blob_size >= 1 && body.blob_size <= kMaxBlobSize);
  FUZZ_CHECK(body.payload >= data && body.payload + body.payload_size == data + size);
  FUZZ_CHECK(inputs_payload_valid(body.payload, body.payload_size, body.count, body.blob_size));
  // count * blob_size decoded bytes came from at most `size` payload bytes with runs of <= 128.
  static uint8_t blobs[kMaxDatagramSize * 128];
  FUZZ_CHECK(size_t(body.count) * body.blob_size <= sizeof blobs);
  FUZZ_CHECK(expand(body, blobs));

  static const uint8_t zeros[kMaxBlobSize] = {};
  uint8_t out[kMaxDatagramSize];
  InputsWriter writer(out, sizeof out, m.header, body.start_frame, body.ack_frame, body.blob_size,
                      body.status, uint8_t(kMaxPlayers), zeros, &body.riders);
  for (uint16_t i = 0; i < body.count; ++i)
    if (!writer.append(blobs + size_t(i) * body.blob_size)) break;
  // The encoder may spend more bytes than a hand-made payload (it keeps short zero runs inside
  // literals), so it may fit fewer blobs; what it wrote must still decode to the same values.
  const uint16_t written = writer.count();
  const size_t length = writer.finish();
  if (written == 0) return;
  FUZZ_CHECK(length > kDataHeaderSize && length <= kMaxDatagramSize);
  Message again;
  FUZZ_CHECK(decode_message(out, length, &again) == DecodeError::ok);
  FUZZ_CHECK(again.header.type == MessageType::inputs);
  FUZZ_CHECK(again.header.nonce == m.header.nonce && again.header.sequence == m.header.sequence);
  FUZZ_CHECK(again.inputs.start_frame == body.start_frame && again.inputs.ack_frame == body.ack_frame);
  FUZZ_CHECK(again.inputs.count == written && again.inputs.blob_size == body.blob_size);
  FUZZ_CHECK(same_status(again.inputs, body));
  FUZZ_CHECK(same_riders(again.inputs.riders, body.riders));
  static uint8_t blobs_again[kMaxDatagramSize * 128];
  FUZZ_CHECK(expand(again.inputs, blobs_again));
  FUZZ_CHECK(std::memcmp(blobs, blobs_again, size_t(written) * body.blob_size) == 0);
  if (written == body.count) FUZZ_CHECK(length <= size + 2 * size_t(body.count) + 64);
}

// The compression alone: blobs taken from the input, encoded against a reference, decoded.
void check_compression(fuzz::FuzzInput& in) {
  const uint16_t blob_size = uint16_t(in.range(1, 300));
  uint8_t reference[kMaxBlobSize];
  in.bytes(reference, blob_size);
  static uint8_t blobs[64 * 300];
  const uint16_t count = uint16_t(in.range(1, 64));
  // Sparse changes compress; copy the previous blob and flip a few bytes, as real input does.
  for (uint16_t i = 0; i < count; ++i) {
    uint8_t* blob = blobs + size_t(i) * blob_size;
    std::memcpy(blob, i == 0 ? reference : blob - blob_size, blob_size);
    const uint8_t changes = in.u8() % 8;
    for (uint8_t k = 0; k < changes; ++k) blob[in.range(0, blob_size - 1u)] = in.u8();
  }
  ConnectStatus status[kMaxPlayers];
  const uint8_t status_count = uint8_t(in.range(0, kMaxPlayers));
  for (uint8_t i = 0; i < status_count; ++i) {
    status[i].disconnected = in.flag();
    status[i].last_frame = Frame(in.range(0, 1000)) - 1;
  }
  Header header;
  header.nonce = in.u32();
  header.sequence = in.u32();
  const Frame start = Frame(in.range(1, 100000));
  // Riders (protocol 7), any values the wire holds, frames around the start.
  Riders riders;
  riders.has_report = in.flag();
  riders.report = QualityReport{in.u8(), Frame(in.range(0, 200000)), int32_t(in.u32())};
  riders.has_reply = in.flag();
  riders.reply = QualityReply{in.u8(), uint32_t(in.range(0, kMaxReplyHoldUs))};
  riders.checksum_count = uint8_t(in.range(0, kMaxRiddenChecksums));
  for (uint8_t i = 0; i < riders.checksum_count; ++i) riders.checksums[i] = ChecksumReport{Frame(in.range(0, 200000)), in.u64()};
  riders.has_silence = in.flag();
  riders.silence = SilenceNote{uint32_t(in.range(1, kMaxSilenceGapMs)), uint32_t(in.range(0, kMaxSilenceAgoMs))};
  uint8_t out[kMaxDatagramSize];
  const size_t capacity = in.range(0, kMaxDatagramSize + 10);
  InputsWriter writer(out, capacity, header, start, start - 2, blob_size, status, status_count, reference, &riders);
  for (uint16_t i = 0; i < count; ++i)
    if (!writer.append(blobs + size_t(i) * blob_size)) break;
  const uint16_t written = writer.count();
  const size_t length = writer.finish();
  FUZZ_CHECK(length <= capacity && length <= kMaxDatagramSize);
  if (written == 0) return;
  Message m;
  Integrity near;  // the receiver widens the 16 sequence bits near the highest it accepted
  near.sequence_base = header.sequence;
  FUZZ_CHECK(decode_message(out, length, &m, near) == DecodeError::ok);
  FUZZ_CHECK(m.header.sequence == header.sequence);
  FUZZ_CHECK(m.header.type == MessageType::inputs && m.inputs.count == written);
  FUZZ_CHECK(m.inputs.start_frame == start && m.inputs.blob_size == blob_size);
  FUZZ_CHECK(same_riders(m.inputs.riders, riders));
  for (uint8_t i = 0; i < kMaxPlayers; ++i) {
    // Only disconnected players' statuses travel; the others decode as connected, no frame.
    const bool gone = i < status_count && status[i].disconnected;
    FUZZ_CHECK(m.inputs.status[i].disconnected == gone);
    if (gone) FUZZ_CHECK(m.inputs.status[i].last_frame == status[i].last_frame);
  }
  InputsReader reader(m.inputs, reference);
  uint8_t blob[kMaxBlobSize];
  for (uint16_t i = 0; i < written; ++i) {
    FUZZ_CHECK(reader.next(blob));
    FUZZ_CHECK(std::memcmp(blob, blobs + size_t(i) * blob_size, blob_size) == 0);
  }
  FUZZ_CHECK(!reader.next(blob));
}

// The sender's run kept ready (PreparedInputs): blobs from the input, appended once each, the
// front cut where the input says (acknowledgements), and at each step the datagram
// write_plain_inputs builds from the run equals the one InputsWriter builds frame by frame from
// the run's first frame (and it builds one exactly when all those frames fit); write_riding_inputs
// with riders from the input likewise equals InputsWriter's datagram of those riders and frames.
void check_prepared(fuzz::FuzzInput& in) {
  const uint16_t blob_size = uint16_t(in.range(1, 300));
  static uint8_t blobs[256 * 300];
  const uint16_t count = uint16_t(in.range(1, 256));
  for (uint16_t i = 0; i < count; ++i) {
    uint8_t* blob = blobs + size_t(i) * blob_size;
    if (i == 0) std::memset(blob, 0, blob_size);
    else std::memcpy(blob, blob - blob_size, blob_size);
    const uint8_t changes = in.u8() % 6;
    for (uint8_t k = 0; k < changes; ++k) blob[in.range(0, blob_size - 1u)] = in.u8();
  }
  static const uint8_t kZeros[kMaxBlobSize] = {};
  const Frame base = Frame(in.range(0, 100000));
  auto blob_of = [&](Frame f) { return f <= base ? kZeros : blobs + size_t(f - base - 1) * blob_size; };
  PreparedInputs run;
  run.init(blob_size, kMaxDatagramSize);
  run.reset(base + 1);  // frame base + 1 + i is blob i; the stream starts after zeros
  static uint8_t tokens[max_encoded_delta_size(kMaxBlobSize)];
  Frame queued = base + 1;
  const Frame end = base + 1 + count;
  while (!in.empty() && run.first() < end) {
    const uint8_t op = in.u8();
    if ((op & 3) != 0 && queued < end) queued = Frame(std::min<int64_t>(end, int64_t(queued) + (op >> 2) % 8 + 1));
    else run.trim(run.first() + Frame(in.range(0, uint32_t(queued - run.first()))));
    while (run.next() < queued) {
      const Frame f = run.next();
      const EncodedDelta d = encode_delta(blob_of(f), blob_of(f - 1), blob_size, tokens);
      FUZZ_CHECK(d.size <= sizeof tokens);
      if (!run.append(d, tokens)) break;
    }
    FUZZ_CHECK(run.first() <= run.next() && run.next() <= queued);
    if (run.next() != queued || run.frames() == 0) continue;
    const size_t capacity = in.range(0, kMaxDatagramSize + 10);
    const uint32_t sequence = in.u32();
    const Frame ack = Frame(in.range(0, 200000)) - 1;
    uint8_t plain[kMaxDatagramSize], framewise[kMaxDatagramSize];
    const size_t length = write_plain_inputs(plain, capacity, sequence, ack, run);
    Header h;
    h.type = MessageType::inputs;
    h.sequence = sequence;
    InputsWriter w(framewise, capacity, h, run.first(), ack, blob_size, nullptr, 0, blob_of(run.first() - 1));
    for (Frame f = run.first(); f < run.next(); ++f)
      if (!w.append(blob_of(f))) break;
    const size_t expected = w.finish(Seal::none);
    // With riders from the input (some the wire cannot hold): write_riding_inputs gives
    // InputsWriter's datagram of them and the frames, or 0 exactly when those do not all fit.
    Riders riders;
    const uint8_t which = in.u8();
    riders.has_report = (which & 1) != 0;
    if (riders.has_report) riders.report = QualityReport{in.u8(), Frame(in.u32()), int32_t(in.u32())};
    riders.has_reply = (which & 2) != 0;
    if (riders.has_reply) riders.reply = QualityReply{in.u8(), in.u32() % (2 * kMaxReplyHoldUs)};
    riders.checksum_count = uint8_t((which >> 2) % (kMaxRiddenChecksums + 1));
    for (uint8_t i = 0; i < riders.checksum_count; ++i)
      riders.checksums[i] = ChecksumReport{run.first() + Frame(in.u8()) - 64, uint64_t(in.u32()) << 32 | in.u32()};
    riders.has_silence = (which & 0x80) != 0;
    if (riders.has_silence) riders.silence = SilenceNote{in.u32() % (kMaxSilenceGapMs + 2), in.u32() % (kMaxSilenceAgoMs + 2)};
    uint8_t riding[kMaxDatagramSize], riding_framewise[kMaxDatagramSize];
    const size_t riding_length = write_riding_inputs(riding, capacity, sequence, ack, run, riders);
    InputsWriter wr(riding_framewise, capacity, h, run.first(), ack, blob_size, nullptr, 0, blob_of(run.first() - 1),
                    &riders);
    for (Frame f = run.first(); f < run.next(); ++f)
      if (!wr.append(blob_of(f))) break;
    const size_t riding_expected = wr.finish(Seal::none);
    if (wr.count() != run.frames()) {
      FUZZ_CHECK(riding_length == 0);
    } else {
      FUZZ_CHECK(riding_length == riding_expected && riding_length <= capacity);
      FUZZ_CHECK(std::memcmp(riding, riding_framewise, riding_length) == 0);
    }
    if (w.count() != run.frames()) {
      FUZZ_CHECK(length == 0);
      continue;
    }
    FUZZ_CHECK(length == expected && length <= capacity);
    FUZZ_CHECK(std::memcmp(plain, framewise, length) == 0);
  }
}

// DatagramAuth::open on any bytes: no key (connection-keyed checksum) and the fixed fuzz
// match key with each AEAD. Never crashes; what opens is a current-version message.
void check_open(const uint8_t* data, size_t size) {
  static DatagramAuth* const kAuths = [] {
    static DatagramAuth auths[3];
    static const uint8_t kKey[kMatchKeySize] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    auths[0].configure(nullptr, false);
    auths[1].configure(kKey, false);
    auths[2].configure(kKey, true);
    for (DatagramAuth& a : auths) a.bind(0x11223344, 0x55667788, true);
    return auths;
  }();
  static Message reused;  // as the endpoint's: holds whatever an earlier input left
  for (int i = 0; i < 3; ++i) {
    Message m;
    const DecodeError error = kAuths[i].open(data, size, &m);
    FUZZ_CHECK(decode_error_name(error) != nullptr);
    if (error == DecodeError::ok) FUZZ_CHECK(m.header.version == kProtocolVersion);
    // The endpoint's way: the public header read once, then open() with it.
    Header header;
    if (decode_public_header(data, size, &header) != DecodeError::ok) continue;
    FUZZ_CHECK(kAuths[i].open(data, size, header, &reused) == error);
    if (error == DecodeError::ok) FUZZ_CHECK(same_message(reused, m));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_open(data, size);
  Message m;
  const DecodeError error = decode_message(data, size, &m);
  FUZZ_CHECK(decode_error_name(error) != nullptr);
  check_body_decode(data, size, error, m);
  check_seek(data, size, error, m);
  if (size > kMaxDatagramSize) FUZZ_CHECK(error == DecodeError::oversized);
  if (error == DecodeError::ok) {
    FUZZ_CHECK(size >= header_size(m.header.type) && size <= kMaxDatagramSize);
    if (!is_handshake(m.header.type)) FUZZ_CHECK(m.header.nonce == 0 && m.header.sequence <= 0xFFFF);
    FUZZ_CHECK(m.header.version == kProtocolVersion);
    FUZZ_CHECK(message_type_name(m.header.type) != nullptr);
    if (m.header.type == MessageType::inputs) {
      check_inputs_round_trip(m, data, size);
    } else {
      uint8_t out[kMaxDatagramSize];
      const size_t length = encode_message(m, out, sizeof out);
      FUZZ_CHECK(length == size);
      FUZZ_CHECK(std::memcmp(out, data, size) == 0);
      // A capacity one byte short must fail cleanly, not write past it.
      uint8_t small[kMaxDatagramSize];
      FUZZ_CHECK(encode_message(m, small, size - 1) == 0);
    }
  }
  // The rest of the input (after the first 16 bytes, to keep the two uses loosely coupled)
  // drives the compression round trip.
  if (size > kHandshakeHeaderSize) {
    fuzz::FuzzInput in(data + kHandshakeHeaderSize, size - kHandshakeHeaderSize);
    check_compression(in);
    fuzz::FuzzInput again(data + kHandshakeHeaderSize, size - kHandshakeHeaderSize);
    check_prepared(again);
  }
  return 0;
}
