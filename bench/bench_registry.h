// What the summary compares: each row names a measured benchmark, its raw baseline and a target.
// Benchmark files register their benchmarks and rows here; main.cpp prints the rows at the end.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.h"

namespace retcon::bench {

enum class TargetKind { none, max_ratio, max_ns };

struct Comparison {
  std::string label;
  std::string measured;  // benchmark names
  std::string baseline;
  // Optional: a benchmark whose per-frame time is subtracted from `measured` (and likewise for the
  // baseline), to isolate the cost of one part of a cycle.
  std::string measured_minus;
  std::string baseline_minus;
  double frames_per_unit = 1;   // the row's unit is this many frames (8 for one correction)
  const char* unit = "ns/frame";
  TargetKind kind = TargetKind::none;
  double target = 0;
};

void add_comparison(Comparison row);
const std::vector<Comparison>& comparisons();

// A check, run before the benchmarks, that a session and its baseline did the same work.
struct WorkCheck {
  std::string scenario;
  bool ok;
  std::string detail;
};
void add_work_check(WorkCheck check);
const std::vector<WorkCheck>& work_checks();

// Every registered benchmark name, in registration order.
const std::vector<std::string>& benchmark_names();

// The --benchmark_filter to run: benchmarks matching `user_filter` plus, for every comparison row
// with a matching benchmark, all the benchmarks that row needs (so `--benchmark_filter=local`
// still measures the local session's baseline). Names are plain [A-Za-z0-9_/] text.
std::string expand_filter(const std::string& user_filter);

// Registers `fn(state, size)` under `name`, with the statistics the summary needs.
benchmark::internal::Benchmark* add_benchmark(const std::string& name, void (*fn)(benchmark::State&, size_t),
                                              size_t size);

// Times `body` (one iteration = `frames_per_iteration` frames) and records, as counters, the frames
// run and the heap allocations made inside the timed loop.
template <class Body>
void run_timed(benchmark::State& state, uint32_t frames_per_iteration, Body&& body) {
  const uint64_t allocations_before = allocation_count();
  for (auto _ : state) body();
  const uint64_t allocations = allocation_count() - allocations_before;
  const double frames = double(state.iterations()) * frames_per_iteration;
  state.counters["frames"] = frames;
  state.counters["allocs"] = double(allocations);
  state.counters["allocs/frame"] = frames > 0 ? double(allocations) / frames : 0.0;
  // Seconds per frame (shown with an SI prefix: 38.2n is 38.2 ns).
  state.counters["time/frame"] = benchmark::Counter(frames, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

inline std::string size_name(size_t size) {
  return size >= (size_t{1} << 20) ? std::to_string(size >> 20) + "MiB" : std::to_string(size) + "B";
}

}  // namespace retcon::bench
