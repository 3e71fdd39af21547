// Fighter over the network: named network conditions for retcon's NetworkSimulator, shared by
// tools/retcon_netsim, fighter_net and the window. Each profile is one direction's link; a
// machine applies it to what it sends, so a round trip sees it twice (RTT ~ 2 x latency).
#pragma once

#include <cstdio>
#include <cstring>

#include "retcon/transport.h"

namespace fighter {

struct NamedProfile {
  const char* name;
  const char* description;
  uint64_t latency_ms, jitter_ms;
  double loss, duplicate, reorder;
  uint64_t blackout_every_ms, blackout_ms;
};

inline constexpr NamedProfile kNetProfiles[] = {
    {"lan", "LAN: ~2 ms RTT, no loss", 1, 1, 0.0, 0.0, 0.0, 0, 0},
    {"broadband", "broadband: ~40 ms RTT, 0.5% loss", 20, 4, 0.005, 0.0, 0.0, 0, 0},
    {"transatlantic", "transatlantic: ~100 ms RTT, 5% loss", 50, 8, 0.05, 0.0, 0.0, 0, 0},
    {"mobile", "mobile: ~80 ms RTT, heavy jitter, 3% loss, reordering, a 300 ms blackout every 10 s",
     40, 30, 0.03, 0.01, 0.02, 10000, 300},
    {"hell", "hell: ~240 ms RTT, 60 ms jitter, 15% loss, duplicates, reordering, 800 ms blackouts every 5 s",
     120, 60, 0.15, 0.05, 0.10, 5000, 800},
};

inline retcon::LinkProfile to_link(const NamedProfile& p) {
  retcon::LinkProfile l;
  l.latency_us = p.latency_ms * 1000;
  l.jitter_us = p.jitter_ms * 1000;
  l.loss = p.loss;
  l.duplicate = p.duplicate;
  l.reorder = p.reorder;
  l.blackout_period_us = p.blackout_every_ms * 1000;
  l.blackout_duration_us = p.blackout_ms * 1000;
  return l;
}

// Null when there is no profile of that name.
inline const NamedProfile* find_net_profile(const char* name) {
  for (const NamedProfile& p : kNetProfiles)
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

// One line describing a link, e.g. "latency 50 ms, jitter 8 ms, loss 5.0%".
inline void describe_link(const retcon::LinkProfile& l, char* out, size_t capacity) {
  char blackouts[96] = "no blackouts";
  if (l.blackout_period_us != 0 && l.blackout_duration_us != 0) {
    std::snprintf(blackouts, sizeof blackouts, "%llu ms blackout every %llu ms",
                  static_cast<unsigned long long>(l.blackout_duration_us / 1000),
                  static_cast<unsigned long long>(l.blackout_period_us / 1000));
  }
  std::snprintf(out, capacity, "latency %llu ms, jitter %llu ms, loss %.1f%%, duplicates %.1f%%, reorder %.1f%%, %s",
                static_cast<unsigned long long>(l.latency_us / 1000), static_cast<unsigned long long>(l.jitter_us / 1000),
                l.loss * 100, l.duplicate * 100, l.reorder * 100, blackouts);
}

}  // namespace fighter
