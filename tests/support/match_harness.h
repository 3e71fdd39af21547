// Whole peer-to-peer matches in one process: N machines, each a P2PSession around a TestGame,
// connected through an InMemoryNetwork with a NetworkSimulator on every machine, driven by a
// virtual clock. No real time, no sockets, no sleeping: the same seed is the same match.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "retcon/p2p.h"
#include "support/input_streams.h"
#include "support/test_game.h"

namespace retcon::test {

// How a machine's game loop follows time-sync advice.
enum class TimeSyncLoop {
  should_wait,     // skip the tick when should_wait() (the documented loop)
  while_positive,  // skip every tick while frames_to_wait() > 0
  ignore,          // never wait
};

struct MatchOptions {
  uint32_t machines = 2;            // one player each, unless `owner` says otherwise
  std::vector<uint32_t> owner;      // optional: owner[p] = the machine that owns player p
  int32_t input_delay = 0;          // every local player's delay: its input of frame f plays at f + delay
  uint32_t input_size = 2;
  int32_t max_prediction = 8;
  std::vector<int32_t> max_prediction_of;  // optional: machine m's own window (missing: max_prediction)
  Frame frames = 600;
  LinkProfile link;                 // applied to every machine's outgoing traffic
  uint64_t seed = 1;
  uint32_t spectators = 0;          // spectators of machine 0
  bool adaptive_delay = false;      // P2PConfig::adaptive_delay (default rule) on every player machine
  int32_t desync_interval = 10;
  uint64_t disconnect_timeout_us = 5000000;
  uint64_t notify_delay_us = 750000;
  TimeSyncLoop loop = TimeSyncLoop::should_wait;
  bool retry_stalled = false;       // see Match::retry_stalled
  bool catch_up = false;            // run an extra frame in a tick when should_catch_up()
  bool match_key = false;           // every machine gets the same match key (docs/SECURITY.md)
  int32_t other_key_machine = -1;   // with match_key: this machine gets a different key
  SaveMode save_mode = SaveMode::automatic;
  // Inputs drawn at random per (player, frame) from `seed` (held a few frames, as a person's),
  // instead of a fixed function of the frame.
  bool random_inputs = false;
  // Input delay changes: from frame `first` on, every local player's delay is `delay`.
  struct DelayChange { Frame first; int32_t delay; };
  std::vector<DelayChange> delay_changes;
  std::vector<DelayChange> delay_changes_seen;  // made by the sessions (reference only)
  int32_t late_input_threshold = 15;  // P2PConfig::late_input_threshold of every player machine
  uint64_t handshake_timeout_us = 10000000;
  // State transfer on the host (machine 0) and on every spectator (NetworkConfig::state_transfer);
  // spectator_state_transfer overrides it for the spectators (-1: as state_transfer).
  bool state_transfer = false;
  int spectator_state_transfer = -1;
  size_t state_padding = 0;         // TestGame::padding of every machine (a large state)
  uint64_t transfer_bytes_per_second = 1u << 20;
  // Spectator k starts (is polled for the first time) once the host reached frame
  // spectator_join[k]; missing entries: from the start.
  std::vector<Frame> spectator_join;
  bool allow_rejoin = false;        // P2PConfig::allow_rejoin of every player machine
  // Both states on a desync (P2PConfig::share_desync_states) on every player machine;
  // desync_state_max_size[m] for machine m (missing: 0, i.e. max_state_size).
  bool share_desync_states = false;
  std::vector<size_t> desync_state_max_size;
  // Machine m checksums its states with a function of its own (XXH3 ^ salt): a peer whose
  // reports never match the bytes it sends (missing or 0: the default checksum).
  std::vector<uint64_t> checksum_salt;
  // Every machine's log lines of this level and above go to Machine::logs (tests that check
  // what the library told the game: a refusal, a drop).
  bool capture_logs = false;
  LogLevel log_level = LogLevel::warning;
  // Every machine's simulator clock moves at the start of a tick, before any machine polls
  // (Match::tick_only says why it matters). Off: each moves at its machine's turn.
  bool clocks_first = false;
};

// The fixed match key of test matches (machine `m` of `other` gets a different one).
inline void test_match_key(uint8_t key[32], bool other = false) {
  for (int i = 0; i < 32; ++i) key[i] = uint8_t(0xA0 + i + (other ? 1 : 0));
}

// A transport in front of another: receives and flushes go straight through; the two below
// differ only in what they do with a send.
class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override {
    return inner_.receive(from, buffer, capacity, length);
  }
  void flush() override { inner_.flush(); }

 protected:
  Transport& inner_;
};

// Between a machine's simulator and its wire: what it sends to a blocked address is lost (a
// one-way outage of one link, e.g. a machine that misses a leaver's last datagrams).
class CuttableTransport final : public ForwardingTransport {
 public:
  using ForwardingTransport::ForwardingTransport;
  std::vector<PeerAddress> blocked;
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    for (const PeerAddress& b : blocked)
      if (b == to) return Result::ok;
    return inner_.send(to, data, length);
  }
};

// Between a session and its machine's simulator: every datagram the session hands over is shown
// to `tap` first (Match::on_send).
class TapTransport final : public ForwardingTransport {
 public:
  TapTransport(Transport& inner, std::function<void(const PeerAddress&, const uint8_t*, size_t)> tap)
      : ForwardingTransport(inner), tap_(std::move(tap)) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override {
    tap_(to, data, length);
    return inner_.send(to, data, length);
  }

 private:
  std::function<void(const PeerAddress&, const uint8_t*, size_t)> tap_;
};

struct Machine {
  TestGame game;
  InMemoryTransport* wire = nullptr;
  std::unique_ptr<CuttableTransport> cut;  // between sim and wire (Match::block)
  std::unique_ptr<NetworkSimulator> sim;
  std::unique_ptr<TapTransport> tap;  // Match::on_send
  std::unique_ptr<P2PSession> session;
  std::vector<uint64_t> hashes;     // state hash at the start of each frame (last simulation)
  bool spectator = false;
  bool stopped = false;             // crashed / left: no more polls
  bool frozen = false;              // polls (keep-alives flow) but never advances: stuck game
  uint64_t stalls = 0;
  uint64_t waits = 0;               // ticks skipped on time-sync advice
  uint64_t extra_frames = 0;        // frames run on should_catch_up() (MatchOptions::catch_up)
  bool retry = false;               // advance refused this tick
  Frame join_at = 0;                // a spectator: starts once the host reached this frame
  uint64_t joined_at_us = 0;        // when it started (0: not yet)
  // confirmed_frame() right after the last advance that ran: every state up to the start of
  // this frame is final. Inputs confirmed by a later poll are applied (rolled back to) only at
  // the next advance, so confirmed_frame() alone can be ahead of the states recorded.
  Frame settled = kNullFrame;
  std::vector<std::string> logs;    // MatchOptions::capture_logs
  bool logged(const std::string& text) const {
    return std::any_of(logs.begin(), logs.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
  // The frames at which its game gave its players' inputs (a machine that rejoined gives none
  // while it catches up: the reference plays what it really gave).
  std::vector<Frame> given;
};

// A timed decision a machine's send_decision accepted (the reference applies it at `frame`).
struct SentDecision {
  Frame frame;
  PlayerIndex sender;  // the sending machine's first player
  std::vector<uint8_t> bytes;
};

class Match {
 public:
  // Called for every player machine that is about to give its inputs this tick (tests send
  // timed decisions from here, as a game does from its frame loop).
  std::function<void(uint32_t machine)> before_input;
  // Set before build(): every datagram machine m's session sends (to, bytes), as it sends it.
  std::function<void(uint32_t machine, const PeerAddress& to, const uint8_t* data, size_t length)> on_send;
  std::vector<SentDecision> sent_decisions;  // in sending order

  // A delay change the sessions made themselves (adaptive delay): the reference plays it.
  void note_delay_change(Frame first, int32_t delay) { opt_.delay_changes_seen.push_back({first, delay}); }

  // send_decision on machine m, recorded for the reference when accepted.
  Result send_decision(uint32_t m, Frame frame, const std::vector<uint8_t>& bytes, Frame* earliest = nullptr) {
    const Result r = machines_[m]->session->send_decision(bytes.data(), bytes.size(), frame, earliest);
    if (r == Result::ok) {
      PlayerIndex first = 0;
      while (opt_.owner[size_t(first)] != m) ++first;
      sent_decisions.push_back({frame, first, bytes});
    }
    return r;
  }

  explicit Match(const MatchOptions& o) : opt_(o), rng_(o.seed) {
    if (opt_.owner.empty())
      for (uint32_t m = 0; m < opt_.machines; ++m) opt_.owner.push_back(m);
    players_ = uint32_t(opt_.owner.size());
  }
  uint32_t players() const { return players_; }

  // The input player p gives at frame f: holds and changes, as a person's.
  uint8_t input_byte(uint32_t p, Frame f, uint32_t i) const {
    if (!random_.empty()) {
      const std::vector<uint8_t>& r = random_[p];
      const size_t at = size_t(f) * opt_.input_size + i;
      return at < r.size() ? r[at] : 0;
    }
    const uint64_t hold = uint64_t(f) / (3 + (p + i) % 5);
    return uint8_t((hold * 2654435761u + p * 40503u + i * 977u) >> 7);
  }
  // The delay local players use for the input they give at frame f.
  int32_t delay_at(Frame f) const {
    int32_t d = opt_.input_delay;
    for (const auto& c : opt_.delay_changes)
      if (c.first <= f) d = c.delay;
    for (const auto& c : opt_.delay_changes_seen)
      if (c.first <= f) d = c.delay;
    return d;
  }

  bool build() {
    if (opt_.random_inputs) {
      std::mt19937_64 rng(opt_.seed ^ 0x5eedull);
      random_.assign(players_, {});
      const size_t frames = size_t(opt_.frames) + 200;
      for (uint32_t p = 0; p < players_; ++p) {
        std::vector<uint8_t>& r = random_[p];
        r.resize(frames * opt_.input_size);
        std::vector<uint8_t> current(opt_.input_size, 0);
        for (size_t f = 0; f < frames; ++f) {
          if (rng() % 4 == 0)
            for (auto& b : current) b = uint8_t(rng());
          std::copy(current.begin(), current.end(), r.begin() + std::ptrdiff_t(f * opt_.input_size));
        }
      }
    }
    const uint32_t total = opt_.machines + opt_.spectators;
    for (uint32_t m = 0; m < total; ++m) {
      auto machine = std::make_unique<Machine>();
      machine->wire = net_.add_endpoint();
      machine->cut = std::make_unique<CuttableTransport>(*machine->wire);
      machine->sim = std::make_unique<NetworkSimulator>(*machine->cut, opt_.seed * 7919 + m);
      machine->sim->set_outgoing(opt_.link);
      machine->hashes.assign(size_t(opt_.frames) + 400, 0);
      machine->game.start_hashes = &machine->hashes;
      machine->game.events.reserve(1 << 16);
      machine->given.reserve(size_t(opt_.frames) + 400);  // no allocation per frame
      machine->spectator = m >= opt_.machines;
      const size_t k = m - opt_.machines;
      if (machine->spectator && k < opt_.spectator_join.size()) machine->join_at = opt_.spectator_join[k];
      machines_.push_back(std::move(machine));
    }
    for (uint32_t m = 0; m < total; ++m) {
      Machine& me = *machines_[m];
      SessionConfig s;
      s.num_players = players_;
      s.input_size = opt_.input_size;
      s.max_prediction = m < opt_.max_prediction_of.size() ? opt_.max_prediction_of[m] : opt_.max_prediction;
      s.max_state_size = 256 + opt_.state_padding;
      me.game.padding = opt_.state_padding;
      s.save_mode = opt_.save_mode;
      s.callbacks = bind_game(me.game);
      if (opt_.capture_logs) {
        s.logger.user = &me.logs;
        s.logger.min_level = opt_.log_level;
        s.logger.log = [](void* u, LogLevel, const char* text) { static_cast<std::vector<std::string>*>(u)->emplace_back(text); };
      }
      if (m < opt_.checksum_salt.size() && opt_.checksum_salt[m] != 0) {
        me.game.checksum_salt = opt_.checksum_salt[m];
        s.callbacks.checksum = [](void* u, Frame, const uint8_t* b, size_t n) -> uint64_t {
          return detail::xxh3_64(b, n) ^ static_cast<TestGame*>(u)->checksum_salt;
        };
      }
      NetworkConfig n;
      n.transport = me.sim.get();
      if (on_send) {
        me.tap = std::make_unique<TapTransport>(*me.sim, [this, m](const PeerAddress& to, const uint8_t* d, size_t l) {
          on_send(m, to, d, l);
        });
        n.transport = me.tap.get();
      }
      n.rng_seed = opt_.seed * 31 + m;
      n.disconnect_timeout_us = opt_.disconnect_timeout_us;
      n.notify_delay_us = opt_.notify_delay_us;
      n.has_match_key = opt_.match_key;
      if (opt_.match_key) test_match_key(n.match_key, int32_t(m) == opt_.other_key_machine);
      n.handshake_timeout_us = opt_.handshake_timeout_us;
      n.state_transfer = opt_.state_transfer;
      n.transfer_bytes_per_second = opt_.transfer_bytes_per_second;
      if (me.spectator && opt_.spectator_state_transfer >= 0) n.state_transfer = opt_.spectator_state_transfer != 0;
      if (me.spectator) {
        SpectatorConfig c;
        c.session = s;
        c.network = n;
        c.host = machines_[0]->wire->address();
        if (create_spectator_session(c, &me.session) != Result::ok) return false;
        continue;
      }
      P2PConfig c = player_config(m, s, n);
      if (m == 0) {
        c.num_spectators = opt_.spectators;
        for (uint32_t k = 0; k < opt_.spectators; ++k) c.spectators[k] = machines_[opt_.machines + k]->wire->address();
      }
      if (create_p2p_session(c, &me.session) != Result::ok) return false;
      for (uint32_t p = 0; p < players_; ++p)
        if (opt_.owner[p] == m && me.session->set_input_delay(PlayerIndex(p), opt_.input_delay) != Result::ok) return false;
    }
    return true;
  }

  // Machine m crashes (its session is destroyed, its address gone) and starts again from nothing
  // on a new address, as a session that rejoins the running match (P2PConfig::rejoining).
  // `tweak` changes its config before create (a rejoiner built differently).
  bool restart_rejoining(uint32_t m, const std::function<void(P2PConfig&)>& tweak = {}) {
    auto machine = std::make_unique<Machine>();
    machine->wire = net_.add_endpoint();
    machine->cut = std::make_unique<CuttableTransport>(*machine->wire);
    machine->sim = std::make_unique<NetworkSimulator>(*machine->cut, opt_.seed * 7919 + m + 1000);
    machine->sim->set_outgoing(opt_.link);
    machine->sim->set_time(now_);
    machine->hashes.assign(size_t(opt_.frames) + 400, 0);
    machine->game.start_hashes = &machine->hashes;
    machine->game.events.reserve(1 << 16);
    machine->given.reserve(size_t(opt_.frames) + 400);
    machine->game.padding = opt_.state_padding;
    machines_[m] = std::move(machine);
    Machine& me = *machines_[m];
    SessionConfig s;
    s.num_players = players_;
    s.input_size = opt_.input_size;
    s.max_prediction = m < opt_.max_prediction_of.size() ? opt_.max_prediction_of[m] : opt_.max_prediction;
    s.max_state_size = 256 + opt_.state_padding;
    s.save_mode = opt_.save_mode;
    s.callbacks = bind_game(me.game);
    if (opt_.capture_logs) {
      s.logger.user = &me.logs;
      s.logger.min_level = opt_.log_level;
      s.logger.log = [](void* u, LogLevel, const char* text) { static_cast<std::vector<std::string>*>(u)->emplace_back(text); };
    }
    NetworkConfig n;
    n.transport = me.sim.get();
    n.rng_seed = opt_.seed * 31 + m + 1000;
    n.disconnect_timeout_us = opt_.disconnect_timeout_us;
    n.notify_delay_us = opt_.notify_delay_us;
    n.has_match_key = opt_.match_key;
    if (opt_.match_key) test_match_key(n.match_key, int32_t(m) == opt_.other_key_machine);
    n.handshake_timeout_us = opt_.handshake_timeout_us;
    n.state_transfer = true;
    n.transfer_bytes_per_second = opt_.transfer_bytes_per_second;
    P2PConfig c = player_config(m, s, n);
    c.rejoining = true;
    if (tweak) tweak(c);
    if (create_p2p_session(c, &me.session) != Result::ok) return false;
    for (uint32_t p = 0; p < players_; ++p)
      if (opt_.owner[p] == m && me.session->set_input_delay(PlayerIndex(p), opt_.input_delay) != Result::ok) return false;
    return true;
  }

  // What machine `from` sends to machine `to` is lost from now on (`on`), or delivered again.
  void block(uint32_t from, uint32_t to, bool on = true) {
    std::vector<PeerAddress>& b = machines_[from]->cut->blocked;
    const PeerAddress a = machines_[to]->wire->address();
    b.erase(std::remove(b.begin(), b.end(), a), b.end());
    if (on) b.push_back(a);
  }

  // One tick of 1/60 s on every machine. `obey_timesync`: skip frames when advised to wait.
  void tick(bool obey_timesync = true) {
    tick_only(obey_timesync);
  }

  // Machines whose advance was refused poll again and retry once at the end of the tick, as a
  // game that polls several times per frame does (it then loses no tick to the order in which
  // machines run within one tick of the virtual clock).
  void retry_stalled() {
    for (auto& mp : machines_) {
      Machine& me = *mp;
      if (me.stopped || me.spectator || !me.retry) continue;
      me.retry = false;
      me.session->poll(now_);
      const Result a = me.session->advance_frame();
      if (a == Result::ok) me.settled = me.session->confirmed_frame();
      if (a == Result::ok && me.stalls > 0) --me.stalls;
    }
  }

 private:
  P2PConfig player_config(uint32_t m, const SessionConfig& s, const NetworkConfig& n) const {
    P2PConfig c;
    c.session = s;
    c.network = n;
    c.desync_interval = opt_.desync_interval;
    c.late_input_threshold = opt_.late_input_threshold;
    c.adaptive_delay = opt_.adaptive_delay;
    c.allow_rejoin = opt_.allow_rejoin;
    c.share_desync_states = opt_.share_desync_states;
    if (m < opt_.desync_state_max_size.size()) c.desync_state_max_size = opt_.desync_state_max_size[m];
    for (uint32_t p = 0; p < players_; ++p) {
      c.players[p].kind = opt_.owner[p] == m ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = machines_[opt_.owner[p]]->wire->address();
    }
    return c;
  }

  Result add_inputs_and_advance(uint32_t m) {
    Machine& me = *machines_[m];
    if (before_input) before_input(m);
    const Frame f = me.session->current_frame();
    uint8_t in[kMaxInputSize];
    for (uint32_t p = 0; p < players_; ++p) {
      if (opt_.owner[p] != m) continue;
      // Only a scheduled change touches the delay (tests may also set it themselves).
      if (!opt_.delay_changes.empty() && me.session->set_input_delay(PlayerIndex(p), delay_at(f)) != Result::ok) ++errors_;
      for (uint32_t i = 0; i < opt_.input_size; ++i) in[i] = input_byte(p, f, i);
      const Result r = me.session->add_local_input(PlayerIndex(p), in, opt_.input_size);
      if (r != Result::ok && r != Result::input_already_added) ++errors_;
      if (r == Result::ok && (me.given.empty() || me.given.back() != f)) me.given.push_back(f);
    }
    const Result a = me.session->advance_frame();
    if (a == Result::ok) me.settled = me.session->confirmed_frame();
    return a;
  }

  void tick_only(bool obey_timesync) {
    now_ += 16667;
    // A simulator releases what its machine sent when its own clock moves. Moved only at each
    // machine's turn (the default, which the tests that tap or forge traffic between turns are
    // written for), a later machine's datagrams are released after the earlier machines polled:
    // up to a tick more latency from machine 1 to machine 0 than back. `clocks_first` moves
    // every clock before anyone polls, so both directions of a link see the same latency.
    if (opt_.clocks_first)
      for (auto& mp : machines_)
        if (!mp->stopped) mp->sim->set_time(now_);
    for (uint32_t m = 0; m < machines_.size(); ++m) {
      Machine& me = *machines_[m];
      if (me.stopped) continue;
      if (me.spectator && me.joined_at_us == 0) {
        if (machines_[0]->session->current_frame() < me.join_at) continue;
        me.joined_at_us = now_;
      }
      me.sim->set_time(now_);
      me.session->poll(now_);
      if (!me.session->running() || me.frozen) continue;
      if (me.spectator) {
        const Result r = me.session->advance_frame();
        if (r != Result::ok) ++me.stalls;
        else me.settled = me.session->confirmed_frame();
        continue;
      }
      if (obey_timesync && opt_.loop != TimeSyncLoop::ignore &&
          (opt_.loop == TimeSyncLoop::should_wait ? me.session->should_wait() : me.session->frames_to_wait() > 0)) {
        ++me.waits;
        continue;
      }
      if (me.session->current_frame() >= opt_.frames + 120) continue;
      const Result a = add_inputs_and_advance(m);
      if (a == Result::prediction_limit) {
        ++me.stalls;
        me.retry = opt_.retry_stalled;
      } else if (a != Result::ok) {
        ++errors_;
      } else if (opt_.catch_up && me.session->should_catch_up() && me.session->current_frame() < opt_.frames + 120) {
        const Result extra = add_inputs_and_advance(m);
        if (extra == Result::ok) ++me.extra_frames;
        else if (extra != Result::prediction_limit) ++errors_;
      }
    }
    if (opt_.retry_stalled) retry_stalled();
  }

 public:

  // Runs until every live player machine reached `frames` confirmed, or `max_ticks`.
  bool run(int max_ticks) {
    for (int t = 0; t < max_ticks; ++t) {
      tick();
      bool done = true;
      for (auto& m : machines_)
        if (!m->stopped && !m->spectator && m->session->confirmed_frame() < opt_.frames) done = false;
      if (done) return true;
    }
    return false;
  }

  // An endpoint on the same network that is in nobody's session.
  InMemoryTransport* stranger() { return net_.add_endpoint(); }

  // Lockstep reference hashes for frames [0, frames]. `cut[p]`: player p's input is zeros
  // after that frame (a disconnect), or -2 for never; `live[p]` (a rejoin): from that frame on
  // its input is real again (-2: never).
  // `recut[p]` (a rejoin whose machine gave up after its input of the live frame went out): zeros
  // again after that frame (-2 or missing: never).
  std::vector<uint64_t> reference(const std::vector<Frame>& cut = {}, const std::vector<Frame>& live = {},
                                  const std::vector<Frame>& recut = {}) const {
    TestGame ref;
    std::vector<uint64_t> out;
    std::vector<uint8_t> inputs(size_t(players_) * opt_.input_size);
    std::vector<InputStatus> status(players_, InputStatus::confirmed);
    // The documented delay rule (support/input_streams.h), per player.
    std::vector<LocalInputModel> played(players_);
    for (uint32_t p = 0; p < players_; ++p)
      for (Frame f = 0; f <= opt_.frames; ++f) {
        Bytes given(opt_.input_size);
        for (uint32_t i = 0; i < opt_.input_size; ++i) given[i] = input_byte(p, f, i);
        played[p].add(f, delay_at(f), given);
      }
    // A player live again from live[p]: its machine's driver starts that player's inputs there,
    // the input before it "disconnected" (zeros), and takes what its game gave from then on.
    std::vector<LocalInputModel> rejoined(players_);
    for (uint32_t p = 0; p < players_ && p < live.size(); ++p) {
      if (live[p] == -2) continue;
      rejoined[p].by_frame.assign(size_t(live[p]), Bytes(opt_.input_size, 0));
      for (const Frame f : machines_[opt_.owner[p]]->given) {
        Bytes given(opt_.input_size);
        for (uint32_t i = 0; i < opt_.input_size; ++i) given[i] = input_byte(p, f, i);
        rejoined[p].add(f, delay_at(f), given);
      }
      while (rejoined[p].by_frame.size() <= size_t(opt_.frames)) rejoined[p].by_frame.push_back(rejoined[p].by_frame.back());
    }
    for (Frame f = 0; f <= opt_.frames; ++f) {
      out.push_back(ref.hash());
      for (uint32_t p = 0; p < players_; ++p)
        for (uint32_t i = 0; i < opt_.input_size; ++i) {
          const bool back = p < live.size() && live[p] != -2 && f >= live[p] &&
                            !(p < recut.size() && recut[p] != -2 && f > recut[p]);
          const bool gone = p < cut.size() && cut[p] != -2 && f > cut[p] && !back;
          inputs[p * opt_.input_size + i] = gone ? 0 : back ? rejoined[p].by_frame[size_t(f)][i] : played[p].by_frame[size_t(f)][i];
        }
      FrameInputs fi{inputs.data(), status.data(), opt_.input_size, players_};
      // Timed decisions of the frame: by sender, then sending order; none of a sender cut
      // before the frame.
      std::vector<Decision> decisions;
      for (const SentDecision& d : sent_decisions) {
        const Frame c = size_t(d.sender) < cut.size() ? cut[size_t(d.sender)] : -2;
        if (d.frame == f && (c == -2 || f <= c))
          decisions.push_back(Decision{d.bytes.data(), uint32_t(d.bytes.size()), d.sender});
      }
      std::stable_sort(decisions.begin(), decisions.end(),
                       [](const Decision& a, const Decision& b) { return a.sender < b.sender; });
      fi.decisions = decisions.empty() ? nullptr : decisions.data();
      fi.decision_count = uint32_t(decisions.size());
      ref.step(fi);
    }
    return out;
  }

  size_t count_events(uint32_t m, EventType type) const {
    size_t n = 0;
    for (const Event& e : machines_[m]->game.events) n += e.type == type;
    return n;
  }

  Machine& machine(uint32_t m) { return *machines_[m]; }
  size_t size() const { return machines_.size(); }
  uint64_t now() const { return now_; }
  uint64_t errors() const { return errors_; }
  const MatchOptions& options() const { return opt_; }

 private:
  MatchOptions opt_;
  std::mt19937_64 rng_;
  std::vector<std::vector<uint8_t>> random_;  // random_inputs: per player, frames x input_size
  InMemoryNetwork net_;
  std::vector<std::unique_ptr<Machine>> machines_;
  uint64_t now_ = 0;
  uint64_t errors_ = 0;
  uint32_t players_ = 0;
};

}  // namespace retcon::test
