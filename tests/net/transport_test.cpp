// PeerAddress, CallbackTransport, InMemoryNetwork and NetworkSimulator.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <unordered_set>
#include <vector>

#include "net/endpoint_pair.h"
#include "net/same_address.h"
#include "retcon/transport.h"

namespace retcon {
namespace {

TEST(PeerAddress, EqualityAndHashIgnoreUnusedBytes) {
  PeerAddress a = make_memory_address(7), b = make_memory_address(7);
  b.bytes[20] = 99;  // beyond size: not part of the address
  EXPECT_EQ(a, b);
  EXPECT_EQ(hash_peer_address(a), hash_peer_address(b));
  EXPECT_NE(a, make_memory_address(8));
  std::unordered_set<PeerAddress, PeerAddressHash> set{a, b, make_memory_address(8)};
  EXPECT_EQ(set.size(), 2u);
  PeerAddress c;
  const uint8_t steam_id[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(PeerAddress::from_bytes(steam_id, 8, &c));
  EXPECT_EQ(c.size, 8u);
  uint8_t too_long[33] = {};
  EXPECT_FALSE(PeerAddress::from_bytes(too_long, 33, &c));
  EXPECT_EQ(c.size, 0u);
  PeerAddress corrupt = a;
  corrupt.size = 1000;  // never read past the array
  EXPECT_FALSE(corrupt == corrupt);
  (void)hash_peer_address(corrupt);
}

// The session's inline lookup (net/same_address.h: same_address, and AddressProbe, the sender's
// part worked out once) decides as operator== does, for every size: a difference at any byte
// inside the size counts, bytes past it do not, a corrupt size matches nothing. (A wrong mask
// would route a datagram to another peer, or drop it as a stranger's.)
TEST(PeerAddress, InlineComparisonAgreesWithEquality) {
  for (uint32_t size = 0; size <= PeerAddress::kCapacity; ++size) {
    PeerAddress a;
    a.size = size;
    for (uint32_t i = 0; i < PeerAddress::kCapacity; ++i) a.bytes[i] = uint8_t(17 * i + size);
    PeerAddress b = a;
    for (uint32_t i = size; i < PeerAddress::kCapacity; ++i) b.bytes[i] = uint8_t(~b.bytes[i]);  // past the size
    EXPECT_TRUE(a == b) << size;
    EXPECT_TRUE(detail::same_address(a, b)) << size;
    EXPECT_TRUE(detail::AddressProbe(b).matches(a)) << size;
    EXPECT_TRUE(detail::AddressProbe(a).matches(b)) << size;
    for (uint32_t i = 0; i < size; ++i) {
      PeerAddress c = a;
      c.bytes[i] ^= 0x40;
      EXPECT_FALSE(a == c) << size << " " << i;
      EXPECT_FALSE(detail::same_address(a, c)) << size << " " << i;
      EXPECT_FALSE(detail::AddressProbe(c).matches(a)) << size << " " << i;
      EXPECT_FALSE(detail::AddressProbe(a).matches(c)) << size << " " << i;
    }
    if (size > 0) {
      PeerAddress shorter = a;
      shorter.size = size - 1;
      EXPECT_FALSE(detail::same_address(a, shorter)) << size;
      EXPECT_FALSE(detail::AddressProbe(shorter).matches(a)) << size;
      EXPECT_FALSE(detail::AddressProbe(a).matches(shorter)) << size;
    }
  }
  PeerAddress corrupt = make_memory_address(3);
  corrupt.size = 1000;
  EXPECT_FALSE(detail::same_address(corrupt, corrupt));
  EXPECT_FALSE(detail::AddressProbe(corrupt).matches(corrupt));
  // Random pairs: sizes up to past the capacity, few byte values (so that many agree), garbage
  // past the size; the probe of either against the other decides as operator==.
  std::mt19937 rng(14);
  uint64_t equal = 0;
  for (int round = 0; round < 200000; ++round) {
    PeerAddress x, y;
    x.size = uint32_t(rng() % 4 == 0 ? rng() % 40 : rng() % 10);
    y.size = rng() % 3 == 0 ? uint32_t(rng() % 40) : x.size;
    for (uint32_t i = 0; i < PeerAddress::kCapacity; ++i) {
      x.bytes[i] = uint8_t(rng() % 2);
      y.bytes[i] = rng() % 8 == 0 ? uint8_t(rng() % 2) : x.bytes[i];
    }
    const bool same = x == y;
    equal += same;
    EXPECT_EQ(detail::AddressProbe(x).matches(y), same) << x.size << " " << y.size;
    EXPECT_EQ(detail::AddressProbe(y).matches(x), same) << x.size << " " << y.size;
  }
  EXPECT_GT(equal, 10000u);
}

TEST(PeerAddress, IpHelpers) {
  PeerAddress v4, v6;
  ASSERT_EQ(make_ip_address("127.0.0.1", 5000, &v4), Result::ok);
  ASSERT_EQ(make_ip_address("::1", 6000, &v6), Result::ok);
  EXPECT_EQ(ip_address_port(v4), 5000);
  EXPECT_EQ(ip_address_port(v6), 6000);
  EXPECT_EQ(ip_address_port(make_memory_address(1)), 0);
  char text[64];
  ASSERT_GT(format_ip_address(v4, text, sizeof text), 0u);
  EXPECT_STREQ(text, "127.0.0.1:5000");
  ASSERT_GT(format_ip_address(v6, text, sizeof text), 0u);
  EXPECT_STREQ(text, "[::1]:6000");
  char tiny[5];
  EXPECT_EQ(format_ip_address(v4, tiny, sizeof tiny), 4u);
  EXPECT_STREQ(tiny, "127.");
  PeerAddress bad;
  EXPECT_EQ(make_ip_address("not an address", 1, &bad), Result::invalid_argument);
  EXPECT_EQ(make_ip_address(nullptr, 1, &bad), Result::invalid_argument);
}

// A user transport, as the C API would offer it: a queue behind function pointers.
struct FakeUserTransport {
  struct Datagram {
    std::vector<uint8_t> addr, data;
  };
  std::deque<Datagram> inbox;
  std::vector<Datagram> sent;
  int32_t misbehave = 0;  // 1: report an address too long; 2: a length too long; 3: error

  static int32_t send(void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data,
                      size_t length) {
    auto* self = static_cast<FakeUserTransport*>(user);
    self->sent.push_back({{addr, addr + addr_len}, {data, data + length}});
    return 0;
  }
  static int32_t receive(void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer,
                         size_t capacity, size_t* length) {
    auto* self = static_cast<FakeUserTransport*>(user);
    if (self->misbehave == 3) return -1;
    if (self->inbox.empty()) return 0;
    Datagram d = self->inbox.front();
    self->inbox.pop_front();
    std::memcpy(addr, d.addr.data(), d.addr.size());
    *addr_len = self->misbehave == 1 ? 40 : uint32_t(d.addr.size());
    std::memcpy(buffer, d.data.data(), std::min(capacity, d.data.size()));
    *length = self->misbehave == 2 ? capacity + 1 : d.data.size();
    return 1;
  }
};

TEST(CallbackTransport, ForwardsAndValidates) {
  FakeUserTransport user;
  TransportCallbacks cb;
  cb.user = &user;
  cb.send = &FakeUserTransport::send;
  cb.receive = &FakeUserTransport::receive;
  CallbackTransport t(cb);
  const uint8_t data[3] = {1, 2, 3};
  const PeerAddress to = make_memory_address(5);
  ASSERT_EQ(t.send(to, data, 3), Result::ok);
  ASSERT_EQ(user.sent.size(), 1u);
  EXPECT_EQ(user.sent[0].data.size(), 3u);
  EXPECT_EQ(user.sent[0].addr.size(), to.size);

  uint8_t buffer[16];
  size_t length = 0;
  PeerAddress from;
  EXPECT_FALSE(t.receive(&from, buffer, sizeof buffer, &length));
  user.inbox.push_back({{9, 9}, {4, 5}});
  ASSERT_TRUE(t.receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(length, 2u);
  EXPECT_EQ(from.size, 2u);
  for (int mode = 1; mode <= 3; ++mode) {
    user.misbehave = mode;
    user.inbox.push_back({{9, 9}, {4, 5}});
    EXPECT_FALSE(t.receive(&from, buffer, sizeof buffer, &length));
  }
  EXPECT_EQ(t.receive_errors(), 3u);
  CallbackTransport empty(TransportCallbacks{});
  EXPECT_EQ(empty.send(to, data, 3), Result::invalid_argument);
  EXPECT_FALSE(empty.receive(&from, buffer, sizeof buffer, &length));
}

TEST(InMemoryNetwork, DeliversInOrderAndDropsUnknown) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  EXPECT_NE(a->address(), b->address());
  EXPECT_EQ(net.find(b->address()), b);
  for (uint8_t i = 0; i < 200; ++i) ASSERT_EQ(a->send(b->address(), &i, 1), Result::ok);
  EXPECT_EQ(b->pending(), 200u);
  uint8_t buffer[4];
  size_t length;
  PeerAddress from;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(b->receive(&from, buffer, sizeof buffer, &length));
    EXPECT_EQ(buffer[0], uint8_t(i));
    EXPECT_EQ(from, a->address());
  }
  EXPECT_FALSE(b->receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(a->send(make_memory_address(99), buffer, 1), Result::ok);
  EXPECT_EQ(net.dropped_unknown_address(), 1u);
  const uint8_t big[8] = {};
  a->send(b->address(), big, 8);  // longer than the receive buffer: dropped
  a->send(b->address(), big, 2);
  ASSERT_TRUE(b->receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(length, 2u);
}

// Sends one datagram per millisecond from a to b through a simulator; returns b's trace.
std::vector<test::TracePoint> run_simulation(uint64_t seed, const LinkProfile& profile,
                                             SimulatorStats* stats = nullptr) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*a, seed);
  sim.set_outgoing(profile);
  std::vector<test::TracePoint> trace;
  uint8_t buffer[64];
  for (uint64_t t = 0; t < 3000000; t += 1000) {
    sim.set_time(t);
    uint8_t payload[40] = {};
    std::memcpy(payload, &t, sizeof t);
    sim.send(b->address(), payload, sizeof payload);
    size_t length;
    PeerAddress from;
    while (b->receive(&from, buffer, sizeof buffer, &length)) {
      trace.push_back({t, test::EndpointPair::fnv(buffer, length)});
    }
  }
  if (stats) *stats = sim.outgoing_stats();
  return trace;
}

LinkProfile noisy_profile() {
  LinkProfile p;
  p.latency_us = 30000;
  p.jitter_us = 15000;
  p.loss = 0.2;
  p.duplicate = 0.1;
  p.reorder = 0.1;
  return p;
}

TEST(NetworkSimulator, SameSeedSameRunDifferentSeedDifferentRun) {
  const auto first = run_simulation(42, noisy_profile());
  const auto again = run_simulation(42, noisy_profile());
  const auto other = run_simulation(43, noisy_profile());
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
}

TEST(NetworkSimulator, EndpointRunsAreDeterministic) {
  auto run = [](uint64_t seed) {
    test::EndpointPair pair(test::default_config(1), test::default_config(2), seed);
    pair.set_link(noisy_profile());
    pair.record_trace = true;
    pair.start();
    pair.run_handshake();
    std::vector<uint8_t> blob(2);
    for (Frame f = 0; f < 300; ++f) {
      blob[0] = uint8_t(f);
      pair.a().endpoint.send_input(f, blob.data());
      pair.b().endpoint.send_input(f, blob.data());
      for (int i = 0; i < 16; ++i) pair.step(1000);
    }
    auto trace = pair.a().trace;
    trace.insert(trace.end(), pair.b().trace.begin(), pair.b().trace.end());
    return trace;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(NetworkSimulator, StatsAddUp) {
  SimulatorStats s;
  const auto trace = run_simulation(7, noisy_profile(), &s);
  EXPECT_EQ(s.sent, 3000u);
  EXPECT_NEAR(double(s.dropped_loss) / double(s.sent), 0.2, 0.03);
  EXPECT_NEAR(double(s.duplicated) / double(s.sent - s.dropped_loss), 0.1, 0.03);
  // Everything not dropped is delivered (twice when duplicated), minus what is in flight.
  const uint64_t admitted = s.sent - s.dropped_loss + s.duplicated;
  EXPECT_LE(s.delivered, admitted);
  EXPECT_GE(s.delivered + 100, admitted);
  EXPECT_EQ(trace.size(), s.delivered);
}

TEST(NetworkSimulator, LatencyReorderAndJitter) {
  LinkProfile p;
  p.latency_us = 50000;
  std::vector<test::TracePoint> trace = run_simulation(1, p);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(trace.front().time_us, 50000u);  // the first datagram, sent at 0
  p.reorder = 0.3;
  p.reorder_delay_us = 5000;
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*a, 3);
  sim.set_outgoing(p);
  for (uint32_t i = 0; i < 200; ++i) {
    sim.set_time(i * 1000);
    sim.send(b->address(), reinterpret_cast<const uint8_t*>(&i), 4);
  }
  sim.set_time(1000000);
  uint32_t previous = 0, inversions = 0, got = 0, value;
  size_t length;
  PeerAddress from;
  while (b->receive(&from, reinterpret_cast<uint8_t*>(&value), 4, &length)) {
    inversions += value < previous;
    previous = value;
    ++got;
  }
  EXPECT_EQ(got, 200u);
  EXPECT_GT(inversions, 10u);
}

TEST(NetworkSimulator, BlackoutsAndBandwidth) {
  LinkProfile p;
  p.blackouts = {{1000000, 1500000}};
  p.blackout_period_us = 1000000;  // and 100 ms of every second from 2 s on
  p.blackout_duration_us = 100000;
  p.blackout_offset_us = 2000000;
  SimulatorStats s;
  run_simulation(1, p, &s);
  EXPECT_EQ(s.dropped_blackout, 500u + 100u);  // [1, 1.5) s, then [2, 2.1) s
  LinkProfile capped;
  capped.bandwidth_bytes_per_s = 20000;  // half of the 40 kB/s offered
  capped.max_queue_delay_us = 100000;
  run_simulation(1, capped, &s);
  EXPECT_NEAR(double(s.dropped_bandwidth) / double(s.sent), 0.5, 0.05);
}

TEST(NetworkSimulator, IncomingProfileAppliesOnReceive) {
  InMemoryNetwork net;
  InMemoryTransport* a = net.add_endpoint();
  InMemoryTransport* b = net.add_endpoint();
  NetworkSimulator sim(*b, 1);
  LinkProfile p;
  p.latency_us = 10000;
  sim.set_incoming(p);
  const uint8_t byte = 1;
  a->send(b->address(), &byte, 1);
  uint8_t buffer[4];
  size_t length;
  PeerAddress from;
  EXPECT_FALSE(sim.receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(sim.in_flight(), 1u);
  sim.set_time(9999);
  EXPECT_FALSE(sim.receive(&from, buffer, sizeof buffer, &length));
  sim.set_time(10000);
  EXPECT_TRUE(sim.receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(from, a->address());
  EXPECT_EQ(sim.incoming_stats().delivered, 1u);
}

// The session's first lookup (AddressWords: the sender's size and first 12 bytes as two words,
// bytes past the size included) is sufficient: it says "the same" only of addresses operator==
// finds the same, and says it of every address of up to 12 bytes whose bytes past the size are
// as the peer's (a transport that writes the whole address, the usual one); of any other the
// session asks AddressProbe. Every size, sizes past the capacity, a byte changed anywhere in
// the words, random pairs of few byte values.
TEST(PeerAddress, AddressWordsSayTheSameOnlyOfTheSameAddress) {
  std::mt19937 rng(61);
  for (int run = 0; run < 200000; ++run) {
    PeerAddress a;
    a.size = uint32_t(rng() % 40);
    for (uint8_t& x : a.bytes) x = uint8_t(rng() % 3);
    PeerAddress b = a;
    const uint32_t how = uint32_t(rng() % 4);
    if (how == 1) b.bytes[rng() % PeerAddress::kCapacity] ^= uint8_t(1 + rng() % 255);
    else if (how == 2) b.size = uint32_t(rng() % 40);
    else if (how == 3) for (uint8_t& x : b.bytes) x = uint8_t(rng() % 3);
    const detail::AddressWords words(a);
    const bool same = a == b;
    const bool said = words.decides() && words.surely_is(b);
    ASSERT_TRUE(!said || same) << run;
    if (how == 0) {
      ASSERT_EQ(said, a.size <= 12) << run;
    }
    ASSERT_EQ(words.decides(), a.size <= detail::AddressWords::kMostBytes) << run;
  }
}

}  // namespace
}  // namespace retcon
