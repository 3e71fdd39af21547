// retcon_soak: a long match of the fighter sample over a bad simulated network, in one process.
//
//   retcon_soak [frames] [seed] [inject]   (defaults: 3000 frames, seed 1, no fault)
//
// `inject` plants one fault to show the checks catch it (ctest runs each; see tests.cmake):
//   desync  machine 1's game changes its state at frame frames/2 (a non-deterministic game)
//   leak    64 bytes allocated every second of play after warm-up, freed only at the end
//   vanish  machine 0's transport loses 1 datagram in 100 without the simulator counting it
//   partition  machines 0 and 1 stop hearing each other at 4 s (both directions, for good);
//           the others hear both. Players get dropped, so only the checks that still apply
//           run: no desync_detected (machines still connected must agree on every cut),
//           datagrams, memory. KNOWN BUG: fails today, see docs/SOAK.md.
//   leave   machine 3 crashes at frame frames/2 (never polls again): the others must time it
//           out, drop player 3 at one agreed frame and play on in sync. KNOWN BUG: seeds 1,
//           4 and 7 of 1..8 fail today (the agreed frame is out of some peers' reach), see docs/SOAK.md.
//
// Four peers (one FighterBot each) and two spectators (one following peer 0, one following
// peer 2), every direction of every connection through its own NetworkSimulator: 100 ms each
// way (200 ms round trip) plus 0..40 ms jitter, 10% loss, 2% duplicates, and each machine's
// connection dark for 1 second every 12 seconds (both directions; machines staggered), links
// to spectators capped at 3 kB/s. Peers start with 2 frames of input delay and change it every
// 600 frames (0..4). Virtual clock, 60 ticks per second, no sleeping.
//
// Checks, each printed as FAIL and turned into exit status 1:
//   - no desync_detected event on any machine (and at least one checksum comparison was made);
//   - every frame confirmed on all peers started from the same state on every peer, and every
//     frame a spectator ran started from the same state as on the peers;
//   - the live heap (allocations and bytes, counted by a replaced operator new/delete) does not
//     grow after warm-up;
//   - the datagram counts add up in all 16 directions: what the sending endpoint sent, plus the
//     simulator's duplicates, equals what the receiving endpoint received, plus what the
//     simulator dropped (loss, blackout, bandwidth), plus what is still in flight (held by the
//     simulator or waiting unread in the receiver's queue);
//   - every session's counters agree with what the game's callbacks saw, and with themselves;
//   - every endpoint measured a round trip that matches its link (200..330 ms).
// The last line is a one-line summary (see docs/SOAK.md).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fighter.h"
#include "fighter_bot.h"
#include "fighter_game.h"
#include "retcon/p2p.h"
#include "soak/live_heap.h"

namespace {

using namespace retcon;

constexpr uint32_t kPeers = 4;
constexpr uint32_t kSpectators = 2;
constexpr uint32_t kNodes = kPeers + kSpectators;
constexpr uint32_t kHostOf[kSpectators] = {0, 2};  // the peer each spectator follows
constexpr uint64_t kTickUs = 16667;
constexpr uint64_t kOneWayUs = 100000;
constexpr uint64_t kJitterUs = 40000;
constexpr double kLoss = 0.10;
constexpr double kDuplicate = 0.02;
constexpr uint64_t kBlackoutPeriodUs = 12000000;
constexpr uint64_t kBlackoutUs = 1000000;
// Links from a host to its spectator are capped (a spectator on a thin connection): bursts
// after a blackout queue up and, past 200 ms of backlog, drop (about 1 datagram in 400).
constexpr uint64_t kSpectatorBandwidth = 3500;  // bytes per second: tight, so some datagrams queue and drop
constexpr int32_t kInputDelay = 2;
constexpr int32_t kMaxPrediction = 10;

int g_failures = 0;

enum class Inject { none, desync, leak, vanish, partition, leave };
constexpr uint32_t kLeaver = 3;  // inject leave: the machine that crashes
Inject g_inject = Inject::none;
Frame g_desync_frame = -1;

void fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  ++g_failures;
}

// The fighter adapter plus what the soak records: the state hash every frame started from
// (index = frame, the last simulation wins) and the events that matter.
struct SoakGame {
  fighter::FighterGame game{int(kPeers), 7};
  bool faulty = false;               // inject desync: this machine's game is not deterministic
  std::vector<uint64_t> start_hash;  // sized once, before the match
  uint64_t desyncs = 0, interruptions = 0, resumptions = 0, disconnects = 0, timesyncs = 0;
  uint64_t others_disconnected = 0;  // disconnected events about another player than kLeaver
  int32_t wait = 0;                  // frames still to skip on time-sync advice

  size_t save_state(Frame f, uint8_t* b, size_t c) { return game.save_state(f, b, c); }
  void load_state(Frame f, const uint8_t* b, size_t n) { game.load_state(f, b, n); }
  void advance_frame(Frame f, const FrameInputs& in, uint32_t flags) {
    if (f >= 0 && size_t(f) < start_hash.size()) start_hash[size_t(f)] = fighter::fighter_checksum(game.state());
    game.advance_frame(f, in, flags);
    if (faulty && f == g_desync_frame) game.state().rng ^= 0x5a5a5a5au;
  }
  uint64_t checksum(Frame f, const uint8_t* b, size_t n) { return game.checksum(f, b, n); }
  void on_event(const Event& e) {
    switch (e.type) {
      case EventType::desync_detected:
        ++desyncs;
        std::printf("desync at frame %d: %016" PRIx64 " vs %016" PRIx64 "\n", e.frame, e.checksum_local,
                    e.checksum_remote);
        break;
      case EventType::connection_interrupted: ++interruptions; break;
      case EventType::connection_resumed: ++resumptions; break;
      case EventType::disconnected:
        ++disconnects;
        if (e.player != PlayerIndex(kLeaver)) ++others_disconnected;
        break;
      case EventType::timesync:
        ++timesyncs;
        wait = e.count;
        break;
      default: break;
    }
  }
};

// One machine's transport: sends go through one NetworkSimulator per destination (so every
// direction has its own conditions and its own counts), receives come straight from the
// machine's in-memory endpoint.
class RoutedTransport final : public Transport {
 public:
  struct Link {
    uint32_t to_node = 0;
    PeerAddress to;
    std::unique_ptr<NetworkSimulator> sim;
  };

  explicit RoutedTransport(InMemoryTransport* wire) : wire_(wire) {}

  void add_link(uint32_t to_node, const PeerAddress& to, const LinkProfile& profile, uint64_t seed) {
    Link& link = links_[count_++];
    link.to_node = to_node;
    link.to = to;
    link.sim = std::make_unique<NetworkSimulator>(*wire_, seed);
    link.sim->set_outgoing(profile);
  }
  void set_time(uint64_t now) {
    for (uint32_t i = 0; i < count_; ++i) links_[i].sim->set_time(now);
  }
  Link* link_to(uint32_t node) {
    for (uint32_t i = 0; i < count_; ++i)
      if (links_[i].to_node == node) return &links_[i];
    return nullptr;
  }

  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    if (vanish_ && ++vanish_count_ % 100 == 0) return Result::ok;  // inject vanish: lost, uncounted
    for (uint32_t i = 0; i < count_; ++i)
      if (links_[i].to == to) return links_[i].sim->send(to, data, length);
    ++unrouted_;
    return Result::transport_error;
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    return wire_->receive(from, buffer, capacity, length);
  }
  InMemoryTransport* wire() { return wire_; }
  uint64_t unrouted() const { return unrouted_; }
  void set_vanish() { vanish_ = true; }

 private:
  InMemoryTransport* wire_;
  Link links_[kNodes];
  uint32_t count_ = 0;
  uint64_t unrouted_ = 0;
  bool vanish_ = false;
  uint64_t vanish_count_ = 0;
};

struct Node {
  SoakGame game;
  std::unique_ptr<RoutedTransport> transport;
  std::unique_ptr<P2PSession> session;
  std::unique_ptr<fighter::FighterBot> bot;  // peers only
  bool spectator = false;
  Frame last_input_frame = kNullFrame;       // the frame the bot last chose an input for
  // Every frame up to this one is final here: its inputs were all confirmed before an
  // advance_frame that succeeded (which first re-simulates whatever they corrected).
  Frame settled = kNullFrame;
  uint64_t stalls = 0, skipped = 0, errors = 0;
  bool gone = false;                         // inject leave: crashed, never polls again
  uint64_t discarded_from[kNodes] = {};      // datagrams that reached it after it crashed
};

// Node k's connection is dark for kBlackoutUs every kBlackoutPeriodUs, starting at 3 s + 2 s k.
void add_blackouts(std::vector<BlackoutWindow>* out, uint32_t node, uint64_t until_us) {
  for (uint64_t start = 3000000 + 2000000ull * node; start < until_us; start += kBlackoutPeriodUs)
    out->push_back(BlackoutWindow{start, start + kBlackoutUs});
}

LinkProfile profile_between(uint32_t from, uint32_t to, uint64_t until_us) {
  LinkProfile p;
  p.latency_us = kOneWayUs;
  p.jitter_us = kJitterUs;
  p.loss = kLoss;
  p.duplicate = kDuplicate;
  add_blackouts(&p.blackouts, from, until_us);
  add_blackouts(&p.blackouts, to, until_us);
  if (g_inject == Inject::partition && ((from == 0 && to == 1) || (from == 1 && to == 0)))
    p.blackouts.push_back(BlackoutWindow{4000000, until_us});
  if (to >= kPeers) p.bandwidth_bytes_per_s = kSpectatorBandwidth;
  return p;
}

bool build(std::vector<std::unique_ptr<Node>>& nodes, InMemoryNetwork& net, uint64_t seed, Frame frames,
           uint64_t until_us) {
  std::vector<InMemoryTransport*> wires;
  for (uint32_t k = 0; k < kNodes; ++k) wires.push_back(net.add_endpoint());
  auto talks = [](uint32_t a, uint32_t b) {
    if (a == b) return false;
    if (a < kPeers && b < kPeers) return true;
    for (uint32_t s = 0; s < kSpectators; ++s) {
      const uint32_t spec = kPeers + s;
      if ((a == spec && b == kHostOf[s]) || (b == spec && a == kHostOf[s])) return true;
    }
    return false;
  };
  for (uint32_t k = 0; k < kNodes; ++k) {
    auto node = std::make_unique<Node>();
    node->spectator = k >= kPeers;
    node->game.faulty = g_inject == Inject::desync && k == 1;
    node->game.start_hash.assign(size_t(frames) + 64, 0);
    node->transport = std::make_unique<RoutedTransport>(wires[k]);
    for (uint32_t j = 0; j < kNodes; ++j)
      if (talks(k, j)) node->transport->add_link(j, wires[j]->address(), profile_between(k, j, until_us),
                                                 seed * 1000003u + k * 64u + j);
    if (g_inject == Inject::vanish && k == 0) node->transport->set_vanish();
    if (!node->spectator) node->bot = std::make_unique<fighter::FighterBot>(uint32_t(seed) * 7919u + k, int(k));
    nodes.push_back(std::move(node));
  }
  for (uint32_t k = 0; k < kNodes; ++k) {
    Node& me = *nodes[k];
    SessionConfig s;
    s.num_players = kPeers;
    s.input_size = fighter::kInputSize;
    s.max_prediction = kMaxPrediction;
    s.max_state_size = fighter::FighterGame::state_size();
    s.callbacks = bind_game(me.game);
    NetworkConfig n;
    n.transport = me.transport.get();
    n.rng_seed = seed * 31 + k;
    if (me.spectator) {
      SpectatorConfig c;
      c.session = s;
      c.network = n;
      c.host = wires[kHostOf[k - kPeers]]->address();
      if (create_spectator_session(c, &me.session) != Result::ok) return false;
      continue;
    }
    P2PConfig c;
    c.session = s;
    c.network = n;
    for (uint32_t p = 0; p < kPeers; ++p) {
      c.players[p].kind = p == k ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = wires[p]->address();
    }
    for (uint32_t sp = 0; sp < kSpectators; ++sp)
      if (kHostOf[sp] == k) c.spectators[c.num_spectators++] = wires[kPeers + sp]->address();
    if (create_p2p_session(c, &me.session) != Result::ok) return false;
    if (me.session->set_input_delay(PlayerIndex(k), kInputDelay) != Result::ok) return false;
  }
  return true;
}

// Peers play on this far past the checked frames, so corrections of the last checked frames
// still reach them and are re-simulated.
constexpr Frame kTailFrames = kMaxPrediction + kInputDelay + 30;

// One 1/60 s tick on every machine. Peers play up to frame `frames` + kTailFrames; spectators
// follow as far as the hosts have confirmed, up to `frames`.
void tick(std::vector<std::unique_ptr<Node>>& nodes, uint64_t now, Frame frames) {
  for (uint32_t k = 0; k < kNodes; ++k) {
    Node& me = *nodes[k];
    if (g_inject == Inject::leave && k == kLeaver && me.session->current_frame() >= frames / 2) me.gone = true;
    if (me.gone) {  // what reaches a crashed machine is lost there: drained and counted per sender
      PeerAddress from;
      uint8_t buffer[2048];
      size_t length = 0;
      while (me.transport->wire()->receive(&from, buffer, sizeof buffer, &length))
        for (uint32_t j = 0; j < kNodes; ++j)
          if (nodes[j]->transport->wire()->address() == from) ++me.discarded_from[j];
      continue;
    }
    me.transport->set_time(now);
    me.session->poll(now);
    if (!me.session->running()) continue;
    if (me.spectator) {
      if (me.session->current_frame() > frames) continue;
      const Result r = me.session->advance_frame();
      if (r == Result::prediction_limit) ++me.stalls;
      else if (r != Result::ok) ++me.errors;
      continue;
    }
    if (me.game.wait > 0) {
      --me.game.wait;
      ++me.skipped;
      continue;
    }
    const Frame f = me.session->current_frame();
    if (f > frames + kTailFrames) continue;
    // As a game adapting to the ping: every 600 frames each peer changes its input delay
    // (0..4, different per peer), which repeats or skips local inputs at the switch.
    if (f != me.last_input_frame && f % 600 == 300 &&
        me.session->set_input_delay(PlayerIndex(k), int32_t((k + uint32_t(f) / 600) % 5)) != Result::ok)
      ++me.errors;
    if (f != me.last_input_frame) {  // a stalled frame keeps the input it was given
      uint8_t in[fighter::kInputSize];
      me.bot->next_input(me.game.game.state(), in);
      if (me.session->add_local_input(PlayerIndex(k), in, sizeof in) != Result::ok) ++me.errors;
      me.last_input_frame = f;
    }
    const Frame confirmed = me.session->confirmed_frame();
    const Result r = me.session->advance_frame();
    if (r == Result::ok) me.settled = std::max(me.settled, confirmed);
    else if (r == Result::prediction_limit) ++me.stalls;
    else ++me.errors;
  }
}

bool finished(std::vector<std::unique_ptr<Node>>& nodes, Frame frames) {
  for (auto& n : nodes) {
    if (n->gone) continue;
    if (n->spectator ? n->session->current_frame() <= frames : n->settled < frames) return false;
  }
  return true;
}

struct Totals {
  uint64_t sent = 0, received = 0, dropped_loss = 0, dropped_blackout = 0, dropped_bandwidth = 0,
           duplicated = 0, in_flight = 0, queued = 0;
};

// The endpoint's counts for the connection from node `self` to node `other`.
PeerStats endpoint_stats(Node& self, uint32_t self_index, uint32_t other) {
  PeerStats s{};
  if (self.spectator) {
    self.session->peer_stats(0, &s);
  } else if (other < kPeers) {
    self.session->peer_stats(PlayerIndex(other), &s);
  } else {
    uint32_t index = 0;  // spectators of this host, in configuration order
    for (uint32_t sp = 0; sp < kSpectators && kPeers + sp != other; ++sp) index += kHostOf[sp] == self_index;
    self.session->spectator_stats(index, &s);
  }
  return s;
}

// The datagrams of every direction add up. Call after the last poll: it drains the receive
// queues (counting what waited there per sender), so no session may poll afterwards.
Totals check_datagrams(std::vector<std::unique_ptr<Node>>& nodes) {
  Totals t;
  uint64_t queued[kNodes][kNodes] = {};
  for (uint32_t k = 0; k < kNodes; ++k) {
    for (uint32_t j = 0; j < kNodes; ++j) queued[j][k] += nodes[k]->discarded_from[j];
    PeerAddress from;
    uint8_t buffer[4096];
    size_t length = 0;
    while (nodes[k]->transport->wire()->receive(&from, buffer, sizeof buffer, &length)) {
      for (uint32_t j = 0; j < kNodes; ++j)
        if (nodes[j]->transport->wire()->address() == from) ++queued[j][k];
    }
  }
  for (uint32_t a = 0; a < kNodes; ++a) {
    if (nodes[a]->transport->unrouted() != 0) fail("a session sent to an address it has no link to");
    for (uint32_t b = 0; b < kNodes; ++b) {
      RoutedTransport::Link* link = nodes[a]->transport->link_to(b);
      if (link == nullptr) continue;
      const PeerStats out = endpoint_stats(*nodes[a], a, b);
      const PeerStats in = endpoint_stats(*nodes[b], b, a);
      const SimulatorStats& sim = link->sim->outgoing_stats();
      const uint64_t dropped = sim.dropped_loss + sim.dropped_blackout + sim.dropped_bandwidth;
      const uint64_t flight = link->sim->in_flight();
      const bool handed = out.datagrams_sent == sim.sent + out.send_failures;
      const bool balanced = out.datagrams_sent + sim.duplicated == in.datagrams_received + dropped + flight + queued[a][b];
      const bool simulator = sim.sent + sim.duplicated == sim.delivered + dropped + flight;
      if (!handed || !balanced || !simulator) {
        std::printf("FAIL: datagrams %u->%u: endpoint sent %" PRIu64 " (send failures %" PRIu64
                    "), simulator sent %" PRIu64 " duplicated %" PRIu64 " delivered %" PRIu64 " dropped %" PRIu64
                    " in flight %" PRIu64 ", queued unread %" PRIu64 ", peer endpoint received %" PRIu64 "\n",
                    a, b, out.datagrams_sent, out.send_failures, sim.sent, sim.duplicated, sim.delivered, dropped,
                    uint64_t(flight), queued[a][b], in.datagrams_received);
        ++g_failures;
      }
      // The measured round trip matches the link: 200 ms, plus 0..80 ms of jitter both ways, plus
      // up to a tick of waiting for the next poll at each end, plus on a bandwidth-capped link
      // (to a spectator) the time datagrams queue behind each other.
      const bool live = !nodes[a]->gone && !nodes[b]->gone;
      const uint64_t queueing = (a >= kPeers || b >= kPeers) ? 100000 : 0;
      if (live && (out.ping_us < 2 * kOneWayUs ||
                   out.ping_us > 2 * (kOneWayUs + kJitterUs + kTickUs) + 20000 + queueing)) {
        std::printf("FAIL: %u->%u: ping %" PRIu64 " us, the links give 200..330 ms\n", a, b, out.ping_us);
        ++g_failures;
      }
      t.sent += out.datagrams_sent;
      t.received += in.datagrams_received;
      t.dropped_loss += sim.dropped_loss;
      t.dropped_blackout += sim.dropped_blackout;
      t.dropped_bandwidth += sim.dropped_bandwidth;
      t.duplicated += sim.duplicated;
      t.in_flight += flight;
      t.queued += queued[a][b];
      // The protocol's own drops of well-formed traffic: only duplicates (replayed) and late
      // or out-of-window copies may be dropped on a clean wire; garbage never appears here.
      if (in.dropped_truncated + in.dropped_oversized + in.dropped_bad_magic + in.dropped_bad_version +
              in.dropped_unknown_type + in.dropped_malformed + in.dropped_bad_nonce != 0) {
        std::printf("FAIL: %u->%u: the receiver dropped well-formed traffic as invalid\n", a, b);
        ++g_failures;
      }
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const long frames_arg = argc > 1 ? std::atol(argv[1]) : 3000;
  const long seed_arg = argc > 2 ? std::atol(argv[2]) : 1;
  if (argc > 3) {
    if (std::strcmp(argv[3], "desync") == 0) g_inject = Inject::desync;
    else if (std::strcmp(argv[3], "leak") == 0) g_inject = Inject::leak;
    else if (std::strcmp(argv[3], "vanish") == 0) g_inject = Inject::vanish;
    else if (std::strcmp(argv[3], "partition") == 0) g_inject = Inject::partition;
    else if (std::strcmp(argv[3], "leave") == 0) g_inject = Inject::leave;
    else argc = 99;
  }
  if (argc > 4 || frames_arg < 600 || frames_arg > 10000000 || seed_arg < 0) {
    std::fprintf(stderr, "usage: retcon_soak [frames >= 600] [seed] [desync|leak|vanish|partition|leave]\n");
    return 2;
  }
  const Frame frames = Frame(frames_arg);
  const uint64_t seed = uint64_t(seed_arg);
  g_desync_frame = Frame(frames_arg / 2);
  std::vector<std::unique_ptr<char[]>> leaked;  // inject leak
  leaked.reserve(size_t(frames_arg) * 4 / 60 + 64);
  const auto wall_start = std::chrono::steady_clock::now();
  // Ticks: the match itself, plus slack for stalls, time-sync waits and the end's blackouts.
  const uint64_t max_ticks = uint64_t(frames) * 2 + 3600;
  const uint64_t until_us = (max_ticks + 1) * kTickUs;

  InMemoryNetwork net;
  std::vector<std::unique_ptr<Node>> nodes;
  nodes.reserve(kNodes);
  if (!build(nodes, net, seed, frames, until_us)) {
    std::printf("FAIL: session creation\n");
    return 1;
  }

  // Warm-up: until every peer has run a third of the match (at most 30 s of play), which
  // covers at least one blackout of every machine.
  const Frame warm_frame = std::min<Frame>(frames / 3, 1800);
  bool warm = false;
  soak::HeapCounts at_warm{};
  uint64_t peak_live_after = 0, peak_bytes_after = 0;
  uint64_t now = 0, ticks = 0;
  bool done = false;
  for (; ticks < max_ticks && !done; ++ticks) {
    now += kTickUs;
    tick(nodes, now, frames);
    if (!warm) {
      bool all = true;
      for (auto& n : nodes)
        if (!n->spectator && n->session->current_frame() < warm_frame) all = false;
      if (all) {
        warm = true;
        at_warm = soak::heap_counts();
      }
    } else {
      if (g_inject == Inject::leak && ticks % 60 == 0 && leaked.size() < leaked.capacity())
        leaked.push_back(std::make_unique<char[]>(64));
      const soak::HeapCounts h = soak::heap_counts();
      peak_live_after = std::max(peak_live_after, h.live_allocations);
      peak_bytes_after = std::max(peak_bytes_after, h.live_bytes);
    }
    done = finished(nodes, frames);
  }
  const bool partition = g_inject == Inject::partition;  // players dropped: fewer checks apply
  const soak::HeapCounts at_end = soak::heap_counts();
  if (!done && !partition) fail("the match did not finish (some peer or spectator stopped advancing)");
  if (!warm) fail("the match never warmed up");

  // ---- desyncs, states
  uint64_t desyncs = 0, compared = 0, rollbacks = 0, resimulated = 0, stalls = 0, skipped = 0, errors = 0,
           interruptions = 0, disconnects = 0, others_disconnected = 0;
  uint32_t max_depth = 0;
  Frame confirmed = INT32_MAX;
  for (uint32_t k = 0; k < kNodes; ++k) {
    Node& n = *nodes[k];
    const SessionStats s = n.session->stats();
    desyncs += n.game.desyncs;
    compared += n.session->checksums_compared();
    rollbacks += s.rollbacks;
    resimulated += s.frames_resimulated;
    max_depth = std::max(max_depth, s.max_rollback_depth);
    stalls += n.stalls;
    skipped += n.skipped;
    errors += n.errors;
    interruptions += n.game.interruptions;
    disconnects += n.game.disconnects;
    others_disconnected += n.game.others_disconnected;
    // The session's counters agree with what the game saw, and with themselves.
    const fighter::FighterGameCounters& g = n.game.game.counters();
    uint64_t histogram_rollbacks = 0, histogram_frames = 0;
    for (uint32_t d = 0; d <= uint32_t(kMaxPredictionFrames); ++d) {
      histogram_rollbacks += s.rollback_depth_histogram[d];
      histogram_frames += uint64_t(d) * s.rollback_depth_histogram[d];
    }
    if (s.frames_advanced != g.frames_advanced || s.frames_resimulated != g.frames_resimulated ||
        s.saves != g.saves || s.loads != g.loads || s.frames_advanced != uint64_t(s.current_frame) ||
        histogram_rollbacks != s.rollbacks || (s.max_rollback_depth < uint32_t(kMaxPredictionFrames) &&
                                               histogram_frames != s.frames_resimulated)) {
      std::printf("FAIL: machine %u session stats disagree with the game: advanced %" PRIu64 "/%" PRIu64
                  " (current frame %d), resimulated %" PRIu64 "/%" PRIu64 " (histogram %" PRIu64 "), saves %" PRIu64
                  "/%" PRIu64 ", loads %" PRIu64 "/%" PRIu64 ", rollbacks %" PRIu64 " (histogram %" PRIu64 ")\n",
                  k, s.frames_advanced, g.frames_advanced, s.current_frame, s.frames_resimulated, g.frames_resimulated,
                  histogram_frames, s.saves, g.saves, s.loads, g.loads, s.rollbacks, histogram_rollbacks);
      ++g_failures;
    }
    if (n.gone) continue;
    if (!n.spectator) confirmed = std::min(confirmed, n.settled);
  }
  if (desyncs != 0) fail("desync_detected events");
  if (compared == 0) fail("no checksum was ever compared between peers");
  if (errors != 0) fail("add_local_input / advance_frame returned errors");
  if (g_inject == Inject::leave) {
    // Each of the three other peers reports player 3 gone, once; nobody else is dropped.
    if (disconnects != kPeers - 1 || others_disconnected != 0) fail("the crashed peer was not dropped exactly once by each other peer");
  } else if (disconnects != 0 && !partition) {
    fail("a machine was disconnected (1-second blackouts must not drop anyone)");
  }
  uint64_t frames_compared = 0;
  bool states_equal = true;
  for (uint32_t k = 1; k < kNodes && !partition; ++k) {
    Node& n = *nodes[k];
    if (n.gone) continue;
    // Frames final on every peer (up to `frames`), and for a spectator those it ran.
    const Frame last = std::min(std::min(confirmed, frames), n.spectator ? n.session->current_frame() - 1 : frames);
    for (Frame f = 0; f <= last && size_t(f) < n.game.start_hash.size(); ++f) {
      ++frames_compared;
      if (n.game.start_hash[size_t(f)] != nodes[0]->game.start_hash[size_t(f)]) {
        std::printf("FAIL: machine %u frame %d started from state %016" PRIx64 ", machine 0 from %016" PRIx64 "\n", k,
                    f, n.game.start_hash[size_t(f)], nodes[0]->game.start_hash[size_t(f)]);
        states_equal = false;
        ++g_failures;
        break;
      }
    }
  }

  // ---- memory: the live heap after warm-up never exceeds what it was at warm-up.
  if (warm && (peak_live_after > at_warm.live_allocations || peak_bytes_after > at_warm.live_bytes)) {
    std::printf("FAIL: live heap grew after warm-up: %" PRIu64 " allocations / %" PRIu64
                " bytes at warm-up, peak %" PRIu64 " / %" PRIu64 " after, %" PRIu64 " / %" PRIu64 " at the end\n",
                at_warm.live_allocations, at_warm.live_bytes, peak_live_after, peak_bytes_after,
                at_end.live_allocations, at_end.live_bytes);
    ++g_failures;
  }

  // ---- datagrams
  const Totals t = check_datagrams(nodes);

  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf("soak frames %d seed %" PRIu64 " ticks %" PRIu64 " (%.1f s of play) wall %.2f s | confirmed %d, "
              "states compared %" PRIu64 " frames (%s), checksums compared %" PRIu64 ", desyncs %" PRIu64
              " | rollbacks %" PRIu64 " resimulated %" PRIu64 " max depth %u stalls %" PRIu64 " waits %" PRIu64
              " interruptions %" PRIu64 " | datagrams sent %" PRIu64 " received %" PRIu64 " lost %" PRIu64
              " blackout %" PRIu64 " bandwidth %" PRIu64 " duplicated %" PRIu64 " in flight %" PRIu64
              " | heap live %" PRIu64 " allocs / %" PRIu64 " B at warm-up, %" PRIu64 " / %" PRIu64
              " B at end, %" PRIu64 " allocations after warm-up | %s\n",
              frames, seed, ticks, double(ticks) * double(kTickUs) / 1e6, wall, confirmed, frames_compared,
              states_equal ? "equal" : "DIFFERENT", compared, desyncs, rollbacks, resimulated, max_depth, stalls,
              skipped, interruptions, t.sent, t.received, t.dropped_loss, t.dropped_blackout, t.dropped_bandwidth,
              t.duplicated, t.in_flight + t.queued, at_warm.live_allocations, at_warm.live_bytes,
              at_end.live_allocations, at_end.live_bytes, at_end.total_allocations - at_warm.total_allocations,
              g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}
