// retcon: the compression of per-frame input blobs. Each blob is XORed with the previous
// frame's blob (inputs change rarely, so the delta is mostly zeros), and the stream of deltas
// is run-length coded with one-byte tokens:
//   0x00..0x7F  a run of (token + 1) zero bytes
//   0x80..0xFF  (token - 0x80 + 1) literal bytes follow
// Zero runs continue across blob boundaries, so a held button costs one byte per 128 bytes of
// unchanged input. See docs/PROTOCOL.md.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

// A zero run this long inside changed bytes is cheaper as its own token than as literals.
inline constexpr size_t kDeltaSplitRun = 3;

// Inputs of up to 8 bytes (the usual ones) are coded from one word: the delta is that word's XOR,
// and its changed bytes are a bit each.
// Up to 8 bytes (n >= 1) as a little-endian word, the bytes beyond n zero.
inline uint64_t load_word(const uint8_t* p, size_t n) noexcept {
  auto load32 = [](const uint8_t* q) {
    if constexpr (std::endian::native == std::endian::little) {
      uint32_t v;  // one load (the shifts below are not always seen to be one)
      std::memcpy(&v, q, 4);
      return v;
    } else {
      return uint32_t(q[0]) | uint32_t(q[1]) << 8 | uint32_t(q[2]) << 16 | uint32_t(q[3]) << 24;
    }
  };
  if (n >= 4) return load32(p) | (uint64_t(load32(p + n - 4)) << (8 * (n - 4)));  // overlap: same bytes
  uint64_t v = p[0];
  if (n >= 2) v |= uint64_t(p[1]) << 8;
  if (n == 3) v |= uint64_t(p[2]) << 16;
  return v;
}
// Bit i: byte i of the word `d` is not zero. (Each byte's bits folded into its lowest, then gathered.)
inline uint32_t nonzero_bytes(uint64_t d) noexcept {
  uint64_t x = d | (d >> 4);
  x |= x >> 2;
  x |= x >> 1;
  x &= 0x0101010101010101ull;
  return uint32_t((x * 0x0102040810204080ull) >> 56);
}

// The tokens of a delta of 1 to 8 bytes from its first changed byte on (a coder writes its
// leading zeros itself: a token of their own, or merged into the run before), for each pattern
// of changed bytes: the format's rule, worked out once per pattern (kWordTails) instead of for
// every frame. A literal runs through changed bytes and zero runs shorter than kDeltaSplitRun
// between them, and ends before a longer run or at the blob's end; every zero run is one token
// (fewer than 128 zeros). At most two literals fit in 8 bytes (with a run of 3 between them),
// and the tokens take at most 9 bytes (a literal of 8).
// Each pattern's tokens are kept as they are written, the literals' bytes zero (`tokens`), and
// each literal as where its bytes go and which bits of the delta word they are: writing them is
// a copy and two masked ORs, no loop (put_word_tail).
struct WordTail {
  uint8_t tokens[16] = {};   // the tokens, literal bytes 0
  uint64_t literal[2] = {};  // a literal's bits of the delta word shifted down by `shift` (0: none)
  uint8_t at[2] = {};        // where a literal's bytes start in `tokens` (at most 8)
  uint8_t shift[2] = {};     // 8 * a literal's first delta byte
  uint8_t size = 0;          // bytes of the tokens
  int8_t open = -1;          // offset of the last token when it is a zero run (it can grow), else -1
};
constexpr WordTail word_tail(size_t size, uint32_t changed) noexcept {
  WordTail t;
  const uint32_t end = 1u << size;  // a stop bit past the last byte
  size_t i = size_t(std::countr_zero(changed | end));
  size_t literals = 0;
  while (i < size) {
    if (((changed >> i) & 1u) == 0) {
      const size_t run = size_t(std::countr_zero((changed | end) >> i));
      t.open = int8_t(t.size);
      t.tokens[t.size++] = static_cast<uint8_t>(run - 1);
      i += run;
      continue;
    }
    size_t j = i;
    for (;;) {
      j += size_t(std::countr_zero(~changed >> j));  // past the changed bytes (stops at `end`)
      const size_t k = j + size_t(std::countr_zero((changed | end) >> j));
      if (k == size || k - j >= kDeltaSplitRun) break;
      j = k;
    }
    t.tokens[t.size++] = static_cast<uint8_t>(0x80 + (j - i) - 1);
    t.at[literals] = t.size;
    t.shift[literals] = uint8_t(8 * i);
    t.literal[literals] = j - i == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * (j - i))) - 1;
    ++literals;
    t.size = uint8_t(t.size + (j - i));
    t.open = -1;
    i = j;
  }
  return t;
}
// Indexed by (1 << size) | changed, for sizes 1 to 8.
inline constexpr std::array<WordTail, 512> kWordTails = [] {
  std::array<WordTail, 512> tails{};
  for (size_t size = 1; size <= 8; ++size)
    for (uint32_t changed = 1; changed < (1u << size); ++changed) tails[(1u << size) | changed] = word_tail(size, changed);
  return tails;
}();
// The most bytes a tail takes (8 changed bytes: a literal of 8).
inline constexpr size_t kMostWordTail = 9;
static_assert([] {
  for (const WordTail& t : kWordTails)
    if (t.size > kMostWordTail || t.at[0] > 8 || t.at[1] > 8) return false;
  return true;
}());
// Writes `tail`'s tokens for the delta word `d` at `out`, which has room for 16 bytes (what
// follows the tokens there is garbage).
inline void put_word_tail(uint8_t* out, uint64_t d, const WordTail& tail) noexcept {
  std::memcpy(out, tail.tokens, 16);
  for (size_t k = 0; k < 2; ++k) {
    const uint64_t bits = (d >> tail.shift[k]) & tail.literal[k];
    if constexpr (std::endian::native == std::endian::little) {
      uint64_t v;  // the 8 bytes from the literal's first: its bytes, then tokens after it
      std::memcpy(&v, out + tail.at[k], 8);
      v |= bits;
      std::memcpy(out + tail.at[k], &v, 8);
    } else {
      for (size_t n = 0; n < 8; ++n) out[tail.at[k] + n] = static_cast<uint8_t>(out[tail.at[k] + n] | (bits >> (8 * n)));
    }
  }
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

// What each token stands for, looked up instead of worked out (the walks below do nothing else):
// the delta bytes (low byte) and the payload bytes, itself and its literals (the byte above).
inline constexpr std::array<uint16_t, 256> kTokenSpans = [] {
  std::array<uint16_t, 256> spans{};
  for (uint32_t token = 0; token < 256; ++token) {
    const uint32_t n = (token & 0x7Fu) + 1;
    spans[token] = uint16_t(n | (1 + (token >= 0x80 ? n : 0)) << 8);
  }
  return spans;
}();

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
    const uint32_t span = kTokenSpans[payload[at]];
    const size_t n = span & 0xFFu;
    total += n;
    if (total > seek) {
      const size_t next = at + (span >> 8);
      if (next > size) return false;  // literal bytes missing
      *seek_offset = at;
      *seek_into = seek - (total - n);
      at = next;
      break;
    }
    at += span >> 8;
  }
  while (at < size) {
    const uint32_t span = kTokenSpans[payload[at]];
    total += span & 0xFFu;
    at += span >> 8;
  }
  if (at != size) return false;  // literal bytes missing
  *delta_bytes = total;
  return true;
}

// The receiver's usual question about a payload, with the answer it needs only: do its tokens
// stand for exactly `expected` delta bytes, whole (no trailing byte, no literal cut short)? And
// where does delta byte `seek` (< expected) lie (`*seek_offset`, `*seek_into`, as
// delta_tokens_find notes them)? True exactly when delta_tokens_find(payload, size, seek, ...)
// is true with `expected` delta bytes, and then with the same position. Each walk counts down what
// is left (no running total to compare), and the offset, not a pointer, goes past the end of a
// literal cut short, ending the walk (no byte past the end is read).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool delta_tokens_expected(const uint8_t* payload, size_t size, size_t seek, size_t expected,
                                  size_t* seek_offset, size_t* seek_into) noexcept {
  size_t at = 0, left = seek;  // delta bytes before the wanted one
  uint32_t span;
  for (;;) {
    if (at >= size) return false;  // ended (or a literal ran past the end) before delta byte `seek`
    span = kTokenSpans[payload[at]];
    if ((span & 0xFFu) > left) break;  // this token holds it
    left -= span & 0xFFu;
    at += span >> 8;
  }
  *seek_offset = at;
  *seek_into = left;
  size_t rest = expected - seek + left;  // delta bytes from this token's first on
  for (;;) {
    const size_t n = span & 0xFFu;
    if (n > rest) return false;  // more than `expected`
    rest -= n;
    at += span >> 8;
    if (at >= size) return at == size && rest == 0;
    span = kTokenSpans[payload[at]];
  }
}

// Where the expansion of a measured payload starts: delta byte `into` of the token at `offset`
// (as delta_tokens_find noted them). `zeros` and `literal` are what is left of that token, `at`
// its next literal byte (or the next token when both are 0).
struct MeasuredCursor {
  const uint8_t* at;
  size_t zeros;
  size_t literal;
};
inline MeasuredCursor measured_cursor(const uint8_t* payload, size_t offset, size_t into) noexcept {
  const uint8_t* at = payload + offset;
  const size_t first = *at++;
  if (first < 0x80) return {at, first + 1 - into, 0};
  return {at + into, 0, first - 0x7F - into};
}

// The frames from delta byte `seek` on of a payload delta_tokens_find measured with that seek and
// found whole (`offset` and `into` as it noted them): `frames` blobs of `blob` bytes, each its
// predecessor XOR its delta, written to `slot` and the slots after it in the ring
// [ring, ring_end) (wrapping), the first one's predecessor `previous`. What DeltaRunDecoder's seek
// and apply do for each frame, without their bounds checks: the walk proved every token and
// literal byte of these frames lies inside the payload, so no read here can pass its end (the
// receiver's usual path, where the decoder's per-token checks were a third of the expansion).
// Returns the last frame's slot.
// kBlob: the blob size when it is a constant (4: a pad's input, the usual one), 0 when `blob` says.
template <size_t kBlob>
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline uint8_t* expand_measured_sized(const uint8_t* payload, size_t offset, size_t into, size_t frames,
                                      size_t any_blob, const uint8_t* previous, uint8_t* slot, uint8_t* ring,
                                      uint8_t* ring_end) noexcept {
  const size_t blob = kBlob != 0 ? kBlob : any_blob;
  auto [at, zeros, literal] = measured_cursor(payload, offset, into);
  for (;;) {
    if (zeros >= blob) {  // the usual frame: an input that did not change, inside the run under way
      copy_bytes(slot, previous, blob);
      zeros -= blob;
    } else {
      for (size_t i = 0; i < blob;) {
        if (zeros == 0 && literal == 0) {
          const size_t token = *at++;
          if (token < 0x80) zeros = token + 1;
          else literal = token - 0x7F;
        }
        if (zeros != 0) {
          const size_t n = zeros < blob - i ? zeros : blob - i;
          copy_bytes(slot + i, previous + i, n);
          zeros -= n;
          i += n;
        } else {
          const size_t n = literal < blob - i ? literal : blob - i;
          for (size_t k = 0; k < n; ++k) slot[i + k] = static_cast<uint8_t>(previous[i + k] ^ at[k]);
          at += n;
          literal -= n;
          i += n;
        }
      }
    }
    if (--frames == 0) return slot;
    previous = slot;
    slot += blob;
    if (slot == ring_end) slot = ring;
  }
}
// The delta of the 4-byte frame that starts at a measured payload's cursor, as a word in memory
// order: `zeros` and `literal` are what is left of the token under way (`at`: its next literal
// byte, or the next token when both are 0), moved past the frame. The walk proved the frame's
// tokens and bytes lie inside the payload.
inline uint32_t next_delta_word(const uint8_t*& at, size_t& zeros, size_t& literal) noexcept {
  uint32_t delta = 0;
  size_t i = 0;  // the frame's bytes spelt
  for (;;) {
    if (zeros != 0) {
      const size_t n = zeros < 4 - i ? zeros : 4 - i;
      zeros -= n;
      i += n;
      if (i == 4) return delta;
    }
    if (literal == 0) {
      const size_t token = *at++;
      if (token < 0x80) {
        zeros = token + 1;
        continue;
      }
      literal = token - 0x7F;
    }
    do {  // byte i of the frame, in memory order
      const uint32_t shift = std::endian::native == std::endian::little ? uint32_t(8 * i) : uint32_t(24 - 8 * i);
      delta |= uint32_t(*at++) << shift;
      ++i;
      --literal;
    } while (literal != 0 && i < 4);
    if (i == 4) return delta;
  }
}

// expand_measured_sized<4> a word at a time (the same arguments, the same frames written, the same
// result): the previous frame stays in a register, a frame inside a zero run (an input that did
// not change: most) is that word stored again, any other is it XOR next_delta_word.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline uint8_t* expand_measured_words(const uint8_t* payload, size_t offset, size_t into, size_t frames,
                                      const uint8_t* previous, uint8_t* slot, uint8_t* ring,
                                      uint8_t* ring_end) noexcept {
  auto [at, zeros, literal] = measured_cursor(payload, offset, into);
  uint32_t word;
  std::memcpy(&word, previous, 4);
  for (;;) {
    if (zeros >= 4) zeros -= 4;
    else word ^= next_delta_word(at, zeros, literal);
    std::memcpy(slot, &word, 4);
    if (--frames == 0) return slot;
    slot += 4;
    if (slot == ring_end) slot = ring;
  }
}

// The 4-byte blob (a pad's input) with its sizes known to the compiler: the copies of whole
// frames are one move.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline uint8_t* expand_measured(const uint8_t* payload, size_t offset, size_t into, size_t frames, size_t blob,
                                const uint8_t* previous, uint8_t* slot, uint8_t* ring, uint8_t* ring_end) noexcept {
  if (blob == 4) return expand_measured_sized<4>(payload, offset, into, frames, 4, previous, slot, ring, ring_end);
  return expand_measured_sized<0>(payload, offset, into, frames, blob, previous, slot, ring, ring_end);
}

}  // namespace retcon::detail
