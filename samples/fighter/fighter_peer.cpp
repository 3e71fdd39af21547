// Fighter over the network: FighterPeer (see fighter_peer.h).
#include "fighter_peer.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace fighter {

retcon::Result FighterPeer::start(const PeerSetup& setup) {
  if (setup.players < kMinPlayers || setup.players > kMaxPlayers || setup.transport == nullptr ||
      setup.local_player >= setup.players)
    return retcon::Result::invalid_argument;
  setup_ = setup;
  game_.reset(setup.players, setup.game_seed);
  game_.state().decided_round_end = setup.decided_round_end ? 1 : 0;
  input_delay_ = setup.input_delay;
  if (setup.checksum_frame >= 0) checksum_state_.assign(FighterGame::state_size(), 0);
  if (setup.local_player >= 0) bot_ = std::make_unique<FighterBot>(setup.bot_seed, setup.local_player);

  retcon::ReplayRecorderConfig rc;
  rc.num_players = uint32_t(setup.players);
  rc.input_size = kInputSize;
  rc.max_state_size = FighterGame::state_size();
  rc.checksum_interval = setup.checksum_interval;
  rc.store_states = setup.store_states;
  // The user data recreates the starting state: player count and game seed.
  rc.user_data = {uint8_t(setup.players), uint8_t(setup.game_seed), uint8_t(setup.game_seed >> 8),
                  uint8_t(setup.game_seed >> 16), uint8_t(setup.game_seed >> 24)};
  if (setup.decided_round_end) rc.user_data.push_back(1);  // the round-end mode (fighter_module)
  if (retcon::Result r = recorder_.init(rc, retcon::bind_game(hooked_)); r != retcon::Result::ok) return r;

  retcon::SessionConfig s;
  s.num_players = uint32_t(setup.players);
  s.input_size = kInputSize;
  s.max_prediction = setup.max_prediction;
  s.max_state_size = FighterGame::state_size();
  s.callbacks = recorder_.callbacks();
  retcon::NetworkConfig n;
  n.transport = setup.transport;
  n.rng_seed = setup.rng_seed;
  n.disconnect_timeout_us = setup.disconnect_timeout_us;
  n.state_transfer = setup.state_transfer || setup.rejoining;
  if (setup.local_player < 0) {
    retcon::SpectatorConfig c;
    c.session = s;
    c.network = n;
    c.host = setup.host;
    return retcon::create_spectator_session(c, &session_);
  }
  retcon::P2PConfig c;
  c.session = s;
  c.network = n;
  for (int p = 0; p < setup.players; ++p) {
    c.players[p].kind = p == setup.local_player ? retcon::PlayerKind::local : retcon::PlayerKind::remote;
    c.players[p].address = setup.addresses[p];
  }
  c.adaptive_delay = setup.adaptive_delay;
  c.share_desync_states = setup.share_desync_states;
  c.allow_rejoin = setup.allow_rejoin;
  c.rejoining = setup.rejoining;
  if (setup.spectators.size() > size_t(retcon::kMaxSpectators)) return retcon::Result::invalid_argument;
  c.num_spectators = uint32_t(setup.spectators.size());
  for (size_t k = 0; k < setup.spectators.size(); ++k) c.spectators[k] = setup.spectators[k];
  if (retcon::Result r = retcon::create_p2p_session(c, &session_); r != retcon::Result::ok) return r;
  if (setup.input_delay > 0) session_->set_input_delay(setup.local_player, setup.input_delay);
  return retcon::Result::ok;
}

PeerTick FighterPeer::tick(uint64_t now_us, retcon::Frame last_frame) {
  PeerTick out;
  if (!session_) return out;
  session_->poll(now_us);
  answer_rejoin_requests();
  if (!session_->running()) return out;
  if (!noted_running_) {
    noted_running_ = true;
    note("synchronized: the match runs%s", spectator() || setup_.rejoining ? " (waiting for a state to start from)" : "");
  }
  // Past the last frame plus a prediction window the match is over here: only poll, so peers
  // can still confirm. (Frames just after it still run: a rollback that corrects frames up to
  // it happens inside advance_frame.)
  if (past_last(last_frame)) return out;
  // Time sync: when this machine runs ahead of a peer, skip a tick now and then (should_wait
  // spreads the advised frames over ticks that advance in between) so the peer catches up.
  if (session_->should_wait()) {
    ++waits_;
    out.waited = true;
    return out;
  }
  const uint64_t resimulated = session_->stats().frames_resimulated;
  const retcon::Result a = run_frame();
  if (a == retcon::Result::ok) {
    out.advanced = true;
    // Frames lost to a stall (a blackout) are run again, one extra frame now and then.
    if (session_->should_catch_up() && session_->current_frame() <= last_frame + 2 * setup_.max_prediction + 30 &&
        run_frame() == retcon::Result::ok)
      out.caught_up = true;
  } else if (a == retcon::Result::prediction_limit) {
    ++stalls_;
    out.stalled = true;
  } else {
    ++errors_;
  }
  out.rollback_frames = uint32_t(session_->stats().frames_resimulated - resimulated);
  return out;
}

retcon::Result FighterPeer::run_frame() {
  const retcon::Frame frame = session_->current_frame();
  if (!spectator() && input_given_for_ != frame) {
    uint8_t in[kInputSize];
    write_input(manual_ ? manual_bits_ : bot_->next_input(game_.state()), in);
    const retcon::Result r = session_->add_local_input(setup_.local_player, in, kInputSize);
    if (r != retcon::Result::ok && r != retcon::Result::input_already_added) ++errors_;
    input_given_for_ = frame;
  }
  const bool started = started_at_ != retcon::kNullFrame;
  const retcon::Result a = session_->advance_frame();
  if (!started && started_at_ != retcon::kNullFrame) note_started();
  // Frames up to the confirmed one are final now: every correction was re-simulated above.
  recorder_.commit(session_->confirmed_frame());
  // As the recorder's: the latest simulation of the frame counts once the frame is confirmed.
  if (own_checksum_taken_ && session_->confirmed_frame() >= setup_.checksum_frame) own_checksum_final_ = true;
  decide_round_end();
  return a;
}

int FighterPeer::deciding_player() const {
  for (int p = 0; p < setup_.players; ++p)
    if (!gone_[p]) return p;
  return -1;
}

// The deciding machine (deciding_player()) ends a round once its end condition holds on a
// confirmed frame: a timed decision for the earliest frame every machine can still take, then
// (adaptive delay) the delay for the next round, applied during the round-over pause.
void FighterPeer::decide_round_end() {
  const FighterState& s = game_.state();
  if (!setup_.decided_round_end || spectator() || setup_.local_player != deciding_player() || s.phase != kPhaseFight ||
      s.round_end_due_frame == 0 ||
      session_->confirmed_frame() < s.round_end_due_frame || (decided_round_ == s.round && decided_match_ == s.match))
    return;
  const uint8_t decision[kRoundEndDecisionSize] = {kDecisionRoundEnd, uint8_t(s.round), uint8_t(s.match)};
  if (session_->send_decision(decision, sizeof decision, session_->earliest_decision_frame(), nullptr) !=
      retcon::Result::ok)
    return;  // in-flight limit: again next tick
  decided_round_ = s.round;
  decided_match_ = s.match;
  ++rounds_decided_;
  if (setup_.adaptive_delay) session_->between_rounds();
}

void FighterPeer::on_event(const retcon::Event& e) {
  switch (e.type) {
    case retcon::EventType::input_delay_applied:
      input_delay_ = e.count;
      delays_applied_.push_back({retcon::Frame(e.checksum_remote), e.count});
      break;
    case retcon::EventType::late_inputs:
      late_player_ = e.player;
      late_frames_ = e.count;
      late_at_ = e.frame;
      break;
    case retcon::EventType::desync_detected:
      if (desyncs_++ == 0) first_desync_ = e.frame;
      note("desync detected with player %d at frame %d", int(e.player), int(e.frame));
      break;
    case retcon::EventType::desync_states: {
      // Both machines' states of the desync frame: name the fields that differ.
      FighterState mine{}, theirs{};
      if (!desync_diff_.empty() || e.state_local_len != sizeof mine || e.state_remote_len != sizeof theirs) break;
      std::memcpy(&mine, e.state_local, sizeof mine);
      std::memcpy(&theirs, e.state_remote, sizeof theirs);
      desync_diff_frame_ = e.frame;
      const retcon::TextSink sink{&desync_diff_, [](void* ctx, const char* text, size_t length) {
                                    static_cast<std::string*>(ctx)->append(text, length);
                                  }};
      if (fighter_diff(mine, theirs, sink) == 0) desync_diff_ = "(the states are equal)\n";
      break;
    }
    case retcon::EventType::connection_interrupted: ++interruptions_; break;
    case retcon::EventType::disconnected:
      ++disconnects_;
      if (e.player >= 0 && e.player < kMaxPlayers) gone_[e.player] = true;
      note("player %d disconnected (its last frame %d, the same on every machine)", int(e.player), int(e.frame));
      break;
    case retcon::EventType::rejoin_requested: {
      // Answered after the poll (the session does not take calls from inside its callbacks).
      retcon::PeerAddress from;
      char text[64] = "?";
      if (retcon::PeerAddress::from_bytes(reinterpret_cast<const uint8_t*>(e.text_local), e.text_local_len, &from))
        retcon::format_ip_address(from, text, sizeof text);
      note("player %d asks to rejoin from %s (its last frame %d): %s", int(e.player), text, int(e.frame),
           setup_.allow_rejoin ? "accepting" : "refusing");
      if (e.player >= 0 && e.player < kMaxPlayers) rejoin_asked_[e.player] = true;
      break;
    }
    case retcon::EventType::player_rejoining:
      if (rejoined_at_ == retcon::kNullFrame) rejoined_at_ = e.frame;
      note("player %d rejoining: disconnected up to frame %d, live again from frame %d", int(e.player),
           int(e.frame) - 1, int(e.frame));
      break;
    case retcon::EventType::player_rejoined:
      rejoin_confirmed_ = rejoin_confirmed_ || e.frame == rejoined_at_;
      if (e.player >= 0 && e.player < kMaxPlayers) gone_[e.player] = false;
      note("player %d rejoined: its input of frame %d is confirmed, it plays again", int(e.player), int(e.frame));
      break;
    case retcon::EventType::rejoin_refused:
      note("player %d's machine refused our rejoin", int(e.player));
      break;
    case retcon::EventType::spectator_joined:
      ++spectators_joined_;
      note("spectator joined");
      break;
    case retcon::EventType::spectator_left: note("spectator left"); break;
    case retcon::EventType::cannot_continue: note("cannot continue: %s", e.message); break;
    case retcon::EventType::handshake_rejected:
      note("handshake rejected: %s", e.message);
      break;
    default: break;
  }
}

bool FighterPeer::confirmed_checksum(retcon::Frame frame, uint64_t* out) const {
  if (const retcon::ReplayCheckpoint* c = recorder_.replay().checkpoint(frame)) {
    *out = c->checksum;
    return true;
  }
  if (frame != setup_.checksum_frame || !own_checksum_final_) return false;
  *out = own_checksum_;
  return true;
}

void FighterPeer::take_checksum(retcon::Frame frame) {
  const size_t n = game_.save_state(frame, checksum_state_.data(), checksum_state_.size());
  if (n == 0 || n > checksum_state_.size()) return;
  own_checksum_ = game_.checksum(frame, checksum_state_.data(), n);
  own_checksum_taken_ = true;
}

void FighterPeer::answer_rejoin_requests() {
  for (int p = 0; p < setup_.players; ++p) {
    if (!rejoin_asked_[p]) continue;
    rejoin_asked_[p] = false;
    if (session_->answer_rejoin(p, setup_.allow_rejoin) != retcon::Result::ok) ++errors_;
  }
}

// The first frame simulated: 0, or a transferred state's.
void FighterPeer::note_started() {
  if (started_at_ > 0)
    note("playing from frame %d (a state sent by %s)", int(started_at_), spectator() ? "the host" : "a player machine");
  else
    note("playing from frame 0");
}

void FighterPeer::note(const char* format, ...) {
  if (setup_.note == nullptr) return;
  char line[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  setup_.note(setup_.note_context, line);
}

uint64_t FighterPeer::ping_us() const {
  if (!session_ || spectator()) {
    retcon::PeerStats s{};
    return session_ && session_->peer_stats(0, &s) == retcon::Result::ok ? s.ping_us : 0;
  }
  uint64_t sum = 0, n = 0;
  for (int p = 0; p < setup_.players; ++p) {
    if (p == setup_.local_player) continue;
    retcon::PeerStats s{};
    if (session_->peer_stats(p, &s) == retcon::Result::ok) {
      sum += s.ping_us;
      ++n;
    }
  }
  return n ? sum / n : 0;
}

int32_t FighterPeer::frame_advantage() const {
  if (!session_) return 0;
  for (int p = 0; p < setup_.players; ++p) {
    if (p == setup_.local_player) continue;
    retcon::PeerStats s{};
    if (session_->peer_stats(p, &s) == retcon::Result::ok) return s.local_frames_ahead;
  }
  return 0;
}

uint64_t FighterPeer::bytes_sent() const {
  if (!session_) return 0;
  uint64_t sum = 0;
  retcon::PeerStats s{};
  if (spectator()) return session_->peer_stats(0, &s) == retcon::Result::ok ? s.bytes_sent : 0;
  // Players sharing a machine share one peer: count each machine once (one player each here).
  for (int p = 0; p < setup_.players; ++p)
    if (p != setup_.local_player && session_->peer_stats(p, &s) == retcon::Result::ok) sum += s.bytes_sent;
  for (uint32_t k = 0; session_->spectator_stats(k, &s) == retcon::Result::ok; ++k) sum += s.bytes_sent;
  return sum;
}

uint64_t FighterPeer::bytes_received() const {
  if (!session_) return 0;
  uint64_t sum = 0;
  retcon::PeerStats s{};
  if (spectator()) return session_->peer_stats(0, &s) == retcon::Result::ok ? s.bytes_received : 0;
  for (int p = 0; p < setup_.players; ++p)
    if (p != setup_.local_player && session_->peer_stats(p, &s) == retcon::Result::ok) sum += s.bytes_received;
  for (uint32_t k = 0; session_->spectator_stats(k, &s) == retcon::Result::ok; ++k) sum += s.bytes_received;
  return sum;
}

}  // namespace fighter
