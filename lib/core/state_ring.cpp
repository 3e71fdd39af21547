#include "core/state_ring.h"

namespace retcon::detail {

void StateRing::init(uint32_t slots, size_t capacity) {
  // Round each buffer up to a cache line so every slot starts aligned for the game's memcpy.
  const size_t stride = (capacity + 63) & ~size_t{63};
  // Not zero-filled: every byte is written by a save before anything reads it, and touching
  // gigabytes at create (256 MiB states, window 64) takes seconds or gets the process killed.
  // The first saves take the page faults instead.
  memory_ = std::make_unique_for_overwrite<uint8_t[]>(stride * slots + 64);
  uint8_t* base = memory_.get();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  slots_ = std::make_unique<SavedState[]>(slots);
  for (uint32_t i = 0; i < slots; ++i) slots_[i].data = base + stride * i;
  capacity_ = capacity;
  count_ = slots;
}

}  // namespace retcon::detail
