// Sliding window of the datagram sequence numbers already accepted from one peer, so that a
// replayed datagram is dropped while a late (reordered) original still gets through.
//
// Sequence numbers come from the network: commit() must accept any value, including ones far
// older than the window (a verified handshake reply is committed without the freshness check,
// since its challenge already proves it new). Such old values are remembered nowhere and
// change nothing.
#pragma once

#include <cstdint>

namespace retcon::detail {

class ReplayWindow {
 public:
  static constexpr uint32_t kWidth = 64;  // sequence numbers remembered behind the highest

  void reset() noexcept { *this = ReplayWindow{}; }

  // True when `sequence` was never committed and is recent enough to tell: newer than the
  // highest seen, or within kWidth behind it and not yet seen.
  // Before any commit (bits_ 0, highest_ 0) every sequence is: 0 has age 0 and no bit.
  bool fresh(uint32_t sequence) const noexcept {
    if (sequence > highest_) return true;
    const uint32_t age = highest_ - sequence;
    return age < kWidth && (bits_ & (uint64_t{1} << age)) == 0;
  }

  // The highest sequence committed (0 before any): data messages carry 16 bits of their
  // sequence, widened against this (widen_sequence in net/wire.h).
  uint32_t highest() const noexcept { return highest_; }

  // Whether `low`, the 16 bits of a sequence a data message carries, are those of the one after
  // the highest (widen_sequence then gives highest() + 1, a fresh sequence): the usual
  // datagram, in order. Never at the top of the range (no sequence follows UINT32_MAX).
  bool next_is(uint16_t low) const noexcept { return uint16_t(highest_ + 1) == low && highest_ != UINT32_MAX; }
  // commit(highest() + 1) when next_is said so: one more, its bit set.
  void commit_next() noexcept {
    bits_ = (bits_ << 1) | 1;
    ++highest_;
  }

  // The first commit needs no case of its own: bits_ 0 shifted is 0, and a first sequence 0 is
  // highest_ already.
  void commit(uint32_t sequence) noexcept {
    if (sequence > highest_) {
      const uint32_t shift = sequence - highest_;
      bits_ = shift >= kWidth ? 1 : (bits_ << shift) | 1;
      highest_ = sequence;
    } else if (highest_ - sequence < kWidth) {
      bits_ |= uint64_t{1} << (highest_ - sequence);
    }
  }

 private:
  uint32_t highest_ = 0;
  uint64_t bits_ = 0;  // bit n: highest_ - n was committed (0: nothing committed yet)
};

}  // namespace retcon::detail
