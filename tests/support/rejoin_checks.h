// Checks over a match in which a player rejoins (tests/session/rejoin*_test.cpp): the events
// each machine saw about a player, answering every rejoin request, a crash and restart, and the
// states against the lockstep reference.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/match_harness.h"

namespace retcon::test {

struct Seen {
  Frame cut = kNullFrame;       // the crashed player's agreed cut (disconnected event)
  Frame rejoining = kNullFrame;
  Frame rejoined = kNullFrame;
  size_t requests = 0;
};

// The events about `player` on machine m.
inline Seen seen(Match& match, uint32_t m, PlayerIndex player) {
  Seen s;
  for (const Event& e : match.machine(m).game.events) {
    if (e.player != player) continue;
    if (e.type == EventType::disconnected && s.cut == kNullFrame) s.cut = e.frame;
    if (e.type == EventType::player_rejoining) s.rejoining = e.frame;
    if (e.type == EventType::player_rejoined) s.rejoined = e.frame;
    if (e.type == EventType::rejoin_requested) ++s.requests;
  }
  return s;
}

// Every rejoin request on every machine is answered with `accept` (as a game's lobby would).
inline void answer_requests(Match& match, std::vector<size_t>& answered, bool accept) {
  answered.resize(match.size(), 0);
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    if (me.stopped) continue;
    for (size_t k = answered[m]; k < me.game.events.size(); ++k) {
      const Event& e = me.game.events[k];
      if (e.type == EventType::rejoin_requested) {
        EXPECT_EQ(me.session->answer_rejoin(e.player, accept), Result::ok);
      }
    }
    answered[m] = me.game.events.size();
  }
}

// Ticks, accepting every rejoin request, until machine `watcher` saw `event` (e.g.
// &Seen::rejoining) about `player` or `max_ticks` passed. Returns that frame (kNullFrame: never).
inline Frame accept_until_seen(Match& match, std::vector<size_t>& answered, uint32_t watcher, PlayerIndex player,
                               Frame Seen::*event, int max_ticks) {
  for (int t = 0; t < max_ticks && seen(match, watcher, player).*event == kNullFrame; ++t) {
    match.tick();
    answer_requests(match, answered, true);
  }
  return seen(match, watcher, player).*event;
}

// Ticks, accepting every rejoin request, until every player machine that is not stopped
// confirmed `frames` or `max_ticks` passed.
inline void accept_until_confirmed(Match& match, std::vector<size_t>& answered, Frame frames, int max_ticks) {
  for (int t = 0; t < max_ticks; ++t) {
    match.tick();
    answer_requests(match, answered, true);
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m) {
      Machine& me = match.machine(m);
      if (!me.stopped && !me.spectator && me.session->confirmed_frame() < frames) done = false;
    }
    if (done) return;
  }
}

// Three machines whose rejoin state (256 KiB at 64 KiB/s) takes about 4 s to arrive: long enough
// for a machine to die while it is on its way.
inline MatchOptions slow_transfer_rejoin_options(Frame frames) {
  MatchOptions o;
  o.machines = 3;
  o.frames = frames;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.state_padding = size_t{256} << 10;
  o.transfer_bytes_per_second = 64u << 10;
  o.disconnect_timeout_us = 1000000;
  o.link.latency_us = 20000;
  return o;
}

// Machine `crash` (player `crash`) crashes once the match reached `crash_at`, the others drop it
// (agreed cut), then it starts again on a new address and rejoins. Returns the cut.
inline Frame crash_and_restart(Match& match, uint32_t crash, Frame crash_at, uint32_t watcher) {
  while (match.machine(watcher).session->current_frame() < crash_at) match.tick();
  match.machine(crash).stopped = true;
  for (int t = 0; t < 2000 && seen(match, watcher, PlayerIndex(crash)).cut == kNullFrame; ++t) match.tick();
  const Frame cut = seen(match, watcher, PlayerIndex(crash)).cut;
  EXPECT_NE(cut, kNullFrame) << "the crash is noticed";
  for (int t = 0; t < 30; ++t) match.tick();
  EXPECT_TRUE(match.restart_rejoining(crash));
  return cut;
}

// Every machine's states of frames it ran (the rejoined one: from its state on) at confirmed
// frames equal the reference up to `upto`.
inline void expect_states_agree(Match& match, const std::vector<uint64_t>& ref, Frame upto) {
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    if (me.stopped) continue;
    EXPECT_EQ(me.game.frame_errors, 0) << "machine " << m;
    const Frame last = std::min({upto, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    EXPECT_GE(last, upto) << "machine " << m << " got that far";
    Frame first = 0;
    while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    for (Frame f = first; f <= last; ++f)
      ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "machine " << m << " frame " << f;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
  }
}

}  // namespace retcon::test
