// retcon_bench: Google Benchmark table, then a summary of retcon against raw baselines.
//
// Defaults keep a full run under about a minute on a shared 2-core machine: 5 repetitions of
// 0.1 s each, randomly interleaved so the session and its baseline see the same machine noise;
// the summary takes the best repetition. Any --benchmark_* flag given on the command line comes
// after the defaults and so overrides them (e.g. --benchmark_filter=rollback, --benchmark_min_time=1).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "bench_registry.h"
#include "summary.h"

namespace retcon::bench {
void register_raw_benchmarks();
void register_local_benchmarks();
void register_sync_test_benchmarks();
void register_rollback_benchmarks();
}  // namespace retcon::bench

namespace {

// The allocation counts in the summary mean something only if the replaced operator new is the one
// in use: check that one `new` is seen.
void check_allocation_counter() {
  const uint64_t before = retcon::bench::allocation_count();
  auto probe = std::make_unique<int>(1);
  benchmark::DoNotOptimize(probe.get());
  const uint64_t seen = retcon::bench::allocation_count() - before;
  retcon::bench::add_work_check({"allocation counter", seen == 1,
                                 "one `new` counted as " + std::to_string(seen) + " allocation(s)"});
}

}  // namespace

int main(int argc, char** argv) {
  check_allocation_counter();
  // Registration first: the filter expansion below needs every name and comparison row.
  retcon::bench::register_raw_benchmarks();
  retcon::bench::register_local_benchmarks();
  retcon::bench::register_sync_test_benchmarks();
  retcon::bench::register_rollback_benchmarks();

  char min_time[] = "--benchmark_min_time=0.1";
  char repetitions[] = "--benchmark_repetitions=5";
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  std::vector<char*> args{argv[0], min_time, repetitions, interleave};
  std::string filter;  // must outlive Initialize: args points into it
  constexpr const char kFilterFlag[] = "--benchmark_filter=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kFilterFlag, sizeof kFilterFlag - 1) == 0) {
      filter = std::string(kFilterFlag) + retcon::bench::expand_filter(argv[i] + sizeof kFilterFlag - 1);
      args.push_back(filter.data());
    } else {
      args.push_back(argv[i]);
    }
  }
  args.push_back(nullptr);
  int count = int(args.size()) - 1;
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  const bool color = isatty(STDOUT_FILENO) != 0;
  retcon::bench::SummaryReporter reporter(color ? benchmark::ConsoleReporter::OO_ColorTabular
                                                : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::fflush(stdout);
  reporter.print_summary(stdout);
  benchmark::Shutdown();
  return 0;
}
