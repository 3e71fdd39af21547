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

bool InputQueue::add_confirmed(Frame frame, const uint8_t* input) noexcept {
  uint8_t* dst = slot(frame);
  // The slot holds the prediction used to simulate `frame` only if one was made for it.
  const bool mispredicted = frame <= last_predicted_ && std::memcmp(dst, input, input_size_) != 0;
  std::memcpy(dst, input, input_size_);
  last_confirmed_ = frame;
  return mispredicted;
}

const uint8_t* InputQueue::predict(Frame frame, const Predictor& predictor) noexcept {
  uint8_t* dst = slot(frame);
  const uint8_t* last = last_confirmed_ == kNullFrame ? nullptr : slot(last_confirmed_);
  if (predictor.predict) {
    predictor.predict(predictor.user, player_, frame, last, dst, input_size_);
  } else {
    std::memcpy(dst, last ? last : zeros_.get(), input_size_);
  }
  if (frame > last_predicted_) last_predicted_ = frame;
  return dst;
}

}  // namespace retcon::detail
