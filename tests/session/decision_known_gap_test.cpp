// An open gap the decision property found (label known_gap: scripts/test runs it without
// gating; it passes once the gap is fixed, and then belongs in decision_regression_test.cpp).
//
// Lockstep (max_prediction 0), 20% loss, 4 machines, player 2's machine leaves at frame 97. Its
// last input (frame 96) reached machines 1 and 3 but not machine 0, which waits for it at frame
// 96; machines 1 and 3 wait for machine 0's input of frame 97, which it cannot make. Every
// machine's frames stop at once, and machines 1 and 3 blame player 0 (the lowest confirmed
// player still connected, tied with player 2 at frame 96) while machine 0 blames player 2: after
// the disconnect timeout they drop each other and the match splits. Not a decision matter (no
// decision hold is involved): the liveness rule (P2PSessionImpl::awaited_player, issue 9) takes a
// machine that is alive and waiting for the leaver for frozen. Together with the start-up case
// below, about one run in 100 of the property fails.
#include <gtest/gtest.h>

#include "support/decision_case.h"

namespace retcon::test {
namespace {

TEST(DecisionKnownGap, ASurvivorWaitingForTheLeaversLastInputIsNotTakenForFrozen) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = 4;
  o.input_size = 1;
  o.max_prediction = 0;
  o.seed = 156941918315664785ull;
  o.desync_interval = 4;
  o.link.latency_us = 80000;
  o.link.jitter_us = 33000;
  o.link.loss = 0.20;
  o.link.duplicate = 0.03;
  o.link.reorder = 0.07;
  c.leave = true;
  c.leaver = 2;
  c.leave_at = 97;
  c.chance = {5, 0, 5, 10};
  c.schedule_seed = 333327499532672046ull;
  const DecisionOutcome out = run_decision_case(c);
  EXPECT_EQ(out.failure, "");
}

// Start-up under 115 ms one way, 16% loss, lockstep, the host (machine 0) with two spectators:
// machine 0's last player handshake completes late, the others wait at frame 0 for its first
// input, and machine 1 drops player 0 (and then everyone) after the 2.5 s disconnect timeout of
// the leave cases, while the others keep player 1 waiting: the match splits at frame 0-1.
// Again liveness (the first-frame grace against a slow handshake, issue 9), not decisions.
TEST(DecisionKnownGap, ASlowFirstHandshakeUnderHeavyLossDoesNotSplitTheMatchAtItsStart) {
  DecisionCase c;
  MatchOptions& o = c.options;
  o.machines = 4;
  o.spectators = 2;
  o.state_transfer = true;
  o.spectator_join = {0, 0};
  o.input_size = 1;
  o.max_prediction = 0;
  o.seed = 4484139086337324679ull;
  o.desync_interval = 1;
  o.link.latency_us = 115000;
  o.link.jitter_us = 36000;
  o.link.loss = 0.16;
  o.link.duplicate = 0.03;
  o.link.reorder = 0.01;
  o.link.blackouts.push_back({3194000, 3194000 + 407000});
  c.leave = true;
  c.leaver = 3;
  c.leave_at = 94;
  c.chance = {2, 5, 10, 2};
  c.schedule_seed = 2382909836505737355ull;
  const DecisionOutcome out = run_decision_case(c);
  EXPECT_EQ(out.failure, "");
}

}  // namespace
}  // namespace retcon::test
