// A replaced global operator new that can be told to fail the Nth allocation (by throwing
// std::bad_alloc, as a real out-of-memory does), and that counts live allocations so a test can
// see that a failed creation freed everything it had allocated.
#pragma once

#include <cstdint>

namespace retcon::test {

// From now on, the `n`th operator new call (1 = the next one) throws std::bad_alloc. Later
// calls succeed again. 0 disarms.
void fail_allocation(uint64_t n) noexcept;
// operator new calls since the last fail_allocation(), failed one included.
uint64_t allocations_since_armed() noexcept;
// True once the armed allocation has failed.
bool allocation_failed() noexcept;
// Allocations made and not yet deleted (by any form of operator new/delete).
int64_t live_allocations() noexcept;

}  // namespace retcon::test
