// The library-owned save buffers: one allocation at session start, max_state_size bytes per
// slot, slot = frame modulo the ring size. The game writes into them; it never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "retcon/types.h"

namespace retcon::detail {

struct SavedState {
  uint8_t* data = nullptr;
  size_t length = 0;
  Frame frame = kNullFrame;  // kNullFrame: empty or invalidated by a failed save
  bool checksum_valid = false;
  uint64_t checksum = 0;
};

class StateRing {
 public:
  void init(uint32_t slots, size_t capacity);
  // The bytes init(slots, capacity) allocates for the states.
  static uint64_t bytes_for(uint32_t slots, size_t capacity) noexcept {
    return uint64_t((capacity + 63) & ~size_t{63}) * slots + 64;
  }

  size_t capacity() const noexcept { return capacity_; }
  uint32_t size() const noexcept { return count_; }

  SavedState& slot(uint32_t index) noexcept { return slots_[index]; }
  const SavedState& slot(uint32_t index) const noexcept { return slots_[index]; }
  // The slot `frame` is saved into (whatever it holds now).
  SavedState& slot_for(Frame frame) noexcept { return slots_[uint32_t(frame) % count_]; }
  // The saved state of `frame`, or null if it was overwritten or never saved.
  const SavedState* find(Frame frame) const noexcept {
    const SavedState& s = slots_[uint32_t(frame) % count_];
    return s.frame == frame ? &s : nullptr;
  }
  SavedState* find(Frame frame) noexcept {
    SavedState& s = slots_[uint32_t(frame) % count_];
    return s.frame == frame ? &s : nullptr;
  }

 private:
  std::unique_ptr<uint8_t[]> memory_;
  std::unique_ptr<SavedState[]> slots_;
  size_t capacity_ = 0;
  uint32_t count_ = 0;
};

}  // namespace retcon::detail
