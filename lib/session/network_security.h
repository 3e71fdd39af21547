// retcon: the security settings of NetworkConfig applied to one protocol endpoint, shared by
// the P2P and spectator sessions.
#pragma once

#include <cstdint>
#include <cstring>

#include "net/endpoint.h"
#include "retcon/p2p.h"

namespace retcon::detail {

// `index` tells apart the endpoints of one session that share a test seed. A zero seed stays
// zero: every endpoint then draws its own from the operating system's entropy.
inline void apply_network_security(const NetworkConfig& network, uint32_t index,
                                   EndpointConfig* e) noexcept {
  static_assert(sizeof network.match_key == kMatchKeySize);
  e->rng_seed = network.rng_seed == 0 ? 0 : network.rng_seed ^ (0x9e3779b97f4a7c15ull * (index + 1));
  e->has_match_key = network.has_match_key;
  std::memcpy(e->match_key, network.match_key, kMatchKeySize);
}

}  // namespace retcon::detail
