// The reliable channel through real Endpoints: its datagrams are numbered, checked and (with a
// match key) sealed by DatagramAuth like every other message, over a lossy, duplicating,
// reordering simulated link on the virtual clock. Inputs keep flowing beside a transfer.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "net/datagram_auth.h"
#include "net/endpoint.h"
#include "net/endpoint_pair.h"
#include "net/reliable_channel.h"

namespace retcon {
namespace {

using detail::ChannelConfig;
using detail::ChannelEvent;
using detail::ChannelEventType;
using detail::ChannelOutput;
using detail::ChannelSink;
using detail::ChannelStream;
using detail::DropReason;
using detail::Endpoint;
using detail::EndpointConfig;
using detail::MessageType;
using detail::ReliableChannel;
using test::EndpointPair;
using test::default_config;

constexpr uint64_t kFrameUs = 16667;

struct ChannelSide final : ChannelSink, ChannelOutput {
  ReliableChannel channel;
  Endpoint* endpoint = nullptr;
  Transport* transport = nullptr;
  PeerAddress to;
  void on_channel(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) override {
    channel.on_datagram(type, body, size, now_us);
  }
  bool send(MessageType type, const uint8_t* body, size_t size) override {
    return endpoint->send_channel(type, body, size, *transport, to) == Result::ok;
  }
};

EndpointConfig keyed(uint64_t seed, bool key) {
  EndpointConfig c = default_config(seed);
  if (key && detail::match_keys_supported()) {
    c.has_match_key = true;
    for (size_t i = 0; i < sizeof c.match_key; ++i) c.match_key[i] = uint8_t(i * 7 + 1);
  }
  return c;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = uint8_t(rng());
  return v;
}

uint64_t dropped(const Endpoint& e, DropReason r) { return e.stats().dropped[size_t(r)]; }

class ChannelOverEndpoints : public ::testing::TestWithParam<bool> {};

// A 256 KiB state and 100 messages on two streams, while both sides keep streaming inputs every
// frame: everything arrives whole, in order and once, and the inputs never stall behind it.
TEST_P(ChannelOverEndpoints, TransfersBesideTheInputsUnderLossDuplicationAndReordering) {
  const bool key = GetParam();
  if (key && !detail::match_keys_supported()) GTEST_SKIP() << "no match keys in this build";
  EndpointPair pair(keyed(1, key), keyed(2, key), 7);
  ASSERT_EQ(pair.init_a, Result::ok);
  ASSERT_EQ(pair.init_b, Result::ok);
  LinkProfile bad;
  bad.latency_us = 40000;
  bad.jitter_us = 20000;
  bad.loss = 0.05;
  bad.duplicate = 0.05;
  bad.reorder = 0.05;
  pair.set_link(bad);
  ChannelSide sides[2];
  std::vector<uint8_t> buffer(256 * 1024);
  EndpointPair::Side* ends[2] = {&pair.a(), &pair.b()};
  for (int i = 0; i < 2; ++i) {
    ChannelConfig c;
    c.max_blob_size = buffer.size();
    ASSERT_EQ(sides[i].channel.init(c), Result::ok);
    sides[i].endpoint = &ends[i]->endpoint;
    sides[i].transport = ends[i]->recorder.get();
    sides[i].to = ends[i]->remote;
    ends[i]->endpoint.set_channel_sink(&sides[i]);
  }
  sides[1].channel.set_receive_buffer(buffer.data(), buffer.size());
  // Not running yet: the endpoint refuses channel bodies.
  const uint8_t one = 1;
  EXPECT_EQ(pair.a().endpoint.send_channel(MessageType::channel_data, &one, 1, *sides[0].transport, sides[0].to),
            Result::wrong_state);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  EXPECT_EQ(pair.a().endpoint.send_channel(MessageType::inputs, &one, 1, *sides[0].transport, sides[0].to),
            Result::invalid_argument);
  EXPECT_EQ(pair.a().endpoint.send_channel(MessageType::channel_data, nullptr, 1, *sides[0].transport, sides[0].to),
            Result::invalid_argument);
  std::vector<uint8_t> too_big(pair.a().endpoint.max_channel_body() + 1, 1);
  EXPECT_EQ(pair.a().endpoint.send_channel(MessageType::channel_data, too_big.data(), too_big.size(),
                                           *sides[0].transport, sides[0].to),
            Result::invalid_argument);

  const std::vector<uint8_t> blob = random_bytes(buffer.size(), 3);
  ASSERT_EQ(sides[0].channel.send_blob(2, 900, blob.data(), blob.size()), Result::ok);
  uint32_t sent = 0, received = 0;
  Frame next_input = 0, popped[2] = {-1, -1};
  bool blob_done = false;
  uint64_t longest_input_gap_us = 0, last_input_at = pair.now;
  for (int tick = 0; tick < 60 * 30 && !(blob_done && received == 100); ++tick) {
    for (int i = 0; i < 2; ++i) {
      const uint8_t input[2] = {uint8_t(next_input), uint8_t(i)};
      ASSERT_EQ(ends[i]->endpoint.send_input(next_input, input), Result::ok);
      ends[i]->endpoint.set_local_frame(next_input, 0);
    }
    ++next_input;
    while (sent < 100 && sides[0].channel.messages_free() > 0) {
      uint8_t m[3] = {uint8_t(sent), uint8_t(sent >> 8), 0xee};
      ASSERT_EQ(sides[0].channel.send_message(sent % 2 ? ChannelStream::decisions : ChannelStream::state_transfer, m,
                                              1 + sent % 3),
                Result::ok);
      ++sent;
    }
    pair.step(kFrameUs);  // receive, then the endpoints' own sends (inputs first)
    for (int i = 0; i < 2; ++i) sides[i].channel.poll(pair.now, ends[i]->endpoint.ping_us(), sides[i]);
    for (int i = 0; i < 2; ++i) {
      Frame f;
      const uint8_t* got;
      while (ends[i]->endpoint.pop_input(&f, &got)) {
        ASSERT_EQ(f, popped[i] + 1);
        ASSERT_EQ(got[0], uint8_t(f));
        popped[i] = f;
        if (i == 1) {
          longest_input_gap_us = std::max(longest_input_gap_us, pair.now - last_input_at);
          last_input_at = pair.now;
        }
      }
    }
    ChannelStream stream;
    uint8_t body[detail::kMaxChannelMessage];
    size_t size = 0;
    while (sides[1].channel.pop_message(&stream, body, &size)) {
      ASSERT_EQ(size, 1 + received % 3);
      ASSERT_EQ(body[0], uint8_t(received));
      ASSERT_EQ(stream, received % 2 ? ChannelStream::decisions : ChannelStream::state_transfer);
      ++received;
    }
    ChannelEvent ev;
    while (sides[1].channel.pop_event(&ev)) {
      ASSERT_EQ(ev.type, ChannelEventType::blob_received);
      EXPECT_EQ(ev.tag, 2u);
      EXPECT_EQ(ev.frame, 900);
      blob_done = true;
    }
  }
  ASSERT_TRUE(blob_done);
  EXPECT_EQ(received, 100u);
  const uint8_t* data = nullptr;
  size_t size = 0;
  ASSERT_TRUE(sides[1].channel.received_blob(nullptr, nullptr, &data, &size));
  ASSERT_EQ(size, blob.size());
  EXPECT_EQ(std::memcmp(data, blob.data(), size), 0);
  // The inputs kept flowing: no gap beyond what loss and jitter explain.
  EXPECT_LT(longest_input_gap_us, 250000u);
  EXPECT_GT(popped[1], next_input - 30);
  EXPECT_GT(dropped(pair.b().endpoint, DropReason::replayed), 0u) << "duplicates were dropped by the endpoint";
  EXPECT_EQ(dropped(pair.b().endpoint, DropReason::unknown_type), 0u);
  EXPECT_EQ(sides[1].channel.stats().dropped, 0u);
}

// A channel datagram changed on the way (one byte of its body) never reaches the channel: the
// endpoint's checksum or, with a match key, the AEAD refuses it.
TEST_P(ChannelOverEndpoints, TamperedChannelDatagramsAreDroppedByTheEndpoint) {
  const bool key = GetParam();
  if (key && !detail::match_keys_supported()) GTEST_SKIP() << "no match keys in this build";
  EndpointPair pair(keyed(3, key), keyed(4, key), 9);
  ChannelSide sides[2];
  EndpointPair::Side* ends[2] = {&pair.a(), &pair.b()};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(sides[i].channel.init(ChannelConfig{}), Result::ok);
    sides[i].endpoint = &ends[i]->endpoint;
    sides[i].transport = ends[i]->recorder.get();
    sides[i].to = ends[i]->remote;
    ends[i]->endpoint.set_channel_sink(&sides[i]);
  }
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  pair.a().recorder->garble = true;  // every datagram from A is followed by a garbled copy
  uint32_t received = 0;
  for (uint32_t m = 0; m < 20; ++m) {
    const uint8_t body[4] = {uint8_t(m), 1, 2, 3};
    ASSERT_EQ(sides[0].channel.send_message(ChannelStream::decisions, body, sizeof body), Result::ok);
    for (int t = 0; t < 3; ++t) {
      pair.step(kFrameUs);
      for (int i = 0; i < 2; ++i) sides[i].channel.poll(pair.now, ends[i]->endpoint.ping_us(), sides[i]);
      ChannelStream stream;
      uint8_t got[detail::kMaxChannelMessage];
      size_t size = 0;
      while (sides[1].channel.pop_message(&stream, got, &size)) {
        ASSERT_EQ(size, sizeof body);
        ASSERT_EQ(got[0], uint8_t(received));
        ASSERT_EQ(std::memcmp(got + 1, body + 1, 3), 0);
        ++received;
      }
    }
  }
  EXPECT_EQ(received, 20u);
  EXPECT_GT(pair.a().recorder->garbled, 20u);
  const uint64_t refused = dropped(pair.b().endpoint, DropReason::bad_checksum) +
                           dropped(pair.b().endpoint, DropReason::malformed) +
                           dropped(pair.b().endpoint, DropReason::bad_nonce) +
                           dropped(pair.b().endpoint, DropReason::bad_magic) +
                           dropped(pair.b().endpoint, DropReason::truncated) +
                           dropped(pair.b().endpoint, DropReason::bad_version) +
                           dropped(pair.b().endpoint, DropReason::unknown_type);
  EXPECT_GT(refused, 20u);
  EXPECT_EQ(sides[1].channel.stats().dropped, 0u) << "nothing garbled got through to the channel";
  EXPECT_EQ(sides[1].channel.stats().messages_received, 20u);
}

// Without a sink (a session not using the channel) its datagrams are dropped as unknown_type.
TEST(ChannelOverEndpoints, WithoutASinkChannelDatagramsAreUnknown) {
  EndpointPair pair(default_config(5), default_config(6));
  ChannelSide a;
  ASSERT_EQ(a.channel.init(ChannelConfig{}), Result::ok);
  a.endpoint = &pair.a().endpoint;
  a.transport = pair.a().recorder.get();
  a.to = pair.a().remote;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  const uint8_t body[1] = {9};
  ASSERT_EQ(a.channel.send_message(ChannelStream::decisions, body, 1), Result::ok);
  a.channel.poll(pair.now, 0, a);
  pair.step(100000);
  EXPECT_EQ(dropped(pair.b().endpoint, DropReason::unknown_type), 1u);
}

INSTANTIATE_TEST_SUITE_P(Keys, ChannelOverEndpoints, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param_info) { return param_info.param ? "match_key" : "no_key"; });

}  // namespace
}  // namespace retcon
