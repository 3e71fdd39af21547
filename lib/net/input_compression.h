// retcon: the compression of per-frame input blobs. Each blob is XORed with the previous
// frame's blob (inputs change rarely, so the delta is mostly zeros), and the stream of deltas
// is run-length coded with one-byte tokens:
//   0x00..0x7F  a run of (token + 1) zero bytes
//   0x80..0xFF  (token - 0x80 + 1) literal bytes follow
// Zero runs continue across blob boundaries, so a held button costs one byte per 128 bytes of
// unchanged input. See docs/PROTOCOL.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/byte_io.h"

namespace retcon::detail {

class DeltaRunEncoder {
 public:
  explicit DeltaRunEncoder(ByteWriter& writer) noexcept : writer_(writer) {}
  // Appends the tokens of blob XOR previous (`size` bytes each). When they do not fit,
  // nothing is written, the writer is restored, and false is returned.
  bool append(const uint8_t* blob, const uint8_t* previous, size_t size) noexcept;

 private:
  void zero_run(size_t length) noexcept;
  void literal(const uint8_t* blob, const uint8_t* previous, size_t length) noexcept;

  ByteWriter& writer_;
  long open_run_ = -1;  // offset of the last token while it is a zero run shorter than 128
};

class DeltaRunDecoder {
 public:
  DeltaRunDecoder(const uint8_t* payload, size_t size) noexcept : reader_(payload, size) {}
  // Writes the next `size` bytes of the delta stream. False when the payload ends early.
  bool next(uint8_t* delta, size_t size) noexcept;
  // True when every token was consumed exactly (no trailing bytes, no unfinished run).
  bool finished() const noexcept {
    return reader_.remaining() == 0 && !reader_.failed() && zeros_left_ == 0 &&
           literal_left_ == 0;
  }

 private:
  ByteReader reader_;
  size_t zeros_left_ = 0;
  size_t literal_left_ = 0;
};

}  // namespace retcon::detail
