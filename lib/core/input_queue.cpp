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

}  // namespace retcon::detail
