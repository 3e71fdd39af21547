// Property: for random schedules (latency 0-250 ms RTT, jitter, loss up to 25%, duplicates,
// reordering, blackouts; 2-4 players, 0-2 spectators, any prediction window, input delay and save
// mode, spectators joining late from a transferred state; decisions from random machines at random
// times, some stamped too close and refused; a player that may leave), every machine and spectator
// applies every accepted decision on the frame it names, once, in the same order: every state at
// every confirmed frame equals the lockstep reference that applies the decisions there (a decision
// of a player cut before its frame applies nowhere), and no desync is reported.
//
// The cases RapidCheck once found failing are replayed as plain tests below (decision_case.h
// runs one case; the property draws them).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

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
  o.link.latency_us = uint64_t(*rc::gen::inRange(0, 126)) * 1000;
  o.link.jitter_us = uint64_t(*rc::gen::inRange(0, 51)) * 1000;
  o.link.loss = *rc::gen::inRange(0, 26) / 100.0;
  o.link.duplicate = *rc::gen::inRange(0, 11) / 100.0;
  o.link.reorder = *rc::gen::inRange(0, 11) / 100.0;
  if (*rc::gen::arbitrary<bool>()) {
    const uint64_t start = uint64_t(*rc::gen::inRange(500, 4000)) * 1000;
    o.link.blackouts.push_back({start, start + uint64_t(*rc::gen::inRange(50, 600)) * 1000});
  }
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

// Found by the property (it failed about one run in ten): machine 2 sent a decision, and
// player 1's machine left before acknowledging it. Machine 2 held its input stream to EVERY peer
// until machine 1 acknowledged (or was dropped), so machine 0 saw machine 2 freeze too; both
// survivors timed out on each other, split the match, and named the leaver's cut at different
// frames (181 vs 182). Each peer's stream now waits only for that peer's acknowledgements.
TEST(DecisionRegression, APeerLeavingWithADecisionUnacknowledgedHoldsBackOnlyItsOwnStream) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = 3;
  o.input_size = 2;
  o.max_prediction = 9;
  o.input_delay = 3;
  o.seed = 3721466726640323800ull;
  o.desync_interval = 9;
  o.link.latency_us = 35000;
  o.link.jitter_us = 23000;
  o.link.loss = 0.10;
  o.link.duplicate = 0.05;
  o.link.blackouts.push_back({1217000, 1217000 + 284000});
  c.leave = true;
  c.leaver = 1;
  c.leave_at = 183;
  c.chance = {5, 0, 5};
  c.schedule_seed = 4212607330613515415ull;
  const DecisionOutcome out = run_decision_case(c);
  EXPECT_EQ(out.failure, "");
  EXPECT_GT(out.accepted, 3u);
  EXPECT_EQ(out.cut, 181);
}

// Found by the property: a spectator that joins at frame 180 (replaying from frame 0, no
// state transfer) had not acknowledged the decision of frame 27 before it came, and the host
// held frame 27 for every spectator until then: the spectator watching from the start saw no
// frame for seconds and gave up. Each spectator now has its own place in the stream.
TEST(DecisionRegression, ASpectatorThatHasNotComeYetHoldsUpNoOtherSpectator) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = 3;
  o.spectators = 2;
  o.spectator_join = {0, 180};
  o.input_size = 1;
  o.max_prediction = 0;
  o.seed = 0;
  o.desync_interval = 1;
  o.link.latency_us = 60000;
  o.link.jitter_us = 7000;
  o.link.loss = 0.07;
  o.link.duplicate = 0.07;
  o.link.reorder = 0.01;
  o.link.blackouts.push_back({3171000, 3171000 + 196000});
  c.leave = true;
  c.leaver = 1;
  c.leave_at = 60;
  c.chance = {0, 5, 0};
  c.schedule_seed = 1;
  const DecisionOutcome out = run_decision_case(c);
  EXPECT_EQ(out.failure, "");
  EXPECT_GT(out.accepted, 3u);
}

// Found by the property: the host forwarded decisions to a spectator that had not come yet
// until its channel's message window was full; when the spectator came and asked for a state,
// the host's "accepted" found no room and was lost. The spectator took the host for one without
// state transfer and waited for frame 0, the host sent the state's frames: it never ran a frame.
// Forwarding now leaves room in the window, and "accepted" is sent again until it goes out.
TEST(DecisionRegression, ASpectatorJoiningFromAStateAfterManyDecisionsIsServed) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = 3;
  o.spectators = 2;
  o.state_transfer = true;
  o.spectator_join = {180, 0};
  o.input_size = 1;
  o.max_prediction = 0;
  o.seed = 0;
  o.desync_interval = 1;
  o.link.jitter_us = 1000;
  o.link.duplicate = 0.02;
  c.leave = true;
  c.leaver = 2;
  c.leave_at = 172;
  c.chance = {10, 2, 5};
  c.schedule_seed = 0;
  const DecisionOutcome out = run_decision_case(c);
  EXPECT_EQ(out.failure, "");
  EXPECT_GT(out.accepted, 32u);  // more than a channel window before the spectator comes
}

}  // namespace
}  // namespace retcon::test
