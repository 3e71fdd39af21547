// Liveness measured in frames, not datagrams. A peer that keeps sending keep-alives but whose
// input stream never moves (it is stuck, or a wedged acknowledgement stopped its resends) looks
// alive to the endpoint's silence timer; the session notices it here instead:
//   - FrameProgress remembers when a peer's received frame last moved forward;
//   - StallWatch tracks one stall episode of the session (advancing refused by the prediction
//     window): when it began and whether the game was told.
// Plain data and arithmetic on the time the session is given: no clock, no allocation.
#pragma once

#include <cstdint>

#include "retcon/types.h"

namespace retcon::detail {

struct FrameProgress {
  Frame frame = kNullFrame;  // the newest frame received from the peer
  uint64_t at_us = 0;        // when it (or the session's start, before any) was seen

  void start(uint64_t now_us) noexcept {
    frame = kNullFrame;
    at_us = now_us;
  }
  void observe(Frame received, uint64_t now_us) noexcept {
    if (received > frame) {
      frame = received;
      at_us = now_us;
    }
  }
  bool any() const noexcept { return frame != kNullFrame; }
};

class StallWatch {
 public:
  // Call once per poll with whether advancing is blocked now. Returns true exactly once per
  // episode, when it has lasted `notify_delay_us` (at once for 0): time to tell the game.
  bool update(bool blocked, uint64_t now_us, uint64_t notify_delay_us) noexcept {
    if (!blocked) {
      stalled_ = false;
      return false;
    }
    if (!stalled_) {
      stalled_ = true;
      since_us_ = now_us;
      told_ = false;
    }
    if (told_ || now_us - since_us_ < notify_delay_us) return false;
    told_ = true;
    return true;
  }
  bool stalled() const noexcept { return stalled_; }
  uint64_t since_us() const noexcept { return since_us_; }

 private:
  bool stalled_ = false;
  bool told_ = false;
  uint64_t since_us_ = 0;
};

}  // namespace retcon::detail
