// retcon_perf: the scenarios of docs/PERFORMANCE.md as one small program, meant to run under
// callgrind (scripts/bench does that) or, for the time and syscall rows, on its own.
//
//   retcon_perf p2p PEERS STATE_BYTES [key] [late]
//                                             in-memory mesh, 50 ms one way, window 8 (key: a
//                                             match key; prints datagrams per peer-frame and
//                                             their mean plain size for the AEAD baseline;
//                                             late: measured from frame ~20,000, over five
//                                             minutes in, where start frames take 3 bytes)
//   retcon_perf aead aes|chacha PLAIN COUNT   COUNT datagrams of PLAIN bytes sealed and opened
//   retcon_perf authtime REPS                 interleaved timing: keyed 2-peer mesh vs the
//                                             unkeyed one + its datagrams' AEAD work (medians)
//   retcon_perf local STATE_BYTES             local session, every frame saved
//   retcon_perf synctest D N STATE_BYTES      sync test, check_distance D, check_interval N
//   retcon_perf raw STATE_BYTES               1 save + 1 load + 1 XXH3 + 1 step per frame, no retcon
//   retcon_perf udp PEERS FRAMES [calls]      real UDP on loopback, paced at 60 fps (calls: the
//                                             recvmmsg receive path, not the completion ring)
//   retcon_perf time REPS STATE_BYTES D       interleaved timing: sync test d=D vs raw (median, spread)
//
// Instruction counts. Collection is off until the measured frames start (run callgrind with
// --collect-atstart=no) and is switched off inside every game callback and, in the in-memory
// P2P rows, inside the network's calls (the NetworkSimulator and InMemoryTransport stand in for
// the kernel's UDP stack: send, receive, flush, the simulator's clock), so the count is the
// library's own work: retcon's code from the session API down to the Transport interface, the
// checksums it takes, libc calls it makes. RETCON_PERF_COUNT_NETWORK=1 counts the network too. The program prints `frames=` (peer-frames measured) and
// `allocations=` (heap allocations during them); scripts/bench divides callgrind's total by frames.
// Outside valgrind the client requests are a few no-op instructions.
#include <time.h>
#include <valgrind/callgrind.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.h"
#include "net/datagram_auth.h"
#include "retcon/p2p.h"
#include "retcon/session.h"
#include "retcon/transport.h"

namespace {

using namespace retcon;

constexpr uint64_t kTickUs = 16667;
constexpr int32_t kWindow = 8;
constexpr int kWarmupFrames = 600;
constexpr int kMeasuredFrames = 3000;
// Big states: a 1 MiB frame is millions of instructions and callgrind runs ~50x slower than
// the CPU, so 3,600 frames took over half an hour on a shared machine. The count per frame of a
// memcpy/XXH3-bound frame is the same over 100 frames (the warm-up fills the ring first).
constexpr size_t kBigState = 64 * 1024;
int warmup_frames(size_t size) { return size >= kBigState ? 20 : kWarmupFrames; }
int measured_frames(size_t size) { return size >= kBigState ? 100 : kMeasuredFrames; }

// What is counted. Callgrind's client request only flips collection; the scopes below flip it
// in pairs and nest (a game callback or a network call inside a session call inside the
// measured frames). Each flip costs a few counted instructions, so they are kept to one test.
//  - Only the library's calls: collection is on inside the session's API calls (poll,
//    running, current_frame, add_local_input, advance_frame) of the measured frames, not in the
//    benchmark's own loop around them (the pad, the mesh's bookkeeping, the simulator's clock).
//    RETCON_PERF_COUNT_HARNESS=1 counts the loop too (the method of rounds 3-5).
//  - Off inside every game callback unless RETCON_PERF_COUNT_GAME is set (then the count is
//    everything a frame costs), and inside the network stand-in's calls unless
//    RETCON_PERF_COUNT_NETWORK is set.
bool g_measuring = false;
bool g_count_game = false;
bool g_count_network = false;
bool g_count_harness = false;
// Flips collection for its lifetime when `flip` (evaluated once).
class FlipScope {
 public:
  explicit FlipScope(bool flip) noexcept : flip_(flip) {
    if (flip_) CALLGRIND_TOGGLE_COLLECT;
  }
  ~FlipScope() {
    if (flip_) CALLGRIND_TOGGLE_COLLECT;
  }
  FlipScope(const FlipScope&) = delete;
  FlipScope& operator=(const FlipScope&) = delete;

 private:
  const bool flip_;
};
// Inside a counted call: off for the game's callbacks and the network's calls.
struct GameScope : FlipScope {
  GameScope() noexcept : FlipScope(g_measuring && !g_count_game) {}
};
struct NetworkScope : FlipScope {
  NetworkScope() noexcept : FlipScope(g_measuring && !g_count_network) {}
};
// Around each call into a session: on (unless the whole loop is counted anyway).
struct LibraryScope : FlipScope {
  LibraryScope() noexcept : FlipScope(g_measuring && !g_count_harness) {}
};
// The network's calls the benchmark makes itself, outside any session call: off only when the
// loop around the calls is counted.
struct HarnessNetworkScope : FlipScope {
  HarnessNetworkScope() noexcept : FlipScope(g_measuring && g_count_harness && !g_count_network) {}
};
// The session's Transport: forwards every call to the simulator outside the count. What the
// session does around the calls (composing, sealing, opening, decoding) stays counted.
// FNV-1a over every datagram the session rows send, in order (printed as datagram_fnv=): a
// change that must keep every datagram's bytes keeps this number.
uint64_t g_datagram_fnv = 14695981039346656037ull;
void fold_datagram(const uint8_t* data, size_t length) {
  for (size_t i = 0; i < length; ++i) g_datagram_fnv = (g_datagram_fnv ^ data[i]) * 1099511628211ull;
  g_datagram_fnv = (g_datagram_fnv ^ length) * 1099511628211ull;
}

class UncountedNetwork final : public Transport {
 public:
  explicit UncountedNetwork(NetworkSimulator& sim) : sim_(sim) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    NetworkScope scope;
    fold_datagram(data, length);
    return sim_.send(to, data, length);
  }
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    NetworkScope scope;
    return sim_.receive(from, buffer, capacity, length);
  }
  void flush() override {
    NetworkScope scope;
    sim_.flush();
  }

 private:
  NetworkSimulator& sim_;
};
// `everything`: rows whose loop is the work itself (raw, aead) count it all; the session rows
// count inside LibraryScope only, unless RETCON_PERF_COUNT_HARNESS is set.
bool g_collecting_all = false;
void start_measuring(bool everything = false) {
  g_measuring = true;
  g_collecting_all = everything || g_count_harness;
  if (g_collecting_all) CALLGRIND_TOGGLE_COLLECT;
}
void stop_measuring() {
  if (g_collecting_all) CALLGRIND_TOGGLE_COLLECT;
  g_measuring = false;
}

// A pad that changes every 1..7 frames (a button pressed or released).
class Pad {
 public:
  explicit Pad(uint32_t seed) : inputs_(4096) {
    std::mt19937 rng(seed);
    uint32_t buttons = 0;
    int hold = 0;
    for (auto& in : inputs_) {
      if (--hold <= 0) {
        buttons ^= 1u << (rng() % 12);
        hold = 1 + int(rng() % 7);
      }
      in = buttons;
    }
  }
  uint32_t at(Frame f) const noexcept { return inputs_[size_t(f) % inputs_.size()]; }

 private:
  std::vector<uint32_t> inputs_;
};

// The game: a state of `size` bytes saved and loaded with memcpy; a step adds the inputs.
class Game {
 public:
  explicit Game(size_t size) : state_(size) {
    for (size_t i = 0; i < size; ++i) state_[i] = uint8_t(i * 131u + 17u);
  }
  size_t save_state(Frame, uint8_t* buffer, size_t capacity) noexcept {
    GameScope scope;
    if (state_.size() <= capacity) std::memcpy(buffer, state_.data(), state_.size());
    return state_.size();
  }
  void load_state(Frame, const uint8_t* buffer, size_t length) noexcept {
    GameScope scope;
    std::memcpy(state_.data(), buffer, std::min(length, state_.size()));
  }
  void advance_frame(Frame, const FrameInputs& inputs, uint32_t) noexcept {
    GameScope scope;
    step(inputs);
  }
  void step(const FrameInputs& inputs) noexcept {
    for (uint32_t p = 0; p < inputs.player_count; ++p) {
      uint32_t word, in = 0;
      std::memcpy(&in, inputs.player(PlayerIndex(p)), std::min<size_t>(inputs.input_size, 4));
      std::memcpy(&word, state_.data() + 4 * (p % 16), 4);
      word += in;
      std::memcpy(state_.data() + 4 * (p % 16), &word, 4);
    }
  }
  void on_event(const Event& e) noexcept {
    if (e.type == EventType::timesync) wait_ = e.count;
  }
  std::vector<uint8_t> state_;
  int32_t wait_ = 0;
};

void print_result(const char* scenario, uint64_t frames, uint64_t allocations,
                  const std::string& extra = "") {
  std::printf("scenario=%s frames=%llu allocations=%llu%s%s\n", scenario,
              static_cast<unsigned long long>(frames), static_cast<unsigned long long>(allocations),
              extra.empty() ? "" : " ", extra.c_str());
}

// ---------------------------------------------------------------------------------------------
// P2P over an in-memory network with 50 ms one way (3 frames at 60 fps).

struct Machine {
  Machine(size_t size, uint32_t index) : game(size), pad(1000 + index) {}
  Game game;
  Pad pad;
  InMemoryTransport* wire = nullptr;
  std::unique_ptr<NetworkSimulator> sim;
  std::unique_ptr<UncountedNetwork> network;
  std::unique_ptr<P2PSession> session;
};

// The mesh of `peers` machines, one player each; with `key`, every datagram is sealed with the
// match key (the AEAD the CPU does fastest: AES-256-GCM with AES-NI, else ChaCha20-Poly1305).
class Mesh {
 public:
  bool build(uint32_t peers, size_t size, bool key, int warmup) {
    LinkProfile link;
    link.latency_us = 50000;
    for (uint32_t m = 0; m < peers; ++m) {
      auto machine = std::make_unique<Machine>(size, m);
      machine->wire = net_.add_endpoint();
      machine->sim = std::make_unique<NetworkSimulator>(*machine->wire, 7919 + m);
      machine->sim->set_outgoing(link);
      machine->network = std::make_unique<UncountedNetwork>(*machine->sim);
      machines_.push_back(std::move(machine));
    }
    for (uint32_t m = 0; m < peers; ++m) {
      Machine& me = *machines_[m];
      P2PConfig c;
      c.session.num_players = peers;
      c.session.input_size = 4;
      c.session.max_prediction = kWindow;
      c.session.max_state_size = size;
      c.session.save_mode = SaveMode::every_frame;
      c.session.callbacks = bind_game(me.game);
      c.network.transport = me.network.get();
      c.network.rng_seed = 31 + m;
      c.network.has_match_key = key;
      for (uint32_t k = 0; k < sizeof c.network.match_key; ++k) c.network.match_key[k] = uint8_t(k + 1);
      c.desync_interval = 0;
      for (uint32_t p = 0; p < peers; ++p) {
        c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
        c.players[p].address = machines_[p]->wire->address();
      }
      if (create_p2p_session(c, &me.session) != Result::ok) {
        std::fprintf(stderr, "p2p: create failed\n");
        return false;
      }
    }
    for (int t = 0; t < warmup; ++t) tick();
    for (auto& m : machines_) {
      if (!m->session->running() || m->session->current_frame() < warmup / 2) {
        std::fprintf(stderr, "p2p: the match did not start\n");
        return false;
      }
    }
    return true;
  }
  // One tick of every machine; returns the peer-frames advanced.
  uint64_t tick() {
    uint64_t frames = 0;
    now_ += kTickUs;
    for (size_t m = 0; m < machines_.size(); ++m) {
      Machine& me = *machines_[m];
      {
        HarnessNetworkScope scope;
        me.sim->set_time(now_);
      }
      bool running;
      Frame frame;
      {
        LibraryScope library;
        me.session->poll(now_);
        running = me.session->running();
        frame = me.session->current_frame();
      }
      if (!running) continue;
      if (me.game.wait_ > 0) {
        --me.game.wait_;
        continue;
      }
      const uint32_t in = me.pad.at(frame);
      Result r, a;
      {
        LibraryScope library;
        r = me.session->add_local_input(PlayerIndex(m), &in, sizeof in);
        a = me.session->advance_frame();
      }
      if (r != Result::ok && r != Result::input_already_added) ++errors;
      if (a == Result::ok) ++frames;
      else if (a != Result::prediction_limit) ++errors;
    }
    return frames;
  }
  // Datagrams and bytes every machine sent to every peer since the start.
  void traffic(uint64_t* datagrams, uint64_t* bytes) const {
    *datagrams = *bytes = 0;
    for (size_t m = 0; m < machines_.size(); ++m) {
      for (size_t p = 0; p < machines_.size(); ++p) {
        PeerStats s{};
        if (p == m || machines_[m]->session->peer_stats(PlayerIndex(p), &s) != Result::ok) continue;
        *datagrams += s.datagrams_sent;
        *bytes += s.bytes_sent;
      }
    }
  }
  const std::vector<std::unique_ptr<Machine>>& machines() const { return machines_; }
  uint64_t errors = 0;

 private:
  InMemoryNetwork net_;
  std::vector<std::unique_ptr<Machine>> machines_;
  uint64_t now_ = 0;
};

const char* session_aead() { return detail::aes256gcm_available() ? "aes" : "chacha"; }

// A match's frames from 16,384 on (about 4.5 minutes at 60 fps) have 3-byte start frames on the
// wire; `late` measures there (the usual datagram's paths must cover them too).
constexpr int kLateWarmupFrames = 20000;
int run_p2p(uint32_t peers, size_t size, bool key, bool late) {
  Mesh mesh;
  if (!mesh.build(peers, size, key, late ? kLateWarmupFrames : kWarmupFrames)) return 1;
  uint64_t frames = 0, datagrams0 = 0, bytes0 = 0, datagrams1 = 0, bytes1 = 0;
  mesh.traffic(&datagrams0, &bytes0);
  const uint64_t allocations = bench::allocation_count();
  start_measuring();
  for (int t = 0; t < kMeasuredFrames; ++t) frames += mesh.tick();
  stop_measuring();
  const uint64_t allocated = bench::allocation_count() - allocations;
  mesh.traffic(&datagrams1, &bytes1);
  if (mesh.errors != 0) {
    std::fprintf(stderr, "p2p: %llu session calls failed\n", static_cast<unsigned long long>(mesh.errors));
    return 1;
  }
  uint64_t rollbacks = 0, resimulated = 0;
  for (auto& m : mesh.machines()) {
    rollbacks += m->session->stats().rollbacks;
    resimulated += m->session->stats().frames_resimulated;
  }
  // What the AEAD baseline needs: datagrams each peer-frame sends (each is sealed once and
  // opened once) and their mean size before sealing (a sealed datagram's tag replaces the
  // plain one's 4-byte checksum: kSealedOverhead more bytes).
  const double sent = double(datagrams1 - datagrams0);
  const double per_frame = frames ? sent / double(frames) : 0.0;
  const double mean = sent > 0 ? double(bytes1 - bytes0) / sent - (key ? double(detail::kSealedOverhead) : 0.0) : 0.0;
  char extra[240];
  std::snprintf(extra, sizeof extra,
                "rollbacks=%llu resimulated=%llu datagrams_per_peer_frame=%.4f mean_plain_bytes=%.0f aead=%s "
                "datagram_fnv=%016llx",
                static_cast<unsigned long long>(rollbacks), static_cast<unsigned long long>(resimulated),
                per_frame, mean, key ? session_aead() : "none", static_cast<unsigned long long>(g_datagram_fnv));
  print_result("p2p", frames, allocated, extra);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// One datagram's AEAD work as a keyed match does it: sealed by its sender, opened by its
// receiver (a pair of bound DatagramAuth, the same key), `plain` bytes before sealing.

class AeadPair {
 public:
  AeadPair(bool aes, size_t plain) : plain_(std::clamp(plain, detail::kDataHeaderSize, detail::kMaxDatagramSize - detail::kSealedOverhead)) {
    uint8_t key[detail::kMatchKeySize];
    for (size_t k = 0; k < sizeof key; ++k) key[k] = uint8_t(k + 1);
    ok_ = sender_.configure(key, aes) && receiver_.configure(key, aes);
    sender_.bind(1, 2, receiver_.offers_aes256gcm());
    receiver_.bind(2, 1, sender_.offers_aes256gcm());
  }
  const char* algorithm() const { return detail::aead_algorithm_name(sender_.algorithm()); }
  // Seals and opens one datagram; false if it did not open.
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
    // The zero body authenticates, then does not decode (malformed) once the AEAD work is done.
    return ok_ && n != 0 && receiver_.open(buffer_, n, &m, sequence) != detail::DecodeError::bad_checksum;
  }

 private:
  detail::DatagramAuth sender_, receiver_;
  detail::Xoshiro256 rng_{1};
  size_t plain_;
  bool ok_ = false;
  uint32_t sequence_ = 0;
  uint8_t buffer_[detail::kMaxDatagramSize] = {};
};

int run_aead(bool aes, size_t plain, int count) {
  AeadPair pair(aes, plain);
  for (int i = 0; i < 100; ++i) pair.seal_open();  // libsodium's one-time setup out of the count
  bool ok = true;
  const uint64_t allocations = bench::allocation_count();
  start_measuring(true);
  for (int i = 0; i < count; ++i) ok &= pair.seal_open();
  stop_measuring();
  const uint64_t allocated = bench::allocation_count() - allocations;
  if (!ok) {
    std::fprintf(stderr, "aead: a sealed datagram did not open\n");
    return 1;
  }
  print_result("aead", uint64_t(count), allocated,
               std::string("algorithm=") + pair.algorithm() + " plain_bytes=" + std::to_string(plain));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Local session and sync test, all players local.

SessionConfig local_config(Game& game, size_t size, int32_t prediction) {
  SessionConfig c;
  c.num_players = 2;
  c.input_size = 4;
  c.max_prediction = prediction;
  c.max_state_size = size;
  c.save_mode = SaveMode::every_frame;
  c.callbacks = bind_game(game);
  return c;
}

int drive(Session& session, const char* name, size_t size) {
  Pad pad0(1), pad1(2);
  uint64_t errors = 0;
  auto frame = [&] {
    Frame f;
    {
      LibraryScope library;
      f = session.current_frame();
    }
    const uint32_t a = pad0.at(f), b = pad1.at(f);
    LibraryScope library;
    if (session.add_local_input(0, &a, sizeof a) != Result::ok) ++errors;
    if (session.add_local_input(1, &b, sizeof b) != Result::ok) ++errors;
    if (session.advance_frame() != Result::ok) ++errors;
  };
  for (int i = 0; i < warmup_frames(size); ++i) frame();
  const uint64_t allocations = bench::allocation_count();
  start_measuring();
  for (int i = 0; i < measured_frames(size); ++i) frame();
  stop_measuring();
  const uint64_t allocated = bench::allocation_count() - allocations;
  if (errors != 0) {
    std::fprintf(stderr, "%s: %llu session calls failed\n", name,
                 static_cast<unsigned long long>(errors));
    return 1;
  }
  const SessionStats s = session.stats();
  print_result(name, uint64_t(measured_frames(size)), allocated,
               "saves=" + std::to_string(s.saves) + " loads=" + std::to_string(s.loads) +
                   " checksums=" + std::to_string(s.checksums) +
                   " resimulated=" + std::to_string(s.frames_resimulated));
  return 0;
}

int run_local(size_t size) {
  Game game(size);
  std::unique_ptr<Session> session;
  if (create_local_session(local_config(game, size, kWindow), &session) != Result::ok) return 1;
  return drive(*session, "local", size);
}

Result make_sync_test(Game& game, size_t size, int32_t distance, int32_t interval,
                      std::unique_ptr<Session>* out) {
  SyncTestConfig c;
  c.session = local_config(game, size, std::max(distance, 1));
  c.check_distance = distance;
  c.check_interval = interval;
  return create_sync_test_session(c, out);
}

int run_sync_test(int32_t distance, int32_t interval, size_t size) {
  Game game(size);
  std::unique_ptr<Session> session;
  if (make_sync_test(game, size, distance, interval, &session) != Result::ok) {
    std::fprintf(stderr, "synctest: create failed\n");
    return 1;
  }
  return drive(*session, "synctest", size);
}

// The work a sync test at d=1 cannot avoid per frame: save, load, hash, step; nothing else.
struct RawFrame {
  explicit RawFrame(size_t size) : game(size), slot(size) {}
  void run(Frame f, const Pad& a, const Pad& b) noexcept {
    std::memcpy(slot.data(), game.state_.data(), slot.size());
    sum ^= XXH3_64bits(slot.data(), slot.size());
    std::memcpy(game.state_.data(), slot.data(), slot.size());
    uint32_t in[2] = {a.at(f), b.at(f)};
    FrameInputs inputs{};
    inputs.bytes = reinterpret_cast<const uint8_t*>(in);
    inputs.player_count = 2;
    inputs.input_size = 4;
    game.step(inputs);
  }
  Game game;
  std::vector<uint8_t> slot;
  uint64_t sum = 0;
};

int run_raw(size_t size) {
  RawFrame raw(size);
  Pad a(1), b(2);
  // Everything counts here: the copies, the hash and the step are the whole frame.
  start_measuring(true);
  for (int i = 0; i < measured_frames(size); ++i) raw.run(Frame(i), a, b);
  stop_measuring();
  print_result("raw", uint64_t(measured_frames(size)), 0, "sum=" + std::to_string(raw.sum & 0xff));
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Time rows: interleaved repetitions of the sync test and the raw frame, CPU time per frame.

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

void print_spread(const char* name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double median = v[v.size() / 2];
  std::printf("time=%s median_ns=%.1f min_ns=%.1f max_ns=%.1f reps=%zu\n", name, median, v.front(),
              v.back(), v.size());
}

int run_time(int reps, size_t size, int32_t distance) {
  Game game(size);
  std::unique_ptr<Session> session;
  if (make_sync_test(game, size, distance, 1, &session) != Result::ok) return 1;
  RawFrame raw(size);
  Pad a(1), b(2);
  constexpr int kFramesPerRep = 200;
  std::vector<double> session_ns, raw_ns;
  Frame raw_frame = 0;
  for (int r = 0; r < reps; ++r) {
    double t0 = thread_cpu_ns();
    for (int i = 0; i < kFramesPerRep; ++i) {
      const Frame f = session->current_frame();
      const uint32_t x = a.at(f), y = b.at(f);
      session->add_local_input(0, &x, sizeof x);
      session->add_local_input(1, &y, sizeof y);
      session->advance_frame();
    }
    session_ns.push_back((thread_cpu_ns() - t0) / kFramesPerRep);
    t0 = thread_cpu_ns();
    for (int i = 0; i < kFramesPerRep; ++i) raw.run(raw_frame++, a, b);
    raw_ns.push_back((thread_cpu_ns() - t0) / kFramesPerRep);
  }
  print_spread("synctest", session_ns);
  print_spread("raw", raw_ns);
  return 0;
}

// Interleaved timing of the same comparison: per repetition, 300 ticks of the keyed mesh, 300
// of the unauthenticated one, and as many seal+open pairs as the keyed mesh sent datagrams in
// its 300 ticks (of its mean plain size), each timed in thread CPU time; medians per peer-frame.
int run_auth_time(int reps) {
  Mesh keyed, plain;
  if (!keyed.build(2, 64, true, kWarmupFrames) || !plain.build(2, 64, false, kWarmupFrames)) return 1;
  constexpr int kTicks = 300;
  std::vector<double> keyed_ns, plain_ns, aead_ns, ratio;
  double per_frame_sum = 0, mean_sum = 0;
  std::unique_ptr<AeadPair> pair;
  for (int r = 0; r < reps; ++r) {
    uint64_t d0, b0, d1, b1, frames = 0;
    keyed.traffic(&d0, &b0);
    double t0 = thread_cpu_ns();
    for (int t = 0; t < kTicks; ++t) frames += keyed.tick();
    const double keyed_time = thread_cpu_ns() - t0;
    keyed.traffic(&d1, &b1);
    const uint64_t datagrams = d1 - d0;
    const double mean = double(b1 - b0) / double(datagrams) - double(detail::kSealedOverhead);
    if (!pair) pair = std::make_unique<AeadPair>(detail::aes256gcm_available(), size_t(mean + 0.5));
    uint64_t plain_frames = 0;
    t0 = thread_cpu_ns();
    for (int t = 0; t < kTicks; ++t) plain_frames += plain.tick();
    const double plain_time = thread_cpu_ns() - t0;
    bool ok = true;
    t0 = thread_cpu_ns();
    for (uint64_t i = 0; i < datagrams; ++i) ok &= pair->seal_open();
    const double aead_time = thread_cpu_ns() - t0;
    if (!ok || frames == 0 || plain_frames == 0) return 1;
    const double per_frame = double(datagrams) / double(frames);
    per_frame_sum += per_frame;
    mean_sum += mean;
    keyed_ns.push_back(keyed_time / double(frames));
    plain_ns.push_back(plain_time / double(plain_frames));
    aead_ns.push_back(aead_time / double(datagrams));
    ratio.push_back(keyed_ns.back() / (plain_ns.back() + per_frame * aead_ns.back()));
  }
  if (keyed.errors != 0 || plain.errors != 0) return 1;
  print_spread("p2p_keyed_per_peer_frame", keyed_ns);
  print_spread("p2p_unkeyed_per_peer_frame", plain_ns);
  print_spread("aead_seal_open_per_datagram", aead_ns);
  std::sort(ratio.begin(), ratio.end());
  std::printf("auth algorithm=%s datagrams_per_peer_frame=%.4f mean_plain_bytes=%.0f median_ratio=%.3f min_ratio=%.3f max_ratio=%.3f\n",
              pair ? pair->algorithm() : "?", per_frame_sum / reps, mean_sum / reps, ratio[ratio.size() / 2],
              ratio.front(), ratio.back());
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Real UDP on loopback, paced at 60 fps. Library time = thread CPU time inside poll,
// add_local_input and advance_frame (the game's step is a few additions); thread time = all of
// the thread's CPU time over the measured ticks, the sleeps included (the completion ring's
// kernel work can run when the pacing sleep ends, outside the library's calls).

int run_udp(uint32_t peers, int frames, bool batched_calls) {
  const auto path = batched_calls ? UdpTransport::ReceivePath::batched_calls : UdpTransport::ReceivePath::completion_ring;
  std::vector<std::unique_ptr<UdpTransport>> sockets(peers);
  std::vector<std::unique_ptr<Game>> games;
  std::vector<std::unique_ptr<P2PSession>> sessions(peers);
  std::vector<Pad> pads;
  for (uint32_t m = 0; m < peers; ++m) {
    if (UdpTransport::open("127.0.0.1", 0, &sockets[m], path) != Result::ok) return 1;
    games.push_back(std::make_unique<Game>(64));
    pads.emplace_back(1000 + m);
  }
  for (uint32_t m = 0; m < peers; ++m) {
    P2PConfig c;
    c.session = local_config(*games[m], 64, kWindow);
    c.session.num_players = peers;
    c.network.transport = sockets[m].get();
    c.network.rng_seed = 77 + m;
    c.desync_interval = 0;
    for (uint32_t p = 0; p < peers; ++p) {
      c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = sockets[p]->local_address();
    }
    if (create_p2p_session(c, &sessions[m]) != Result::ok) return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  auto now_us = [&] {
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start).count());
  };
  uint64_t advanced = 0, total_advanced = 0;
  double library_ns = 0;
  std::vector<double> per_rep;
  double thread_start_ns = 0;
  int tick = 0;
  for (; tick < 600 + frames; ++tick) {
    const bool measured = tick >= 600;
    const double t0 = thread_cpu_ns();
    for (uint32_t m = 0; m < peers; ++m) {
      P2PSession& s = *sessions[m];
      s.poll(now_us());
      if (!s.running()) continue;
      if (games[m]->wait_ > 0) {
        --games[m]->wait_;
        continue;
      }
      const uint32_t in = pads[m].at(s.current_frame());
      s.add_local_input(PlayerIndex(m), &in, sizeof in);
      if (s.advance_frame() == Result::ok) {
        ++total_advanced;
        if (measured) ++advanced;
      }
    }
    if (measured) library_ns += thread_cpu_ns() - t0;
    if (tick == 599) std::printf("udp_measure_start\n"), std::fflush(stdout), thread_start_ns = thread_cpu_ns();
    // Pace at 60 fps: sleep until the next tick's deadline.
    std::this_thread::sleep_until(start + std::chrono::microseconds(uint64_t(tick + 1) * kTickUs));
  }
  for (auto& s : sessions) {
    if (!s->running()) {
      std::fprintf(stderr, "udp: a session is not running\n");
      return 1;
    }
  }
  const double thread_ns = thread_cpu_ns() - thread_start_ns;
  uint64_t calls = 0;
  bool ring = true;
  for (auto& sock : sockets) {
    calls += sock->system_calls();
    ring &= sock->receive_path() == UdpTransport::ReceivePath::completion_ring;
  }
  char extra[240];
  std::snprintf(extra, sizeof extra,
                "receive_path=%s library_ns_per_peer_frame=%.1f thread_ns_per_peer_frame=%.1f total_frames=%llu system_calls=%llu",
                ring ? "completion_ring" : "batched_calls", advanced ? library_ns / double(advanced) : 0.0,
                advanced ? thread_ns / double(advanced) : 0.0,
                static_cast<unsigned long long>(total_advanced),
                static_cast<unsigned long long>(calls));
  print_result("udp", advanced, 0, extra);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  g_count_game = std::getenv("RETCON_PERF_COUNT_GAME") != nullptr;
  g_count_network = std::getenv("RETCON_PERF_COUNT_NETWORK") != nullptr;
  g_count_harness = std::getenv("RETCON_PERF_COUNT_HARNESS") != nullptr;
  auto arg = [&](int i, long fallback) { return argc > i ? std::strtol(argv[i], nullptr, 10) : fallback; };
  auto flag = [&](const char* name) {
    for (int i = 4; i < argc; ++i)
      if (std::strcmp(argv[i], name) == 0) return true;
    return false;
  };
  if (mode == "p2p") return run_p2p(uint32_t(arg(2, 2)), size_t(arg(3, 64)), flag("key"), flag("late"));
  if (mode == "local") return run_local(size_t(arg(2, 64)));
  if (mode == "synctest") return run_sync_test(int32_t(arg(2, 1)), int32_t(arg(3, 1)), size_t(arg(4, 64)));
  if (mode == "raw") return run_raw(size_t(arg(2, 64)));
  if (mode == "aead")
    return run_aead(argc > 2 && std::strcmp(argv[2], "aes") == 0, size_t(arg(3, 40)), int(arg(4, 10000)));
  if (mode == "authtime") return run_auth_time(int(arg(2, 15)));
  if (mode == "udp") return run_udp(uint32_t(arg(2, 2)), int(arg(3, 600)), argc > 4 && std::strcmp(argv[4], "calls") == 0);
  if (mode == "time") return run_time(int(arg(2, 9)), size_t(arg(3, 1 << 20)), int32_t(arg(4, 1)));
  std::fprintf(stderr, "usage: retcon_perf p2p|local|synctest|raw|aead|authtime|udp|time ... (see perf_counts.cpp)\n");
  return 2;
}
