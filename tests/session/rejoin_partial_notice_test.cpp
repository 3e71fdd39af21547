// The host of a rejoin dying after its notice reached only some machines (issue 11, four or more
// machines): one survivor applied the rejoin (the player disconnected up to T - 1, live from T),
// another never heard of it. The rejoiner, whose state stopped arriving, gives up; the survivors
// must still name one cut of the player and of the host and play on. Before, the one with the
// notice cut the player again at T - 1 and waited for ever for the other's report of that cut:
// the other's report (its old cut) was old news to it, and the other never learnt of T.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "support/liveness_monitor.h"
#include "support/match_harness.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

struct PartialCase {
  bool slow_state;  // the state takes seconds (the rejoiner gives up when its host dies)
  double loss;
  uint64_t seed;
  bool after_load = false;  // the host dies once the rejoiner loaded its state (it may come back)
};

void PrintTo(const PartialCase& c, std::ostream* out) {
  *out << (c.slow_state ? "slow_state" : "small_state") << "_loss" << c.loss << "_seed" << c.seed
       << (c.after_load ? "_after_load" : "");
}

class RejoinNoticeReachedSome : public ::testing::TestWithParam<PartialCase> {};

// Four machines; player 3 crashes and comes back with machine 0 as its host. Machine 0's notice
// reaches machine 1 but not machine 2 (what 0 sends 2 is lost from the stamp on), then machine 0
// dies (at once, or once the rejoiner loaded its state: then it comes back). Machines 1 and 2
// cut the host at one frame, name one cut of player 3 (and the rejoiner, when back, the same
// host cut and live frame), play to the end, and every state equals the reference; no stall
// goes untold (liveness monitor); the survivors never drop each other. Each case fails on the
// old code (the two survivors drop each other, or machine 2 runs player 3 disconnected where the
// others have it live).
TEST_P(RejoinNoticeReachedSome, TheSurvivorsAgreeAndPlayOn) {
  const PartialCase c = GetParam();
  MatchOptions o = slow_transfer_rejoin_options(1000);
  o.machines = 4;
  o.seed = c.seed;
  o.random_inputs = true;
  o.link.loss = c.loss;
  if (!c.slow_state) o.state_padding = 0;
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 3, 150, 0);
  std::vector<size_t> answered;
  // Until the host stamps the rejoin (its own player_rejoining): what it sends machine 2 from
  // then on never arrives (its datagrams wait a tick or more in its simulator's delay line).
  for (int t = 0; t < 1500 && seen(match, 0, 3).rejoining == kNullFrame; ++t) {
    match.tick();
    answer_requests(match, answered, true);
  }
  const Frame live = seen(match, 0, 3).rejoining;
  ASSERT_NE(live, kNullFrame) << "the host stamped the rejoin";
  match.block(0, 2);
  for (int t = 0; t < 600 && seen(match, 1, 3).rejoining == kNullFrame; ++t) match.tick();
  ASSERT_EQ(seen(match, 1, 3).rejoining, live) << "machine 1 had the notice";
  ASSERT_EQ(seen(match, 2, 3).rejoining, kNullFrame) << "machine 2 did not";
  for (int t = 0; c.after_load && t < 600 && !match.machine(3).session->running(); ++t) match.tick();
  if (c.after_load) {
    ASSERT_TRUE(match.machine(3).session->running()) << "the rejoiner loaded its state";
    for (int t = 0; t < 2; ++t) match.tick();  // it has the host's inputs by then
  }
  match.machine(0).stopped = true;  // the host dies
  LivenessMonitor::Limits limits;
  limits.notify_delay_us = o.notify_delay_us;
  limits.disconnect_timeout_us = o.disconnect_timeout_us;
  limits.handshake_timeout_us = o.handshake_timeout_us;
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < 3000; ++t) {
    match.tick();
    monitor.observe();
    Machine& back = match.machine(3);
    if (!back.stopped && !back.session->running() && match.count_events(3, EventType::cannot_continue) > 0)
      back.stopped = true;  // it gave up
    if (match.machine(1).session->confirmed_frame() >= o.frames && match.machine(2).session->confirmed_frame() >= o.frames &&
        (back.stopped || back.session->confirmed_frame() >= o.frames))
      break;
  }
  EXPECT_EQ(monitor.violation(), "");
  for (uint32_t m : {1u, 2u}) EXPECT_GE(match.machine(m).session->confirmed_frame(), o.frames) << "machine " << m << " plays on";
  const Seen host1 = seen(match, 1, 0), host2 = seen(match, 2, 0);
  ASSERT_NE(host1.cut, kNullFrame);
  EXPECT_EQ(host1.cut, host2.cut) << "one cut of the host";
  // Player 3: the same events on both survivors (its first cut, and what became of the rejoin).
  auto cuts_of = [&](uint32_t m) {
    std::vector<Frame> v;
    for (const Event& e : match.machine(m).game.events)
      if (e.type == EventType::disconnected && e.player == 3) v.push_back(e.frame);
    return v;
  };
  EXPECT_EQ(cuts_of(1), cuts_of(2)) << "one cut of player 3";
  for (uint32_t m : {1u, 2u})
    for (const Event& e : match.machine(m).game.events)
      EXPECT_FALSE(e.type == EventType::disconnected && (e.player == 1 || e.player == 2))
          << "machine " << m << " dropped survivor " << e.player << " at frame " << e.frame;
  EXPECT_EQ(cuts_of(1).front(), cut);
  EXPECT_EQ(seen(match, 1, 3).rejoining, seen(match, 2, 3).rejoining);
  const bool back = !match.machine(3).stopped;
  EXPECT_EQ(seen(match, 1, 3).rejoined, back ? live : kNullFrame);
  EXPECT_EQ(seen(match, 2, 3).rejoined, back ? live : kNullFrame);
  if (back) {
    EXPECT_EQ(seen(match, 3, 0).cut, host1.cut) << "the rejoiner names the host's cut too";
  }
  if (!back) {
    EXPECT_EQ(match.count_events(3, EventType::cannot_continue), 1u) << "the rejoiner is told";
  }
  match.machine(0).stopped = true;
  std::vector<Frame> cuts = {host1.cut, -2, -2, cut}, lives(4, -2);
  if (back) lives[3] = live;
  expect_states_agree(match, match.reference(cuts, lives), o.frames);
  EXPECT_EQ(match.errors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Cases, RejoinNoticeReachedSome,
                         ::testing::Values(PartialCase{true, 0.0, 1}, PartialCase{true, 0.0, 2},
                                           PartialCase{true, 0.03, 3}, PartialCase{false, 0.0, 1},
                                           PartialCase{false, 0.03, 2}, PartialCase{false, 0.0, 3, true},
                                           PartialCase{false, 0.0, 4, true}, PartialCase{false, 0.03, 5, true},
                                           // The rejoiner's machine cut at T - 1 while the survivors were more than
                                           // 256 frames before T: the other survivor dropped every datagram that
                                           // told it so (a cut too far ahead), then dropped its sender.
                                           PartialCase{true, 0.03, 9}, PartialCase{true, 0.03, 10},
                                           PartialCase{true, 0.03, 13}, PartialCase{true, 0.03, 14},
                                           PartialCase{true, 0.03, 18}, PartialCase{true, 0.03, 19}));

}  // namespace
}  // namespace retcon::test
