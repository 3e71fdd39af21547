// retcon: see input_compression.h for the token format.
#include "net/input_compression.h"

namespace retcon::detail {

namespace {
constexpr size_t kMaxToken = 128;
// A zero run this long inside changed bytes is cheaper as its own token than as literals.
constexpr size_t kSplitRun = 3;

uint8_t delta_at(const uint8_t* blob, const uint8_t* previous, size_t i) noexcept {
  return static_cast<uint8_t>(blob[i] ^ previous[i]);
}
}  // namespace

void DeltaRunEncoder::zero_run(size_t length) noexcept {
  while (length != 0 && !writer_.overflowed()) {
    if (open_run_ >= 0) {
      uint8_t& token = writer_.data()[open_run_];
      const size_t have = size_t{token} + 1;
      const size_t add = length < kMaxToken - have ? length : kMaxToken - have;
      token = static_cast<uint8_t>(have + add - 1);
      length -= add;
      if (have + add == kMaxToken) open_run_ = -1;
      continue;
    }
    const size_t take = length < kMaxToken ? length : kMaxToken;
    const size_t at = writer_.size();
    writer_.u8(static_cast<uint8_t>(take - 1));
    open_run_ = (take < kMaxToken && !writer_.overflowed()) ? long(at) : -1;
    length -= take;
  }
}

void DeltaRunEncoder::literal(const uint8_t* blob, const uint8_t* previous,
                              size_t length) noexcept {
  writer_.u8(static_cast<uint8_t>(0x80 + length - 1));
  for (size_t i = 0; i < length; ++i) writer_.u8(delta_at(blob, previous, i));
  open_run_ = -1;
}

bool DeltaRunEncoder::append(const uint8_t* blob, const uint8_t* previous, size_t size) noexcept {
  const size_t before = writer_.size();
  const long saved_open = open_run_;
  const uint8_t saved_token = saved_open >= 0 ? writer_.data()[saved_open] : 0;

  size_t i = 0;
  while (i < size) {
    if (delta_at(blob, previous, i) == 0) {
      size_t run = 0;
      while (i + run < size && delta_at(blob, previous, i + run) == 0) ++run;
      zero_run(run);
      i += run;
      continue;
    }
    size_t j = i;
    while (j < size && j - i < kMaxToken) {
      if (delta_at(blob, previous, j) != 0) {
        ++j;
        continue;
      }
      size_t zeros = 0;
      while (j + zeros < size && delta_at(blob, previous, j + zeros) == 0) ++zeros;
      if (zeros >= kSplitRun || j + zeros == size || j + zeros - i > kMaxToken) break;
      j += zeros;
    }
    literal(blob + i, previous + i, j - i);
    i = j;
  }
  if (writer_.overflowed()) {
    writer_.truncate(before);
    open_run_ = saved_open;
    if (saved_open >= 0) writer_.data()[saved_open] = saved_token;
    return false;
  }
  return true;
}

bool DeltaRunDecoder::next(uint8_t* delta, size_t size) noexcept {
  for (size_t i = 0; i < size; ++i) {
    if (zeros_left_ == 0 && literal_left_ == 0) {
      const uint8_t token = reader_.u8();
      if (reader_.failed()) return false;
      if (token < 0x80) {
        zeros_left_ = size_t{token} + 1;
      } else {
        literal_left_ = size_t{token} - 0x80 + 1;
      }
    }
    if (zeros_left_ != 0) {
      delta[i] = 0;
      --zeros_left_;
    } else {
      delta[i] = reader_.u8();
      if (reader_.failed()) return false;
      --literal_left_;
    }
  }
  return true;
}

}  // namespace retcon::detail
