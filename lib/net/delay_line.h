// retcon: datagrams held until a delivery time (the NetworkSimulator's in-flight queue).
//
// A binary min-heap of slot indices keyed by (due time, arrival order): push and pop cost
// O(log n), so a flood of datagrams costs the same per datagram as a trickle. Memory is bounded:
// at most `capacity` datagrams are held (a push beyond that is refused, and the simulator counts
// it as a drop), slots keep their buffers when freed (steady traffic allocates nothing after
// warm-up), and bytes beyond a slot's MTU-sized buffer are bounded in total too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "retcon/transport.h"

namespace retcon::detail {

class DelayLine {
 public:
  static constexpr size_t kDefaultCapacity = 8192;
  explicit DelayLine(size_t capacity = kDefaultCapacity);

  // Held datagrams at most (at least 1). Shrinking below what is held keeps them.
  void set_capacity(size_t capacity);
  size_t capacity() const noexcept { return capacity_; }

  // Hold a copy of `data` until `due_us`. Equal due times leave in insertion order. False (and
  // nothing held) when the line is full or the datagram would exceed the byte bound.
  bool push(uint64_t due_us, const PeerAddress& address, const uint8_t* data, size_t length);
  // The earliest held datagram due at or before `now_us`, or -1. Peek, then pop_front().
  long front_due(uint64_t now_us) const noexcept;
  const PeerAddress& address(long slot) const noexcept { return slots_[size_t(slot)].address; }
  const uint8_t* data(long slot) const noexcept { return slots_[size_t(slot)].bytes.data(); }
  size_t length(long slot) const noexcept { return slots_[size_t(slot)].length; }
  // Releases the earliest datagram (the one front_due() named).
  void pop_front() noexcept;
  size_t size() const noexcept { return heap_.size(); }
  // Bytes of buffer the line holds now (slot buffers included): bounded by the capacity.
  size_t buffer_bytes() const noexcept;

 private:
  struct Slot {
    uint64_t due_us = 0;
    uint64_t order = 0;  // insertion counter: keeps equal due times first-in, first-out
    PeerAddress address;
    std::vector<uint8_t> bytes;
    size_t length = 0;
  };
  bool before(uint32_t a, uint32_t b) const noexcept {
    const Slot& x = slots_[a];
    const Slot& y = slots_[b];
    return x.due_us < y.due_us || (x.due_us == y.due_us && x.order < y.order);
  }
  void sift_up(size_t i) noexcept;
  void sift_down(size_t i) noexcept;

  size_t capacity_;
  std::vector<Slot> slots_;     // grown on demand up to capacity_, never shrunk
  std::vector<uint32_t> free_;  // indices of unused slots
  std::vector<uint32_t> heap_;  // indices of held slots, a min-heap on (due_us, order)
  size_t oversized_bytes_ = 0;  // bytes held in buffers grown beyond kSlotBytes
  uint64_t next_order_ = 0;
};

}  // namespace retcon::detail
