// Rejoin (issue 11): a player whose machine crashed starts again on another address and comes
// back into the running match. What is checked is what the players notice: the match goes on,
// the rejoined player plays again from a frame every machine names the same, and every machine's
// state at every confirmed frame equals the lockstep reference (the player disconnected from its
// cut up to that frame, live from it). Refused when the game says no; a rejoiner that dies
// mid-transfer leaves the match running; under loss.
#include <gtest/gtest.h>

#include <ostream>

#include "support/match_harness.h"
#include "support/match_keys.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

struct Case {
  uint32_t machines;
  uint32_t crash;
  double loss;
  int32_t delay;
};

// The case as its ctest name's suffix: without it GoogleTest prints the struct's bytes, padding
// included (uninitialised, so the names differed between builds, e.g. Linux and Windows).
void PrintTo(const Case& c, std::ostream* out) {
  *out << "machines" << c.machines << "_crash" << c.crash << "_loss" << c.loss << "_delay" << c.delay;
}

class Rejoin : public ::testing::TestWithParam<Case> {};

TEST_P(Rejoin, ACrashedPlayerComesBackAtOneFrameAndEveryStateAgrees) {
  const Case c = GetParam();
  MatchOptions o;
  o.machines = c.machines;
  o.frames = 1100;
  o.random_inputs = true;
  o.input_delay = c.delay;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.notify_delay_us = 300000;
  o.link.latency_us = 25000;
  o.link.jitter_us = c.loss > 0 ? 5000 : 0;
  o.link.loss = c.loss;
  Match match(o);
  ASSERT_TRUE(match.build());
  const uint32_t watcher = c.crash == 0 ? 1 : 0;
  const Frame cut = crash_and_restart(match, c.crash, 200, watcher);
  std::vector<size_t> answered;
  accept_until_confirmed(match, answered, o.frames, 2500);
  const PlayerIndex p = PlayerIndex(c.crash);
  const Seen back = seen(match, c.crash, p);
  ASSERT_NE(back.rejoining, kNullFrame) << "the rejoiner learnt its live frame";
  EXPECT_EQ(back.rejoined, back.rejoining);
  for (uint32_t m = 0; m < match.size(); ++m) {
    if (m == c.crash) continue;
    const Seen s = seen(match, m, p);
    SCOPED_TRACE("machine " + std::to_string(m));
    EXPECT_EQ(s.cut, cut) << "the same cut everywhere";
    EXPECT_EQ(s.requests, 1u);
    EXPECT_EQ(s.rejoining, back.rejoining) << "the same live frame everywhere";
    EXPECT_EQ(s.rejoined, back.rejoining);
    size_t late = 0;
    for (const Event& e : match.machine(m).game.events)
      late += e.type == EventType::late_inputs && e.player == p;
    EXPECT_EQ(late, 0u) << "coming back is not a lag switch";
    EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u) << "a match that can take it back goes on";
  }
  EXPECT_GT(back.rejoining, cut);
  std::vector<Frame> cuts(c.machines, -2), live(c.machines, -2);
  cuts[c.crash] = cut;
  live[c.crash] = back.rejoining;
  expect_states_agree(match, match.reference(cuts, live), o.frames);
  EXPECT_EQ(match.errors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Matches, Rejoin,
                         ::testing::Values(Case{2, 1, 0.0, 0}, Case{2, 0, 0.0, 2}, Case{3, 2, 0.0, 1},
                                           Case{3, 0, 0.0, 0}, Case{3, 1, 0.05, 2}, Case{2, 1, 0.05, 1}));

// Timed decisions and a delay change made while a player is away or coming back (issue 11):
// some before its machine restarts (their frames before the state, between the state and the
// live frame, and after it), some once the others accepted it, some once the live frame is
// stamped. The rejoiner applies each on the same frame as everyone: every machine's state at
// every confirmed frame equals the reference that applies them, nobody reports a desync (the
// decisions before the state are part of the checksums peers compare), and the delay change is
// applied on one frame everywhere, the rejoiner included.
TEST(RejoinDecisions, EveryDecisionAndDelayChangeReachesTheRejoinerOnItsFrame) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 1100;
  o.random_inputs = true;
  o.input_delay = 1;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.notify_delay_us = 300000;
  o.link.latency_us = 25000;
  Match match(o);
  ASSERT_TRUE(match.build());
  enum class Step { none, away, accepted, stamped, done };
  Step step = Step::none, sent = Step::none;
  uint8_t tag = 0;
  auto decide = [&](uint32_t m, Frame ahead) {
    const Frame earliest = match.machine(m).session->earliest_decision_frame();
    const std::vector<uint8_t> bytes = {uint8_t(0x40 + tag++), uint8_t(m)};
    EXPECT_EQ(match.send_decision(m, earliest + ahead, bytes), Result::ok) << "machine " << m;
  };
  match.before_input = [&](uint32_t m) {
    if (step == sent || m == 2) return;
    if (step == Step::away && m == 1) {
      for (Frame ahead : {0, 20, 45, 80, 200}) decide(1, ahead);
      sent = step;
    } else if (step == Step::accepted && m == 0) {
      decide(0, 0);
      decide(0, 70);
      sent = step;
    } else if (step == Step::stamped && m == 1) {
      decide(1, 0);
      decide(1, 40);
      AdaptiveDelayRule fixed;
      fixed.min_frames = fixed.max_frames = 3;
      DelayChoice c;
      EXPECT_EQ(match.machine(0).session->apply_input_delay(fixed, kNullFrame, &c), Result::ok);
      sent = step;
    }
  };
  const Frame cut = crash_and_restart(match, 2, 200, 0);
  (void)cut;
  // Decisions of a machine while the player is away (the restart happened at once above: the
  // rejoiner is still handshaking).
  step = Step::away;
  std::vector<size_t> answered;
  for (int t = 0; t < 3000; ++t) {
    match.tick();
    if (step == Step::away && sent == Step::away) {
      answer_requests(match, answered, true);
      if (match.count_events(0, EventType::rejoin_requested) > 0 && match.count_events(1, EventType::rejoin_requested) > 0)
        step = Step::accepted;
    }
    if (step == Step::accepted && sent == Step::accepted && seen(match, 0, 2).rejoining != kNullFrame)
      step = Step::stamped;
    if (step == Step::stamped && sent == Step::stamped) step = Step::done;
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m)
      if (match.machine(m).session->confirmed_frame() < o.frames) done = false;
    if (done) break;
  }
  ASSERT_EQ(step, Step::done);
  const Seen back = seen(match, 2, 2);
  ASSERT_NE(back.rejoining, kNullFrame);
  EXPECT_EQ(back.rejoined, back.rejoining);
  // The delay change: one frame everywhere, the rejoiner included.
  std::vector<Frame> applied(3, kNullFrame);
  for (uint32_t m = 0; m < 3; ++m)
    for (const Event& e : match.machine(m).game.events)
      if (e.type == EventType::input_delay_applied) {
        EXPECT_EQ(applied[m], kNullFrame) << "machine " << m << ": applied once";
        EXPECT_EQ(e.count, 3);
        applied[m] = e.frame;
      }
  ASSERT_NE(applied[0], kNullFrame);
  EXPECT_GT(applied[0], back.rejoining - 60) << "made during the rejoin";
  EXPECT_EQ(applied[1], applied[0]);
  EXPECT_EQ(applied[2], applied[0]) << "the rejoiner switches on the same frame";
  match.note_delay_change(applied[0], 3);
  // Some decisions were for frames before the live frame, some after.
  size_t before = 0, after = 0;
  for (const SentDecision& d : match.sent_decisions) (d.frame < back.rejoining ? before : after) += 1;
  EXPECT_GT(before, 2u);
  EXPECT_GT(after, 2u);
  std::vector<Frame> cuts = {-2, -2, seen(match, 0, 2).cut}, live = {-2, -2, back.rejoining};
  expect_states_agree(match, match.reference(cuts, live), o.frames);
  EXPECT_EQ(match.errors(), 0u);
}

// The lone survivor of a two-player match with rejoin allowed: its only opponent crashed, and
// the match is kept alive for it to come back (not "cannot continue", which a game takes as the
// end). The survivor plays on alone for seconds, then the crashed machine rejoins and every
// state agrees. Without a way to host the rejoin (no state transfer here) nothing can come
// back, and the game is told cannot_continue as before.
TEST(RejoinLoneSurvivor, TheMatchWaitsForTheOtherToComeBack) {
  MatchOptions o;
  o.frames = 1200;
  o.random_inputs = true;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.link.latency_us = 20000;
  Match match(o);
  ASSERT_TRUE(match.build());
  while (match.machine(0).session->current_frame() < 150) match.tick();
  match.machine(1).stopped = true;
  for (int t = 0; t < 2000 && seen(match, 0, 1).cut == kNullFrame; ++t) match.tick();
  const Frame cut = seen(match, 0, 1).cut;
  ASSERT_NE(cut, kNullFrame);
  // Alone for 5 s: it plays on, and nobody tells the game the match is over.
  const Frame alone_from = match.machine(0).session->current_frame();
  for (int t = 0; t < 300; ++t) match.tick();
  EXPECT_GE(match.machine(0).session->current_frame(), alone_from + 290);
  EXPECT_EQ(match.count_events(0, EventType::cannot_continue), 0u);
  ASSERT_TRUE(match.restart_rejoining(1));
  std::vector<size_t> answered;
  accept_until_confirmed(match, answered, o.frames, 1500);
  const Seen host = seen(match, 0, 1), back = seen(match, 1, 1);
  ASSERT_NE(back.rejoining, kNullFrame) << "it came back";
  EXPECT_EQ(host.rejoining, back.rejoining);
  EXPECT_EQ(host.rejoined, back.rejoining);
  EXPECT_EQ(match.count_events(0, EventType::cannot_continue), 0u);
  std::vector<Frame> cuts = {-2, cut}, live = {-2, back.rejoining};
  expect_states_agree(match, match.reference(cuts, live), o.frames);
}

TEST(RejoinLoneSurvivor, WithoutStateTransferNothingCanComeBackAndTheGameIsTold) {
  MatchOptions o;
  o.frames = 400;
  o.allow_rejoin = true;  // but no state transfer: this machine cannot host a rejoin
  o.disconnect_timeout_us = 1000000;
  o.link.latency_us = 20000;
  Match match(o);
  ASSERT_TRUE(match.build());
  while (match.machine(0).session->current_frame() < 150) match.tick();
  match.machine(1).stopped = true;
  for (int t = 0; t < 300; ++t) match.tick();
  EXPECT_NE(seen(match, 0, 1).cut, kNullFrame);
  EXPECT_EQ(match.count_events(0, EventType::cannot_continue), 1u);
}

// The game says no: the slot stays disconnected, the match goes on, the rejoiner never runs.
TEST(RejoinRefused, TheMatchGoesOnWithoutIt) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 700;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.handshake_timeout_us = 3000000;
  o.link.latency_us = 20000;
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 2, 150, 0);
  std::vector<size_t> answered;
  for (int t = 0; t < 1500; ++t) {
    match.tick();
    answer_requests(match, answered, false);
  }
  EXPECT_FALSE(match.machine(2).session->running());
  for (uint32_t m = 0; m < 2; ++m) {
    const Seen s = seen(match, m, 2);
    EXPECT_EQ(s.requests, 1u) << "asked once: a refusal stands";
    EXPECT_EQ(s.rejoining, kNullFrame);
    EXPECT_GE(match.machine(m).session->confirmed_frame(), o.frames);
  }
  match.machine(2).stopped = true;
  std::vector<Frame> cuts = {-2, -2, cut};
  expect_states_agree(match, match.reference(cuts), o.frames);
}

// With a match key the rejoiner (a holder of the key) comes back the same way.
TEST(RejoinWithAMatchKey, TheKeyHolderComesBack) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);  // the Windows build has no libsodium
  MatchOptions o;
  o.frames = 800;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.match_key = true;
  o.disconnect_timeout_us = 1000000;
  o.link.latency_us = 20000;
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 1, 150, 0);
  std::vector<size_t> answered;
  accept_until_confirmed(match, answered, o.frames, 1500);
  const Seen host = seen(match, 0, 1), back = seen(match, 1, 1);
  ASSERT_NE(back.rejoining, kNullFrame);
  EXPECT_EQ(host.rejoining, back.rejoining);
  EXPECT_EQ(host.rejoined, back.rejoining);
  std::vector<Frame> cuts = {-2, cut}, live = {-2, back.rejoining};
  expect_states_agree(match, match.reference(cuts, live), o.frames);
}

// Without allow_rejoin the request is a stranger's datagram: dropped and counted, no event.
TEST(RejoinNotAllowed, RequestsAreDroppedAsAStrangersDatagrams) {
  MatchOptions o;
  o.frames = 500;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  Match match(o);
  ASSERT_TRUE(match.build());
  crash_and_restart(match, 1, 150, 0);
  for (int t = 0; t < 400; ++t) match.tick();
  EXPECT_EQ(seen(match, 0, 1).requests, 0u);
  EXPECT_GT(match.machine(0).session->dropped_unknown_address(), 0u);
  EXPECT_FALSE(match.machine(1).session->running());
  EXPECT_GE(match.machine(0).session->current_frame(), 480);
}

// The rejoiner dies again while its (large) state is on the way: the others are not frozen. They
// wait for its first live input at most a disconnect timeout, cut it again at the frame before
// its live frame (the same everywhere), and play on; its input was never live.
TEST(RejoinerDies, MidTransferTheMatchGoesOn) {
  const MatchOptions o = slow_transfer_rejoin_options(1000);
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 1, 150, 0);
  std::vector<size_t> answered;
  const Frame live = accept_until_seen(match, answered, 0, 1, &Seen::rejoining, 1500);
  ASSERT_NE(live, kNullFrame);
  for (int t = 0; t < 60; ++t) match.tick();
  match.machine(1).stopped = true;  // mid-transfer
  EXPECT_FALSE(match.machine(1).session->running()) << "its state had not arrived yet";
  for (int t = 0; t < 2500; ++t) {
    match.tick();
    if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(2).session->confirmed_frame() >= o.frames)
      break;
  }
  for (uint32_t m : {0u, 2u}) {
    SCOPED_TRACE("machine " + std::to_string(m));
    size_t cuts = 0;
    Frame second = kNullFrame;
    for (const Event& e : match.machine(m).game.events)
      if (e.type == EventType::disconnected && e.player == 1 && ++cuts == 2) second = e.frame;
    EXPECT_EQ(second, live - 1) << "cut again just before its live frame";
    EXPECT_EQ(seen(match, m, 1).rejoining, live);
    EXPECT_EQ(seen(match, m, 1).rejoined, kNullFrame);
  }
  std::vector<Frame> cuts = {-2, cut, -2};
  expect_states_agree(match, match.reference(cuts), o.frames);
}

}  // namespace
}  // namespace retcon::test
