#include "core/checksum.h"

#include <xxhash.h>

namespace retcon::detail {

uint64_t xxh3_64(const void* data, size_t length) noexcept { return XXH3_64bits(data, length); }

}  // namespace retcon::detail
