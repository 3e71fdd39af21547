// Soak: random link conditions, blob sizes and seeds; every run must deliver every input
// intact and in order. CI runs a short version; a person runs a long one with
//   RETCON_SOAK_ITERATIONS=500 RETCON_SOAK_SEED=123 build/tests/net_soak_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "net/endpoint_pair.h"

namespace retcon {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

TEST(Soak, RandomConditionsDeliverEveryInput) {
  const uint64_t iterations = env_or("RETCON_SOAK_ITERATIONS", 12);
  const uint64_t base_seed = env_or("RETCON_SOAK_SEED", 1);
  for (uint64_t it = 0; it < iterations; ++it) {
    const uint64_t seed = base_seed + it;
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto uniform = [&](double lo, double hi) {
      return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
    };
    auto ca = test::default_config(seed * 2), cb = test::default_config(seed * 2 + 1);
    const uint32_t players = 1 + uint32_t(rng() % 4), input = 1 + uint32_t(rng() % 64);
    ca.shape = cb.shape = {players * 2, input, 60};
    ca.send_blob_size = cb.receive_blob_size = uint16_t(players * input);
    cb.send_blob_size = ca.receive_blob_size = uint16_t(players * input);
    ca.disconnect_timeout_us = cb.disconnect_timeout_us = 0;  // bad links may go silent long
    test::EndpointPair pair(ca, cb, seed);
    LinkProfile link;
    link.latency_us = rng() % 150000;
    link.jitter_us = rng() % 60000;
    link.loss = uniform(0.0, 0.5);
    link.duplicate = uniform(0.0, 0.3);
    link.reorder = uniform(0.0, 0.3);
    if (rng() % 3 == 0) link.bandwidth_bytes_per_s = 4000 + rng() % 40000;
    if (rng() % 3 == 0) {
      link.blackout_period_us = 2000000 + rng() % 3000000;
      link.blackout_duration_us = rng() % 1000000;
    }
    pair.set_link(link);
    pair.start();
    ASSERT_TRUE(pair.run_handshake(120000000));

    const Frame frames = 600;
    const size_t blob_size = ca.send_blob_size;
    auto blob_for = [&](int side, Frame f, uint8_t* out) {
      // Mostly held inputs with occasional changes, plus noise in some runs.
      for (size_t i = 0; i < blob_size; ++i) {
        out[i] = uint8_t((f / (5 + int(i % 7))) * 17 + side * 3 + int(i) + (seed % 2 ? f * 7 : 0));
      }
    };
    std::vector<uint8_t> blob(blob_size), want(blob_size);
    Frame sent = 0, got[2] = {0, 0};
    uint64_t next_frame_at = pair.now;
    const uint64_t deadline = pair.now + 600000000;
    detail::Endpoint* eps[2] = {&pair.a().endpoint, &pair.b().endpoint};
    while ((got[0] < frames || got[1] < frames) && pair.now < deadline) {
      if (sent < frames && pair.now >= next_frame_at) {
        for (int side = 0; side < 2; ++side) {
          blob_for(side, sent, blob.data());
          ASSERT_EQ(eps[side]->send_input(sent, blob.data()), Result::ok);
        }
        ++sent;
        next_frame_at += 16667;
      }
      pair.step(1000 + rng() % 4000);
      for (int side = 0; side < 2; ++side) {
        Frame f;
        const uint8_t* p;
        while (eps[side]->pop_input(&f, &p)) {
          ASSERT_EQ(f, got[side]);
          blob_for(1 - side, f, want.data());
          ASSERT_EQ(0, std::memcmp(p, want.data(), blob_size)) << "frame " << f;
          ++got[side];
        }
      }
    }
    EXPECT_EQ(got[0], frames);
    EXPECT_EQ(got[1], frames);
    for (auto* e : eps) {
      const auto s = e->stats();
      EXPECT_EQ(s.dropped[size_t(detail::DropReason::malformed)], 0u);
      EXPECT_EQ(s.dropped[size_t(detail::DropReason::bad_checksum)], 0u);
      EXPECT_EQ(s.oversized_blobs, 0u);
    }
  }
}

}  // namespace
}  // namespace retcon
