// The replaced operator new/delete behind live_heap.h. Sizes come from malloc_usable_size, so
// every delete form (sized, unsized, array) subtracts exactly what its new added. The aligned
// forms are replaced too, so no allocation escapes the count.
#include "soak/live_heap.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_total{0};

void* counted(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  g_live.fetch_add(1, std::memory_order_relaxed);
  g_total.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(malloc_usable_size(p), std::memory_order_relaxed);
  return p;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  g_bytes.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

void* aligned(std::size_t size, std::align_val_t al) {
  const std::size_t a = static_cast<std::size_t>(al) < sizeof(void*) ? sizeof(void*) : static_cast<std::size_t>(al);
  void* p = nullptr;
  if (posix_memalign(&p, a, size ? size : 1) != 0) p = nullptr;
  return counted(p);
}

}  // namespace

namespace retcon::soak {
HeapCounts heap_counts() noexcept {
  return HeapCounts{g_live.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed),
                    g_total.load(std::memory_order_relaxed)};
}
}  // namespace retcon::soak

void* operator new(std::size_t size) { return counted(std::malloc(size ? size : 1)); }
void* operator new[](std::size_t size) { return counted(std::malloc(size ? size : 1)); }
void* operator new(std::size_t size, std::align_val_t al) { return aligned(size, al); }
void* operator new[](std::size_t size, std::align_val_t al) { return aligned(size, al); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try { return operator new(size); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try { return operator new[](size); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
