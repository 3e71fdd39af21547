#include "bench_registry.h"

#include <algorithm>
#include <regex>
#include <set>

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

std::vector<std::string>& name_list() {
  static std::vector<std::string> names;
  return names;
}

double min_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

}  // namespace

void add_comparison(Comparison row) { comparison_list().push_back(std::move(row)); }
const std::vector<Comparison>& comparisons() { return comparison_list(); }

void add_work_check(WorkCheck check) { check_list().push_back(std::move(check)); }
const std::vector<WorkCheck>& work_checks() { return check_list(); }

const std::vector<std::string>& benchmark_names() { return name_list(); }

std::string expand_filter(const std::string& user_filter) {
  // Google Benchmark's own conventions: empty, "all" or "." run everything; "-" negates.
  if (user_filter.empty() || user_filter == "all" || user_filter == "." || user_filter[0] == '-') return user_filter;
  std::regex pattern;
  try {
    pattern = std::regex(user_filter, std::regex::extended);
  } catch (const std::regex_error&) {
    return user_filter;  // let Google Benchmark report it
  }
  auto matches = [&](const std::string& name) { return !name.empty() && std::regex_search(name, pattern); };
  std::set<std::string> selected;
  for (const std::string& name : benchmark_names())
    if (matches(name)) selected.insert(name);
  for (const Comparison& row : comparisons()) {
    const std::string* parts[] = {&row.measured, &row.baseline, &row.measured_minus, &row.baseline_minus};
    bool any = false;
    for (const std::string* part : parts) any = any || matches(*part);
    if (!any) continue;
    for (const std::string* part : parts)
      if (!part->empty()) selected.insert(*part);
  }
  if (selected.empty()) return user_filter;
  std::string expanded = "^(";
  for (const std::string& name : selected) {
    if (expanded.size() > 2) expanded += '|';
    expanded += name;
  }
  return expanded + ")$";
}

benchmark::internal::Benchmark* add_benchmark(const std::string& name, void (*fn)(benchmark::State&, size_t),
                                              size_t size) {
  name_list().push_back(name);
  return benchmark::RegisterBenchmark(name.c_str(), fn, size)
      ->ComputeStatistics("min", min_of)
      ->Unit(size >= (size_t{1} << 20) ? benchmark::kMicrosecond : benchmark::kNanosecond);
}

}  // namespace retcon::bench
