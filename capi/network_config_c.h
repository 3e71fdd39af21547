// The C network configs (retcon_p2p_config, retcon_spectator_config) as the C++ configs they
// stand for. Session creation and the validate functions both go through here, so a field
// added to a C struct is mapped once and validated exactly as the session that uses it.
#pragma once

#include "retcon.h"
#include "retcon/p2p.h"

namespace retcon::capi {

// Same bytes on both sides (abi_checks.cpp); the C++ checks reject a bad `size`.
PeerAddress peer_address_from_c(const retcon_peer_address& a) noexcept;

// Everything but `out->session` (the caller converts the shared settings). `transport` may be
// null when the config is only validated.
void p2p_config_from_c(const retcon_p2p_config& c, Transport* transport, P2PConfig* out) noexcept;
void spectator_config_from_c(const retcon_spectator_config& c, Transport* transport,
                             SpectatorConfig* out) noexcept;

}  // namespace retcon::capi
