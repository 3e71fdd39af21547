// Checksums of saved states: the game's own function if it gave one, else XXH3-64.
#pragma once

#include <cstddef>
#include <cstdint>

#include "retcon/callbacks.h"

namespace retcon::detail {

uint64_t xxh3_64(const void* data, size_t length) noexcept;

inline uint64_t state_checksum(const GameCallbacks& cb, Frame frame, const uint8_t* data,
                               size_t length) noexcept {
  return cb.checksum ? cb.checksum(cb.user, frame, data, length) : xxh3_64(data, length);
}

}  // namespace retcon::detail
