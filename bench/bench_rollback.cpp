// Rollback of 8 frames through retcon::detail::RollbackDriver: player 0 local, player 1 remote,
// max_prediction 8, every frame saved.
//
// Method. A rollback cannot be set up and measured on its own without timing the setup, so each
// benchmark iteration is one steady-state cycle of 8 frames:
//   1. 8 x (add player 0's input, advance). Player 1's input is predicted (carried forward). The
//      first advance of the cycle finds that the previous cycle's predictions were wrong, loads
//      the first wrong frame and re-simulates the 8 frames of the previous cycle, saving frames
//      2..8 of them (the first one's save is still valid: it precedes the wrong input); then it
//      saves and steps its own frame as usual.
//   2. Player 1's real inputs for the 8 frames arrive; each differs from the prediction.
// So one cycle = 8 predicted frames (8 saves + 8 steps) + one correction (1 load + 8 steps +
// 7 saves). The baseline cycle does exactly that raw, on a ring of the same 10 slots:
//   correction of the previous 8 frames: 1 load, 8 steps with the real inputs, 7 saves;
//   8 predicted frames: 8 saves + 8 steps with the predicted input.
// The full cycle is the headline ratio (it contains no setup: every operation in it is part of
// playing with rollbacks). To isolate the correction, the same cycle is also run with player 1's
// real input equal to the prediction (no rollback ever: 8 saves + 8 steps + input delivery), for
// the session and for the baseline; correction cost = mispredicted cycle - predicted-right cycle.
// That difference is the rollback's load, re-simulated steps and saves, plus the work of noticing
// the misprediction, measured as the same subtraction on both sides.
#include "bench_game.h"
#include "bench_registry.h"
#include "core/rollback_driver.h"

namespace retcon::bench {
namespace {

constexpr int32_t kWindow = 8;
constexpr uint32_t kRingSlots = kWindow + 2;  // RollbackDriver keeps history + 2 saves

// Player 1's real input: changing every frame (always mispredicted) or constant (never).
uint32_t remote_real(Frame f, bool mispredict) noexcept { return mispredict ? remote_input(f) : 0x5eed5eedu; }
// Carry-forward: the last confirmed input before `first`, zeros before any.
uint32_t remote_predicted(Frame first, bool mispredict) noexcept {
  return first == 0 ? 0u : remote_real(first - 1, mispredict);
}

class SessionCycles {
 public:
  bool init(BenchGame& game) {
    if (driver_.init(bench_config(game, kWindow), kWindow, SaveMode::every_frame) != Result::ok) return false;
    driver_.set_local(0, true);
    return true;
  }
  // One cycle starting at frame `base` (a multiple of 8).
  bool cycle(Frame base, bool mispredict) noexcept {
    bool ok = true;
    for (Frame f = base; f < base + kWindow; ++f) {
      const uint32_t a = local_input(f);
      ok &= driver_.add_local_input(0, &a, sizeof a) == Result::ok;
      ok &= driver_.advance() == Result::ok;
    }
    for (Frame f = base; f < base + kWindow; ++f) {
      const uint32_t b = remote_real(f, mispredict);
      ok &= driver_.add_remote_input(1, f, reinterpret_cast<const uint8_t*>(&b)) == Result::ok;
    }
    return ok;
  }
  const SessionStats& stats() const noexcept { return driver_.stats(); }

 private:
  detail::RollbackDriver driver_;
};

class RawCycles {
 public:
  explicit RawCycles(BenchGame& game) : game_(game), ring_(kRingSlots, game.size()) {}

  void cycle(Frame base, bool mispredict) noexcept {
    const size_t size = game_.size();
    const Frame previous = base - kWindow;
    // Correct the previous cycle if its prediction was wrong (only its first frame can tell:
    // the prediction is the same for all 8 frames and the real inputs are compared in order).
    if (previous >= 0 && remote_predicted(previous, mispredict) != remote_real(previous, mispredict)) {
      game_.copy_in(ring_.slot(previous), size);
      ++loads_;
      for (Frame f = previous; f < base; ++f) {
        if (f != previous) {
          game_.copy_out(ring_.slot(f));
          ++saves_;
        }
        game_.step(local_input(f), remote_real(f, mispredict));
      }
    }
    const uint32_t predicted = remote_predicted(base, mispredict);
    for (Frame f = base; f < base + kWindow; ++f) {
      game_.copy_out(ring_.slot(f));
      game_.step(local_input(f), predicted);
    }
    saves_ += kWindow;
  }
  uint64_t saves() const noexcept { return saves_; }
  uint64_t loads() const noexcept { return loads_; }

 private:
  BenchGame& game_;
  RawRing ring_;
  uint64_t saves_ = 0;  // two adds per cycle; for the work check
  uint64_t loads_ = 0;
};

constexpr Frame kPrimingCycles = 2;

template <bool Mispredict>
void rollback_session(benchmark::State& state, size_t size) {
  BenchGame game(size);
  SessionCycles session;
  if (!session.init(game)) return state.SkipWithError("RollbackDriver::init failed");
  bool ok = true;
  Frame base = 0;
  for (; base < kPrimingCycles * kWindow; base += kWindow) ok &= session.cycle(base, Mispredict);
  const uint64_t rollbacks_before = session.stats().rollbacks;
  run_timed(state, kWindow, [&] {
    ok &= session.cycle(base, Mispredict);
    base += kWindow;
  });
  const uint64_t rollbacks = session.stats().rollbacks - rollbacks_before;
  if (!ok) return state.SkipWithError("a driver call failed");
  if (rollbacks != (Mispredict ? uint64_t(state.iterations()) : 0)) state.SkipWithError("unexpected rollback count");
}

template <bool Mispredict>
void rollback_raw(benchmark::State& state, size_t size) {
  BenchGame game(size);
  RawCycles raw(game);
  Frame base = 0;
  for (; base < kPrimingCycles * kWindow; base += kWindow) raw.cycle(base, Mispredict);
  run_timed(state, kWindow, [&] {
    raw.cycle(base, Mispredict);
    base += kWindow;
    benchmark::ClobberMemory();
  });
}

void check_rollback(size_t size, bool mispredict) {
  constexpr Frame kCycles = 6;
  BenchGame lib(size), raw_game(size);
  SessionCycles session;
  RawCycles raw(raw_game);
  bool ok = session.init(lib);
  for (Frame c = 0; ok && c < kCycles; ++c) {
    ok &= session.cycle(c * kWindow, mispredict);
    raw.cycle(c * kWindow, mispredict);
  }
  const SessionStats& s = session.stats();
  // The driver runs the correction of the last cycle only on its next advance; the raw side too.
  ok = ok && std::memcmp(lib.state(), raw_game.state(), size) == 0 && s.saves == raw.saves() &&
       s.loads == raw.loads() && s.rollbacks == raw.loads() &&
       s.frames_resimulated == raw.loads() * uint64_t(kWindow);
  add_work_check({std::string("rollback 8 frames ") + (mispredict ? "" : "(no misprediction) ") + size_name(size), ok,
                  "same final state; saves " + std::to_string(s.saves) + "/" + std::to_string(raw.saves()) +
                      ", loads " + std::to_string(s.loads) + "/" + std::to_string(raw.loads()) + ", re-simulated " +
                      std::to_string(s.frames_resimulated) + "/" + std::to_string(raw.loads() * kWindow)});
}

}  // namespace

void register_rollback_benchmarks() {
  for (size_t size : {kSmallState, kLargeState}) {
    check_rollback(size, true);
    check_rollback(size, false);
    const std::string s = size_name(size);
    add_benchmark("rollback8_session/" + s, rollback_session<true>, size);
    add_benchmark("rollback8_raw/" + s, rollback_raw<true>, size);
    add_benchmark("predicted_right_session/" + s, rollback_session<false>, size);
    add_benchmark("predicted_right_raw/" + s, rollback_raw<false>, size);

    Comparison cycle;
    cycle.label = "rollback 8: cycle, " + s;
    cycle.measured = "rollback8_session/" + s;
    cycle.baseline = "rollback8_raw/" + s;
    Comparison correction;
    correction.label = "rollback 8: correction only, " + s;
    correction.measured = "rollback8_session/" + s;
    correction.baseline = "rollback8_raw/" + s;
    correction.measured_minus = "predicted_right_session/" + s;
    correction.baseline_minus = "predicted_right_raw/" + s;
    correction.frames_per_unit = kWindow;
    correction.unit = "ns/rollback";
    if (size == kLargeState) {
      cycle.kind = correction.kind = TargetKind::max_ratio;
      cycle.target = correction.target = 1.10;
    }
    add_comparison(cycle);
    add_comparison(correction);
  }
}

}  // namespace retcon::bench
