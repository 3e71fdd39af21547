// Two players of a 4-player match crash and restart (issue 11): both come back, one rejoin after
// the other (a host serves one at a time). Every machine names the same cut and the same live
// frame for each, and every state at every confirmed frame equals the lockstep reference.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "support/liveness_monitor.h"
#include "support/match_harness.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

struct TwoCase {
  uint32_t first, second;  // the machines that crash
  int gap_ticks;           // the second crashes this long after the first restarted
  double loss;
  uint64_t seed;
};

void PrintTo(const TwoCase& c, std::ostream* out) {
  *out << "crash" << c.first << "_and" << c.second << "_gap" << c.gap_ticks << "_loss" << c.loss << "_seed" << c.seed;
}

class RejoinTwoPlayers : public ::testing::TestWithParam<TwoCase> {};

TEST_P(RejoinTwoPlayers, BothComeBackAndEveryMachineAgrees) {
  const TwoCase c = GetParam();
  MatchOptions o;
  o.machines = 4;
  o.frames = 1400;
  o.seed = c.seed;
  o.random_inputs = true;
  o.input_delay = int32_t(c.seed % 3);
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.notify_delay_us = 300000;
  o.link.latency_us = 25000;
  o.link.jitter_us = c.loss > 0 ? 5000 : 0;
  o.link.loss = c.loss;
  Match match(o);
  ASSERT_TRUE(match.build());
  const uint32_t watcher = c.first != 0 && c.second != 0 ? 0 : (c.first != 1 && c.second != 1 ? 1 : 2);
  LivenessMonitor::Limits limits;
  limits.notify_delay_us = o.notify_delay_us;
  limits.disconnect_timeout_us = o.disconnect_timeout_us;
  limits.handshake_timeout_us = o.handshake_timeout_us;
  std::vector<size_t> answered;
  Frame cut_first = kNullFrame, cut_second = kNullFrame;
  if (c.gap_ticks < 0) {
    // Both at once: they crash together, and both restart.
    while (match.machine(watcher).session->current_frame() < 200) match.tick();
    match.machine(c.first).stopped = true;
    match.machine(c.second).stopped = true;
    for (int t = 0; t < 2000 && (seen(match, watcher, PlayerIndex(c.first)).cut == kNullFrame ||
                                 seen(match, watcher, PlayerIndex(c.second)).cut == kNullFrame);
         ++t)
      match.tick();
    cut_first = seen(match, watcher, PlayerIndex(c.first)).cut;
    cut_second = seen(match, watcher, PlayerIndex(c.second)).cut;
    ASSERT_NE(cut_first, kNullFrame);
    ASSERT_NE(cut_second, kNullFrame);
    for (int t = 0; t < 30; ++t) match.tick();
    ASSERT_TRUE(match.restart_rejoining(c.first));
    ASSERT_TRUE(match.restart_rejoining(c.second));
  } else {
    cut_first = crash_and_restart(match, c.first, 200, watcher);
    for (int t = 0; t < c.gap_ticks; ++t) {
      match.tick();
      answer_requests(match, answered, true);
    }
    match.machine(c.second).stopped = true;
    for (int t = 0; t < 2000 && seen(match, watcher, PlayerIndex(c.second)).cut == kNullFrame; ++t) {
      match.tick();
      answer_requests(match, answered, true);
    }
    cut_second = seen(match, watcher, PlayerIndex(c.second)).cut;
    ASSERT_NE(cut_second, kNullFrame);
    for (int t = 0; t < 30; ++t) {
      match.tick();
      answer_requests(match, answered, true);
    }
    ASSERT_TRUE(match.restart_rejoining(c.second));
  }
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < 4000; ++t) {
    match.tick();
    monitor.observe();
    answer_requests(match, answered, true);
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m)
      if (match.machine(m).session->confirmed_frame() < o.frames) done = false;
    if (done) break;
  }
  EXPECT_EQ(monitor.violation(), "");
  std::vector<Frame> cuts(4, -2), lives(4, -2);
  for (const uint32_t p : {c.first, c.second}) {
    const Seen back = seen(match, p, PlayerIndex(p));
    cuts[p] = p == c.first ? cut_first : cut_second;
    lives[p] = back.rejoining;
  }
  for (const uint32_t p : {c.first, c.second}) {
    SCOPED_TRACE("player " + std::to_string(p));
    const Seen back = seen(match, p, PlayerIndex(p));
    ASSERT_NE(back.rejoining, kNullFrame) << "it came back";
    EXPECT_EQ(back.rejoined, back.rejoining);
    for (uint32_t m = 0; m < match.size(); ++m) {
      if (m == p) continue;
      SCOPED_TRACE("machine " + std::to_string(m));
      const Seen s = seen(match, m, PlayerIndex(p));
      EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u);
      // The other rejoiner took player p's status from its state: when its own live frame came
      // after p's, p was back already (it hears nothing of it); before, it saw p come back.
      const bool other = m == c.first || m == c.second;
      if (other && lives[m] > back.rejoining) {
        EXPECT_EQ(s.rejoining, kNullFrame);
        continue;
      }
      if (!other) {
        EXPECT_EQ(s.cut, cuts[p]) << "the same cut everywhere";
      }
      EXPECT_EQ(s.rejoining, back.rejoining) << "the same live frame everywhere";
      EXPECT_EQ(s.rejoined, back.rejoining);
    }
  }
  expect_states_agree(match, match.reference(cuts, lives), o.frames);
  EXPECT_EQ(match.errors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Matches, RejoinTwoPlayers,
                         ::testing::Values(TwoCase{2, 3, -1, 0.0, 1}, TwoCase{1, 3, -1, 0.0, 2},
                                           TwoCase{0, 3, -1, 0.0, 3}, TwoCase{2, 3, -1, 0.03, 4},
                                           TwoCase{2, 3, 40, 0.0, 5}, TwoCase{1, 2, 40, 0.03, 9},
                                           TwoCase{3, 1, 200, 0.0, 6},
                                           TwoCase{0, 2, 60, 0.03, 7}, TwoCase{2, 0, 60, 0.0, 8}));

}  // namespace
}  // namespace retcon::test
