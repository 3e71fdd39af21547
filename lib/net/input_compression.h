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

// One frame's delta (its blob XOR the previous frame's blob) coded on its own, once, when the
// frame is queued. A datagram then splices the coded deltas of its frames one after another
// (DeltaRunEncoder::append_encoded) instead of re-coding every unacknowledged blob byte by
// byte for every datagram; the result is byte for byte what append() would have written.
struct EncodedDelta {
  uint32_t size = 0;        // bytes of tokens
  uint32_t lead_zeros = 0;  // zero delta bytes its leading zero-run tokens stand for
  uint32_t lead_bytes = 0;  // bytes of those leading tokens (merged into an open run)
  int32_t open_tail = -1;   // offset of its last token when that is a zero run < 128, else -1
  bool unchanged = false;   // the delta is all zeros: the input did not change
};

// The most zero (or literal) bytes one token stands for.
inline constexpr size_t kDeltaTokenReach = 128;

// The most bytes the tokens of one `blob_size`-byte delta take (a token per byte at worst).
constexpr size_t max_encoded_delta_size(size_t blob_size) noexcept { return 2 * blob_size + 2; }

// Codes `length` zero delta bytes into `buf` at offset `end`, continuing the zero-run token at
// offset `open` (-1: none open): that token is topped up to 128 zeros, then whole tokens follow,
// the last one left open (`open` follows it) while it holds fewer than 128. Returns the new end:
// at most length / 128 + 1 bytes on, the room the caller sees to. The one rule for zero runs of
// both DeltaRunEncoder and PreparedInputs: their bytes must be the same.
inline size_t put_zero_run(uint8_t* buf, size_t end, long& open, size_t length) noexcept {
  if (open >= 0 && length != 0) {
    uint8_t& token = buf[size_t(open)];
    const size_t have = size_t{token} + 1;
    const size_t add = length < kDeltaTokenReach - have ? length : kDeltaTokenReach - have;
    token = static_cast<uint8_t>(have + add - 1);
    length -= add;  // 0 unless the token is full now
    if (have + add == kDeltaTokenReach) open = -1;
  }
  while (length != 0) {
    const size_t take = length < kDeltaTokenReach ? length : kDeltaTokenReach;
    open = take < kDeltaTokenReach ? long(end) : -1;
    buf[end++] = static_cast<uint8_t>(take - 1);
    length -= take;
  }
  return end;
}

// Codes blob XOR previous (`size` bytes each) into `out` (max_encoded_delta_size(size) bytes).
// encode_delta for any delta; inline for the frame that repeats the previous input (most do).
EncodedDelta encode_changed_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                                  uint8_t* out) noexcept;
inline EncodedDelta encode_delta(const uint8_t* blob, const uint8_t* previous, size_t size,
                                 uint8_t* out) noexcept {
  // One zero-run token, exactly what DeltaRunEncoder::append() writes for it.
  if (size != 0 && size <= kDeltaTokenReach && equal_bytes(blob, previous, size)) {
    out[0] = static_cast<uint8_t>(size - 1);
    EncodedDelta d;
    d.size = 1;
    d.lead_zeros = uint32_t(size);
    d.lead_bytes = 1;
    d.open_tail = size < kDeltaTokenReach ? 0 : -1;
    d.unchanged = true;
    return d;
  }
  return encode_changed_delta(blob, previous, size, out);
}

class DeltaRunEncoder {
 public:
  explicit DeltaRunEncoder(ByteWriter& writer) noexcept : writer_(writer) {}
  // Appends the tokens of blob XOR previous (`size` bytes each). When they do not fit,
  // nothing is written, the writer is restored, and false is returned.
  bool append(const uint8_t* blob, const uint8_t* previous, size_t size) noexcept;
  // The same for a delta coded by encode_delta (`tokens` are its bytes).
  // Inline (as the other per-frame calls here): a datagram makes several of them.
  bool append_encoded(const EncodedDelta& delta, const uint8_t* tokens) noexcept {
    // The common frame: the input did not change (its delta is all zeros) and the run before
    // it is still open with room for it. Only the open token grows; nothing can overflow.
    if (delta.size == delta.lead_bytes && open_run_ >= 0 && !writer_.overflowed() &&
        top_up(delta.lead_zeros))
      return true;
    return append_encoded_slow(delta, tokens);
  }
  // Appends `size` zero delta bytes (frames whose input did not change) in one go: exactly
  // what appending those frames' deltas one by one writes. False, with nothing written, when
  // the worst case might not fit (the caller then appends them one by one).
  bool append_zeros(size_t size) noexcept {
    // A token per kMaxToken zero bytes, plus one where the open run is topped up first. Runs
    // merge across frames (zero_run), so one long run codes like many short ones in a row.
    if (writer_.overflowed() || writer_.remaining() < size / kMaxToken + 2) return false;
    zero_run(size);
    return true;
  }
  long open_run() const noexcept { return open_run_; }

 private:
  static constexpr size_t kMaxToken = kDeltaTokenReach;
  // Grows the open zero-run token by `length` when that stays below a full token.
  bool top_up(size_t length) noexcept {
    uint8_t& token = writer_.data()[open_run_];
    const size_t have = size_t{token} + 1;
    if (have + length >= kMaxToken) return false;
    token = static_cast<uint8_t>(have + length - 1);
    return true;
  }
  void zero_run(size_t length) noexcept {
    // The usual run (an unchanged input, a few frames of one): the open token has room for it.
    if (open_run_ >= 0 && length != 0 && !writer_.overflowed() && top_up(length)) return;
    zero_run_tokens(length);
  }
  void zero_run_tokens(size_t length) noexcept;
  bool append_encoded_slow(const EncodedDelta& delta, const uint8_t* tokens) noexcept;
  void literal(const uint8_t* blob, const uint8_t* previous, size_t length) noexcept;

  ByteWriter& writer_;
  long open_run_ = -1;  // offset of the last token while it is a zero run shorter than 128
};

class DeltaRunDecoder {
 public:
  DeltaRunDecoder(const uint8_t* payload, size_t size) noexcept
      : at_(payload), end_(payload != nullptr ? payload + size : payload) {}
  // Writes the next `size` bytes of the delta stream. False when the payload ends early.
  bool next(uint8_t* delta, size_t size) noexcept;
  // Writes previous XOR the next `size` delta bytes into `blob` (not `previous` itself): one
  // bounds check per token, whole runs copied at once. False when the payload ends early.
  // Inline (always: in the receiver's one-pass path too), the receiver calls it per frame.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool apply(uint8_t* blob, const uint8_t* previous, size_t size) noexcept {
    // The usual frame: an input that did not change, inside the zero run under way.
    if (zeros_left_ >= size) {
      copy_bytes(blob, previous, size);
      zeros_left_ -= size;
      return true;
    }
    size_t i = 0;
    while (i < size) {
      if (!refill()) return false;
      if (zeros_left_ != 0) {
        const size_t n = zeros_left_ < size - i ? zeros_left_ : size - i;
        copy_bytes(blob + i, previous + i, n);
        zeros_left_ -= n;
        i += n;
      } else {
        const size_t n = literal_left_ < size - i ? literal_left_ : size - i;
        const uint8_t* bytes = take(n);
        if (bytes == nullptr) return false;
        for (size_t k = 0; k < n; ++k) blob[i + k] = static_cast<uint8_t>(previous[i + k] ^ bytes[k]);
        literal_left_ -= n;
        i += n;
      }
    }
    return true;
  }
  // Before the first read only: starts at the token `offset` bytes into the payload with `into`
  // of the delta bytes it stands for already consumed (a position delta_tokens_find noted), so
  // that frames the caller holds are skipped by position, not by walking their tokens. False
  // (and failed) when that position is not inside the payload.
  bool seek(size_t offset, size_t into) noexcept {
    if (failed_ || offset >= size_t(end_ - at_)) {
      failed_ = true;
      return false;
    }
    at_ += offset;
    const uint8_t token = *at_++;
    const size_t n = size_t{token & 0x7Fu} + 1;
    if (into >= n || (token >= 0x80 && into > size_t(end_ - at_))) {
      failed_ = true;
      return false;
    }
    if (token < 0x80) {
      zeros_left_ = n - into;
    } else {
      at_ += into;
      literal_left_ = n - into;
    }
    return true;
  }
  // Consumes the next `size` delta bytes without writing them.
  bool discard(size_t size) noexcept {
    while (size != 0) {
      if (!refill()) return false;
      if (zeros_left_ != 0) {
        const size_t n = zeros_left_ < size ? zeros_left_ : size;
        zeros_left_ -= n;
        size -= n;
      } else {
        const size_t n = literal_left_ < size ? literal_left_ : size;
        if (take(n) == nullptr) return false;
        literal_left_ -= n;
        size -= n;
      }
    }
    return true;
  }
  // True when every token was consumed exactly (no trailing bytes, no unfinished run).
  bool finished() const noexcept {
    return at_ == end_ && !failed_ && zeros_left_ == 0 && literal_left_ == 0;
  }

 private:
  // Starts the next token when the current one is used up. False at the payload's end.
  bool refill() noexcept {
    if (zeros_left_ != 0 || literal_left_ != 0) return true;
    if (at_ == end_) {
      failed_ = true;
      return false;
    }
    const uint8_t token = *at_++;
    if (token < 0x80) zeros_left_ = size_t{token} + 1;
    else literal_left_ = size_t{token} - 0x80 + 1;
    return true;
  }
  // The next `n` literal bytes, or null (and failed) when fewer remain.
  const uint8_t* take(size_t n) noexcept {
    if (failed_ || n > size_t(end_ - at_)) {
      failed_ = true;
      return nullptr;
    }
    const uint8_t* p = at_;
    at_ += n;
    return p;
  }

  // A raw cursor, not a ByteReader: every read is a token or a literal run, each checked once.
  const uint8_t* at_;
  const uint8_t* end_;
  size_t zeros_left_ = 0;
  size_t literal_left_ = 0;
  bool failed_ = false;
};

// Checks a payload's tokens stand for exactly `delta_bytes` bytes, with no trailing byte and no
// unfinished run, by walking the tokens (no byte is decoded).
bool delta_tokens_valid(const uint8_t* payload, size_t size, size_t delta_bytes) noexcept;
// The number of delta bytes a payload's tokens stand for, by walking them: false when a literal
// is cut short. (An inputs datagram does not carry its blob size: this divided by the count.)
bool delta_tokens_length(const uint8_t* payload, size_t size, size_t* delta_bytes) noexcept;
// The same walk, noting on the way where delta byte `seek` lies: the offset of the token that
// holds it (`*seek_offset`) and how many of that token's delta bytes come before it
// (`*seek_into`), for DeltaRunDecoder::seek. Both are left alone when the payload has fewer
// than seek + 1 delta bytes (SIZE_MAX: never). Inline: every received inputs datagram walks.
inline bool delta_tokens_find(const uint8_t* payload, size_t size, size_t seek, size_t* delta_bytes,
                              size_t* seek_offset, size_t* seek_into) noexcept {
  *delta_bytes = 0;
  if (payload == nullptr) return size == 0;
  // By offset, each token's end found without a branch on its kind: a literal cut short only
  // carries the offset past the end, which ends the walk and fails it (no byte past the end is
  // read: a token is read only at an offset below the size).
  size_t at = 0, total = 0;
  // Up to the token that holds delta byte `seek` (one more compare per token), then the rest.
  while (at < size) {
    const uint8_t token = payload[at];
    const size_t n = size_t{token & 0x7Fu} + 1;
    const size_t next = at + 1 + (token >= 0x80 ? n : 0);
    if (total + n > seek) {
      if (next > size) return false;  // literal bytes missing
      *seek_offset = at;
      *seek_into = seek - total;
      total += n;
      at = next;
      break;
    }
    total += n;
    at = next;
  }
  while (at < size) {
    const uint8_t token = payload[at];
    const size_t n = size_t{token & 0x7Fu} + 1;
    total += n;
    at += 1 + (token >= 0x80 ? n : 0);
  }
  if (at != size) return false;  // literal bytes missing
  *delta_bytes = total;
  return true;
}

}  // namespace retcon::detail
