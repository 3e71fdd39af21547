// docs/PROTOCOL.md is a specification: its example bytes must be exactly what the codec
// produces, and must decode to the values the document describes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/wire.h"

#ifndef RETCON_SOURCE_DIR
#error "RETCON_SOURCE_DIR must point at the source tree"
#endif

namespace retcon::detail {
namespace {

// The hex bytes of the ```text block following "<!-- example: NAME -->".
std::vector<uint8_t> doc_example(const std::string& name) {
  std::ifstream file(std::string(RETCON_SOURCE_DIR) + "/docs/PROTOCOL.md");
  EXPECT_TRUE(file.good()) << "docs/PROTOCOL.md not found";
  std::stringstream all;
  all << file.rdbuf();
  const std::string text = all.str();
  const size_t marker = text.find("<!-- example: " + name + " -->");
  EXPECT_NE(marker, std::string::npos) << "no example " << name;
  if (marker == std::string::npos) return {};
  const size_t open = text.find("```text\n", marker);
  const size_t close = text.find("```", open + 8);
  std::istringstream hex(text.substr(open + 8, close - open - 8));
  std::vector<uint8_t> bytes;
  std::string token;
  while (hex >> token) bytes.push_back(uint8_t(std::strtoul(token.c_str(), nullptr, 16)));
  return bytes;
}

Handshake doc_handshake(uint16_t owned) { return {0xCAFEBABE, {2, 2, 60}, owned, false, 2, 2}; }

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
    EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc) << name;
    Message back;
    ASSERT_EQ(decode_message(doc.data(), doc.size(), &back), DecodeError::ok);
    EXPECT_EQ(back.handshake, m.handshake);
    EXPECT_EQ(back.header.nonce, m.header.nonce);
  }
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
  const auto doc = doc_example("inputs");
  EXPECT_EQ(std::vector<uint8_t>(buffer, buffer + n), doc);

  Message m;
  ASSERT_EQ(decode_message(doc.data(), doc.size(), &m), DecodeError::ok);
  EXPECT_EQ(m.inputs.start_frame, 100);
  EXPECT_EQ(m.inputs.ack_frame, 98);
  EXPECT_EQ(m.inputs.count, 4);
  EXPECT_EQ(m.inputs.status[0].last_frame, 101);
  EXPECT_EQ(m.inputs.status[1].last_frame, 98);
  InputsReader reader(m.inputs, reference);
  uint8_t blob[2];
  for (const auto& expected : blobs) {
    ASSERT_TRUE(reader.next(blob));
    EXPECT_EQ(blob[0], expected[0]);
    EXPECT_EQ(blob[1], expected[1]);
  }
}

}  // namespace
}  // namespace retcon::detail
