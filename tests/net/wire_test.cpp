// The datagram codec: round trips, the input compression, the 1200-byte cap, bad input.
#include <gtest/gtest.h>
#ifndef RETCON_NO_RAPIDCHECK
#include <rapidcheck/gtest.h>
#endif

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "net/wire.h"
#include "net/usual_riders.h"

namespace retcon::detail {
namespace {

Message make_simple(MessageType type) {
  Message m;
  m.header.type = type;
  m.header.nonce = 0xA1B2C3D4;
  m.header.sequence = 77;
  m.handshake = {0xDEADBEEF, {2, 2, 60}, 0x1, false, 2, 2};
  m.ack_frame = 41;
  m.quality = {5, 300, -2};
  m.reply = {9, 12345};
  m.checksum = {120, 0x0123456789ABCDEFull};
  return m;
}

constexpr MessageType kSimpleTypes[] = {
    MessageType::handshake_request, MessageType::handshake_reply, MessageType::input_ack,
    MessageType::quality_report,    MessageType::quality_reply,   MessageType::keep_alive,
    MessageType::disconnect,        MessageType::checksum_report};

void expect_same_body(const Message& a, const Message& b) {
  ASSERT_EQ(a.header.type, b.header.type);
  // Only handshakes carry the nonce; data messages carry the sequence's low 16 bits (77 fits).
  EXPECT_EQ(is_handshake(a.header.type) ? a.header.nonce : 0u, b.header.nonce);
  EXPECT_EQ(a.header.sequence, b.header.sequence);
  EXPECT_EQ(a.header.version, b.header.version);
  switch (a.header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: EXPECT_EQ(a.handshake, b.handshake); break;
    case MessageType::input_ack: EXPECT_EQ(a.ack_frame, b.ack_frame); break;
    case MessageType::quality_report: EXPECT_EQ(a.quality, b.quality); break;
    case MessageType::quality_reply: EXPECT_EQ(a.reply, b.reply); break;
    case MessageType::checksum_report: EXPECT_EQ(a.checksum, b.checksum); break;
    default: break;
  }
}

// Channel bodies travel unread: what was encoded comes back byte for byte; an empty one is
// refused both ways.
TEST(Wire, ChannelBodiesRoundTripUnread) {
  const uint8_t body[5] = {1, 2, 3, 4, 5};
  for (MessageType type : {MessageType::channel_data, MessageType::channel_ack}) {
    Message m;
    m.header.type = type;
    m.header.nonce = 77;
    m.header.sequence = 12;
    m.channel_body = body;
    m.channel_size = sizeof body;
    uint8_t buffer[kMaxDatagramSize];
    const size_t n = encode_message(m, buffer, sizeof buffer);
    ASSERT_EQ(n, kDataHeaderSize + sizeof body);
    Message back;
    ASSERT_EQ(decode_message(buffer, n, &back), DecodeError::ok);
    EXPECT_EQ(back.header.type, type);
    ASSERT_EQ(back.channel_size, sizeof body);
    EXPECT_EQ(std::memcmp(back.channel_body, body, sizeof body), 0);
    seal_datagram(buffer, kDataHeaderSize);
    EXPECT_EQ(decode_message(buffer, kDataHeaderSize, &back), DecodeError::truncated) << "an empty body";
    m.channel_size = 0;
    EXPECT_EQ(encode_message(m, buffer, sizeof buffer), 0u);
    EXPECT_STREQ(message_type_name(type), type == MessageType::channel_data ? "channel_data" : "channel_ack");
  }
}

// Builds an inputs datagram of `blobs` from `start`; returns how many fit.
size_t encode_inputs(const std::vector<std::vector<uint8_t>>& blobs, Frame start,
                     const std::vector<uint8_t>& reference, std::vector<uint8_t>* out,
                     size_t capacity = kMaxDatagramSize) {
  out->assign(capacity, 0);
  Header h;
  h.nonce = 9;
  h.sequence = 3;
  ConnectStatus status[2] = {{false, 10}, {true, 7}};
  InputsWriter w(out->data(), capacity, h, start, 5, uint16_t(reference.size()), status, 2,
                 reference.data());
  for (const auto& b : blobs) {
    if (!w.append(b.data())) break;
  }
  out->resize(w.finish());
  return w.count();
}

TEST(Wire, SimpleMessagesRoundTrip) {
  for (MessageType type : kSimpleTypes) {
    const Message m = make_simple(type);
    uint8_t buffer[kMaxDatagramSize];
    const size_t n = encode_message(m, buffer, sizeof buffer);
    ASSERT_GE(n, header_size(type)) << message_type_name(type);
    Message back;
    ASSERT_EQ(decode_message(buffer, n, &back), DecodeError::ok) << message_type_name(type);
    expect_same_body(m, back);
  }
}

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
RC_GTEST_PROP(WireProperty, RandomSimpleMessagesRoundTrip, ()) {
  Message m;
  m.header.type = *rc::gen::elementOf(std::vector<MessageType>(std::begin(kSimpleTypes),
                                                               std::end(kSimpleTypes)));
  m.header.nonce = *rc::gen::arbitrary<uint32_t>();
  m.header.sequence = *rc::gen::arbitrary<uint32_t>();
  const auto players = *rc::gen::inRange<uint32_t>(1, kMaxPlayers + 1);
  m.handshake.challenge = *rc::gen::arbitrary<uint32_t>();
  m.handshake.shape = {players, *rc::gen::inRange<uint32_t>(1, kMaxInputSize + 1),
                       *rc::gen::inRange<uint32_t>(1, 65536),
                       *rc::gen::inRange<uint32_t>(0, uint32_t(kMaxPredictionFrames) + 1)};
  m.handshake.players_owned =
      uint16_t(*rc::gen::arbitrary<uint16_t>() & ((1u << players) - 1));
  m.handshake.spectator = *rc::gen::arbitrary<bool>();
  m.handshake.send_blob_size = *rc::gen::inRange<uint16_t>(0, uint16_t(kMaxBlobSize + 1));
  m.handshake.receive_blob_size = *rc::gen::inRange<uint16_t>(0, uint16_t(kMaxBlobSize + 1));
  m.handshake.refused = m.header.type == MessageType::handshake_reply && *rc::gen::arbitrary<bool>();
  m.ack_frame = *rc::gen::inRange<Frame>(-1, 1 << 30);
  m.quality = {*rc::gen::arbitrary<uint8_t>(), *rc::gen::inRange<Frame>(0, std::numeric_limits<Frame>::max()),
               *rc::gen::arbitrary<int32_t>()};
  m.reply = {*rc::gen::arbitrary<uint8_t>(), *rc::gen::inRange<uint32_t>(0, kMaxReplyHoldUs + 1)};
  m.checksum = {*rc::gen::inRange<Frame>(0, 1 << 30), *rc::gen::arbitrary<uint64_t>()};
  uint8_t buffer[kMaxDatagramSize];
  const size_t n = encode_message(m, buffer, sizeof buffer);
  RC_ASSERT(n >= header_size(m.header.type));
  Message back;
  // A data message's 16 sequence bits widen to the full number near the receiver's base.
  const uint32_t drift = *rc::gen::inRange<uint32_t>(0, 0x8000);
  Integrity integrity;
  integrity.sequence_base = m.header.sequence >= drift ? m.header.sequence - drift : 0;
  RC_ASSERT(decode_message(buffer, n, &back, integrity) == DecodeError::ok);
  RC_ASSERT(back.header.type == m.header.type);
  RC_ASSERT(back.header.nonce == (is_handshake(m.header.type) ? m.header.nonce : 0u));
  RC_ASSERT(back.header.sequence == m.header.sequence);
  switch (m.header.type) {
    case MessageType::handshake_request:
    case MessageType::handshake_reply: RC_ASSERT(back.handshake == m.handshake); break;
    case MessageType::input_ack: RC_ASSERT(back.ack_frame == m.ack_frame); break;
    case MessageType::quality_report: RC_ASSERT(back.quality == m.quality); break;
    case MessageType::quality_reply: RC_ASSERT(back.reply == m.reply); break;
    case MessageType::checksum_report: RC_ASSERT(back.checksum == m.checksum); break;
    default: break;
  }
}
#endif

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
// Player-like blobs: mostly unchanged from the previous frame, sometimes a few bytes flip.
std::vector<std::vector<uint8_t>> gen_blob_stream(size_t blob_size, size_t count, bool sparse) {
  std::vector<std::vector<uint8_t>> blobs;
  std::vector<uint8_t> current(blob_size);
  for (size_t i = 0; i < count; ++i) {
    if (!sparse || *rc::gen::inRange(0, 4) == 0) {
      const auto changes = sparse ? *rc::gen::inRange<size_t>(1, 4) : blob_size;
      for (size_t c = 0; c < changes; ++c) {
        const size_t at = sparse ? *rc::gen::inRange<size_t>(0, blob_size) : c;
        current[at] = *rc::gen::arbitrary<uint8_t>();
      }
    }
    blobs.push_back(current);
  }
  return blobs;
}
#endif

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
// encode_delta writes its tokens directly: they, and the splice bookkeeping, must be what the
// general encoder (DeltaRunEncoder::append) writes for the same delta on its own, whatever the
// delta (runs longer than a token, short zero runs inside literals, literals of 128 bytes).
RC_GTEST_PROP(WireProperty, EncodedDeltaEqualsTheGeneralEncoder, ()) {
  // The delta as runs of zero and changed bytes, their lengths around the token limits.
  std::vector<uint8_t> delta;
  const auto runs = *rc::gen::inRange<size_t>(0, 8);
  for (size_t r = 0; r < runs; ++r) {
    const size_t length = *rc::gen::oneOf(rc::gen::element<size_t>(1, 2, 3, 4, 127, 128, 129, 255, 256),
                                          rc::gen::inRange<size_t>(1, 300));
    const bool zeros = *rc::gen::arbitrary<bool>();
    for (size_t k = 0; k < length; ++k)
      delta.push_back(zeros ? 0 : *rc::gen::element<uint8_t>(1, 0x7F, 0x80, 0xFF));
  }
  const size_t size = delta.size();
  std::vector<uint8_t> previous(size), blob(size);
  for (size_t k = 0; k < size; ++k) {
    previous[k] = *rc::gen::arbitrary<uint8_t>();
    blob[k] = uint8_t(previous[k] ^ delta[k]);
  }
  std::vector<uint8_t> tokens(max_encoded_delta_size(size) + 1, 0xEE), general(tokens.size(), 0xEE);
  const EncodedDelta d = encode_delta(blob.data(), previous.data(), size, tokens.data());
  ByteWriter writer(general.data(), general.size());
  DeltaRunEncoder encoder(writer);
  RC_ASSERT(encoder.append(blob.data(), previous.data(), size));
  RC_ASSERT(d.size == writer.size());
  RC_ASSERT(std::equal(tokens.begin(), tokens.begin() + d.size, general.begin()));
  RC_ASSERT(d.open_tail == int32_t(encoder.open_run()));
  uint32_t lead = 0;
  while (lead < size && blob[lead] == previous[lead]) ++lead;
  RC_ASSERT(d.lead_zeros == lead);
  RC_ASSERT(d.lead_bytes == (lead + 127) / 128);
  RC_ASSERT(d.unchanged == (lead == size));
}
#endif

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
RC_GTEST_PROP(WireProperty, CompressedInputStreamRoundTrips, ()) {
  const auto blob_size = *rc::gen::inRange<size_t>(1, 300);
  const auto count = *rc::gen::inRange<size_t>(1, 80);
  const bool sparse = *rc::gen::arbitrary<bool>();
  const auto blobs = gen_blob_stream(blob_size, count, sparse);
  std::vector<uint8_t> reference(blob_size);
  for (auto& b : reference) b = *rc::gen::arbitrary<uint8_t>();
  const Frame start = *rc::gen::inRange<Frame>(0, 100000);

  std::vector<uint8_t> datagram;
  const size_t fitted = encode_inputs(blobs, start, reference, &datagram);
  RC_ASSERT(datagram.size() <= kMaxDatagramSize);
  RC_ASSERT(fitted >= 1);
  Message m;
  RC_ASSERT(decode_message(datagram.data(), datagram.size(), &m) == DecodeError::ok);
  RC_ASSERT(m.inputs.start_frame == start);
  RC_ASSERT(m.inputs.count == fitted);
  RC_ASSERT(m.inputs.disconnected == 0x02);
  RC_ASSERT(!m.inputs.status[0].disconnected);
  RC_ASSERT(m.inputs.status[1].disconnected);
  RC_ASSERT(m.inputs.status[1].last_frame == 7);
  InputsReader reader(m.inputs, reference.data());
  std::vector<uint8_t> blob(blob_size);
  for (size_t i = 0; i < fitted; ++i) {
    RC_ASSERT(reader.next(blob.data()));
    RC_ASSERT(blob == blobs[i]);
  }
  RC_ASSERT(!reader.next(blob.data()));
}
#endif

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
// The endpoint codes each frame's delta once when it is queued and splices the coded deltas
// into datagrams: that must give exactly the bytes re-coding every blob gives, whatever the
// blobs (runs across blob boundaries, runs longer than a token, capacity cut-offs).
RC_GTEST_PROP(WireProperty, SplicedDeltasEqualRecodedBlobs, ()) {
  const auto blob_size = *rc::gen::inRange<size_t>(1, 300);
  const auto count = *rc::gen::inRange<size_t>(1, 80);
  const bool sparse = *rc::gen::arbitrary<bool>();
  const auto blobs = gen_blob_stream(blob_size, count, sparse);
  std::vector<uint8_t> reference(blob_size);
  for (auto& b : reference) b = *rc::gen::arbitrary<uint8_t>();
  const size_t capacity = *rc::gen::inRange<size_t>(kDataHeaderSize + 20, kMaxDatagramSize + 1);

  std::vector<uint8_t> recoded;
  const size_t fitted = encode_inputs(blobs, 40, reference, &recoded, capacity);

  std::vector<uint8_t> spliced(capacity, 0);
  Header h;
  h.nonce = 9;
  h.sequence = 3;
  ConnectStatus status[2] = {{false, 10}, {true, 7}};
  InputsWriter w(spliced.data(), capacity, h, 40, 5, uint16_t(blob_size), status, 2,
                 reference.data());
  std::vector<uint8_t> tokens(max_encoded_delta_size(blob_size));
  const uint8_t* previous = reference.data();
  for (const auto& b : blobs) {
    const EncodedDelta d = encode_delta(b.data(), previous, blob_size, tokens.data());
    RC_ASSERT(d.size <= tokens.size());
    if (!w.append_encoded(d, tokens.data())) break;
    previous = b.data();
  }
  RC_ASSERT(w.count() == fitted);
  spliced.resize(w.finish());
  RC_ASSERT(spliced == recoded);
}

// Held inputs go in one go (append_unchanged: one zero run for the frames until the input
// changes, as the endpoint splices them): exactly the bytes, and the frames, that appending
// them one by one gives, whatever the runs (across tokens, longer than a token, cut off by the
// capacity).
RC_GTEST_PROP(WireProperty, UnchangedRunsEqualFramesOneByOne, ()) {
  const auto blob_size = *rc::gen::inRange<size_t>(1, 200);
  const auto count = *rc::gen::inRange<size_t>(1, 400);
  const auto blobs = gen_blob_stream(blob_size, count, true);
  std::vector<uint8_t> reference(blob_size);
  for (auto& b : reference) b = *rc::gen::arbitrary<uint8_t>();
  const size_t capacity = *rc::gen::inRange<size_t>(kDataHeaderSize + 20, kMaxDatagramSize + 1);

  std::vector<uint8_t> recoded;
  const size_t fitted = encode_inputs(blobs, 40, reference, &recoded, capacity);

  std::vector<uint8_t> spliced(capacity, 0);
  Header h;
  h.nonce = 9;
  h.sequence = 3;
  ConnectStatus status[2] = {{false, 10}, {true, 7}};
  InputsWriter w(spliced.data(), capacity, h, 40, 5, uint16_t(blob_size), status, 2, reference.data());
  std::vector<EncodedDelta> deltas;
  std::vector<std::vector<uint8_t>> tokens;
  const uint8_t* previous = reference.data();
  for (const auto& b : blobs) {
    tokens.emplace_back(max_encoded_delta_size(blob_size));
    deltas.push_back(encode_delta(b.data(), previous, blob_size, tokens.back().data()));
    previous = b.data();
  }
  auto unchanged = [&](size_t i) { return deltas[i].size == deltas[i].lead_bytes && deltas[i].lead_zeros == blob_size; };
  for (size_t i = 0; i < blobs.size();) {
    if (unchanged(i)) {
      size_t end = i + 1;
      while (end < blobs.size() && unchanged(end)) ++end;
      if (w.append_unchanged(uint32_t(end - i))) {
        i = end;
        continue;
      }
    }
    if (!w.append_encoded(deltas[i], tokens[i].data())) break;
    ++i;
  }
  RC_ASSERT(w.count() == fitted);
  spliced.resize(w.finish());
  RC_ASSERT(spliced == recoded);
}

// Skipping frames the receiver holds and expanding the rest gives the blobs expanding all does.
RC_GTEST_PROP(WireProperty, SkippedBlobsLeaveTheRestIntact, ()) {
  const auto blob_size = *rc::gen::inRange<size_t>(1, 200);
  const auto count = *rc::gen::inRange<size_t>(2, 60);
  const auto blobs = gen_blob_stream(blob_size, count, *rc::gen::arbitrary<bool>());
  std::vector<uint8_t> reference(blob_size, 0x33);
  std::vector<uint8_t> datagram;
  const size_t fitted = encode_inputs(blobs, 7, reference, &datagram);
  RC_PRE(fitted >= 2);
  Message m;
  RC_ASSERT(decode_message(datagram.data(), datagram.size(), &m) == DecodeError::ok);
  const auto skip = *rc::gen::inRange<size_t>(1, fitted);
  InputsReader reader(m.inputs, reference.data());
  RC_ASSERT(reader.skip(uint16_t(skip), blobs[skip - 1].data()));
  std::vector<uint8_t> blob(blob_size);
  for (size_t i = skip; i < fitted; ++i) {
    RC_ASSERT(reader.next(blob.data()));
    RC_ASSERT(blob == blobs[i]);
  }
  RC_ASSERT(!reader.next(blob.data()));
  InputsReader past(m.inputs, reference.data());
  RC_ASSERT(!past.skip(uint16_t(fitted + 1), blobs[0].data()));
}

#endif

// An unchanged input (the common frame) takes a shortcut in encode_delta: its tokens and the
// splice bookkeeping must be what the general encoder writes, at and around one token's reach.
TEST(Wire, UnchangedInputCodesLikeTheGeneralEncoder) {
  for (size_t size : {size_t{1}, size_t{4}, size_t{127}, size_t{128}, size_t{129}, size_t{300}}) {
    std::vector<uint8_t> blob(size, 0x5A);
    std::vector<uint8_t> tokens(max_encoded_delta_size(size), 0xEE), general(tokens.size(), 0xEE);
    const EncodedDelta d = encode_delta(blob.data(), blob.data(), size, tokens.data());
    ByteWriter writer(general.data(), general.size());
    DeltaRunEncoder encoder(writer);
    ASSERT_TRUE(encoder.append(blob.data(), blob.data(), size));
    ASSERT_EQ(d.size, writer.size()) << size;
    EXPECT_TRUE(std::equal(tokens.begin(), tokens.begin() + d.size, general.begin())) << size;
    EXPECT_EQ(d.lead_zeros, size);
    EXPECT_EQ(d.lead_bytes, d.size) << size;
    EXPECT_EQ(d.open_tail, int32_t(encoder.open_run())) << size;
    EXPECT_TRUE(d.unchanged) << size;
  }
}

// A zero run is written whole or not at all: where the capacity ends inside its tokens the
// writer overflows with none of them written, and append() undoes the delta (the open token
// as it was); with room for exactly its tokens (none for what tops up the open one) it is all
// there, the same bytes as with room to spare.
TEST(Wire, ZeroRunsFitWholeOrNotAtAll) {
  // First a delta that leaves a zero run of 7 open (a literal byte, then 7 zeros): 3 bytes.
  const std::vector<uint8_t> zeros8(8, 0);
  std::vector<uint8_t> first(8, 0);
  first[0] = 1;
  for (size_t run : {size_t{1}, size_t{120}, size_t{121}, size_t{122}, size_t{249}, size_t{250}, size_t{600}}) {
    const std::vector<uint8_t> same(run, 0x33);  // a delta of `run` zeros
    std::vector<uint8_t> roomy(2048, 0);
    ByteWriter w(roomy.data(), roomy.size());
    DeltaRunEncoder e(w);
    ASSERT_TRUE(e.append(first.data(), zeros8.data(), first.size()));
    ASSERT_EQ(w.size(), 3u);
    ASSERT_TRUE(e.append(same.data(), same.data(), run));
    const size_t whole = w.size();
    // The open token takes 121 zeros; each 128 (or part) beyond it is a byte.
    EXPECT_EQ(whole, 3 + (run > 121 ? (run - 121 + 127) / 128 : 0)) << run;
    for (size_t capacity = 3; capacity <= whole + 1; ++capacity) {
      std::vector<uint8_t> out(capacity, 0xEE);
      ByteWriter cw(out.data(), capacity);
      DeltaRunEncoder ce(cw);
      ASSERT_TRUE(ce.append(first.data(), zeros8.data(), first.size()));
      const bool fits = ce.append(same.data(), same.data(), run);
      ASSERT_EQ(fits, capacity >= whole) << run << " " << capacity;
      ASSERT_FALSE(cw.overflowed());
      ASSERT_EQ(cw.size(), fits ? whole : 3u) << run << " " << capacity;
      if (fits) {
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + long(whole), roomy.begin())) << run;
      } else {
        EXPECT_TRUE(out[0] == roomy[0] && out[1] == roomy[1]);  // the literal
        // Undone: the open token holds its 7 zeros again, and a zero more still joins it.
        EXPECT_EQ(out[2], 6) << run << " " << capacity;
        ASSERT_TRUE(ce.append(same.data(), same.data(), 1));
        EXPECT_EQ(cw.size(), 3u);
        EXPECT_EQ(out[2], 7);
      }
    }
  }
}

// put_varint (the raw writers' varints) writes what ByteWriter::varint writes, varint_size bytes
// of it, at and around every length's edge (its one- and two-byte cases skip the loop).
TEST(Wire, RawVarintsAreTheWritersVarints) {
  for (uint32_t v : {0u, 1u, 0x7Fu, 0x80u, 0x81u, 0x3FFFu, 0x4000u, 0x4001u, 0x1FFFFFu, 0x200000u, 0xFFFFFFFu,
                     0x10000000u, 0xFFFFFFFFu}) {
    uint8_t raw[8], written[8];
    std::memset(raw, 0xEE, sizeof raw);
    ByteWriter w(written, sizeof written);
    w.varint(v);
    const uint8_t* end = put_varint(raw, v);
    ASSERT_EQ(size_t(end - raw), w.size()) << v;
    EXPECT_EQ(w.size(), varint_size(v)) << v;
    EXPECT_EQ(std::memcmp(raw, written, w.size()), 0) << v;
    EXPECT_EQ(raw[w.size()], 0xEE) << v;  // nothing past it
  }
}

// The writer takes its fixed fields in one go when they surely fit and field by field near a
// small capacity: the same bytes either way (riders, disconnected players, a large start).
TEST(Wire, InputsHeadIsTheSameNearAndFarFromTheCapacity) {
  const ConnectStatus status[4] = {{false, 9}, {true, 300000}, {false, kNullFrame}, {true, kNullFrame}};
  Riders riders;
  riders.has_report = true;
  riders.report = {7, 1000010, -3};
  riders.has_reply = true;
  riders.reply = {4, 12345};
  riders.checksum_count = 1;
  riders.checksums[0] = {999990, 0x0123456789ABCDEFull};
  const uint8_t zeros[2] = {}, blobs[3][2] = {{1, 2}, {1, 2}, {5, 2}};
  Header h;
  h.sequence = 0x1234;
  std::vector<uint8_t> first;
  for (size_t capacity : {size_t{80}, size_t{64}, size_t{65}, size_t{66}, size_t{200}, kMaxDatagramSize}) {
    std::vector<uint8_t> out(capacity);
    InputsWriter w(out.data(), capacity, h, 1000000, 999998, 2, status, 4, zeros, &riders);
    for (const auto& b : blobs) ASSERT_TRUE(w.append(b)) << capacity;
    out.resize(w.finish());
    ASSERT_FALSE(out.empty()) << capacity;
    if (first.empty()) first = out;
    EXPECT_EQ(out, first) << capacity;
  }
  Message m;
  ASSERT_EQ(decode_message(first.data(), first.size(), &m), DecodeError::ok);
  EXPECT_EQ(m.inputs.start_frame, 1000000);
  EXPECT_EQ(m.inputs.ack_frame, 999998);
  EXPECT_EQ(m.inputs.count, 3);
  EXPECT_EQ(m.inputs.disconnected, 0x0A);
  EXPECT_EQ(m.inputs.status[1], (ConnectStatus{true, 300000}));
  EXPECT_EQ(m.inputs.status[3], (ConnectStatus{true, kNullFrame}));
  EXPECT_EQ(m.inputs.riders.report, riders.report);
  EXPECT_EQ(m.inputs.riders.reply, riders.reply);
  EXPECT_EQ(m.inputs.riders.checksums[0], riders.checksums[0]);
}

// A count of 128 frames or more takes two bytes: what fits is what fits with the count at its
// widest (3 bytes), whichever count it turns out to be, and the datagram is laid out as
// PROTOCOL.md says (header, start, ack, count, flags, then a literal token and byte per frame).
TEST(Wire, LongCountsFitAsTheWidestCountAndDecode) {
  const uint8_t zero[1] = {0};
  for (size_t capacity = 250; capacity <= 290; ++capacity) {
    std::vector<uint8_t> blobs(400);
    for (size_t i = 0; i < blobs.size(); ++i) blobs[i] = uint8_t(i % 2 == 0 ? 0x5A : 0xA5);
    std::vector<uint8_t> out(capacity, 0xEE);
    InputsWriter w(out.data(), capacity, Header{}, 0, kNullFrame, 1, nullptr, 0, zero);
    size_t appended = 0;
    while (appended < blobs.size() && w.append(&blobs[appended])) ++appended;
    // header 10, start 0 (1 byte), ack -1 (1), the count at its widest (3), flags (1), 2 per frame
    const size_t expected = (capacity - 16) / 2;
    ASSERT_EQ(appended, expected) << capacity;
    ASSERT_EQ(w.size(), 16 + 2 * expected) << capacity;
    const size_t n = w.finish();
    const size_t count_bytes = expected < 128 ? 1 : 2;
    ASSERT_EQ(n, 10 + 1 + 1 + count_bytes + 1 + 2 * expected) << capacity;
    ASSERT_LE(n, capacity);
    EXPECT_EQ(out[12], uint8_t(expected < 128 ? expected : (expected & 0x7F) | 0x80)) << capacity;
    if (count_bytes == 2) {
      EXPECT_EQ(out[13], uint8_t(expected >> 7)) << capacity;
    }
    EXPECT_EQ(out[12 + count_bytes], 0) << capacity;          // flags
    EXPECT_EQ(out[13 + count_bytes], 0x80) << capacity;       // a literal of one byte
    EXPECT_EQ(out[n - 1], uint8_t(0x5A ^ 0xA5)) << capacity;  // the last frame's delta
    Message m;
    ASSERT_EQ(decode_message(out.data(), n, &m), DecodeError::ok) << capacity;
    ASSERT_EQ(m.inputs.count, expected);
    InputsReader reader(m.inputs, zero);
    uint8_t blob = 0;
    for (size_t i = 0; i < expected; ++i) {
      ASSERT_TRUE(reader.next(&blob));
      ASSERT_EQ(blob, blobs[i]) << capacity << " " << i;
    }
  }
}

// A receiver's InputsSeek: decoding notes where the frame it lacks first starts (inside a zero
// run that spans frames, inside a literal, on a token's first byte), expanding from there gives
// the same blobs as expanding every frame, and nothing is noted when the blob size is not the
// one asked for or the frame is not after the first. The rest of the result is the same.
TEST(Wire, InputsSeekNotesWhereTheWantedFrameStarts) {
  constexpr uint16_t kBlob = 4;
  constexpr uint16_t kCount = 12;
  uint8_t blobs[kCount][kBlob] = {};
  // Held inputs (zero runs across frames), single changed bytes, a frame of noise (a literal).
  for (uint16_t i = 0; i < kCount; ++i) {
    if (i > 0) std::memcpy(blobs[i], blobs[i - 1], kBlob);
    if (i % 3 == 1) blobs[i][i % kBlob] = uint8_t(0x11 * i);
    if (i == 7)
      for (uint16_t k = 0; k < kBlob; ++k) blobs[i][k] = uint8_t(0xA0 + k);
  }
  const uint8_t zeros[kBlob] = {};
  uint8_t out[kMaxDatagramSize];
  InputsWriter w(out, sizeof out, Header{}, 100, 90, kBlob, nullptr, 0, zeros);
  for (uint16_t i = 0; i < kCount; ++i) ASSERT_TRUE(w.append(blobs[i]));
  const size_t n = w.finish();
  Message plain;
  ASSERT_EQ(decode_message(out, n, &plain), DecodeError::ok);
  EXPECT_EQ(plain.inputs.seek_frame, kNullFrame);
  Header header;
  ASSERT_EQ(decode_public_header(out, n, &header), DecodeError::ok);
  for (Frame want = 95; want <= 115; ++want) {
    for (uint16_t asked : {kBlob, uint16_t(kBlob + 1), uint16_t(0)}) {
      Integrity integrity;
      integrity.seek = InputsSeek{asked, want};
      Message m;
      ASSERT_EQ(decode_message_body(out, n, header, &m, integrity), DecodeError::ok);
      EXPECT_EQ(m.inputs.start_frame, 100);
      EXPECT_EQ(m.inputs.count, kCount);
      EXPECT_EQ(m.inputs.blob_size, kBlob);
      EXPECT_EQ(m.inputs.payload, plain.inputs.payload);
      const bool noted = asked == kBlob && want > 100 && want < 100 + kCount;
      ASSERT_EQ(m.inputs.seek_frame, noted ? want : kNullFrame) << want << " " << asked;
      if (!noted) continue;
      DeltaRunDecoder decoder(m.inputs.payload, m.inputs.payload_size);
      ASSERT_TRUE(decoder.seek(m.inputs.seek_offset, m.inputs.seek_into));
      uint8_t blob[kBlob];
      for (Frame f = want; f < 100 + kCount; ++f) {
        const size_t i = size_t(f - 100);
        ASSERT_TRUE(decoder.apply(blob, blobs[i - 1], kBlob)) << want << " " << f;
        ASSERT_EQ(std::memcmp(blob, blobs[i], kBlob), 0) << want << " " << f;
      }
      EXPECT_TRUE(decoder.finished()) << want;
    }
  }
  // A position outside the payload (never noted by decoding) fails instead of reading past it.
  DeltaRunDecoder outside(plain.inputs.payload, plain.inputs.payload_size);
  EXPECT_FALSE(outside.seek(plain.inputs.payload_size, 0));
  DeltaRunDecoder past_token(plain.inputs.payload, plain.inputs.payload_size);
  EXPECT_FALSE(past_token.seek(0, 128));
}

// The receiver's usual path walks a payload once (delta_tokens_find: is it whole, how many delta
// bytes, where the first frame it lacks starts) and then expands the frames it lacks from there
// without checks (expand_measured). Against the plain walk (token by token, as the format says)
// and DeltaRunDecoder's seek and apply: random payloads, coded from random inputs (held ones,
// single changed bytes, noise) or garbled or random bytes, every held count, blob sizes 1 to 12,
// and a receive ring that wraps. The walks agree on everything; where the payload is whole,
// the ring after the expansion is the decoder's, byte for byte (slots it does not write too).
TEST(Wire, MeasuredWalkAndExpansionAreTheDecodersAtEverySeek) {
  // The format's walk, one token at a time.
  auto plain_walk = [](const uint8_t* payload, size_t size, size_t seek, size_t* total, size_t* offset,
                       size_t* into) {
    *total = 0;
    size_t at = 0;
    bool noted = false;
    while (at < size) {
      const uint8_t token = payload[at];
      const size_t n = size_t{token & 0x7Fu} + 1;
      const size_t next = at + 1 + (token >= 0x80 ? n : 0);
      if (!noted && *total + n > seek) {
        if (next > size) {
          *total = 0;
          return false;
        }
        *offset = at;
        *into = seek - *total;
        noted = true;
      }
      *total += n;
      at = next;
    }
    if (at != size) {
      *total = 0;
      return false;
    }
    return true;
  };
  std::mt19937 rng(14);
  int expanded = 0, literal_starts = 0, wrapped = 0;
  for (int round = 0; round < 20000; ++round) {
    const size_t blob = 1 + rng() % 12;
    const size_t count = 1 + rng() % 20;
    std::vector<uint8_t> blobs((count + 1) * blob);  // blob 0: the reference
    for (size_t i = 0; i < blobs.size(); ++i) blobs[i] = uint8_t(rng() % 4 == 0 ? rng() : 0);
    for (size_t f = 1; f <= count; ++f) {
      uint8_t* b = &blobs[f * blob];
      std::memcpy(b, b - blob, blob);
      const uint32_t kind = rng() % 4;
      if (kind == 1) b[rng() % blob] = uint8_t(rng());
      if (kind == 2)
        for (size_t k = 0; k < blob; ++k) b[k] = uint8_t(rng());
    }
    std::vector<uint8_t> payload(max_encoded_delta_size(blob) * count + 8);
    ByteWriter w(payload.data(), payload.size());
    DeltaRunEncoder encoder(w);
    for (size_t f = 1; f <= count; ++f) ASSERT_TRUE(encoder.append(&blobs[f * blob], &blobs[(f - 1) * blob], blob));
    payload.resize(w.size());
    switch (rng() % 8) {
      case 0: payload[rng() % payload.size()] = uint8_t(rng()); break;  // garbled
      case 1: payload.resize(rng() % (payload.size() + 1)); break;      // cut
      case 2: payload.push_back(uint8_t(rng())); break;                 // a byte too many
      case 3:
        for (uint8_t& b : payload) b = uint8_t(rng());  // noise
        break;
      default: break;
    }
    const std::vector<uint8_t> exact(payload);  // exact size: ASan catches reads past it
    const size_t held = rng() % count;
    const size_t seek = held * blob;
    size_t total = 0, offset = 99, into = 99, want_total = 0, want_offset = 99, want_into = 99;
    const bool whole = delta_tokens_find(exact.data(), exact.size(), seek, &total, &offset, &into);
    const bool want_whole = plain_walk(exact.data(), exact.size(), seek, &want_total, &want_offset, &want_into);
    ASSERT_EQ(whole, want_whole) << round;
    ASSERT_EQ(total, want_total) << round;
    if (whole && total > seek) {
      ASSERT_EQ(offset, want_offset) << round;
      ASSERT_EQ(into, want_into) << round;
    }
    // The usual path's question (exactly count blobs?), with the same position where it says yes.
    size_t usual_offset = 99, usual_into = 99;
    const bool usual = delta_tokens_expected(exact.data(), exact.size(), seek, count * blob, &usual_offset, &usual_into);
    ASSERT_EQ(usual, want_whole && want_total == count * blob) << round;
    if (usual) {
      ASSERT_EQ(usual_offset, want_offset) << round;
      ASSERT_EQ(usual_into, want_into) << round;
    }
    if (!whole || total != count * blob) continue;
    // Both expansions into copies of one ring of `window` slots, the first new frame at a random
    // slot (so the new frames wrap), its reference held in the slot before it (or the zeros).
    const size_t frames = count - held;
    const size_t window = frames + 1 + rng() % 4;
    std::vector<uint8_t> ring(window * blob);
    for (uint8_t& b : ring) b = uint8_t(rng());
    const size_t first_slot = rng() % window;
    const bool from_zeros = rng() % 4 == 0;
    const std::vector<uint8_t> zeros(blob);
    std::vector<uint8_t> reference(blob);
    if (!from_zeros) reference.assign(&blobs[held * blob], &blobs[(held + 1) * blob]);
    std::vector<uint8_t> got(ring), want(ring);
    auto reference_in = [&](std::vector<uint8_t>& r) -> const uint8_t* {
      if (from_zeros) return zeros.data();
      uint8_t* slot = &r[((first_slot + window - 1) % window) * blob];
      std::memcpy(slot, reference.data(), blob);
      return slot;
    };
    const uint8_t* got_previous = reference_in(got);
    const uint8_t* want_previous = reference_in(want);
    const uint8_t* const newest = expand_measured(exact.data(), offset, into, frames, blob, got_previous,
                                                  &got[first_slot * blob], got.data(), got.data() + got.size());
    // It returns the last frame's slot (the receiver's next reference).
    ASSERT_EQ(newest, &got[((first_slot + frames - 1) % window) * blob]) << round;
    DeltaRunDecoder decoder(exact.data(), exact.size());
    ASSERT_TRUE(held == 0 || decoder.seek(want_offset, want_into)) << round;
    for (size_t k = 0; k < frames; ++k) {
      uint8_t* slot = &want[((first_slot + k) % window) * blob];
      ASSERT_TRUE(decoder.apply(slot, want_previous, blob)) << round;
      want_previous = slot;
    }
    ASSERT_TRUE(decoder.finished()) << round;
    ASSERT_EQ(got, want) << round << " blob " << blob << " held " << held << " of " << count;
    ++expanded;
    if (exact[offset] >= 0x80) ++literal_starts;
    if (first_slot + frames > window) ++wrapped;
  }
  // Every case was met many times.
  EXPECT_GT(expanded, 5000);
  EXPECT_GT(literal_starts, 300);
  EXPECT_GT(wrapped, 1000);
}

// The sender's seal (its full sequence at hand) writes the checksum seal_datagram writes, and the
// receiver checks, for sequences on both sides of 16-bit wraps and any key; handshakes are left
// alone.
TEST(Wire, SealDataDatagramIsSealDatagram) {
  for (uint32_t sequence : {0u, 1u, 0x7FFFu, 0x8000u, 0xFFFFu, 0x10000u, 0x1FFFFu, 0x12345678u, 0xFFFFFFFEu}) {
    for (uint64_t key : {uint64_t{0}, uint64_t{0x0123456789ABCDEFull}}) {
      Message m;
      m.header.type = MessageType::input_ack;
      m.header.sequence = sequence;
      m.ack_frame = 77;
      uint8_t a[64], b[64];
      const size_t n = encode_message(m, a, sizeof a);
      ASSERT_GT(n, 0u);
      std::memcpy(b, a, n);
      seal_datagram(a, n, key, sequence);
      seal_data_datagram(b, n, key, sequence);
      ASSERT_EQ(std::memcmp(a, b, n), 0) << sequence << " " << key;
      Integrity integrity;
      integrity.connection_key = key;
      integrity.sequence_base = sequence;
      Message back;
      EXPECT_EQ(decode_message(b, n, &back, integrity), DecodeError::ok) << sequence;
      EXPECT_EQ(back.header.sequence, sequence);
    }
  }
  Message h;
  h.header.type = MessageType::handshake_request;
  h.header.nonce = 5;
  uint8_t hs[64];
  const size_t n = encode_message(h, hs, sizeof hs);
  uint8_t copy[64];
  std::memcpy(copy, hs, n);
  seal_data_datagram(copy, n, 99, 1);
  EXPECT_EQ(std::memcmp(copy, hs, n), 0) << "a handshake is not a data message";
}

// Seal::none (datagrams an AEAD protects) leaves the checksum field 0; the default seals it.
TEST(Wire, InputsCanBeLeftUnsealed) {
  const uint8_t blob[2] = {1, 2}, zeros[2] = {};
  uint8_t sealed[64], unsealed[64];
  Header h;
  InputsWriter a(sealed, sizeof sealed, h, 0, kNullFrame, 2, nullptr, 0, zeros);
  InputsWriter b(unsealed, sizeof unsealed, h, 0, kNullFrame, 2, nullptr, 0, zeros);
  ASSERT_TRUE(a.append(blob));
  ASSERT_TRUE(b.append(blob));
  const size_t size = a.finish();
  ASSERT_EQ(b.finish(Seal::none), size);
  Message m;
  EXPECT_EQ(decode_message(sealed, size, &m), DecodeError::ok);
  EXPECT_EQ(std::memcmp(unsealed + kDataPublicHeaderSize, "\0\0\0\0", 4), 0);
  EXPECT_EQ(std::memcmp(sealed + kDataHeaderSize, unsealed + kDataHeaderSize, size - kDataHeaderSize), 0);
}

TEST(Wire, UnchangedInputsCostOneBytePer128) {
  std::vector<std::vector<uint8_t>> blobs(64, std::vector<uint8_t>(2, 0x5A));
  std::vector<uint8_t> reference(2, 0x5A);
  std::vector<uint8_t> datagram;
  ASSERT_EQ(encode_inputs(blobs, 100, reference, &datagram), 64u);
  // header + start 100 (1 byte) + ack 5 - 100 (zigzag 189: 2 bytes) + count 64 (1) +
  // flags (1) + disconnected mask (1) + player 1's last frame 7 (1) + one zero-run token (no
  // blob size: the payload's 128 bytes over 64 blobs say 2)
  EXPECT_EQ(datagram.size(), kDataHeaderSize + 7 + 1);
}

// The varint fields at their limits: the largest start frame, an ack of -1 far below it, a
// disconnected player with no frame (-1) and one at the largest frame.
TEST(Wire, InputsFieldsAtTheirLimits) {
  const Frame start = std::numeric_limits<Frame>::max() - 2;  // start + count <= max
  const ConnectStatus status[8] = {{false, kNullFrame}, {true, kNullFrame}, {false, 5},
                                   {false, 6},          {false, 7},         {false, 8},
                                   {false, 9},          {true, std::numeric_limits<Frame>::max()}};
  const uint8_t reference[3] = {0, 0, 0}, blob[3] = {1, 2, 3};
  uint8_t out[kMaxDatagramSize];
  Header h;
  InputsWriter w(out, sizeof out, h, start, kNullFrame, 3, status, 8, reference);
  ASSERT_TRUE(w.append(blob));
  ASSERT_TRUE(w.append(blob));
  const size_t n = w.finish();
  Message m;
  ASSERT_EQ(decode_message(out, n, &m), DecodeError::ok);
  EXPECT_EQ(m.inputs.start_frame, start);
  EXPECT_EQ(m.inputs.ack_frame, kNullFrame);
  EXPECT_EQ(m.inputs.count, 2);
  EXPECT_EQ(m.inputs.blob_size, 3);
  EXPECT_EQ(m.inputs.disconnected, 0x82);
  for (int i = 0; i < 8; ++i) {
    const ConnectStatus expected = status[i].disconnected ? status[i] : ConnectStatus{};
    EXPECT_EQ(m.inputs.status[i], expected) << i;
  }
  // A third blob would make start + count overflow the frame range: the reader refuses it.
  InputsWriter w3(out, sizeof out, h, start, kNullFrame, 3, status, 8, reference);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w3.append(blob));
  const size_t n3 = w3.finish();
  EXPECT_EQ(decode_message(out, n3, &m), DecodeError::malformed);
}

// A long backlog of incompressible blobs goes out in datagrams of at most 1200 bytes, oldest
// first, and the chain of datagrams rebuilds every blob.
TEST(Wire, BacklogNeverExceedsDatagramCap) {
  std::mt19937 rng(5);
  for (size_t blob_size : {size_t{2}, size_t{64}, size_t{256}, size_t{1024}}) {
    std::vector<std::vector<uint8_t>> blobs(400, std::vector<uint8_t>(blob_size));
    for (auto& b : blobs) for (auto& byte : b) byte = uint8_t(rng());
    std::vector<uint8_t> reference(blob_size, 0);
    size_t next = 0;
    int datagrams = 0;
    while (next < blobs.size()) {
      std::vector<std::vector<uint8_t>> rest(blobs.begin() + long(next), blobs.end());
      std::vector<uint8_t> datagram;
      const size_t fitted = encode_inputs(rest, Frame(next), reference, &datagram);
      ASSERT_GE(fitted, 1u) << blob_size;
      ASSERT_LE(datagram.size(), kMaxDatagramSize);
      Message m;
      ASSERT_EQ(decode_message(datagram.data(), datagram.size(), &m), DecodeError::ok);
      ASSERT_EQ(m.inputs.start_frame, Frame(next));
      InputsReader reader(m.inputs, reference.data());
      std::vector<uint8_t> blob(blob_size);
      for (size_t i = 0; i < fitted; ++i) {
        ASSERT_TRUE(reader.next(blob.data()));
        ASSERT_EQ(blob, blobs[next + i]);
      }
      next += fitted;
      reference = blobs[next - 1];
      ++datagrams;
    }
    EXPECT_GT(datagrams, 1);
  }
}

// Frames 300..302 of 2-byte inputs with a quality report, a reply and two checksum reports riding.
Riders some_riders() {
  Riders r;
  r.has_report = true;
  r.report = {17, 298, -3};
  r.has_reply = true;
  r.reply = {16, 2500};
  r.checksum_count = 2;
  r.checksums[0] = {240, 0x0123456789ABCDEFull};
  r.checksums[1] = {300, 0xFEDCBA9876543210ull};
  return r;
}

std::vector<uint8_t> inputs_with_riders() {
  std::vector<uint8_t> out(kMaxDatagramSize);
  Header h;
  h.sequence = 4;
  const uint8_t zeros[2] = {}, blobs[3][2] = {{1, 0}, {1, 0}, {3, 0}};
  const Riders riders = some_riders();
  InputsWriter w(out.data(), out.size(), h, 300, 299, 2, nullptr, 0, zeros, &riders);
  for (const auto& b : blobs) w.append(b);
  out.resize(w.finish());
  return out;
}

// Reports ride on an inputs datagram with their values intact, frames before and after its
// start included, and the inputs beside them decode as without.
TEST(Wire, RidersRoundTripBesideTheInputs) {
  const auto d = inputs_with_riders();
  Message m;
  ASSERT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::ok);
  const Riders expected = some_riders();
  const Riders& got = m.inputs.riders;
  ASSERT_TRUE(got.has_report && got.has_reply);
  EXPECT_EQ(got.report, expected.report);
  EXPECT_EQ(got.reply, expected.reply);
  ASSERT_EQ(got.checksum_count, 2);
  EXPECT_EQ(got.checksums[0], expected.checksums[0]);
  EXPECT_EQ(got.checksums[1], expected.checksums[1]);
  EXPECT_EQ(m.inputs.start_frame, 300);
  EXPECT_EQ(m.inputs.count, 3);
  EXPECT_EQ(m.inputs.blob_size, 2);
  // Frames relative to the start take a byte each (298, 240, 300 from 300): start (2), ack, count,
  // flags; report (id, frame, advantage); reply (id, hold 2500 in 2); checksums; payload (6).
  EXPECT_EQ(d.size(), kDataHeaderSize + 5 + 3 + 3 + 2 * (1 + 8) + 6);
  // Without riders, the same frames in fewer bytes and no rider decoded.
  std::vector<uint8_t> plain(kMaxDatagramSize);
  const uint8_t zeros[2] = {}, blob[2] = {1, 0};
  InputsWriter w(plain.data(), plain.size(), Header{}, 300, 299, 2, nullptr, 0, zeros);
  w.append(blob);
  plain.resize(w.finish());
  ASSERT_EQ(decode_message(plain.data(), plain.size(), &m), DecodeError::ok);
  EXPECT_TRUE(m.inputs.riders.empty());
}

// A silence note (flag bit 6) rides after the checksum reports, alone or beside the others,
// and is range-checked: gap 1..65535 ms, ago 0..2000 ms (anything else is malformed, and the
// writer leaves out a note the wire cannot hold).
TEST(Wire, SilenceNoteRidesAndIsRangeChecked) {
  std::vector<uint8_t> out(kMaxDatagramSize);
  const uint8_t zeros[2] = {}, blob[2] = {1, 0};
  auto with = [&](const Riders& r) {
    InputsWriter w(out.data(), out.size(), Header{}, 300, 299, 2, nullptr, 0, zeros, &r);
    w.append(blob);
    return w.finish();
  };
  Message m;
  for (const bool others : {false, true}) {
    for (const SilenceNote note : {SilenceNote{1, 0}, SilenceNote{812, 17}, SilenceNote{kMaxSilenceGapMs, kMaxSilenceAgoMs}}) {
      Riders r = others ? some_riders() : Riders{};
      r.has_silence = true;
      r.silence = note;
      const size_t n = with(r);
      ASSERT_EQ(decode_message(out.data(), n, &m), DecodeError::ok) << note.gap_ms;
      ASSERT_TRUE(m.inputs.riders.has_silence);
      EXPECT_EQ(m.inputs.riders.silence, note);
      EXPECT_EQ(m.inputs.riders.has_report, others);
      EXPECT_EQ(m.inputs.riders.checksum_count, others ? 2 : 0);
      EXPECT_EQ(m.inputs.count, 1);
      EXPECT_LE(n, with(others ? some_riders() : Riders{}) + kSilenceRiderSize);
    }
  }
  // Alone: flags 0x40, then gap 812 (ac 06) and ago 17 (11), then the payload.
  Riders alone;
  alone.has_silence = true;
  alone.silence = {812, 17};
  const size_t n = with(alone);
  const size_t flags_at = kDataHeaderSize + 4;  // start (ac 02), ack, count
  ASSERT_EQ(out[flags_at], 0x40);
  ASSERT_EQ(out[flags_at + 1], 0xac);
  ASSERT_EQ(out[flags_at + 2], 0x06);
  ASSERT_EQ(out[flags_at + 3], 0x11);
  auto patched = [&](std::vector<uint8_t> note) {
    std::vector<uint8_t> d(out.begin(), out.begin() + long(n));
    d.erase(d.begin() + long(flags_at) + 1, d.begin() + long(flags_at) + 4);
    d.insert(d.begin() + long(flags_at) + 1, note.begin(), note.end());
    seal_datagram(d.data(), d.size());
    return decode_message(d.data(), d.size(), &m);
  };
  EXPECT_EQ(patched({0xac, 0x06, 0x11}), DecodeError::ok);
  EXPECT_EQ(patched({0x00, 0x11}), DecodeError::malformed) << "a silence of 0 ms";
  EXPECT_EQ(patched({0x80, 0x80, 0x04, 0x11}), DecodeError::malformed) << "65,536 ms";
  EXPECT_EQ(patched({0xac, 0x06, 0xd1, 0x0f}), DecodeError::malformed) << "told 2,001 ms after";
  EXPECT_EQ(patched({0xac, 0x06, 0xd0, 0x0f}), DecodeError::ok) << "told 2,000 ms after";
  // What the wire cannot hold is not written.
  for (const SilenceNote bad : {SilenceNote{0, 5}, SilenceNote{kMaxSilenceGapMs + 1, 5}, SilenceNote{100, kMaxSilenceAgoMs + 1}}) {
    Riders r;
    r.has_silence = true;
    r.silence = bad;
    const size_t k = with(r);
    ASSERT_EQ(decode_message(out.data(), k, &m), DecodeError::ok);
    EXPECT_FALSE(m.inputs.riders.has_silence);
  }
}

// The blob size is not on the wire: a payload of count blobs says it, and one that does not
// split into count equal blobs of 1..1024 bytes is malformed.
TEST(Wire, TheBlobSizeIsThePayloadOverTheCount) {
  for (size_t blob_size : {size_t{1}, size_t{2}, size_t{7}, size_t{128}, size_t{1024}}) {
    std::vector<std::vector<uint8_t>> blobs(3, std::vector<uint8_t>(blob_size, 0));
    blobs[1][0] = 9;
    std::vector<uint8_t> d;
    ASSERT_EQ(encode_inputs(blobs, 50, std::vector<uint8_t>(blob_size, 0), &d), 3u);
    Message m;
    ASSERT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::ok) << blob_size;
    EXPECT_EQ(m.inputs.blob_size, blob_size);
  }
  // 3 blobs of 4 bytes relabelled as 5 (12 bytes do not split in 5) or 13 (no byte each).
  std::vector<std::vector<uint8_t>> blobs = {{1, 2, 3, 4}, {1, 2, 3, 5}, {0, 0, 0, 0}};
  std::vector<uint8_t> d;
  encode_inputs(blobs, 10, {1, 2, 3, 4}, &d);
  for (uint8_t count : {uint8_t(5), uint8_t(13)}) {
    auto bad = d;
    bad[kDataHeaderSize + 2] = count;
    seal_datagram(bad.data(), bad.size());
    Message m;
    EXPECT_EQ(decode_message(bad.data(), bad.size(), &m), DecodeError::malformed) << int(count);
  }
}

std::vector<std::vector<uint8_t>> valid_datagrams() {
  std::vector<std::vector<uint8_t>> all;
  for (MessageType type : kSimpleTypes) {
    std::vector<uint8_t> d(kMaxDatagramSize);
    d.resize(encode_message(make_simple(type), d.data(), d.size()));
    all.push_back(d);
  }
  std::vector<std::vector<uint8_t>> blobs = {{1, 2, 3, 4}, {1, 2, 3, 5}, {0, 0, 0, 0}};
  std::vector<uint8_t> d;
  encode_inputs(blobs, 10, {1, 2, 3, 4}, &d);
  all.push_back(d);
  all.push_back(inputs_with_riders());
  std::vector<uint8_t> silent(kMaxDatagramSize);
  Riders note;
  note.has_silence = true;
  note.silence = {812, 17};
  const uint8_t zeros[2] = {}, three[3][2] = {{1, 0}, {1, 0}, {3, 0}};  // no shorter payload decodes
  InputsWriter w(silent.data(), silent.size(), Header{}, 300, 299, 2, nullptr, 0, zeros, &note);
  for (const auto& b : three) w.append(b);
  silent.resize(w.finish());
  all.push_back(silent);
  return all;
}

TEST(Wire, TruncatedAtEveryLengthIsRejected) {
  for (const auto& d : valid_datagrams()) {
    for (size_t n = 0; n < d.size(); ++n) {
      // An allocation of exactly n bytes, so ASan sees any read past it.
      std::vector<uint8_t> cut(d.begin(), d.begin() + long(n));
      Message m;
      const DecodeError e = decode_message(cut.data(), cut.size(), &m);
      EXPECT_NE(e, DecodeError::ok) << "length " << n << " of " << d.size();
      if (n < header_size(MessageType(d[3]))) {
        EXPECT_EQ(e, DecodeError::truncated);
      } else {
        // With a matching checksum the body's own length checks must catch it.
        seal_datagram(cut.data(), cut.size());
        const DecodeError sealed = decode_message(cut.data(), cut.size(), &m);
        EXPECT_TRUE(sealed == DecodeError::truncated || sealed == DecodeError::malformed)
            << decode_error_name(sealed) << " at length " << n;
      }
    }
  }
}

TEST(Wire, ClassesOfBadInput) {
  const auto good = valid_datagrams();
  Message m;
  auto d = good[0];
  d[0] = 'X';
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::bad_magic);
  d = good[0];
  d[2] = kProtocolVersion + 1;
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::bad_version);
  EXPECT_EQ(m.header.type, MessageType::handshake_request);  // still tells what it was
  d = good[0];
  d[3] = 200;
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::unknown_type);
  d = good[0];
  d.push_back(0);  // a byte after the body
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  std::vector<uint8_t> big(kMaxDatagramSize + 1, 0);
  std::copy(good[0].begin(), good[0].end(), big.begin());
  EXPECT_EQ(decode_message(big.data(), big.size(), &m), DecodeError::oversized);
  d = good[0];
  d[kHandshakeHeaderSize + 8] = 0;  // zero players: garbled, caught by the checksum...
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::bad_checksum);
  seal_datagram(d.data(), d.size());  // ...and by the field check when the checksum matches
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = good[0];
  d[kHandshakeHeaderSize + 13] = uint8_t(kMaxPredictionFrames + 1);  // a window beyond 64 frames
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = good[0];
  d[kHandshakeHeaderSize + 16] |= 0x04;  // "refused" is a reply's flag: a request with it is nonsense
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d[3] = uint8_t(MessageType::handshake_reply);  // as a reply it is the refusal of a rejoin
  seal_datagram(d.data(), d.size());
  ASSERT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::ok);
  EXPECT_TRUE(m.handshake.refused);
  d[kHandshakeHeaderSize + 16] |= 0x08;  // a flag bit no version defines
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = good[0];
  d.pop_back();  // a handshake of the layout before max_prediction (20 body bytes) is short
  seal_datagram(d.data(), d.size());
  EXPECT_NE(decode_message(d.data(), d.size(), &m), DecodeError::ok);
  // inputs body: start 10, ack delta -5 (zigzag 9), count 3, flags 0x01, mask 0x02, ...
  const auto inputs = good[good.size() - 3];
  ASSERT_EQ(inputs[kDataHeaderSize + 2], 3);
  ASSERT_EQ(inputs[kDataHeaderSize + 3], 0x01);
  d = inputs;              // inputs: a flag bit no version defines
  d[kDataHeaderSize + 3] = 0x81;
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = inputs;              // inputs: "someone is disconnected" with an empty mask
  d[kDataHeaderSize + 4] = 0;
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = inputs;              // inputs: a varint that is not minimal (0x8a 0x00 for 10)
  d[kDataHeaderSize] = 0x8a;
  d.insert(d.begin() + long(kDataHeaderSize) + 1, 0);
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = inputs;              // inputs: an ack below -1 (delta -12 from start 10: zigzag 23)
  d[kDataHeaderSize + 1] = 23;
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = inputs;              // inputs: a count the payload does not hold
  d[kDataHeaderSize + 2] = 9;
  seal_datagram(d.data(), d.size());
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::malformed);
  d = inputs;              // inputs: one payload bit flipped
  d.back() ^= 0x10;
  EXPECT_EQ(decode_message(d.data(), d.size(), &m), DecodeError::bad_checksum);
  // riders (start 300): a reply held longer than kMaxReplyHoldUs, a report before frame 0
  auto riders = some_riders();
  std::vector<uint8_t> out(kMaxDatagramSize);
  const uint8_t zeros[2] = {}, blob[2] = {1, 0};
  auto with = [&](const Riders& r) {
    InputsWriter w(out.data(), out.size(), Header{}, 300, 299, 2, nullptr, 0, zeros, &r);
    w.append(blob);
    return w.finish();
  };
  size_t n = with(riders);
  ASSERT_EQ(decode_message(out.data(), n, &m), DecodeError::ok);
  // The reply's hold varint (2500: c4 13) follows start (ac 02), ack, count, flags, the report
  // (17, 298 - 300 = zigzag 3, -3 = zigzag 5) and the reply's id 16.
  const size_t hold_at = kDataHeaderSize + 5 + 3 + 1;
  ASSERT_EQ(out[hold_at], 0xc4);
  const uint8_t too_long[3] = {0xc1, 0x84, 0x3d};  // 1,000,001
  std::vector<uint8_t> held(out.begin(), out.begin() + long(n));
  held.erase(held.begin() + long(hold_at), held.begin() + long(hold_at) + 2);
  held.insert(held.begin() + long(hold_at), too_long, too_long + 3);
  seal_datagram(held.data(), held.size());
  EXPECT_EQ(decode_message(held.data(), held.size(), &m), DecodeError::malformed);
  // A checksum report of frame -1 (zigzag 1 where frame 0 is 0): no frame before 0 exists.
  Message c;
  c.header.type = MessageType::checksum_report;
  c.checksum = {0, 42};
  n = encode_message(c, out.data(), out.size());
  ASSERT_EQ(out[kDataHeaderSize], 0x00);
  out[kDataHeaderSize] = 0x01;
  seal_datagram(out.data(), n);
  EXPECT_EQ(decode_message(out.data(), n, &m), DecodeError::malformed);
  EXPECT_EQ(decode_message(nullptr, 10, &m), DecodeError::truncated);
}

// Data messages carry 16 bits of the sequence: the receiver widens them to the full number
// nearest the highest it accepted, across the 16-bit wrap both ways, without going below 0 or
// past 2^32 - 1.
TEST(Wire, SequenceWidensToTheNearestFullNumber) {
  EXPECT_EQ(widen_sequence(5, 0), 5u);
  EXPECT_EQ(widen_sequence(0xFFFF, 0), 0xFFFFu);  // nothing below 0: ahead
  EXPECT_EQ(widen_sequence(0x0005, 0x1FFF0), 0x20005u);  // just past a wrap
  EXPECT_EQ(widen_sequence(0xFFF0, 0x20005), 0x1FFF0u);  // late, from before the wrap
  EXPECT_EQ(widen_sequence(0x7FFF, 0x10000), 0x17FFFu);
  EXPECT_EQ(widen_sequence(0xFF10, 0xFFFFFF00u), 0xFFFFFF10u);
  EXPECT_EQ(widen_sequence(0x0010, 0xFFFFFF00u), 0xFFFF0010u);  // nothing past 2^32 - 1
  for (uint32_t base : {0u, 1000u, 0x12345u, 0xFFFF8000u}) {
    for (uint32_t ahead : {0u, 1u, 64u, 0x7FFFu}) {
      if (base + ahead < base) continue;
      EXPECT_EQ(widen_sequence(uint16_t(base + ahead), base), base + ahead) << base << "+" << ahead;
      if (base >= ahead) {
        EXPECT_EQ(widen_sequence(uint16_t(base - ahead), base), base - ahead);
      }
    }
  }
}

// The 10-byte data header: magic, version, type, the sequence's low 16 bits, the checksum.
// The checksum covers the full sequence, so the same bytes 65,536 datagrams later (a replay
// the 16 bits alone cannot tell) fail it.
TEST(Wire, DataHeaderHoldsSixteenSequenceBitsTheChecksumCoversAll) {
  Message m;
  m.header.type = MessageType::input_ack;
  m.header.nonce = 0xA1B2C3D4;  // not sent
  m.header.sequence = 0x00030005;
  m.ack_frame = 9;
  uint8_t d[kMaxDatagramSize];
  const size_t n = encode_message(m, d, sizeof d);
  ASSERT_EQ(n, kDataHeaderSize + 4);
  EXPECT_EQ(d[0], kMagic0);
  EXPECT_EQ(d[2], kProtocolVersion);
  EXPECT_EQ(d[3], uint8_t(MessageType::input_ack));
  EXPECT_EQ(d[4], 0x05);
  EXPECT_EQ(d[5], 0x00);
  Message back;
  Integrity near;
  near.sequence_base = 0x00030000;
  ASSERT_EQ(decode_message(d, n, &back, near), DecodeError::ok);
  EXPECT_EQ(back.header.sequence, 0x00030005u);
  EXPECT_EQ(back.header.nonce, 0u);
  EXPECT_EQ(back.ack_frame, 9);
  Integrity later;
  later.sequence_base = 0x00040000;
  EXPECT_EQ(decode_message(d, n, &back, later), DecodeError::bad_checksum);
}

// A version-5 datagram (16-byte header for every type) is refused as another version, not
// misread as a short version-6 header; and so is any other version.
TEST(Wire, OtherVersionsAreRefusedWhateverTheirLayout) {
  for (const auto& d : valid_datagrams()) {
    for (uint8_t version : {uint8_t(kProtocolVersion - 1), uint8_t(kProtocolVersion + 1), uint8_t(1)}) {
      auto other = d;
      other[2] = version;
      Message m;
      EXPECT_EQ(decode_message(other.data(), other.size(), &m), DecodeError::bad_version);
      EXPECT_EQ(m.header.version, version);
      EXPECT_EQ(m.header.type, MessageType(d[3]));
    }
  }
}

// Inputs of up to 8 bytes (the usual ones) are coded from one word and a bit per changed byte
// (encode_changed_delta's short path): every pattern of changed bytes, at every such size, codes
// as the general encoder does.
TEST(Wire, ShortDeltasCodeLikeTheGeneralEncoder) {
  std::mt19937 rng(5);
  for (size_t size = 1; size <= 12; ++size) {
    for (uint32_t pattern = 0; pattern < (1u << size); ++pattern) {
      std::vector<uint8_t> previous(size), blob(size);
      for (size_t k = 0; k < size; ++k) {
        previous[k] = uint8_t(rng());
        const uint8_t change = ((pattern >> k) & 1u) != 0 ? uint8_t(1 + rng() % 255) : 0;
        blob[k] = uint8_t(previous[k] ^ change);
      }
      std::vector<uint8_t> tokens(max_encoded_delta_size(size) + 1, 0xEE), general(tokens.size(), 0xEE);
      const EncodedDelta d = encode_delta(blob.data(), previous.data(), size, tokens.data());
      ByteWriter writer(general.data(), general.size());
      DeltaRunEncoder encoder(writer);
      ASSERT_TRUE(encoder.append(blob.data(), previous.data(), size));
      ASSERT_EQ(d.size, writer.size()) << size << " " << pattern;
      ASSERT_TRUE(std::equal(tokens.begin(), tokens.begin() + d.size, general.begin())) << size << " " << pattern;
      EXPECT_EQ(tokens[d.size], 0xEE);  // nothing written past its tokens
      EXPECT_EQ(d.open_tail, int32_t(encoder.open_run())) << size << " " << pattern;
      uint32_t lead = 0;
      while (lead < size && ((pattern >> lead) & 1u) == 0) ++lead;
      EXPECT_EQ(d.lead_zeros, lead);
      EXPECT_EQ(d.lead_bytes, lead != 0 ? 1u : 0u);
      EXPECT_EQ(d.unchanged, pattern == 0);
    }
  }
}

// A changed input of up to 8 bytes is coded straight into the run (append_changed_word): for
// every pattern of changed bytes at every such size, after runs of every kind (empty, a lead
// only, a body ending in a literal or in an open zero run nearly full, at every run's limit), the
// run is what append() of encode_delta's tokens makes of it, and grows the same afterwards; at the
// limit both refuse it alike, nothing appended.
TEST(Wire, ChangedWordsAppendToTheRunAsTheirCodedDeltas) {
  std::mt19937 rng(23);
  for (size_t size = 1; size <= 8; ++size) {
    std::vector<uint8_t> tokens(max_encoded_delta_size(size));
    for (uint32_t pattern = 1; pattern < (1u << size); ++pattern) {
      for (int setup = 0; setup < 37; ++setup) {
        std::vector<uint8_t> previous(size), blob(size);
        for (size_t k = 0; k < size; ++k) {
          previous[k] = uint8_t(rng());
          blob[k] = uint8_t(previous[k] ^ (((pattern >> k) & 1u) != 0 ? uint8_t(1 + rng() % 255) : 0));
        }
        // Setups 7 to 36: every limit from 1 to 15 bytes after a short body or a lead only.
        const size_t limit = setup == 6 ? 2 + rng() % 14 : setup >= 7 ? 1 + size_t(setup - 7) % 15 : kMaxDatagramSize;
        PreparedInputs a, b;
        a.init(size, limit);
        b.init(size, limit);
        const Frame base = Frame(rng() % 1000);
        a.reset(base);
        b.reset(base);
        // The same frames before it in both: `setup` picks the run's shape.
        auto both_changed = [&](uint32_t bits) {
          std::vector<uint8_t> x(size, 0), y(size, 0);
          for (size_t k = 0; k < size; ++k)
            if (((bits >> k) & 1u) != 0) y[k] = uint8_t(1 + rng() % 255);
          const EncodedDelta d = encode_delta(y.data(), x.data(), size, tokens.data());
          const bool ok = a.append(d, tokens.data());
          ASSERT_EQ(b.append(d, tokens.data()), ok);
        };
        auto both_unchanged = [&](int frames) {
          for (int f = 0; f < frames; ++f) {
            const bool ok = a.append_unchanged(size);
            ASSERT_EQ(b.append_unchanged(size), ok);
          }
        };
        if (setup == 1) both_unchanged(1 + int(rng() % 40));  // a lead only
        if (setup == 2) both_changed(1u << (size - 1));       // a body ending in a literal
        if (setup == 3) {                                     // an open zero run
          both_changed(1u);
          both_unchanged(int(rng() % 3));
        }
        if (setup == 4) {  // an open zero run nearly full (or just full)
          both_changed(1u);
          both_unchanged(int(120 / size + rng() % 3));
        }
        if (setup == 5) {  // a long lead, then a body
          both_unchanged(300);
          both_changed(1u);
          both_unchanged(int(126 / size));
        }
        if (setup == 6) {  // near the run's limit
          for (int f = 0; f < 12; ++f) {
            if (rng() % 2) both_changed(uint32_t(1 + rng() % ((1u << size) - 1)));
            else both_unchanged(1);
          }
        }
        if (setup >= 7 && setup < 22) {
          both_changed(1u);
          both_unchanged(1);
        }
        if (setup >= 22) both_unchanged(2);
        const Frame next = a.next();
        const bool fast = a.append_changed_word(blob.data(), previous.data(), size);
        const EncodedDelta d = encode_delta(blob.data(), previous.data(), size, tokens.data());
        ASSERT_FALSE(d.unchanged);
        const bool general = b.append(d, tokens.data());
        // The same answer at the limit (the body is never at its buffer's end here).
        ASSERT_EQ(fast, general) << size << " " << pattern << " " << setup;
        if (!fast) {
          ASSERT_EQ(a.next(), next);  // nothing appended
        }
        for (int more = 0; more < 3; ++more) {
          ASSERT_EQ(a.first(), b.first());
          ASSERT_EQ(a.next(), b.next()) << size << " " << pattern << " " << setup;
          ASSERT_EQ(a.size(), b.size()) << size << " " << pattern << " " << setup;
          std::vector<uint8_t> wa(a.size() + 1, 0xEE), wb(b.size() + 1, 0xEE);
          a.write(wa.data());
          b.write(wb.data());
          ASSERT_EQ(wa, wb) << size << " " << pattern << " " << setup;
          both_unchanged(1);  // the open run (or none) is the same in both
        }
      }
    }
  }
}

// Riders of every kind, some with values the wire cannot hold (InputsWriter leaves those out).
Riders random_riders(std::mt19937& rng, Frame start) {
  Riders r;
  if (rng() % 2) {
    r.has_report = true;
    r.report = QualityReport{uint8_t(rng()), start + Frame(rng() % 400) - 200, int32_t(rng() % 600) - 300};
  }
  if (rng() % 2) {
    r.has_reply = true;
    r.reply = QualityReply{uint8_t(rng()), uint32_t(rng() % 8 == 0 ? kMaxReplyHoldUs + 1 + rng() % 100 : rng() % (kMaxReplyHoldUs + 1))};
  }
  r.checksum_count = uint8_t(rng() % 3 == 0 ? rng() % (kMaxRiddenChecksums + 1) : 0);
  for (uint8_t i = 0; i < r.checksum_count; ++i)
    r.checksums[i] = ChecksumReport{start + Frame(rng() % 300) - 100, uint64_t(rng()) << 32 | rng()};
  if (rng() % 2) {
    r.has_silence = true;
    r.silence = SilenceNote{uint32_t(rng() % (kMaxSilenceGapMs + 2)), uint32_t(rng() % (kMaxSilenceAgoMs + 2))};
  }
  return r;
}

// The run kept ready for the next inputs datagram (PreparedInputs: every frame appended once,
// the front cut as acknowledgements come) gives, whatever the frames, cuts and sizes, exactly the
// datagram InputsWriter builds frame by frame from its first frame; and write_plain_inputs fits
// exactly when all those frames fit. Frames the run refused (its limit) are appended again after
// a cut, as the endpoint does. write_riding_inputs, the same run with riders of every kind (some
// the wire cannot hold), gives InputsWriter's datagram of those riders and frames just as exactly.
TEST(Wire, PreparedRunIsTheDatagramOfItsFrames) {
  std::mt19937 rng(17);
  int riding_checked = 0;
  int short_checked = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t blob_size = round % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 12;
    const size_t count = 1 + rng() % 400;
    const int changes = int(rng() % 5);  // out of 8: how often an input changes
    std::vector<std::vector<uint8_t>> blobs(count, std::vector<uint8_t>(blob_size));
    std::vector<uint8_t> current(blob_size, 0);
    const bool noisy = rng() % 8 == 0;  // most bytes change: runs that fill the limit
    for (auto& b : blobs) {
      if (int(rng() % 8) < changes) {
        const size_t n = noisy ? blob_size : 1 + rng() % 3;
        for (size_t k = 0; k < n; ++k) current[noisy ? k : rng() % blob_size] = uint8_t(rng());
      }
      b = current;
    }
    const Frame base = Frame(rng() % 100000);  // the stream's first frame (zeros before it)
    const std::vector<uint8_t> zeros(blob_size, 0);
    auto blob_of = [&](Frame f) { return f < base ? zeros.data() : blobs[size_t(f - base)].data(); };
    PreparedInputs run;
    run.init(blob_size, kMaxDatagramSize);
    run.reset(base);
    std::vector<uint8_t> tokens(max_encoded_delta_size(blob_size));
    Frame queued = base;  // one past the newest frame queued
    for (int step = 0; step < 300 && run.first() < base + Frame(count); ++step) {
      const uint32_t op = rng() % 8;
      if (op < 4 && queued < base + Frame(count)) {
        ++queued;
      } else if (op < 6) {
        run.trim(run.first() + Frame(rng() % (uint32_t(queued - run.first()) + 1)));
      }
      // As the endpoint: frames queued while the run was full are appended once it takes them.
      while (run.next() < queued) {
        const Frame f = run.next();
        const EncodedDelta d = encode_delta(blob_of(f), blob_of(f - 1), blob_size, tokens.data());
        if (!run.append(d, tokens.data())) break;
      }
      if (run.next() != queued || run.frames() == 0) continue;
      const size_t capacity = rng() % 2 ? kMaxDatagramSize : 20 + rng() % kMaxDatagramSize;
      const uint32_t sequence = uint32_t(rng());
      // Half the time near the start frame (the usual datagram: write_plain_short), else anywhere.
      const Frame ack = rng() % 2 ? run.first() - 1 - Frame(rng() % 70) : Frame(rng() % 200000) - 1;
      std::vector<uint8_t> plain(kMaxDatagramSize + 16, 0xEE), framewise(kMaxDatagramSize, 0);
      const size_t length = write_plain_inputs(plain.data(), capacity, sequence, ack, run);
      Header h;
      h.sequence = sequence;
      h.type = MessageType::inputs;
      InputsWriter w(framewise.data(), capacity, h, run.first(), ack, uint16_t(blob_size), nullptr, 0,
                     blob_of(run.first() - 1));
      for (Frame f = run.first(); f < run.next(); ++f)
        if (!w.append(blob_of(f))) break;
      const size_t expected = w.finish(Seal::none);
      {
        // With riders: write_riding_inputs, exactly InputsWriter's datagram of them and the frames.
        const Riders riders = random_riders(rng, run.first());
        std::vector<uint8_t> riding(kMaxDatagramSize + 16, 0xEE), riding_framewise(kMaxDatagramSize, 0);
        const size_t riding_length = write_riding_inputs(riding.data(), capacity, sequence, ack, run, riders);
        InputsWriter wr(riding_framewise.data(), capacity, h, run.first(), ack, uint16_t(blob_size), nullptr, 0,
                        blob_of(run.first() - 1), &riders);
        for (Frame f = run.first(); f < run.next(); ++f)
          if (!wr.append(blob_of(f))) break;
        const size_t riding_expected = wr.finish(Seal::none);
        if (wr.count() != run.frames()) {
          ASSERT_EQ(riding_length, 0u) << round << " " << step;
        } else {
          ASSERT_EQ(riding_length, riding_expected) << round << " " << step;
          ASSERT_TRUE(std::equal(riding.begin(), riding.begin() + riding_length, riding_framewise.begin()))
              << round << " " << step;
          EXPECT_EQ(riding[std::max(riding_length, kRidingInputsScratch)], 0xEE);
          ++riding_checked;
        }
      }
      if (w.count() != run.frames()) {
        ASSERT_EQ(length, 0u) << round << " " << step;  // not all fit: built frame by frame
        continue;
      }
      ASSERT_EQ(length, expected) << round << " " << step;
      ASSERT_TRUE(std::equal(plain.begin(), plain.begin() + length, framewise.begin())) << round << " " << step;
      // Nothing written past the datagram but within the first kPlainInputsScratch bytes.
      EXPECT_EQ(plain[std::max(length, kPlainInputsScratch)], 0xEE);
      if (run.is_short() && ack >= run.first() - 64 && run.frames() < 128 && run.first() >= 128) ++short_checked;
      // InputsWriter::append_prepared splices the same run after whatever rides before it.
      std::vector<uint8_t> spliced(kMaxDatagramSize, 0);
      InputsWriter s(spliced.data(), capacity, h, run.first(), ack, uint16_t(blob_size), nullptr, 0, nullptr);
      ASSERT_TRUE(s.append_prepared(run));
      ASSERT_EQ(s.finish(Seal::none), expected);
      ASSERT_TRUE(std::equal(spliced.begin(), spliced.begin() + expected, framewise.begin()));
    }
  }
  EXPECT_GT(riding_checked, 1000);
  EXPECT_GT(short_checked, 1000);  // write_plain_short's datagrams among them
}

// write_riding_inputs' inline datagram (a quality report alone or a quality reply alone on the
// usual fields and a short run) is write_riding_inputs_general's, byte for byte and in length,
// and so InputsWriter's: runs of 1- to 8-byte inputs at start frames around 128, 16,384 and 2^21
// (where the start's varint grows), acknowledgements around the one-byte edge, counts up to 130
// (long unchanged runs of 1-byte inputs stay short), report frames and advantages around the
// varint edges and below frame 0, reply holds around the varint edges and the wire's limit,
// capacities around the widest head's, and now and then a rider more (the general writer then).
TEST(Wire, UsualRidingDatagramIsTheGeneralWritersDatagram) {
  std::mt19937 rng(29);
  int usual = 0;
  const Frame edges[] = {0, 128, 16384, Frame(1) << 21};
  for (int round = 0; round < 3000; ++round) {
    // A quarter of the rounds around 128 frames of an unchanged 1-byte input (a short run still).
    const bool long_run = round % 4 == 0;
    const size_t blob_size = long_run ? 1 : 1 + rng() % 8;
    const Frame base = std::max(Frame(0), edges[rng() % 4] + Frame(rng() % 300) - 150);
    const std::vector<uint8_t> zeros(blob_size, 0);
    std::vector<std::vector<uint8_t>> blobs;
    std::vector<uint8_t> current(blob_size, 0);
    const int changes = long_run ? 0 : int(rng() % 4);  // out of 16
    const size_t count = long_run ? 124 + rng() % 8 : 1 + rng() % 140;
    for (size_t i = 0; i < count; ++i) {
      if (int(rng() % 16) < changes) current[rng() % blob_size] = uint8_t(rng());
      blobs.push_back(current);
    }
    auto blob_of = [&](Frame f) { return f < base ? zeros.data() : blobs[size_t(f - base)].data(); };
    PreparedInputs run;
    run.init(blob_size, kMaxDatagramSize);
    run.reset(base);
    std::vector<uint8_t> tokens(max_encoded_delta_size(blob_size));
    for (Frame f = base; f < base + Frame(count); ++f) {
      const EncodedDelta d = encode_delta(blob_of(f), blob_of(f - 1), blob_size, tokens.data());
      if (!run.append(d, tokens.data())) break;
    }
    run.trim(base + Frame(rng() % (long_run ? 2 : uint32_t(run.frames()))));
    const Frame start = run.first();
    Riders riders;
    if (rng() % 2) {
      riders.has_report = true;
      const Frame far = rng() % 4 == 0 ? Frame(rng() % 40000) - 20000 : Frame(rng() % 140) - 70;
      const int32_t advantage = rng() % 4 == 0 ? int32_t(rng() % 20000) - 10000 : int32_t(rng() % 140) - 70;
      riders.report = QualityReport{uint8_t(rng()), start + far, advantage};
    } else {
      riders.has_reply = true;
      const uint32_t holds[] = {uint32_t(rng() % 200), 0x3F00 + uint32_t(rng() % 0x200),
                                (1u << 21) - 100 + uint32_t(rng() % 200), kMaxReplyHoldUs - 2 + uint32_t(rng() % 5),
                                uint32_t(rng()) % (kMaxReplyHoldUs + 1)};
      riders.reply = QualityReply{uint8_t(rng()), holds[rng() % 5]};
    }
    const uint32_t more = rng() % 8;  // a rider more now and then
    if (more == 0) riders.checksum_count = 1, riders.checksums[0] = ChecksumReport{start + 3, uint64_t(rng())};
    if (more == 1) riders.has_silence = true, riders.silence = SilenceNote{uint32_t(1 + rng() % 100), uint32_t(rng() % 100)};
    if (more == 2) riders.has_report = riders.has_reply = true;
    const size_t capacity =
        rng() % 2 ? kMaxDatagramSize : kMostRidingHead + 2 + 17 - 8 + rng() % 16;
    const uint32_t sequence = uint32_t(rng());
    const Frame ack = start - 1 - Frame(rng() % 140) + 70;
    std::vector<uint8_t> fast(kMaxDatagramSize + 16, 0xEE), general(kMaxDatagramSize + 16, 0xEE);
    const size_t length = write_riding_inputs(fast.data(), capacity, sequence, ack, run, riders);
    const size_t expected = write_riding_inputs_general(general.data(), capacity, sequence, ack, run, riders);
    ASSERT_EQ(length, expected) << round;
    ASSERT_TRUE(std::equal(fast.begin(), fast.begin() + length, general.begin())) << round;
    if (length != 0 && more > 2 && run.is_short() && run.frames() < 128 && start >= 128) ++usual;
  }
  EXPECT_GT(usual, 800);  // the inline datagram among them
}

// Garbled datagrams never crash the decoder nor make it read out of bounds (run under ASan),
// and whatever decodes expands without reading past the payload.
TEST(Wire, GarbledBytesNeverCrash) {
  std::mt19937 rng(11);
  const auto good = valid_datagrams();
  int decoded = 0;
  for (int round = 0; round < 20000; ++round) {
    auto d = good[size_t(rng()) % good.size()];
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; ++f) d[rng() % d.size()] = uint8_t(rng());
    if (rng() % 3 == 0) d.resize(rng() % (d.size() + 1));
    if (rng() % 2) seal_datagram(d.data(), d.size());  // reach the body decoders too
    std::vector<uint8_t> exact(d);  // exact-size heap copy so ASan catches overreads
    Message m;
    if (decode_message(exact.data(), exact.size(), &m) != DecodeError::ok) continue;
    ++decoded;
    if (m.header.type == MessageType::inputs) {
      std::vector<uint8_t> reference(m.inputs.blob_size, 0), blob(m.inputs.blob_size);
      InputsReader reader(m.inputs, reference.data());
      int blobs = 0;
      while (reader.next(blob.data())) ++blobs;
      EXPECT_EQ(blobs, m.inputs.count);
    }
  }
  EXPECT_GT(decoded, 0);
}

// The usual start frame (read_usual_start: the receive fast paths' reader) takes exactly the
// varints of one to three bytes ByteReader::varint takes, with the same value and length, and
// nothing else. Every 1- and 2-byte prefix and random 3-byte ones, each with 3 bytes after the
// varint and with too few; the frames around 2^7, 2^14 and 2^21 by value. Until 2026-12-04 it
// stopped at two bytes, so every inputs datagram from frame 16,384 (4.5 minutes at 60 fps) on
// left the fast path.
TEST(Wire, UsualStartFrameIsTheVarintOfAtMostThreeBytes) {
  auto compare = [](const uint8_t* bytes, size_t size) {
    uint32_t general = 0;
    ByteReader r(bytes, size);
    const bool valid = r.varint(&general) && !r.failed();
    const size_t used = size - r.remaining();
    const uint8_t* at = bytes;
    uint32_t usual = 0;
    const bool taken = read_usual_start(&at, bytes + size, &usual);
    // Taken: valid, three bytes at most, three fixed bytes after it.
    const bool expected = valid && used <= 3 && size >= used + 3;
    ASSERT_EQ(taken, expected) << "bytes " << int(bytes[0]) << " " << int(bytes[1]) << " " << int(bytes[2])
                               << " size " << size;
    if (taken) {
      EXPECT_EQ(usual, general);
      EXPECT_EQ(size_t(at - bytes), used);
    }
  };
  uint8_t b[8] = {};
  for (uint32_t x = 0; x < 65536; ++x) {
    b[0] = uint8_t(x);
    b[1] = uint8_t(x >> 8);
    b[2] = 0x01;
    compare(b, 5);
    compare(b, 6);
    b[2] = 0x80;
    compare(b, 6);
  }
  std::mt19937 rng(20261204);
  for (int k = 0; k < 200000; ++k) {
    for (uint8_t& x : b) x = uint8_t(rng());
    compare(b, 5 + size_t(rng() % 4));
  }
  for (uint32_t v : {127u, 128u, 16383u, 16384u, 16385u, (1u << 21) - 1, 1u << 21, (1u << 21) + 1}) {
    uint8_t coded[8] = {};
    uint8_t* end = put_varint(coded, v);
    compare(coded, size_t(end - coded) + 3);
    const uint8_t* at = coded;
    uint32_t got = 0;
    EXPECT_EQ(read_usual_start(&at, end + 3, &got), v < (1u << 21)) << v;
    if (v < (1u << 21)) {
      EXPECT_EQ(got, v);
    }
  }
}

}  // namespace
}  // namespace retcon::detail

namespace retcon::detail {
namespace {

// take_usual_riders (the receive fast path's) against read_usual_riders alone: the same verdict,
// the same position after, the same riders written, on usual riders of every width and on
// garbled, cut and random ones, with every flags byte now and then.
TEST(Wire, UsualRidersFastPathIsTheGeneralReader) {
  std::mt19937 rng(1411);
  auto varint = [](std::vector<uint8_t>& out, uint32_t v) {
    uint8_t buf[5];
    out.insert(out.end(), buf, put_varint(buf, v));
  };
  auto zigzag = [](int32_t v) { return (uint32_t(v) << 1) ^ uint32_t(v >> 31); };
  // A value of 1..5 varint bytes, small ones most often.
  auto value = [&rng]() -> uint32_t {
    const uint32_t kind = uint32_t(rng() % 6), r = uint32_t(rng());
    switch (kind) {
      case 0: return r % 0x80;
      case 1: return r % 0x4000;
      case 2: return r % 0x200000;
      case 3: return kMaxReplyHoldUs - 2 + r % 5;
      case 4: return r;
      default: return r % 8;
    }
  };
  auto same = [](const Riders& a, const Riders& b) {
    bool checksums = a.checksum_count == b.checksum_count;
    for (size_t i = 0; i < kMaxRiddenChecksums; ++i) checksums = checksums && a.checksums[i] == b.checksums[i];
    return a.has_report == b.has_report && a.report == b.report && a.has_reply == b.has_reply &&
           a.reply == b.reply && checksums && a.has_silence == b.has_silence && a.silence == b.silence;
  };
  int fast = 0, accepted = 0, rejected = 0;
  for (int round = 0; round < 200000; ++round) {
    const uint32_t kind = rng() % 8;
    const uint8_t flags = kind < 3 ? 0x02 : kind < 6 ? 0x04 : kind == 6 ? uint8_t(0x06) : uint8_t(rng());
    const Frame start = rng() % 4 == 0 ? Frame(rng() % 16) : Frame(rng() % (1u << 21));
    std::vector<uint8_t> bytes;
    if ((flags & 0x02) != 0) {
      bytes.push_back(uint8_t(rng()));
      varint(bytes, rng() % 2 == 0 ? zigzag(int32_t(rng() % 200) - 100) : value());
      varint(bytes, rng() % 2 == 0 ? zigzag(int32_t(rng() % 20) - 10) : value());
    }
    if ((flags & 0x04) != 0) {
      bytes.push_back(uint8_t(rng()));
      varint(bytes, value());
    }
    for (uint32_t extra = uint32_t(rng() % 6); extra > 0; --extra) bytes.push_back(uint8_t(rng()));  // the payload
    if (bytes.empty()) bytes.push_back(uint8_t(rng()));
    switch (rng() % 8) {
      case 0: bytes[rng() % bytes.size()] = uint8_t(rng()); break;  // garbled
      case 1: bytes.resize(rng() % (bytes.size() + 1)); break;      // cut
      case 2:
        for (uint8_t& b : bytes) b = uint8_t(rng());  // noise
        break;
      case 3: bytes[rng() % bytes.size()] ^= 0x80; break;  // a varint's length changed
      default: break;
    }
    const std::vector<uint8_t> exact(bytes);  // exact size: ASan catches reads past it
    const uint8_t* const begin = exact.data();
    const uint8_t* const end = begin + exact.size();
    Riders general, fast_riders;
    general.checksums[0] = fast_riders.checksums[0] = ChecksumReport{7, 9};  // left as they were
    general.reply = fast_riders.reply = QualityReply{3, 4};
    const uint8_t* general_at = begin;
    const uint8_t* fast_at = begin;
    const bool general_ok = read_usual_riders(&general_at, end, flags, start, &general);
    const bool fast_ok = take_usual_riders(&fast_at, end, flags, start, &fast_riders);
    ASSERT_EQ(fast_ok, general_ok) << "round " << round;
    if (general_ok) {
      ASSERT_EQ(fast_at, general_at) << "round " << round;
      ASSERT_TRUE(same(fast_riders, general)) << "round " << round;
      ++accepted;
      fast += (flags == 0x02 || flags == 0x04);
    } else {
      ++rejected;
    }
  }
  // Both verdicts, on the riders the fast path takes too.
  EXPECT_GT(accepted, 40000);
  EXPECT_GT(rejected, 20000);
  EXPECT_GT(fast, 40000);
}

}  // namespace
}  // namespace retcon::detail
