// Measures (and logs, without a threshold) the bytes per second one peer sends at 60 fps
// with 2-byte inputs that change like a player's: buttons held for a while, then pressed.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "net/endpoint_pair.h"

namespace retcon {
namespace {

TEST(WireBytes, PayloadBytesPerSecondAt60Fps) {
  test::EndpointPair pair(test::default_config(1), test::default_config(2), 4);
  LinkProfile link;
  link.latency_us = 40000;  // an 80 ms round trip: ~5 frames in flight each way
  link.jitter_us = 5000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());

  std::mt19937 rng(17);
  uint16_t buttons[2] = {0, 0};
  int hold[2] = {0, 0};
  const int seconds = 60;
  const auto before = pair.a().endpoint.stats();
  const uint64_t start = pair.now;
  for (Frame f = 0; f < 60 * seconds; ++f) {
    for (int side = 0; side < 2; ++side) {
      if (--hold[side] <= 0) {
        // A press or release of one of 12 buttons, held 3..40 frames; sometimes a d-pad roll.
        buttons[side] = uint16_t(buttons[side] ^ (1u << (rng() % 12)));
        hold[side] = 3 + int(rng() % 38);
      }
      const uint8_t blob[2] = {uint8_t(buttons[side]), uint8_t(buttons[side] >> 8)};
      auto& ep = side == 0 ? pair.a().endpoint : pair.b().endpoint;
      ASSERT_EQ(ep.send_input(f, blob), Result::ok);
    }
    pair.step(16667);  // one poll per frame, as a game loop would
    Frame got;
    const uint8_t* p;
    while (pair.a().endpoint.pop_input(&got, &p)) {}
    while (pair.b().endpoint.pop_input(&got, &p)) {}
  }
  const auto after = pair.a().endpoint.stats();
  const double elapsed_s = double(pair.now - start) / 1e6;
  const double payload = double(after.bytes_sent - before.bytes_sent) / elapsed_s;
  const double datagrams = double(after.datagrams_sent - before.datagrams_sent) / elapsed_s;
  // UDP over IPv4 adds 28 bytes of headers per datagram.
  std::printf("[ wire bytes ] 60 fps, 2-byte inputs, 80 ms RTT: %.0f payload B/s, "
              "%.1f datagrams/s, %.0f B/s with UDP/IPv4 headers\n",
              payload, datagrams, payload + datagrams * 28);
  RecordProperty("payload_bytes_per_second", int(payload));
  for (int i = 0; i < 30; ++i) pair.step(16667);  // let the last frames land
  EXPECT_EQ(pair.b().endpoint.last_received_frame(), 60 * seconds - 1);
}

}  // namespace
}  // namespace retcon
