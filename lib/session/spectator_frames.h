// What a host streams to its spectators for one frame: every player's confirmed input, zeros
// after a dropped player's cut (the spectator simulates those frames as disconnected).
#pragma once

#include <cstring>

#include "core/rollback_driver.h"

namespace retcon::detail {

// `blob`: num_players * input_size bytes. `frame` must be confirmed.
inline void compose_spectator_frame(const RollbackDriver& driver, Frame frame, uint8_t* blob) noexcept {
  const uint32_t size = driver.input_size();
  for (uint32_t p = 0; p < driver.num_players(); ++p) {
    uint8_t* dst = blob + size_t(p) * size;
    if (driver.absent(PlayerIndex(p), frame)) std::memset(dst, 0, size);
    else std::memcpy(dst, driver.confirmed_input(PlayerIndex(p), frame), size);
  }
}

}  // namespace retcon::detail
