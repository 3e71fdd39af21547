// Property: over any network profile (latency 0-250 ms, jitter 0-50 ms, loss 0-25%, duplicates,
// reordering, short blackouts), with 2-4 players and a spectator, every machine's state at every
// confirmed frame equals the lockstep reference, no desync is reported, and the match finishes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "support/match_harness.h"

namespace retcon::test {
namespace {

RC_GTEST_PROP(P2PProperty, EveryConfirmedFrameEqualsLockstepOverAnyNetwork, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.spectators = *rc::gen::inRange(0u, 2u);
  o.input_size = *rc::gen::inRange(1u, 9u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.frames = 240;
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.link.latency_us = uint64_t(*rc::gen::inRange(0, 126)) * 1000;  // one way: RTT 0-250 ms
  o.link.jitter_us = uint64_t(*rc::gen::inRange(0, 51)) * 1000;
  o.link.loss = *rc::gen::inRange(0, 26) / 100.0;
  o.link.duplicate = *rc::gen::inRange(0, 11) / 100.0;
  o.link.reorder = *rc::gen::inRange(0, 11) / 100.0;
  if (*rc::gen::arbitrary<bool>()) {
    const uint64_t start = uint64_t(*rc::gen::inRange(500, 3000)) * 1000;
    o.link.blackouts.push_back({start, start + uint64_t(*rc::gen::inRange(50, 600)) * 1000});
  }
  Match match(o);
  RC_ASSERT(match.build());
  RC_ASSERT(match.run(30000));
  for (int i = 0; i < 200; ++i) match.tick();  // spectators catch up
  RC_ASSERT(match.errors() == 0u);
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    RC_ASSERT(me.game.frame_errors == 0);
    RC_ASSERT(match.count_events(m, EventType::desync_detected) == 0u);
    const Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    RC_ASSERT(last >= (me.spectator ? o.frames / 2 : o.frames));
    for (Frame f = 0; f <= last; ++f) RC_ASSERT(me.hashes[size_t(f)] == ref[size_t(f)]);
  }
  RC_CLASSIFY(match.machine(0).session->stats().rollbacks > 0, "rolled back");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
}

}  // namespace
}  // namespace retcon::test
