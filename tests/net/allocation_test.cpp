// Steady-state endpoint traffic allocates nothing. This binary replaces the global
// operator new to count allocations made while `counting` is set.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "net/endpoint_pair.h"
#include "support/match_keys.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
// GCC flags free() of memory from a replaced operator new; here both sides are malloc/free.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace retcon {
namespace {

void expect_steady_state_allocates_nothing(bool match_key) {
  auto ca = test::default_config(1), cb = test::default_config(2);
  for (auto* c : {&ca, &cb}) {
    c->has_match_key = match_key;
    for (uint8_t i = 0; i < 32; ++i) c->match_key[i] = uint8_t(i + 1);
  }
  test::EndpointPair pair(ca, cb, 3);
  LinkProfile link;
  link.latency_us = 30000;
  link.jitter_us = 10000;
  link.loss = 0.1;
  link.duplicate = 0.05;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());

  Frame frame = 0;
  auto run_frames = [&](int frames) {
    uint8_t blob[2] = {0, 0};
    for (int i = 0; i < frames; ++i, ++frame) {
      blob[0] = uint8_t((frame / 20) & 0x0F);  // held for 20 frames, then the next press
      ASSERT_EQ(pair.a().endpoint.send_input(frame, blob), Result::ok);
      ASSERT_EQ(pair.b().endpoint.send_input(frame, blob), Result::ok);
      pair.a().endpoint.send_checksum(frame, uint64_t(frame) * 31);
      pair.a().endpoint.set_local_frame(frame, 0);
      for (int ms = 0; ms < 16; ++ms) pair.step(1000);
      Frame f;
      const uint8_t* p;
      uint64_t c;
      detail::EndpointEvent e;
      for (auto* ep : {&pair.a().endpoint, &pair.b().endpoint}) {
        while (ep->pop_input(&f, &p)) {}
        while (ep->pop_checksum(&f, &c)) {}
        while (ep->pop_event(&e)) {}
      }
    }
  };
  run_frames(600);  // warm-up: rings and simulator queues reach their peak
  counting = true;
  run_frames(2000);
  counting = false;
  EXPECT_EQ(allocations.load(), 0u);
  EXPECT_GE(pair.b().endpoint.last_received_frame(), 2500);
}

TEST(Allocation, EndpointSteadyStateAllocatesNothing) { expect_steady_state_allocates_nothing(false); }

// Sealing and opening (AEAD, keys derived once per connection) allocate nothing either.
TEST(Allocation, AuthenticatedEndpointSteadyStateAllocatesNothing) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  expect_steady_state_allocates_nothing(true);
}

}  // namespace
}  // namespace retcon
