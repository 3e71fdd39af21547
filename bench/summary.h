// The reporter of retcon_bench: shows Google Benchmark's table (aggregates only when repeated,
// in registration order) and keeps every repetition's numbers for the summary printed after it.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace retcon::bench {

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // Prints the comparison rows of bench_registry.h and the work checks to `out`.
  void print_summary(std::FILE* out) const;

 private:
  struct Samples {
    std::vector<double> cpu_ns_per_frame;  // one per repetition
    double frames = 0;
    double allocations = 0;
  };
  const Samples* find(const std::string& name) const;

  std::map<std::string, Samples> samples_;
  std::map<int64_t, std::vector<Run>> shown_;  // by family index = registration order
};

}  // namespace retcon::bench
