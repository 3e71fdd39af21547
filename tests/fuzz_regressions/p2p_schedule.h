// A two-machine P2P match whose datagrams are held until the test decides their fate, as the p2p
// fuzz target (fuzz/p2p_fuzzer.cpp) does: the shortest way to restate a fuzzer's schedule as a
// readable test.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "retcon/p2p.h"
#include "support/test_game.h"

namespace retcon::test {

struct HeldDatagram {
  uint32_t from;
  PeerAddress to;
  std::vector<uint8_t> bytes;
  uint8_t type() const { return bytes.size() > 3 ? bytes[3] : 0; }  // wire message type
};

class HoldingTransport final : public Transport {
 public:
  HoldingTransport(uint32_t id, InMemoryTransport* wire, std::vector<HeldDatagram>* held)
      : id_(id), wire_(wire), held_(held) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    held_->push_back(HeldDatagram{id_, to, std::vector<uint8_t>(data, data + length)});
    return Result::ok;
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    return wire_->receive(from, buffer, capacity, length);
  }
  InMemoryTransport* wire() const { return wire_; }

 private:
  uint32_t id_;
  InMemoryTransport* wire_;
  std::vector<HeldDatagram>* held_;
};

struct ScheduledMatch {
  struct Machine {
    TestGame game;
    std::unique_ptr<HoldingTransport> transport;
    std::unique_ptr<P2PSession> session;
  };
  InMemoryNetwork net;
  std::vector<HeldDatagram> held;
  Machine machines[2];
  uint64_t now = 0;

  bool build(int32_t max_prediction, int32_t desync_interval) {
    InMemoryTransport* wires[2] = {net.add_endpoint(), net.add_endpoint()};
    for (uint32_t i = 0; i < 2; ++i) {
      Machine& m = machines[i];
      m.game.events.reserve(1024);
      m.transport = std::make_unique<HoldingTransport>(i, wires[i], &held);
      P2PConfig c;
      c.session.num_players = 2;
      c.session.input_size = 1;
      c.session.max_prediction = max_prediction;
      c.session.max_state_size = 256;
      c.session.callbacks = bind_game(m.game);
      c.network.transport = m.transport.get();
      c.network.rng_seed = 7 + i;
      c.network.disconnect_timeout_us = 0;  // no timeouts: the test decides who leaves
      c.network.sync_round_trips = 1;
      c.desync_interval = desync_interval;
      for (uint32_t p = 0; p < 2; ++p) {
        c.players[p].kind = p == i ? PlayerKind::local : PlayerKind::remote;
        c.players[p].address = wires[p]->address();
      }
      if (create_p2p_session(c, &m.session) != Result::ok) return false;
    }
    return true;
  }

  // Hands every held datagram that `pick` accepts to the network (in order); the rest stay held.
  template <class Pick>
  void deliver(Pick&& pick) {
    std::vector<HeldDatagram> keep;
    for (const HeldDatagram& d : held) {
      if (pick(d)) machines[d.from].transport->wire()->send(d.to, d.bytes.data(), d.bytes.size());
      else keep.push_back(d);
    }
    held.swap(keep);
  }
  void deliver_all() { deliver([](const HeldDatagram&) { return true; }); }

  void poll(uint32_t i) { machines[i].session->poll(now); }
  // One game tick of machine i: poll, its input for the frame, advance.
  Result tick(uint32_t i, uint8_t input) {
    poll(i);
    machines[i].session->add_local_input(PlayerIndex(i), &input, 1);
    return machines[i].session->advance_frame();
  }
  // Both machines tick and everything arrives.
  void lockstep_tick(uint8_t input0, uint8_t input1) {
    now += 16667;
    tick(0, input0);
    tick(1, input1);
    deliver_all();
  }
  size_t count(uint32_t i, EventType type) const {
    size_t n = 0;
    for (const Event& e : machines[i].game.events) n += e.type == type;
    return n;
  }
};

}  // namespace retcon::test
