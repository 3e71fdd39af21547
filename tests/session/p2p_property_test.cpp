// Property: over any network profile (latency 0-250 ms, jitter 0-50 ms, loss 0-25%, duplicates,
// reordering, short blackouts), with 2-4 players and a spectator, random inputs per frame, input
// delays that change mid-match, every save mode, and a player that may leave at a random frame
// (crash or dropped by the API), spectators that join at random frames (from a state the host
// sends them, with state transfer, else replaying from frame 0), every machine's state at every
// confirmed frame it ran equals the
// lockstep reference (with the dropped player's input cut where every machine says it was), no
// desync is reported, and the match finishes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "support/arbitrary_link.h"
#include "support/match_harness.h"

namespace retcon::test {
namespace {

RC_GTEST_PROP(P2PProperty, EveryConfirmedFrameEqualsLockstepOverAnyNetwork, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.spectators = *rc::gen::inRange(0u, 3u);
  o.state_transfer = *rc::gen::arbitrary<bool>();
  for (uint32_t k = 0; k < o.spectators; ++k) o.spectator_join.push_back(*rc::gen::inRange(0, 180));
  o.input_size = *rc::gen::inRange(1u, 9u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.frames = 240;
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.random_inputs = true;
  o.save_mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  if (*rc::gen::arbitrary<bool>()) o.delay_changes.push_back({*rc::gen::inRange(1, 200), *rc::gen::inRange(0, 6)});
  if (*rc::gen::arbitrary<bool>()) o.delay_changes.push_back({*rc::gen::inRange(100, 230), *rc::gen::inRange(0, 6)});
  o.link = arbitrary_link();
  // A player machine (never the spectators' host) that leaves at a random frame: it crashes
  // (the others time it out) or machine 0 drops it through the API first.
  const bool leave = o.machines > 2 ? *rc::gen::arbitrary<bool>() : *rc::gen::inRange(0, 4) == 0;
  const uint32_t leaver = *rc::gen::inRange(1u, o.machines);
  const Frame leave_at = *rc::gen::inRange(10, 200);
  const bool by_api = *rc::gen::arbitrary<bool>();
  if (leave) {
    // Long enough that a handshake under 25% loss and a blackout is not cut short.
    o.notify_delay_us = 500000;
    o.disconnect_timeout_us = 2500000;
  }
  Match match(o);
  RC_ASSERT(match.build());
  bool left = false;
  for (int t = 0; t < 30000 && !left; ++t) {
    if (leave && match.machine(leaver).session->current_frame() >= leave_at) {
      if (by_api) RC_ASSERT(match.machine(0).session->disconnect_player(PlayerIndex(leaver)) == Result::ok);
      match.machine(leaver).stopped = true;
      left = true;
      break;
    }
    match.tick();
    if (!leave && match.machine(0).session->confirmed_frame() >= o.frames) break;
  }
  RC_ASSERT(match.run(30000));
  for (int i = 0; i < 200; ++i) match.tick();  // spectators catch up
  RC_ASSERT(match.errors() == 0u);

  // Every survivor names the same cut for the leaver, exactly once.
  std::vector<Frame> cut(match.players(), -2);
  if (leave) {
    Frame agreed = -5;
    for (uint32_t m = 0; m < o.machines; ++m) {
      if (m == leaver) continue;
      std::vector<Frame> seen;
      for (const Event& e : match.machine(m).game.events)
        if (e.type == EventType::disconnected && e.player == PlayerIndex(leaver)) seen.push_back(e.frame);
      RC_ASSERT(seen.size() == 1u);
      if (agreed == -5) agreed = seen[0];
      RC_ASSERT(seen[0] == agreed);
    }
    cut[leaver] = agreed;
  }
  const std::vector<uint64_t> ref = match.reference(cut);
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    RC_ASSERT(me.game.frame_errors == 0);
    RC_ASSERT(match.count_events(m, EventType::desync_detected) == 0u);
    Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    if (leave && m == leaver) {
      last = std::min(last, cut[leaver] + 1);  // its own later frames used its real inputs
    } else {
      RC_ASSERT(last >= (me.spectator ? o.frames / 2 : o.frames));
    }
    // A spectator from a transferred state ran only the frames from the state's on.
    Frame first = 0;
    if (me.spectator && o.state_transfer)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    if (me.spectator && !o.state_transfer) RC_ASSERT(me.hashes[0] != 0u);
    for (Frame f = first; f <= last; ++f) RC_ASSERT(me.hashes[size_t(f)] == ref[size_t(f)]);
  }
  RC_CLASSIFY(match.machine(0).session->stats().rollbacks > 0, "rolled back");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
  RC_CLASSIFY(leave, "a player left");
  RC_CLASSIFY(o.save_mode == SaveMode::sparse, "sparse saving");
  RC_CLASSIFY(o.spectators > 0 && o.state_transfer, "spectators with state transfer");
}

}  // namespace
}  // namespace retcon::test
