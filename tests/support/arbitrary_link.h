// The network the P2P property tests draw for each schedule (RapidCheck, Linux only).
#pragma once

#include <cstdint>

#include <rapidcheck.h>

#include "retcon/transport.h"

namespace retcon::test {

// One-way latency 0-125 ms (round trips up to 250 ms), jitter up to 50 ms, loss up to 25%,
// duplicates and reordering up to 10% each, and maybe one blackout of 50-600 ms that starts
// between 500 ms and `latest_blackout_start_ms`. The draws come in a fixed order, so a fixed
// RapidCheck seed keeps giving the same schedules.
inline LinkProfile arbitrary_link(int latest_blackout_start_ms = 3000) {
  LinkProfile link;
  link.latency_us = uint64_t(*rc::gen::inRange(0, 126)) * 1000;
  link.jitter_us = uint64_t(*rc::gen::inRange(0, 51)) * 1000;
  link.loss = *rc::gen::inRange(0, 26) / 100.0;
  link.duplicate = *rc::gen::inRange(0, 11) / 100.0;
  link.reorder = *rc::gen::inRange(0, 11) / 100.0;
  if (*rc::gen::arbitrary<bool>()) {
    const uint64_t start = uint64_t(*rc::gen::inRange(500, latest_blackout_start_ms)) * 1000;
    link.blackouts.push_back({start, start + uint64_t(*rc::gen::inRange(50, 600)) * 1000});
  }
  return link;
}

}  // namespace retcon::test
