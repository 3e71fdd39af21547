// retcon: the payload of the next inputs datagram, kept ready. An inputs datagram carries every
// unacknowledged frame, so each frame goes out in several datagrams in a row (one per batch until
// the peer's acknowledgement passes it). Instead of splicing every frame's coded delta again for
// each of them, the sender keeps the tokens of its unacknowledged frames as one run, exactly as
// a datagram starting at its first frame carries them (docs/PROTOCOL.md, "Input compression"):
// each frame's delta is appended once when it is queued, and the front is cut off when the
// acknowledgement moves. A datagram is then its header and one copy of this run.
//
// The run is a count of leading zero delta bytes (`lead`, tokenised only when written, since its
// tokens depend on where the run starts) followed by tokens that begin with a literal (`body`).
// Zero runs code greedily from their first byte (a full token per 128 zeros, then the rest), and
// a literal never spans frames, so cutting frames off the front changes only the leading zero
// run: the body from the next literal on is the same bytes whatever the datagram's first frame.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "net/byte_io.h"
#include "net/input_compression.h"
#include "retcon/types.h"

namespace retcon::detail {

class PreparedInputs {
 public:
  // Preallocates for runs of up to `limit` bytes of tokens of `blob_size`-byte frames. A frame
  // that would take the run past the limit is not appended (the run stays behind: next() is
  // then less than one past the sender's newest frame, and its datagrams are built frame by frame).
  void init(size_t blob_size, size_t limit);
  // An empty run whose first frame is `first`.
  void reset(Frame first) noexcept {
    first_ = next_ = first;
    lead_ = 0;
    head_ = end_ = 0;
    open_ = -1;
  }
  Frame first() const noexcept { return first_; }
  Frame next() const noexcept { return next_; }  // one past the last frame held
  uint32_t frames() const noexcept { return uint32_t(next_ - first_); }

  // Appends frame next()'s delta against the frame before it, coded by encode_delta. False,
  // with nothing appended, when the run would grow past its limit.
  // Inline: the sender appends every frame it queues.
  bool append(const EncodedDelta& delta, const uint8_t* tokens) noexcept {
    const size_t zeros = delta.lead_zeros;
    const size_t verbatim = delta.size - delta.lead_bytes;
    if (end_ == head_) {
      // No body: the frame's leading zeros join the lead; its other tokens, if any, start the
      // body (with a literal: the leading zeros stop at the frame's first changed byte).
      const size_t lead = lead_ + zeros;
      if (lead_tokens(lead) + verbatim > limit_) return false;
      lead_ = lead;
      if (verbatim != 0) {
        head_ = 0;
        copy_bytes(buf_.data(), tokens + delta.lead_bytes, verbatim);
        end_ = verbatim;
        open_ = delta.open_tail >= 0 ? long(size_t(delta.open_tail) - delta.lead_bytes) : -1;
      }
      ++next_;
      return true;
    }
    // The usual frame: the input did not change, and the open token has room for its zeros.
    if (verbatim == 0 && open_ >= 0 && size_t{buf_[size_t(open_)]} + 1 + zeros < kDeltaTokenReach) {
      buf_[size_t(open_)] = static_cast<uint8_t>(buf_[size_t(open_)] + zeros);
      ++next_;
      return true;
    }
    return append_body(delta, tokens);
  }

  // append() for a changed input of 1 to 8 `bytes` (`blob` against `previous`, which differ), its
  // tokens written straight into the run: the leading zeros into the run before them, then its
  // pattern's tokens (kWordTails), the bytes encode_delta codes and append() appends. False, with
  // nothing appended, when append() would refuse it (the run's limit), when the body is at its
  // buffer's end (append() moves it first) or when the input did not change after all: then
  // append() encode_delta's tokens.
  // Inline: the sender's every changed input.
  __attribute__((always_inline)) bool append_changed_word(const uint8_t* blob, const uint8_t* previous,
                                                         size_t bytes) noexcept {
    const uint64_t d = load_word(blob, bytes) ^ load_word(previous, bytes);
    const uint32_t changed = nonzero_bytes(d);
    const size_t zeros = size_t(std::countr_zero(changed));  // the leading zeros (`bytes` when unchanged)
    if (zeros == bytes) return false;
    const WordTail& tail = kWordTails[(1u << bytes) | changed];
    // The run's limit as append() sees it (the same answer), and room in the buffer for a token
    // of leading zeros and the tail as put_word_tail writes it (else append() moves the body first).
    uint8_t* const buf = buf_.data();
    if (end_ == head_) {
      // No body: the leading zeros join the lead, the tail starts the body.
      if (lead_tokens(lead_ + zeros) + tail.size > limit_) return false;
      lead_ += zeros;
      head_ = 0;
      put_word_tail(buf, d, tail);
      end_ = tail.size;
      open_ = tail.open;
    } else {
      if (size() + 2 + tail.size > limit_ || end_ + 1 + 16 > room_) return false;
      const size_t at = put_zero_run(buf, end_, open_, zeros);
      put_word_tail(buf + at, d, tail);
      end_ = at + tail.size;
      open_ = tail.open >= 0 ? long(at) + tail.open : -1;
    }
    ++next_;
    return true;
  }

  // append() for a frame whose input did not change: `zeros` (its size, 1..128) zero delta
  // bytes. Always inline and before append(): most frames are this one.
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  bool append_unchanged(size_t zeros) noexcept {
    if (end_ == head_) {
      if (lead_tokens(lead_ + zeros) > limit_) return false;
      lead_ += zeros;
      ++next_;
      return true;
    }
    if (open_ >= 0 && size_t{buf_[size_t(open_)]} + 1 + zeros < kDeltaTokenReach) {
      buf_[size_t(open_)] = static_cast<uint8_t>(buf_[size_t(open_)] + zeros);
      ++next_;
      return true;
    }
    return append_unchanged_body(zeros);
  }

  // Drops the frames before `frame` (the acknowledgement moved). A frame past next() leaves the
  // run empty at `frame`; one before first() changes nothing.
  // Inline: every datagram trims, and the usual cut (the acknowledgement moved a frame or two
  // of unchanged inputs) only shortens the lead; a cut into the body walks its tokens (cut_body).
  void trim(Frame frame) noexcept {
    if (frame <= first_) return;
    if (frame >= next_) return reset(frame);
    const size_t skip = size_t(frame - first_) * blob_size_;  // delta bytes to drop
    first_ = frame;
    if (skip <= lead_) {
      lead_ -= skip;
      return;
    }
    cut_body(skip - lead_);
  }

  // The bytes write() puts out.
  size_t size() const noexcept { return lead_tokens(lead_) + (end_ - head_); }
  // Writes the run's tokens (size() bytes) at `out`.
  // Inline: every datagram writes one.
  // The usual run (a lead of one token at most, a body of up to 16 bytes) without a call.
  void write(uint8_t* out) const noexcept {
    const size_t body = end_ - head_;
    if (lead_ > kDeltaTokenReach || body > 16) return write_long(out);
    if (lead_ != 0) *out++ = static_cast<uint8_t>(lead_ - 1);
    copy_bytes(out, buf_.data() + head_, body);  // fixed-size moves: no call for 16 or fewer
  }
  void write_long(uint8_t* out) const noexcept;
  // True for the usual run: a lead of one token at most and a body of up to 16 bytes (at most
  // 17 bytes in all), which write_short writes.
  bool is_short() const noexcept { return lead_ <= kDeltaTokenReach && end_ - head_ <= 16; }
  // write() for a short run (is_short), in two moves: its lead's token, then 16 bytes from the
  // body's start whatever its size (the buffer has room to read them: init). `out` has room for
  // 17 bytes; the bytes past the run's are garbage. Returns the end of the run's bytes.
  // Always inline: every usual datagram writes one (a call cost about what it does).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  uint8_t* write_short(uint8_t* out) const noexcept {
    *out = static_cast<uint8_t>(lead_ - 1);  // the lead's token; the body overwrites it when none
    out += lead_ != 0 ? 1 : 0;
    std::memcpy(out, buf_.data() + head_, 16);
    return out + (end_ - head_);
  }

 private:
  static size_t lead_tokens(size_t zeros) noexcept {
    return zeros / kDeltaTokenReach + (zeros % kDeltaTokenReach != 0 ? 1 : 0);
  }
  bool append_body(const EncodedDelta& delta, const uint8_t* tokens) noexcept;
  // trim()'s cut past the lead: the first `skip` delta bytes of the body go (0 < skip, and the
  // body holds more than that; first_ is set already). Inline (below): two usual datagrams in five
  // trim into the body, and as a call its saved registers cost
  // more than its walk (p2p 2 64 -3, 8 peers -22 per peer-frame).
  void cut_body(size_t skip) noexcept;
  bool append_unchanged_body(size_t zeros) noexcept;

  std::vector<uint8_t> buf_;
  size_t room_ = 0;  // the bytes of buf_ the body may take (16 more follow: write_short)
  size_t blob_size_ = 0;
  size_t limit_ = 0;
  Frame first_ = 0;
  Frame next_ = 0;
  size_t lead_ = 0;  // zero delta bytes before the first literal (or all of them: no body)
  // The body: buf_[head_, end_), starting with a literal token.
  size_t head_ = 0;
  size_t end_ = 0;
  long open_ = -1;  // offset in buf_ of the body's last token while it is a zero run < 128
};

inline void PreparedInputs::cut_body(size_t skip) noexcept {
  size_t at = head_;
  while (at < end_) {
    const uint8_t token = buf_[at];
    const size_t n = size_t{token & 0x7Fu} + 1;
    if (token >= 0x80) {
      if (skip == 0) {  // the frame starts with this literal
        lead_ = 0;
        head_ = at;
        return;
      }
      if (n > skip) break;  // a literal across frames: never coded so (see below)
      skip -= n;
      at += 1 + n;
      continue;
    }
    if (skip < n) {
      // The frame starts inside this zero run: what is left of the run becomes the lead.
      size_t zeros = n - skip;
      ++at;
      while (at < end_ && buf_[at] < 0x80) zeros += size_t{buf_[at++]} + 1;
      lead_ = zeros;
      head_ = at;
      if (at == end_) head_ = end_ = 0, open_ = -1;
      return;
    }
    skip -= n;
    ++at;
  }
  // The tokens do not stand for the frames counted (not reachable: every append codes whole
  // frames). Start over empty at the new first frame: the sender appends its frames again.
  reset(first_);
}

}  // namespace retcon::detail
