#include "core/input_queue.h"

#include <bit>

namespace retcon::detail {

void InputQueue::init(PlayerIndex player, uint32_t input_size, uint32_t capacity) {
  const uint32_t cap = std::bit_ceil(capacity < 2 ? 2u : capacity);
  ring_ = std::make_unique<uint8_t[]>(size_t(cap) * input_size);
  zeros_ = std::make_unique<uint8_t[]>(input_size);
  input_size_ = input_size;
  mask_ = cap - 1;
  player_ = player;
  last_confirmed_ = kNullFrame;
  last_predicted_ = kNullFrame;
}

const uint8_t* InputQueue::predict(Frame frame, const Predictor& predictor) noexcept {
  uint8_t* dst = slot(frame);
  const uint8_t* last = last_confirmed_ == kNullFrame ? nullptr : slot(last_confirmed_);
  if (predictor.predict) {
    predictor.predict(predictor.user, player_, frame, last, dst, input_size_);
  } else {
    copy_input(dst, last ? last : zeros_.get(), input_size_);
  }
  if (frame > last_predicted_) last_predicted_ = frame;
  return dst;
}

}  // namespace retcon::detail
