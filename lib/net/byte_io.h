// retcon: bounds-checked little-endian byte writing and reading for the wire codec. A reader
// that runs past its end stops, returns zeros and remembers it failed, so a decoder checks
// once at the end instead of before every field, and never reads out of bounds.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace retcon::detail {

// Copies and compares of a few bytes (one input, a token run): a call into memcpy or memcmp
// costs more than the work there. Fixed-size moves compile to plain loads and stores; `to` and
// `from` do not overlap.
inline void copy_bytes(uint8_t* to, const uint8_t* from, size_t n) noexcept {
  if (n < 4) {
    if (n >= 2) {
      std::memcpy(to, from, 2);
      std::memcpy(to + n - 2, from + n - 2, 2);
    } else if (n == 1) {
      *to = *from;
    }
  } else if (n <= 8) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else if (n <= 16) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else {
    std::memcpy(to, from, n);
  }
}

inline bool equal_bytes(const uint8_t* a, const uint8_t* b, size_t n) noexcept {
  if (n >= 4 && n <= 8) {
    uint32_t a0, a1, b0, b1;
    std::memcpy(&a0, a, 4);
    std::memcpy(&b0, b, 4);
    std::memcpy(&a1, a + n - 4, 4);
    std::memcpy(&b1, b + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n < 4) {
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  return std::memcmp(a, b, n) == 0;
}

class ByteWriter {
 public:
  ByteWriter(uint8_t* data, size_t capacity) noexcept : data_(data), capacity_(capacity) {}

  void u8(uint8_t v) noexcept { put(v, 1); }
  void u16(uint16_t v) noexcept { put(v, 2); }
  void u32(uint32_t v) noexcept { put(v, 4); }
  void u64(uint64_t v) noexcept { put(v, 8); }
  void i32(int32_t v) noexcept { put(static_cast<uint32_t>(v), 4); }
  // LEB128: 7 bits per byte, lowest first, the high bit set on every byte but the last
  // (1 byte below 128, at most 5 for 32 bits).
  void varint(uint32_t v) noexcept {
    while (v >= 0x80) {
      u8(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<uint8_t>(v));
  }
  void bytes(const uint8_t* src, size_t n) noexcept {
    if (!reserve(n)) return;
    copy_bytes(data_ + size_, src, n);
    size_ += n;
  }
  // A run of fields written straight into the buffer with one check: a pointer to the next
  // `most` bytes when they fit (then commit() the bytes actually written), else null and
  // nothing changes (write them field by field instead, which overflows as usual).
  uint8_t* raw(size_t most) noexcept {
    if (overflow_ || most > capacity_ - size_) return nullptr;
    return data_ + size_;
  }
  void commit(size_t n) noexcept { size_ += n; }
  // Marks the writer overflowed (a run found not to fit before writing any of it).
  void fail() noexcept { overflow_ = true; }
  // Overwrite 2 bytes already written at `offset` (e.g. a count known only at the end).
  void patch_u16(size_t offset, uint16_t v) noexcept {
    if (offset + 2 <= size_) {
      data_[offset] = static_cast<uint8_t>(v);
      data_[offset + 1] = static_cast<uint8_t>(v >> 8);
    }
  }

  size_t size() const noexcept { return size_; }
  size_t remaining() const noexcept { return capacity_ - size_; }
  bool overflowed() const noexcept { return overflow_; }
  uint8_t* data() noexcept { return data_; }
  // Forget everything written after `size` (used to undo a blob that did not fit).
  void truncate(size_t size) noexcept {
    if (size <= size_) size_ = size;
    overflow_ = false;
  }

 private:
  bool reserve(size_t n) noexcept {
    if (overflow_ || n > capacity_ - size_) {
      overflow_ = true;
      return false;
    }
    return true;
  }
  void put(uint64_t v, size_t n) noexcept {
    if (!reserve(n)) return;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(data_ + size_, &v, n);  // the low n bytes, one store
    } else {
      for (size_t i = 0; i < n; ++i) data_[size_ + i] = static_cast<uint8_t>(v >> (8 * i));
    }
    size_ += n;
  }

  uint8_t* data_;
  size_t capacity_;
  size_t size_ = 0;
  bool overflow_ = false;
};

// The bytes ByteWriter::varint takes for `v`.
constexpr size_t varint_size(uint32_t v) noexcept {
  return v < (1u << 7) ? 1 : v < (1u << 14) ? 2 : v < (1u << 21) ? 3 : v < (1u << 28) ? 4 : 5;
}

// The varint ByteWriter::varint writes, at `p` (5 bytes at most); returns the byte after it.
inline uint8_t* put_varint(uint8_t* p, uint32_t v) noexcept {
  // One and two bytes (a frame number below 16,384, an acknowledgement's distance, a count)
  // without the loop.
  if (v < 0x80) {
    *p = static_cast<uint8_t>(v);
    return p + 1;
  }
  if (v < 0x4000) {
    p[0] = static_cast<uint8_t>(v | 0x80);
    p[1] = static_cast<uint8_t>(v >> 7);
    return p + 2;
  }
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) noexcept : data_(data), size_(size) {}

  uint8_t u8() noexcept { return static_cast<uint8_t>(get(1)); }
  uint16_t u16() noexcept { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() noexcept { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() noexcept { return get(8); }
  int32_t i32() noexcept { return static_cast<int32_t>(static_cast<uint32_t>(get(4))); }
  // A LEB128 varint (see ByteWriter::varint). False for one that is longer than 5 bytes,
  // above 32 bits or not minimal (a final byte of 0 after the first), so every value has one
  // encoding. A truncated one sets failed() and returns true (the caller reports truncation).
  bool varint(uint32_t* out) noexcept {
    // The usual varint (a count, a small frame delta) is one byte: inline, no loop, nothing to
    // reject. The longer ones out of line, so that this stays small enough to inline.
    if (!failed_ && pos_ < size_ && data_[pos_] < 0x80) {
      *out = data_[pos_++];
      return true;
    }
    // Two bytes (a frame number from 128 on: every inputs datagram's start frame): inline too,
    // with varint_long's checks (a final byte of 0 is not minimal).
    if (!failed_ && size_ - pos_ >= 2 && data_[pos_ + 1] < 0x80) {
      const uint32_t low = data_[pos_] & 0x7Fu, high = data_[pos_ + 1];
      pos_ += 2;
      *out = high == 0 ? 0 : low | (high << 7);
      return high != 0;
    }
    return varint_long(out);
  }

 private:
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  bool varint_long(uint32_t* out) noexcept {
    *out = 0;
    if (!failed_ && size_ - pos_ >= 5) {
      // Fast path: all 5 bytes a varint may take are there, so one bounds check covers it.
      const uint8_t* p = data_ + pos_;
      uint64_t v = 0;
      for (int i = 0; i < 5; ++i) {
        const uint8_t b = p[i];
        v |= uint64_t{b & 0x7Fu} << (7 * i);
        if ((b & 0x80) == 0) {
          pos_ += size_t(i) + 1;
          if ((b == 0 && i > 0) || v > 0xFFFFFFFFu) return false;
          *out = static_cast<uint32_t>(v);
          return true;
        }
      }
      pos_ += 5;
      return false;
    }
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) {
      const uint8_t b = u8();
      if (failed_) return true;
      v |= uint64_t{b & 0x7Fu} << (7 * i);
      if ((b & 0x80) == 0) {
        if ((b == 0 && i > 0) || v > 0xFFFFFFFFu) return false;
        *out = static_cast<uint32_t>(v);
        return true;
      }
    }
    return false;
  }

 public:
  // Returns a pointer to the next `n` bytes and skips them, or null when fewer remain.
  const uint8_t* skip(size_t n) noexcept {
    if (failed_ || n > size_ - pos_) {
      failed_ = true;
      return nullptr;
    }
    const uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }

  bool failed() const noexcept { return failed_; }
  size_t remaining() const noexcept { return failed_ ? 0 : size_ - pos_; }
  size_t position() const noexcept { return pos_; }

 private:
  uint64_t get(size_t n) noexcept {
    if (failed_ || n > size_ - pos_) {
      failed_ = true;
      return 0;
    }
    uint64_t v = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&v, data_ + pos_, n);  // one load per field, bounds checked once above
    } else {
      for (size_t i = 0; i < n; ++i) v |= uint64_t{data_[pos_ + i]} << (8 * i);
    }
    pos_ += n;
    return v;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace retcon::detail
