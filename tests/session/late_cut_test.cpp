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

// Why every player must use the same window: machines with different windows. Machine 0 keeps
// 8 frames, the others 64. Were they let play, machine 2 would stop hearing the leaver (machine
// 3) at frame ~200 and run on predicting it for 64 frames, so the whole match would: machine 0
// would simulate and confirm ~65 frames past machine 2's last frame of the leaver, deeper than
// its own checkpoints reach (2 x 8 + 32 frames, rounded up to its checkpoint interval, plus one:
// 57). When machine 2 then dropped the leaver and reported its cut (196), machine 0 logged
// "agreed last frame 196 is older than the saved history", reported desync_detected ("cannot
// roll back to the agreed disconnect frame") and played on with states that differed from
// frame 198 on (reproduced before the handshake carried the window). Following such a cut would
// need a state from a machine that has it; instead the handshake refuses the match: each side
// of every mismatched pair gets handshake_rejected naming max_prediction (count: ours, total:
// theirs), and nobody plays. (Spectators send 0 and are never compared: every spectator test
// watches a host with a window of 8.)
TEST(LateCut, PlayersWithDifferentWindowsAreRefusedAtTheHandshake) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    MatchOptions o;
    o.machines = 4;
    o.max_prediction_of = {8, 64, 64, 64};
    o.frames = 700;
    o.seed = seed;
    o.link.latency_us = 20000;
    o.disconnect_timeout_us = 1000000;
    o.notify_delay_us = 200000;
    Match match(o);
    ASSERT_TRUE(match.build());
    const std::string what = "seed " + std::to_string(seed);
    auto rejections = [&](uint32_t m) {
      std::vector<Event> out;
      for (const Event& e : match.machine(m).game.events)
        if (e.type == EventType::handshake_rejected) out.push_back(e);
      return out;
    };
    for (int t = 0; t < 600; ++t) {
      match.tick();
      bool all = rejections(0).size() == 3;
      for (uint32_t m = 1; m < 4; ++m) all = all && rejections(m).size() == 1;
      if (all) break;
    }
    const std::vector<Event> at_0 = rejections(0);
    ASSERT_EQ(at_0.size(), 3u) << what << ": machine 0 refuses each of the three others";
    std::vector<PlayerIndex> refused;
    for (const Event& e : at_0) {
      EXPECT_NE(std::string(e.message).find("max_prediction differs"), std::string::npos) << what << ": " << e.message;
      EXPECT_EQ(e.count, 8) << what;
      EXPECT_EQ(e.total, 64) << what;
      refused.push_back(e.player);
    }
    std::sort(refused.begin(), refused.end());
    EXPECT_EQ(refused, (std::vector<PlayerIndex>{1, 2, 3})) << what;
    for (uint32_t m = 1; m < 4; ++m) {
      const std::vector<Event> at_m = rejections(m);
      ASSERT_EQ(at_m.size(), 1u) << what << ": machine " << m << " refuses machine 0 only";
      EXPECT_NE(std::string(at_m[0].message).find("max_prediction differs"), std::string::npos) << what;
      EXPECT_EQ(at_m[0].player, 0) << what;
      EXPECT_EQ(at_m[0].count, 64) << what;
      EXPECT_EQ(at_m[0].total, 8) << what;
    }
    for (uint32_t m = 0; m < 4; ++m) {
      EXPECT_FALSE(match.machine(m).session->running()) << what << ": machine " << m << " never plays";
      EXPECT_EQ(match.machine(m).session->current_frame(), 0) << what << ": machine " << m;
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what;
    }
  }
}

// Equal windows, random one-way outages of single links (up to 200 ticks each, up to 5 of
// them), a leaver (crash, or dropped by another machine's game), 3-5 machines, windows 0-16,
// delays 0-32, every save mode, up to 9% loss: no machine ever reports a desync (the game is
// deterministic), in particular never "cannot roll back to the agreed disconnect frame". Fixed
// seeds 1-100 (400 passed when it was written).
TEST(LateCut, RandomOutagesAndALeaverWithEqualWindowsNeverReportADesync) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    std::mt19937_64 rng(seed);
    MatchOptions o;
    o.machines = 3 + uint32_t(rng() % 3);
    o.max_prediction = int32_t(rng() % 3 == 0 ? 0 : rng() % 17);
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
    const std::string what = "seed " + std::to_string(seed) + ": " + std::to_string(n) + " machines, window " +
                             std::to_string(o.max_prediction) + ", delay " + std::to_string(o.input_delay);
    for (uint32_t m = 0; m < n; ++m) {
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << what << ": machine " << m;
      EXPECT_EQ(match.machine(m).game.frame_errors, 0) << what;
    }
    EXPECT_EQ(match.errors(), 0u) << what;
  }
}

}  // namespace
}  // namespace retcon::test
