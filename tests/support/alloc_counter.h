// Counts heap allocations in the test binary that links alloc_counter.cpp (a replaced global
// operator new), so tests can assert a steady state allocates nothing.
#pragma once

#include <cstdint>

namespace retcon::test {
uint64_t allocation_count() noexcept;
}
