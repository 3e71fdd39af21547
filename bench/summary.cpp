#include "summary.h"

#include <algorithm>
#include <cmath>

#include "bench_registry.h"

namespace retcon::bench {
namespace {

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  auto it = run.counters.find(name);
  return it == run.counters.end() ? 0.0 : it->second.value;
}

}  // namespace

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (run.run_type == Run::RT_Iteration && !run.error_occurred) {
      const double frames = counter(run, "frames");
      if (frames > 0) {
        Samples& s = samples_[run.run_name.function_name];
        s.cpu_ns_per_frame.push_back(run.cpu_accumulated_time * 1e9 / frames);
        s.frames += frames;
        s.allocations += counter(run, "allocs");
      }
    }
    // Repeated runs: show min, median and cv rather than every repetition; totals are for the summary.
    const bool shown_aggregate = run.run_type == Run::RT_Aggregate &&
                                 (run.aggregate_name == "min" || run.aggregate_name == "median" || run.aggregate_name == "cv");
    if (shown_aggregate || (run.run_type == Run::RT_Iteration && run.repetitions <= 1) || run.error_occurred) {
      Run shown = run;
      shown.counters.erase("frames");
      shown.counters.erase("allocs");
      shown_[run.family_index].push_back(std::move(shown));
    }
  }
}

void SummaryReporter::Finalize() {
  // With random interleaving, benchmarks finish in random order; print them in registration order.
  for (auto& [family, runs] : shown_) benchmark::ConsoleReporter::ReportRuns(runs);
  shown_.clear();
  benchmark::ConsoleReporter::Finalize();
}

const SummaryReporter::Samples* SummaryReporter::find(const std::string& name) const {
  auto it = samples_.find(name);
  return it == samples_.end() || it->second.cpu_ns_per_frame.empty() ? nullptr : &it->second;
}

void SummaryReporter::print_summary(std::FILE* out) const {
  if (samples_.empty()) return;  // nothing ran (--benchmark_list_tests, a filter matching nothing)
  std::fprintf(out,
               "\nretcon benchmark summary: CPU time per frame, best of the repetitions; ratio = retcon / raw "
               "baseline doing the same copies, hashes and steps;\ndifference = retcon - raw baseline, retcon's own "
               "cost.\nTargets are informational (ratios from one "
               "run on a shared machine); the exit code does not depend on them.\n\n");
  std::fprintf(out, "%-38s %12s %12s %10s %8s %11s %6s  %-12s %-17s %s\n", "scenario", "retcon", "raw baseline",
               "difference", "ratio", "target", "result", "allocs/frame", "(allocs/frames)", "unit");
  for (const Comparison& row : comparisons()) {
    const Samples* m = find(row.measured);
    const Samples* b = row.baseline.empty() ? nullptr : find(row.baseline);
    const Samples* mm = row.measured_minus.empty() ? nullptr : find(row.measured_minus);
    const Samples* bm = row.baseline_minus.empty() ? nullptr : find(row.baseline_minus);
    const bool needs_minus = !row.measured_minus.empty();
    if (m == nullptr) continue;  // filtered out
    if ((!row.baseline.empty() && b == nullptr) || (needs_minus && (mm == nullptr || bm == nullptr))) {
      std::fprintf(out, "%-40s %13s\n", row.label.c_str(), "(baseline not run)");
      continue;
    }
    double measured = best(m->cpu_ns_per_frame);
    double baseline = b ? best(b->cpu_ns_per_frame) : 0.0;
    double allocations = m->allocations, frames = m->frames;
    if (needs_minus) {
      measured -= best(mm->cpu_ns_per_frame);
      baseline -= best(bm->cpu_ns_per_frame);
      allocations += mm->allocations;
      frames += mm->frames;
    }
    measured *= row.frames_per_unit;
    baseline *= row.frames_per_unit;
    const double ratio = b && baseline > 0 ? measured / baseline : 0.0;

    char measured_text[32], baseline_text[32], difference_text[32], ratio_text[16], target_text[32];
    std::snprintf(difference_text, sizeof difference_text, b ? "%+.1f" : "-", measured - baseline);
    if (b != nullptr) {
      std::snprintf(measured_text, sizeof measured_text, "%.1f", measured);
      std::snprintf(baseline_text, sizeof baseline_text, "%.1f", baseline);
    } else {  // a raw measurement shown for reference
      std::snprintf(measured_text, sizeof measured_text, "-");
      std::snprintf(baseline_text, sizeof baseline_text, "%.1f", measured);
    }
    std::snprintf(ratio_text, sizeof ratio_text, b && baseline > 0 ? "%.3fx" : "-", ratio);
    const char* result = "info";
    switch (row.kind) {
      case TargetKind::none:
        std::snprintf(target_text, sizeof target_text, "-");
        break;
      case TargetKind::max_ratio:
        std::snprintf(target_text, sizeof target_text, "<= %.2fx", row.target);
        result = b && baseline > 0 && ratio <= row.target ? "PASS" : "MISS";
        break;
      case TargetKind::max_ns:
        std::snprintf(target_text, sizeof target_text, "<= %.0f ns", row.target);
        result = measured <= row.target ? "PASS" : "MISS";
        break;
    }
    // allocs: heap allocations inside the timed loops of the retcon benchmark(s) of the row, over
    // `frames` frames (all repetitions); 0 means zero allocations per frame in steady state.
    char frames_text[16];
    if (frames >= 1e6)
      std::snprintf(frames_text, sizeof frames_text, "%.1fM", frames / 1e6);
    else if (frames >= 1e4)
      std::snprintf(frames_text, sizeof frames_text, "%.0fk", frames / 1e3);
    else
      std::snprintf(frames_text, sizeof frames_text, "%.0f", frames);
    char allocs_text[48];
    std::snprintf(allocs_text, sizeof allocs_text, "(%.0f/%s)", allocations, frames_text);
    std::fprintf(out, "%-38s %12s %12s %10s %8s %11s %6s  %-12.3g %-17s %s\n", row.label.c_str(), measured_text,
                 baseline_text, difference_text, ratio_text, target_text, result,
                 frames > 0 ? allocations / frames : 0.0, allocs_text, row.unit);
  }

  std::fprintf(out,
               "\nallocs/frame: heap allocations (counted by a replaced operator new) inside the timed loops of the\n"
               "row's retcon benchmark(s), all repetitions, divided by the frames they ran; setup and warm-up frames\n"
               "are outside the loops. 0 = no allocation in steady state.\n");
  std::fprintf(out, "\nwork checks (session and baseline run the same frames; state bytes and counters compared):\n");
  for (const WorkCheck& c : work_checks())
    std::fprintf(out, "  %-4s %-42s %s\n", c.ok ? "ok" : "FAIL", c.scenario.c_str(), c.detail.c_str());
}

}  // namespace retcon::bench
