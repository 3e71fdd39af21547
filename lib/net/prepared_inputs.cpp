// retcon: see prepared_inputs.h.
#include "net/prepared_inputs.h"

#include <cstring>

namespace retcon::detail {

void PreparedInputs::init(size_t blob_size, size_t limit) {
  blob_size_ = blob_size;
  limit_ = limit;
  // Room for a whole run and one more frame's worst case beyond it, twice: the body only moves
  // back to the start of the buffer once it reached the end (see append_body).
  // And 16 bytes more: append_changed_word writes its tokens as 16 (put_word_tail).
  room_ = 2 * (limit + max_encoded_delta_size(blob_size) + 2) + 16;
  // Beyond the room the body may reach, 16 bytes: write_short reads 16 from the body's start.
  buf_.assign(room_ + 16, 0);
  reset(0);
}

bool PreparedInputs::append_unchanged_body(size_t zeros) noexcept {
  EncodedDelta delta;  // what encode_delta codes for it: one zero-run token
  delta.size = delta.lead_bytes = 1;
  delta.lead_zeros = uint32_t(zeros);
  delta.open_tail = zeros < kDeltaTokenReach ? 0 : -1;
  delta.unchanged = true;
  const uint8_t token = static_cast<uint8_t>(zeros - 1);
  return append_body(delta, &token);
}

bool PreparedInputs::append_body(const EncodedDelta& delta, const uint8_t* tokens) noexcept {
  // A token per 128 zeros and one where the open token is topped up, at most.
  const size_t verbatim = delta.size - delta.lead_bytes;
  const size_t most = delta.lead_zeros / kDeltaTokenReach + 2 + verbatim;
  if (size() + most > limit_) return false;
  if (end_ + most > room_) {
    // The body reached the end of the buffer: back to its start (at most `limit_` bytes move,
    // once per buffer's worth of appended tokens).
    std::memmove(buf_.data(), buf_.data() + head_, end_ - head_);
    if (open_ >= 0) open_ -= long(head_);
    end_ -= head_;
    head_ = 0;
  }
  end_ = put_zero_run(buf_.data(), end_, open_, delta.lead_zeros);  // as DeltaRunEncoder codes it
  if (verbatim != 0) {
    open_ = delta.open_tail >= 0 ? long(end_ + size_t(delta.open_tail) - delta.lead_bytes) : -1;
    copy_bytes(buf_.data() + end_, tokens + delta.lead_bytes, verbatim);
    end_ += verbatim;
  }
  ++next_;
  return true;
}

void PreparedInputs::write_long(uint8_t* out) const noexcept {
  size_t zeros = lead_;
  while (zeros >= kDeltaTokenReach) {
    *out++ = static_cast<uint8_t>(kDeltaTokenReach - 1);
    zeros -= kDeltaTokenReach;
  }
  if (zeros != 0) *out++ = static_cast<uint8_t>(zeros - 1);
  std::memcpy(out, buf_.data() + head_, end_ - head_);
}

}  // namespace retcon::detail
