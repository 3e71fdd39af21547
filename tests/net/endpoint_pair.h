// Test harness: two Endpoints connected through an InMemoryNetwork, each behind its own
// NetworkSimulator, driven by a virtual clock. Tests only: it allocates while being set up.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "net/endpoint.h"
#include "retcon/transport.h"

namespace retcon::test {

// Records every datagram handed to an inner transport (for byte-exact and size checks), and
// can follow each with a garbled copy (1-3 bytes changed) to test corruption on the way.
class RecordingTransport final : public Transport {
 public:
  explicit RecordingTransport(Transport& inner) : inner_(inner) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    if (recording) sent.emplace_back(data, data + length);
    max_size = length > max_size ? length : max_size;
    if (garble) {
      std::vector<uint8_t> copy(data, data + length);
      const int flips = 1 + int(rng() % 3);
      for (int i = 0; i < flips; ++i) copy[rng() % length] ^= uint8_t(1 + rng() % 255);
      ++garbled;
      (void)inner_.send(to, copy.data(), copy.size());
    }
    return inner_.send(to, data, length);
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    return inner_.receive(from, buffer, capacity, length);
  }
  bool recording = true;
  bool garble = false;
  uint64_t garbled = 0;
  std::mt19937 rng{1};
  size_t max_size = 0;
  std::vector<std::vector<uint8_t>> sent;

 private:
  Transport& inner_;
};

// Swallows what is sent, keeping the last datagram (for tests that drive one endpoint alone).
class CountingTransport final : public Transport {
 public:
  Result send(const PeerAddress&, const uint8_t* data, size_t length) override {
    ++sent;
    last.assign(data, data + length);
    return Result::ok;
  }
  bool receive(PeerAddress*, uint8_t*, size_t, size_t*) override { return false; }
  uint64_t sent = 0;
  std::vector<uint8_t> last;
};

inline detail::EndpointConfig default_config(uint64_t seed) {
  detail::EndpointConfig c;
  c.shape = {2, 2, 60};
  c.send_blob_size = 2;
  c.receive_blob_size = 2;
  c.rng_seed = seed;
  return c;
}

struct TracePoint {
  uint64_t time_us;
  uint64_t hash;
  bool operator==(const TracePoint&) const = default;
};

class EndpointPair {
 public:
  struct Side {
    InMemoryTransport* link = nullptr;
    std::unique_ptr<NetworkSimulator> sim;
    std::unique_ptr<RecordingTransport> recorder;
    detail::Endpoint endpoint;
    PeerAddress remote;
    std::vector<TracePoint> trace;
    uint64_t unknown_address = 0;
  };

  EndpointPair(const detail::EndpointConfig& a, const detail::EndpointConfig& b,
               uint64_t seed = 1) {
    Side* sides[2] = {&a_, &b_};
    for (int i = 0; i < 2; ++i) {
      sides[i]->link = network_.add_endpoint();
      sides[i]->sim = std::make_unique<NetworkSimulator>(*sides[i]->link, seed * 2 + i);
      sides[i]->recorder = std::make_unique<RecordingTransport>(*sides[i]->sim);
      sides[i]->recorder->recording = false;
    }
    a_.remote = b_.link->address();
    b_.remote = a_.link->address();
    init_a = a_.endpoint.init(a);
    init_b = b_.endpoint.init(b);
  }

  // Conditions for both directions (applied to each side's outgoing traffic).
  void set_link(const LinkProfile& profile) {
    a_.sim->set_outgoing(profile);
    b_.sim->set_outgoing(profile);
  }

  void start() {
    (void)a_.endpoint.start(now);
    (void)b_.endpoint.start(now);
  }

  // Advance the clock, deliver what is due, let both endpoints send.
  void step(uint64_t dt_us) {
    now += dt_us;
    for (Side* s : {&a_, &b_}) s->sim->set_time(now);
    for (Side* s : {&a_, &b_}) {
      PeerAddress from;
      size_t length = 0;
      while (s->sim->receive(&from, buffer_, sizeof buffer_, &length)) {
        if (from != s->remote) {
          ++s->unknown_address;
          continue;
        }
        if (record_trace) s->trace.push_back({now, fnv(buffer_, length)});
        s->endpoint.on_datagram(buffer_, length, now);
      }
      (void)s->endpoint.poll(now, *s->recorder, s->remote);
    }
  }

  // Step until both run (or the limit passes). True when both run.
  bool run_handshake(uint64_t limit_us = 10000000, uint64_t dt_us = 1000) {
    const uint64_t end = now + limit_us;
    while (now < end && !(a_.endpoint.running() && b_.endpoint.running())) step(dt_us);
    return a_.endpoint.running() && b_.endpoint.running();
  }

  static uint64_t fnv(const uint8_t* data, size_t length) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < length; ++i) h = (h ^ data[i]) * 0x100000001B3ull;
    return h;
  }

  Side& a() { return a_; }
  Side& b() { return b_; }
  InMemoryNetwork& network() { return network_; }

  uint64_t now = 0;
  bool record_trace = false;
  Result init_a = Result::ok;
  Result init_b = Result::ok;

 private:
  InMemoryNetwork network_;
  Side a_;
  Side b_;
  uint8_t buffer_[2048];
};

}  // namespace retcon::test
