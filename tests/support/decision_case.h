// One match of the decision property (tests/session/decision_property_test.cpp): machines send
// timed decisions at random, some too close (refused), a player may leave; then every machine's
// states are checked against the lockstep reference that applies the accepted decisions, and
// the leaver's disconnect must be named at one frame everywhere. Shared by the property (random
// cases) and the regression tests (cases it once found failing, replayed exactly).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "support/match_harness.h"

namespace retcon::test {

struct DecisionCase {
  MatchOptions options = [] {
    MatchOptions o;
    o.frames = 300;
    o.random_inputs = true;
    return o;
  }();
  bool leave = false;
  uint32_t leaver = 1;
  Frame leave_at = 100;
  std::vector<int> chance;  // per machine: percent chance per frame it decides (empty: 5 for all)
  uint64_t schedule_seed = 1;
};

struct DecisionOutcome {
  std::string failure;  // empty: every check held
  uint64_t accepted = 0, refused_too_close = 0, busy = 0;
  Frame cut = -2;       // the leaver's agreed cut (-2: nobody left)
};

inline DecisionOutcome run_decision_case(DecisionCase c) {
  DecisionOutcome out;
  std::ostringstream why;
  MatchOptions& o = c.options;
  if (c.leave) {
    o.notify_delay_us = 500000;
    o.disconnect_timeout_us = 2500000;
  }
  if (c.chance.empty()) c.chance.assign(o.machines, 5);
  if (std::all_of(c.chance.begin(), c.chance.end(), [](int ch) { return ch == 0; })) c.chance[0] = 5;

  Match match(o);
  if (!match.build()) {
    out.failure = "build failed";
    return out;
  }
  std::mt19937_64 rng(c.schedule_seed);
  match.before_input = [&](uint32_t m) {
    if (!out.failure.empty()) return;
    P2PSession& s = *match.machine(m).session;
    if (s.current_frame() > o.frames - 40 || int(rng() % 100) >= c.chance[m]) return;
    const Frame earliest = s.earliest_decision_frame();
    std::vector<uint8_t> bytes(1 + rng() % 8);
    for (auto& b : bytes) b = uint8_t(rng());
    if (rng() % 5 == 0 && earliest > s.current_frame()) {
      // Too close: refused, and it changes nothing (the reference does not have it).
      Frame told = kNullFrame;
      const Frame f = s.current_frame() + Frame(rng() % uint64_t(earliest - s.current_frame()));
      if (match.send_decision(m, f, bytes, &told) != Result::input_out_of_window || told != earliest)
        out.failure = "a decision too close was not refused with the earliest frame";
      ++out.refused_too_close;
      return;
    }
    const Result r = match.send_decision(m, earliest + Frame(rng() % 20), bytes);
    if (r != Result::ok && r != Result::prediction_limit) out.failure = "send_decision: unexpected result";
    (r == Result::ok ? out.accepted : out.busy)++;
  };

  for (int t = 0; t < 30000 && c.leave; ++t) {
    if (match.machine(c.leaver).session->current_frame() >= c.leave_at) {
      match.machine(c.leaver).stopped = true;
      break;
    }
    match.tick();
  }
  if (!match.run(40000)) why << "the players did not reach frame " << o.frames << "; ";
  for (int i = 0; i < 300; ++i) match.tick();  // spectators catch up
  if (match.errors() != 0) why << match.errors() << " API errors; ";

  std::vector<Frame> cut(match.players(), -2);
  if (c.leave) {
    Frame agreed = -5;
    for (uint32_t m = 0; m < o.machines; ++m) {
      if (m == c.leaver) continue;
      for (const Event& e : match.machine(m).game.events)
        if (e.type == EventType::disconnected && e.player != PlayerIndex(c.leaver))
          why << "machine " << m << " dropped player " << e.player << ", who did not leave; ";
        else if (e.type == EventType::disconnected) {
          if (agreed == -5) agreed = e.frame;
          if (e.frame != agreed)
            why << "machine " << m << " names the leaver's cut " << e.frame << ", another " << agreed << "; ";
        }
    }
    if (agreed == -5) why << "nobody named the leaver's disconnect; ";
    cut[c.leaver] = agreed;
    out.cut = agreed;
  }
  const std::vector<uint64_t> ref = match.reference(cut);
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    if (me.game.frame_errors != 0) why << "machine " << m << ": " << me.game.frame_errors << " frame errors; ";
    if (match.count_events(m, EventType::desync_detected) != 0) why << "machine " << m << " reports a desync; ";
    Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    if (c.leave && m == c.leaver) last = std::min(last, cut[c.leaver] + 1);
    else if (last < (me.spectator ? o.frames / 2 : o.frames))
      why << "machine " << m << (me.spectator ? " (spectator)" : "") << " reached only frame " << last
          << " (confirmed " << me.session->confirmed_frame() << ", current " << me.session->current_frame()
          << "); ";
    // A spectator from a transferred state ran only the frames from the state's on.
    Frame first = 0;
    if (me.spectator && o.state_transfer)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    for (Frame f = first; f <= last; ++f)
      if (me.hashes[size_t(f)] != ref[size_t(f)]) {
        why << "machine " << m << (me.spectator ? " (spectator)" : "") << ": state of frame " << f
            << " differs from the reference; ";
        break;
      }
  }
  if (out.failure.empty()) out.failure = why.str();
  return out;
}

}  // namespace retcon::test
