// An in-process fighter match: N player machines (+ spectators of machine 0), each a
// FighterPeer on its own NetworkSimulator over one InMemoryNetwork, driven by a virtual clock
// (no sleeping, no sockets: the same seed gives the same match). Samples numbers for charts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fighter_peer.h"
#include "retcon/transport.h"

namespace retcon::tools {

struct FighterMatchOptions {
  int players = 2;
  int spectators = 0;
  retcon::Frame frames = 3600;  // the last frame simulated; checksums compared at this frame
  LinkProfile link;             // every machine's outgoing traffic
  uint64_t seed = 1;
  int32_t max_prediction = 8;
  int32_t input_delay = 0;      // every player's
  uint32_t checksum_interval = 1;
  bool store_states = false;
  uint32_t sample_ticks = 30;   // one chart point per this many ticks (0.5 s)
  uint64_t settle_ticks = 300;  // stalls and waits count from this tick on (5 s)
  bool poll_between = true;     // poll every 2 ms between frames, as a real game loop does
  retcon::Frame diverge_at = -1;  // the last player machine's game diverges there (a desync)
};

// One chart point of one machine (averages / maxima over the sample window).
struct MachineSample {
  double ping_ms = 0;
  double advantage = 0;
  double rollbacks = 0;         // rollbacks in the window
  double max_depth = 0;         // deepest rollback in the window (frames)
  double stalls = 0;            // ticks refused by the prediction window
  double waits = 0;             // ticks skipped on time-sync advice
  double dark = 0;              // share of the window the link was in a blackout (0..1)
  double sent_bps = 0, received_bps = 0;
  double frame = 0;
};

struct MachineTotals {
  uint64_t rollbacks = 0, frames_resimulated = 0;
  uint32_t max_depth = 0;
  uint64_t stalls = 0;
  uint64_t waits = 0;
  uint64_t frames_advanced = 0;
  uint64_t ping_sum_us = 0, ping_samples = 0;
  // Stalls and waits from `settle` ticks on (the first seconds do not count).
  uint64_t stalls_settled = 0, waits_settled = 0, ticks_settled = 0;
  // Blackout recovery: ticks from the end of each blackout until 30 ticks in a row advanced.
  uint64_t recoveries = 0, recovery_ticks_sum = 0, recovery_ticks_max = 0;
};

class FighterMatch {
 public:
  static constexpr uint64_t kTickUs = 16667;
  static constexpr uint64_t kPollUs = 2000;  // polls between frames (poll_between)

  explicit FighterMatch(const FighterMatchOptions& o) : opt_(o) {}
  retcon::Result build();
  // One tick of every machine. True when every machine has confirmed `frames` (or failed).
  bool tick();
  bool finished() const;

  size_t machines() const { return machines_.size(); }
  fighter::FighterPeer& peer(size_t m) { return *machines_[m]->peer; }
  const fighter::FighterPeer& peer(size_t m) const { return *machines_[m]->peer; }
  const NetworkSimulator& simulator(size_t m) const { return *machines_[m]->sim; }
  const MachineTotals& totals(size_t m) const { return machines_[m]->totals; }
  const std::vector<MachineSample>& samples(size_t m) const { return machines_[m]->samples; }
  const std::vector<double>& sample_times() const { return times_; }
  uint64_t now_us() const { return now_; }
  // Mean |frame(p0) - frame(p1)| over the ticks both ran.
  double mean_skew() const { return skew_ticks_ ? double(skew_sum_) / double(skew_ticks_) : 0.0; }
  uint64_t running_ticks() const { return skew_ticks_; }
  uint64_t ticks() const { return ticks_; }
  const FighterMatchOptions& options() const { return opt_; }

 private:
  struct Machine {
    InMemoryTransport* wire = nullptr;
    std::unique_ptr<NetworkSimulator> sim;
    std::unique_ptr<fighter::FighterPeer> peer;
    MachineTotals totals;
    bool recovering = false;
    uint64_t recovery_start = 0, normal_run = 0;
    MachineSample window;
    uint64_t window_sent = 0, window_received = 0;
    std::vector<MachineSample> samples;
  };
  void sample();

  FighterMatchOptions opt_;
  InMemoryNetwork net_;
  std::vector<std::unique_ptr<Machine>> machines_;
  std::vector<double> times_;
  uint64_t now_ = 0, ticks_ = 0;
  uint64_t skew_sum_ = 0, skew_ticks_ = 0;
  bool was_dark_ = false;
};

}  // namespace retcon::tools
