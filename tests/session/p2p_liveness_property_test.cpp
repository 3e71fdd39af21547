// Property: over random schedules (2-4 players, loss, latency, blackouts, machines that die or
// freeze at random times, the handshake included, timeouts on or off), the liveness promise of
// docs/NETWORKING.md holds at every tick of the virtual clock (tests/support/liveness_monitor.h),
// and machines still playing together agree on every state they both confirmed.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "support/liveness_monitor.h"

namespace retcon::test {
namespace {

// Whether machine `m` dropped any player of machine `other` (a disconnected event for it).
bool dropped(Match& match, uint32_t m, uint32_t other) {
  for (const Event& e : match.machine(m).game.events)
    if (e.type == EventType::disconnected && e.player == PlayerIndex(other)) return true;
  return false;
}

RC_GTEST_PROP(P2PLivenessProperty, EveryStallIsToldAndEveryDeadPeerIsLeftBehind, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.frames = 100000;  // never "done": the schedule decides the length
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.max_prediction = *rc::gen::inRange(1, 11);
  o.input_delay = *rc::gen::inRange(0, 3);
  const bool timeouts = *rc::gen::arbitrary<bool>();
  o.notify_delay_us = uint64_t(*rc::gen::inRange(0, 11)) * 100000;  // 0-1 s
  o.disconnect_timeout_us = timeouts ? uint64_t(*rc::gen::inRange(2, 6)) * 1000000 : 0;
  o.handshake_timeout_us = *rc::gen::arbitrary<bool>() ? uint64_t(*rc::gen::inRange(2, 8)) * 1000000 : 0;
  if (o.disconnect_timeout_us != 0) o.notify_delay_us = std::min(o.notify_delay_us, o.disconnect_timeout_us);
  Match match(o);
  RC_ASSERT(match.build());
  // Per machine: its outgoing link, and maybe a blackout, a death or a freeze.
  const int kTicks = 60 * 30;
  struct Fate { int dies = -1, freezes = -1; };
  std::vector<Fate> fates(o.machines);
  for (uint32_t m = 0; m < o.machines; ++m) {
    LinkProfile link;
    link.latency_us = uint64_t(*rc::gen::inRange(0, 81)) * 1000;
    link.jitter_us = uint64_t(*rc::gen::inRange(0, 21)) * 1000;
    link.loss = *rc::gen::inRange(0, 16) / 100.0;
    if (*rc::gen::arbitrary<bool>()) {
      const uint64_t start = uint64_t(*rc::gen::inRange(0, 15000)) * 1000;
      link.blackouts.push_back({start, start + uint64_t(*rc::gen::inRange(100, 8000)) * 1000});
    }
    match.machine(m).sim->set_outgoing(link);
    const int fate = *rc::gen::inRange(0, 4);  // 0, 1: lives; 2: dies; 3: freezes
    if (fate == 2) fates[m].dies = *rc::gen::inRange(0, kTicks / 2);
    if (fate == 3) fates[m].freezes = *rc::gen::inRange(0, kTicks / 2);
  }
  LivenessMonitor::Limits limits;
  limits.notify_delay_us = o.notify_delay_us;
  limits.disconnect_timeout_us = o.disconnect_timeout_us;
  limits.handshake_timeout_us = o.handshake_timeout_us;
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < kTicks; ++t) {
    for (uint32_t m = 0; m < o.machines; ++m) {
      if (t == fates[m].dies) match.machine(m).stopped = true;
      if (t == fates[m].freezes) match.machine(m).frozen = true;
    }
    match.tick();
    monitor.observe();
    RC_ASSERT(monitor.violation() == std::string());
  }
  RC_ASSERT(match.errors() == 0u);
  // Machines that never dropped each other played one match: the same state at every frame
  // both confirmed.
  for (uint32_t a = 0; a < o.machines; ++a) {
    Machine& ma = match.machine(a);
    RC_ASSERT(ma.game.frame_errors == 0);
    if (ma.stopped || ma.frozen) continue;
    for (uint32_t b = a + 1; b < o.machines; ++b) {
      Machine& mb = match.machine(b);
      if (mb.stopped || mb.frozen || dropped(match, a, b) || dropped(match, b, a)) continue;
      // Only states both machines re-simulated with confirmed inputs (Machine::settled).
      const Frame upto = std::min({ma.settled, mb.settled, Frame(ma.hashes.size()) - 1});
      for (Frame f = 0; f <= upto; ++f) RC_ASSERT(ma.hashes[size_t(f)] == mb.hashes[size_t(f)]);
    }
    RC_ASSERT(match.count_events(a, EventType::desync_detected) == 0u);
  }
  RC_CLASSIFY(timeouts, "timeouts on");
  RC_CLASSIFY(monitor.longest_stall_us() > 1000000, "stalled > 1 s");
}

}  // namespace
}  // namespace retcon::test
