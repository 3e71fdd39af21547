// retcon: datagrams held until a delivery time (the NetworkSimulator's in-flight queue).
// Slots keep their buffers when freed, so steady traffic allocates nothing after warm-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "retcon/transport.h"

namespace retcon::detail {

class DelayLine {
 public:
  DelayLine();
  // Hold a copy of `data` until `due_us`. Equal due times leave in insertion order.
  void push(uint64_t due_us, const PeerAddress& address, const uint8_t* data, size_t length);
  // The earliest held datagram due at or before `now_us`, or -1. Peek, then release().
  long earliest_due(uint64_t now_us) const noexcept;
  const PeerAddress& address(long slot) const noexcept { return slots_[size_t(slot)].address; }
  const uint8_t* data(long slot) const noexcept { return slots_[size_t(slot)].bytes.data(); }
  size_t length(long slot) const noexcept { return slots_[size_t(slot)].length; }
  void release(long slot) noexcept;
  size_t size() const noexcept { return used_; }

 private:
  struct Slot {
    uint64_t due_us = 0;
    uint64_t order = 0;  // insertion counter: keeps equal due times first-in, first-out
    bool used = false;
    PeerAddress address;
    std::vector<uint8_t> bytes;
    size_t length = 0;
  };
  std::vector<Slot> slots_;
  size_t used_ = 0;
  // The earliest due time held (UINT64_MAX when empty): most polls find nothing due and
  // answer from it without a scan.
  uint64_t min_due_us_ = UINT64_MAX;
  uint64_t next_order_ = 0;
};

}  // namespace retcon::detail
