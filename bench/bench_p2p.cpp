// Peer-to-peer sessions: N machines (one player each, full mesh) in one process, each a
// P2PSession around the bench game, over an InMemoryNetwork with a NetworkSimulator per machine
// adding 50 ms of one-way latency (3 frames at 60 fps), driven by a virtual clock advanced
// 16.667 ms per tick. Window (max_prediction) 8, every frame saved with memcpy, 2-byte inputs
// that change like a player's (a button pressed or released, then held for 3..40 frames).
//
// Time. One benchmark iteration is one tick of every machine: the simulator's clock, poll,
// add_local_input and advance_frame, with whatever rollbacks the late remote inputs cause. The
// summary divides by the N peer-frames of a tick. The raw baseline replays, on raw rings with
// StateRing's layout, the exact sequence of saves, loads and steps the game's callbacks saw in a
// recorded stretch of the same match (recorded once, before timing; the counts are checked
// against SessionStats). So retcon - baseline = the library's own time per peer-frame: input
// queues, rollback bookkeeping, the protocol (encode, decode, checksums of datagrams) and the
// in-memory transport and simulator it runs over (a real socket would cost a system call
// instead). Desync detection is off here so the game's work is only saves, loads and steps.
//
// Bytes. The count rows run the same mesh for one simulated minute and read PeerStats: UDP
// payload (our datagram bytes) per direction per second, no loss and 10% loss.
//
// Authentication. The same 2-peer 64 B mesh with a match key (every datagram sealed and opened
// with libsodium's AEAD: AES-256-GCM where the CPU has it, else ChaCha20-Poly1305) is compared
// with a baseline that runs the unauthenticated mesh and, in the same iteration, seals and opens
// as many datagrams of the keyed mesh's mean size as the keyed mesh sends per tick: target
// keyed <= 1.2 x (unauthenticated + datagrams x one AEAD seal+open). raw/aead rows time one
// seal + open of one datagram per algorithm and size.
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_game.h"
#include "bench_registry.h"
#include "net/datagram_auth.h"
#include "retcon/p2p.h"
#include "retcon/transport.h"

namespace retcon::bench {
namespace {

constexpr int32_t kWindow = 8;
constexpr uint32_t kRingSlots = kWindow + 2;  // RollbackDriver keeps history + 2 saves
constexpr uint32_t kP2PInputSize = 2;
constexpr uint64_t kTickUs = 16667;
constexpr uint64_t kLatencyUs = 50000;
constexpr Frame kScriptFrames = 4096;  // the input script repeats after this many frames

// A player's pad: one of 12 buttons pressed or released, then held 3..40 frames.
class InputScript {
 public:
  explicit InputScript(uint32_t player) : inputs_(kScriptFrames) {
    std::mt19937 rng(1000 + player);
    uint16_t buttons = 0;
    int hold = 0;
    for (auto& in : inputs_) {
      if (--hold <= 0) {
        buttons = uint16_t(buttons ^ (1u << (rng() % 12)));
        hold = 3 + int(rng() % 38);
      }
      in = buttons;
    }
  }
  uint16_t at(Frame f) const noexcept { return inputs_[size_t(f % kScriptFrames)]; }

 private:
  std::vector<uint16_t> inputs_;
};

// What the game's callbacks did, recorded so the baseline can do the same work raw.
struct Op {
  enum Kind : uint8_t { save, load, step } kind;
  uint8_t machine;
  Frame frame;
  uint32_t a, b;  // step inputs
};

// The bench game behind retcon's callbacks, with 2-byte inputs and an optional recorder.
class P2PGame {
 public:
  P2PGame(size_t size, uint8_t machine) : game_(size), machine_(machine) {}
  size_t save_state(Frame f, uint8_t* buffer, size_t capacity) noexcept {
    if (ops_) ops_->push_back({Op::save, machine_, f, 0, 0});
    return game_.save_state(f, buffer, capacity);
  }
  void load_state(Frame f, const uint8_t* buffer, size_t length) noexcept {
    if (ops_) ops_->push_back({Op::load, machine_, f, 0, 0});
    game_.load_state(f, buffer, length);
  }
  void advance_frame(Frame f, const FrameInputs& inputs, uint32_t) noexcept {
    uint16_t a, b;
    std::memcpy(&a, inputs.player(0), sizeof a);
    std::memcpy(&b, inputs.player(1), sizeof b);
    if (ops_) ops_->push_back({Op::step, machine_, f, a, b});
    game_.step(a, b);
  }
  void on_event(const Event& e) noexcept {
    if (e.type == EventType::timesync) wait_ = e.count;
  }
  BenchGame& game() noexcept { return game_; }
  std::vector<Op>* ops_ = nullptr;
  int32_t wait_ = 0;

 private:
  BenchGame game_;
  uint8_t machine_;
};

struct Machine {
  Machine(size_t size, uint8_t index) : game(size, index), script(index) {}
  P2PGame game;
  InputScript script;
  InMemoryTransport* wire = nullptr;
  std::unique_ptr<NetworkSimulator> sim;
  std::unique_ptr<P2PSession> session;
};

class Mesh {
 public:
  bool build(uint32_t peers, size_t state_size, double loss, uint64_t seed, bool keyed = false) {
    LinkProfile link;
    link.latency_us = kLatencyUs;
    link.loss = loss;
    for (uint32_t m = 0; m < peers; ++m) {
      auto machine = std::make_unique<Machine>(state_size, uint8_t(m));
      machine->wire = net_.add_endpoint();
      machine->sim = std::make_unique<NetworkSimulator>(*machine->wire, seed * 7919 + m);
      machine->sim->set_outgoing(link);
      machines_.push_back(std::move(machine));
    }
    for (uint32_t m = 0; m < peers; ++m) {
      Machine& me = *machines_[m];
      P2PConfig c;
      c.session.num_players = peers;
      c.session.input_size = kP2PInputSize;
      c.session.max_prediction = kWindow;
      c.session.max_state_size = state_size;
      c.session.save_mode = SaveMode::every_frame;
      c.session.callbacks = bind_game(me.game);
      c.network.transport = me.sim.get();
      c.network.rng_seed = seed * 31 + m;
      c.network.has_match_key = keyed;
      for (uint32_t k = 0; k < sizeof c.network.match_key; ++k) c.network.match_key[k] = uint8_t(k + 1);
      c.desync_interval = 0;
      for (uint32_t p = 0; p < peers; ++p) {
        c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
        c.players[p].address = machines_[p]->wire->address();
      }
      if (create_p2p_session(c, &me.session) != Result::ok) return false;
    }
    // Handshake, then a warm-up that grows every queue to its steady-state size.
    for (int t = 0; t < 600; ++t) tick();
    for (auto& m : machines_)
      if (!m->session->running() || m->session->current_frame() < 300) return false;
    return errors_ == 0;
  }

  // One tick on every machine: poll, this frame's input, advance (obeying time-sync advice).
  void tick() noexcept {
    now_ += kTickUs;
    for (uint32_t m = 0; m < machines_.size(); ++m) {
      Machine& me = *machines_[m];
      me.sim->set_time(now_);
      me.session->poll(now_);
      if (!me.session->running()) continue;
      if (me.game.wait_ > 0) {
        --me.game.wait_;
        continue;
      }
      const Frame f = me.session->current_frame();
      const uint16_t in = me.script.at(f);
      const Result r = me.session->add_local_input(PlayerIndex(m), &in, sizeof in);
      if (r != Result::ok && r != Result::input_already_added) ++errors_;
      const Result a = me.session->advance_frame();
      if (a != Result::ok && a != Result::prediction_limit) ++errors_;
    }
  }

  SessionStats total_stats() const {
    SessionStats sum{};
    for (auto& m : machines_) {
      const SessionStats s = m->session->stats();
      sum.saves += s.saves;
      sum.loads += s.loads;
      sum.frames_advanced += s.frames_advanced;
      sum.frames_resimulated += s.frames_resimulated;
      sum.rollbacks += s.rollbacks;
      sum.frames_stalled += s.frames_stalled;
    }
    return sum;
  }

  void record(std::vector<Op>* ops) {
    for (auto& m : machines_) m->game.ops_ = ops;
  }

  uint32_t peers() const noexcept { return uint32_t(machines_.size()); }
  Machine& machine(uint32_t m) { return *machines_[m]; }
  uint64_t errors() const noexcept { return errors_; }
  uint64_t now() const noexcept { return now_; }

 private:
  InMemoryNetwork net_;
  std::vector<std::unique_ptr<Machine>> machines_;
  uint64_t now_ = 0;
  uint64_t errors_ = 0;
};

// A recorded stretch of a match: the ops of each tick, replayed by the baseline.
struct Recording {
  std::vector<Op> ops;
  std::vector<size_t> tick_end;  // ops[tick_end[t-1] .. tick_end[t]) belong to tick t
  SessionStats stats{};          // SessionStats counted over the same ticks
};

constexpr int kRecordedTicks = 1200;

bool record_match(uint32_t peers, size_t size, Recording* out) {
  Mesh mesh;
  if (!mesh.build(peers, size, 0.0, 1)) return false;
  out->ops.reserve(size_t(kRecordedTicks) * peers * 16);
  out->tick_end.reserve(kRecordedTicks);
  const SessionStats before = mesh.total_stats();
  mesh.record(&out->ops);
  for (int t = 0; t < kRecordedTicks; ++t) {
    mesh.tick();
    out->tick_end.push_back(out->ops.size());
  }
  mesh.record(nullptr);
  const SessionStats after = mesh.total_stats();
  out->stats.saves = after.saves - before.saves;
  out->stats.loads = after.loads - before.loads;
  out->stats.frames_advanced = after.frames_advanced - before.frames_advanced;
  out->stats.frames_resimulated = after.frames_resimulated - before.frames_resimulated;
  out->stats.rollbacks = after.rollbacks - before.rollbacks;
  out->stats.frames_stalled = after.frames_stalled - before.frames_stalled;
  return mesh.errors() == 0;
}

std::string mesh_name(uint32_t peers, size_t size) {
  return std::to_string(peers) + "peers/" + size_name(size);
}

void p2p_session(benchmark::State& state, uint32_t peers, size_t size, bool keyed = false) {
  Mesh mesh;
  if (!mesh.build(peers, size, 0.0, 1, keyed)) return state.SkipWithError("p2p mesh did not start");
  const SessionStats before = mesh.total_stats();
  uint64_t ticks = 0;
  run_timed(state, peers, [&] {
    mesh.tick();
    ++ticks;
  });
  const SessionStats after = mesh.total_stats();
  const double frames = double(ticks) * peers;
  if (frames > 0) {
    state.counters["saves/pf"] = double(after.saves - before.saves) / frames;
    state.counters["loads/pf"] = double(after.loads - before.loads) / frames;
    state.counters["steps/pf"] =
        double(after.frames_advanced - before.frames_advanced + after.frames_resimulated -
               before.frames_resimulated) / frames;
  }
  if (mesh.errors() != 0) state.SkipWithError("a session call failed");
}

// The recorded saves, loads and steps, raw, on one game and ring per machine.
void p2p_raw(benchmark::State& state, const Recording* rec, uint32_t peers, size_t size) {
  std::vector<std::unique_ptr<BenchGame>> games;
  std::vector<std::unique_ptr<RawRing>> rings;
  for (uint32_t m = 0; m < peers; ++m) {
    games.push_back(std::make_unique<BenchGame>(size));
    rings.push_back(std::make_unique<RawRing>(kRingSlots, size));
  }
  size_t tick = 0;
  run_timed(state, peers, [&] {
    const size_t begin = tick == 0 ? 0 : rec->tick_end[tick - 1];
    const size_t end = rec->tick_end[tick];
    for (size_t i = begin; i < end; ++i) {
      const Op& op = rec->ops[i];
      BenchGame& g = *games[op.machine];
      switch (op.kind) {
        case Op::save: g.copy_out(rings[op.machine]->slot(op.frame)); break;
        case Op::load: g.copy_in(rings[op.machine]->slot(op.frame), size); break;
        case Op::step: g.step(op.a, op.b); break;
      }
    }
    benchmark::ClobberMemory();
    tick = tick + 1 == rec->tick_end.size() ? 0 : tick + 1;
  });
}

void register_mesh(uint32_t peers, size_t size, TargetKind kind, double target) {
  // Recordings live for the whole run: the baseline benchmark reads them.
  static std::vector<std::unique_ptr<Recording>> recordings;
  auto rec = std::make_unique<Recording>();
  const bool recorded = record_match(peers, size, rec.get());
  size_t saves = 0, loads = 0, steps = 0;
  for (const Op& op : rec->ops) {
    saves += op.kind == Op::save;
    loads += op.kind == Op::load;
    steps += op.kind == Op::step;
  }
  const SessionStats& s = rec->stats;
  const bool ok = recorded && saves == s.saves && loads == s.loads &&
                  steps == s.frames_advanced + s.frames_resimulated && !rec->tick_end.empty();
  const double pf = double(kRecordedTicks) * peers;
  char detail[256];
  std::snprintf(detail, sizeof detail,
                "recorded ops = SessionStats over %d ticks: per peer-frame %.2f saves, %.2f loads, "
                "%.2f steps, %.3f rollbacks, %.3f stalls",
                kRecordedTicks, double(saves) / pf, double(loads) / pf, double(steps) / pf,
                double(s.rollbacks) / pf, double(s.frames_stalled) / pf);
  add_work_check({"p2p " + mesh_name(peers, size), ok, detail});
  if (!ok) return;

  const std::string name = "p2p_session/" + mesh_name(peers, size);
  const std::string raw = "raw/p2p_replay/" + mesh_name(peers, size);
  const bool large = size >= (size_t{1} << 20);
  add_benchmark(name, [peers, size](benchmark::State& st) { p2p_session(st, peers, size); }, large);
  const Recording* r = rec.get();
  add_benchmark(raw, [r, peers, size](benchmark::State& st) { p2p_raw(st, r, peers, size); }, large);
  recordings.push_back(std::move(rec));

  Comparison row;
  row.label = "p2p " + std::to_string(peers) + " peers, 50 ms, " + size_name(size);
  row.measured = name;
  row.baseline = raw;
  row.unit = "ns/peer-frame";
  row.kind = kind;
  row.target = target;
  add_comparison(row);
}

// One datagram's AEAD work, as the keyed mesh does it: sealed by its sender, opened by its
// receiver. A pair of bound DatagramAuth, one per side; `plain` bytes of plain datagram.
class AeadPair {
 public:
  AeadPair(bool aes, size_t plain) : plain_(plain < detail::kDataHeaderSize ? detail::kDataHeaderSize : plain) {
    uint8_t key[detail::kMatchKeySize];
    for (size_t k = 0; k < sizeof key; ++k) key[k] = uint8_t(k + 1);
    sender_.configure(key, aes);
    receiver_.configure(key, aes);
    sender_.bind(1, 2, receiver_.offers_aes256gcm());
    receiver_.bind(2, 1, sender_.offers_aes256gcm());
  }
  detail::AeadAlgorithm algorithm() const { return sender_.algorithm(); }
  // Seals and opens one input_ack-typed datagram of the plain size. False if it did not open.
  bool seal_open() noexcept {
    std::memset(buffer_, 0, plain_);
    buffer_[0] = detail::kMagic0;
    buffer_[1] = detail::kMagic1;
    buffer_[2] = detail::kProtocolVersion;
    buffer_[3] = uint8_t(detail::MessageType::keep_alive);
    std::memcpy(buffer_ + 4, &sequence_, 2);  // a data header holds the low 16 bits
    const uint32_t sequence = sequence_++;
    const size_t n = sender_.seal(buffer_, plain_, sizeof buffer_, rng_, sequence);
    detail::Message m;
    // The body is zeros, not a keep-alive's empty body: it authenticates, then fails to decode
    // (malformed), after the whole AEAD work is done; that is the cost measured.
    const detail::DecodeError e = receiver_.open(buffer_, n, &m, sequence);
    return n != 0 && e != detail::DecodeError::bad_checksum;
  }

 private:
  detail::DatagramAuth sender_, receiver_;
  detail::Xoshiro256 rng_{1};
  size_t plain_;
  uint32_t sequence_ = 0;
  uint8_t buffer_[detail::kMaxDatagramSize] = {};
};

void aead_seal_open(benchmark::State& state, bool aes, size_t plain) {
  AeadPair pair(aes, plain);
  if (aes && pair.algorithm() != detail::AeadAlgorithm::aes256gcm)
    return state.SkipWithError("no AES-256-GCM on this CPU");
  bool ok = true;
  run_timed(state, 1, [&] { ok &= pair.seal_open(); });
  if (!ok) state.SkipWithError("a sealed datagram did not open");
}

// The keyed mesh's traffic: datagrams per tick (all machines) and their mean plain size.
bool keyed_traffic(double* datagrams_per_tick, size_t* mean_plain) {
  Mesh mesh;
  if (!mesh.build(2, kSmallState, 0.0, 1, true)) return false;
  auto totals = [&](uint64_t* bytes, uint64_t* datagrams) {
    *bytes = *datagrams = 0;
    for (uint32_t m = 0; m < 2; ++m) {
      PeerStats s{};
      mesh.machine(m).session->peer_stats(PlayerIndex(1 - m), &s);
      *bytes += s.bytes_sent;
      *datagrams += s.datagrams_sent;
    }
  };
  uint64_t b0, d0, b1, d1;
  totals(&b0, &d0);
  constexpr int kTicks = 1200;
  for (int t = 0; t < kTicks; ++t) mesh.tick();
  totals(&b1, &d1);
  if (d1 == d0) return false;
  *datagrams_per_tick = double(d1 - d0) / kTicks;
  // Sealed data datagrams carry a 16-byte tag instead of the 4-byte checksum.
  *mean_plain = size_t(double(b1 - b0) / double(d1 - d0) + 0.5) - detail::kSealedOverhead;
  return mesh.errors() == 0;
}

// The unauthenticated mesh plus, each tick, the AEAD work of the keyed mesh's datagrams.
void p2p_plus_aead(benchmark::State& state, double datagrams_per_tick, size_t plain) {
  Mesh mesh;
  if (!mesh.build(2, kSmallState, 0.0, 1)) return state.SkipWithError("p2p mesh did not start");
  AeadPair pair(true, plain);
  double owed = 0;
  bool ok = true;
  run_timed(state, 2, [&] {
    mesh.tick();
    for (owed += datagrams_per_tick; owed >= 1; owed -= 1) ok &= pair.seal_open();
  });
  if (!ok || mesh.errors() != 0) state.SkipWithError("a session call or an AEAD call failed");
}

void register_authenticated() {
  double per_tick = 0;
  size_t plain = 0;
  const bool ok = keyed_traffic(&per_tick, &plain);
  char detail_text[160];
  std::snprintf(detail_text, sizeof detail_text,
                "keyed 2-peer mesh: %.2f datagrams per tick (both machines), mean plain size %zu B",
                per_tick, plain);
  add_work_check({"p2p authenticated 2peers/64B", ok, detail_text});
  if (!ok) return;
  for (const size_t size : {size_t(24), size_t(40), size_t(200), size_t(1200 - detail::kSealedOverhead)}) {
    for (const bool aes : {false, true}) {
      add_benchmark(std::string("raw/aead_seal_open/") + (aes ? "aes256gcm/" : "chacha20poly1305/") +
                        std::to_string(size) + "B",
                    [aes, size](benchmark::State& st) { aead_seal_open(st, aes, size); }, false);
    }
  }
  const std::string name = "p2p_session/" + mesh_name(2, kSmallState) + "/key";
  const std::string base = "raw/p2p_plus_aead/" + mesh_name(2, kSmallState);
  add_benchmark(name, [](benchmark::State& st) { p2p_session(st, 2, kSmallState, true); }, false);
  add_benchmark(base, [per_tick, plain](benchmark::State& st) { p2p_plus_aead(st, per_tick, plain); },
                false);
  Comparison row;
  row.label = "p2p 2 peers, 50 ms, 64B, match key vs no key + AEAD per datagram";
  row.measured = name;
  row.baseline = base;
  row.unit = "ns/peer-frame";
  row.kind = TargetKind::max_ratio;
  row.target = 1.2;
  add_comparison(row);
}

// Bytes one machine sends to one peer over a simulated minute (both directions averaged).
void count_bytes(uint32_t peers, double loss, bool keyed = false) {
  Mesh mesh;
  const std::string what = std::to_string(peers) + " peers, " +
                           (loss > 0 ? std::to_string(int(loss * 100)) + "% loss" : "no loss") +
                           (keyed ? ", match key" : "");
  if (!mesh.build(peers, kSmallState, loss, 5, keyed)) {
    add_work_check({"p2p bytes, " + what, false, "mesh did not start"});
    return;
  }
  auto totals = [&](uint64_t* bytes, uint64_t* datagrams) {
    *bytes = *datagrams = 0;
    for (uint32_t m = 0; m < peers; ++m) {
      for (uint32_t p = 0; p < peers; ++p) {
        if (p == m) continue;
        PeerStats s{};
        mesh.machine(m).session->peer_stats(PlayerIndex(p), &s);
        *bytes += s.bytes_sent;
        *datagrams += s.datagrams_sent;
      }
    }
  };
  uint64_t bytes0, datagrams0, bytes1, datagrams1;
  totals(&bytes0, &datagrams0);
  const uint64_t start = mesh.now();
  const SessionStats stats0 = mesh.total_stats();
  for (int t = 0; t < 60 * 60; ++t) mesh.tick();
  totals(&bytes1, &datagrams1);
  const SessionStats stats1 = mesh.total_stats();
  const double seconds = double(mesh.now() - start) / 1e6;
  const double directions = double(peers) * (peers - 1);
  const double bps = double(bytes1 - bytes0) / seconds / directions;
  const double dps = double(datagrams1 - datagrams0) / seconds / directions;
  const std::string label = "p2p wire, " + what;
  add_count_row({label + ": payload", bps, "B/s per direction", peers == 2 && loss == 0 && !keyed ? 1000.0 : 0.0});
  add_count_row({label + ": datagrams", dps, "per s per direction"});
  add_count_row({label + ": + UDP/IPv4 headers", bps + 28 * dps, "B/s per direction"});
  const double frames = double(stats1.frames_advanced - stats0.frames_advanced);
  add_count_row({label + ": stalls", double(stats1.frames_stalled - stats0.frames_stalled) / frames * 1000,
                 "per 1000 frames"});
  add_count_row({label + ": rollbacks", double(stats1.rollbacks - stats0.rollbacks) / frames * 1000,
                 "per 1000 frames"});
  add_work_check({"p2p bytes, " + what, mesh.errors() == 0, "one simulated minute, no session errors"});
}

}  // namespace

void register_p2p_benchmarks() {
  register_mesh(2, kSmallState, TargetKind::max_difference_ns, 500);
  register_mesh(2, kLargeState, TargetKind::max_ratio, 1.15);
  register_mesh(4, kSmallState, TargetKind::none, 0);
  register_mesh(8, kSmallState, TargetKind::none, 0);
  // Scaling: per-peer-frame cost with N peers over that with 2. In a full mesh each machine
  // runs an endpoint for each of its N - 1 peers and has N - 1 remote players to predict (more
  // rollbacks), so cost linear in what a machine serves is a ratio of (N - 1) / (2 - 1).
  for (uint32_t peers : {4u, 8u}) {
    Comparison row;
    row.label = "p2p " + std::to_string(peers) + " vs 2 peers (per peer-frame)";
    row.measured = "p2p_session/" + mesh_name(peers, kSmallState);
    row.baseline = "p2p_session/" + mesh_name(2, kSmallState);
    row.unit = "ns/peer-frame (ratio = growth)";
    row.kind = TargetKind::max_ratio;
    row.target = peers - 1.0;
    add_comparison(row);
  }
  register_authenticated();
  count_bytes(2, 0.0);
  count_bytes(2, 0.0, true);
  count_bytes(2, 0.10);
  count_bytes(4, 0.0);
  count_bytes(8, 0.0);
}

}  // namespace retcon::bench
