// docs/PROTOCOL.md's reliable-channel examples are exactly what the channel produces.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/reliable_channel.h"
#include "session/decision_exchange.h"
#include "session/delay_change.h"
#include "session/desync_states.h"
#include "support/protocol_doc.h"

namespace retcon::detail {
namespace {

using test::doc_example;

std::string hex(const std::vector<uint8_t>& v) {
  std::string s;
  char b[4];
  for (uint8_t x : v) {
    std::snprintf(b, sizeof b, "%02x ", x);
    s += b;
  }
  return s;
}

struct Capture final : ChannelOutput {
  std::vector<std::pair<MessageType, std::vector<uint8_t>>> sent;
  bool send(MessageType type, const uint8_t* body, size_t size) override {
    sent.emplace_back(type, std::vector<uint8_t>(body, body + size));
    return true;
  }
};

TEST(ChannelDoc, ExamplesMatchTheCodec) {
  ReliableChannel a, b;
  ChannelConfig c;
  c.max_blob_size = 64;
  ASSERT_EQ(a.init(c), Result::ok);
  ASSERT_EQ(b.init(c), Result::ok);
  uint8_t buffer[64];
  b.set_receive_buffer(buffer, sizeof buffer);
  const uint8_t request[1] = {0x01};  // a state request on the state-transfer stream
  ASSERT_EQ(a.send_message(ChannelStream::state_transfer, request, sizeof request), Result::ok);
  const uint8_t hello[5] = {'h', 'e', 'l', 'l', 'o'};
  ASSERT_EQ(a.send_blob(1, 600, hello, sizeof hello), Result::ok);
  Capture from_a;
  a.poll(1000, 0, from_a);
  ASSERT_EQ(from_a.sent.size(), 2u);
  EXPECT_EQ(from_a.sent[0].first, MessageType::channel_data);
  EXPECT_EQ(from_a.sent[0].second, doc_example("channel_message")) << hex(from_a.sent[0].second);
  EXPECT_EQ(from_a.sent[1].second, doc_example("channel_chunk")) << hex(from_a.sent[1].second);
  for (const auto& d : from_a.sent) b.on_datagram(d.first, d.second.data(), d.second.size(), 2000);
  Capture from_b;
  b.poll(3000, 0, from_b);
  ASSERT_EQ(from_b.sent.size(), 1u);
  EXPECT_EQ(from_b.sent[0].first, MessageType::channel_ack);
  EXPECT_EQ(from_b.sent[0].second, doc_example("channel_ack")) << hex(from_b.sent[0].second);
}

TEST(ChannelDoc, DecisionExampleMatchesTheCodec) {
  const uint8_t end[3] = {'e', 'n', 'd'};
  uint8_t body[kMaxChannelMessage];
  const size_t n = encode_decision(body, sizeof body, 0, 600, end, sizeof end);
  const std::vector<uint8_t> encoded(body, body + n);
  const std::vector<uint8_t> doc = doc_example("decision");
  EXPECT_EQ(encoded, doc) << hex(encoded);
  PlayerIndex sender = -1;
  Frame frame = kNullFrame;
  const uint8_t* bytes = nullptr;
  size_t length = 0;
  ASSERT_TRUE(decode_decision(doc.data(), doc.size(), &sender, &frame, &bytes, &length));
  EXPECT_EQ(sender, 0);
  EXPECT_EQ(frame, 600);
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + length), std::vector<uint8_t>(end, end + 3));
}

TEST(ChannelDoc, DelayChangeExampleMatchesTheCodec) {
  DelayChange c;
  c.sender = 0;
  c.frame = 600;
  c.delay = 3;
  c.median_rtt_us = 100000;
  c.peers = 1;
  c.rtt_ms[1] = 100;
  uint8_t body[kMaxChannelMessage];
  const size_t n = encode_delay_change(c, body, sizeof body);
  ASSERT_EQ(n, kDelayChangeSize);
  const std::vector<uint8_t> encoded(body, body + n);
  const std::vector<uint8_t> doc = doc_example("delay_change");
  EXPECT_EQ(encoded, doc) << hex(encoded);
  DelayChange back;
  ASSERT_TRUE(decode_delay_change(doc.data(), doc.size(), &back));
  EXPECT_EQ(back.frame, 600);
  EXPECT_EQ(back.delay, 3);
  EXPECT_EQ(back.rtt_ms[1], 100);
  std::vector<uint8_t> bad = doc;
  bad[6] = kMaxInputDelay + 1;
  EXPECT_FALSE(decode_delay_change(bad.data(), bad.size(), &back));
  EXPECT_FALSE(decode_delay_change(doc.data(), doc.size() - 1, &back));
}

TEST(ChannelDoc, DesyncNoticeExampleMatchesTheCodec) {
  DesyncStateNotice n;
  n.frame = 100;
  n.size = 122;
  n.sum = 0x0123456789abcdefull;
  uint8_t body[kDesyncNoticeSize];
  const size_t size = encode_desync_notice(n, body);
  ASSERT_EQ(size, kDesyncNoticeSize);
  const std::vector<uint8_t> encoded(body, body + size);
  const std::vector<uint8_t> doc = doc_example("desync_notice");
  EXPECT_EQ(encoded, doc) << hex(encoded);
  DesyncStateNotice back;
  ASSERT_TRUE(decode_desync_notice(doc.data(), doc.size(), &back));
  EXPECT_EQ(back.frame, 100);
  EXPECT_EQ(back.size, 122u);
  EXPECT_EQ(back.sum, n.sum);
  EXPECT_EQ(back.digest, 0u);
  // What no peer of ours sends: another kind, a cut or long body, a negative frame, no state.
  std::vector<uint8_t> bad = doc;
  bad[0] = 2;
  EXPECT_FALSE(decode_desync_notice(bad.data(), bad.size(), &back));
  EXPECT_FALSE(decode_desync_notice(doc.data(), doc.size() - 1, &back));
  bad = doc;
  bad.push_back(0);
  EXPECT_FALSE(decode_desync_notice(bad.data(), bad.size(), &back));
  bad = doc;
  bad[4] = 0xff;
  EXPECT_FALSE(decode_desync_notice(bad.data(), bad.size(), &back));
  bad = doc;
  bad[5] = 0;
  EXPECT_FALSE(decode_desync_notice(bad.data(), bad.size(), &back));
}

}  // namespace
}  // namespace retcon::detail
