// retcon: PeerAddress equality for the receive loop, inline. A session looks up the sender of
// every datagram among its peers; operator== (peer_address.cpp) is a call and a memcmp of a
// variable length, several times the work of comparing a few words.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "retcon/transport.h"

namespace retcon::detail {

// operator==: the same size and the same first `size` bytes (bytes beyond the size are not
// compared: a transport need not clear them). A corrupt size (above capacity) matches nothing.
inline bool same_address(const PeerAddress& a, const PeerAddress& b) noexcept {
  static_assert(PeerAddress::kCapacity % 8 == 0, "compared in 8-byte words");
  if (a.size != b.size || a.size > PeerAddress::kCapacity) return false;
  size_t at = 0;
  for (; at + 8 <= a.size; at += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.bytes + at, 8);
    std::memcpy(&y, b.bytes + at, 8);
    if (x != y) return false;
  }
  const size_t tail = a.size - at;  // 0..7 bytes, in the word at `at` (within the array)
  if (tail == 0) return true;
  uint64_t x, y;
  std::memcpy(&x, a.bytes + at, 8);
  std::memcpy(&y, b.bytes + at, 8);
  // The first `tail` bytes in memory: the low ones on a little-endian machine, else the high.
  const uint64_t mask = std::endian::native == std::endian::little ? (uint64_t{1} << (8 * tail)) - 1
                                                                   : ~((~uint64_t{0}) >> (8 * tail));
  return ((x ^ y) & mask) == 0;
}

// same_address(a, from) for one sender against every peer (the session's receive loop): what
// does not change per peer is worked out once, and each peer costs its size and first word. A
// sender of up to 8 bytes (in-memory, IPv4) is decided by that word alone; a longer one by the
// whole compare once the word matched (which is also what turns down a corrupt size: above
// capacity, so above 8).
class AddressProbe {
 public:
  explicit AddressProbe(const PeerAddress& from) noexcept : from_(from), size_(from.size) {
    // The first min(size, 8) bytes in memory: the low ones on a little-endian machine, else the high.
    if constexpr (std::endian::native == std::endian::little)
      mask_ = size_ < 8 ? (uint64_t{1} << (8 * size_)) - 1 : ~uint64_t{0};
    else
      mask_ = size_ < 8 ? ~((~uint64_t{0}) >> (8 * size_)) : ~uint64_t{0};
    std::memcpy(&first_, from.bytes, 8);
    first_ &= mask_;
  }
  bool matches(const PeerAddress& a) const noexcept {
    uint64_t x;
    std::memcpy(&x, a.bytes, 8);
    return a.size == size_ && (x & mask_) == first_ && (size_ <= 8 || same_address(a, from_));
  }

 private:
  const PeerAddress& from_;
  uint32_t size_;
  uint64_t mask_;
  uint64_t first_;
};

// A sufficient test of same_address(a, from) in two words, for a sender of up to 12 bytes (in-memory,
// IPv4): the size and the first 12 bytes as they lie in the struct, bytes past the size included.
// Both equal: the same size and the same first `size` bytes, so the same address. Not equal: the
// addresses may still be the same (bytes past the size differ: a transport need not clear them),
// so a lookup that finds no peer this way asks AddressProbe. A session's peers have distinct
// addresses, so the one found either way is the same peer.
class AddressWords {
 public:
  static_assert(offsetof(PeerAddress, size) == 0 && offsetof(PeerAddress, bytes) == 4 && sizeof(PeerAddress) >= 16,
                "the size and the first 12 bytes in two words");
  static constexpr uint32_t kMostBytes = 12;
  explicit AddressWords(const PeerAddress& from) noexcept : short_(from.size <= kMostBytes) {
    std::memcpy(words_, &from, sizeof words_);
  }
  // Whether the words can decide (a sender of up to kMostBytes): else surely_is says no to all.
  bool decides() const noexcept { return short_; }
  bool surely_is(const PeerAddress& a) const noexcept {
    uint64_t w[2];
    std::memcpy(w, &a, sizeof w);
    return ((w[0] ^ words_[0]) | (w[1] ^ words_[1])) == 0;
  }

 private:
  uint64_t words_[2];
  bool short_;
};

}  // namespace retcon::detail
