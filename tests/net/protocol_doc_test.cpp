// docs/PROTOCOL.md is a specification: its example bytes must be exactly what the codec
// produces, and must decode to the values the document describes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/datagram_auth.h"
#include "net/wire.h"
#include "support/match_keys.h"
#include "support/protocol_doc.h"

namespace retcon::detail {
namespace {

using test::doc_example;

Handshake doc_handshake(uint16_t owned) {
  return {0x0123456789ABCDEFull, {2, 2, 60, 8}, owned, false, 2, 2, false};
}

constexpr uint32_t kNonceA = 0x11223344;
constexpr uint32_t kNonceB = 0x55667788;

TEST(ProtocolDoc, HandshakeExamplesMatchTheCodec) {
  for (const auto* name : {"handshake_request", "handshake_reply"}) {
    const bool request = std::string(name) == "handshake_request";
    Message m;
    m.header.type = request ? MessageType::handshake_request : MessageType::handshake_reply;
    m.header.nonce = request ? 0x11223344 : 0x55667788;
    m.header.sequence = 0;
    m.handshake = doc_handshake(request ? 0x0001 : 0x0002);
    uint8_t buffer[kMaxDatagramSize];
    const size_t n = encode_message(m, buffer, sizeof buffer);
    const auto doc = doc_example(name);
    EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << name << " is: " << test::doc_hex({buffer, buffer + n});
    Message back;
    ASSERT_EQ(decode_message(doc.data(), doc.size(), &back), DecodeError::ok);
    EXPECT_EQ(back.handshake, m.handshake);
    EXPECT_EQ(back.header.nonce, m.header.nonce);
  }
}

// A rejoin refused (docs/PROTOCOL.md "Rejoin"): B's reply to A's request with the refused flag.
TEST(ProtocolDoc, RefusedHandshakeReplyMatchesTheCodec) {
  Message m;
  m.header.type = MessageType::handshake_reply;
  m.header.nonce = kNonceB;
  m.header.sequence = 0;
  m.handshake = doc_handshake(0x0002);
  m.handshake.refused = true;
  uint8_t buffer[kMaxDatagramSize];
  const size_t n = encode_message(m, buffer, sizeof buffer);
  const auto doc = doc_example("handshake_reply_refused");
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << "handshake_reply_refused is: " << test::doc_hex({buffer, buffer + n});
  Message back;
  ASSERT_EQ(decode_message(doc.data(), doc.size(), &back), DecodeError::ok);
  EXPECT_TRUE(back.handshake.refused);
  EXPECT_EQ(back.handshake, m.handshake);
  EXPECT_EQ(doc.size(), doc_example("handshake_request").size()) << "never larger than the request it answers";
}

TEST(ProtocolDoc, InputsExampleMatchesTheCodec) {
  Header h;
  h.nonce = 0x11223344;
  h.sequence = 7;
  const ConnectStatus status[2] = {{false, 101}, {false, 98}};
  const uint8_t reference[2] = {0, 0};
  const uint8_t blobs[4][2] = {{1, 0}, {1, 0}, {1, 0}, {3, 0}};
  uint8_t buffer[kMaxDatagramSize];
  InputsWriter writer(buffer, sizeof buffer, h, 100, 98, 2, status, 2, reference);
  for (const auto& blob : blobs) ASSERT_TRUE(writer.append(blob));
  const size_t n = writer.finish();
  EXPECT_EQ(connection_checksum_key(kNonceA, kNonceB), 0x757AE85DFE221BA9ull);
  Integrity a_to_b;
  a_to_b.connection_key = connection_checksum_key(kNonceA, kNonceB);
  seal_datagram(buffer, n, a_to_b.connection_key);
  const auto doc = doc_example("inputs");
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << "inputs is: " << test::doc_hex({buffer, buffer + n});

  Message m;
  EXPECT_EQ(decode_message(doc.data(), doc.size(), &m), DecodeError::bad_checksum)
      << "an inputs datagram is checked with the connection key";
  ASSERT_EQ(decode_message(doc.data(), doc.size(), &m, a_to_b), DecodeError::ok);
  EXPECT_EQ(m.header.sequence, 7u);
  EXPECT_EQ(m.header.nonce, 0u) << "a data message carries no nonce";
  EXPECT_EQ(m.inputs.start_frame, 100);
  EXPECT_EQ(m.inputs.ack_frame, 98);
  EXPECT_EQ(m.inputs.count, 4);
  // Connected players' last frames do not travel (only a disconnected player's does).
  EXPECT_EQ(m.inputs.disconnected, 0);
  EXPECT_EQ(m.inputs.status[0], ConnectStatus{});
  EXPECT_EQ(m.inputs.status[1], ConnectStatus{});
  InputsReader reader(m.inputs, reference);
  uint8_t blob[2];
  for (const auto& expected : blobs) {
    ASSERT_TRUE(reader.next(blob));
    EXPECT_EQ(blob[0], expected[0]);
    EXPECT_EQ(blob[1], expected[1]);
  }
}

// Protocol 7: the same frames with a quality report, a reply and a checksum report riding.
TEST(ProtocolDoc, RidersExampleMatchesTheCodec) {
  Header h;
  h.sequence = 8;
  const uint8_t reference[2] = {0, 0};
  const uint8_t blobs[4][2] = {{1, 0}, {1, 0}, {1, 0}, {3, 0}};
  Riders riders;
  riders.has_report = true;
  riders.report = {5, 101, -1};  // report 5: A is at frame 101, one frame behind B (its median)
  riders.has_reply = true;
  riders.reply = {12, 4000};     // B's report 12, held 4 ms
  riders.checksum_count = 1;
  riders.checksums[0] = {90, 0x0123456789ABCDEFull};
  uint8_t buffer[kMaxDatagramSize];
  InputsWriter writer(buffer, sizeof buffer, h, 100, 98, 2, nullptr, 0, reference, &riders);
  for (const auto& blob : blobs) ASSERT_TRUE(writer.append(blob));
  const size_t n = writer.finish();
  Integrity a_to_b;
  a_to_b.connection_key = connection_checksum_key(kNonceA, kNonceB);
  seal_datagram(buffer, n, a_to_b.connection_key);
  const auto doc = doc_example("inputs_with_riders");
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << "inputs_with_riders is: " << test::doc_hex({buffer, buffer + n});
  Message m;
  ASSERT_EQ(decode_message(doc.data(), doc.size(), &m, a_to_b), DecodeError::ok);
  EXPECT_EQ(m.inputs.start_frame, 100);
  EXPECT_EQ(m.inputs.count, 4);
  EXPECT_EQ(m.inputs.blob_size, 2);
  ASSERT_TRUE(m.inputs.riders.has_report && m.inputs.riders.has_reply);
  EXPECT_EQ(m.inputs.riders.report, riders.report);
  EXPECT_EQ(m.inputs.riders.reply, riders.reply);
  ASSERT_EQ(m.inputs.riders.checksum_count, 1);
  EXPECT_EQ(m.inputs.riders.checksums[0], riders.checksums[0]);
}

// The same frames after a blackout, with A's silence note: it heard nothing from B for 812 ms,
// until 17 ms before this datagram left.
TEST(ProtocolDoc, SilenceNoteExampleMatchesTheCodec) {
  Header h;
  h.sequence = 9;
  const uint8_t reference[2] = {0, 0};
  const uint8_t blobs[4][2] = {{1, 0}, {1, 0}, {1, 0}, {3, 0}};
  Riders riders;
  riders.has_silence = true;
  riders.silence = {812, 17};
  uint8_t buffer[kMaxDatagramSize];
  InputsWriter writer(buffer, sizeof buffer, h, 100, 98, 2, nullptr, 0, reference, &riders);
  for (const auto& blob : blobs) ASSERT_TRUE(writer.append(blob));
  const size_t n = writer.finish();
  Integrity a_to_b;
  a_to_b.connection_key = connection_checksum_key(kNonceA, kNonceB);
  seal_datagram(buffer, n, a_to_b.connection_key);
  const auto doc = doc_example("inputs_with_silence");
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << "inputs_with_silence is: " << test::doc_hex({buffer, buffer + n});
  Message m;
  ASSERT_EQ(decode_message(doc.data(), doc.size(), &m, a_to_b), DecodeError::ok);
  EXPECT_EQ(m.inputs.start_frame, 100);
  EXPECT_EQ(m.inputs.count, 4);
  EXPECT_FALSE(m.inputs.riders.has_report || m.inputs.riders.has_reply || m.inputs.riders.checksum_count != 0);
  ASSERT_TRUE(m.inputs.riders.has_silence);
  EXPECT_EQ(m.inputs.riders.silence, riders.silence);
}

TEST(ProtocolDoc, SealedExamplesMatchTheAead) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  uint8_t key[kMatchKeySize];
  for (size_t i = 0; i < kMatchKeySize; ++i) key[i] = uint8_t(i);
  for (const bool aes : {false, true}) {
    if (aes && !aes256gcm_available()) {
      GTEST_LOG_(INFO) << "no AES-256-GCM on this CPU: its example is not checked";
      continue;
    }
    DatagramAuth a, b;
    ASSERT_TRUE(a.configure(key, aes));
    ASSERT_TRUE(b.configure(key, aes));
    a.bind(kNonceA, kNonceB, b.offers_aes256gcm());
    b.bind(kNonceB, kNonceA, a.offers_aes256gcm());
    EXPECT_EQ(a.algorithm(), aes ? AeadAlgorithm::aes256gcm : AeadAlgorithm::chacha20poly1305_ietf);
    Message m;
    m.header.type = MessageType::input_ack;
    m.header.nonce = kNonceA;
    m.header.sequence = 9;
    m.ack_frame = 98;
    uint8_t buffer[kMaxDatagramSize];
    Xoshiro256 rng(1);
    const size_t n = a.seal(buffer, encode_message(m, buffer, sizeof buffer), sizeof buffer, rng, 9);
    const auto doc = doc_example(aes ? "sealed_input_ack_aes256gcm"
                                     : "sealed_input_ack_chacha20poly1305");
    EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc)
        << (aes ? "sealed_input_ack_aes256gcm" : "sealed_input_ack_chacha20poly1305")
        << " is: " << test::doc_hex({buffer, buffer + n});
    Message back;
    ASSERT_EQ(b.open(doc.data(), doc.size(), &back), DecodeError::ok);
    EXPECT_EQ(back.ack_frame, 98);
    EXPECT_EQ(back.header.sequence, 9u);
  }
}

}  // namespace
}  // namespace retcon::detail
