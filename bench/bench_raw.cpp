// Raw baselines shared by several rows: a save (memcpy of the state into a ring slot) plus the
// step per frame, and one XXH3-64 of the state.
#include <xxhash.h>

#include "bench_game.h"
#include "bench_registry.h"

namespace retcon::bench {
namespace {

// The ring has 2 slots: what a local session keeps (history 0 + 2).
void raw_save_step(benchmark::State& state, size_t size) {
  BenchGame game(size);
  RawRing ring(2, size);
  Frame f = 0;
  run_timed(state, 1, [&] {
    game.copy_out(ring.slot(f));
    game.step(local_input(f), remote_input(f));
    ++f;
    benchmark::ClobberMemory();
  });
}

void raw_xxh3(benchmark::State& state, size_t size) {
  BenchGame game(size);
  run_timed(state, 1, [&] {
    uint64_t h = XXH3_64bits(game.state(), size);
    benchmark::DoNotOptimize(h);
    benchmark::ClobberMemory();
  });
}

}  // namespace

void register_raw_benchmarks() {
  for (size_t size : {kSmallState, kLargeState}) {
    add_benchmark("raw/save_step/" + size_name(size), raw_save_step, size);
    add_benchmark("raw/xxh3/" + size_name(size), raw_xxh3, size);
    Comparison hash;
    hash.label = "raw XXH3-64, " + size_name(size);
    hash.measured = "raw/xxh3/" + size_name(size);
    hash.unit = "ns/hash";
    add_comparison(hash);
  }
}

}  // namespace retcon::bench
