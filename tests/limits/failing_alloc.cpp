#include "limits/failing_alloc.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(_WIN32)
#include <malloc.h>  // _aligned_malloc
#endif

namespace {

// Windows (MinGW, msvcrt) has no posix_memalign: over-aligned blocks come from _aligned_malloc
// and go back to _aligned_free.
#if defined(_WIN32)
void* allocate_aligned(std::size_t alignment, std::size_t size) { return _aligned_malloc(size, alignment); }
void free_aligned(void* p) { _aligned_free(p); }
#else
void* allocate_aligned(std::size_t alignment, std::size_t size) {
  void* p = nullptr;
  return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}
void free_aligned(void* p) { std::free(p); }
#endif

std::atomic<uint64_t> g_fail_at{0};  // 0: never
std::atomic<uint64_t> g_calls{0};
std::atomic<bool> g_failed{false};
std::atomic<int64_t> g_live{0};

void* allocate(std::size_t size, std::size_t alignment) {
  const uint64_t call = g_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  if (call == g_fail_at.load(std::memory_order_relaxed)) {
    g_failed.store(true, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size ? size : 1);
  } else {
    p = allocate_aligned(alignment, size ? size : 1);
  }
  if (p == nullptr) throw std::bad_alloc();
  g_live.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void release(void* p, std::size_t alignment = 0) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  if (alignment <= alignof(std::max_align_t)) {
    std::free(p);
  } else {
    free_aligned(p);
  }
}

}  // namespace

namespace retcon::test {
void fail_allocation(uint64_t n) noexcept {
  g_calls.store(0, std::memory_order_relaxed);
  g_failed.store(false, std::memory_order_relaxed);
  g_fail_at.store(n, std::memory_order_relaxed);
}
uint64_t allocations_since_armed() noexcept { return g_calls.load(std::memory_order_relaxed); }
bool allocation_failed() noexcept { return g_failed.load(std::memory_order_relaxed); }
int64_t live_allocations() noexcept { return g_live.load(std::memory_order_relaxed); }
}  // namespace retcon::test

void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new[](std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t al) { return allocate(size, std::size_t(al)); }
void* operator new[](std::size_t size, std::align_val_t al) { return allocate(size, std::size_t(al)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try { return allocate(size, 0); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try { return allocate(size, 0); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t al) noexcept { release(p, std::size_t(al)); }
void operator delete[](void* p, std::align_val_t al) noexcept { release(p, std::size_t(al)); }
void operator delete(void* p, std::size_t, std::align_val_t al) noexcept { release(p, std::size_t(al)); }
void operator delete[](void* p, std::size_t, std::align_val_t al) noexcept { release(p, std::size_t(al)); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
