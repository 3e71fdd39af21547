// Network-quality measurements of whole matches on the virtual clock: what players feel
// (stalls, time-sync waits, rollbacks, skew, time lost to blackouts, bytes), per condition.
// Used by the time-sync tests to assert the targets of docs/NETWORKING.md.
#pragma once

#include <algorithm>
#include <cstdlib>

#include "support/match_harness.h"

namespace retcon::test {

struct Quality {
  bool finished = false;
  bool agree = false;               // every machine's state hashes equal up to the last frame
  uint64_t ticks = 0;               // ticks until every machine confirmed the last frame
  uint64_t ticks_running = 0;       // the same, from the first tick both machines ran
  double stalls_per_min = 0;        // prediction-limit ticks after the first 5 s, per machine
  double waits_per_min = 0;         // time-sync wait ticks after start-up, per machine
  uint64_t waits = 0, stalls = 0;   // totals over all machines, whole match
  double mean_skew = 0;             // |frame(m0) - frame(m1)| averaged over ticks
  double payload_bps = 0;           // bytes sent per second per machine (datagrams, all)
};

inline Quality measure(const MatchOptions& o, int max_ticks, int settle_ticks = 300) {
  Quality q;
  Match match(o);
  if (!match.build()) return q;
  uint64_t skew_sum = 0, skew_n = 0, waits_after = 0, stalls_after = 0, counted_ticks = 0;
  int t = 0;
  for (; t < max_ticks; ++t) {
    std::vector<uint64_t> w0, s0;
    for (size_t m = 0; m < match.size(); ++m) {
      w0.push_back(match.machine(uint32_t(m)).waits);
      s0.push_back(match.machine(uint32_t(m)).stalls);
    }
    match.tick();
    const bool running = match.machine(0).session->running() && match.machine(1).session->running();
    if (running && t >= settle_ticks) {
      ++counted_ticks;
      for (size_t m = 0; m < match.size(); ++m) {
        waits_after += match.machine(uint32_t(m)).waits - w0[m];
        stalls_after += match.machine(uint32_t(m)).stalls - s0[m];
      }
    }
    if (running) ++q.ticks_running;
    if (running) {
      skew_sum += uint64_t(std::abs(match.machine(0).session->current_frame() - match.machine(1).session->current_frame()));
      ++skew_n;
    }
    bool done = true;
    for (size_t m = 0; m < match.size(); ++m)
      if (match.machine(uint32_t(m)).session->confirmed_frame() < o.frames) done = false;
    if (done) {
      q.finished = true;
      break;
    }
  }
  q.ticks = uint64_t(t) + 1;
  const double machines = double(match.size());
  const double minutes = double(counted_ticks) / 3600.0;
  if (minutes > 0) {
    q.waits_per_min = double(waits_after) / machines / minutes;
    q.stalls_per_min = double(stalls_after) / machines / minutes;
  }
  for (size_t m = 0; m < match.size(); ++m) {
    q.waits += match.machine(uint32_t(m)).waits;
    q.stalls += match.machine(uint32_t(m)).stalls;
    PeerStats ps{};
    if (match.machine(uint32_t(m)).session->peer_stats(m == 0 ? 1 : 0, &ps) == Result::ok)
      q.payload_bps += double(ps.bytes_sent) / (double(q.ticks) / 60.0) / machines;
  }
  q.mean_skew = skew_n ? double(skew_sum) / double(skew_n) : 0;
  q.agree = q.finished && match.errors() == 0;
  const std::vector<uint64_t> ref = match.reference();
  for (size_t m = 0; m < match.size() && q.agree; ++m)
    for (Frame f = 0; f <= std::min(o.frames, match.machine(uint32_t(m)).session->current_frame() - 1); ++f)
      if (match.machine(uint32_t(m)).hashes[size_t(f)] != ref[size_t(f)]) {
        q.agree = false;
        break;
      }
  return q;
}

}  // namespace retcon::test
