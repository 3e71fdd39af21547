// Spectator: watches a match by receiving the host's confirmed inputs of every player. It never
// predicts and never rolls back (lockstep on confirmed inputs), and when it falls behind it runs
// extra frames per call to catch up.
#include <algorithm>
#include <new>

#include "retcon/p2p.h"
#include "session/decision_exchange.h"
#include "session/driver_session.h"
#include "session/network_security.h"
#include "session/handshake_mismatch.h"
#include "session/peer.h"
#include "session/rejoin.h"
#include "session/snapshot_client.h"
#include "session/state_transfer.h"

namespace retcon {
namespace detail {
namespace {

// How far back a host may revise frames it streamed (see init).
constexpr int32_t kRevisionFrames = 8;

class SpectatorSessionImpl final : public P2PSession {
 public:
  Result init(const SpectatorConfig& c) {
    if (c.network.transport == nullptr || c.host.size == 0 || c.host.size > PeerAddress::kCapacity ||
        c.catchup_threshold < 1 || c.catchup_max_frames < 0 || c.network.frame_rate < 1 ||
        c.network.frame_rate > 65535 || c.network.sync_round_trips < 1)
      return Result::invalid_argument;
    SessionConfig s = c.session;
    s.max_prediction = 0;  // confirmed inputs only
    // Never predicted, yet not final: when the peers agree that a dropped player's last frame is
    // earlier than the host first thought, the host revokes inputs it already streamed. So the
    // spectator keeps a few states (and checkpoints) to re-run those frames.
    if (Result r = driver_.init(s, kRevisionFrames, SaveMode::every_frame); r != Result::ok) return r;
    if (Result r = driver_.enable_checkpoints(4 * kRevisionFrames); r != Result::ok) return r;
    // The host forwards decisions as soon as it has them; a spectator may trail the match.
    if (Result r = decisions_.init(driver_, 4 * kRevisionFrames, kSpectatorDecisionsPerSender); r != Result::ok)
      return r;
    for (uint32_t p = 0; p < s.num_players; ++p) driver_.set_local(PlayerIndex(p), false);
    num_players_ = s.num_players;
    input_size_ = s.input_size;
    transport_ = c.network.transport;
    catchup_threshold_ = c.catchup_threshold;
    catchup_max_ = c.catchup_max_frames;
    host_.address = c.host;
    host_.spectator = true;
    EndpointConfig e;
    e.shape = SessionShape{s.num_players, s.input_size, c.network.frame_rate};
    shape_ = e.shape;
    e.spectator = true;
    e.send_blob_size = 0;
    e.receive_blob_size = uint16_t(s.num_players * s.input_size);
    // While a transferred state arrives, the host's inputs since its frame wait here.
    if (c.network.state_transfer) e.receive_window_frames = 1024;
    e.notify_delay_us = c.network.notify_delay_us;
    e.disconnect_timeout_us = c.network.disconnect_timeout_us;
    if (e.disconnect_timeout_us != 0 && e.notify_delay_us > e.disconnect_timeout_us) e.notify_delay_us = e.disconnect_timeout_us;
    e.sync_round_trips = c.network.sync_round_trips;
    apply_network_security(c.network, 0, &e);
    handshake_timeout_us_ = c.network.handshake_timeout_us;
    e.logger = s.logger;
    notify_delay_us_ = e.notify_delay_us;
    // The host may itself wait up to its disconnect timeout for a player (plus a grace of a
    // handshake timeout for one that never sent a frame), then for the other players to agree
    // on its cut and for that cut to settle before it streams on: its stream is given three
    // disconnect timeouts plus that grace (plus the grace again before its first frame).
    first_frame_grace_us_ = c.network.handshake_timeout_us != 0 ? c.network.handshake_timeout_us : e.disconnect_timeout_us;
    progress_timeout_us_ = e.disconnect_timeout_us != 0 ? 3 * e.disconnect_timeout_us + first_frame_grace_us_ : 0;
    if (Result r = host_.endpoint.init(e); r != Result::ok) return r;
    // The reliable channel to the host (messages; the host's state, with state transfer).
    if (Result r = host_.channel.init(transfer_channel_config(c.network, s.max_state_size)); r != Result::ok) return r;
    host_.endpoint.set_channel_sink(&host_);
    if (Result r = snapshot_.init(driver_, c.network.state_transfer, s.max_state_size, host_); r != Result::ok) return r;
    return Result::ok;
  }

  Result add_local_input(PlayerIndex, const void*, size_t) override { return Result::invalid_player; }
  Result frame_checksum(Frame frame, uint64_t* out) override { return driver_frame_checksum(driver_, frame, out); }
  Result set_input_delay(PlayerIndex, int32_t) override { return Result::invalid_player; }
  Frame current_frame() const override { return driver_.frame(); }
  Frame confirmed_frame() const override { return driver_.confirmed_frame(); }
  SessionStats stats() const override { return driver_stats(driver_); }

  Result poll(uint64_t now_us) override { return guarded_call(guard_, [&] { return poll_once(now_us); }); }
  Result advance_frame() override { return guarded_call(guard_, [&] { return advance(); }); }

  Result poll_once(uint64_t now_us) {
    if (now_us > now_) now_ = now_us;
    if (!started_) {
      host_.endpoint.start(now_);
      host_.handshake.start(now_);
      started_ = true;
    }
    PeerAddress from;
    size_t length = 0;
    for (int i = 0; i < 4096 && transport_->receive(&from, datagram_, sizeof datagram_, &length); ++i) {
      if (from != host_.address) {
        ++dropped_unknown_address_;
        continue;
      }
      host_.endpoint.on_datagram(datagram_, length, now_);
    }
    handle_events();
    route_channel_messages();
    watch_handshake();
    if (running_ && !host_.dropped) {
      snapshot_.poll(driver_, host_, now_);
      if (snapshot_.take_failure()) {
        host_.endpoint.send_disconnect();
        host_gone("the host's state could not be received");
      }
    }
    if (running_) {
      apply_disconnects();
      decisions_.drop_too_far(known_frame());  // what came while we waited for the state
      if (snapshot_.ready()) drain_inputs();
      watch_progress();
    }
    host_.endpoint.set_local_frame(driver_.frame(), 0);
    host_.endpoint.poll(now_, *transport_, host_.address);
    host_.poll_channel(now_, *transport_);  // after the endpoint's own datagrams
    transport_->flush();
    return Result::ok;
  }

  Result advance() {
    if (!running_) return Result::not_synchronized;
    // Behind by more than the threshold: run extra frames this call to catch up. What waits is
    // what the host sent and we have not run (the driver's confirmed frame never passes ours).
    const Frame waiting = host_.endpoint.last_received_frame() - driver_.frame() + 1;
    const int32_t runs = 1 + (waiting > catchup_threshold_ ? catchup_max_ : 0);
    Result r = Result::ok;
    for (int32_t i = 0; i < runs; ++i) {
      if (driver_.window_full() || decision_pending()) {
        if (i == 0) {
          ++driver_.mutable_stats().frames_stalled;
          r = Result::prediction_limit;  // waiting for the host's next confirmed frame
        }
        break;
      }
      if ((r = driver_.advance()) != Result::ok) break;
    }
    decisions_.retire(driver_.frame() - 4 * kRevisionFrames - 1, driver_.frame());
    return r;
  }

  bool running() const override { return running_; }
  Result peer_stats(PlayerIndex, PeerStats* out) const override {
    if (out == nullptr) return Result::invalid_argument;
    *out = make_peer_stats(host_, driver_.frame(), now_);
    return Result::ok;
  }
  Result spectator_stats(uint32_t, PeerStats*) const override { return Result::not_found; }
  int32_t frames_to_wait() const override { return 0; }
  bool should_wait() const override { return false; }
  bool should_catch_up() const override { return false; }
  Result disconnect_player(PlayerIndex) override { return Result::invalid_player; }
  uint64_t dropped_unknown_address() const override { return dropped_unknown_address_; }
  uint64_t checksums_compared() const override { return 0; }
  Result choose_input_delay(const AdaptiveDelayRule&, DelayChoice*) override { return Result::unsupported; }
  Result send_decision(const void*, size_t, Frame, Frame* earliest) override {
    if (earliest != nullptr) *earliest = kNullFrame;
    return Result::unsupported;
  }
  Frame earliest_decision_frame() const override { return kNullFrame; }
  Result apply_input_delay(const AdaptiveDelayRule&, Frame, DelayChoice*) override { return Result::unsupported; }
  Result between_rounds() override { return Result::unsupported; }

 private:
  // A decision left in the channel (the queue was full: a host beyond the documented rate)
  // may be for the frame about to run.
  bool decision_pending() { return host_.channel.has_message() && queue_full(); }
  bool queue_full() { return decisions_.queue().size() + 1 >= decisions_.queue().capacity(); }

  // The newest frame we know the match reached (a decision further ahead than the host can
  // stamp is refused, session/decision_exchange.h); none while we wait for the host's state.
  Frame known_frame() const {
    return snapshot_.ready() ? std::max(driver_.frame(), host_.endpoint.last_received_frame()) : kNullFrame;
  }

  // Messages from the host's reliable channel, by stream; streams not served here are dropped.
  void route_channel_messages() {
    ChannelStream stream;
    uint8_t body[kMaxChannelMessage];
    size_t size = 0;
    // Taken only while the queue has room; the rest waits in the channel, which then stops
    // acknowledging, so the host stops streaming (and advance() waits for it).
    while (!queue_full() && host_.channel.pop_message(&stream, body, &size)) {
      switch (stream) {
        case ChannelStream::state_transfer: snapshot_.on_message(driver_, host_, body, size); break;
        case ChannelStream::decisions:
          if (size > 0 && body[0] == kRejoinNoticeKind) on_rejoin_notice(body, size);
          else decisions_.on_message(host_, true, body, size, known_frame());
          break;
        default: ++host_.channel_messages_dropped; break;
      }
    }
  }

  void emit(EventType type, const char* message) {
    Event e = Reporter::make(type, message);
    e.frame = driver_.frame();
    e.count = host_.endpoint.sync_progress();
    e.total = host_.endpoint.sync_total();
    driver_.reporter().emit(e);
  }

  void handle_events() {
    EndpointEvent ev;
    while (host_.endpoint.pop_event(&ev)) {
      switch (ev.type) {
        case EndpointEventType::synchronizing: emit(EventType::synchronizing, "handshake with the host"); break;
        case EndpointEventType::synchronized:
          emit(EventType::synchronized, "handshake complete");
          running_ = true;
          host_.progress.start(now_);
          emit(EventType::running, "spectating");
          break;
        case EndpointEventType::interrupted: emit(EventType::connection_interrupted, "host silent"); break;
        case EndpointEventType::resumed: emit(EventType::connection_resumed, "host heard again"); break;
        case EndpointEventType::disconnected: host_gone("host gone"); break;
        case EndpointEventType::handshake_rejected:
          emit(EventType::handshake_rejected,
               handshake_mismatch(ev.reason, shape_, host_.endpoint.remote_handshake()).message);
          break;
      }
    }
  }

  // As in the P2P session: no handshake round trip for the handshake timeout, and the host is
  // given up.
  void watch_handshake() {
    if (handshake_timeout_us_ == 0 || host_.dropped || host_.endpoint.state() != EndpointState::synchronizing) return;
    host_.handshake.observe(host_.endpoint.sync_progress(), now_);
    if (now_ - host_.handshake.at_us < handshake_timeout_us_) return;
    host_.endpoint.send_disconnect();
    if (host_.endpoint.saw_other_version() && host_.endpoint.sync_progress() == 0) {
      host_.dropped = true;
      emit(EventType::handshake_rejected, "the host's protocol version differs");
      return;
    }
    host_gone("no handshake progress with the host for the handshake timeout");
  }

  void host_gone(const char* why) {
    if (host_.dropped) return;
    host_.dropped = true;
    host_.channel.peer_gone();
    emit(EventType::disconnected, why);
    emit(EventType::cannot_continue, "the host is gone: the match cannot be watched further");
  }

  // Liveness in frames, as in the P2P session: a stall is told once per episode after the
  // notify delay, and a host whose stream has not moved for the progress timeout is left.
  void watch_progress() {
    host_.progress.observe(host_.endpoint.last_received_frame(), now_);
    if (host_.dropped) return;
    // Waiting for the host's state is not a stall (the state's own progress is the channel's).
    const bool blocked = driver_.window_full() && !snapshot_.transferring();
    const bool tell = stall_.update(blocked, now_, notify_delay_us_);
    if (!blocked) return;
    if (tell) {
      Event e = Reporter::make(EventType::prediction_limit, "waiting for the host's next confirmed frame");
      e.frame = driver_.frame();
      e.count = int32_t(std::min<uint64_t>((now_ - stall_.since_us()) / 1000, INT32_MAX));
      driver_.reporter().emit(e);
    }
    if (progress_timeout_us_ == 0) return;
    const uint64_t limit = progress_timeout_us_ + (host_.progress.any() ? 0 : first_frame_grace_us_);
    if (now_ - host_.progress.at_us < limit) return;
    driver_.reporter().log(LogLevel::warning, "the host sent no new frame for %llu ms: left",
                           static_cast<unsigned long long>((now_ - host_.progress.at_us) / 1000));
    host_.endpoint.send_disconnect();
    host_gone("the host's stream has not moved for the timeout");
  }

  // The host's connect status arrives with (or before) the inputs of frames after a
  // disconnect, so players are cut at the host's frame before those frames run.
  void apply_disconnects() {
    for (uint32_t p = 0; p < num_players_; ++p) {
      const ConnectStatus& st = host_.endpoint.remote_connect_status(PlayerIndex(p));
      if (st.disconnected) driver_.disconnect_player(PlayerIndex(p), st.last_frame);
    }
  }

  // A player rejoins (the host's notice, session/rejoin.h): disconnected up to live_at - 1, live
  // from live_at, as on the players' machines. The host streams no frame from live_at on before
  // we acknowledged the notice, so it is applied before that frame runs (drain_inputs waits for
  // it when it cannot be applied yet: the live frame beyond the input queue).
  void on_rejoin_notice(const uint8_t* body, size_t size) {
    RejoinNotice n;
    if (!decode_rejoin_notice(body, size, num_players_, &n)) {
      ++host_.channel_messages_dropped;
      return;
    }
    pending_rejoin_[n.player] = n;
    apply_rejoins();
  }

  // The rejoins told and not applied yet, once the state (if any) is loaded. One inside the
  // state (its live frame before the state's) is already in it.
  void apply_rejoins() {
    if (!snapshot_.ready()) return;
    for (uint32_t p = 0; p < num_players_; ++p) {
      RejoinNotice& n = pending_rejoin_[p];
      if (n.player < 0) continue;
      const PlayerIndex player = n.player;
      if (n.live_at <= driver_.start_frame()) {
        // The player is live in our state. The host may have reported its old cut to us before
        // it knew we would take a state (it does until we hold the notice: we might have been
        // replaying from frame 0): old news, undone (the stream holds no frame of ours from
        // live_at on before we acknowledged the notice, so nothing after the state ran yet).
        Frame after = kNullFrame;
        if (driver_.is_disconnected(player, &after) && after <= n.cut) driver_.rejoin_player(player, driver_.start_frame());
        host_.endpoint.rejoin_remote_player(player, n.live_at - 1);
        n.player = -1;
        continue;
      }
      // Not before we hold every real input of the player up to its cut (a spectator that
      // replays the match from frame 0 may be far behind): its queue starts over at live_at.
      if (driver_.last_confirmed(player) < n.cut) continue;
      // A cut not applied yet (the host's status comes with the inputs after it): applied now,
      // unless frames after it ran (a state of ours after the cut: the gap then starts there).
      if (!driver_.is_disconnected(player) && driver_.frame() <= n.cut + 1) driver_.disconnect_player(player, n.cut);
      const Result r = driver_.rejoin_player(player, n.live_at);
      if (r == Result::input_out_of_window) continue;  // the live frame is beyond the queue: later
      n.player = -1;
      if (r != Result::ok) {
        driver_.reporter().log(LogLevel::error, "player %d: rejoin at frame %d cannot be followed here: %s",
                               int(player), n.live_at, result_name(r));
        continue;
      }
      // The host's reports of the old cut are old news from now on.
      host_.endpoint.rejoin_remote_player(player, n.live_at - 1);
    }
  }

  // True while a rejoin told for a frame <= f waits to be applied.
  bool rejoin_pending(Frame f) const {
    for (uint32_t p = 0; p < num_players_; ++p)
      if (pending_rejoin_[p].player >= 0 && pending_rejoin_[p].live_at <= f) return true;
    return false;
  }

  void drain_inputs() {
    Frame frame;
    const uint8_t* blob;
    apply_rejoins();
    for (;;) {
      // The next frame of the stream: the lowest one a player still connected waits for (the
      // queue of a player coming back starts at its live frame; one gone stays at its cut).
      Frame want = INT32_MAX;
      PlayerIndex by = 0;
      for (uint32_t p = 0; p < num_players_; ++p) {
        if (driver_.is_disconnected(PlayerIndex(p)) || driver_.last_confirmed(PlayerIndex(p)) + 1 >= want) continue;
        want = driver_.last_confirmed(PlayerIndex(p)) + 1;
        by = PlayerIndex(p);
      }
      if (want == INT32_MAX) want = driver_.last_confirmed(0) + 1;
      if (want > host_.endpoint.last_received_frame() || !driver_.can_accept(by, want)) return;
      if (rejoin_pending(want)) {
        apply_rejoins();
        if (rejoin_pending(want)) return;
      }
      if (!host_.endpoint.pop_input(&frame, &blob)) return;
      for (uint32_t p = 0; p < num_players_; ++p)
        driver_.add_remote_input(PlayerIndex(p), frame, blob + size_t(p) * input_size_);
    }
  }

  RollbackDriver driver_;
  CallGuard guard_;
  Peer host_;
  DecisionExchange decisions_;
  SessionShape shape_;  // ours, to name what differs in a rejected handshake
  Transport* transport_ = nullptr;
  uint32_t num_players_ = 0, input_size_ = 0;
  int32_t catchup_threshold_ = 8, catchup_max_ = 3;
  uint64_t now_ = 0;
  bool started_ = false, running_ = false;
  uint64_t dropped_unknown_address_ = 0;
  uint64_t notify_delay_us_ = 0, progress_timeout_us_ = 0, first_frame_grace_us_ = 0, handshake_timeout_us_ = 0;
  StallWatch stall_;
  SnapshotClient snapshot_;  // a state from the host instead of a replay from frame 0
  RejoinNotice pending_rejoin_[kMaxPlayers];  // per player: a rejoin told, not applied (player -1: none)
  uint8_t datagram_[kReceiveBufferSize];
};

}  // namespace
}  // namespace detail

Result create_spectator_session(const SpectatorConfig& config, std::unique_ptr<P2PSession>* out) {
  return detail::create_session<detail::SpectatorSessionImpl>(config.session, config, out);
}

}  // namespace retcon
