// An in-process fighter match on a virtual clock (see fighter_match.h).
#include "fighter_match.h"

#include <algorithm>

namespace retcon::tools {

retcon::Result FighterMatch::build() {
  if (opt_.players < fighter::kMinPlayers || opt_.players > fighter::kMaxPlayers || opt_.spectators < 0 ||
      opt_.spectators > kMaxSpectators || opt_.frames < 1)
    return Result::invalid_argument;
  const int total = opt_.players + opt_.spectators;
  for (int m = 0; m < total; ++m) {
    auto machine = std::make_unique<Machine>();
    machine->wire = net_.add_endpoint();
    machine->sim = std::make_unique<NetworkSimulator>(*machine->wire, opt_.seed * 7919 + uint64_t(m));
    machine->sim->set_outgoing(opt_.link);
    machine->peer = std::make_unique<fighter::FighterPeer>();
    machines_.push_back(std::move(machine));
  }
  for (int m = 0; m < total; ++m) {
    Machine& me = *machines_[size_t(m)];
    fighter::PeerSetup s;
    s.players = opt_.players;
    s.local_player = m < opt_.players ? m : -1;
    s.game_seed = uint32_t(opt_.seed);
    s.bot_seed = uint32_t(opt_.seed * 7919u + uint32_t(m));
    s.transport = me.sim.get();
    for (int p = 0; p < opt_.players; ++p) s.addresses[p] = machines_[size_t(p)]->wire->address();
    if (m == 0)
      for (int k = 0; k < opt_.spectators; ++k) s.spectators.push_back(machines_[size_t(opt_.players + k)]->wire->address());
    s.host = machines_[0]->wire->address();
    s.rng_seed = opt_.seed * 31 + uint64_t(m);
    s.max_prediction = opt_.max_prediction;
    s.input_delay = opt_.input_delay;
    s.checksum_interval = opt_.checksum_interval;
    s.store_states = opt_.store_states;
    if (m == opt_.players - 1) s.diverge_at = opt_.diverge_at;
    if (Result r = me.peer->start(s); r != Result::ok) return r;
  }
  return Result::ok;
}

bool FighterMatch::finished() const {
  for (const auto& m : machines_) {
    const fighter::FighterPeer& p = *m->peer;
    if (p.errors() != 0 || p.recorder().error() != Result::ok) return true;  // it cannot get there
    if (p.recorder().recorded_frames() <= opt_.frames) return false;
  }
  return true;
}

namespace {

bool link_dark(const LinkProfile& p, uint64_t now) {
  for (const BlackoutWindow& w : p.blackouts)
    if (now >= w.start_us && now < w.end_us) return true;
  return p.blackout_period_us != 0 && p.blackout_duration_us != 0 && now >= p.blackout_offset_us &&
         (now - p.blackout_offset_us) % p.blackout_period_us < p.blackout_duration_us;
}

}  // namespace

bool FighterMatch::tick() {
  // Between two frames every machine receives (and acknowledges, and echoes) every 2 ms, as
  // fighter_net does: datagrams then wait at most 2 ms for a poll instead of a whole frame, so
  // the ping measured is the link's, not the tick's.
  for (uint64_t t = now_ + kPollUs; opt_.poll_between && t < now_ + kTickUs; t += kPollUs)
    for (auto& mp : machines_) {
      mp->sim->set_time(t);
      mp->peer->poll(t);
    }
  now_ += kTickUs;
  ++ticks_;
  const bool dark = link_dark(opt_.link, now_);
  const bool blackout_ended = was_dark_ && !dark;
  was_dark_ = dark;
  for (auto& mp : machines_) {
    Machine& m = *mp;
    m.sim->set_time(now_);
    const fighter::PeerTick t = m.peer->tick(now_, opt_.frames);
    if (t.rollback_frames > 0) {
      ++m.totals.rollbacks;
      m.totals.frames_resimulated += t.rollback_frames;
      m.totals.max_depth = std::max(m.totals.max_depth, t.rollback_frames);
      m.window.rollbacks += 1;
      m.window.max_depth = std::max(m.window.max_depth, double(t.rollback_frames));
    }
    if (t.stalled) {
      ++m.totals.stalls;
      m.window.stalls += 1;
    }
    if (t.waited) {
      ++m.totals.waits;
      m.window.waits += 1;
    }
    if (dark) m.window.dark += 1.0 / double(opt_.sample_ticks);
    if (t.advanced) ++m.totals.frames_advanced;
    if (t.caught_up) ++m.totals.frames_advanced;
    // Settled play: after the first seconds, until the match's last frame (a machine that
    // reached it stops advancing, and the other then waits for nobody: not play).
    if (ticks_ > opt_.settle_ticks && m.peer->running() && !m.peer->spectator() &&
        m.peer->session().current_frame() <= opt_.frames) {
      ++m.totals.ticks_settled;
      m.totals.stalls_settled += t.stalled;
      m.totals.waits_settled += t.waited;
    }
    // Recovery: from the end of a blackout until 30 ticks in a row advanced.
    if (blackout_ended && m.peer->running()) {
      m.recovering = true;
      m.recovery_start = ticks_;
      m.normal_run = 0;
    }
    if (m.recovering) {
      m.normal_run = t.advanced ? m.normal_run + 1 : 0;
      if (m.normal_run >= 30 || dark) {
        const uint64_t took = ticks_ - m.recovery_start - m.normal_run + 1;
        m.recovering = false;
        if (!dark) {
          ++m.totals.recoveries;
          m.totals.recovery_ticks_sum += took;
          m.totals.recovery_ticks_max = std::max(m.totals.recovery_ticks_max, took);
        }
      }
    }
    if (m.peer->running() && !m.peer->spectator()) {
      m.totals.ping_sum_us += m.peer->ping_us();
      ++m.totals.ping_samples;
    }
  }
  if (machines_.size() >= 2 && peer(0).running() && peer(1).running() && !peer(1).spectator()) {
    const int64_t d = int64_t(peer(0).session().current_frame()) - int64_t(peer(1).session().current_frame());
    skew_sum_ += uint64_t(d < 0 ? -d : d);
    ++skew_ticks_;
  }
  if (ticks_ % opt_.sample_ticks == 0) sample();
  return finished();
}

void FighterMatch::sample() {
  const double seconds = double(opt_.sample_ticks * kTickUs) / 1e6;
  times_.push_back(double(now_) / 1e6);
  for (auto& mp : machines_) {
    Machine& m = *mp;
    MachineSample s = m.window;
    s.ping_ms = double(m.peer->ping_us()) / 1000.0;
    s.advantage = m.peer->frame_advantage();
    const uint64_t sent = m.peer->bytes_sent(), received = m.peer->bytes_received();
    s.sent_bps = double(sent - m.window_sent) / seconds;
    s.received_bps = double(received - m.window_received) / seconds;
    s.frame = m.peer->running() ? m.peer->session().current_frame() : 0;
    m.window_sent = sent;
    m.window_received = received;
    m.samples.push_back(s);
    m.window = MachineSample{};
  }
}

}  // namespace retcon::tools
