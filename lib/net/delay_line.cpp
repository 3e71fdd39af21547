// retcon: see delay_line.h.
#include "net/delay_line.h"

#include <algorithm>
#include <cstring>

namespace retcon::detail {

namespace {
// A slot's buffer is one Ethernet MTU, so datagrams of varying sizes up to it never make a slot
// grow after its first use.
constexpr size_t kSlotBytes = 1500;
// Bytes held beyond the slots' own buffers (datagrams larger than an MTU, which a transport can
// hand over up to 64 KiB): bounded, so a flood of large datagrams cannot grow memory at will.
constexpr size_t kMaxOversizedBytes = size_t(4) << 20;
}  // namespace

DelayLine::DelayLine(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void DelayLine::set_capacity(size_t capacity) { capacity_ = std::max<size_t>(capacity, 1); }

bool DelayLine::push(uint64_t due_us, const PeerAddress& address, const uint8_t* data, size_t length) {
  if (heap_.size() >= capacity_) return false;
  const size_t extra = length > kSlotBytes ? length - kSlotBytes : 0;
  if (extra > kMaxOversizedBytes - oversized_bytes_) return false;
  if (free_.empty()) {
    // Grow by doubling, up to the capacity: a peak costs a few allocations, once.
    const size_t old = slots_.size();
    const size_t grown = std::min(capacity_, std::max<size_t>(64, old * 2));
    if (grown <= old) return false;
    slots_.resize(grown);
    heap_.reserve(grown);
    free_.reserve(grown);
    for (size_t i = grown; i > old; --i) {
      slots_[i - 1].bytes.resize(kSlotBytes);
      free_.push_back(uint32_t(i - 1));
    }
  }
  const uint32_t index = free_.back();
  free_.pop_back();
  Slot& slot = slots_[index];
  if (slot.bytes.size() < length) slot.bytes.resize(length);
  oversized_bytes_ += extra;
  if (length != 0) std::memcpy(slot.bytes.data(), data, length);
  slot.length = length;
  slot.address = address;
  slot.due_us = due_us;
  slot.order = next_order_++;
  heap_.push_back(index);
  sift_up(heap_.size() - 1);
  return true;
}

long DelayLine::front_due(uint64_t now_us) const noexcept {
  if (heap_.empty() || slots_[heap_[0]].due_us > now_us) return -1;
  return long(heap_[0]);
}

void DelayLine::pop_front() noexcept {
  if (heap_.empty()) return;
  const uint32_t index = heap_[0];
  Slot& slot = slots_[index];
  if (slot.bytes.size() > kSlotBytes) {
    // Give an oversized buffer back, so the bound on such bytes holds over time.
    oversized_bytes_ -= slot.bytes.size() - kSlotBytes;
    std::vector<uint8_t>(kSlotBytes).swap(slot.bytes);
  }
  free_.push_back(index);
  heap_[0] = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

size_t DelayLine::buffer_bytes() const noexcept {
  return slots_.size() * (sizeof(Slot) + kSlotBytes) + oversized_bytes_ +
         (heap_.capacity() + free_.capacity()) * sizeof(uint32_t);
}

void DelayLine::sift_up(size_t i) noexcept {
  const uint32_t moving = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!before(moving, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = moving;
}

void DelayLine::sift_down(size_t i) noexcept {
  const uint32_t moving = heap_[i];
  const size_t n = heap_.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], moving)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = moving;
}

}  // namespace retcon::detail
