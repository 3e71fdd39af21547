// retcon_transfer_time: how long a late spectator waits for a running match's state, and until
// it shows the match live, over a lossy link (issue 11's documented bound; scripts/bench prints
// it). Virtual time, so the figures are the same on any machine for the same seed.
//
//   retcon_transfer_time [size_bytes] [seeds] [rtt_ms] [loss_percent]
//     defaults: 1 MiB, 5 seeds, 100 ms RTT, 5% loss (both directions), 60 Hz
//
// Two players play; once the host reaches frame 300 a spectator starts (state_transfer on both
// sides, the default 1 MiB/s share). Printed per seed: `state_s`, from the spectator's first poll
// to its game's load_state (handshake, the host's wait for a final state, the transfer); `live_s`,
// until its frame is within 12 of the host's confirmed frame (it keeps up to 8 in hand by
// design). Then the median and the worst of each.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "retcon/p2p.h"
#include "retcon/session.h"
#include "retcon/transport.h"

using namespace retcon;

namespace {

constexpr uint64_t kTickUs = 16667;
constexpr Frame kJoinAt = 300;
constexpr Frame kLiveWithin = 12;

// A state of `size` bytes; a step mixes the inputs into its first words.
class Game {
 public:
  explicit Game(size_t size) : state_(size) {
    for (size_t i = 0; i < size; ++i) state_[i] = uint8_t(i * 131u + 17u);
  }
  size_t save_state(Frame, uint8_t* buffer, size_t capacity) noexcept {
    if (state_.size() <= capacity) std::memcpy(buffer, state_.data(), state_.size());
    return state_.size();
  }
  void load_state(Frame, const uint8_t* buffer, size_t length) noexcept {
    std::memcpy(state_.data(), buffer, std::min(length, state_.size()));
    ++loads;
  }
  void advance_frame(Frame, const FrameInputs& inputs, uint32_t) noexcept {
    for (uint32_t p = 0; p < inputs.player_count; ++p) {
      uint32_t word, in = 0;
      std::memcpy(&in, inputs.player(PlayerIndex(p)), std::min<size_t>(inputs.input_size, 4));
      std::memcpy(&word, state_.data() + 4 * p, 4);
      word = word * 31u + in;
      std::memcpy(state_.data() + 4 * p, &word, 4);
    }
  }
  void on_event(const Event& e) noexcept {
    if (e.type == EventType::timesync) wait = e.count;
  }
  std::vector<uint8_t> state_;
  uint64_t loads = 0;
  int32_t wait = 0;
};

struct Node {
  explicit Node(size_t size) : game(size) {}
  Game game;
  InMemoryTransport* wire = nullptr;
  std::unique_ptr<NetworkSimulator> sim;
  std::unique_ptr<P2PSession> session;
};

struct Times {
  double state_s = -1, live_s = -1;
};

bool run(size_t size, uint64_t seed, uint64_t one_way_us, double loss, Times* out) {
  InMemoryNetwork net;
  LinkProfile link;
  link.latency_us = one_way_us;
  link.loss = loss;
  std::vector<std::unique_ptr<Node>> nodes;
  for (uint32_t m = 0; m < 3; ++m) {
    auto n = std::make_unique<Node>(size);
    n->wire = net.add_endpoint();
    n->sim = std::make_unique<NetworkSimulator>(*n->wire, seed * 7919 + m);
    n->sim->set_outgoing(link);
    nodes.push_back(std::move(n));
  }
  for (uint32_t m = 0; m < 2; ++m) {
    P2PConfig c;
    c.session.num_players = 2;
    c.session.input_size = 4;
    c.session.max_state_size = size;
    c.session.callbacks = bind_game(nodes[m]->game);
    c.network.transport = nodes[m]->sim.get();
    c.network.rng_seed = seed * 131 + m + 1;
    c.network.state_transfer = true;
    for (uint32_t p = 0; p < 2; ++p) {
      c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = nodes[p]->wire->address();
    }
    if (m == 0) {
      c.num_spectators = 1;
      c.spectators[0] = nodes[2]->wire->address();
    }
    if (create_p2p_session(c, &nodes[m]->session) != Result::ok) return false;
  }
  std::mt19937 rng{uint32_t(seed)};
  uint32_t pads[2] = {0, 0};
  uint64_t now = 0, started = 0;
  for (int t = 0; t < 60 * 120; ++t) {
    now += kTickUs;
    for (auto& n : nodes) n->sim->set_time(now);
    for (uint32_t m = 0; m < 2; ++m) {
      Node& me = *nodes[m];
      me.session->poll(now);
      if (!me.session->running()) continue;
      if (me.game.wait > 0) {
        --me.game.wait;
        continue;
      }
      if (rng() % 5 == 0) pads[m] ^= 1u << (rng() % 12);
      const Result r = me.session->add_local_input(PlayerIndex(m), &pads[m], sizeof pads[m]);
      if (r != Result::ok && r != Result::input_already_added) return false;
      const Result a = me.session->advance_frame();
      if (a != Result::ok && a != Result::prediction_limit) return false;
    }
    Node& s = *nodes[2];
    if (!s.session) {
      if (nodes[0]->session->current_frame() < kJoinAt) continue;
      SpectatorConfig c;
      c.session.num_players = 2;
      c.session.input_size = 4;
      c.session.max_state_size = size;
      c.session.callbacks = bind_game(s.game);
      c.network.transport = s.sim.get();
      c.network.rng_seed = seed * 131 + 99;
      c.network.state_transfer = true;
      c.host = nodes[0]->wire->address();
      if (create_spectator_session(c, &s.session) != Result::ok) return false;
      started = now;
    }
    s.session->poll(now);
    if (s.session->running()) {
      const Result a = s.session->advance_frame();
      if (a != Result::ok && a != Result::prediction_limit) return false;
    }
    if (out->state_s < 0 && s.game.loads > 0) out->state_s = double(now - started) / 1e6;
    if (out->state_s >= 0 && s.session->current_frame() >= nodes[0]->session->confirmed_frame() - kLiveWithin) {
      out->live_s = double(now - started) / 1e6;
      return true;
    }
  }
  return false;  // never live within two minutes
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const size_t size = argc > 1 ? size_t(std::strtoull(argv[1], nullptr, 10)) : size_t{1} << 20;
  const int seeds = argc > 2 ? std::atoi(argv[2]) : 5;
  const uint64_t rtt_ms = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100;
  const double loss = argc > 4 ? std::atof(argv[4]) / 100.0 : 0.05;
  if (size < 64 || seeds < 1 || loss < 0 || loss >= 1) {
    std::fprintf(stderr, "usage: retcon_transfer_time [size_bytes>=64] [seeds>=1] [rtt_ms] [loss_percent]\n");
    return 2;
  }
  std::vector<double> state, live;
  for (int k = 1; k <= seeds; ++k) {
    Times t;
    if (!run(size, uint64_t(k), rtt_ms * 1000 / 2, loss, &t)) {
      std::fprintf(stderr, "seed %d: the spectator never got live\n", k);
      return 1;
    }
    std::printf("seed=%d state_s=%.2f live_s=%.2f\n", k, t.state_s, t.live_s);
    state.push_back(t.state_s);
    live.push_back(t.live_s);
  }
  std::printf("scenario=transfer size=%zu rtt_ms=%llu loss=%.3f seeds=%d state_median_s=%.2f state_max_s=%.2f "
              "live_median_s=%.2f live_max_s=%.2f\n",
              size, static_cast<unsigned long long>(rtt_ms), loss, seeds, median(state),
              *std::max_element(state.begin(), state.end()), median(live), *std::max_element(live.begin(), live.end()));
  return 0;
}
