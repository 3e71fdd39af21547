// retcon_netsim --series (see netsim_series.h).
#include "netsim_series.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "fighter_match.h"

namespace retcon::tools {

namespace {

struct Condition {
  const char* name;
  uint64_t mean_ms, spread_ms;  // one way: mean +- spread (latency mean - spread, jitter 2 x spread)
  double loss;
  bool blackouts;               // 1 s blackout every 8 s (from 3 s)
};

constexpr Condition kConditions[] = {
    {"lan 1 ms", 1, 0, 0.0, false},
    {"broadband 20+-4 ms 0.5%", 20, 4, 0.005, false},
    {"transatlantic 50+-8 ms 5%", 50, 8, 0.05, false},
    {"jitter 100+-40 ms 10%", 100, 40, 0.10, false},
    {"blackout 1s/8s 50+-8 ms 5%", 50, 8, 0.05, true},
};

LinkProfile link_of(const Condition& c, bool blackouts) {
  LinkProfile l;
  l.latency_us = (c.mean_ms - c.spread_ms) * 1000;
  l.jitter_us = 2 * c.spread_ms * 1000;
  l.loss = c.loss;
  if (blackouts) {
    l.blackout_period_us = 8000000;
    l.blackout_duration_us = 1000000;
    l.blackout_offset_us = 3000000;
  }
  return l;
}

struct Run {
  bool ok = false;
  uint64_t ticks = 0, running_ticks = 0;
  double stalls_per_min = 0, waits_per_min = 0, mean_depth = 0, max_depth = 0, resimulated_pct = 0, skew = 0,
         bytes_per_s = 0, recovery_mean = 0, recovery_max = 0;
  uint64_t blackouts = 0;
};

Run run_one(const Condition& c, bool blackouts, int32_t delay, uint64_t seed, int32_t frames, int32_t max_prediction) {
  FighterMatchOptions o;
  o.players = 2;
  o.frames = frames;
  o.link = link_of(c, blackouts);
  o.seed = seed;
  o.max_prediction = max_prediction;
  o.input_delay = delay;
  o.checksum_interval = 60;
  Run r;
  FighterMatch m(o);
  if (m.build() != Result::ok) return r;
  const uint64_t max_ticks = uint64_t(frames) * 4 + 3600;
  bool finished = false;
  while (!finished && m.ticks() < max_ticks) finished = m.tick();
  uint64_t sums[2] = {};
  r.ok = finished && m.peer(0).confirmed_checksum(frames, &sums[0]) && m.peer(1).confirmed_checksum(frames, &sums[1]) &&
         sums[0] == sums[1] && m.peer(0).desyncs() == 0 && m.peer(1).desyncs() == 0;
  r.ticks = m.ticks();
  r.running_ticks = m.running_ticks();
  const double seconds = double(m.now_us()) / 1e6;
  uint64_t rollbacks = 0, resim = 0, advanced = 0, recoveries = 0, recovery_sum = 0;
  for (size_t i = 0; i < 2; ++i) {
    const MachineTotals& t = m.totals(i);
    const double minutes = double(t.ticks_settled) / 3600.0;
    if (minutes > 0) {
      r.stalls_per_min += double(t.stalls_settled) / minutes / 2;
      r.waits_per_min += double(t.waits_settled) / minutes / 2;
    }
    rollbacks += t.rollbacks;
    resim += t.frames_resimulated;
    advanced += t.frames_advanced;
    r.max_depth = std::max(r.max_depth, double(t.max_depth));
    r.bytes_per_s += double(m.peer(i).bytes_sent()) / seconds / 2;
    recoveries += t.recoveries;
    recovery_sum += t.recovery_ticks_sum;
    r.recovery_max = std::max(r.recovery_max, double(t.recovery_ticks_max));
  }
  r.mean_depth = rollbacks ? double(resim) / double(rollbacks) : 0.0;
  r.resimulated_pct = advanced ? 100.0 * double(resim) / double(advanced) : 0.0;
  r.skew = m.mean_skew();
  r.recovery_mean = recoveries ? double(recovery_sum) / double(recoveries) : 0.0;
  r.blackouts = recoveries / 2;
  return r;
}

}  // namespace

int run_netsim_series(int32_t frames, int32_t max_prediction, const char* row, int32_t only_delay) {
  constexpr uint64_t kSeeds = 3;
  std::printf("retcon netsim series: 2 players, %d frames, window %d, seeds 1-%" PRIu64
              ", virtual clock; means over the seeds\n", frames, max_prediction, kSeeds);
  std::printf("(stalls and waits per minute per machine after the first 5 s; depth in frames; skew = mean |frame gap|;\n"
              " lost/blackout = extra ticks per blackout vs the same link without; recovery = ticks after a blackout\n"
              " until 30 ticks in a row advanced, mean (worst); B/s = payload each machine sends)\n\n");
  std::printf("| condition (one way) | delay | stalls/min | waits/min | mean depth | max depth | %% resim | skew | lost/blackout | recovery | B/s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool all_ok = true;
  // Issue 10's targets, checked on the means (held: every row meets it).
  struct Target {
    const char* text;
    bool held = true;
    double worst = 0;
  } lost_target{"frames lost per 1 s blackout <= 45"}, stall_target{"100 ms +-40 / 10% delay 2 stalls/min <= 25"},
      lan_target{"clean LAN wait ticks/min after start-up = 0"}, wait_target{"100 ms +-40 / 10% wait ticks/min <= 10"},
      bytes_target{"payload B/s per direction <= 1200"};
  auto check = [](Target& t, double value, bool ok) {
    t.held = t.held && ok;
    t.worst = std::max(t.worst, value);
  };
  int rows = 0;
  for (const Condition& c : kConditions) {
    if (row != nullptr && std::strstr(c.name, row) == nullptr) continue;
    for (int32_t delay : {0, 2}) {
      if (only_delay >= 0 && delay != only_delay) continue;
      ++rows;
      Run mean;
      double lost = 0;
      for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
        const Run r = run_one(c, c.blackouts, delay, seed, frames, max_prediction);
        all_ok = all_ok && r.ok;
        if (c.blackouts) {
          const Run clean = run_one(c, false, delay, seed, frames, max_prediction);
          all_ok = all_ok && clean.ok;
          if (r.blackouts > 0) lost += (double(r.running_ticks) - double(clean.running_ticks)) / double(r.blackouts) / kSeeds;
        }
        mean.stalls_per_min += r.stalls_per_min / kSeeds;
        mean.waits_per_min += r.waits_per_min / kSeeds;
        mean.mean_depth += r.mean_depth / kSeeds;
        mean.max_depth = std::max(mean.max_depth, r.max_depth);
        mean.resimulated_pct += r.resimulated_pct / kSeeds;
        mean.skew += r.skew / kSeeds;
        mean.bytes_per_s += r.bytes_per_s / kSeeds;
        mean.recovery_mean += r.recovery_mean / kSeeds;
        mean.recovery_max = std::max(mean.recovery_max, r.recovery_max);
      }
      const bool lan = c.mean_ms == 1 && c.loss == 0.0, jitter = c.spread_ms == 40;
      if (c.blackouts) check(lost_target, lost, lost <= 45.0);
      if (jitter && delay == 2) check(stall_target, mean.stalls_per_min, mean.stalls_per_min <= 25.0);
      if (lan) check(lan_target, mean.waits_per_min, mean.waits_per_min == 0.0);
      if (jitter) check(wait_target, mean.waits_per_min, mean.waits_per_min <= 10.0);
      check(bytes_target, mean.bytes_per_s, mean.bytes_per_s <= 1200.0);
      char lost_text[32] = "-", recovery_text[32] = "-";
      if (c.blackouts) {
        std::snprintf(lost_text, sizeof lost_text, "%.1f", lost);
        std::snprintf(recovery_text, sizeof recovery_text, "%.1f (%.0f)", mean.recovery_mean, mean.recovery_max);
      }
      std::printf("| %s | %d | %.1f | %.1f | %.2f | %.0f | %.1f | %.2f | %s | %s | %.0f |\n", c.name, delay,
                  mean.stalls_per_min, mean.waits_per_min, mean.mean_depth, mean.max_depth, mean.resimulated_pct,
                  mean.skew, lost_text, recovery_text, mean.bytes_per_s);
      std::fflush(stdout);
    }
  }
  std::printf("\n");
  if (rows == 0) {
    std::printf("no row matches (--row %s, --delay %d)\n", row != nullptr ? row : "", int(only_delay));
    return 1;
  }
  for (const Target* t : {&lost_target, &stall_target, &lan_target, &wait_target, &bytes_target})
    std::printf("target %s: %s (worst row %.1f)\n", t->text, t->held ? "held" : "MISSED", t->worst);
  std::printf("\nresult: %s\n", all_ok ? "OK, every match finished with agreeing checksums" : "FAILED: a match did not finish or desynced");
  return all_ok ? 0 : 1;
}

}  // namespace retcon::tools
