// Property: for random schedules (latency 0-250 ms RTT, jitter, loss up to 25%, duplicates,
// reordering, blackouts; 2-4 players, 0-2 spectators, any prediction window, input delay and save
// mode, spectators joining late from a transferred state; decisions from random machines at random times, some stamped too close and refused; a
// player that may leave), every machine and spectator applies every accepted decision on the
// frame it names, once, in the same order: every state at every confirmed frame equals the
// lockstep reference that applies the decisions there (a decision of a player cut before its
// frame applies nowhere), and no desync is reported.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "support/match_harness.h"

namespace retcon::test {
namespace {

RC_GTEST_PROP(DecisionProperty, EveryMachineAppliesEveryDecisionOnItsFrame, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.spectators = *rc::gen::inRange(0u, 3u);
  // Spectators may join late, from the host's state (issue 11) or replaying from frame 0.
  o.state_transfer = *rc::gen::arbitrary<bool>();
  for (uint32_t k = 0; k < o.spectators; ++k) o.spectator_join.push_back(*rc::gen::element(0, 0, 60, 180));
  o.input_size = *rc::gen::inRange(1u, 5u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.frames = 300;
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.random_inputs = true;
  o.save_mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  o.link.latency_us = uint64_t(*rc::gen::inRange(0, 126)) * 1000;
  o.link.jitter_us = uint64_t(*rc::gen::inRange(0, 51)) * 1000;
  o.link.loss = *rc::gen::inRange(0, 26) / 100.0;
  o.link.duplicate = *rc::gen::inRange(0, 11) / 100.0;
  o.link.reorder = *rc::gen::inRange(0, 11) / 100.0;
  if (*rc::gen::arbitrary<bool>()) {
    const uint64_t start = uint64_t(*rc::gen::inRange(500, 4000)) * 1000;
    o.link.blackouts.push_back({start, start + uint64_t(*rc::gen::inRange(50, 600)) * 1000});
  }
  const bool leave = *rc::gen::inRange(0, 4) == 0 && o.machines > 2;
  const uint32_t leaver = *rc::gen::inRange(1u, o.machines);
  const Frame leave_at = *rc::gen::inRange(60, 250);
  if (leave) {
    o.notify_delay_us = 500000;
    o.disconnect_timeout_us = 2500000;
  }
  // Per machine: the chance per frame it decides something (some machines never do).
  std::vector<int> chance(o.machines);
  for (auto& c : chance) c = *rc::gen::element(0, 0, 2, 5, 10);
  if (std::all_of(chance.begin(), chance.end(), [](int c) { return c == 0; })) chance[0] = 5;
  const uint64_t schedule_seed = *rc::gen::arbitrary<uint64_t>();

  Match match(o);
  RC_ASSERT(match.build());
  std::mt19937_64 rng(schedule_seed);
  uint64_t refused_too_close = 0, accepted = 0, busy = 0;
  match.before_input = [&](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    if (s.current_frame() > o.frames - 40 || int(rng() % 100) >= chance[m]) return;
    const Frame earliest = s.earliest_decision_frame();
    std::vector<uint8_t> bytes(1 + rng() % 8);
    for (auto& b : bytes) b = uint8_t(rng());
    if (rng() % 5 == 0 && earliest > s.current_frame()) {
      // Too close: refused, and it changes nothing (the reference does not have it).
      Frame told = kNullFrame;
      const Frame f = s.current_frame() + Frame(rng() % uint64_t(earliest - s.current_frame()));
      RC_ASSERT(match.send_decision(m, f, bytes, &told) == Result::input_out_of_window);
      RC_ASSERT(told == earliest);
      ++refused_too_close;
      return;
    }
    const Result r = match.send_decision(m, earliest + Frame(rng() % 20), bytes);
    RC_ASSERT(r == Result::ok || r == Result::prediction_limit);
    (r == Result::ok ? accepted : busy)++;
  };

  bool left = false;
  for (int t = 0; t < 30000 && !left && leave; ++t) {
    if (match.machine(leaver).session->current_frame() >= leave_at) {
      match.machine(leaver).stopped = true;
      left = true;
      break;
    }
    match.tick();
  }
  RC_ASSERT(match.run(40000));
  for (int i = 0; i < 300; ++i) match.tick();  // spectators catch up
  RC_ASSERT(match.errors() == 0u);

  std::vector<Frame> cut(match.players(), -2);
  if (leave) {
    Frame agreed = -5;
    for (uint32_t m = 0; m < o.machines; ++m) {
      if (m == leaver) continue;
      for (const Event& e : match.machine(m).game.events)
        if (e.type == EventType::disconnected && e.player == PlayerIndex(leaver)) {
          if (agreed == -5) agreed = e.frame;
          RC_ASSERT(e.frame == agreed);
        }
    }
    RC_ASSERT(agreed != -5);
    cut[leaver] = agreed;
  }
  const std::vector<uint64_t> ref = match.reference(cut);
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    RC_ASSERT(me.game.frame_errors == 0);
    RC_ASSERT(match.count_events(m, EventType::desync_detected) == 0u);
    Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    if (leave && m == leaver) last = std::min(last, cut[leaver] + 1);
    else RC_ASSERT(last >= (me.spectator ? o.frames / 2 : o.frames));
    // A spectator from a transferred state ran only the frames from the state's on.
    Frame first = 0;
    if (me.spectator && o.state_transfer)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    for (Frame f = first; f <= last; ++f) RC_ASSERT(me.hashes[size_t(f)] == ref[size_t(f)]);
  }
  RC_CLASSIFY(accepted > 3, "more than 3 decisions");
  RC_CLASSIFY(refused_too_close > 0, "a decision refused as too close");
  RC_CLASSIFY(busy > 0, "in-flight limit reached");
  RC_CLASSIFY(o.spectators > 0, "spectators");
  RC_CLASSIFY(o.spectators > 0 && o.state_transfer, "spectators with state transfer");
  RC_CLASSIFY(leave, "a player left");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
}

}  // namespace
}  // namespace retcon::test
