// Fighter over the network: opening the UDP socket and finding the peer, shared by fighter_net
// and the window's --net mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "retcon/transport.h"

namespace fighter {

// "127.0.0.1:5000" or "[::1]:5000" to an address; false when it does not parse.
bool parse_peer_address(const std::string& text, retcon::PeerAddress* out);

// Binds `bind`:`port` (0: any free port) and prints "listening on HOST:PORT" on stdout. With
// remote "any", waits (up to `wait_us`) for the first datagram and takes its sender as the peer
// (it is the peer's handshake, which repeats, so dropping it costs nothing): both sides can
// then bind port 0 and nothing depends on a fixed port. Messages go to stderr; false on failure.
bool open_udp_peer(const std::string& bind, uint16_t port, const std::string& remote, uint64_t wait_us,
                   std::unique_ptr<retcon::UdpTransport>* udp, retcon::PeerAddress* peer);

}  // namespace fighter
