// Live heap accounting for the soak binary: a replaced global operator new/delete counts the
// allocations and bytes alive right now, and every allocation ever made, so the soak can check
// that memory stops growing once the match has warmed up.
#pragma once

#include <cstdint>

namespace retcon::soak {

struct HeapCounts {
  uint64_t live_allocations;  // operator new calls not yet matched by a delete
  uint64_t live_bytes;        // their usable sizes (malloc_usable_size), as the allocator sees them
  uint64_t total_allocations; // every operator new call since the program started
};

HeapCounts heap_counts() noexcept;

}  // namespace retcon::soak
