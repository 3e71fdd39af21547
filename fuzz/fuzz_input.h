// retcon fuzzing: reads a fuzzer's input as a stream of choices. Every read succeeds: past the
// end it yields zeros, so any byte string is a valid program for the targets that interpret
// their input as a sequence of operations. Plain C++ (no libFuzzer header), so the targets
// also build with gcc for the corpus replay tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace retcon::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) noexcept : data_(data), size_(size) {}

  bool empty() const noexcept { return pos_ >= size_; }
  size_t remaining() const noexcept { return size_ - pos_; }

  uint8_t u8() noexcept { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() noexcept { return uint16_t(u8() | (u8() << 8)); }
  uint32_t u32() noexcept { return uint32_t(u16()) | (uint32_t(u16()) << 16); }
  uint64_t u64() noexcept { return uint64_t(u32()) | (uint64_t(u32()) << 32); }
  bool flag() noexcept { return (u8() & 1) != 0; }
  // A value in [lo, hi] (inclusive), from one byte when the range allows.
  uint32_t range(uint32_t lo, uint32_t hi) noexcept {
    const uint64_t span = uint64_t(hi) - lo + 1;
    const uint64_t raw = span <= 256 ? u8() : span <= 65536 ? u16() : u32();
    return uint32_t(lo + raw % span);
  }
  // One of `n` table entries.
  template <class T, size_t N>
  T pick(const T (&table)[N]) noexcept { return table[u8() % N]; }
  // Up to `n` bytes into `out`; the rest (past the end of the input) is zero-filled.
  void bytes(uint8_t* out, size_t n) noexcept {
    const size_t take = n < remaining() ? n : remaining();
    if (take != 0) std::memcpy(out, data_ + pos_, take);
    if (take < n) std::memset(out + take, 0, n - take);
    pos_ += take;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A broken invariant: say which, then stop the process the way a sanitizer would, so libFuzzer
// saves the input and the replay test fails. Only fuzz targets use this, never the library.
[[noreturn]] inline void fail(const char* file, int line, const char* what) noexcept {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n", file, line, what);
  std::fflush(stderr);
  __builtin_trap();
}

}  // namespace retcon::fuzz

#define FUZZ_CHECK(cond) \
  do { \
    if (!(cond)) ::retcon::fuzz::fail(__FILE__, __LINE__, #cond); \
  } while (0)
