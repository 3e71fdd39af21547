#include "core/input_queue.h"

#include <bit>

namespace retcon::detail {

void InputQueue::init(PlayerIndex player, uint32_t input_size, uint32_t capacity) {
  const uint32_t cap = std::bit_ceil(capacity < 2 ? 2u : capacity);
  ring_ = std::make_unique<uint8_t[]>(size_t(cap) * input_size);
  init_shared(player, input_size, cap, ring_.get(), input_size, 0);
}

void InputQueue::init_shared(PlayerIndex player, uint32_t input_size, uint32_t capacity, uint8_t* rows,
                             size_t stride, size_t offset) {
  if (rows != ring_.get()) ring_.reset();
  zeros_ = std::make_unique<uint8_t[]>(input_size);
  base_ = rows + offset;
  stride_ = stride;
  column_ = offset;
  input_size_ = input_size;
  mask_ = capacity - 1;
  player_ = player;
  last_confirmed_ = kNullFrame;
  last_predicted_ = kNullFrame;
  last_input_ = zeros_.get();
  carried_from_ = kNotCarried;
}

const uint8_t* InputQueue::predict_with(Frame frame, const Predictor& predictor) noexcept {
  uint8_t* dst = slot(frame);
  carried_from_ = kNotCarried;  // the game's prediction need not be the carry-forward
  const uint8_t* last = last_confirmed_ == kNullFrame ? nullptr : slot(last_confirmed_);
  predictor.predict(predictor.user, player_, frame, last, dst, input_size_);
  return dst;
}

}  // namespace retcon::detail
