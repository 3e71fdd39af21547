// One player's inputs: a ring of confirmed inputs followed by the predictions used for frames
// whose real input has not arrived yet.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "retcon/callbacks.h"
#include "retcon/types.h"

namespace retcon::detail {

class InputQueue {
 public:
  // Allocates the ring once; `capacity` is rounded up to a power of two.
  void init(PlayerIndex player, uint32_t input_size, uint32_t capacity);

  uint32_t capacity() const noexcept { return mask_ + 1; }
  Frame last_confirmed() const noexcept { return last_confirmed_; }

  // Stores the real input of `frame`, which must be last_confirmed() + 1 (inputs of one player
  // arrive in order; the protocol guarantees it). Returns true when the prediction already used
  // to simulate `frame` differs from it, i.e. a rollback is needed from `frame`.
  bool add_confirmed(Frame frame, const uint8_t* input) noexcept;

  // The real input of a confirmed frame (caller checks frame <= last_confirmed()).
  const uint8_t* confirmed(Frame frame) const noexcept { return slot(frame); }

  // The input to simulate `frame` with: the real one if confirmed, otherwise a fresh prediction
  // from the newest confirmed input, remembered so add_confirmed can tell a misprediction.
  const uint8_t* input_for(Frame frame, const Predictor& predictor, InputStatus* status) noexcept {
    if (frame <= last_confirmed_) {
      *status = InputStatus::confirmed;
      return slot(frame);
    }
    *status = InputStatus::predicted;
    return predict(frame, predictor);
  }

  // True when `frame` can be stored without overwriting a frame at or after `oldest_needed`.
  bool fits(Frame frame, Frame oldest_needed) const noexcept {
    return int64_t(frame) - int64_t(oldest_needed) < int64_t(capacity());
  }

 private:
  uint8_t* slot(Frame frame) const noexcept {
    return ring_.get() + size_t(uint32_t(frame) & mask_) * input_size_;
  }
  const uint8_t* predict(Frame frame, const Predictor& predictor) noexcept;

  std::unique_ptr<uint8_t[]> ring_;
  std::unique_ptr<uint8_t[]> zeros_;  // the "last input" before any was confirmed
  uint32_t input_size_ = 0;
  uint32_t mask_ = 0;
  PlayerIndex player_ = 0;
  Frame last_confirmed_ = kNullFrame;
  Frame last_predicted_ = kNullFrame;  // newest frame whose slot holds a prediction used so far
};

}  // namespace retcon::detail
