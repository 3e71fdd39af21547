// A disconnect cut that reaches a machine after it already simulated (and confirmed) frames past
// it must be followed, never reported as a desync (issue 11, "a late cut").
//
// Lockstep with input delay: a leaver's last inputs reach one survivor and not the other, so the
// first survivor confirms and simulates frames the other never gets to; the agreed cut (the
// earliest last frame anyone had) then lies behind frames the first already ran. Every machine
// must end with the states of the agreed match (the reference with the leaver's input
// disconnected after the cut) and announce the same cut.
#include <algorithm>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "support/match_harness.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

std::vector<Frame> disconnect_frames(Match& match, uint32_t m, PlayerIndex player) {
  std::vector<Frame> out;
  for (const Event& e : match.machine(m).game.events)
    if (e.type == EventType::disconnected && e.player == player) out.push_back(e.frame);
  return out;
}

struct LateCutCase {
  uint32_t machines;
  int32_t max_prediction;
  int32_t delay;
  SaveMode save_mode;
};

// The leaver (the last machine) stops at frame ~200 of machine 0; its datagrams to machine 1
// are lost from `lead` ticks before, so machine 1's last frame of it is that many ticks older
// than the others'.
void leaver_whose_last_inputs_reach_one_survivor(const LateCutCase& c, uint64_t seed, int lead) {
  MatchOptions o;
  o.machines = c.machines;
  o.max_prediction = c.max_prediction;
  o.input_delay = c.delay;
  o.save_mode = c.save_mode;
  o.frames = 500;
  o.seed = seed;
  o.link.latency_us = 20000;
  o.disconnect_timeout_us = 1000000;
  o.notify_delay_us = 200000;
  Match match(o);
  ASSERT_TRUE(match.build());
  const uint32_t leaver = c.machines - 1;
  const std::string what = std::to_string(c.machines) + " machines, window " + std::to_string(c.max_prediction) +
                           ", delay " + std::to_string(c.delay) + ", save mode " + std::to_string(int(c.save_mode)) +
                           ", seed " + std::to_string(seed) + ", lead " + std::to_string(lead);
  int blocked_at = -1;
  for (int t = 0; t < 4000; ++t) {
    if (blocked_at < 0 && match.machine(0).session->current_frame() >= 200) {
      match.block(leaver, 1);
      blocked_at = t;
    }
    if (blocked_at >= 0 && t == blocked_at + lead) match.machine(leaver).stopped = true;
    match.tick();
    bool done = true;
    for (uint32_t m = 0; m < leaver; ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
    if (done) break;
  }
  // One cut, announced by every survivor.
  std::vector<Frame> cut = disconnect_frames(match, 0, PlayerIndex(leaver));
  ASSERT_EQ(cut.size(), 1u) << what;
  for (uint32_t m = 1; m < leaver; ++m) EXPECT_EQ(disconnect_frames(match, m, PlayerIndex(leaver)), cut) << what;
  std::vector<Frame> cuts(c.machines, -2);
  cuts[leaver] = cut[0];
  const std::vector<uint64_t> ref = match.reference(cuts);
  for (uint32_t m = 0; m < leaver; ++m) {
    Machine& me = match.machine(m);
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
    EXPECT_EQ(me.game.frame_errors, 0) << what;
    EXPECT_GE(me.session->confirmed_frame(), o.frames) << what << ": machine " << m << " went on";
    for (Frame f = 0; f <= o.frames; ++f)
      ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << what << ": machine " << m << " frame " << f;
  }
}

TEST(LateCut, LockstepLeaverWhoseLastInputsReachedOneSurvivorOnly) {
  for (const LateCutCase c : {LateCutCase{3, 0, 3, SaveMode::automatic}, LateCutCase{3, 0, 6, SaveMode::automatic},
                              LateCutCase{4, 0, 4, SaveMode::automatic}, LateCutCase{3, 0, 4, SaveMode::sparse}}) {
    for (uint64_t seed = 1; seed <= 2; ++seed)
      for (int lead : {1, 3}) leaver_whose_last_inputs_reach_one_survivor(c, seed, lead);
  }
}

TEST(LateCut, RollbackLeaverWhoseLastInputsReachedOneSurvivorOnly) {
  for (const LateCutCase c : {LateCutCase{3, 8, 3, SaveMode::automatic}, LateCutCase{3, 8, 32, SaveMode::automatic},
                              LateCutCase{4, 4, 32, SaveMode::sparse}, LateCutCase{3, 2, 32, SaveMode::every_frame}}) {
    for (uint64_t seed = 1; seed <= 2; ++seed)
      for (int lead : {1, 3, 10}) leaver_whose_last_inputs_reach_one_survivor(c, seed, lead);
  }
}

// Found by the p2p fuzz target: lockstep (window 0, automatic saving) with three machines,
// the leaver's first inputs reach machine 0 and never machine 1, which then drops the leaver
// with "no frame at all" (-1) as its last frame (here the game asks it to; the fuzz input had
// its disconnect timeout). Machine 0 had simulated the frames machine 1's inputs covered, with
// the leaver's inputs, and held no state to go back to: a lockstep session saved nothing, so it
// logged "older than the saved history", reported desync_detected and played on diverged. A
// lockstep session with two or more other player machines saves (and keeps checkpoints) now,
// and follows the cut like any other.
TEST(LateCut, LockstepLeaverWhoseFirstInputsReachedOneSurvivorOnly) {
  for (const int32_t delay : {0, 2}) {
    MatchOptions o;
    o.machines = 3;
    o.max_prediction = 0;
    o.input_delay = delay;
    o.desync_interval = 0;  // desync detection saves states by itself
    o.frames = 200;
    o.link.latency_us = 20000;
    o.capture_logs = true;
    o.log_level = LogLevel::info;
    Match match(o);
    ASSERT_TRUE(match.build());
    const std::string what = "delay " + std::to_string(delay);
    // Running at frame 0: machine 1 has none of machine 2's inputs yet (it would have advanced),
    // and those on their way are lost from now on. Machine 0 gets them, and machine 1's.
    int t = 0;
    for (; t < 600 && !match.machine(1).session->running(); ++t) match.tick();
    ASSERT_TRUE(match.machine(1).session->running()) << what;
    ASSERT_EQ(match.machine(1).session->current_frame(), 0) << what;
    match.block(2, 1);
    for (int k = 0; k < 10; ++k) match.tick();
    ASSERT_EQ(match.machine(1).session->current_frame(), 0) << what;
    ASSERT_GE(match.machine(0).session->current_frame(), 1) << what << ": machine 0 played the leaver's inputs";
    ASSERT_EQ(match.machine(1).session->disconnect_player(2), Result::ok) << what;
    for (; t < 4000; ++t) {
      match.tick();
      if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(1).session->confirmed_frame() >= o.frames)
        break;
    }
    const std::vector<Frame> cut = disconnect_frames(match, 0, 2);
    ASSERT_EQ(cut, std::vector<Frame>{kNullFrame}) << what;
    EXPECT_EQ(disconnect_frames(match, 1, 2), cut) << what;
    const std::vector<uint64_t> ref = match.reference({-2, -2, kNullFrame});
    for (uint32_t m = 0; m < 2; ++m) {
      Machine& me = match.machine(m);
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
      EXPECT_FALSE(me.logged("older than the saved history")) << what << ": machine " << m;
      EXPECT_EQ(me.game.frame_errors, 0) << what;
      EXPECT_GE(me.session->confirmed_frame(), o.frames) << what << ": machine " << m << " went on";
      for (Frame f = 0; f <= o.frames; ++f)
        ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << what << ": machine " << m << " frame " << f;
    }
  }
}

// Machines with different windows: machine 0 is configured with 8 frames, the others with 64.
// Machine 2 stops hearing the leaver (machine 3) at frame ~200 and drops it after its disconnect
// timeout. Were the 64s to play with their own window, machine 2 would run on predicting the
// leaver for 64 frames, so would the whole match, and machine 0 would simulate and confirm ~65
// frames past machine 2's last frame of the leaver, deeper than its own checkpoints reach
// (2 x 8 + 32 frames, rounded up to its checkpoint interval, plus one: 57): when machine 2
// reported its cut (196), machine 0 logged "agreed last frame 196 is older than the saved
// history", reported desync_detected ("cannot roll back to the agreed disconnect frame") and
// played on diverged (the reproduction of af942c9). Every machine now plays with the smallest
// window of the players it completed a handshake with (8, never raised again, not even after
// the leaver left), so the cut comes within everyone's reach: no desync, every survivor's state
// at every confirmed frame is the agreed match's, and the same cut everywhere. (It fails with
// the lowering taken out: machine 0 reports the desync and its states differ from frame 198.)
TEST(LateCut, ACutFromAMachineWithADeeperWindowIsFollowed) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    MatchOptions o;
    o.machines = 4;
    o.max_prediction_of = {8, 64, 64, 64};
    o.frames = 700;
    o.seed = seed;
    o.link.latency_us = 20000;
    o.disconnect_timeout_us = 1000000;
    o.notify_delay_us = 200000;
    o.capture_logs = true;
    o.log_level = LogLevel::info;
    Match match(o);
    ASSERT_TRUE(match.build());
    const std::string what = "seed " + std::to_string(seed);
    bool blocked = false;
    for (int t = 0; t < 5000; ++t) {
      if (!blocked && match.machine(0).session->current_frame() >= 200) {
        match.block(3, 2);  // for good: machine 2 drops the leaver after its disconnect timeout
        blocked = true;
      }
      match.tick();
      bool done = true;
      for (uint32_t m = 0; m < 3; ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
      if (done) break;
    }
    ASSERT_TRUE(blocked) << what;
    std::vector<Frame> cut = disconnect_frames(match, 0, 3);
    ASSERT_EQ(cut.size(), 1u) << what;
    for (uint32_t m = 1; m < 3; ++m) EXPECT_EQ(disconnect_frames(match, m, 3), cut) << what << ": machine " << m;
    const std::vector<uint64_t> ref = match.reference({-2, -2, -2, cut[0]});
    for (uint32_t m = 0; m < 3; ++m) {
      Machine& me = match.machine(m);
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
      EXPECT_FALSE(me.logged("older than the saved history")) << what << ": machine " << m;
      EXPECT_EQ(me.game.frame_errors, 0) << what;
      EXPECT_GE(me.session->confirmed_frame(), o.frames) << what << ": machine " << m << " went on";
      EXPECT_EQ(me.session->stats().prediction_window, 8) << what << ": machine " << m;
      // The 64s said so once, naming machine 0's player and both windows.
      EXPECT_EQ(me.logged("player 0's machine has max_prediction 8: rollback window lowered from 64 to 8"), m != 0)
          << what << ": machine " << m;
      for (Frame f = 0; f <= o.frames; ++f)
        ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << what << ": machine " << m << " frame " << f;
    }
  }
}

// Two players, windows 8 and 64: both play with 8. Machine 1 stops hearing machine 0 for a
// second (a one-way outage): with its own window it would predict 64 frames ahead, with 8 it
// stalls after 8 and never rolls back deeper. The match plays to the end, equal to lockstep.
TEST(LateCut, TwoPlayersWithWindows8And64BothPlayWith8) {
  MatchOptions o;
  o.machines = 2;
  o.max_prediction_of = {8, 64};
  o.frames = 400;
  o.link.latency_us = 20000;
  Match match(o);
  ASSERT_TRUE(match.build());
  bool blocked = false;
  int unblock_at = -1;
  for (int t = 0; t < 3000; ++t) {
    if (!blocked && match.machine(1).session->current_frame() >= 100) {
      match.block(0, 1);
      blocked = true;
      unblock_at = t + 60;
    }
    if (t == unblock_at) match.block(0, 1, false);
    match.tick();
    if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(1).session->confirmed_frame() >= o.frames)
      break;
  }
  ASSERT_TRUE(blocked);
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < 2; ++m) {
    Machine& me = match.machine(m);
    const SessionStats stats = me.session->stats();
    EXPECT_EQ(stats.prediction_window, 8) << "machine " << m;
    EXPECT_LE(stats.max_rollback_depth, 8u) << "machine " << m;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
    EXPECT_EQ(me.game.frame_errors, 0);
    EXPECT_GE(me.session->confirmed_frame(), o.frames) << "machine " << m;
    for (Frame f = 0; f <= o.frames; ++f)
      ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "machine " << m << " frame " << f;
  }
  EXPECT_GT(match.machine(1).session->stats().frames_stalled, 0u) << "machine 1 stalled at 8 frames, not 64";
  EXPECT_EQ(match.errors(), 0u);
}

// A machine that comes back (P2PConfig::rejoining) with a smaller window than the match's: the
// others lower theirs when their handshake with it completes, before it plays, so a late cut
// later on reaches back no further than its checkpoints. Three machines at 64; machine 2
// crashes and comes back configured with 8; then machine 0 stops hearing machine 1 for good
// and drops it after its disconnect timeout, while machine 2 hears both. Machine 0's last frame
// of it is the cut; were machine 0 still at 64, it would run on predicting machine 1 for 64
// frames, machine 2 (which has every input) up to 8 past machine 0's, and the cut would come
// ~73 frames late to machine 2, beyond its 2 x 8 + 32 frames of checkpoints (it reports
// desync_detected then). Every machine plays with 8 from the rejoin on, nobody reports a desync,
// every state at every confirmed frame is the agreed match's, and the windows stay at 8.
TEST(LateCut, AMachineThatRejoinsWithASmallerWindowFollowsALateCut) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    MatchOptions o;
    o.machines = 3;
    o.max_prediction = 64;
    o.frames = 1100;
    o.seed = seed;
    o.allow_rejoin = true;
    o.state_transfer = true;
    o.disconnect_timeout_us = 1000000;
    o.notify_delay_us = 300000;
    o.link.latency_us = 20000;
    o.capture_logs = true;
    o.log_level = LogLevel::info;
    Match match(o);
    ASSERT_TRUE(match.build());
    const std::string what = "seed " + std::to_string(seed);
    while (match.machine(0).session->current_frame() < 150) match.tick();
    match.machine(2).stopped = true;
    for (int t = 0; t < 2000 && seen(match, 0, 2).cut == kNullFrame; ++t) match.tick();
    const Frame crash_cut = seen(match, 0, 2).cut;
    ASSERT_NE(crash_cut, kNullFrame) << what;
    for (int t = 0; t < 30; ++t) match.tick();
    ASSERT_TRUE(match.restart_rejoining(2, [](P2PConfig& c) { c.session.max_prediction = 8; }));
    std::vector<size_t> answered;
    const Frame live = accept_until_seen(match, answered, 0, 2, &Seen::rejoined, 2500);
    ASSERT_NE(live, kNullFrame) << what << ": machine 2 came back";
    for (uint32_t m = 0; m < 3; ++m)
      EXPECT_EQ(match.machine(m).session->stats().prediction_window, 8) << what << ": machine " << m;
    for (uint32_t m = 0; m < 2; ++m)
      EXPECT_TRUE(match.machine(m).logged("player 2's machine has max_prediction 8: rollback window lowered from 64 to 8"))
          << what << ": machine " << m;
    // Machine 1 unheard by machine 0 from here on; it is left out of the checks once gone.
    while (match.machine(0).session->current_frame() < live + 100) match.tick();
    match.block(1, 0);
    for (int t = 0; t < 4000; ++t) {
      match.tick();
      answer_requests(match, answered, true);
      if (!match.machine(1).stopped && seen(match, 0, 1).cut != kNullFrame && seen(match, 2, 1).cut != kNullFrame)
        match.machine(1).stopped = true;
      if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(2).session->confirmed_frame() >= o.frames)
        break;
    }
    const Frame leave_cut = seen(match, 0, 1).cut;
    ASSERT_NE(leave_cut, kNullFrame) << what;
    EXPECT_GT(leave_cut, live) << what;
    EXPECT_EQ(seen(match, 2, 1).cut, leave_cut) << what << ": the same cut everywhere";
    EXPECT_EQ(seen(match, 2, 2).rejoined, live) << what;
    std::vector<Frame> cuts{-2, leave_cut, crash_cut}, lives{-2, -2, live};
    expect_states_agree(match, match.reference(cuts, lives), o.frames);
    for (uint32_t m : {0u, 2u}) {
      EXPECT_EQ(match.machine(m).session->stats().prediction_window, 8) << what << ": machine " << m << ", never raised";
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
    }
  }
}

// Random one-way outages of single links (up to 200 ticks each, up to 5 of them), a leaver
// (crash, or dropped by another machine's game), 3-5 machines, delays 0-32, every save mode, up
// to 9% loss: no machine ever reports a desync (the game is deterministic), in particular never
// "cannot roll back to the agreed disconnect frame". `mixed`: each machine draws its own window
// (0-16 or 64; every machine then plays with the smallest); else one window 0-16 for all.
void random_outages_and_a_leaver(uint64_t seed, bool mixed) {
  std::mt19937_64 rng(seed);
  MatchOptions o;
  o.machines = 3 + uint32_t(rng() % 3);
  o.max_prediction = int32_t(rng() % 3 == 0 ? 0 : rng() % 17);
  if (mixed)
    for (uint32_t m = 0; m < o.machines; ++m)
      o.max_prediction_of.push_back(int32_t(rng() % 3 == 0 ? 64 : rng() % 17));
  o.input_delay = int32_t(rng() % 33);
  o.save_mode = SaveMode(rng() % 3);
  o.frames = 700;
  o.seed = seed;
  o.link.latency_us = 5000 + rng() % 60000;
  o.link.jitter_us = rng() % 10000;
  o.link.loss = double(rng() % 10) / 100;
  o.disconnect_timeout_us = 500000 + rng() % 1500000;
  o.notify_delay_us = 200000;
  Match match(o);
  ASSERT_TRUE(match.build());
  const uint32_t n = o.machines;
  struct Outage {
    int at, length;
    uint32_t from, to;
  };
  std::vector<Outage> outages;
  for (int k = 0, count = int(rng() % 6); k < count; ++k) {
    const uint32_t from = uint32_t(rng() % n);
    uint32_t to = uint32_t(rng() % n);
    if (from == to) to = (to + 1) % n;
    outages.push_back({100 + int(rng() % 400), int(rng() % 200), from, to});
  }
  const uint32_t leaver = uint32_t(rng() % n);
  const int leave_at = 150 + int(rng() % 300);
  const bool by_api = rng() % 2;
  const uint32_t dropper = (leaver + 1 + uint32_t(rng() % (n - 1))) % n;
  for (int t = 0; t < 5000; ++t) {
    for (const Outage& b : outages) {
      if (t == b.at) match.block(b.from, b.to, true);
      if (t == b.at + b.length) match.block(b.from, b.to, false);
    }
    if (t == leave_at) {
      if (by_api) (void)match.machine(dropper).session->disconnect_player(PlayerIndex(leaver));
      else match.machine(leaver).stopped = true;
    }
    match.tick();
  }
  std::string windows = std::to_string(o.max_prediction);
  if (mixed) {
    windows.clear();
    for (int32_t w : o.max_prediction_of) windows += std::to_string(w) + " ";
  }
  const std::string what = "seed " + std::to_string(seed) + ": " + std::to_string(n) + " machines, windows " +
                           windows + ", delay " + std::to_string(o.input_delay);
  int32_t smallest = o.max_prediction;
  if (mixed) smallest = *std::min_element(o.max_prediction_of.begin(), o.max_prediction_of.end());
  for (uint32_t m = 0; m < n; ++m) {
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
    EXPECT_EQ(match.machine(m).game.frame_errors, 0) << what;
    if (match.machine(m).session->running()) {
      EXPECT_EQ(match.machine(m).session->stats().prediction_window, smallest) << what << ": machine " << m;
    }
  }
  EXPECT_EQ(match.errors(), 0u) << what;
}

// Fixed seeds 1-100 (400 passed when it was written).
TEST(LateCut, RandomOutagesAndALeaverWithEqualWindowsNeverReportADesync) {
  for (uint64_t seed = 1; seed <= 100; ++seed) random_outages_and_a_leaver(seed, false);
}

// The same with every machine on its own window: the min rule keeps the bound. Seeds 1-400
// passed when it was written; with the lowering taken out 32 of them report desyncs (13, 14, 30,
// 65, 82 and 100 among these 100).
TEST(LateCut, RandomOutagesAndALeaverWithMixedWindowsNeverReportADesync) {
  for (uint64_t seed = 1; seed <= 100; ++seed) random_outages_and_a_leaver(seed, true);
}

}  // namespace
}  // namespace retcon::test
