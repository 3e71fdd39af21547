// retcon: see delay_line.h. A linear scan is enough: a simulated link holds tens of datagrams.
#include "net/delay_line.h"

#include <cstring>

namespace retcon::detail {

namespace {
// A slot's buffer starts at one Ethernet MTU, so datagrams of varying sizes up to it never
// make a slot grow again after its first use.
constexpr size_t kSlotBytes = 1500;
}  // namespace

DelayLine::DelayLine() : slots_(64) {
  for (Slot& slot : slots_) slot.bytes.resize(kSlotBytes);
}

void DelayLine::push(uint64_t due_us, const PeerAddress& address, const uint8_t* data,
                     size_t length) {
  size_t index = slots_.size();
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].used) {
      index = i;
      break;
    }
  }
  if (index == slots_.size()) {
    slots_.resize(slots_.size() * 2);  // grown once, to the peak
    for (size_t i = index; i < slots_.size(); ++i) slots_[i].bytes.resize(kSlotBytes);
  }
  Slot& slot = slots_[index];
  if (slot.bytes.size() < length) slot.bytes.resize(length > kSlotBytes ? length : kSlotBytes);
  if (length != 0) std::memcpy(slot.bytes.data(), data, length);
  slot.length = length;
  slot.address = address;
  slot.due_us = due_us;
  slot.order = next_order_++;
  slot.used = true;
  ++used_;
  if (due_us < min_due_us_) min_due_us_ = due_us;
}

long DelayLine::earliest_due(uint64_t now_us) const noexcept {
  if (now_us < min_due_us_) return -1;
  long best = -1;
  size_t seen = 0;  // push() fills the lowest free slot: the scan usually ends early
  for (size_t i = 0; i < slots_.size() && seen < used_; ++i) {
    const Slot& s = slots_[i];
    if (!s.used) continue;
    ++seen;
    if (s.due_us > now_us) continue;
    if (best < 0) {
      best = long(i);
      continue;
    }
    const Slot& b = slots_[size_t(best)];
    if (s.due_us < b.due_us || (s.due_us == b.due_us && s.order < b.order)) best = long(i);
  }
  return best;
}

void DelayLine::release(long slot) noexcept {
  if (slot < 0 || size_t(slot) >= slots_.size() || !slots_[size_t(slot)].used) return;
  slots_[size_t(slot)].used = false;
  --used_;
  min_due_us_ = UINT64_MAX;
  size_t seen = 0;
  for (size_t i = 0; i < slots_.size() && seen < used_; ++i) {
    if (!slots_[i].used) continue;
    ++seen;
    if (slots_[i].due_us < min_due_us_) min_due_us_ = slots_[i].due_us;
  }
}

}  // namespace retcon::detail
