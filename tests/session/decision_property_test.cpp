// Property: for random schedules (latency 0-250 ms RTT, jitter, loss up to 25%, duplicates,
// reordering, blackouts; 2-4 players, 0-2 spectators, any prediction window, input delay and save
// mode, spectators joining late from a transferred state; decisions from random machines at random
// times, some stamped too close and refused; a player that may leave), every machine and spectator
// applies every accepted decision on the frame it names, once, in the same order: every state at
// every confirmed frame equals the lockstep reference that applies the decisions there (a decision
// of a player cut before its frame applies nowhere), and no desync is reported.
//
// The cases RapidCheck once found failing are replayed as plain tests in
// decision_regression_test.cpp (decision_case.h runs one case; the property draws them), which
// the Windows build runs too.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "support/arbitrary_link.h"
#include "support/decision_case.h"

namespace retcon::test {
namespace {

RC_GTEST_PROP(DecisionProperty, EveryMachineAppliesEveryDecisionOnItsFrame, ()) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.spectators = *rc::gen::inRange(0u, 3u);
  // Spectators may join late, from the host's state (issue 11) or replaying from frame 0.
  o.state_transfer = *rc::gen::arbitrary<bool>();
  for (uint32_t k = 0; k < o.spectators; ++k) o.spectator_join.push_back(*rc::gen::element(0, 0, 60, 180));
  o.input_size = *rc::gen::inRange(1u, 5u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.save_mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  o.link = arbitrary_link(4000);
  c.leave = *rc::gen::inRange(0, 4) == 0 && o.machines > 2;
  c.leaver = *rc::gen::inRange(1u, o.machines);
  c.leave_at = *rc::gen::inRange(60, 250);
  // Per machine: the chance per frame it decides something (some machines never do).
  c.chance.resize(o.machines);
  for (auto& ch : c.chance) ch = *rc::gen::element(0, 0, 2, 5, 10);
  c.schedule_seed = *rc::gen::arbitrary<uint64_t>();

  const DecisionOutcome out = run_decision_case(c);
  RC_LOG() << out.failure << "\n";
  RC_ASSERT(out.failure.empty());
  RC_CLASSIFY(out.accepted > 3, "more than 3 decisions");
  RC_CLASSIFY(out.refused_too_close > 0, "a decision refused as too close");
  RC_CLASSIFY(out.busy > 0, "in-flight limit reached");
  RC_CLASSIFY(o.spectators > 0, "spectators");
  RC_CLASSIFY(o.spectators > 0 && o.state_transfer, "spectators with state transfer");
  RC_CLASSIFY(c.leave, "a player left");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
}

}  // namespace
}  // namespace retcon::test
