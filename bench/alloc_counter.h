// Counts heap allocations made through the global operator new in retcon_bench (replaced in
// alloc_counter.cpp), so every benchmark can report its allocations per frame in steady state.
#pragma once

#include <cstdint>

namespace retcon::bench {

uint64_t allocation_count() noexcept;

}  // namespace retcon::bench
