// The usual riders of an inputs datagram (a quality report alone, or a quality reply alone),
// read without the general reader: the receive fast path's (Endpoint::take_usual_inputs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "net/wire.h"

namespace retcon::detail {

// A minimal varint of one or two bytes at `p` (two bytes readable): its length, with the value
// in *v; 0 for anything else (longer, or a final 0 byte: the general reader decides).
inline size_t short_varint(const uint8_t* p, uint32_t* v) noexcept {
  const uint32_t b0 = p[0];
  if (b0 < 0x80) {
    *v = b0;
    return 1;
  }
  const uint32_t b1 = p[1];
  *v = (b0 & 0x7Fu) | (b1 << 7);
  return b1 - 1u < 0x7Fu ? 2 : 0;  // 1..127: minimal and final
}

// read_usual_riders for the riders nearly every riding datagram carries: a quality report alone
// (its frame and advantage one or two bytes each) or a quality reply alone (its hold up to
// three bytes), read in registers without a call. Anything else (other or more riders, longer
// or malformed varints, a frame out of range, a hold too long, too few bytes left) goes to
// read_usual_riders, which decides. So the same result, *at and *out as read_usual_riders
// alone (test Wire.UsualRidersFastPathIsTheGeneralReader). Forced inline: GCC kept it a call
// otherwise, which measured ~0.5 instructions per peer-frame more (p2p 2 64).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool take_usual_riders(const uint8_t** at, const uint8_t* end, uint8_t flags, Frame start_frame,
                              Riders* out) noexcept {
  constexpr uint8_t kReportAlone = 0x02, kReplyAlone = 0x04;  // the flags byte (wire.cpp)
  const uint8_t* const p = *at;
  if (flags == kReportAlone && end - p >= 5) {  // id, frame (2), advantage (2)
    uint32_t frame_v, advantage_v;
    const size_t n = short_varint(p + 1, &frame_v);
    const size_t m = n != 0 ? short_varint(p + 1 + n, &advantage_v) : 0;
    const int64_t frame = int64_t(start_frame) + int32_t((frame_v >> 1) ^ (0u - (frame_v & 1u)));  // unzigzag
    if (m != 0 && frame >= 0 && frame <= std::numeric_limits<Frame>::max()) {
      out->has_report = true;
      out->report = QualityReport{p[0], Frame(frame), int32_t((advantage_v >> 1) ^ (0u - (advantage_v & 1u)))};
      out->has_reply = out->has_silence = false;
      out->checksum_count = 0;
      *at = p + 1 + n + m;
      return true;
    }
  } else if (flags == kReplyAlone && end - p >= 4) {  // id, hold (3)
    const uint32_t b0 = p[1], b1 = p[2], b2 = p[3];
    uint32_t hold = b0;
    size_t n = 1;
    if (b0 >= 0x80) {
      hold = (b0 & 0x7Fu) | ((b1 & 0x7Fu) << 7) | (b2 << 14);
      n = b1 < 0x80 ? (b1 != 0 ? 2 : 0) : (b2 - 1u < 0x7Fu ? 3 : 0);
      if (b1 < 0x80) hold &= 0x3FFFu;
    }
    if (n != 0 && hold <= kMaxReplyHoldUs) {
      out->has_reply = true;
      out->reply = QualityReply{p[0], hold};
      out->has_report = out->has_silence = false;
      out->checksum_count = 0;
      *at = p + 1 + n;
      return true;
    }
  }
  return read_usual_riders(at, end, flags, start_frame, out);
}

}  // namespace retcon::detail
