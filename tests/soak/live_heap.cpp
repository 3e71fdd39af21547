// The replaced operator new/delete behind live_heap.h. Sizes come from malloc_usable_size, so
// every delete form (sized, unsized, array) subtracts exactly what its new added. The aligned
// forms are replaced too, so no allocation escapes the count.
#include "soak/live_heap.h"

#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

// Windows (MinGW, msvcrt) has no posix_memalign or malloc_usable_size (nor _aligned_msize):
// sizes come from _msize, and an aligned block is carved out of a malloc block whose start and
// size are kept just before it.
#if defined(_WIN32)
struct AlignedHeader {
  void* block;
  std::size_t size;
};
std::size_t usable_size(void* p) { return _msize(p); }
std::size_t usable_size_aligned(void* p, std::size_t) { return (static_cast<AlignedHeader*>(p) - 1)->size; }
void* allocate_aligned(std::size_t a, std::size_t size) {  // a: a power of two >= sizeof(void*)
  void* block = std::malloc(size + a + sizeof(AlignedHeader));
  if (block == nullptr) return nullptr;
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(block) + sizeof(AlignedHeader);
  auto* p = reinterpret_cast<void*>((start + a - 1) & ~std::uintptr_t(a - 1));
  *(static_cast<AlignedHeader*>(p) - 1) = AlignedHeader{block, size};
  return p;
}
void free_aligned(void* p) { std::free((static_cast<AlignedHeader*>(p) - 1)->block); }
#else
std::size_t usable_size(void* p) { return malloc_usable_size(p); }
std::size_t usable_size_aligned(void* p, std::size_t) { return malloc_usable_size(p); }
void* allocate_aligned(std::size_t a, std::size_t size) {
  void* p = nullptr;
  return posix_memalign(&p, a, size) == 0 ? p : nullptr;
}
void free_aligned(void* p) { std::free(p); }
#endif

std::atomic<uint64_t> g_live{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_total{0};

void* counted(void* p, std::size_t usable) {
  if (p == nullptr) throw std::bad_alloc();
  g_live.fetch_add(1, std::memory_order_relaxed);
  g_total.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(usable, std::memory_order_relaxed);
  return p;
}

void* counted(void* p) { return counted(p, p ? usable_size(p) : 0); }

void release(void* p) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  g_bytes.fetch_sub(usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

std::size_t alignment_of(std::align_val_t al) {
  return static_cast<std::size_t>(al) < sizeof(void*) ? sizeof(void*) : static_cast<std::size_t>(al);
}

void* aligned(std::size_t size, std::align_val_t al) {
  const std::size_t a = alignment_of(al);
  void* p = allocate_aligned(a, size ? size : 1);
  return counted(p, p ? usable_size_aligned(p, a) : 0);
}

void release_aligned(void* p, std::align_val_t al) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(1, std::memory_order_relaxed);
  g_bytes.fetch_sub(usable_size_aligned(p, alignment_of(al)), std::memory_order_relaxed);
  free_aligned(p);
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
void operator delete(void* p, std::align_val_t al) noexcept { release_aligned(p, al); }
void operator delete[](void* p, std::align_val_t al) noexcept { release_aligned(p, al); }
void operator delete(void* p, std::size_t, std::align_val_t al) noexcept { release_aligned(p, al); }
void operator delete[](void* p, std::size_t, std::align_val_t al) noexcept { release_aligned(p, al); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
