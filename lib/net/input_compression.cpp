// retcon: see input_compression.h for the token format.
#include "net/input_compression.h"

#include <bit>
#include <cstring>

namespace retcon::detail {

namespace {
constexpr size_t kMaxToken = kDeltaTokenReach;
constexpr size_t kSplitRun = kDeltaSplitRun;

uint8_t delta_at(const uint8_t* blob, const uint8_t* previous, size_t i) noexcept {
  return static_cast<uint8_t>(blob[i] ^ previous[i]);
}
// The length of the run of unchanged bytes starting at i.
size_t zero_run_at(const uint8_t* blob, const uint8_t* previous, size_t i, size_t size) noexcept {
  size_t run = 0;
  while (i + run < size && delta_at(blob, previous, i + run) == 0) ++run;
  return run;
}

// Where the literal starting at i (a changed byte) ends, as the format cuts literals: up to
// kMaxToken bytes, zero runs shorter than kSplitRun inside it included, ending before a longer
// run (or the blob's end, or the token's reach). One rule for both encoders: their bytes must
// be the same.
size_t literal_end_at(const uint8_t* blob, const uint8_t* previous, size_t i, size_t size) noexcept {
  size_t j = i;
  while (j < size && j - i < kMaxToken) {
    if (delta_at(blob, previous, j) != 0) {
      ++j;
      continue;
    }
    const size_t zeros = zero_run_at(blob, previous, j, size);
    if (zeros >= kSplitRun || j + zeros == size || j + zeros - i > kMaxToken) break;
    j += zeros;
  }
  return j;
}
}  // namespace

void DeltaRunEncoder::zero_run_tokens(size_t length) noexcept {
  if (writer_.overflowed()) return;
  uint8_t* const data = writer_.data();
  // The bytes put_zero_run writes: none for what tops up the open token, then a token per 128
  // zeros or part of them. When they do not fit, the writer overflows with nothing written
  // (every caller then undoes the whole delta).
  const size_t room = open_run_ >= 0 ? kMaxToken - 1 - size_t{data[open_run_]} : 0;
  const size_t rest = length > room ? length - room : 0;
  if ((rest + kMaxToken - 1) / kMaxToken > writer_.remaining()) {
    writer_.fail();
    return;
  }
  writer_.commit(put_zero_run(data, writer_.size(), open_run_, length) - writer_.size());
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
      const size_t run = zero_run_at(blob, previous, i, size);
      zero_run(run);
      i += run;
      continue;
    }
    const size_t j = literal_end_at(blob, previous, i, size);
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

namespace {
// What the short encoders below return for tokens written to [out, o): within one token's
// reach the leading zero run is at most one token, and `open` is the offset of the last token
// when that is a zero run that can still grow (-1 otherwise).
inline EncodedDelta short_delta_result(const uint8_t* out, const uint8_t* o, uint32_t lead_zeros, long open,
                                       size_t size) noexcept {
  EncodedDelta r;
  r.size = uint32_t(o - out);
  r.lead_zeros = lead_zeros;
  r.lead_bytes = lead_zeros != 0 ? 1 : 0;
  r.open_tail = int32_t(open);
  r.unchanged = lead_zeros == size;
  return r;
}

// encode_changed_delta for a delta of at most one token's reach (every input of a few bytes):
// the delta XORed once into `d`, and no run can need a second token, so each zero run is one
// token and each literal ends at the first zero run of kSplitRun or more, or at the blob's end.
// The same tokens as the general loop below (one rule: literal_end_at's, within one token).
// Out of line, as the general loop below: the usual input (up to 8 bytes) takes none of their
// registers or stack.
#if defined(__GNUC__)
__attribute__((noinline))
#endif
EncodedDelta encode_short_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                                uint8_t* out) noexcept {
  uint8_t d[kMaxToken];
  for (size_t i = 0; i < size; ++i) d[i] = static_cast<uint8_t>(blob[i] ^ previous[i]);
  uint8_t* o = out;
  long open = -1;
  uint32_t lead_zeros = 0;
  size_t i = 0;
  while (i < size) {
    size_t j = i;
    if (d[i] == 0) {
      while (++j < size && d[j] == 0) {}
      if (i == 0) lead_zeros = uint32_t(j);
      open = j - i < kMaxToken ? long(o - out) : -1;
      *o++ = static_cast<uint8_t>(j - i - 1);
      i = j;
      continue;
    }
    // A literal: through changed bytes and zero runs shorter than kSplitRun between them.
    for (;;) {
      while (j < size && d[j] != 0) ++j;
      size_t k = j;
      while (k < size && d[k] == 0) ++k;
      if (k == size || k - j >= kSplitRun) break;
      j = k;
    }
    *o++ = static_cast<uint8_t>(0x80 + (j - i) - 1);
    for (size_t k = i; k < j; ++k) *o++ = d[k];
    open = -1;
    i = j;
  }
  return short_delta_result(out, o, lead_zeros, open, size);
}

// encode_short_delta for a delta of at most 8 bytes (the usual input): its tokens after the
// leading zeros are its pattern's (kWordTails), the leading zeros one token before them.
EncodedDelta encode_word_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                               uint8_t* out) noexcept {
  const uint64_t d = load_word(blob, size) ^ load_word(previous, size);
  const uint32_t changed = nonzero_bytes(d);
  EncodedDelta r;
  if (changed == 0) {  // one zero run, open (fewer than 128 zeros)
    out[0] = static_cast<uint8_t>(size - 1);
    r.size = r.lead_bytes = 1;
    r.lead_zeros = uint32_t(size);
    r.open_tail = 0;
    r.unchanged = true;
    return r;
  }
  const uint32_t lead = uint32_t(std::countr_zero(changed));
  uint8_t* o = out;
  if (lead != 0) *o++ = static_cast<uint8_t>(lead - 1);
  const WordTail& tail = kWordTails[(1u << size) | changed];
  uint8_t tokens[16];  // `out` has room for the tokens only
  put_word_tail(tokens, d, tail);
  for (size_t k = 0; k < tail.size; ++k) o[k] = tokens[k];
  r.lead_zeros = lead;
  r.lead_bytes = lead != 0 ? 1 : 0;
  r.size = r.lead_bytes + tail.size;
  r.open_tail = tail.open >= 0 ? int32_t(r.lead_bytes) + tail.open : -1;
  return r;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
EncodedDelta encode_long_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                               uint8_t* out) noexcept;
}  // namespace

EncodedDelta encode_changed_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                                  uint8_t* out) noexcept {
  if (size >= 1 && size <= 8) return encode_word_delta(blob, previous, size, out);
  if (size <= kMaxToken) return encode_short_delta(blob, previous, size, out);
  return encode_long_delta(blob, previous, size, out);
}

namespace {
// Any size: whole tokens of 128 for long runs, literals cut by literal_end_at.
EncodedDelta encode_long_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                               uint8_t* out) noexcept {
  // The tokens append() writes for this delta on its own, written straight into `out` (which
  // always has room: at most a token per byte), without the writer's checks per byte or the
  // undo append() keeps. On its own, no run is open when a zero run starts (a literal or the
  // start precedes it), so each zero run is whole tokens of 128 and its remainder.
  uint8_t* o = out;
  long open = -1;  // offset of the last token while it is a zero run shorter than 128
  uint32_t lead_zeros = 0;
  size_t i = 0;
  while (i < size) {
    if (delta_at(blob, previous, i) == 0) {
      size_t run = zero_run_at(blob, previous, i, size);
      if (i == 0) lead_zeros = uint32_t(run);
      i += run;
      while (run != 0) {
        const size_t take = run < kMaxToken ? run : kMaxToken;
        open = take < kMaxToken ? long(o - out) : -1;
        *o++ = static_cast<uint8_t>(take - 1);
        run -= take;
      }
      continue;
    }
    const size_t j = literal_end_at(blob, previous, i, size);
    *o++ = static_cast<uint8_t>(0x80 + (j - i) - 1);
    for (size_t k = i; k < j; ++k) *o++ = delta_at(blob, previous, k);
    open = -1;
    i = j;
  }
  EncodedDelta d;
  d.size = uint32_t(o - out);
  d.lead_zeros = lead_zeros;
  d.lead_bytes = uint32_t((d.lead_zeros + kMaxToken - 1) / kMaxToken);
  d.open_tail = int32_t(open);
  d.unchanged = lead_zeros == size;
  return d;
}
}  // namespace

bool DeltaRunEncoder::append_encoded_slow(const EncodedDelta& delta, const uint8_t* tokens) noexcept {
  // The leading zeros continue an open run exactly as append() would; the rest is verbatim,
  // since a literal token always follows them and closes the run.
  const size_t verbatim = delta.size - delta.lead_bytes;
  if (!writer_.overflowed() && writer_.remaining() >= delta.lead_zeros / kMaxToken + 2 + verbatim) {
    // Room for the worst case (a token per kMaxToken zeros, one more where the open run is
    // topped up): nothing can overflow, so nothing needs saving for an undo.
    if (delta.lead_zeros != 0) zero_run(delta.lead_zeros);
    if (verbatim != 0) {
      const size_t at = writer_.size();
      writer_.bytes(tokens + delta.lead_bytes, verbatim);
      open_run_ = delta.open_tail >= 0 ? long(at + size_t(delta.open_tail) - delta.lead_bytes) : -1;
    }
    return true;
  }
  const size_t before = writer_.size();
  const long saved_open = open_run_;
  const uint8_t saved_token = saved_open >= 0 ? writer_.data()[saved_open] : 0;
  if (delta.lead_zeros != 0) zero_run(delta.lead_zeros);
  if (delta.size > delta.lead_bytes) {
    const size_t at = writer_.size();
    writer_.bytes(tokens + delta.lead_bytes, delta.size - delta.lead_bytes);
    open_run_ = delta.open_tail >= 0 ? long(at + size_t(delta.open_tail) - delta.lead_bytes) : -1;
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
  size_t i = 0;
  while (i < size) {
    if (!refill()) return false;
    if (zeros_left_ != 0) {
      const size_t n = zeros_left_ < size - i ? zeros_left_ : size - i;
      std::memset(delta + i, 0, n);
      zeros_left_ -= n;
      i += n;
    } else {
      const size_t n = literal_left_ < size - i ? literal_left_ : size - i;
      const uint8_t* bytes = take(n);
      if (bytes == nullptr) return false;
      std::memcpy(delta + i, bytes, n);
      literal_left_ -= n;
      i += n;
    }
  }
  return true;
}

bool delta_tokens_valid(const uint8_t* payload, size_t size, size_t delta_bytes) noexcept {
  if (payload == nullptr) return size == 0 && delta_bytes == 0;
  size_t at = 0;
  while (at < size) {
    const uint8_t token = payload[at++];
    const size_t n = size_t{token & 0x7Fu} + 1;
    if (n > delta_bytes) return false;  // a run past the last blob
    delta_bytes -= n;
    if (token >= 0x80) {
      if (n > size - at) return false;  // literal bytes missing
      at += n;
    }
  }
  return delta_bytes == 0;
}

bool delta_tokens_length(const uint8_t* payload, size_t size, size_t* delta_bytes) noexcept {
  *delta_bytes = 0;
  if (payload == nullptr) return size == 0;
  size_t at = 0, total = 0;
  while (at < size) {
    const uint8_t token = payload[at++];
    const size_t n = size_t{token & 0x7Fu} + 1;
    total += n;
    if (token >= 0x80) {
      if (n > size - at) return false;  // literal bytes missing
      at += n;
    }
  }
  *delta_bytes = total;
  return true;
}

}  // namespace retcon::detail
