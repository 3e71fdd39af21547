#include "bench_registry.h"

#include <algorithm>

namespace retcon::bench {
namespace {

std::vector<Comparison>& comparison_list() {
  static std::vector<Comparison> rows;
  return rows;
}

std::vector<WorkCheck>& check_list() {
  static std::vector<WorkCheck> checks;
  return checks;
}

double min_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

}  // namespace

void add_comparison(Comparison row) { comparison_list().push_back(std::move(row)); }
const std::vector<Comparison>& comparisons() { return comparison_list(); }

void add_work_check(WorkCheck check) { check_list().push_back(std::move(check)); }
const std::vector<WorkCheck>& work_checks() { return check_list(); }

benchmark::internal::Benchmark* add_benchmark(const std::string& name, void (*fn)(benchmark::State&, size_t),
                                              size_t size) {
  return benchmark::RegisterBenchmark(name.c_str(), fn, size)
      ->ComputeStatistics("min", min_of)
      ->Unit(size >= (size_t{1} << 20) ? benchmark::kMicrosecond : benchmark::kNanosecond);
}

}  // namespace retcon::bench
