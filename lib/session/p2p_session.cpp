// Peer-to-peer session: the rollback driver fed by one protocol Endpoint per remote machine,
// full mesh. Spectators are endpoints that receive the confirmed inputs of every player.
//
// Per tick the game calls poll(now) (receive, handle events, feed remote inputs to the driver,
// send what is due), then add_local_input and advance_frame (which sends the new local inputs
// at once, so they do not wait a tick).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/checksum.h"
#include "core/report_throttle.h"
#include "net/same_address.h"
#include "retcon/p2p.h"
#include "session/adaptive_delay.h"
#include "session/catch_up.h"
#include "session/decision_exchange.h"
#include "session/delay_change.h"
#include "session/desync_detector.h"
#include "session/desync_states.h"
#include "session/driver_session.h"
#include "session/network_security.h"
#include "session/handshake_mismatch.h"
#include "session/input_drain.h"
#include "session/peer.h"
#include "session/rejoin.h"
#include "session/tick_path_switch.h"
#include "session/send_pass_switch.h"
#include "session/stranger_replies.h"
#include "session/snapshot_server.h"
#include "session/spectator_frames.h"
#include "session/state_transfer.h"

namespace retcon {
namespace detail {
namespace {

// session/send_pass_switch.h. Read once, when a session is created (into full_send_passes_),
// so a test that flips it affects only the sessions it creates next and no pass reads shared
// memory; atomic, so sessions created on other threads meanwhile read it without a race.
std::atomic<bool> full_send_passes_for_tests{false};
// session/tick_path_switch.h, read as full_send_passes_for_tests is.
std::atomic<bool> general_ticks_for_tests{false};

constexpr uint32_t kMaxPeers = kMaxPlayers - 1 + kMaxSpectators;
// Input delay (both sides together) that disconnect agreement can reach back over.
constexpr int32_t kDisconnectDelayAllowance = 32;
// Time sync ignores the first frames: the estimates settle only once reports and inputs flow.
constexpr Frame kTimeSyncWarmupFrames = 30;
// With state transfer, frames queued for a spectator that has not synchronized yet (beyond: it
// must ask for a state).
constexpr Frame kUnsyncedSpectatorFrames = 1024;
// How far the spectators' stream may fall behind the confirmed frame waiting for a spectator to
// acknowledge timed decisions (a slow handshake, a long outage) before that spectator is dropped.
constexpr int32_t kSpectatorHoldFrames = 600;
// No time-sync samples while a wait is being carried out (see update_time_sync).
constexpr uint64_t kWaitInProgress = UINT64_MAX;
// Rejoin: confirmed inputs kept readable behind the confirmed frame, so every machine can stream
// its own to a rejoining one from the state's frame, and the frame it goes live at fits the queues.
constexpr int32_t kRejoinKeepFrames = 600;
// A rejoining machine waits this long after its first handshake for the others to accept it too
// (the rest are gone) before it asks for the state.
constexpr uint64_t kRejoinWaitUs = 2000000;
// Extra frames a rejoining machine runs per advance_frame until its first live frame.
constexpr int32_t kRejoinCatchUpFrames = 7;
// No late-input judgement of a machine this long after it came back (it runs behind at first).
constexpr uint64_t kRejoinGraceUs = 3000000;

// The largest desync state sent or taken (P2PConfig::desync_state_max_size, 0: max_state_size).
size_t desync_state_cap(const P2PConfig& c) noexcept {
  return c.desync_state_max_size != 0 ? c.desync_state_max_size : c.session.max_state_size;
}

class P2PSessionImpl final : public P2PSession {
 public:
  Result init(const P2PConfig& config);

  // ---- Session
  // Every call that can reach the game's callbacks (or the transport's) is inside the guard.
  // Refused from inside a callback like every other call, but without holding the guard: taking
  // an input reaches no callback (the driver only stores it), so the usual call is a tail call.
  Result add_local_input(PlayerIndex player, const void* input, size_t size) override {
    if (guard_.busy()) return Result::wrong_state;
    if (!running_) [[unlikely]] {
      // The caller's mistakes first: a wrong player or input size is not cured by waiting.
      if (player < 0 || uint32_t(player) >= driver_.num_players() || !driver_.is_local(player))
        return Result::invalid_player;
      if (input == nullptr) return Result::invalid_argument;
      if (size != driver_.input_size()) return Result::invalid_input_size;
      return Result::not_synchronized;
    }
    return driver_.add_local_input(player, input, size);
  }
  Result frame_checksum(Frame frame, uint64_t* out) override { return driver_frame_checksum(driver_, frame, out); }
  // guarded_call written out, as poll's: through its lambda GCC called advance out of line.
  Result advance_frame() override {
    if (guard_.busy()) return Result::wrong_state;
    CallGuard::Scope scope(guard_);
    return advance();
  }
  Result set_input_delay(PlayerIndex player, int32_t frames) override {
    return guarded_call(guard_, [&] { return driver_.set_input_delay(player, frames); });
  }
  // guarded_call written out: through its lambda GCC called poll_once out of line.
  Result poll(uint64_t now_us) override {
    if (guard_.busy()) return Result::wrong_state;
    CallGuard::Scope scope(guard_);
    return poll_once(now_us);
  }
  Frame current_frame() const override { return driver_.frame(); }
  Frame confirmed_frame() const override { return driver_.confirmed_frame(); }
  SessionStats stats() const override { return driver_stats(driver_); }

  // ---- P2PSession
  bool running() const override { return running_; }
  // Tests only (tick_path_switch.h): the usual tick's byte never says usual where it is not,
  // asked as poll_unusual's and advance_unusual's tests ask it, one by one (not through
  // usual_tick_now).
  bool usual_tick_holds() const noexcept {
    if (!usual_tick_) return true;
    if (general_ticks_ || !started_ || handshakes_open_ || cuts_active_) return false;
    if (!running_ || failed_) return false;  // update_running, the running block, the result
    if (rejoin_phase_ != RejoinPhase::off) return false;  // poll's test, and advance's (playing)
    if ((auto_delay_ && !auto_delay_done_) || pending_delay_count_ != 0) return false;
    if (local_count_ != 1 || own_delays_active_ != 0) return false;  // send_local_inputs, advance's sends
    if (num_spectators_ != 0 || desync_.enabled() || desync_states_.enabled()) return false;
    if (rejoin_askers_ != 0 || rejoin_untold_ || unusual_passes_) return false;
    for (uint32_t i = 0; i < num_player_peers_; ++i) {  // the usual lateness, time sync, probe do not ask
      if (peers_[i].dropped || peers_[i].rejoining) return false;
      if (peers_[i].endpoint.state() == EndpointState::idle) return false;
    }
    if (driver_.frame() != timeline_.newest_started()) return false;  // mark_frames<true>
    return true;
  }
  bool usual_tick_byte() const noexcept { return usual_tick_; }
  Result peer_stats(PlayerIndex player, PeerStats* out) const override {
    if (out == nullptr) return Result::invalid_argument;
    const Peer* peer = peer_of(player);
    if (peer == nullptr) return Result::not_found;
    *out = make_peer_stats(*peer, driver_.frame(), now_);
    if (desync_states_.enabled()) {
      const DesyncStates::Counts& c = desync_states_.counts(uint32_t(peer - peers_));
      out->desync_states_received = c.received;
      out->desync_states_refused_too_large = c.too_large;
      out->desync_states_refused_mismatch = c.mismatch;
      out->desync_states_refused_unsolicited = c.unsolicited;
      out->desync_notices_expired = c.notices_expired;
    }
    return Result::ok;
  }
  Result spectator_stats(uint32_t spectator, PeerStats* out) const override {
    if (out == nullptr) return Result::invalid_argument;
    if (spectator >= num_spectators_) return Result::not_found;
    *out = make_peer_stats(peers_[num_player_peers_ + spectator], driver_.frame(), now_);
    return Result::ok;
  }
  int32_t frames_to_wait() const override { return advice_.frames_left(); }
  bool should_wait() const override { return advice_.should_wait(); }
  bool should_catch_up() const override {
    // Room: the extra frame and the next regular one stay clear of the window's last frames
    // (the window in use: after a lowering the extra frame would only be refused).
    const int32_t window = driver_.prediction_window();
    const bool room = window > 0 && driver_.frame() - driver_.confirmed_frame() <= window - 3;
    return running_ && advice_.frames_left() == 0 && catch_up_.should(now_, room);
  }
  Result disconnect_player(PlayerIndex player) override {
    return guarded_call(guard_, [&] { return disconnect(player); });
  }
  uint64_t dropped_unknown_address() const override { return dropped_unknown_address_; }
  uint64_t checksums_compared() const override { return checksums_compared_; }
  Result choose_input_delay(const AdaptiveDelayRule& rule, DelayChoice* out) override {
    return guarded_call(guard_, [&] { return pick_delay(rule, out); });  // emits input_delay_chosen
  }
  Result send_decision(const void* bytes, size_t size, Frame frame, Frame* earliest) override {
    return guarded_call(guard_, [&] { return stamp_decision(bytes, size, frame, earliest); });
  }
  Frame earliest_decision_frame() const override;
  Result apply_input_delay(const AdaptiveDelayRule& rule, Frame frame, DelayChoice* out) override {
    return guarded_call(guard_, [&] { return plan_delay(rule, frame, out); });
  }
  Result answer_rejoin(PlayerIndex player, bool accept) override {
    return guarded_call(guard_, [&] { return answer(player, accept); });
  }
  Result between_rounds() override {
    return guarded_call(guard_, [&] {
      if (!auto_delay_) return Result::wrong_state;
      if (!running_ || !deciding_machine()) return Result::ok;
      DelayChoice c;
      return plan_delay(auto_rule_, kNullFrame, &c);
    });
  }

 private:
  Peer* peer_of(PlayerIndex player) {
    return const_cast<Peer*>(static_cast<const P2PSessionImpl*>(this)->peer_of(player));
  }
  const Peer* peer_of(PlayerIndex player) const {
    if (player < 0 || uint32_t(player) >= num_players_) return nullptr;
    const int32_t index = peer_index_of_player_[player];
    return index < 0 ? nullptr : &peers_[index];
  }
  Peer* find_peer(const PeerAddress& address) {
    for (uint32_t i = 0; i < num_peers_; ++i)
      if (peers_[i].address == address) return &peers_[i];
    return nullptr;
  }

  // Always inline: the one call is poll()'s (its guard around it); left to GCC, the usual poll's
  // shorter body made it a call of its own (p2p 2 64: +9 instructions per poll).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Result poll_once(uint64_t now_us);
  // The usual tick: started, running, no handshake open, nobody cut, no rejoin, no automatic
  // delay still to pick, no delay change pending or of ours out, one local player, no
  // spectators, no desync detection, the usual send pass. poll_once and advance then run only
  // the routines the usual match needs, without a dozen tests each (p2p 2 64: ~35 instructions
  // per poll, ~20 per frame). usual_tick_ is the byte kept of it: worked out at the end of every
  // poll that was not the usual one (poll_unusual), and cleared wherever one of those
  // conditions stops holding between (unusual_tick); one that starts to hold waits for the next
  // unusual poll. A test only (usual_tick_holds_for_tests) asks whether the byte ever says usual
  // where the state is not. Of the clears, the cut's (activate_cuts) and a delay change's
  // (schedule_delay) decide; a delay change of ours (plan_delay: it schedules the change in the
  // same call), the rejoin paths' and a failed handshake's find the byte cleared already today
  // (every rejoin follows a cut, cuts_active_ is sticky, and a handshake fails only while one is
  // open): they stay so that loosening any of those cannot leave a stale byte. (A machine that
  // came back, rejoin_phase_ playing, has cuts_active_ from init.)
  bool usual_tick_now() const noexcept {
    return !general_ticks_ && started_ && running_ && !failed_ && !handshakes_open_ && !unusual_passes_ &&
           !cuts_active_ && rejoin_phase_ == RejoinPhase::off && !(auto_delay_ && !auto_delay_done_) &&
           pending_delay_count_ == 0 && own_delays_active_ == 0 && local_count_ == 1 && rejoin_askers_ == 0 &&
           !rejoin_untold_ && num_spectators_ == 0 && !desync_.enabled() && !desync_states_.enabled();
  }
  void unusual_tick() noexcept { usual_tick_ = false; }
  [[gnu::noinline]] Result poll_unusual();
  [[gnu::noinline]] void start_peers();  // out of line: once, and its event kept off poll's stack
  template <bool kOne>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Result poll_peers();
  // The match has one peer, a player's (two players, no spectators): set at init.
  bool one_peer_ = false;
  Result finish_running_poll();
  Result finish_unusual_tick();
  // poll's steps that the usual poll and poll_unusual share, in their order: every player
  // peer's inputs to the driver; our frame and the confirmed frame marked on the timeline (the
  // confirmed frame returned); the lateness of what arrived and (for watch_progress) when each
  // player peer's input stream last moved.
  void drain_all_inputs() {
    for (uint32_t i = 0; i < num_player_peers_; ++i) drain_inputs(peers_[i]);
  }
  // kUsual: on the usual tick, where the frame is always the one marked (it moves only in an
  // advance, which marks it, or in a rejoin's state load, after a cut).
  template <bool kUsual = false>
  Frame mark_frames() {
    // The frame is usually the one advance_frame marked already (the driver's frame never goes
    // back, so the newest mark is that frame's own): the lookup only when it moved otherwise.
    if (!kUsual && driver_.frame() != timeline_.newest_started()) timeline_.on_frame(driver_.frame(), now_);
    // Asked once for the timeline and retire_decisions: nothing between them adds an input or
    // cuts a player (drain_inputs above, advance and the disconnect agreement do), so it stays.
    const Frame confirmed = driver_.confirmed_frame();
    timeline_.on_confirmed(confirmed, now_);
    return confirmed;
  }
  void watch_all_lateness() {
    // One pass over the player peers: the lateness of what arrived, and (for watch_progress)
    // when each one's input stream last moved. Neither changes what the other reads, and
    // nothing between here and watch_progress moves a stream or drops a player peer.
    for (uint32_t i = 0; i < num_player_peers_; ++i) {
      Peer& peer = peers_[i];
      if (peer.dropped) continue;
      watch_lateness(peer, i);
      peer.progress.observe(peer.endpoint.last_received_frame(), now_);
    }
  }
  // Always inline: the one call is advance_frame()'s (as poll_once in poll).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Result advance();
  [[gnu::noinline]] Result advance_unusual();
  Result disconnect(PlayerIndex player);
  void receive_datagrams();
  // [[gnu::noinline]] below: what poll_once calls only when something is off the usual match
  // (an event or channel message waiting, a handshake open, a cut, a rejoin, spectators, desync
  // detection, a delay change, a stall) stays out of line, each behind its one-line test. Inlined,
  // those bodies made poll_once too big for GCC to keep the usual path in registers and to take
  // poll's send pass in (p2p 2 64: -30 instructions per peer-frame, 8 peers -31).
  [[gnu::noinline]] void handle_endpoint_events(Peer& peer);
  [[gnu::noinline]] void drop_peer(Peer& peer, bool tell_peer);
  [[gnu::noinline]] void agree_on_disconnects();
  [[gnu::noinline]] void announce_agreed_cuts();
  // Hands the inputs received from a player peer to the driver. Inline as far as "nothing new
  // since the last drain", which the endpoint answers alone (drain_due: about two polls in five
  // at 2 peers; a peer that sent nothing yet is one of them). The rest out of line, where the
  // usual drain is one call each to the endpoint and the driver, both inline.
  void drain_inputs(Peer& peer) {
    if (drain_due(peer.endpoint) && peer.player_count != 0)
      drain_new_inputs(peer, peer.endpoint.last_received_frame());
  }
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void drain_new_inputs(Peer& peer, Frame next);
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void drain_runs(Peer& peer, Frame next);
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void drain_frames(Peer& peer, Frame next);
  // Sends the local inputs every player peer may have now (send_local_inputs_all). Inline:
  // both send passes of every tick call it, and the poll's usually finds nothing left, which it
  // tells here in a few loads: one local player, no delay change of ours out, nobody gone, and
  // every streaming peer has the newest ready frame, which counts as sent. (A ready frame past
  // the newest counted as sent always means work: asked first, it sends advance's call on.)
  // Usually the last send_ready_inputs found exactly that and nothing it looked at changed since
  // (idle_ready_): then one comparison tells it.
  // Work to do on the usual machine goes to send_ready_inputs<true> at once (what
  // send_local_inputs_all would choose, without asking again).
  void send_local_inputs() {
    if (local_count_ == 1 && own_delays_active_ == 0) {
      const Frame ready = driver_.last_confirmed(local_players_[0]);
      if (!cuts_active_ && (ready == idle_ready_ || (ready <= last_local_sent_ && streams_have(ready)))) return;
      send_ready_inputs<true>(ready);
      return;
    }
    send_local_inputs_all();
  }
  // send_local_inputs on the usual tick (usual_tick_: one local player, no delay change of ours
  // out, nobody cut), without asking those.
  void send_local_inputs_usual() {
    const Frame ready = driver_.last_confirmed(local_players_[0]);
    if (ready == idle_ready_ || (ready <= last_local_sent_ && streams_have(ready))) return;
    send_ready_inputs<true>(ready);
  }
  // Every streaming player peer has `ready`, and none more than last_local_sent_.
  bool streams_have(Frame ready) const noexcept {
    bool idle = true;
    for (uint32_t i = 0; i < num_player_peers_; ++i)
      if (!peers_[i].dropped && !stream_waits_[i])
        idle &= sent_to_peer_[i] >= ready && sent_to_peer_[i] <= last_local_sent_;
    return idle;
  }
  [[gnu::noinline]] void send_local_inputs_all();
  template <bool kUsual>
  void send_ready_inputs(Frame ready);
  // What send_ready_inputs learns over the player peers (send_ready_to), for its bookkeeping
  // after them (note_ready_sent).
  struct ReadyTally {
    Frame newest;              // the newest frame sent to a streaming peer, last_local_sent_ at least
    Frame lowest = INT32_MAX;  // the lowest frame a streaming peer has now (idle_ready_)
    bool anyone = false;       // some player peer streams
  };
  // `holds`: holds_may_apply() (or the tests' full passes), asked once for every peer.
  template <bool kUsual>
  void send_ready_to(uint32_t i, Frame ready, bool holds, ReadyTally& tally);
  // Whether a hold of send_ready_to's (our decisions, the rejoin notices we sent or relayed) may
  // keep a frame from some peer: usually none is in flight, and then none is asked per peer.
  bool holds_may_apply() const noexcept {
    return decisions_.may_hold() || rejoin_hold_.may_hold() || relay_hold_.may_hold();
  }
  void note_ready_sent(Frame ready, const ReadyTally& tally);
  // advance_frame's send_local_inputs and send_due(true) on the usual machine (one local player,
  // no delay change of ours out, the usual pass: no cut, no test switch), as one loop.
  bool advance_sends_usual() const noexcept {
    return local_count_ == 1 && own_delays_active_ == 0 && !unusual_passes_;
  }
  void advance_sends();
  void advance_sends_one(Frame ready);   // one player peer: its usual frame
  void advance_sends_many(Frame ready);  // any other: advance_sends_all or advance_sends_loop
  void advance_sends_all(Frame ready);   // every player peer's usual frame
  void advance_sends_loop(Frame ready);  // the rest: send_ready_to's loop
  // Some player peer, and every one streaming with every frame up to `f` sent, none past it.
  bool streams_at(Frame f) const noexcept {
    bool all = num_player_peers_ != 0;
    for (uint32_t i = 0; i < num_player_peers_; ++i)
      all &= !peers_[i].dropped && !stream_waits_[i] && sent_to_peer_[i] == f;
    return all;
  }
  void keep_status_frames();  // the players' last frames, kept once a player is gone
  [[gnu::noinline]] void stream_to_spectators();
  [[gnu::noinline]] void exchange_checksums();
  void compare_reports(Peer& peer);
  // Always inline: advance's usual frame and advance_unusual call it; as a call of its own
  // (GCC's choice with two callers) it cost ~16 instructions a frame more. kUsual: on the usual
  // tick (usual_tick_), where no player peer is dropped or rejoining; kOne: the one player peer
  // of a two-player match (one_peer_), without the loop.
  template <bool kUsual = false, bool kOne = false>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void update_time_sync();
  // Time sync's advice to wait `wait` frames (a few times a match): out of line, so that the
  // usual frame does not hold its event on the stack.
  [[gnu::noinline]] void advise_wait(int32_t wait);
  // Inline for the usual tick of a running peer: nothing arrived from it since the last one
  // (LatenessMonitor::quiet), or it came back lately (judge_lateness sees to both).
  // `i`: the peer's index (&peer - peers_, which the caller's loop has without a division).
  void watch_lateness(Peer& peer, uint32_t i) {
    if (rejoined_at_us_[peer.players[0]] != 0) [[unlikely]] {
      if (!peer.dropped && !peer.rejoining && peer.endpoint.running()) watch_rejoined_lateness(peer, i);
      return;
    }
    const Endpoint& ep = peer.endpoint;
    // quiet(), its first compare alone first: a tick with an arrival (about half) goes straight
    // to the judgement. Asked before the peer's state: when nothing changed, judged or not, the
    // tick does nothing either way.
    if (ep.datagrams_received() == peer.lateness.datagrams_seen() &&
        peer.lateness.quiet_since_last_datagram(ep.last_received_frame(), ep.last_acked_frame(), ep.ping_us(),
                                                ep.jitter_us(), ep.silences().told().arrived_at_us))
      return;
    if (peer.dropped || peer.rejoining || !peer.endpoint.running()) return;
    judge_lateness(peer, i);
  }
  void watch_rejoined_lateness(Peer& peer, uint32_t i);
  // The usual datagram brings no silence note the monitor has not taken: its judgement takes the
  // endpoint's values without a Link (LatenessMonitor::observe_usual), and the rare call that is
  // not usual, or brings a new note, the whole Link.
  void judge_lateness(Peer& peer, uint32_t i) {
    if (peer.lateness.new_silence_note(peer.endpoint.silences().told().arrived_at_us)) [[unlikely]]
      judge_lateness_general(peer, i);
    else
      judge_lateness_usual(peer, i);
  }
  // Out of line: inlined in poll_once it cost that loop more than the call (+38 instructions
  // per peer-frame of the P2P benchmark).
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void judge_lateness_usual(Peer& peer, uint32_t i);
  // Out of line: the usual judgement keeps few values live when the rare one is a call.
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void judge_lateness_general(Peer& peer, uint32_t i);
  void report_late_inputs(Peer& peer, int32_t worst);
  // A rejoining machine runs once the state is loaded (take_rejoin_state).
  void update_running() {
    if (running_ || failed_ || rejoining_) return;
    start_running_when_ready();
  }
  [[gnu::noinline]] void start_running_when_ready();
  // Liveness in frames: the stall episode's watch every poll, the rest (watch_stall) only while
  // the prediction window blocks us. Each player peer's progress (its stream's newest frame and
  // when it moved) was observed in this poll already, with its lateness (poll_once).
  void watch_progress() {
    if (driver_.window_full()) {
      watch_stall(stall_.update(true, now_, notify_delay_us_));
    } else {
      stall_.update(false, now_, notify_delay_us_);
    }
  }
  [[gnu::noinline]] void watch_stall(bool tell);
  [[gnu::noinline]] void watch_handshakes();
  [[gnu::noinline]] void check_anyone_left();
  bool reports_any_cut(const Endpoint& endpoint) const;
  PlayerIndex awaited_player() const;
  uint64_t silence_of(PlayerIndex player) const;
  uint64_t silent_after_us() const;
  // The send pass: the usual one (no cuts, no test switch) inline here, tested once per pass
  // (unusual_passes_); every other pass goes through send_due_unusual.
  void send_due(bool again = false) {
    if (unusual_passes_) [[unlikely]] {
      send_due_unusual(again);
      return;
    }
    send_due_either_pass<false>(again);
  }
  // poll_once's send_due(): its usual pass is the quiet probe (send_due_poll_pass). Left to GCC,
  // which takes it into poll_once since the routines off the usual match are out of line (forced
  // inline while they were in, p2p 2 64 measured +16).
  void send_due_at_poll() {
    if (unusual_passes_) [[unlikely]] {
      send_due_unusual(false);
      return;
    }
    send_due_poll_pass<false>();
  }
  // poll's pass or advance_frame's (`again`), each its own loop.
  template <bool kCuts>
  void send_due_either_pass(bool again) {
    if (again) {
      send_due_pass<kCuts, true>();
    } else {
      send_due_pass<kCuts, false>();
    }
  }
  // poll's usual pass (no cuts, no test switch). Most find every peer quiet: nothing due, an
  // idle channel, so nothing sent and nothing flushed (p2p 2 64: 5,436 of 6,000). This asks that
  // first, peer by peer (quiet_peer), in a function of its own without the loud path's calls:
  // send_due_pass<false, false>, which holds both, spent ~43 instructions of a one-peer pass on
  // its entry, loop and exit. At the first peer that is not quiet, finish_poll_pass does what
  // send_due_pass<false, false> does from there on, with every call in the same order: the same
  // datagrams (send_pass_test compares both with the full passes). kCuts as send_due_pass's
  // (only the usual pass, false, takes this way; as templates, GCC's code for them measured
  // better than as plain members: p2p 8 64 -15 against +12).
  // kUsual: on the usual tick (no spectators; quiet_peer's kUsual).
  template <bool kCuts, bool kUsual = false>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void send_due_poll_pass() {
    basis_known_ = false;
    const uint32_t players = num_player_peers_, peers = num_peers_;
    uint32_t i = 0;
    PeerStop stop = PeerStop::quiet;
    while (i < players && (stop = quiet_peer<kCuts, false, kUsual>(i)) == PeerStop::quiet) ++i;
    if (!kUsual && stop == PeerStop::quiet)
      while (i < peers && (stop = quiet_peer<kCuts, true>(i)) == PeerStop::quiet) ++i;
    if (stop != PeerStop::quiet) [[unlikely]] {
      finish_poll_pass<kCuts>(i, stop);
      return;
    }
    // Nothing sent: a flush only for the stranger replies (as send_due_pass).
    if (!stranger_sent_) return;
    stranger_sent_ = false;
    transport_->flush();
  }
  // send_due_poll_pass<false> for the one player peer of a two-player match (one_peer_).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void quiet_probe_one() {
    const PeerStop stop = quiet_peer<false, false, /*kUsual=*/true, /*kDirect=*/true>(0);
    if (stop != PeerStop::quiet) [[unlikely]] {
      basis_known_ = false;  // the pass's kept basis starts here
      finish_poll_pass<false>(0, stop);
      return;
    }
    if (!stranger_sent_) return;
    stranger_sent_ = false;
    transport_->flush();
  }
  // The urgency of `peer`'s confirmations as its endpoint's polls take it: a callable the
  // endpoint calls only where a decision reads it (peer_urgent). One for every pass.
  template <bool kSpectator>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  auto urgency_of(const Peer& peer) {
    return [this, &peer]()
#if defined(__GNUC__)
               __attribute__((always_inline))
#endif
               -> bool { return peer_urgent<kSpectator>(peer); };
  }
  // Where quiet_peer left a peer: quiet (its part of the pass done, nothing sent); its endpoint
  // not quiet (poll_quietly said so, having changed nothing a poll reads); or its endpoint quiet
  // (its mark taken) and its channel not idle.
  enum class PeerStop : uint8_t { quiet, endpoint, channel };
  // pass_peer<kCuts, false, kSpectator> and poll_peer up to their quiet answer, in their order.
  // kUsual: a player peer on the usual tick, neither idle (started_: an endpoint is idle again
  // only after init, which only a rejoin does, after a cut) nor dropped (a drop is a cut).
  // kDirect: the one player peer of the usual tick (quiet_probe_one), whose urgency is worked
  // out where the endpoint asks, without the pass's kept basis (no other endpoint shares it).
  template <bool kCuts, bool kSpectator, bool kUsual = false, bool kDirect = false>
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  PeerStop quiet_peer(uint32_t i) {
    Peer& peer = peers_[i];
    if constexpr (kCuts) tell_statuses(peer, i);
    if (!kUsual && peer.endpoint.state() == EndpointState::idle) return PeerStop::quiet;
    peer.endpoint.set_stalled(!kSpectator && stalled_);
    auto urgency = [this, &peer]()
#if defined(__GNUC__)
                       __attribute__((always_inline))
#endif
                       -> bool {
      if constexpr (kDirect) {
        return urgent_by(basis_now(), peer);
      } else {
        return peer_urgent<kSpectator>(peer);
      }
    };
    if (!peer.endpoint.poll_quietly(now_, urgency)) return PeerStop::endpoint;
    if (!peer.endpoint.quiet_allowed()) [[unlikely]] tell_riding_report(peer);
    if ((!kUsual && peer.dropped) || peer.channel.poll_idle(now_)) return PeerStop::quiet;
    return PeerStop::channel;
  }
  // A quiet endpoint with riders waiting (Endpoint::riders_wait): a report among them carries
  // our frame as told at this poll, as a loud poll would have told it first (it rides on the
  // inputs datagram advance_frame's pass sends right after, at the same frame and time).
  void tell_riding_report(Peer& peer) {
    if (peer.endpoint.report_may_go(now_)) tell_local_frame(peer);
  }
  // The rest of poll's usual pass, from peer `i` where quiet_peer stopped (`stop`).
  template <bool kCuts>
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void finish_poll_pass(uint32_t i, PeerStop stop);
  template <bool kSpectator>
  bool finish_peer(Peer& peer, PeerStop stop);
  // The pass's loop, the player peers' first, then the spectators' (peers_ holds them in that
  // order), each with what cannot differ among them known. kCuts: a player may be gone
  // (cuts_active_), so every endpoint is told the players' statuses first; without, none is
  // (every one is connected, as the endpoints' copy starts), and the usual pass asks nothing
  // about it. kAgain: advance_frame's pass (send_due's `again`). poll's usual pass
  // (<false, false>) is send_due_poll_pass, which ends in these calls.
  template <bool kCuts, bool kAgain>
  void send_due_pass();
  template <bool kCuts, bool kAgain, bool kSpectator>
  bool pass_peer(uint32_t i);
  template <bool kSpectator>
  bool poll_peer(Peer& peer);
  template <bool kSpectator>
  bool peer_urgent(const Peer& peer);
  template <bool kSpectator>
  bool poll_peer_again(Peer& peer);
#if defined(__GNUC__)
  __attribute__((noinline, cold))
#endif
  void send_due_unusual(bool again);
  // send_due's copy of the players' statuses into peer `i`'s endpoint, once a player may be
  // gone (cuts_active_). Out of line: the usual pass never calls it.
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void tell_statuses(Peer& peer, uint32_t i) {
    peer.endpoint.set_local_connect_status(
        peer.spectator ? status_for_spectator(i - num_player_peers_) : local_status_, num_players_);
  }
#if defined(__GNUC__)
  __attribute__((noinline, cold))
#endif
  void send_due_full(bool again);
  // The session's part of the urgency, worked out at the first endpoint of a pass that asks for
  // it (send_due; basis_known_ is cleared at the start of each pass). Always inline: asked in about
  // a fifth of the passes, its call cost more than its body (p2p 2 64: -8 instructions per peer-frame).
  struct UrgencyBasis {
    bool pressing = false, half_full = false;
    uint64_t cover_us = 0, three_frames_us = 0;
  };
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  void know_basis() {
    basis_ = basis_now();
    basis_known_ = true;
  }
  // The basis as the session's state has it now.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  UrgencyBasis basis_now() const noexcept {
    UrgencyBasis b;
    // The window in use (lowered to the smallest player's): it is the one that stalls.
    const int32_t window = driver_.prediction_window();
    // Inline: in poll's quiet probe GCC called confirmed_frame() out of line, around four spills.
    const int32_t used = driver_.frame() - driver_.confirmed_frame_inline();
    b.pressing = window == 0 || stalled_ || used > window - 2;
    b.half_full = used > window / 2;
    // The peer's window, seen from here: our input of a frame reaches it a one-way trip later
    // (a slow datagram: plus twice the jitter); its window and our input delay cover that many
    // frames (every player's window in use is the match's smallest, so the peer's is ours).
    // When the slow datagram plus a batch would not fit, every frame goes at once.
    // The driver keeps the local players' smallest delay (INT32_MAX with none).
    const int32_t delay = std::min(kMaxPredictionFrames, driver_.min_local_delay());
    b.cover_us = uint64_t(window + delay) * frame_us_;
    b.three_frames_us = 3 * frame_us_;
    return b;
  }
  // A player peer's urgency from a basis (peer_urgent's, and the one-peer probe's).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool urgent_by(const UrgencyBasis& b, const Peer& peer) const noexcept {
    const uint64_t slow_trip_us = peer.endpoint.ping_us() / 2 + 2 * peer.endpoint.jitter_us() + b.three_frames_us;
    return b.pressing || slow_trip_us >= b.cover_us || (b.half_full && peer.endpoint.loss_recent(now_));
  }
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void tell_local_frame(Peer& peer);
  [[gnu::noinline]] void route_channel_messages(Peer& peer);
  void route_waiting_messages(Peer& peer);
  void on_player_channel_event(Peer& peer, const ChannelEvent& e);
  Result stamp_decision(const void* bytes, size_t size, Frame frame, Frame* earliest);
  Result plan_delay(const AdaptiveDelayRule& rule, Frame frame, DelayChoice* out);
  Result pick_delay(const AdaptiveDelayRule& rule, DelayChoice* out);
  bool schedule_delay(const DelayChange& change);
  Frame hold_for_delays(uint32_t i);
  [[gnu::noinline]] void apply_due_delays();
  [[gnu::noinline]] void auto_delay_at_start();
  bool deciding_machine() const;
  void retire_decisions(Frame confirmed);  // `confirmed`: the driver's confirmed frame
  void emit_peer_event(EventType type, const Peer& peer, const char* message, int32_t count = 0, int32_t total = 0);
  void lower_window(const Peer& peer, uint32_t theirs);
  // ---- rejoin (session/rejoin.h)
  [[gnu::noinline]] bool rejoin_stranger(const PeerAddress& from, const uint8_t* data, size_t length);
  void answer_stranger(const PeerAddress& from, const Handshake& request, size_t length, int32_t peer, bool refused);
  Result answer(PlayerIndex player, bool accept);
  bool on_rejoin_message(Peer& peer, const uint8_t* body, size_t size);
  void on_rejoin_notice(Peer& peer, const uint8_t* body, size_t size);
  [[gnu::noinline]] void serve_rejoin(uint32_t asker);
  void relay_rejoin_notices(const Peer& gone);
  void apply_rejoin(Peer& peer, PlayerIndex player, Frame state_frame, Frame live_at, bool host);
  void resend_local_inputs(Peer& peer, Frame from);
  void resend_own_messages(uint32_t i);
  [[gnu::noinline]] void rejoin_connect();
  void take_rejoin_state(Peer& host);
  void rejoin_catch_up();
  void rejoin_failed(const char* why);
  void tell_rejoined() {
    if (rejoin_untold_) tell_rejoined_players();  // the usual frame: nobody came back
  }
  [[gnu::noinline]] void tell_rejoined_players();
  void tell_spectators_rejoin(PlayerIndex player, Frame cut, Frame state_frame, Frame live_at);
  bool spectator_knows_rejoins(uint32_t i, Peer& spectator, Frame f);
  const ConnectStatus* status_for_spectator(uint32_t i);
  bool reports_cut(const Peer& peer, PlayerIndex player) const;
  bool counts_in_cuts(const Peer& peer) const;
  bool report_counts(const Peer& peer, Frame last_frame) const;
  bool cannot_follow_cut(PlayerIndex player) const;
  void emit_rejoin_event(EventType type, PlayerIndex player, Frame frame, const char* message);

  RollbackDriver driver_;
  CallGuard guard_;
  Transport* transport_ = nullptr;
  Peer peers_[kMaxPeers];
  uint32_t num_peers_ = 0, num_player_peers_ = 0, num_spectators_ = 0;
  int32_t peer_index_of_player_[kMaxPlayers];
  uint32_t num_players_ = 0, input_size_ = 0;
  uint32_t local_count_ = 0;
  PlayerIndex local_players_[kMaxPlayers] = {};  // the first local_count_ entries, ascending
  std::unique_ptr<uint8_t[]> blob_;  // scratch: one frame of inputs to send
  ConnectStatus local_status_[kMaxPlayers];
  bool cut_announced_[kMaxPlayers] = {};  // the disconnected event with the agreed cut was given
  Frame held_at_drop_[kMaxPlayers];       // the newest frame of a dropped player we held (drop_peer)
  DesyncDetector desync_;
  SnapshotServer snapshots_;  // states for spectators that join a running match
  DesyncStates desync_states_;  // both states on a desync (session/desync_states.h)
  std::string describe_text_;
  uint64_t now_ = 0;
  bool started_ = false, running_ = false, failed_ = false;
  // Liveness (see stall_watch.h): the settings, the current stall episode, and when a peer was
  // last dropped (the others may have been waiting for it, so they get time to move on).
  uint64_t notify_delay_us_ = 0, disconnect_timeout_us_ = 0, first_frame_grace_us_ = 0, handshake_timeout_us_ = 0;
  StallWatch stall_;
  uint64_t running_since_ = 0, last_drop_at_ = 0;
  uint64_t advanced_at_ = 0;  // when advance_frame last ran a frame
  bool told_nobody_left_ = false;
  // Event-driven tick: disconnect agreement, the cut announcements and the "anyone left" check
  // have work only once a player machine was dropped here (drop_peer), this machine rejoins, or
  // a peer's datagram reported a player disconnected (receive_datagrams: a peer's reports change
  // only with its datagrams, or with the endpoint's re-init / rejoin_remote_player, which only
  // follow a drop). Sticky: the usual match never sets it; after a drop the tick does everything,
  // as before. While it is false every entry of local_status_ is connected (only drop_peer and
  // the rejoin paths, which follow a drop or run on a rejoining machine, set one disconnected),
  // which send_due relies on. The handshake watch runs only while an endpoint handshakes
  // (handshakes_open_).
  bool cuts_active_ = false;
  // cuts_active_ || full_send_passes_: send_due's one test of whether its pass is the usual
  // one. Kept in step wherever either is set (both only ever become true).
  bool unusual_passes_ = false;
  void activate_cuts() noexcept {
    cuts_active_ = unusual_passes_ = true;
    unusual_tick();
  }
  bool handshakes_open_ = true;
  // A stranger reply went out since the last flush (answer_stranger): the next send pass
  // flushes even if it sends nothing itself (send_due).
  bool stranger_sent_ = false;
  UrgencyBasis basis_;        // send_due: see know_basis
  bool basis_known_ = false;
  Frame last_local_sent_ = kNullFrame;  // the newest local frame sent to any player peer
  Frame sent_to_peer_[kMaxPlayers];     // per player peer: the newest local frame sent to it
  // The ready frame the last send_ready_inputs left every streaming player peer at or past (and
  // last_local_sent_ at or past it): send_local_inputs' idle answer for that frame, without the
  // walk over the peers. kNoIdleReady when it did not, and whenever anything it depends on
  // changes elsewhere (a stream restarted or resumed, a peer back, last_local_sent_ set back:
  // forget_idle_ready, in the rejoin paths). A peer dropped or waiting only removes a condition.
  // Today those forgets decide nothing, and no test can see one removed: send_local_inputs
  // reads the mark only while no cut was ever taken (!cuts_active_, sticky), and every rejoin
  // path runs after one (a drop, a peer's report of a cut, or a rejoining machine's init).
  // Even read under cuts, answer's would be redundant (the peer's stream waits until
  // apply_rejoin), apply_rejoin's and resend_local_inputs' are back to back (its only caller),
  // and take_rejoin_state's comes before the rejoiner's first send_local_inputs. They stay so
  // that loosening that guard cannot leave a stale mark.
  static constexpr Frame kNoIdleReady = INT32_MIN;
  Frame idle_ready_ = kNoIdleReady;
  void forget_idle_ready() noexcept { idle_ready_ = kNoIdleReady; }
  // The newest frame cleared for spectators (confirmed, no disconnect cut settling before it),
  // and per spectator the next frame it gets (session/decision_exchange.h: a frame waits until
  // the spectator holds its decisions). parked_: one that has not come yet and fell behind the
  // inputs kept; it is served from a state when it asks for one.
  Frame last_streamed_ = kNullFrame;
  Frame next_to_stream_[kMaxSpectators] = {};
  bool parked_[kMaxSpectators] = {};
  WaitAdvice advice_;
  CatchUp catch_up_;
  // Time-sync samples count only from quality reports that arrived after this time: a report
  // must reflect the last wait before the gap is measured again.
  uint64_t sample_fence_us_ = 0;
  // The configured window (SessionConfig::max_prediction). The window in use is the driver's
  // prediction_window(), lowered by lower_window(). Where a bound is about a peer's window, the
  // configured one stands for it: a player peer lowered its own to at most ours when it completed
  // its handshake with us, before it ran a frame with us, and never raises it.
  int32_t max_prediction_ = 0;
  uint64_t frame_us_ = 16667;
  bool stalled_ = false;  // the last advance_frame was refused
  bool full_send_passes_ = false;  // tests only: send_pass_switch.h, as it was at init
  bool general_ticks_ = false;      // tests only: tick_path_switch.h, as it was at init
  bool usual_tick_ = false;         // see usual_tick_now
  int32_t disconnect_settle_frames_ = 0;
  uint64_t dropped_unknown_address_ = 0;
  uint64_t checksums_compared_ = 0;
  LocalTimeline timeline_;  // when our frames started and our inputs went out (late-input detection)
  int32_t late_input_threshold_ = 15;
  ReportThrottle desyncs_{10};  // the first desync in full, then a summary every 10 more
  SessionShape shape_;          // ours, to name what differs in a rejected handshake
  DecisionExchange decisions_;  // timed decisions (session/decision_exchange.h)
  // Adaptive delay applied at one frame (session/delay_change.h): changes not yet due here.
  // Each player machine may have this many delay changes pending here; the pool holds every
  // sender's share, so a peer scheduling changes far ahead cannot crowd out another's.
  static constexpr uint32_t kMaxPendingDelaysPerSender = 4;
  static constexpr uint32_t kMaxPendingDelays = kMaxPendingDelaysPerSender * uint32_t(kMaxPlayers);
  uint32_t pending_delays_of(PlayerIndex sender) const {
    uint32_t n = 0;
    for (uint32_t k = 0; k < pending_delay_count_; ++k) n += pending_delays_[k].sender == sender;
    return n;
  }
  DelayChange pending_delays_[kMaxPendingDelays];
  uint32_t pending_delay_count_ = 0;
  // Our own changes not yet acknowledged by every peer. A peer switches before it takes its
  // input of the change's frame, and on prediction it may run up to a window past the frames it
  // has from us: so our input stream stops a window before the frame until every peer holds the
  // change (see hold_for_delays), each peer's stream for its own acknowledgement. Loss and jitter
  // then delay our inputs, never the change.
  struct OwnDelay {
    bool active = false;
    Frame frame = 0;
    uint32_t seq[kMaxPlayers] = {};
    bool sent_to[kMaxPlayers] = {};
  };
  OwnDelay own_delays_[kMaxPendingDelaysPerSender];
  uint32_t own_delays_active_ = 0;  // entries of own_delays_ active (0: no hold, the usual case)
  uint64_t delay_changes_dropped_ = 0;
  uint64_t delay_changes_too_far_ = 0;  // of those: for a frame no honest sender can name
  DelayChange last_applied_delay_;  // the newest change applied here (frame kNullFrame: none)
  bool auto_delay_ = false, auto_delay_done_ = false;
  AdaptiveDelayRule auto_rule_;
  // Rejoin (session/rejoin.h). On every machine: whether a dropped player may come back, each
  // player peer's endpoint settings (a new connection starts from them), a request waiting for
  // the game's answer, the frame a player came back at (kNullFrame: never), and the state buffer
  // (sent by a host, received by a rejoining machine).
  bool allow_rejoin_ = false, rejoining_ = false;
  EndpointConfig endpoint_config_[kMaxPlayers];
  ChannelConfig player_channel_;
  DatagramAuth stranger_auth_;  // opens a stranger's handshake request (with the match key)
  StrangerReplies stranger_replies_;  // a refused or shape-rejected rejoiner hears why at once
  struct RejoinRequest {
    bool waiting = false;
    PeerAddress from, refused;
  };
  RejoinRequest rejoin_requests_[kMaxPlayers];
  uint64_t rejoin_connections_ = 0;
  Frame rejoined_at_[kMaxPlayers];
  bool rejoin_told_[kMaxPlayers] = {};
  bool rejoin_untold_ = false;  // some rejoined_at_ entry is not told yet (tell_rejoined scans)
  uint64_t rejoined_at_us_[kMaxPlayers] = {};  // when player_rejoined was told
  std::unique_ptr<uint8_t[]> rejoin_buffer_;
  size_t rejoin_buffer_size_ = 0;
  RejoinHold rejoin_hold_;   // host: inputs from the live frame on wait for the notices
  RejoinHold relay_hold_;    // any machine: the same for the notices it relays
  RejoinNotice relay_notice_[kMaxPlayers];  // per player: the notice applied here, and its sender
  int32_t relay_from_[kMaxPlayers] = {-1, -1, -1, -1, -1, -1, -1, -1};
  // Per player peer coming back: our inputs to it wait until we know the state's frame S
  // (apply_rejoin restarts the stream there). Frames sent before would be acknowledged against
  // the rejoiner's stream restarted at S, and encoded against a frame it does not hold.
  bool stream_waits_[kMaxPlayers] = {};
  // Host: bit i, player peer i's state request waits to be served (two machines that came back
  // together both ask; one slot lost the first request, and that machine waited for ever).
  uint32_t rejoin_askers_ = 0;
  uint32_t dropped_asking_ = 0;  // rejoining: bit i, player peer i left while we asked for the state
  // The rejoining machine's progress.
  enum class RejoinPhase : uint8_t { off, connecting, asking, loading, playing, failed };
  RejoinPhase rejoin_phase_ = RejoinPhase::off;
  int32_t rejoin_host_ = -1;
  uint64_t rejoin_connected_at_ = 0;
  RejoinOffer rejoin_offer_;
  // Spectators follow a rejoin too: each gets the notice (per player, the newest rejoin) on its
  // stream 2, and no frame from the live frame on before it acknowledged it.
  RejoinNotice spectator_notice_[kMaxPlayers];
  struct SpectatorNotice {
    bool due = false, sent = false;
    uint32_t seq = 0;
    bool report_cut = false;  // it has not seen the player's cut: our status to it keeps it
  };
  ConnectStatus spectator_status_[kMaxPlayers];  // scratch: the status one spectator gets
  SpectatorNotice spectator_notices_[kMaxSpectators][kMaxPlayers];
  uint8_t datagram_[kReceiveBufferSize];
  // receive_datagrams' sender, a member: a local one zeroed its 36 bytes on every poll. Only the
  // size is reset before each receive (a transport that writes nothing leaves an empty address,
  // as before); bytes past the size are never compared, hashed or reported.
  PeerAddress from_;
};

// The distinct machines of the config's remote players (a machine may play several players).
uint32_t remote_player_machines(const P2PConfig& c) {
  uint32_t machines = 0;
  for (uint32_t p = 0; p < c.session.num_players && p < kMaxPlayers; ++p) {
    if (c.players[p].kind != PlayerKind::remote) continue;
    bool seen = false;
    for (uint32_t q = 0; q < p && !seen; ++q)
      seen = c.players[q].kind == PlayerKind::remote && c.players[q].address == c.players[p].address;
    if (!seen) ++machines;
  }
  return machines;
}

Result P2PSessionImpl::init(const P2PConfig& c) {
  for (Frame& f : sent_to_peer_) f = kNullFrame;
  const SessionConfig& s = c.session;
  if (validate_p2p_config(c) != nullptr) return Result::invalid_argument;
  if (c.network.transport == nullptr || c.desync_interval < 0 || c.num_spectators > uint32_t(kMaxSpectators) ||
      c.network.frame_rate < 1 || c.network.frame_rate > 65535 || c.network.sync_round_trips < 1 ||
      c.network.input_batch_frames < 1 || c.network.input_batch_frames > 60)
    return Result::invalid_argument;
  num_players_ = s.num_players;
  input_size_ = s.input_size;
  max_prediction_ = s.max_prediction;
  transport_ = c.network.transport;
  full_send_passes_ = full_send_passes_for_tests.load(std::memory_order_relaxed);
  unusual_passes_ = full_send_passes_ || cuts_active_;
  general_ticks_ = general_ticks_for_tests.load(std::memory_order_relaxed);

  // Desync detection needs saved states of confirmed frames, even in lockstep.
  SaveMode mode = s.save_mode;
  // So does state transfer (the states it sends are saved ones), and so does a match with two
  // or more other player machines: a peer's disconnect cut can lie before frames this machine
  // already simulated with the leaver's inputs (they reached us, not that peer), and following
  // it means loading a state from before the cut (the checkpoints, which need saves).
  if ((c.desync_interval > 0 || c.network.state_transfer || remote_player_machines(c) >= 2) &&
      s.max_prediction == 0 && mode == SaveMode::automatic)
    mode = SaveMode::every_frame;
  if (Result r = driver_.init(s, s.max_prediction, mode); r != Result::ok) return r;
  // A dropped player's agreed last frame can be older than this machine's window: a peer that
  // lost them early reports it only with its next inputs, up to a window and both delays later.
  // Our configured window: every player we play with runs with one no larger (lower_window).
  if (Result r = driver_.enable_checkpoints(2 * s.max_prediction + kDisconnectDelayAllowance); r != Result::ok)
    return r;
  if (Result r = driver_.set_checksum_interval(c.desync_interval); r != Result::ok) return r;
  if (c.num_spectators > 0)
    if (Result r = snapshots_.init(driver_, c.network.state_transfer, s.max_state_size); r != Result::ok) return r;
  disconnect_settle_frames_ = 2 * (s.max_prediction + kDisconnectDelayAllowance);
  // Decisions are kept as long as a late disconnect cut can roll back, and (a host) until every
  // spectator has them, which may be seconds later.
  if (Result r = decisions_.init(driver_, disconnect_settle_frames_ + kDisconnectDelayAllowance,
                                 c.num_spectators > 0 ? kSpectatorDecisionsPerSender : kDecisionsPerSender);
      r != Result::ok)
    return r;
  // A spectator may hold the stream until it has a frame's decisions: the inputs of frames not
  // streamed yet stay readable that long (then it is dropped, see stream_to_spectators).
  allow_rejoin_ = c.allow_rejoin;
  rejoining_ = c.rejoining;
  if (c.num_spectators > 0 || allow_rejoin_ || rejoining_)
    if (Result r = driver_.keep_confirmed_inputs(std::max(c.num_spectators > 0 ? kSpectatorHoldFrames : 0,
                                                          allow_rejoin_ || rejoining_ ? kRejoinKeepFrames : 0));
        r != Result::ok)
      return r;
  // A rejoin host sends a state, a rejoining machine receives one: one buffer each.
  if (rejoining_ || (allow_rejoin_ && c.network.state_transfer)) {
    if (Result r = driver_.commit_memory(s.max_state_size, "the rejoin state buffer"); r != Result::ok) return r;
    rejoin_buffer_.reset(new (std::nothrow) uint8_t[s.max_state_size]);
    if (!rejoin_buffer_) return Result::out_of_memory;
    rejoin_buffer_size_ = s.max_state_size;
  }
  for (Frame& f : rejoined_at_) f = kNullFrame;
  for (Frame& f : held_at_drop_) f = kNullFrame;

  uint16_t local_mask = 0;
  for (uint32_t p = 0; p < num_players_; ++p) {
    peer_index_of_player_[p] = -1;
    const PlayerSetup& setup = c.players[p];
    if (setup.kind == PlayerKind::local) {
      driver_.set_local(PlayerIndex(p), true);
      local_mask = uint16_t(local_mask | (1u << p));
      local_players_[local_count_++] = PlayerIndex(p);
      continue;
    }
    if (setup.kind != PlayerKind::remote || setup.address.size == 0 || setup.address.size > PeerAddress::kCapacity)
      return Result::invalid_argument;
    driver_.set_local(PlayerIndex(p), false);
    Peer* peer = find_peer(setup.address);
    if (peer == nullptr) {
      peer = &peers_[num_peers_++];
      peer->address = setup.address;
    }
    peer->players[peer->player_count++] = PlayerIndex(p);
    peer_index_of_player_[p] = int32_t(peer - peers_);
  }
  if (local_count_ == 0) return Result::invalid_argument;  // a machine with no player is a spectator
  num_player_peers_ = num_peers_;
  for (uint32_t i = 0; i < c.num_spectators; ++i) {
    if (c.spectators[i].size == 0 || c.spectators[i].size > PeerAddress::kCapacity || find_peer(c.spectators[i]))
      return Result::invalid_argument;
    Peer& peer = peers_[num_peers_++];
    peer.address = c.spectators[i];
    peer.spectator = true;
  }
  num_spectators_ = c.num_spectators;
  one_peer_ = num_peers_ == 1 && num_player_peers_ == 1;

  for (uint32_t i = 0; i < num_peers_; ++i) {
    Peer& peer = peers_[i];
    EndpointConfig e;
    // Our configured window: each player plays with the smallest it hears of (lower_window).
    e.shape = SessionShape{num_players_, input_size_, c.network.frame_rate, uint32_t(max_prediction_)};
    shape_ = e.shape;
    e.players_owned = local_mask;
    e.send_blob_size = uint16_t((peer.spectator ? num_players_ : local_count_) * input_size_);
    e.receive_blob_size = uint16_t(peer.spectator ? 0 : peer.player_count * input_size_);
    e.notify_delay_us = c.network.notify_delay_us;
    e.disconnect_timeout_us = c.network.disconnect_timeout_us;
    if (e.disconnect_timeout_us != 0 && e.notify_delay_us > e.disconnect_timeout_us) e.notify_delay_us = e.disconnect_timeout_us;
    e.sync_round_trips = c.network.sync_round_trips;
    e.input_batch_frames = c.network.input_batch_frames;
    e.loss_hold_frames = c.network.loss_hold_frames;
    apply_network_security(c.network, i, &e);
    e.logger = s.logger;
    // A rejoining machine buffers the others' inputs since the state's frame while it arrives.
    if (rejoining_ && !peer.spectator) e.receive_window_frames = 1024;
    if (Result r = peer.endpoint.init(e); r != Result::ok) return r;
    // Every peer gets the reliable channel (messages; spectators: states, with state transfer;
    // players: states too when a rejoin may need one, or desync states are shared).
    const bool rejoin_state = rejoin_buffer_ != nullptr && !peer.spectator;
    ChannelConfig channel = transfer_channel_config(c.network, peer.spectator || rejoin_state ? s.max_state_size : 0);
    if (!peer.spectator && c.share_desync_states)
      channel.max_blob_size = std::max(channel.max_blob_size, desync_state_cap(c));
    if (Result r = peer.channel.init(channel); r != Result::ok) return r;
    peer.endpoint.set_channel_sink(&peer);
    if (!peer.spectator) {
      endpoint_config_[i] = e;
      player_channel_ = channel;
      // Nothing of the match's input streams is taken until the host said where they start.
      if (rejoining_) peer.endpoint.pause_receive();
    }
  }
  if (allow_rejoin_ && !stranger_auth_.configure(c.network.has_match_key ? c.network.match_key : nullptr, true))
    return Result::unsupported;
  if (allow_rejoin_) stranger_replies_.init(c.network.rng_seed == 0 ? 0 : c.network.rng_seed ^ 0x5a1d7e3c9b2f4e61ull);
  if (rejoining_) {
    rejoin_phase_ = RejoinPhase::connecting;
    activate_cuts();  // it takes the match's cuts from the state
  }
  frame_us_ = 1000000u / c.network.frame_rate;
  advice_.set_frame_time(frame_us_);
  catch_up_.set_frame_time(frame_us_);
  blob_ = std::make_unique<uint8_t[]>(size_t(num_players_) * input_size_);
  for (auto& st : local_status_) st = ConnectStatus{};
  desync_.init(c.desync_interval);
  if (c.share_desync_states) {
    if (Result r = desync_states_.init(driver_, desync_state_cap(c), c.desync_interval, peers_, num_player_peers_);
        r != Result::ok)
      return r;
    // Sparse saving checksums probes, not saves: their states are the ones to keep.
    driver_.set_probe_observer({&desync_states_, [](void* user, const SavedState& probe) {
                                  static_cast<DesyncStates*>(user)->stage(probe.frame, probe.data, probe.length);
                                }});
  }
  late_input_threshold_ = c.late_input_threshold;
  auto_delay_ = c.adaptive_delay;
  auto_rule_ = c.adaptive_delay_rule;
  if (auto_delay_ && validate_delay_rule(auto_rule_) != nullptr) return Result::invalid_argument;
  describe_text_.reserve(4096);
  handshake_timeout_us_ = c.network.handshake_timeout_us;
  notify_delay_us_ = c.network.notify_delay_us;
  disconnect_timeout_us_ = c.network.disconnect_timeout_us;
  if (disconnect_timeout_us_ != 0 && notify_delay_us_ > disconnect_timeout_us_) notify_delay_us_ = disconnect_timeout_us_;
  // A peer that has sent no frame yet may still be handshaking with a third machine: it gets
  // until that handshake times out before its silence in frames counts.
  first_frame_grace_us_ = c.network.handshake_timeout_us != 0 ? c.network.handshake_timeout_us : disconnect_timeout_us_;
  // With nobody to wait for, the session runs at once.
  running_ = num_player_peers_ == 0;
  return Result::ok;
}

// ---------------------------------------------------------------- per tick

inline Result P2PSessionImpl::poll_once(uint64_t now_us) {
  if (now_us > now_) now_ = now_us;
  advice_.on_time(now_);  // a tick without advancing is a frame waited
  if (!started_) [[unlikely]] start_peers();
  receive_datagrams();
  if (one_peer_) return poll_peers<true>();
  return poll_peers<false>();
}

// The first poll: every endpoint and handshake starts.
void P2PSessionImpl::start_peers() {
  for (uint32_t i = 0; i < num_peers_; ++i) {
    peers_[i].endpoint.start(now_);
    peers_[i].handshake.start(now_);
  }
  handshakes_open_ = true;
  started_ = true;
  if (running_) driver_.reporter().emit(Reporter::make(EventType::running, "no remote players: running"));
}

// poll_once after the receive. kOne: the only peer is one player peer (one_peer_), so every
// loop over the peers is that peer's step alone, in the same order.
template <bool kOne>
inline Result P2PSessionImpl::poll_peers() {
  const uint32_t peers = kOne ? 1 : num_peers_, players = kOne ? 1 : num_player_peers_;
  // Most polls nothing waits: no endpoint event, no channel message, no channel event (a
  // spectator's are only popped too). One look per peer; the two passes only when some waits.
  bool waiting = false;
  for (uint32_t i = 0; i < peers; ++i) {
    const Peer& peer = peers_[i];
    // Two plain ORs, no branches (clang's -Wbitwise-instead-of-logical rejects `|` on bools).
    waiting |= peer.endpoint.has_event();
    waiting |= peer.channel.waiting();  // an event or a message
  }
  if (waiting) [[unlikely]] {
    for (uint32_t i = 0; i < peers; ++i)
      if (peers_[i].endpoint.has_event()) handle_endpoint_events(peers_[i]);
    for (uint32_t i = 0; i < peers; ++i) route_channel_messages(peers_[i]);
  }
  // The usual tick (usual_tick_, asked after the events, which may end it): what poll_unusual
  // does when each of its tests finds the usual match, without the tests.
  if (!usual_tick_) [[unlikely]] return poll_unusual();
  for (uint32_t i = 0; i < players; ++i) drain_inputs(peers_[i]);
  const Frame confirmed = mark_frames<true>();
  // watch_all_lateness: no player peer is dropped on the usual tick (a drop is a cut).
  for (uint32_t i = 0; i < players; ++i) {
    Peer& peer = peers_[i];
    watch_lateness(peer, i);
    peer.progress.observe(peer.endpoint.last_received_frame(), now_);
  }
  send_local_inputs_usual();
  // retire_decisions without spectators or desync detection: the decisions alone.
  decisions_.retire(confirmed - disconnect_settle_frames_ - kDisconnectDelayAllowance, confirmed);
  if (driver_.window_full()) [[unlikely]] {
    watch_stall(stall_.update(true, now_, notify_delay_us_));
    if (!usual_tick_) return finish_running_poll();  // a peer dropped: the rest as poll_unusual's
  } else {
    stall_.update(false, now_, notify_delay_us_);
  }
  if constexpr (kOne) {
    quiet_probe_one();
  } else {
    send_due_poll_pass<false, /*kUsual=*/true>();
  }
  return Result::ok;
}

// poll_once's rest when the poll is not the usual one (usual_tick_): every routine behind its
// test. Worked out again at its end (usual_tick_now).
Result P2PSessionImpl::poll_unusual() {
  if (handshakes_open_) watch_handshakes();
  // Before running too: a synchronized peer may tell us that a third machine, which we are
  // still handshaking with, is gone (it died mid-handshake), and we start without it.
  if (cuts_active_) agree_on_disconnects();
  update_running();
  // Before running too: a peer dropped mid-handshake is announced like any other.
  if (cuts_active_) announce_agreed_cuts();
  if (rejoin_phase_ != RejoinPhase::off && rejoin_phase_ != RejoinPhase::playing) rejoin_connect();
  if (running_) {
    drain_all_inputs();
    // The routines below that are off in the usual match (no automatic delay, no delay change
    // pending, no spectators, no desync detection) are not even called: each check is the
    // routine's own first line.
    if (auto_delay_ && !auto_delay_done_) auto_delay_at_start();
    if (pending_delay_count_ != 0) apply_due_delays();
    const Frame confirmed = mark_frames();
    watch_all_lateness();
    send_local_inputs();
    if (num_spectators_ != 0) stream_to_spectators();
    if (desync_.enabled()) exchange_checksums();
    if (desync_states_.enabled()) desync_states_.poll(driver_, now_);
    retire_decisions(confirmed);
    watch_progress();
    return finish_running_poll();
  }
  return finish_unusual_tick();
}

// poll_unusual's end from its watch_progress on (the usual poll's too, once a peer it stalled
// on was dropped).
Result P2PSessionImpl::finish_running_poll() {
  for (uint32_t i = 0; rejoin_askers_ != 0 && i < num_player_peers_; ++i)
    if ((rejoin_askers_ >> i) & 1u) serve_rejoin(i);
  tell_rejoined();
  return finish_unusual_tick();
}

Result P2PSessionImpl::finish_unusual_tick() {
  if (cuts_active_) check_anyone_left();  // nobody can be gone before a drop
  send_due_at_poll();
  usual_tick_ = usual_tick_now();
  return failed_ ? Result::version_mismatch : Result::ok;
}

inline Result P2PSessionImpl::advance() {
  // The usual tick (usual_tick_): what advance_unusual does when each of its tests finds the
  // usual match, without the tests. Nothing here changes what the byte stands for (the game's
  // callbacks cannot call in: the guard refuses them).
  if (!usual_tick_) [[unlikely]] return advance_unusual();
  advance_sends();
  const Result r = driver_.advance();
  stalled_ = r == Result::prediction_limit;
  // Start-up stalls (one machine started a round trip earlier) owe nothing: time sync evens those.
  if (stalled_ && driver_.frame() >= kTimeSyncWarmupFrames) catch_up_.on_refused();
  if (r == Result::ok) {
    advanced_at_ = now_;
    advice_.on_advanced(now_);
    catch_up_.on_advanced(now_);
    timeline_.on_frame(driver_.frame(), now_);
    // Two copies, the one-peer one without the loop (one copy with the peer count a variable
    // measured p2p 2 64 -1.5 instead of -11).
    if (one_peer_) {
      update_time_sync<true, true>();
    } else {
      update_time_sync<true, false>();
    }
  }
  return r;
}

// advance when the tick is not the usual one (usual_tick_): every routine behind its test.
Result P2PSessionImpl::advance_unusual() {
  if (!running_) return Result::not_synchronized;
  if (advance_sends_usual()) {
    advance_sends();
  } else {
    send_local_inputs();
    send_due(/*again=*/true);
  }
  const Result r = driver_.advance();
  stalled_ = r == Result::prediction_limit;
  if (stalled_ && driver_.frame() >= kTimeSyncWarmupFrames) catch_up_.on_refused();
  if (r == Result::ok) {
    advanced_at_ = now_;
    if (pending_delay_count_ != 0) apply_due_delays();  // before the next frame's local input is taken
    advice_.on_advanced(now_);
    catch_up_.on_advanced(now_);
    timeline_.on_frame(driver_.frame(), now_);
    if (num_spectators_ != 0) stream_to_spectators();
    if (desync_.enabled()) exchange_checksums();
    update_time_sync();
    if (rejoin_phase_ == RejoinPhase::playing) rejoin_catch_up();
    tell_rejoined();
  }
  return r;
}

void P2PSessionImpl::receive_datagrams() {
  PeerAddress& from = from_;
  size_t length = 0;
  // Bounded, so a flood cannot hold the game's frame hostage.
  for (int i = 0; i < 4096; ++i) {
    from.size = 0;
    if (!transport_->receive(&from, datagram_, sizeof datagram_, &length)) break;
    // find_peer, with inline comparisons (every datagram asks): the sender's size and first 12
    // bytes as two words against each peer's (AddressWords: a transport that leaves the bytes past
    // the size as the peer's address has them, the usual one, is answered so), else the exact
    // comparison, a word or two per peer (AddressProbe).
    Peer* peer = nullptr;
    const AddressWords words(from);
    if (words.decides()) {
      for (uint32_t k = 0; k < num_peers_; ++k) {
        if (words.surely_is(peers_[k].address)) {
          peer = &peers_[k];
          break;
        }
      }
    }
    if (peer == nullptr) {
      const AddressProbe probe(from);
      for (uint32_t k = 0; k < num_peers_; ++k) {
        if (probe.matches(peers_[k].address)) {
          peer = &peers_[k];
          break;
        }
      }
    }
    if (peer == nullptr) {
      if (allow_rejoin_ && rejoin_stranger(from, datagram_, length)) continue;
      ++dropped_unknown_address_;
      continue;
    }
    peer->endpoint.on_datagram(datagram_, length, now_);
    // A peer's reports change only with its datagrams: one reporting a player disconnected
    // wakes disconnect agreement (cuts_active_). Spectators report nothing that counts. Until a
    // peer reported anyone disconnected, none of its statuses is (asked without the per-player loop).
    // The endpoint's flag first: it is false in nearly every datagram of a match.
    if (peer->endpoint.remote_reported_cut() && !cuts_active_ && !peer->spectator && reports_any_cut(peer->endpoint))
      activate_cuts();
  }
}

void P2PSessionImpl::emit_peer_event(EventType type, const Peer& peer, const char* message, int32_t count,
                                     int32_t total) {
  Event e = Reporter::make(type, message);
  e.player = peer.spectator ? -1 : peer.players[0];
  e.frame = driver_.frame();
  e.count = count;
  e.total = total;
  driver_.reporter().emit(e);
}

// A player machine completed its handshake (at the start, or coming back): play with the
// smaller of its window and ours from now on, and never raise it again in this match, not even
// when that machine leaves (docs/NETWORKING.md, "How late a cut can come"). The ring and the
// checkpoints stay sized for our own window, which is at least the one in use everywhere we
// play: a cut agreed by any player then reaches back no further than they do. Frames already
// simulated past the new window stay within the ring; advancing is refused until the confirmed
// frame catches up.
void P2PSessionImpl::lower_window(const Peer& peer, uint32_t theirs) {
  const int32_t now = driver_.prediction_window();
  if (theirs >= uint32_t(now)) return;
  (void)driver_.set_prediction_window(int32_t(theirs));  // 0..now: always taken
  driver_.reporter().log(LogLevel::info,
                         "player %d's machine has max_prediction %u: rollback window lowered from %d to %u frames",
                         int(peer.players[0]), theirs, now, theirs);
}

void P2PSessionImpl::handle_endpoint_events(Peer& peer) {
  EndpointEvent ev;
  while (peer.endpoint.pop_event(&ev)) {
    switch (ev.type) {
      case EndpointEventType::synchronizing:
        emit_peer_event(EventType::synchronizing, peer, "handshake in progress", ev.count, ev.total);
        break;
      case EndpointEventType::synchronized: {
        const Handshake& hello = peer.endpoint.remote_handshake();
        uint16_t expected = 0;
        for (uint32_t k = 0; k < peer.player_count; ++k) expected = uint16_t(expected | (1u << peer.players[k]));
        if (!peer.spectator && (hello.players_owned != expected || hello.spectator)) {
          emit_peer_event(EventType::handshake_rejected, peer, "the peer owns other players than configured here");
          failed_ = true;
          unusual_tick();
          peer.endpoint.send_disconnect();
          break;
        }
        if (peer.spectator && !hello.spectator) {
          emit_peer_event(EventType::handshake_rejected, peer, "a player connected where a spectator was expected");
          peer.endpoint.send_disconnect();
          peer.dropped = true;
          break;
        }
        peer.synchronized = true;
        if (!peer.spectator) lower_window(peer, hello.shape.max_prediction);
        emit_peer_event(peer.spectator ? EventType::spectator_joined : EventType::synchronized, peer,
                        "handshake complete");
        break;
      }
      case EndpointEventType::interrupted:
        emit_peer_event(EventType::connection_interrupted, peer, "no packets from the peer for the notify delay",
                        int32_t(ev.timeout_us / 1000));
        break;
      case EndpointEventType::resumed:
        emit_peer_event(EventType::connection_resumed, peer, "the peer is heard again");
        break;
      case EndpointEventType::disconnected:
        drop_peer(peer, false);
        break;
      case EndpointEventType::handshake_rejected: {
        // A rejoining machine turned away (docs/NETWORKING.md "Rejoin"): its game hears why,
        // then cannot_continue, and the session stops asking anyone (rejoin_failed).
        if (ev.reason == RejectReason::refused && rejoining_ && !peer.spectator) {
          emit_peer_event(EventType::rejoin_refused, peer, "`player`'s machine refused our rejoin");
          rejoin_failed("a machine refused our rejoin (its game answered no)");
          break;
        }
        const HandshakeMismatch m = handshake_mismatch(ev.reason, shape_, peer.endpoint.remote_handshake());
        emit_peer_event(EventType::handshake_rejected, peer, m.message, m.ours, m.theirs);
        if (!peer.spectator) {
          failed_ = true;
          unusual_tick();
        }
        if (rejoining_ && !peer.spectator) rejoin_failed(m.message);
        break;
      }
    }
  }
}

// The match starts once every peer is synchronized or gone, provided at least one synchronized
// peer is left to play with: a peer that never synchronized is never "dropped" into a match
// that then runs alone (with nobody left, check_anyone_left() says so instead).
void P2PSessionImpl::start_running_when_ready() {
  bool anyone = false;
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    const Peer& peer = peers_[i];
    if (peer.dropped) continue;
    if (!peer.endpoint.running()) return;
    anyone = true;
  }
  if (!anyone) return;
  running_ = true;
  running_since_ = now_;
  for (uint32_t i = 0; i < num_player_peers_; ++i) peers_[i].progress.start(now_);
  driver_.reporter().emit(Reporter::make(EventType::running, "every peer is synchronized"));
}

// Every remote player gone: the game hears it once, whether the match ran or never started.
// Not while a running match can still take players back (allow_rejoin, and this machine can
// host a rejoin: state transfer): the lone survivor plays on and the others may come back, so
// "cannot continue" would be wrong; the game has the disconnected events and decides how long
// to wait (docs/NETWORKING.md "Rejoin").
void P2PSessionImpl::check_anyone_left() {
  if (told_nobody_left_ || num_player_peers_ == 0 || failed_) return;
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped) return;
  if (running_ && allow_rejoin_ && rejoin_buffer_ != nullptr) return;
  told_nobody_left_ = true;
  Event e = Reporter::make(EventType::cannot_continue,
                           running_ ? "every remote player is gone: the match cannot continue"
                                    : "no peer completed the handshake: the match cannot start");
  e.frame = driver_.frame();
  driver_.reporter().emit(e);
}

// Whether a peer's reports (as its datagrams left them) name any player disconnected.
bool P2PSessionImpl::reports_any_cut(const Endpoint& endpoint) const {
  for (uint32_t p = 0; p < num_players_; ++p)
    if (endpoint.remote_connect_status(PlayerIndex(p)).disconnected) return true;
  return false;
}

// The remote player whose next input the prediction window waits for: the one confirmed least
// far among those still connected; else a dropped player whose cut the peers have not all
// reported yet (its provisional cut bounds the window until they do). -1 when none.
// A silent machine is blamed before a live one: a peer we still hear from whose stream stopped
// is most likely stalled itself, waiting for the one nobody hears from (a leaver whose last
// input reached only some machines: those wait for the others' next frame, the others for the
// leaver's last one). Blaming the live one would drop a survivor and split the match.
PlayerIndex P2PSessionImpl::awaited_player() const {
  PlayerIndex awaited = -1, unagreed = -1, silent = -1;
  Frame lowest = INT32_MAX;
  uint64_t quietest = 0;
  for (uint32_t p = 0; p < num_players_; ++p) {
    if (driver_.is_local(PlayerIndex(p))) continue;
    if (driver_.is_disconnected(PlayerIndex(p))) {
      if (unagreed < 0 && !driver_.cut_agreed(PlayerIndex(p))) unagreed = PlayerIndex(p);
      continue;
    }
    const Frame last = driver_.last_confirmed(PlayerIndex(p));
    if (last < lowest) {
      lowest = last;
      awaited = PlayerIndex(p);
    }
    const uint64_t quiet = silence_of(PlayerIndex(p));
    if (quiet > quietest) {
      quietest = quiet;
      silent = PlayerIndex(p);
    }
  }
  if (awaited >= 0 && silent >= 0 && quietest >= silent_after_us() && silence_of(awaited) < silent_after_us())
    return silent;
  return awaited >= 0 ? awaited : unagreed;
}

// How long nothing was heard from the machine of `player` (0 for local or unknown players).
uint64_t P2PSessionImpl::silence_of(PlayerIndex player) const {
  const Peer* peer = peer_of(player);
  if (peer == nullptr || peer->dropped) return 0;
  const uint64_t heard = peer->endpoint.last_received_at();
  return now_ > heard ? now_ - heard : 0;
}

// Silence that marks a machine as gone rather than stalled: half the disconnect timeout, long
// before the endpoint's own silence timer, and far longer than a live peer's keep-alives under
// loss and short blackouts are ever apart. Without timeouts only the event's naming uses it.
uint64_t P2PSessionImpl::silent_after_us() const {
  return disconnect_timeout_us_ != 0 ? disconnect_timeout_us_ / 2 : std::max<uint64_t>(notify_delay_us_, 1);
}

// A peer whose handshake made no round trip for the handshake timeout is given up (it died,
// or never started): the others then start without it, or learn that nobody is left. Measured
// from the last round trip rather than from the start, so a slow but answering link (seconds of
// RTT) still gets through.
void P2PSessionImpl::watch_handshakes() {
  // A rejoining machine learns who is gone from the host's state (a cut of its own would be
  // wrong): its handshakes are not given up before.
  if (handshake_timeout_us_ == 0 || (rejoining_ && rejoin_phase_ != RejoinPhase::playing)) return;
  // An endpoint handshakes only after start() (the first poll, or answer() for a rejoin): once
  // none does, this waits for the next start.
  bool open = false;
  for (uint32_t i = 0; i < num_peers_; ++i) {
    Peer& peer = peers_[i];
    if (peer.dropped || peer.endpoint.state() != EndpointState::synchronizing) continue;
    open = true;
    // A spectator may come at any time: one that has not answered yet holds up nobody, so it is
    // waited for (unless it seems to speak another version: that is said as below).
    if (peer.spectator && peer.endpoint.sync_progress() == 0 && !peer.endpoint.saw_other_version()) continue;
    peer.handshake.observe(peer.endpoint.sync_progress(), now_);
    if (now_ - peer.handshake.at_us < handshake_timeout_us_) continue;
    if (peer.endpoint.saw_other_version() && peer.endpoint.sync_progress() == 0) {
      // Most likely an older or newer retcon: say so rather than "timed out".
      peer.endpoint.send_disconnect();
      emit_peer_event(EventType::handshake_rejected, peer, "protocol version differs");
      if (peer.spectator) peer.dropped = true;
      else {
        failed_ = true;
        unusual_tick();
      }
      continue;
    }
    driver_.reporter().log(LogLevel::warning, "peer %u: no handshake progress for %llu ms: given up", i,
                           static_cast<unsigned long long>((now_ - peer.handshake.at_us) / 1000));
    drop_peer(peer, true);
  }
  handshakes_open_ = open;
}

// Liveness in frames (see stall_watch.h). While the prediction window blocks us, the game is
// told once per episode after the notify delay (prediction_limit, naming whom we wait for),
// and the awaited peer is dropped once its input stream has not moved for the disconnect
// timeout, whether or not it still sends keep-alives. `tell`: the stall watch's answer.
void P2PSessionImpl::watch_stall(bool tell) {
  const PlayerIndex awaited = awaited_player();
  if (awaited < 0) return;
  if (tell) {
    Event e = Reporter::make(EventType::prediction_limit,
                             "advancing is blocked by the prediction window: waiting for `player`'s input of `frame`");
    e.player = awaited;
    e.frame = driver_.last_confirmed(awaited) + 1;
    e.count = int32_t(std::min<uint64_t>((now_ - stall_.since_us()) / 1000, INT32_MAX));
    driver_.reporter().emit(e);
  }
  if (disconnect_timeout_us_ == 0) return;
  Peer* peer = peer_of(awaited);
  if (peer == nullptr || peer->dropped) return;
  // A drop restarts the clock of peers whose frames may have stopped because they waited for the
  // dropped one. Not for a peer that never sent a frame: its first frames need nobody's input, so
  // it is not waiting for anyone (and restarting its clock could hold back the agreement on the
  // dropped one's cut, which needs this peer's report).
  // Likewise a peer that sent frames owes none while we waited for another one: its
  // clock counts from our last advance (the stall's start), so one whose stream stopped because
  // it waited with us (for a machine whose slow handshake earned it the first-frame grace) is
  // not overdue the moment that one's first input comes.
  const uint64_t restarted = peer->progress.any() ? std::max(last_drop_at_, advanced_at_) : 0;
  const uint64_t since = std::max({peer->progress.at_us, restarted, running_since_});
  const uint64_t limit = disconnect_timeout_us_ + (peer->progress.any() ? 0 : first_frame_grace_us_);
  if (now_ - since < limit) return;
  driver_.reporter().log(LogLevel::warning, "player %d: no new frame for %llu ms while we wait for it: dropped",
                         int(awaited), static_cast<unsigned long long>((now_ - since) / 1000));
  drop_peer(*peer, true);
}

// A peer is gone: its players stop at the last frame we have from them; agree_on_disconnects()
// then lowers that to the earliest frame any other peer reports, so everyone cuts at one frame.
void P2PSessionImpl::drop_peer(Peer& peer, bool tell_peer) {
  if (peer.dropped) return;
  peer.dropped = true;
  activate_cuts();  // the tick runs disconnect agreement from now on
  peer.rejoining = false;
  if (!peer.spectator) stream_waits_[&peer - peers_] = false;
  if (!peer.spectator) last_drop_at_ = now_;
  if (tell_peer) peer.endpoint.send_disconnect();
  peer.channel.peer_gone();
  if (!peer.spectator) relay_rejoin_notices(peer);
  if (peer.spectator) {
    emit_peer_event(EventType::spectator_left, peer, "spectator left");
    return;
  }
  // A machine coming back that loses a player machine before it has the state cannot tell
  // which of its inputs the others have: it gives up (the others cut it before its live frame).
  // Before the offer it need not: the host stamps only once that machine's cut is agreed, with a
  // state after it, so the offer will say so (on_rejoin_message judges it then).
  if (rejoin_phase_ == RejoinPhase::asking && peer.synchronized && &peer != &peers_[rejoin_host_]) {
    dropped_asking_ |= 1u << uint32_t(&peer - peers_);
    return;
  }
  if (rejoin_phase_ == RejoinPhase::loading && peer.synchronized && &peer != &peers_[rejoin_host_]) {
    rejoin_failed("a player machine left while the rejoin's state was on its way");
    return;
  }
  for (uint32_t k = 0; k < peer.player_count; ++k) {
    const PlayerIndex p = peer.players[k];
    if (local_status_[p].disconnected) continue;
    local_status_[p].disconnected = true;
    local_status_[p].last_frame = driver_.last_confirmed(p);
    held_at_drop_[p] = local_status_[p].last_frame;
    // Provisional until every live peer reported its own cut (announce_agreed_cuts).
    driver_.disconnect_player(p, local_status_[p].last_frame, /*agreed=*/false);
    desync_.invalidate_after(local_status_[p].last_frame, driver_.frame(), disconnect_settle_frames_);
    desync_states_.forget_after(local_status_[p].last_frame);
  }
}

// A dropped player's cut is agreed once every peer still in the match has reported that player
// disconnected: each report is at most that peer's own last frame of the player, so the minimum
// over all of them (which agree_on_disconnects applied) is the minimum every machine computes.
// Only then does the game hear of it, with that frame, the same on every machine.
void P2PSessionImpl::announce_agreed_cuts() {
  if (rejoin_phase_ == RejoinPhase::failed) return;  // we left (rejoin_failed): nothing to agree with
  for (uint32_t p = 0; p < num_players_; ++p) {
    if (!local_status_[p].disconnected || cut_announced_[p]) continue;
    bool everyone = true;
    for (uint32_t i = 0; i < num_player_peers_ && everyone; ++i) {
      const Peer& peer = peers_[i];
      if (!peer.dropped && report_counts(peer, local_status_[p].last_frame) && !reports_cut(peer, PlayerIndex(p)))
        everyone = false;
    }
    // No machine can report a cut before "no frame at all": when that is ours, the minimum every
    // machine computes is already known, and waiting a round trip for the others' reports would
    // only make the event late (a peer frozen before its first frame).
    const bool lowest_possible = local_status_[p].last_frame == kNullFrame;
    if (!everyone && !lowest_possible) continue;
    if (cannot_follow_cut(PlayerIndex(p))) {
      rejoin_failed("a machine left before our live frame, at a frame we do not hold its inputs of");
      return;
    }
    cut_announced_[p] = true;
    driver_.agree_disconnect(PlayerIndex(p));
    Event e = Reporter::make(EventType::disconnected, "player disconnected: `frame` is its last frame, agreed by every peer");
    e.player = PlayerIndex(p);
    e.frame = local_status_[p].last_frame;
    driver_.reporter().emit(e);
  }
}

void P2PSessionImpl::agree_on_disconnects() {
  // A rejoining machine knows nothing of the match before its state: it takes the cuts from it.
  if (failed_ || (rejoining_ && rejoin_phase_ != RejoinPhase::playing)) return;
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    Peer& peer = peers_[i];
    if (peer.dropped || !counts_in_cuts(peer) || !peer.synchronized || !peer.endpoint.running()) continue;
    for (uint32_t p = 0; p < num_players_; ++p) {
      const ConnectStatus& theirs = peer.endpoint.remote_connect_status(PlayerIndex(p));
      if (!reports_cut(peer, PlayerIndex(p))) continue;
      if (driver_.is_local(PlayerIndex(p))) {
        // That peer dropped one of our players: it plays on without us, so we part ways with it
        // (a network split leaves each side consistent instead of both playing a different game).
        drop_peer(peer, true);
        break;
      }
      Peer* owner = peer_of(PlayerIndex(p));
      // The player is coming back and is still out here: the report is of the cut it had.
      if (owner && owner->rejoining && local_status_[p].disconnected) continue;
      if (owner && !owner->dropped) {
        // Another peer lost this player: we drop the owner too, so all agree who is gone.
        drop_peer(*owner, true);
      }
      if (theirs.last_frame < local_status_[p].last_frame && report_counts(peer, theirs.last_frame)) {
        local_status_[p].last_frame = theirs.last_frame;
        // Older than any state kept, or than the decisions kept (the frames from the cut on are
        // simulated again with them; decisions outlive the checkpoints, so the first test fails
        // first): this machine cannot follow the agreement, and says so.
        if (driver_.disconnect_player(PlayerIndex(p), theirs.last_frame, cut_announced_[p]) != Result::ok ||
            theirs.last_frame + 1 < decisions_.queue().retired_before()) {
          driver_.reporter().log(LogLevel::error, "player %u: agreed last frame %d is older than the saved history", p,
                                 theirs.last_frame);
          Event e = Reporter::make(EventType::desync_detected, "cannot roll back to the agreed disconnect frame");
          e.player = PlayerIndex(p);
          e.frame = theirs.last_frame + 1;
          driver_.reporter().emit(e);
        }
        desync_.invalidate_after(theirs.last_frame, driver_.frame(), disconnect_settle_frames_);
        desync_states_.forget_after(theirs.last_frame);
      }
    }
  }
}

Result P2PSessionImpl::disconnect(PlayerIndex player) {
  if (player < 0 || uint32_t(player) >= num_players_) return Result::invalid_player;
  Peer* peer = peer_of(player);
  if (peer == nullptr) return Result::invalid_player;  // local players cannot be dropped
  if (peer->dropped) return Result::player_disconnected;
  drop_peer(*peer, true);
  // With nobody else to agree with (two players), the game hears of it at once.
  announce_agreed_cuts();
  check_anyone_left();
  return Result::ok;
}

// `next`: the newest frame received, which does not move while we pop (only a datagram moves it).
// The usual peer (one player, the frames new to the driver held as one run of the receive ring,
// all inside the window): one call each to the endpoint and the driver (session/input_drain.h).
void P2PSessionImpl::drain_new_inputs(Peer& peer, Frame next) {
  if (peer.player_count == 1 && drain_held_run(peer.endpoint, driver_, peer.players[0], next, input_size_)) return;
  drain_runs(peer, next);
}

// The rest: a one-player peer's ring runs (two when the run wraps past the ring's end), then
// frame by frame where the driver or the ring would not take a run.
void P2PSessionImpl::drain_runs(Peer& peer, Frame next) {
  if (peer.player_count != 1 || !drain_ring_runs(peer.endpoint, driver_, peer.players[0], next, input_size_))
    drain_frames(peer, next);
}

void P2PSessionImpl::drain_frames(Peer& peer, Frame next) {
  drain_frame_by_frame(peer.endpoint, driver_, peer.players.data(), peer.player_count, input_size_, next);
}

void P2PSessionImpl::send_local_inputs_all() {
  // The usual machine: one local player (its queued input is the blob), no delay change of ours
  // out (no hold_for_delays).
  if (local_count_ == 1 && own_delays_active_ == 0) {
    send_ready_inputs<true>(driver_.last_confirmed(local_players_[0]));
    return;
  }
  // A frame goes out once every local player's input for it is known.
  Frame ready = INT32_MAX;
  for (uint32_t k = 0; k < local_count_; ++k) ready = std::min(ready, driver_.last_confirmed(local_players_[k]));
  send_ready_inputs<false>(ready);
}

// To each peer, not past a decision of ours it has not acknowledged: it may not confirm that
// frame before holding it (session/decision_exchange.h). Per peer, so that one that stops
// acknowledging (it left, and is not dropped yet) holds back only its own stream: the others
// keep getting our inputs and do not take us for frozen. The held peer's frames wait for ours,
// so the frames it still needs stay in the input queue (which reaches two windows and two
// delays behind our frame). kUsual: send_local_inputs_all's usual machine, the same sends in the
// same order with what cannot happen there left out.
template <bool kUsual>
inline void P2PSessionImpl::send_ready_inputs(Frame ready) {
  ReadyTally tally{last_local_sent_};
  // (The tests' full passes ask every hold: session/send_pass_switch.h.)
  const bool holds = holds_may_apply() || full_send_passes_;
  for (uint32_t i = 0; i < num_player_peers_; ++i) send_ready_to<kUsual>(i, ready, holds, tally);
  note_ready_sent(ready, tally);
}

// send_ready_inputs' part for player peer `i`.
template <bool kUsual>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void P2PSessionImpl::send_ready_to(uint32_t i, Frame ready, bool holds, ReadyTally& tally) {
  Peer& peer = peers_[i];
  if (peer.dropped || stream_waits_[i]) return;
  tally.anyone = true;
  Frame sent = sent_to_peer_[i];
  // Every ready frame already went (poll's call, after advance_frame's sent the newest): the
  // holds below could only lower `upto` further, so nothing goes; hold_for_delays is still
  // asked while a delay change of ours is out, since it frees the slots everyone acknowledged.
  if (sent < ready || (!kUsual && own_delays_active_ != 0)) {
    Frame upto = ready;
    Frame hold = INT32_MAX;
    if (holds) {
      hold = std::min(decisions_.hold_from(peers_, num_player_peers_, i), rejoin_hold_.hold_from(peers_, i));
      hold = std::min(hold, relay_hold_.hold_from(peers_, i));
    }
    if (!kUsual && own_delays_active_ != 0) hold = std::min(hold, hold_for_delays(i));
    if (hold != INT32_MAX) upto = std::min(upto, hold - 1);
    if (kUsual && upto == sent + 1) {
      // The usual call: advance_frame's one new frame. Without the loop (whose counter and
      // bounds the compiler keeps on the stack around the inline send_input).
      peer.endpoint.send_input(upto, driver_.confirmed_input(local_players_[0], upto));
      sent_to_peer_[i] = upto;
      tally.newest = std::max(tally.newest, upto);
      tally.lowest = std::min(tally.lowest, upto);
      return;
    }
    for (Frame f = sent + 1; f <= upto; ++f) {
      // One local player (the usual machine): its queued input is the blob itself.
      const uint8_t* blob = kUsual || local_count_ == 1 ? driver_.confirmed_input(local_players_[0], f) : blob_.get();
      for (uint32_t k = 0; !kUsual && k < local_count_ && local_count_ > 1; ++k)
        std::memcpy(blob_.get() + size_t(k) * input_size_, driver_.confirmed_input(local_players_[k], f), input_size_);
      peer.endpoint.send_input(f, blob);
    }
    sent = std::max(sent, upto);
    sent_to_peer_[i] = sent;
  }
  tally.newest = std::max(tally.newest, sent);
  tally.lowest = std::min(tally.lowest, sent);
}

// send_ready_inputs' bookkeeping after every player peer had its part.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void P2PSessionImpl::note_ready_sent(Frame ready, const ReadyTally& tally) {
  Frame newest = tally.newest;
  if (!tally.anyone && ready != INT32_MAX) newest = std::max(newest, ready);
  if (newest - 1 == last_local_sent_) {  // (newest >= last_local_sent_ >= kNullFrame: no overflow)
    // The usual call: one frame newly sent (without the loop's reloads).
    timeline_.on_sent(newest, now_);
    last_local_sent_ = newest;
  } else {
    while (last_local_sent_ < newest) timeline_.on_sent(++last_local_sent_, now_);
  }
  // Every streaming peer has `ready` (and, newest being theirs, no more than last_local_sent_):
  // what send_local_inputs' walk would find, until something forgets it. (With none streaming,
  // last_local_sent_ reached `ready` above.)
  // (The full send passes of the tests forget it at once: session/send_pass_switch.h.)
  idle_ready_ = tally.lowest >= ready && ready <= last_local_sent_ ? ready : kNoIdleReady;
  // The connected players' last frames are read only once a player is gone (agreement, the
  // statuses the endpoints send, the rejoin offer: see cuts_active_), so they are kept from then
  // on; the offer, built by serve_rejoin, always follows this call in the same poll.
  if (cuts_active_) keep_status_frames();
}

void P2PSessionImpl::keep_status_frames() {
  const uint32_t players = num_players_;  // loaded once: the stores below could alias it
  const Frame sent = last_local_sent_;
  for (uint32_t p = 0; p < players; ++p) {
    if (driver_.is_local(PlayerIndex(p))) local_status_[p].last_frame = sent;
    else if (!local_status_[p].disconnected) local_status_[p].last_frame = driver_.last_confirmed(PlayerIndex(p));
  }
}

void P2PSessionImpl::stream_to_spectators() {
  if (num_spectators_ == 0) return;
  const Frame confirmed = driver_.confirmed_frame();
  Peer* spectators = &peers_[num_player_peers_];
  decisions_.forward(spectators, num_spectators_);
  // Spectators cannot roll back: frames after a disconnect cut go out only once the cut has had
  // time to settle among the peers (it may still move earlier).
  while (last_streamed_ < confirmed) {
    const Frame f = last_streamed_ + 1;
    if (desync_.settling(f) && !desync_.settled(driver_.frame())) break;
    last_streamed_ = f;
  }
  if (snapshots_.enabled()) {
    // Spectators that asked for a state get one that is final: no disconnect cut may still move.
    bool stable = desync_.settled(driver_.frame()) || !desync_.settling(last_streamed_ + 1);
    for (uint32_t p = 0; p < num_players_ && stable; ++p)
      stable = !driver_.is_disconnected(PlayerIndex(p)) || driver_.cut_agreed(PlayerIndex(p));
    // Inputs every player machine has: no cut agreed later can reach before them (a cut is the
    // earliest last frame any machine had of the player). A peer that sent its input of frame g
    // had reached frame g minus its input delay, so it held every player's inputs up to a window
    // before that (its window is at most our configured one: max_prediction_). (The checkpoints,
    // 2 windows + 32 frames deep, still hold a state that old.)
    Frame everywhere = driver_.confirmed_frame();
    for (uint32_t i = 0; i < num_player_peers_; ++i)
      if (!peers_[i].dropped && !peers_[i].rejoining)
        everywhere = std::min(everywhere, peers_[i].endpoint.last_received_frame() - kMaxInputDelay - max_prediction_ - 1);
    // Not older than the decisions kept: the spectator gets every decision from the state on.
    snapshots_.serve(driver_, spectators, num_spectators_, last_streamed_, stable, everywhere,
                     decisions_.queue().retired_before(), next_to_stream_);
  }
  // Each spectator has its own place in the stream: a frame goes to it once it holds (and has
  // acknowledged) every decision up to that frame, so one that waits (it has not come yet, or
  // just started from a state) holds up nobody else. It may wait while the frame's inputs are
  // kept (kSpectatorHoldFrames): then it is dropped, or, if it has not come yet and may ask for
  // a state, it is parked until it asks (snapshot_server.h).
  for (uint32_t i = 0; i < num_spectators_; ++i) {
    Peer& spectator = spectators[i];
    if (parked_[i] && snapshots_.held(i)) parked_[i] = false;  // it asked: served from a state
    if (spectator.dropped || snapshots_.held(i) || parked_[i]) continue;
    while (next_to_stream_[i] <= last_streamed_) {
      const Frame f = next_to_stream_[i];
      if (!decisions_.ready_to_stream(i, spectator, f) || !spectator_knows_rejoins(i, spectator, f)) {
        if (confirmed - f < kSpectatorHoldFrames - 1) break;
        if (snapshots_.enabled() && !spectator.synchronized) {
          parked_[i] = true;
          break;
        }
        driver_.reporter().log(LogLevel::warning,
                               "spectator %u has not acknowledged the decisions of frame %d: dropped", i, f);
        drop_peer(spectator, true);
        break;
      }
      compose_spectator_frame(driver_, f, blob_.get());
      // A spectator that has not come yet gets the match from frame 0 while that fits its
      // queue; later it must ask for a state (its queue starts over; it is not dropped).
      if (snapshots_.enabled() && !spectator.synchronized &&
          spectator.endpoint.last_sent_frame() - spectator.endpoint.last_acked_frame() >= kUnsyncedSpectatorFrames)
        spectator.endpoint.restart_outgoing_at(f);
      // A spectator that stops acknowledging fills its queue: it is dropped, the host goes on.
      if (spectator.endpoint.send_input(f, blob_.get()) != Result::ok) {
        drop_peer(spectator, true);
        break;
      }
      next_to_stream_[i] = f + 1;
    }
  }
}

void P2PSessionImpl::exchange_checksums() {
  if (!desync_.enabled()) return;
  // Our checksum of a frame is taken once it is final here: every input before it confirmed,
  // and no pending rollback that would re-save it (inputs may arrive before the correction).
  const Frame pending = driver_.first_incorrect();
  while (desync_.next_local() <= driver_.confirmed_frame() + 1 && desync_.next_local() < driver_.frame() &&
         (pending == kNullFrame || desync_.next_local() <= pending)) {
    const Frame f = desync_.next_local();
    uint64_t sum = 0;
    const bool have = driver_.checksum_of(f, &sum) == Result::ok;
    // The decisions before the frame are part of being in sync (none: the state's checksum).
    const uint64_t digest = decisions_.digest_before(f);
    sum = desync_sum(sum, digest);
    desync_.record_local(f, sum, have);
    if (have && desync_states_.enabled()) {
      // Kept while peers may still report the frame (probes staged theirs already).
      if (const SavedState* s = driver_.saved(f); s != nullptr && !driver_.probes_checksums())
        desync_states_.stage(f, s->data, s->length);
      desync_states_.record(f, sum, digest);
    }
    if (!have || desync_.settling(f)) continue;
    for (uint32_t i = 0; i < num_player_peers_; ++i)
      if (!peers_[i].dropped) peers_[i].endpoint.send_checksum(f, sum);
  }
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped) compare_reports(peers_[i]);
}

void P2PSessionImpl::compare_reports(Peer& peer) {
  Frame frame;
  uint64_t sum;
  while (peer.endpoint.pop_checksum(&frame, &sum)) {
    if (peer.pending_count == peer.pending.size()) {  // keep the newest reports
      std::move(peer.pending.begin() + 1, peer.pending.end(), peer.pending.begin());
      --peer.pending_count;
    }
    peer.pending[peer.pending_count++] = Peer::Report{frame, sum};
  }
  // A dropped peer's reports of frames after its players' cut were taken with their real
  // inputs, ours with the disconnected ones: the states differ by design, so they are stale.
  Frame cut = INT32_MAX;
  if (peer.dropped)
    for (uint32_t k = 0; k < peer.player_count; ++k) cut = std::min(cut, local_status_[peer.players[k]].last_frame);
  uint32_t kept = 0;
  for (uint32_t k = 0; k < peer.pending_count; ++k) {
    const Peer::Report report = peer.pending[k];
    if (cut != INT32_MAX && report.frame > cut + 1) continue;
    uint64_t local = 0;
    const DesyncDetector::Match m = desync_.lookup(report.frame, &local);
    if (m == DesyncDetector::Match::pending) {
      peer.pending[kept++] = report;
      continue;
    }
    if (m == DesyncDetector::Match::stale) continue;
    ++checksums_compared_;
    if (local == report.sum) continue;
    desync_states_.on_mismatch(uint32_t(&peer - peers_), report.frame, report.sum);  // sends ours
    const ReportThrottle::Action action = desyncs_.next();
    if (action == ReportThrottle::Action::silent) continue;
    if (action == ReportThrottle::Action::summary) {
      Event e = Reporter::make(EventType::desync_detected, "desyncs go on (summary: `total` desyncs so far, "
                                                           "the first was reported in full)");
      e.player = peer.players[0];
      e.frame = report.frame;
      e.total = int32_t(desyncs_.total() > INT32_MAX ? INT32_MAX : desyncs_.total());
      e.checksum_local = local;
      e.checksum_remote = report.sum;
      driver_.reporter().log(LogLevel::error, "%llu desyncs so far (latest at frame %d)",
                             static_cast<unsigned long long>(desyncs_.total()), report.frame);
      driver_.reporter().emit(e);
      continue;
    }
    Event e = Reporter::make(EventType::desync_detected,
                             "a peer's checksum of a confirmed frame differs from ours: the game is not "
                             "deterministic (or its inputs differ)");
    e.player = peer.players[0];
    e.frame = report.frame;
    e.total = 1;
    e.checksum_local = local;
    e.checksum_remote = report.sum;
    const SavedState* state = driver_.saved(report.frame);
    if (const SavedState* copy = desync_states_.kept(report.frame)) {
      state = copy;
      e.state_local = copy->data;
      e.state_local_len = copy->length;
    }
    if (state && describe_saved_state(driver_.callbacks(), *state, &describe_text_)) {
      e.text_local = describe_text_.c_str();
      e.text_local_len = describe_text_.size();
    }
    driver_.reporter().log(LogLevel::error, "desync at frame %d: local %016llx, peer %016llx", report.frame,
                           static_cast<unsigned long long>(local), static_cast<unsigned long long>(report.sum));
    driver_.reporter().emit(e);
  }
  peer.pending_count = kept;
}

template <bool kUsual, bool kOne>
inline void P2PSessionImpl::update_time_sync() {
  if (sample_fence_us_ == kWaitInProgress) {
    if (advice_.frames_left() > 0) return;
    // The wait is over (or the game ignored it): the peers' next reports tell its effect.
    uint64_t rtt = 0;
    for (uint32_t i = 0; i < num_player_peers_; ++i) rtt = std::max(rtt, peers_[i].endpoint.ping_us());
    sample_fence_us_ = now_ + rtt;
  }
  if (driver_.frame() < kTimeSyncWarmupFrames) return;
  // While the peers catch up they run faster than their frame estimates (which move a frame per
  // frame time) assume: those samples would be gaps that are not there.
  if (catch_up_.active(now_)) return;
  int32_t wait = 0;
  // Read once: the filters' stores may alias them, for all GCC knows.
  const uint32_t players = kOne ? 1 : num_player_peers_;
  const Frame frame = driver_.frame();
  for (uint32_t i = 0; i < players; ++i) {
    Peer& peer = peers_[i];
    if ((!kUsual && (peer.dropped || peer.rejoining)) || !peer.endpoint.running() ||
        peer.endpoint.remote_report_at() <= sample_fence_us_)
      continue;
    const Frame remote = peer.endpoint.estimated_remote_frame(now_);
    if (remote == kNullFrame) continue;
    // The peer's advantage is its own number: TimeSync clamps it before use.
    wait = std::max(wait, peer.time_sync.sample_and_wait(frame - remote, peer.endpoint.remote_frame_advantage()));
  }
  if (wait != 0) [[unlikely]] advise_wait(wait);
}

void P2PSessionImpl::advise_wait(int32_t wait) {
  for (uint32_t i = 0; i < num_player_peers_; ++i) peers_[i].time_sync.reset();
  advice_.advise(wait, now_);
  sample_fence_us_ = kWaitInProgress;
  Event e = Reporter::make(EventType::timesync, "we are ahead of a peer: wait `count` frames");
  e.frame = driver_.frame();
  e.count = wait;
  driver_.reporter().emit(e);
}

// Messages from a peer's reliable channel, handed on by stream. A stream this machine does not
// serve (a feature it was not configured for) is dropped and counted.
void P2PSessionImpl::route_channel_messages(Peer& peer) {
  // Most polls no message waits: the routing (and its buffer) only when one does.
  if (peer.channel.has_message()) route_waiting_messages(peer);
  if (peer.spectator) {
    snapshots_.on_channel_events(uint32_t(&peer - peers_) - num_player_peers_, peer);
  } else if (peer.channel.has_event()) {
    ChannelEvent e;
    while (peer.channel.pop_event(&e)) on_player_channel_event(peer, e);
  }
}

void P2PSessionImpl::route_waiting_messages(Peer& peer) {
  ChannelStream stream;
  uint8_t body[kMaxChannelMessage];
  size_t size = 0;
  const uint32_t spectator = uint32_t(&peer - peers_) - num_player_peers_;
  while (peer.channel.pop_message(&stream, body, &size)) {
    switch (stream) {
      case ChannelStream::state_transfer:
        if (peer.spectator) snapshots_.on_message(spectator, peer, body, size, next_to_stream_[spectator]);
        else if (!on_rejoin_message(peer, body, size)) ++peer.channel_messages_dropped;
        break;
      case ChannelStream::decisions: {
        DelayChange change;
        // The newest frame we know of the match on the sender's side (decision_exchange.h:
        // a frame further ahead than an honest sender can stamp is refused); none while a
        // rejoining machine waits for its state (take_rejoin_state judges what came meanwhile).
        const Frame known = rejoining_ && rejoin_phase_ != RejoinPhase::playing
                                ? kNullFrame
                                : std::max(driver_.frame(), peer.endpoint.last_received_frame());
        if (peer.spectator) {
          ++peer.channel_messages_dropped;  // spectators decide nothing
        } else if (size > 0 && body[0] == kRejoinNoticeKind) {
          on_rejoin_notice(peer, body, size);
        } else if (size > 0 && body[0] == kDelayChangeKind) {
          bool owns = false;
          const bool valid = decode_delay_change(body, size, &change);
          for (uint32_t k = 0; valid && k < peer.player_count; ++k) owns = owns || peer.players[k] == change.sender;
          if (owns && decision_frame_too_far(change.frame, known)) {
            owns = false;
            const uint64_t n = ++delay_changes_too_far_;
            if (detail::reached_power_of_two(n - 1, n))  // the first, then every power of two: no log flood
              driver_.reporter().log(LogLevel::warning, "delay change of player %d for frame %d refused: more than %d "
                                     "frames past frame %d (%llu refused so far)", int(change.sender), change.frame,
                                     int(kMaxReceivedDecisionLead), known, static_cast<unsigned long long>(n));
          }
          if (!owns || !schedule_delay(change)) ++delay_changes_dropped_;
        } else {
          decisions_.on_message(peer, false, body, size, known);
        }
        break;
      }
      case ChannelStream::desync_states:
        if (!peer.spectator && desync_states_.enabled()) desync_states_.on_message(uint32_t(&peer - peers_), body, size);
        else ++peer.channel_messages_dropped;
        break;
      default: ++peer.channel_messages_dropped; break;
    }
  }
}

// ---------------------------------------------------------------- timed decisions

Frame P2PSessionImpl::earliest_decision_frame() const {
  uint64_t rtt = 0, jitter = 0;
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    if (peers_[i].dropped) continue;
    rtt = std::max(rtt, peers_[i].endpoint.ping_us());
    jitter = std::max(jitter, peers_[i].endpoint.jitter_us());
  }
  return decisions_.earliest_frame(rtt, jitter, frame_us_);
}

Result P2PSessionImpl::stamp_decision(const void* bytes, size_t size, Frame frame, Frame* earliest) {
  const Frame first = earliest_decision_frame();
  if (earliest != nullptr) *earliest = first;
  if (bytes == nullptr || size == 0 || size > kMaxDecisionSize) return Result::invalid_argument;
  if (!running_) return Result::not_synchronized;
  PlayerIndex me = 0;
  while (!driver_.is_local(me)) ++me;
  const Result r = decisions_.send(me, frame, static_cast<const uint8_t*>(bytes), size, peers_, num_player_peers_, first);
  if (r == Result::input_out_of_window)
    driver_.reporter().log(LogLevel::warning, "decision for frame %d refused: the earliest frame that works is %d",
                           frame, first);
  return r;
}

// ---------------------------------------------------------------- adaptive delay, applied

// The machine of the lowest-numbered player still in the match decides (automatic mode).
bool P2PSessionImpl::deciding_machine() const {
  for (uint32_t p = 0; p < num_players_; ++p) {
    if (driver_.is_local(PlayerIndex(p))) return true;
    const Peer* peer = peer_of(PlayerIndex(p));
    if (peer != nullptr && !peer->dropped) return false;
  }
  return false;
}

void P2PSessionImpl::auto_delay_at_start() {
  if (!auto_delay_ || auto_delay_done_ || !deciding_machine()) return;
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped && peers_[i].endpoint.ping_us() == 0) return;  // not every RTT measured yet
  DelayChoice c;
  if (plan_delay(auto_rule_, kNullFrame, &c) == Result::ok) auto_delay_done_ = true;
}

Result P2PSessionImpl::plan_delay(const AdaptiveDelayRule& rule, Frame frame, DelayChoice* out) {
  if (out == nullptr || validate_delay_rule(rule) != nullptr) return Result::invalid_argument;
  if (!running_) return Result::not_synchronized;
  const Frame first = earliest_decision_frame();
  // The automatic choice leaves room for a window of our inputs before the frame, so that the
  // hold (hold_for_delays) only bites when the change is slow to arrive (the peers' window: at
  // most our configured one).
  if (frame == kNullFrame) frame = std::max(first, last_local_sent_ + max_prediction_ + 2);
  out->frame = frame;
  if (frame < first || frame > driver_.frame() + kMaxDecisionLead) return Result::input_out_of_window;
  PlayerIndex me = 0;
  while (!driver_.is_local(me)) ++me;
  if (pending_delays_of(me) == kMaxPendingDelaysPerSender) return Result::prediction_limit;
  OwnDelay* own = nullptr;
  for (OwnDelay& o : own_delays_)
    if (!o.active && own == nullptr) own = &o;
  if (own == nullptr) return Result::prediction_limit;
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped && peers_[i].channel.messages_free() == 0) return Result::prediction_limit;
  DelayChoice c;
  if (Result r = pick_delay(rule, &c); r != Result::ok) return r;
  c.frame = frame;
  *out = c;
  DelayChange change;
  change.sender = me;
  change.frame = frame;
  change.delay = c.delay;
  change.median_rtt_us = uint32_t(std::min<uint64_t>(c.median_rtt_us, UINT32_MAX));
  change.peers = c.peers;
  for (uint32_t p = 0; p < uint32_t(kMaxPlayers); ++p) change.rtt_ms[p] = uint16_t(std::min<uint64_t>(c.rtt_us[p] / 1000, 65535));
  uint8_t body[kMaxChannelMessage];
  const size_t n = encode_delay_change(change, body, sizeof body);
  *own = OwnDelay{};
  own->active = true;
  ++own_delays_active_;
  unusual_tick();
  own->frame = frame;
  for (uint32_t i = 0; i < num_player_peers_ && i < uint32_t(kMaxPlayers); ++i) {
    if (peers_[i].dropped) continue;
    own->seq[i] = peers_[i].channel.next_message_seq();
    own->sent_to[i] = peers_[i].channel.send_message(ChannelStream::decisions, body, n) == Result::ok;
  }
  schedule_delay(change);
  apply_due_delays();
  return Result::ok;
}

// The first frame of our input stream to peer `i` that must wait for our delay changes to reach
// it: a peer holding our inputs up to frame g may run to g + max_prediction on prediction, so
// its stream stops max_prediction + 1 frames before the frame of a change it has not
// acknowledged (or at once, for a change planned closer than that). INT32_MAX: nothing to wait
// for. Changes every peer acknowledged free their slot here. Our configured window, not the one
// in use: the peer's may be larger than ours in use (it lowers to ours only if ours is its
// smallest), never larger than our configured one (it lowered to at most that at its handshake).
Frame P2PSessionImpl::hold_for_delays(uint32_t i) {
  Frame hold = INT32_MAX;
  for (OwnDelay& o : own_delays_) {
    if (!o.active) continue;
    bool everyone = true;
    for (uint32_t k = 0; k < num_player_peers_ && k < uint32_t(kMaxPlayers); ++k)
      everyone = everyone && (peers_[k].dropped || !o.sent_to[k] || peers_[k].channel.acknowledged_through(o.seq[k]));
    if (everyone) {
      o.active = false;
      --own_delays_active_;
      continue;
    }
    if (i >= uint32_t(kMaxPlayers) || peers_[i].dropped || !o.sent_to[i] || peers_[i].channel.acknowledged_through(o.seq[i]))
      continue;
    hold = std::min(hold, std::max(o.frame - max_prediction_ - 1, sent_to_peer_[i] + 1));
  }
  return hold;
}

bool P2PSessionImpl::schedule_delay(const DelayChange& change) {
  if (pending_delay_count_ == kMaxPendingDelays || pending_delays_of(change.sender) == kMaxPendingDelaysPerSender)
    return false;
  pending_delays_[pending_delay_count_++] = change;
  unusual_tick();
  return true;
}

// Changes whose frame has come: every local player's delay, before the frame's input is taken.
void P2PSessionImpl::apply_due_delays() {
  for (uint32_t k = 0; k < pending_delay_count_;) {
    const DelayChange c = pending_delays_[k];
    if (c.frame > driver_.frame()) {
      ++k;
      continue;
    }
    pending_delays_[k] = pending_delays_[--pending_delay_count_];
    if (c.frame >= last_applied_delay_.frame) last_applied_delay_ = c;
    int32_t old = -1;
    for (uint32_t p = 0; p < num_players_; ++p) {
      if (!driver_.is_local(PlayerIndex(p))) continue;
      if (old < 0) old = driver_.input_delay(PlayerIndex(p));
      driver_.set_input_delay(PlayerIndex(p), c.delay);
    }
    char text[kMaxPlayers * 32] = "";
    size_t used = 0;
    for (uint32_t p = 0; p < uint32_t(kMaxPlayers); ++p) {
      if (c.rtt_ms[p] == 0) continue;
      const int n = std::snprintf(text + used, sizeof text - used, "%splayer %u: %u ms", used ? ", " : "", p,
                                  unsigned(c.rtt_ms[p]));
      if (n > 0) used = std::min(sizeof text - 1, used + size_t(n));
    }
    const bool late = c.frame < driver_.frame();
    Event e = Reporter::make(EventType::input_delay_applied,
                             late ? "input delay changed late: the message came after its frame"
                                  : "input delay changed at the agreed frame");
    e.player = c.sender;
    e.frame = driver_.frame();
    e.count = c.delay;
    e.total = old;
    e.checksum_local = c.median_rtt_us;
    e.checksum_remote = uint64_t(c.frame);
    e.text_local = text;
    e.text_local_len = used;
    if (late)
      driver_.reporter().log(LogLevel::warning, "input delay change for frame %d applied at frame %d", c.frame,
                             driver_.frame());
    driver_.reporter().emit(e);
  }
}

// Decisions no rollback, checksum comparison or spectator stream needs any more are dropped.
void P2PSessionImpl::retire_decisions(Frame confirmed) {
  Frame before = confirmed - disconnect_settle_frames_ - kDisconnectDelayAllowance;
  if (desync_.enabled()) before = std::min(before, desync_.next_local());
  // Not before a spectator's place in the stream: it still needs those (a parked one or one
  // waiting for its state gets a state no older than what is kept).
  for (uint32_t i = 0; i < num_spectators_; ++i) {
    const Peer& spectator = peers_[num_player_peers_ + i];
    if (!spectator.dropped && !snapshots_.held(i) && !parked_[i]) before = std::min(before, next_to_stream_[i]);
  }
  decisions_.retire(before, confirmed);
}

// Adaptive delay (session/adaptive_delay.h): the rule over the RTTs measured now, told to the game.
Result P2PSessionImpl::pick_delay(const AdaptiveDelayRule& rule, DelayChoice* out) {
  if (out == nullptr || validate_delay_rule(rule) != nullptr) return Result::invalid_argument;
  DelayChoice c;
  uint64_t rtts[kMaxPlayers];
  char text[kMaxPlayers * 32] = "";
  size_t used = 0;
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    const Peer& peer = peers_[i];
    const uint64_t rtt = peer.endpoint.ping_us();
    if (peer.dropped || !peer.endpoint.running() || rtt == 0) continue;
    rtts[c.peers++] = rtt;
    for (uint32_t k = 0; k < peer.player_count; ++k) {
      c.rtt_us[peer.players[k]] = rtt;
      const int n = std::snprintf(text + used, sizeof text - used, "%splayer %d: %llu ms", used ? ", " : "",
                                  peer.players[k], static_cast<unsigned long long>(rtt / 1000));
      if (n > 0) used = std::min(sizeof text - 1, used + size_t(n));
    }
  }
  if (c.peers == 0) return Result::not_synchronized;
  c.median_rtt_us = lower_median(rtts, c.peers);
  c.delay = delay_for_rtt(c.median_rtt_us, frame_us_, rule);
  for (uint32_t p = 0; p < num_players_; ++p)
    if (driver_.is_local(PlayerIndex(p))) {
      c.previous = driver_.input_delay(PlayerIndex(p));
      break;
    }
  *out = c;
  Event e = Reporter::make(EventType::input_delay_chosen, "input delay chosen from the median round trip");
  e.frame = driver_.frame();
  e.count = c.delay;
  e.total = c.previous;
  e.checksum_local = c.median_rtt_us;
  e.text_local = text;
  e.text_local_len = used;
  driver_.reporter().emit(e);
  return Result::ok;
}

// Lag-switch detection for a peer whose player came back (watch_lateness): judged like the
// others once the grace after its return is over.
void P2PSessionImpl::watch_rejoined_lateness(Peer& peer, uint32_t i) {
  // A machine that just came back runs a little behind until time sync evened it out.
  if (now_ - rejoined_at_us_[peer.players[0]] < kRejoinGraceUs) {
    peer.lateness = LatenessMonitor{};
    peer.lateness.skip_to(peer.endpoint.last_received_frame());
    return;
  }
  // Most ticks without a datagram from the peer: nothing to judge (observe would change nothing).
  const Endpoint& ep = peer.endpoint;
  if (peer.lateness.quiet(ep.last_received_frame(), ep.datagrams_received(), ep.last_acked_frame(), ep.ping_us(),
                          ep.jitter_us(), ep.silences().told().arrived_at_us))
    return;
  judge_lateness(peer, i);
}

// Lag-switch detection: judge the frames of this peer that arrived since the last poll
// (session/lateness_monitor.h) and tell the game when they came far later than the network explains.
// The usual call (no new silence note: judge_lateness): LatenessMonitor::observe_usual takes the
// endpoint's values as they are; a call it does not take (false: the round trip moved, an
// outage found, the baseline learning, no new frame, ...) changed nothing and is judged whole.
// The usual call finds no outage, so none is told to the timeline.
void P2PSessionImpl::judge_lateness_usual(Peer& peer, uint32_t i) {
  const Endpoint& ep = peer.endpoint;
  int32_t worst = 0;
  if (!peer.lateness.observe_usual(ep.last_received_frame(), now_, ep.last_acked_frame(), ep.datagrams_received(),
                                   ep.ping_us(), ep.jitter_us(), frame_us_, sent_to_peer_[i],
                                   driver_.prediction_window(), i, timeline_, &worst)) [[unlikely]] {
    judge_lateness_general(peer, i);
    return;
  }
  // (No frame late, the usual call: no report is due, whatever the threshold.)
  if (worst > 0 && peer.lateness.should_report(worst, late_input_threshold_, now_)) report_late_inputs(peer, worst);
}

// Any judging call, with the whole Link. The peer's silence note and our silence from it are
// read only when the note is new (LatenessMonitor::new_silence_note); a Link with them judges as
// one without otherwise.
void P2PSessionImpl::judge_lateness_general(Peer& peer, uint32_t i) {
  const SilenceLog& silences = peer.endpoint.silences();
  // The peer's window: the one in use here, not the configured one. Every player lowers to the
  // smallest window of the match, so the peer's is ours; a larger one would make the peer's
  // inputs due earlier than its window lets it send them (a false lag switch).
  const LatenessMonitor::Link link{peer.endpoint.last_acked_frame(), sent_to_peer_[i],
                                   peer.endpoint.datagrams_received(), peer.endpoint.ping_us(),
                                   peer.endpoint.jitter_us(), frame_us_, driver_.prediction_window(), i,
                                   silences.heard_nothing(), silences.told()};
  const uint64_t outage_end = peer.lateness.last_outage().to_us;
  const int32_t worst = peer.lateness.observe(peer.endpoint.last_received_frame(), now_, link, timeline_);
  const LatenessMonitor::Gap outage = peer.lateness.last_outage();
  if (outage.to_us != outage_end) timeline_.on_outage(link.peer, outage.from_us, outage.to_us);
  if (worst > 0 && peer.lateness.should_report(worst, late_input_threshold_, now_)) report_late_inputs(peer, worst);
}

void P2PSessionImpl::report_late_inputs(Peer& peer, int32_t worst) {
  Event e = Reporter::make(EventType::late_inputs,
                           "a player's inputs arrive later than the network explains (a lag switch, or its game froze)");
  e.player = peer.players[0];
  e.frame = peer.endpoint.last_received_frame();
  e.count = worst;
  e.total = int32_t(peer.lateness.numbers().events);
  driver_.reporter().log(LogLevel::warning, "player %d: inputs %d frames later than the network explains", e.player,
                         worst);
  driver_.reporter().emit(e);
}

// ---------------------------------------------------------------- rejoin (session/rejoin.h)

// A report of `player` disconnected that is news: not the cut it had before it came back.
bool P2PSessionImpl::reports_cut(const Peer& peer, PlayerIndex player) const {
  const ConnectStatus& theirs = peer.endpoint.remote_connect_status(player);
  if (!theirs.disconnected) return false;
  return rejoined_at_[player] == kNullFrame || theirs.last_frame >= rejoined_at_[player] - 1;
}

// Whether a peer's reports count in disconnect agreement (and a cut waits for them). A machine
// coming back counts once its rejoin is stamped here (we know its state's and live frames): it
// then either loads the state and plays from it, holding the inputs the others sent it since
// (a cut made before its live frame must be one it can follow), or gives up and leaves. Before,
// it knows the match only from a state it does not have yet; it reports nothing then anyway (its
// status rides its inputs, which start at the live frame).
bool P2PSessionImpl::counts_in_cuts(const Peer& peer) const {
  return !peer.rejoining || !stream_waits_[&peer - peers_];
}

// Whether `peer`'s report of a cut at `last_frame` counts (and a cut there waits for it). A
// machine whose player came back at T ran no frame before T with the others: they confirmed
// those frames without it, and it holds their inputs only as far as they reached it. A cut it
// reports before T - 1 is not counted nor waited for (it follows ours, or gives up:
// cannot_follow_cut); from T - 1 on it counts as anyone's, since nobody confirms T without its
// input. The same rule on every machine, so every one agrees the same cut.
bool P2PSessionImpl::report_counts(const Peer& peer, Frame last_frame) const {
  if (!counts_in_cuts(peer)) return false;
  const Frame live = peer.player_count > 0 ? rejoined_at_[peer.players[0]] : kNullFrame;
  return live == kNullFrame || last_frame >= live - 1;
}

// The other side of report_counts, on the machine that came back at T: a player dropped before
// T - 1, whose cut the others agree later than the last frame of it we hold, is one we cannot
// follow (we lack its inputs of frames they confirmed).
bool P2PSessionImpl::cannot_follow_cut(PlayerIndex player) const {
  const Frame live = rejoined_at_[local_players_[0]];
  const Frame held = held_at_drop_[player];
  if (live == kNullFrame || held == kNullFrame || held >= live - 1 || local_status_[player].last_frame < held)
    return false;
  Frame reported = INT32_MAX;
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped && reports_cut(peers_[i], player))
      reported = std::min(reported, peers_[i].endpoint.remote_connect_status(player).last_frame);
  return reported != INT32_MAX && reported > held;
}

void P2PSessionImpl::emit_rejoin_event(EventType type, PlayerIndex player, Frame frame, const char* message) {
  Event e = Reporter::make(type, message);
  e.player = player;
  e.frame = frame;
  driver_.reporter().emit(e);
}

// A datagram from an address no peer has. A handshake request (opened like the endpoint would:
// with the match key, only a holder of the key can make one) that claims exactly the players of
// a machine whose cut is agreed is a rejoin request: the game hears of it once and answers.
bool P2PSessionImpl::rejoin_stranger(const PeerAddress& from, const uint8_t* data, size_t length) {
  if (!running_) return false;
  Header header;
  if (decode_public_header(data, length, &header) != DecodeError::ok || header.type != MessageType::handshake_request)
    return false;
  Message m;
  if (stranger_auth_.open(data, length, &m) != DecodeError::ok) return false;
  const Handshake& hello = m.handshake;
  if (hello.spectator) return false;
  // Its window may differ from ours (lower_window, at its handshake): not a reason to refuse.
  if (!shapes_agree(hello.shape, shape_)) {
    // A machine of another shape (a rejoiner built or configured differently) hears ours and
    // rejects it naming the field, instead of retrying until its handshake timeout. Only while
    // a player is gone (someone may be coming back): a running match answers no one else.
    for (uint32_t i = 0; i < num_player_peers_; ++i)
      if (peers_[i].dropped) {
        answer_stranger(from, hello, length, -1, false);
        return true;
      }
    return false;
  }
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    Peer& peer = peers_[i];
    uint16_t mask = 0;
    for (uint32_t k = 0; k < peer.player_count; ++k) mask = uint16_t(mask | (1u << peer.players[k]));
    if (mask != hello.players_owned) continue;
    if (!peer.dropped) return false;  // still here (or already coming back)
    for (uint32_t k = 0; k < peer.player_count; ++k)
      if (!cut_announced_[peer.players[k]] || !driver_.is_disconnected(peer.players[k])) return false;
    RejoinRequest& q = rejoin_requests_[i];
    if (q.refused == from) {  // a refusal stands, and the requester hears it (not a timeout)
      answer_stranger(from, hello, length, int32_t(i), true);
      return true;
    }
    if (q.waiting) return true;  // one question at a time
    q.waiting = true;
    q.from = from;
    Event e = Reporter::make(EventType::rejoin_requested,
                             "a machine asks to take back disconnected `player`'s slot: answer_rejoin");
    e.player = peer.players[0];
    e.frame = local_status_[peer.players[0]].last_frame;
    e.text_local = reinterpret_cast<const char*>(q.from.bytes);
    e.text_local_len = q.from.size;
    driver_.reporter().emit(e);
    return true;
  }
  return false;
}

// A handshake reply to a stranger's request (session/stranger_replies.h): our shape, the
// request's challenge echoed, `refused` when our game said no to it. Rate-limited, never larger
// than the request.
void P2PSessionImpl::answer_stranger(const PeerAddress& from, const Handshake& request, size_t length, int32_t peer,
                                     bool refused) {
  const EndpointConfig& e = endpoint_config_[peer >= 0 ? uint32_t(peer) : 0];
  Handshake h;
  h.challenge = request.challenge;
  h.shape = shape_;
  h.players_owned = e.players_owned;
  h.send_blob_size = e.send_blob_size;
  h.receive_blob_size = peer >= 0 ? e.receive_blob_size : request.send_blob_size;
  h.aes256gcm = stranger_auth_.offers_aes256gcm();
  h.refused = refused;
  stranger_replies_.send(stranger_auth_, *transport_, from, h, length, now_);
  stranger_sent_ = true;  // the next send pass flushes it
}

// The game's answer. Accepted: a new connection to the requester's address for that slot (the
// old one is gone); its players stay disconnected until a host stamps the frame they come back.
Result P2PSessionImpl::answer(PlayerIndex player, bool accept) {
  if (!allow_rejoin_) return Result::unsupported;
  Peer* peer = peer_of(player);
  if (peer == nullptr) return Result::invalid_player;
  const uint32_t i = uint32_t(peer - peers_);
  RejoinRequest& q = rejoin_requests_[i];
  if (!q.waiting) return Result::not_found;
  q.waiting = false;
  if (!accept || !peer->dropped) {
    q.refused = q.from;
    driver_.reporter().log(LogLevel::info, "player %d: rejoin refused", int(player));
    return Result::ok;
  }
  EndpointConfig e = endpoint_config_[i];
  if (e.rng_seed != 0) e.rng_seed ^= 0xd1b54a32d192ed03ull * ++rejoin_connections_;  // a new connection
  if (Result r = peer->endpoint.init(e); r != Result::ok) return r;
  if (Result r = peer->channel.init(player_channel_); r != Result::ok) return r;
  desync_states_.reconnect(i);
  rejoin_hold_.forget(i);
  relay_hold_.forget(i);
  peer->endpoint.set_channel_sink(peer);
  peer->address = q.from;
  peer->dropped = false;
  forget_idle_ready();  // a peer back (its stream waits, but say so)
  peer->synchronized = false;
  peer->rejoining = true;
  peer->pending_count = 0;
  peer->time_sync.reset();
  peer->endpoint.start(now_);
  handshakes_open_ = true;
  unusual_tick();
  // Its inputs are taken from the frame it goes live at (apply_rejoin); ours go from now on.
  peer->endpoint.pause_receive();
  peer->endpoint.restart_outgoing_at(last_local_sent_ + 1);
  sent_to_peer_[i] = last_local_sent_;
  stream_waits_[i] = true;  // until the rejoin's frames are known here (apply_rejoin)
  peer->handshake.start(now_);
  peer->progress.start(now_);
  resend_own_messages(i);
  told_nobody_left_ = false;
  driver_.reporter().log(LogLevel::info, "player %d: rejoin accepted", int(player));
  return Result::ok;
}

// Stream-1 messages between player machines: a rejoin request (host side), the host's offer or
// refusal (rejoining side). False for anything else (counted by the caller).
bool P2PSessionImpl::on_rejoin_message(Peer& peer, const uint8_t* body, size_t size) {
  RejoinKind kind;
  if (!rejoin_kind(body, size, &kind)) return false;
  const int32_t index = int32_t(&peer - peers_);
  switch (kind) {
    case RejoinKind::request: {
      if (peer.rejoining && allow_rejoin_ && rejoin_buffer_ != nullptr) {
        rejoin_askers_ |= 1u << index;
        unusual_tick();
        return true;
      }
      uint8_t no[kMaxRejoinMessage];
      peer.channel.send_message(ChannelStream::state_transfer, no, encode_rejoin_declined(no));
      return true;
    }
    case RejoinKind::declined:
      if (rejoin_phase_ != RejoinPhase::asking || index != rejoin_host_) return false;
      rejoin_failed("the host refused the rejoin (no rejoin or no state transfer there)");
      return true;
    case RejoinKind::offer: {
      RejoinOffer o;
      if (rejoin_phase_ != RejoinPhase::asking || index != rejoin_host_ ||
          !decode_rejoin_offer(body, size, num_players_, &o))
        return false;
      if (o.size > rejoin_buffer_size_) {
        rejoin_failed("the host's state is larger than max_state_size");
        return true;
      }
      // A machine that left while we asked: fine when the host cut it before the state (we need
      // none of its inputs), not when the host stamped before it knew (we hold none of them).
      for (uint32_t i = 0; dropped_asking_ != 0 && i < num_player_peers_; ++i)
        for (uint32_t k = 0; ((dropped_asking_ >> i) & 1u) && k < peers_[i].player_count; ++k) {
          const ConnectStatus& st = o.status[peers_[i].players[k]];
          if (!st.disconnected || st.last_frame >= o.state_frame) {
            rejoin_failed("a player machine left while the rejoin's state was on its way");
            return true;
          }
        }
      // A machine the host has in the match that never answered our handshake (we know an old
      // address of it: it came back itself after we started) will never send us its inputs:
      // give up now, cleanly (it cuts us at T - 1 at once, not connected; the game may start
      // the rejoin again with its new address), rather than run and wait for them.
      for (uint32_t i = 0; i < num_player_peers_; ++i) {
        const Peer& q = peers_[i];
        if (int32_t(i) == rejoin_host_ || q.dropped || q.synchronized) continue;
        for (uint32_t k = 0; k < q.player_count; ++k)
          if (!o.status[q.players[k]].disconnected) {
            rejoin_failed("a machine in the match never answered our handshake (it may have a new address)");
            return true;
          }
      }
      rejoin_offer_ = o;
      rejoin_phase_ = RejoinPhase::loading;
      unusual_tick();
      // Every machine streams its inputs from the state's frame on, and takes ours from the live
      // frame on: its acknowledgements name frames from live_at - 1 on as soon as it has the
      // notice, which may be long before the state is here (our stream must know that frame, or
      // it drops every datagram carrying one, and the machine goes silent here).
      for (uint32_t i = 0; i < num_player_peers_; ++i)
        if (!peers_[i].dropped) {
          peers_[i].endpoint.restart_incoming_at(o.state_frame);
          peers_[i].endpoint.restart_outgoing_at(o.live_at);
        }
      for (uint32_t p = 0; p < num_players_; ++p)
        if (driver_.is_local(PlayerIndex(p)))
          emit_rejoin_event(EventType::player_rejoining, PlayerIndex(p), o.live_at,
                            "`player` comes back: live from `frame` on every machine");
      take_rejoin_state(peer);  // it may have come first
      return true;
    }
  }
  return false;
}

// The host stamps a rejoin once it has a final state (as for a late spectator: every input
// before it confirmed on every machine, no cut that may still move, no correction pending).
void P2PSessionImpl::serve_rejoin(uint32_t asker) {
  Peer& r = peers_[asker];
  if (r.dropped || !r.rejoining || r.player_count == 0) {
    rejoin_askers_ &= ~(1u << asker);
    return;
  }
  if (!r.endpoint.running() || r.channel.sending_blob()) return;
  for (uint32_t p = 0; p < num_players_; ++p)
    if (driver_.is_disconnected(PlayerIndex(p)) && !driver_.cut_agreed(PlayerIndex(p))) return;
  if (!desync_.settled(driver_.frame())) return;
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    const Peer& o = peers_[i];
    if (o.dropped) continue;
    // One rejoin at a time: not while another is stamped here and not yet confirmed (its player
    // is "disconnected up to T - 1" here, which an offer cannot carry). One merely accepted,
    // waiting for its own turn, holds nobody up: two machines that crashed together and came
    // back together waited for each other for ever.
    if (&o != &r && o.rejoining && !stream_waits_[i]) return;
    // Nor while a lower player machine's rejoin, accepted here, waits for its stamp: it may have
    // asked another host (the lowest it reached), which stamps it without our knowing; two hosts
    // stamping at once each sent a state that has the other player cut (a split). The lowest
    // waiting rejoiner goes first everywhere, so nobody waits for ever.
    if (&o != &r && o.rejoining && stream_waits_[i] && i < asker) return;
    if (o.channel.messages_free() < r.player_count) return;
  }
  // As in stream_to_spectators: a peer's window is at most our configured one.
  Frame everywhere = driver_.confirmed_frame();
  for (uint32_t i = 0; i < num_player_peers_; ++i)
    if (!peers_[i].dropped && !peers_[i].rejoining)
      everywhere = std::min(everywhere, peers_[i].endpoint.last_received_frame() - kMaxInputDelay - max_prediction_ - 1);
  Frame top = std::min({driver_.frame() - 1, driver_.confirmed_frame() + 1, everywhere + 1});
  if (driver_.first_incorrect() != kNullFrame) top = std::min(top, driver_.first_incorrect());
  // Not older than the decisions kept: the offer carries the digest of those before the state.
  // Nor than a live frame of an earlier rejoin: the state holds what came before it, the offer
  // only the connect statuses (a player disconnected up to T - 1, live from T, is neither).
  Frame oldest = std::max(top - 31, decisions_.queue().retired_before());
  // Nor than a cut: the rejoiner needs no input of a machine gone before the state (one that
  // left while it asked has sent it none).
  for (uint32_t p = 0; p < num_players_; ++p) {
    oldest = std::max(oldest, rejoined_at_[p]);
    if (local_status_[p].disconnected) oldest = std::max(oldest, local_status_[p].last_frame + 1);
  }
  const SavedState* state = nullptr;
  for (Frame f = top; f >= oldest && f >= 0 && state == nullptr; --f) {
    const SavedState* sv = driver_.saved(f);
    if (sv && sv->frame == f && sv->length > 0) state = sv;
  }
  if (state == nullptr) return;
  const Frame from = state->frame;
  // The live frame: after the state has arrived (its bytes at the transfer pace, plus round
  // trips) and the rejoiner has run from the state's frame to it, 1 + kRejoinCatchUpFrames frames
  // a tick, while this match moves a frame a tick.
  const uint64_t rtt = std::max<uint64_t>(r.endpoint.ping_us(), frame_us_);
  const uint64_t bps = std::max<uint64_t>(player_channel_.bytes_per_second, 1);
  const uint64_t transfer_us = uint64_t(state->length) * 1000000u / bps + 3 * rtt;
  const Frame transfer = Frame(transfer_us / frame_us_ + 1);
  const Frame base = std::max(earliest_decision_frame(), driver_.frame() + 1);
  const Frame live = base + (8 * transfer + (base - from)) / kRejoinCatchUpFrames + 10;
  std::memcpy(rejoin_buffer_.get(), state->data, state->length);
  const size_t length = state->length;
  for (uint32_t k = 0; k < r.player_count; ++k) {
    const PlayerIndex p = r.players[k];
    const Frame cut = local_status_[p].last_frame;
    decisions_.queue().forget_after(p, cut);  // its old machine's decisions after its cut
    if (Result res = driver_.rejoin_player(p, live); res != Result::ok) {
      driver_.reporter().log(LogLevel::error, "player %d cannot rejoin at frame %d: %s", int(p), live,
                             result_name(res));
      uint8_t no[kMaxRejoinMessage];
      r.channel.send_message(ChannelStream::state_transfer, no, encode_rejoin_declined(no));
      rejoin_askers_ &= ~(1u << asker);
      return;
    }
    // Every other machine learns the frame before anyone can confirm it (the hold).
    if (k == 0) rejoin_hold_.start(live);
    RejoinNotice n;
    n.player = p;
    n.cut = cut;
    n.state_frame = from;
    n.live_at = live;
    uint8_t body[kMaxRejoinMessage];
    const size_t size = encode_rejoin_notice(n, body);
    for (uint32_t i = 0; i < num_player_peers_; ++i) {
      Peer& o = peers_[i];
      if (&o == &r || o.dropped) continue;
      const uint32_t seq = o.channel.next_message_seq();
      if (o.channel.send_message(ChannelStream::decisions, body, size) == Result::ok) rejoin_hold_.sent(i, seq);
    }
    apply_rejoin(r, p, from, live, true);
  }
  RejoinOffer o;
  o.state_frame = from;
  o.live_at = live;
  o.size = uint32_t(length);
  o.num_players = num_players_;
  for (uint32_t p = 0; p < num_players_; ++p) o.status[p] = local_status_[p];
  o.decisions_digest = decisions_.digest_before(from);
  o.delay_frame = last_applied_delay_.frame;
  o.delay = last_applied_delay_.delay;
  uint8_t body[kMaxRejoinMessage];
  r.channel.send_message(ChannelStream::state_transfer, body, encode_rejoin_offer(o, body));
  if (r.channel.send_blob(kRejoinBlobTag, from, rejoin_buffer_.get(), length) != Result::ok)
    driver_.reporter().log(LogLevel::error, "the rejoin state (%zu bytes) does not fit the channel", length);
  driver_.reporter().log(LogLevel::info, "player %d rejoins: state of frame %d (%zu bytes), live at frame %d",
                         int(r.players[0]), from, length, live);
  rejoin_askers_ &= ~(1u << asker);
}

// A host's notice: `player` is live from `live_at`. The cut it names is the agreed one (ours may
// not be agreed yet: the host's is the minimum of every machine's, so it is ours too).
void P2PSessionImpl::on_rejoin_notice(Peer& peer, const uint8_t* body, size_t size) {
  RejoinNotice n;
  if (!decode_rejoin_notice(body, size, num_players_, &n) || driver_.is_local(n.player) || peer.rejoining) {
    ++peer.channel_messages_dropped;
    return;
  }
  const PlayerIndex p = n.player;
  if (rejoined_at_[p] == n.live_at) return;  // the same rejoin again: relayed by another machine too
  if (!local_status_[p].disconnected || n.live_at <= driver_.confirmed_frame()) {
    driver_.reporter().log(LogLevel::error, "player %d: rejoin notice for frame %d cannot be followed here", int(p),
                           n.live_at);
    ++peer.channel_messages_dropped;
    return;
  }
  if (n.cut < local_status_[p].last_frame) {
    local_status_[p].last_frame = n.cut;
    driver_.disconnect_player(p, n.cut, true);
  }
  if (!cut_announced_[p]) {
    cut_announced_[p] = true;
    driver_.agree_disconnect(p);
    Event e = Reporter::make(EventType::disconnected, "player disconnected: `frame` is its last frame, agreed by every peer");
    e.player = p;
    e.frame = local_status_[p].last_frame;
    driver_.reporter().emit(e);
  }
  decisions_.queue().forget_after(p, local_status_[p].last_frame);  // its old machine's, after its cut
  if (Result r = driver_.rejoin_player(p, n.live_at); r != Result::ok) {
    driver_.reporter().log(LogLevel::error, "player %d cannot rejoin at frame %d here: %s", int(p), n.live_at,
                           result_name(r));
    return;
  }
  Peer* owner = peer_of(p);
  if (owner != nullptr) apply_rejoin(*owner, p, n.state_frame, n.live_at, false);
  // Kept until the rejoin is confirmed here: if its sender dies first, we relay it (drop_peer).
  relay_notice_[p] = n;
  relay_from_[p] = int32_t(&peer - peers_);
}

// The machine that sent us a rejoin notice left before the rejoin was confirmed here: the other
// player machines hear it from us, held like the host's (session/rejoin.h). If the host died
// before its notice reached one of them, that one would keep the player at its old cut while we
// cut it again at live_at - 1 (or play it live), and wait for ever for a report it never sends.
// Only then: a relay of every notice, host alive, changed the timing of every rejoin of 4+
// machines (the rejoin property found a split under loss and a blackout).
void P2PSessionImpl::relay_rejoin_notices(const Peer& gone) {
  for (uint32_t p = 0; p < num_players_; ++p) {
    if (relay_from_[p] != int32_t(&gone - peers_)) continue;
    relay_from_[p] = -1;
    const RejoinNotice& n = relay_notice_[p];
    if (rejoined_at_[p] != n.live_at || rejoin_told_[p]) continue;  // confirmed, or another rejoin since
    uint8_t body[kMaxRejoinMessage];
    const size_t size = encode_rejoin_notice(n, body);
    const Peer* owner = peer_of(PlayerIndex(p));
    relay_hold_.relay(peers_, num_player_peers_, n.live_at);
    for (uint32_t i = 0; i < num_player_peers_; ++i) {
      Peer& o = peers_[i];
      if (&o == owner || o.dropped || o.rejoining) continue;
      const uint32_t seq = o.channel.next_message_seq();
      if (o.channel.send_message(ChannelStream::decisions, body, size) == Result::ok) relay_hold_.sent(i, seq);
    }
    driver_.reporter().log(LogLevel::info, "player %d: its rejoin's notice relayed (its sender left)", int(p));
  }
}

// `player` (of `peer`) is live from `live_at` here (the driver already knows). Our inputs go to
// its machine from the state's frame on. A machine not connected here (refused, or gone) is cut
// again at once, so every machine agrees it never came back.
void P2PSessionImpl::apply_rejoin(Peer& peer, PlayerIndex player, Frame state_frame, Frame live_at, bool host) {
  tell_spectators_rejoin(player, local_status_[player].last_frame, state_frame, live_at);
  rejoined_at_[player] = live_at;
  rejoin_told_[player] = false;
  rejoin_untold_ = true;
  unusual_tick();
  cut_announced_[player] = false;
  local_status_[player] = ConnectStatus{};
  local_status_[player].last_frame = live_at - 1;
  for (uint32_t i = 0; i < num_player_peers_; ++i) peers_[i].endpoint.rejoin_remote_player(player, live_at - 1);
  emit_rejoin_event(EventType::player_rejoining, player, live_at,
                    "`player` comes back: live from `frame` on every machine");
  // Its handshake with us may still be finishing (it completes on each side at its own time):
  // the inputs wait in the endpoint until it runs.
  if (peer.rejoining && !peer.dropped && peer.endpoint.state() != EndpointState::disconnected) {
    if (peer.players[0] == player) {
      peer.endpoint.restart_incoming_at(live_at);
      stream_waits_[&peer - peers_] = false;
      forget_idle_ready();  // a stream resumes
      resend_local_inputs(peer, state_frame);
    }
    return;
  }
  (void)host;
  driver_.reporter().log(LogLevel::warning, "player %d: its machine is not connected here: cut at frame %d",
                         int(player), live_at - 1);
  local_status_[player].disconnected = true;
  driver_.disconnect_player(player, live_at - 1, false);
  desync_.invalidate_after(live_at - 1, driver_.frame(), disconnect_settle_frames_);
}

// Every spectator learns of the rejoin (the notice the players get) before its stream reaches the
// live frame: it runs the player disconnected up to live_at - 1 and live from live_at, as the
// players do (session/rejoin.h). Sent by stream_to_spectators, which holds the frames from
// live_at on until the spectator acknowledged it.
void P2PSessionImpl::tell_spectators_rejoin(PlayerIndex player, Frame cut, Frame state_frame, Frame live_at) {
  if (num_spectators_ == 0) return;
  RejoinNotice& n = spectator_notice_[player];
  n.player = player;
  n.cut = cut;
  n.state_frame = state_frame;
  n.live_at = live_at;
  // A spectator that has not acknowledged a frame after the cut yet may never have seen the
  // player reported disconnected: from now on our status has it live again, and the frames it
  // has not taken yet (queued for one that has not come, or on their way) would go with that
  // status, the player's absent inputs taken as real ones. Until it holds the notice, our status
  // to it still reports the cut (send_due); one that acknowledged a frame after the cut had it.
  for (uint32_t i = 0; i < num_spectators_; ++i) {
    const Peer& spectator = peers_[num_player_peers_ + i];
    const bool saw_cut = spectator.synchronized && spectator.endpoint.last_acked_frame() > cut;
    spectator_notices_[i][player] = SpectatorNotice{true, false, 0, !saw_cut};
  }
}

// Sends spectator `i` the rejoin notices it has not had, as its channel takes them; true when it
// has acknowledged every one whose live frame is <= f (frame f may go to it).
bool P2PSessionImpl::spectator_knows_rejoins(uint32_t i, Peer& spectator, Frame f) {
  bool ready = true;
  for (uint32_t p = 0; p < num_players_; ++p) {
    SpectatorNotice& sn = spectator_notices_[i][p];
    if (!sn.due) continue;
    if (!sn.sent && spectator.channel.messages_free() > kReservedForTransfer) {
      uint8_t body[kMaxRejoinMessage];
      const size_t size = encode_rejoin_notice(spectator_notice_[p], body);
      const uint32_t seq = spectator.channel.next_message_seq();
      if (spectator.channel.send_message(ChannelStream::decisions, body, size) == Result::ok) {
        sn.sent = true;
        sn.seq = seq;
      }
    }
    if (sn.sent && spectator.channel.acknowledged_through(sn.seq)) sn.due = false;
    else if (f >= spectator_notice_[p].live_at) ready = false;
  }
  return ready;
}

// Our connect status as spectator `i` gets it: with the cut of a player coming back that it may
// not have seen, until it holds the notice (tell_spectators_rejoin).
const ConnectStatus* P2PSessionImpl::status_for_spectator(uint32_t i) {
  const ConnectStatus* status = local_status_;
  for (uint32_t p = 0; p < num_players_; ++p) {
    const SpectatorNotice& sn = spectator_notices_[i][p];
    if (!sn.due || !sn.report_cut) continue;
    if (status == local_status_) {
      std::copy(local_status_, local_status_ + num_players_, spectator_status_);
      status = spectator_status_;
    }
    spectator_status_[p].disconnected = true;
    spectator_status_[p].last_frame = spectator_notice_[p].cut;
  }
  return status;
}

// Our local inputs from `from` on, again, on `peer`'s stream (its state is of that frame).
void P2PSessionImpl::resend_local_inputs(Peer& peer, Frame from) {
  const uint32_t i = uint32_t(&peer - peers_);
  peer.endpoint.restart_outgoing_at(from);
  // Not past a decision or delay change of ours it has not acknowledged (the holds of
  // send_local_inputs, which goes on from where this stops).
  const Frame had = sent_to_peer_[i];
  forget_idle_ready();  // its stream starts over
  sent_to_peer_[i] = from - 1;
  Frame hold = std::min(decisions_.hold_from(peers_, num_player_peers_, i), rejoin_hold_.hold_from(peers_, i));
  hold = std::min(hold, relay_hold_.hold_from(peers_, i));
  if (own_delays_active_ != 0) hold = std::min(hold, hold_for_delays(i));
  const Frame upto = hold == INT32_MAX ? had : std::min(had, hold - 1);
  sent_to_peer_[i] = std::max(upto, from - 1);
  for (Frame f = from; f <= upto; ++f) {
    size_t offset = 0;
    for (uint32_t p = 0; p < num_players_; ++p) {
      if (!driver_.is_local(PlayerIndex(p))) continue;
      std::memcpy(blob_.get() + offset, driver_.confirmed_input(PlayerIndex(p), f), input_size_);
      offset += input_size_;
    }
    peer.endpoint.send_input(f, blob_.get());
  }
}

// A new connection to player peer `i` (it rejoins): our decisions and delay changes that may
// still matter go to it again (what the old connection carried is lost with it; the rejoiner
// drops what its state already holds), and the holds on our inputs to it count these sends.
void P2PSessionImpl::resend_own_messages(uint32_t i) {
  Peer& peer = peers_[i];
  PlayerIndex me = 0;
  while (!driver_.is_local(me)) ++me;
  bool all = decisions_.resend_own(i, peer, me);
  for (OwnDelay& o : own_delays_) o.sent_to[i] = false;
  // Ours not due yet, and the last we applied (the host may not have reached its frame).
  for (uint32_t k = 0; k <= pending_delay_count_; ++k) {
    const DelayChange& c = k < pending_delay_count_ ? pending_delays_[k] : last_applied_delay_;
    if (c.sender != me || c.frame == kNullFrame) continue;
    uint8_t body[kMaxChannelMessage];
    const size_t n = encode_delay_change(c, body, sizeof body);
    const uint32_t seq = peer.channel.next_message_seq();
    if (peer.channel.send_message(ChannelStream::decisions, body, n) != Result::ok) {
      all = false;
      continue;
    }
    for (OwnDelay& o : own_delays_)
      if (o.active && o.frame == c.frame) {
        o.sent_to[i] = true;
        o.seq[i] = seq;
      }
  }
  if (!all)
    driver_.reporter().log(LogLevel::warning, "player %d: not every pending decision fits its new connection",
                           int(peer.players[0]));
}

// The rejoining machine: handshakes, then the request to its host, then the state.
void P2PSessionImpl::rejoin_connect() {
  if (rejoin_phase_ == RejoinPhase::connecting) {
    uint32_t synced = 0, waiting = 0;
    int32_t host = -1;
    for (uint32_t i = 0; i < num_player_peers_; ++i) {
      const Peer& peer = peers_[i];
      if (peer.dropped) continue;
      if (peer.synchronized && peer.endpoint.running()) {
        ++synced;
        if (host < 0) host = int32_t(i);  // peers are in player order: the lowest player's machine
      } else {
        ++waiting;
      }
    }
    if (synced == 0) return;
    if (rejoin_connected_at_ == 0) rejoin_connected_at_ = now_;
    // The others that never answer are gone (the state will say so) or refused us.
    if (waiting > 0 && now_ - rejoin_connected_at_ < kRejoinWaitUs) return;
    Peer& h = peers_[host];
    uint8_t body[kMaxRejoinMessage];
    if (h.channel.send_message(ChannelStream::state_transfer, body, encode_rejoin_request(body)) != Result::ok) return;
    h.channel.set_receive_buffer(rejoin_buffer_.get(), rejoin_buffer_size_);
    rejoin_host_ = host;
    rejoin_phase_ = RejoinPhase::asking;
    unusual_tick();
    driver_.reporter().log(LogLevel::info, "rejoin: asking player %d's machine for the state", int(h.players[0]));
  }
  if (rejoin_phase_ != RejoinPhase::asking && rejoin_phase_ != RejoinPhase::loading) return;
  Peer& h = peers_[rejoin_host_];
  if (h.dropped) {
    rejoin_failed("the host of the rejoin is gone");
    return;
  }
  // Its channel's events come through on_player_channel_event.
}

// A player peer's channel event, by what the blob is: a desync state, or the state of a rejoin.
void P2PSessionImpl::on_player_channel_event(Peer& peer, const ChannelEvent& e) {
  if (e.tag == kDesyncStateTag) {
    desync_states_.on_channel_event(uint32_t(&peer - peers_), e);
    return;
  }
  if ((rejoin_phase_ != RejoinPhase::asking && rejoin_phase_ != RejoinPhase::loading) || rejoin_host_ < 0 ||
      &peer != &peers_[rejoin_host_])
    return;
  if (e.type == ChannelEventType::blob_received) take_rejoin_state(peer);
  else if (e.type == ChannelEventType::blob_aborted) rejoin_failed("the host's state stopped arriving");
}

// The state of the offer arrived: the match goes on from it, our players absent until the live
// frame, the players gone before it cut where the host has them.
void P2PSessionImpl::take_rejoin_state(Peer& host) {
  uint32_t tag = 0;
  Frame frame = kNullFrame;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (rejoin_phase_ != RejoinPhase::loading || !host.channel.received_blob(&tag, &frame, &data, &size)) return;
  const RejoinOffer& o = rejoin_offer_;
  if (tag != kRejoinBlobTag || frame != o.state_frame || size != o.size ||
      driver_.start_from(frame, data, size) != Result::ok) {
    host.channel.release_blob();
    rejoin_failed("the host's state is not the one offered");
    return;
  }
  host.channel.release_blob();
  // Desync states into their own buffer from now on (none without them), not the state's.
  if (desync_states_.enabled()) desync_states_.reconnect(uint32_t(&host - peers_));
  else host.channel.set_receive_buffer(nullptr, 0);
  // The decisions before the state are inside it (their digest comes with the offer); those
  // from it on came from their senders, and are judged now against the match's frame (near the
  // live one; our own said nothing while we waited). The delay every machine's local players use now.
  decisions_.restart_at(frame, o.decisions_digest);
  decisions_.drop_too_far(std::max(frame, o.live_at));
  for (uint32_t k = 0; k < pending_delay_count_;)
    if (decision_frame_too_far(pending_delays_[k].frame, std::max(frame, o.live_at)) ||
        (o.delay_frame != kNullFrame && pending_delays_[k].frame <= o.delay_frame)) {
      if (pending_delays_[k].frame > o.delay_frame) ++delay_changes_dropped_;
      pending_delays_[k] = pending_delays_[--pending_delay_count_];
    } else {
      ++k;
    }
  if (o.delay_frame != kNullFrame) {
    for (uint32_t p = 0; p < num_players_; ++p)
      if (driver_.is_local(PlayerIndex(p))) driver_.set_input_delay(PlayerIndex(p), o.delay);
    last_applied_delay_.frame = o.delay_frame;
    last_applied_delay_.delay = o.delay;
  }
  for (uint32_t p = 0; p < num_players_; ++p) {
    const PlayerIndex player = PlayerIndex(p);
    if (driver_.is_local(player)) {
      driver_.rejoin_player(player, o.live_at);
      rejoined_at_[p] = o.live_at;
      rejoin_untold_ = true;
      unusual_tick();
      for (uint32_t i = 0; i < num_player_peers_; ++i) peers_[i].endpoint.rejoin_remote_player(player, o.live_at - 1);
      local_status_[p] = ConnectStatus{};
      local_status_[p].last_frame = o.live_at - 1;
    } else if (o.status[p].disconnected) {
      local_status_[p] = o.status[p];
      driver_.disconnect_player(player, o.status[p].last_frame, true);
      cut_announced_[p] = true;
    }
  }
  // A machine whose players are all gone is not waited for.
  for (uint32_t i = 0; i < num_player_peers_; ++i) {
    Peer& peer = peers_[i];
    bool gone = true;
    for (uint32_t k = 0; k < peer.player_count; ++k) gone = gone && o.status[peer.players[k]].disconnected;
    if (gone && !peer.dropped) {
      peer.dropped = true;
      peer.channel.peer_gone();
    }
    if (!peer.dropped) peer.endpoint.restart_outgoing_at(o.live_at);
    sent_to_peer_[i] = o.live_at - 1;
  }
  last_local_sent_ = o.live_at - 1;
  forget_idle_ready();  // every stream starts over
  rejoin_phase_ = RejoinPhase::playing;
  running_ = true;
  running_since_ = now_;
  for (uint32_t i = 0; i < num_player_peers_; ++i) peers_[i].progress.start(now_);
  driver_.reporter().log(LogLevel::info, "rejoin: state of frame %d loaded (%zu bytes), live at frame %d", frame, size,
                         o.live_at);
  driver_.reporter().emit(Reporter::make(EventType::running, "rejoined the match: catching up"));
}

// Until its live frame a rejoining machine runs up to kRejoinCatchUpFrames extra frames a call
// (its local inputs are not needed before that frame).
void P2PSessionImpl::rejoin_catch_up() {
  // Not into the frames whose inputs the game gives from now on: its input given at frame f is
  // for f + delay, so the first one it gives is that of the live frame.
  int32_t delay = kMaxInputDelay;
  for (uint32_t p = 0; p < num_players_; ++p)
    if (driver_.is_local(PlayerIndex(p))) delay = std::min(delay, driver_.input_delay(PlayerIndex(p)));
  for (int32_t k = 0; k < kRejoinCatchUpFrames && driver_.frame() + delay < rejoin_offer_.live_at; ++k) {
    if (driver_.window_full() || driver_.advance() != Result::ok) break;
    apply_due_delays();
    timeline_.on_frame(driver_.frame(), now_);
    exchange_checksums();
  }
}

void P2PSessionImpl::rejoin_failed(const char* why) {
  if (rejoin_phase_ == RejoinPhase::failed) return;
  rejoin_phase_ = RejoinPhase::failed;
  unusual_tick();
  driver_.reporter().log(LogLevel::error, "rejoin failed: %s", why);
  for (uint32_t i = 0; i < num_peers_; ++i) {
    if (peers_[i].dropped) continue;
    peers_[i].endpoint.send_disconnect();
    peers_[i].dropped = true;
    peers_[i].channel.peer_gone();
  }
  told_nobody_left_ = true;
  running_ = false;  // also once the state is loaded: the others cut us before our live frame
  Event e = Reporter::make(EventType::cannot_continue, why);
  e.frame = driver_.frame();
  driver_.reporter().emit(e);
}

// player_rejoined once the player's input of its live frame is confirmed here.
void P2PSessionImpl::tell_rejoined_players() {
  rejoin_untold_ = false;
  for (uint32_t p = 0; p < num_players_; ++p) {
    const Frame at = rejoined_at_[p];
    if (at == kNullFrame || rejoin_told_[p]) continue;
    if (driver_.absent(PlayerIndex(p), at) || driver_.confirmed_frame() < at) {
      rejoin_untold_ = true;
      unusual_tick();
      continue;
    }
    rejoin_told_[p] = true;
    if (Peer* peer = peer_of(PlayerIndex(p))) {
      peer->rejoining = false;
    }
    rejoined_at_us_[p] = now_;
    emit_rejoin_event(EventType::player_rejoined, PlayerIndex(p), at, "`player` plays again from `frame`");
  }
}

// Our frame and advantage, for the quality report that waits or falls due (send_due). Out of
// line: a report goes every quality_interval_us, the pass runs twice a tick.
void P2PSessionImpl::tell_local_frame(Peer& peer) {
  // With 8 samples the advantage we report is their median, whatever the instant estimate
  // (TimeSync::reported_ahead); the estimate is then needed only to tell "no report yet" (0),
  // which remote_report_at() already says: it is set with the report the estimate starts from.
  int32_t ahead = 0;
  if (peer.time_sync.samples() >= 8 && peer.endpoint.remote_report_at() != 0) {
    ahead = peer.time_sync.reported_ahead(0);
  } else {
    const Frame remote = peer.endpoint.estimated_remote_frame(now_);
    ahead = remote == kNullFrame ? 0 : peer.time_sync.reported_ahead(driver_.frame() - remote);
  }
  peer.endpoint.set_local_frame(driver_.frame(), ahead);
}

// `again`: the pass of advance_frame, right after poll's at the same time: an endpoint that poll
// saw to then looks only at what changed since (our new input), and an idle channel is left be.
// send_due's pass once a player may be gone, or under the tests' switch (send_pass_switch.h).
void P2PSessionImpl::send_due_unusual(bool again) {
  if (full_send_passes_) {
    // Every send_local_inputs comes before a pass (poll_once's, advance's): forgotten here, the
    // mark is never what answers one, and the walk over the peers always does.
    forget_idle_ready();
    send_due_full(again);
    return;
  }
  send_due_either_pass<true>(again);
}

template <bool kCuts, bool kAgain>
void P2PSessionImpl::send_due_pass() {
  // Confirmations matter now: lockstep waits for every one, a stalled frame waits for the next,
  // a window nearly full (two frames left) is one late datagram away from a stall, and, when
  // the owner asks for it (loss_hold_frames), after a loss so is a window half full. Otherwise
  // the endpoints may batch: a frame held back then costs nothing but bytes saved. (Measured,
  // docs/NETWORKING.md: at 50 ms +-8 and 5% loss, three frames left or the loss rule cost 10-20%
  // more bytes for no fewer stalls.)
  // An endpoint asks for the urgency only where it decides something: frames pending and
  // unacknowledged that the send policy's other reasons would hold back (most passes, most
  // endpoints send them for another reason or have none). The session's part is worked out at
  // the first ask of the pass (know_basis).
  basis_known_ = false;
  bool sent = false;
  const uint32_t players = num_player_peers_;
  for (uint32_t i = 0; i < players; ++i) sent |= pass_peer<kCuts, kAgain, false>(i);
  for (uint32_t i = players; i < num_peers_; ++i) sent |= pass_peer<kCuts, kAgain, true>(i);
  // This tick's datagrams in one go (one sendmmsg on Linux UDP). A pass that handed the
  // transport nothing has nothing to flush (most: a steady match sends ~0.6 inputs datagrams
  // per frame, nearly all from one pass). An endpoint sends only from its polls here (its
  // channel's datagrams too), each one counted in its datagrams_sent; the session's own
  // datagrams are stranger replies (answer_stranger).
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

template <bool kCuts>
void P2PSessionImpl::finish_poll_pass(uint32_t i, PeerStop stop) {
  const uint32_t players = num_player_peers_;
  bool sent = i < players ? finish_peer<false>(peers_[i], stop) : finish_peer<true>(peers_[i], stop);
  for (uint32_t k = i + 1; k < players; ++k) sent |= pass_peer<kCuts, false, false>(k);
  for (uint32_t k = std::max(i + 1, players); k < num_peers_; ++k) sent |= pass_peer<kCuts, false, true>(k);
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

// poll_peer's rest for a peer quiet_peer stopped at: true when it sent.
template <bool kSpectator>
bool P2PSessionImpl::finish_peer(Peer& peer, PeerStop stop) {
  // The count poll_peer reads first: quiet_peer sends nothing.
  const uint64_t sent_before = peer.endpoint.datagrams_sent();
  if (stop == PeerStop::channel) {
    peer.poll_channel(now_, *transport_);
    return peer.endpoint.datagrams_sent() != sent_before;
  }
  auto urgency = urgency_of<kSpectator>(peer);
  if (peer.endpoint.report_may_go(now_)) tell_local_frame(peer);
  peer.endpoint.poll_loudly(now_, *transport_, peer.address, urgency);
  if (!peer.dropped) peer.poll_channel(now_, *transport_);  // after the inputs
  return peer.endpoint.datagrams_sent() != sent_before;
}

// Peer `i`'s part of a pass: true when it sent anything.
template <bool kCuts, bool kAgain, bool kSpectator>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool P2PSessionImpl::pass_peer(uint32_t i) {
  Peer& peer = peers_[i];
  // Spectators need it too: it tells them which players are gone and from which frame. Only
  // disconnected players' statuses travel (docs/PROTOCOL.md), and before the first drop
  // (cuts_active_) every one is connected, as the endpoint's copy starts: nothing to copy.
  if constexpr (kCuts) tell_statuses(peer, i);
  // Polled at this time, it runs (polled_at): no idle endpoint is.
  if constexpr (kAgain)
    if (peer.endpoint.polled_at(now_)) return poll_peer_again<kSpectator>(peer);
  if (peer.endpoint.state() == EndpointState::idle) return false;
  return poll_peer<kSpectator>(peer);
}

// The urgency of a peer's confirmations (send_due_pass), asked by its endpoint only where it
// decides something. Spectators confirm nothing we wait for.
template <bool kSpectator>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool P2PSessionImpl::peer_urgent(const Peer& peer) {
  if constexpr (kSpectator) {
    return false;
  } else {
    if (!basis_known_) know_basis();
    return urgent_by(basis_, peer);
  }
}

// A running or handshaking peer's poll (and its channel's, after the inputs): true when it sent.
template <bool kSpectator>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool P2PSessionImpl::poll_peer(Peer& peer) {
  peer.endpoint.set_stalled(!kSpectator && stalled_);
  auto urgency = urgency_of<kSpectator>(peer);
  const uint64_t sent_before = peer.endpoint.datagrams_sent();
  // Most polls find nothing due (the endpoint sends nothing, no report falls due) and an idle
  // channel: nothing sent, nothing to tell.
  if (peer.endpoint.poll_quietly(now_, urgency)) {
    if (!peer.endpoint.quiet_allowed()) [[unlikely]] tell_riding_report(peer);
    if (peer.dropped || peer.channel.poll_idle(now_)) return false;
    peer.poll_channel(now_, *transport_);
    return peer.endpoint.datagrams_sent() != sent_before;
  }
  // Our frame and advantage travel only in quality reports (one every quality_interval_us):
  // told while one waits or falls due at this poll, they are what every report carries,
  // since a report goes only from this pass or advance_frame's right after it (same frame,
  // same time, no datagram between).
  if (peer.endpoint.report_may_go(now_)) tell_local_frame(peer);
  peer.endpoint.poll_loudly(now_, *transport_, peer.address, urgency);
  if (!peer.dropped) peer.poll_channel(now_, *transport_);  // after the inputs
  return peer.endpoint.datagrams_sent() != sent_before;
}

// advance_frame's poll of a peer poll_peer saw to at this time: what changed since.
template <bool kSpectator>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool P2PSessionImpl::poll_peer_again(Peer& peer) {
  // (A refused frame retried in the same tick changes the stall between two such passes.)
  peer.endpoint.set_stalled(!kSpectator && stalled_);
  auto urgency = urgency_of<kSpectator>(peer);
  const uint64_t sent_before = peer.endpoint.datagrams_sent();
  peer.endpoint.poll_polled_again(now_, *transport_, peer.address, urgency);
  if (!peer.dropped && !peer.channel.idle()) peer.poll_channel(now_, *transport_);
  return peer.endpoint.datagrams_sent() != sent_before;
}

// advance_frame's sends on the usual machine (advance_sends_usual): send_local_inputs, then
// send_due's pass with `again`, in one loop over the player peers, each one's new frame queued
// right before its part of the pass. The same datagrams in the same order: queuing sends
// nothing, a peer's part of the pass changes only that peer's endpoint and channel (its
// datagrams, its marks) and the pass's own basis_ and flush flags, none of which a later peer's
// queuing reads (its holds read its own channel), and the bookkeeping after the queuing (the
// timeline, last_local_sent_, idle_ready_) is read by no part of the pass.
void P2PSessionImpl::advance_sends() {
  const Frame ready = driver_.last_confirmed(local_players_[0]);
  // send_local_inputs' idle answer (no cut was taken: unusual_passes_ is false).
  if (ready == idle_ready_ || (ready <= last_local_sent_ && streams_have(ready))) return send_due_pass<false, true>();
  // A two-player match's usual frame: one peer, a player's, streaming, that has every frame up
  // to the newest sent (so is the frame before `ready`), and no hold.
  if (num_peers_ == 1 && num_player_peers_ == 1 && ready - 1 == last_local_sent_ && sent_to_peer_[0] == last_local_sent_ &&
      !peers_[0].dropped && !stream_waits_[0] && !holds_may_apply())
    return advance_sends_one(ready);
  advance_sends_many(ready);
}

// advance_sends_loop for the usual frame of a two-player match (advance_sends asked): what
// send_ready_to finds there (upto = ready = sent + 1, one frame queued) and note_ready_sent
// then keeps (the one new frame sent: last_local_sent_, the timeline; every streaming peer has
// `ready`: idle_ready_), without the tally over the peers. Its own function, as is the loop's,
// so that neither's registers are allocated around the other's inline sends (so built, -62
// library instructions per peer-frame at 2 peers; round 11's one-peer straight line, +50; and
// advance_sends_all taking one peer too, +27).
[[gnu::noinline]] void P2PSessionImpl::advance_sends_one(Frame ready) {
  basis_known_ = false;
  peers_[0].endpoint.send_input(ready, driver_.confirmed_input(local_players_[0], ready));
  sent_to_peer_[0] = ready;
  const bool sent = pass_peer<false, true, false>(0);
  timeline_.on_sent(ready, now_);
  last_local_sent_ = ready;
  idle_ready_ = ready;
  // As send_due_pass: this tick's datagrams in one go, when there are any.
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

// advance_sends for more than one player peer, or spectators, or not the usual frame. The usual
// frame of every player peer (each streaming, every frame up to the newest sent to each, which
// is the frame before `ready`, and no hold) takes advance_sends_all, the rest the loop. Each its
// own function: this one only chooses, without the loop's saved registers (the choice at the top
// of the loop's function measured ~20 per peer-frame more at 3 to 8 peers).
[[gnu::noinline]] void P2PSessionImpl::advance_sends_many(Frame ready) {
  if (ready - 1 == last_local_sent_ && !holds_may_apply() && streams_at(last_local_sent_)) return advance_sends_all(ready);
  advance_sends_loop(ready);
}

// advance_sends_loop for the usual frame of every player peer (advance_sends_many asked): what
// send_ready_to finds for each (upto = ready = sent + 1: the one frame queued, the same blob for
// every peer) and note_ready_sent then keeps (as advance_sends_one), without the tally.
[[gnu::noinline]] void P2PSessionImpl::advance_sends_all(Frame ready) {
  basis_known_ = false;
  bool sent = false;
  const uint8_t* const blob = driver_.confirmed_input(local_players_[0], ready);
  const uint32_t players = num_player_peers_;
  for (uint32_t i = 0; i < players; ++i) {
    peers_[i].endpoint.send_input(ready, blob);
    sent_to_peer_[i] = ready;
    sent |= pass_peer<false, true, false>(i);
  }
  timeline_.on_sent(ready, now_);
  last_local_sent_ = ready;
  idle_ready_ = ready;
  for (uint32_t i = players; i < num_peers_; ++i) sent |= pass_peer<false, true, true>(i);
  // As send_due_pass: this tick's datagrams in one go, when there are any.
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

// advance_sends' loop: send_local_inputs' part and the pass's for each player peer in turn (see
// above), then the bookkeeping of the frames sent, then the spectators' part.
[[gnu::noinline]] void P2PSessionImpl::advance_sends_loop(Frame ready) {
  basis_known_ = false;
  bool sent = false;
  ReadyTally tally{last_local_sent_};
  const bool holds = holds_may_apply();  // (no test switch here: advance_sends_usual)
  const uint32_t players = num_player_peers_;
  for (uint32_t i = 0; i < players; ++i) {
    send_ready_to<true>(i, ready, holds, tally);
    sent |= pass_peer<false, true, false>(i);
  }
  note_ready_sent(ready, tally);
  for (uint32_t i = players; i < num_peers_; ++i) sent |= pass_peer<false, true, true>(i);
  // As send_due_pass: this tick's datagrams in one go, when there are any.
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

// The reference the skipping passes above must equal datagram by datagram (tests switch to it:
// set_full_send_passes_for_tests): send_due as it was before the endpoints asked for the
// urgency lazily (round 8), the urgency worked out and told to every endpoint, every endpoint
// polled through its plain calls.
void P2PSessionImpl::send_due_full(bool again) {
  // Confirmations matter now: lockstep waits for every one, a stalled frame waits for the next,
  // a window nearly full (two frames left) is one late datagram away from a stall, and, when
  // the owner asks for it (loss_hold_frames), after a loss so is a window half full. Otherwise
  // the endpoints may batch: a frame held back then costs nothing but bytes saved. (Measured,
  // docs/NETWORKING.md: at 50 ms +-8 and 5% loss, three frames left or the loss rule cost 10-20%
  // more bytes for no fewer stalls.)
  // The window in use (lowered to the smallest player's): it is the one that stalls.
  const int32_t window = driver_.prediction_window();
  const int32_t used = driver_.frame() - driver_.confirmed_frame();
  const bool pressing = window == 0 || stalled_ || used > window - 2;
  const bool half_full = used > window / 2;
  // The peer's window, seen from here: our input of a frame reaches it a one-way trip later
  // (a slow datagram: plus twice the jitter); its window and our input delay cover that many
  // frames (every player's window in use is the match's smallest, so the peer's is ours). When
  // the slow datagram plus a batch would not fit, every frame goes at once.
  // The driver keeps the local players' smallest delay (INT32_MAX with none).
  const int32_t delay = std::min(kMaxPredictionFrames, driver_.min_local_delay());
  const uint64_t cover_us = uint64_t(window + delay) * frame_us_;
  const uint64_t three_frames_us = 3 * frame_us_;  // kept in a register across the endpoints' calls
  bool sent = false;
  for (uint32_t i = 0; i < num_peers_; ++i) {
    Peer& peer = peers_[i];
    // Spectators need it too: it tells them which players are gone and from which frame. Only
    // disconnected players' statuses travel (docs/PROTOCOL.md), and before the first drop
    // (cuts_active_) every one is connected, as the endpoint's copy starts: nothing to copy.
    if (cuts_active_)
      peer.endpoint.set_local_connect_status(
          peer.spectator ? status_for_spectator(i - num_player_peers_) : local_status_, num_players_);
    if (peer.endpoint.state() == EndpointState::idle) continue;
    const uint64_t slow_trip_us = peer.endpoint.ping_us() / 2 + 2 * peer.endpoint.jitter_us() + three_frames_us;
    peer.endpoint.set_urgent(!peer.spectator && (pressing || slow_trip_us >= cover_us ||
                                                 (half_full && peer.endpoint.loss_recent(now_))),
                             stalled_ && !peer.spectator);
    const uint64_t sent_before = peer.endpoint.datagrams_sent();
    if (again && peer.endpoint.polled_at(now_)) {
      peer.endpoint.poll_polled_again(now_, *transport_, peer.address);
      if (!peer.dropped && !peer.channel.idle()) peer.poll_channel(now_, *transport_);
      sent |= peer.endpoint.datagrams_sent() != sent_before;
      continue;
    }
    // Our frame and advantage travel only in quality reports (one every quality_interval_us):
    // told while one waits or falls due at this poll, they are what every report carries, since
    // a report goes only from this pass or advance_frame's right after it (same frame, same
    // time, no datagram between).
    if (peer.endpoint.report_may_go(now_)) tell_local_frame(peer);
    peer.endpoint.poll(now_, *transport_, peer.address);
    if (!peer.dropped) peer.poll_channel(now_, *transport_);  // after the inputs
    sent |= peer.endpoint.datagrams_sent() != sent_before;
  }
  // This tick's datagrams in one go (one sendmmsg on Linux UDP). A pass that handed the
  // transport nothing has nothing to flush (most: a steady match sends ~0.6 inputs datagrams
  // per frame, nearly all from one pass). An endpoint sends only from its polls here (its
  // channel's datagrams too), each one counted in its datagrams_sent; the session's own
  // datagrams are stranger replies (answer_stranger).
  if (!sent && !stranger_sent_) return;
  stranger_sent_ = false;
  transport_->flush();
}

}  // namespace

void set_full_send_passes_for_tests(bool on) noexcept { full_send_passes_for_tests.store(on, std::memory_order_relaxed); }
void set_general_ticks_for_tests(bool on) noexcept { general_ticks_for_tests.store(on, std::memory_order_relaxed); }
bool usual_tick_holds_for_tests(const P2PSession& session) noexcept {
  return static_cast<const P2PSessionImpl&>(session).usual_tick_holds();
}
bool usual_tick_for_tests(const P2PSession& session) noexcept {
  return static_cast<const P2PSessionImpl&>(session).usual_tick_byte();
}

}  // namespace detail

Result create_p2p_session(const P2PConfig& config, std::unique_ptr<P2PSession>* out) {
  return detail::create_session<detail::P2PSessionImpl>(config.session, config, out);
}

}  // namespace retcon
