// Checks the liveness promise of docs/NETWORKING.md on a Match, tick by tick (virtual clock):
//   1. a running machine whose advance is refused (prediction limit) for longer than the notify
//      delay has been told (prediction_limit, connection_interrupted, disconnected or
//      cannot_continue since the stall began);
//   2. with timeouts on, such a stall never goes on longer than the disconnect timeout plus a
//      grace (the larger of the handshake and disconnect timeouts: a peer that never sent a frame
//      may still be handshaking with a third machine; a second peer that falls silent during the
//      first one's timeout must report the cut or time out itself) without a disconnected (or
//      cannot_continue) event: counted from the stall's start, the last such event, or the last
//      time a machine died or froze (its own timeout runs from then);
//   3. with a handshake timeout, a machine not running has made handshake progress (an event)
//      within that timeout, or was told the match cannot start.
// Call observe() after every Match::tick(); violation() is empty while the promise holds.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "support/match_harness.h"

namespace retcon::test {

class LivenessMonitor {
 public:
  struct Limits {
    uint64_t notify_delay_us = 750000;
    uint64_t disconnect_timeout_us = 5000000;  // 0: timeouts off (only rule 1 applies)
    uint64_t handshake_timeout_us = 10000000;
    uint64_t slack_us = 50000;                 // a few ticks of scheduling
  };

  LivenessMonitor(Match& match, const Limits& limits) : match_(match), limits_(limits) {
    tracks_.resize(match.size());
  }

  // The time (virtual) at which machine m's event k was seen.
  uint64_t event_time(uint32_t m, size_t k) const { return tracks_[m].event_times[k]; }
  // First event of `type` (for `player`, or any with -1) on machine m: its index, or -1.
  long find_event(uint32_t m, EventType type, PlayerIndex player = -1) const {
    const std::vector<Event>& events = match_.machine(m).game.events;
    for (size_t k = 0; k < events.size(); ++k)
      if (events[k].type == type && (player < 0 || events[k].player == player)) return long(k);
    return -1;
  }
  uint64_t longest_stall_us() const { return longest_stall_us_; }
  const std::string& violation() const { return violation_; }

  void observe() {
    const uint64_t now = match_.now();
    for (uint32_t m = 0; m < match_.size(); ++m) {
      Track& t = tracks_[m];
      const bool failed = match_.machine(m).stopped || match_.machine(m).frozen;
      if (failed && !t.failed) last_failure_us_ = now;
      t.failed = failed;
    }
    for (uint32_t m = 0; m < match_.size(); ++m) {
      Machine& me = match_.machine(m);
      Track& t = tracks_[m];
      const size_t events_before = t.event_times.size();
      while (t.event_times.size() < me.game.events.size()) t.event_times.push_back(now);
      if (me.stopped) continue;
      if (t.first_poll_us == 0) t.first_poll_us = now;
      const Frame frame = me.session->current_frame();
      const bool refused = me.stalls > t.stalls && frame == t.frame;
      // Events since the frame last advanced count for a stall that follows: a session tells
      // when its window fills at a poll, which may be a tick the game spent waiting on
      // time-sync advice, before its first refused advance.
      if (frame != t.frame) t.events_at_advance = me.game.events.size();
      t.stalls = me.stalls;
      t.frame = frame;
      if (!me.session->running()) {
        check_start(m, t, now);
        continue;
      }
      if (!refused) {
        t.stalled = false;
        continue;
      }
      if (!t.stalled) {
        t.stalled = true;
        t.since_us = now;
        t.events_at = std::min(events_before, t.events_at_advance);  // this tick's poll counts too
      }
      check_stall(m, t, now);
    }
  }

 private:
  struct Track {
    std::vector<uint64_t> event_times;
    uint64_t first_poll_us = 0;
    Frame frame = kNullFrame;
    uint64_t stalls = 0;
    bool stalled = false;
    uint64_t since_us = 0;
    size_t events_at = 0;
    size_t events_at_advance = 0;  // the event count when the frame last advanced
    bool failed = false;           // stopped or frozen (the test's doing)
  };

  bool seen_since(uint32_t m, size_t from, std::initializer_list<EventType> types) const {
    const std::vector<Event>& events = match_.machine(m).game.events;
    for (size_t k = from; k < events.size(); ++k)
      for (EventType type : types)
        if (events[k].type == type) return true;
    return false;
  }

  void fail(uint32_t m, const std::string& what) {
    if (violation_.empty())
      violation_ = "machine " + std::to_string(m) + " at " + std::to_string(match_.now() / 1000) + " ms: " + what;
  }

  void check_stall(uint32_t m, const Track& t, uint64_t now) {
    // The stall began at the tick before the first refusal, at the latest.
    const uint64_t lasted = now - t.since_us + 16667;
    if (lasted > longest_stall_us_) longest_stall_us_ = lasted;
    const size_t from = t.events_at;
    if (lasted > limits_.notify_delay_us + limits_.slack_us &&
        !seen_since(m, from, {EventType::prediction_limit, EventType::connection_interrupted,
                              EventType::disconnected, EventType::cannot_continue}))
      fail(m, "stalled " + std::to_string(lasted / 1000) + " ms and nobody told the game");
    if (limits_.disconnect_timeout_us == 0) return;
    // The latest disconnected / cannot_continue event of this stall, its start, or the latest
    // machine failure: a machine that dies during a stall has its own timeout from then on,
    // and a cut being agreed may need its report (or that timeout) first.
    uint64_t since = std::max(t.since_us - 16667, last_failure_us_);
    const std::vector<Event>& events = match_.machine(m).game.events;
    for (size_t k = from; k < events.size(); ++k)
      if (events[k].type == EventType::disconnected || events[k].type == EventType::cannot_continue)
        since = std::max(since, t.event_times[k]);
    // The grace covers a peer that never sent a frame (it may still be handshaking with a third
    // machine: the handshake timeout) and a second peer that falls silent while the first one's
    // cut is being agreed (the cut needs its report, or its own silence timeout).
    const uint64_t grace = std::max(limits_.handshake_timeout_us, limits_.disconnect_timeout_us);
    if (now - since > limits_.disconnect_timeout_us + grace + limits_.slack_us)
      fail(m, "stalled " + std::to_string(lasted / 1000) + " ms, " + std::to_string((now - since) / 1000) +
                  " ms of it without a disconnected event");
  }

  void check_start(uint32_t m, const Track& t, uint64_t now) {
    if (limits_.handshake_timeout_us == 0 || match_.machine(m).spectator) return;
    if (seen_since(m, 0, {EventType::cannot_continue, EventType::handshake_rejected})) return;
    // The last sign of handshake progress (or the first poll).
    uint64_t last = t.first_poll_us;
    const std::vector<Event>& events = match_.machine(m).game.events;
    for (size_t k = 0; k < events.size(); ++k) {
      const EventType type = events[k].type;
      if (type == EventType::synchronizing || type == EventType::synchronized || type == EventType::disconnected)
        last = std::max(last, t.event_times[k]);
    }
    if (now - last > limits_.handshake_timeout_us + limits_.slack_us)
      fail(m, "not running, no handshake progress for " + std::to_string((now - last) / 1000) + " ms, and not told why");
  }

  Match& match_;
  Limits limits_;
  std::vector<Track> tracks_;
  uint64_t longest_stall_us_ = 0;
  uint64_t last_failure_us_ = 0;  // when a machine last died or froze
  std::string violation_;
};

}  // namespace retcon::test
