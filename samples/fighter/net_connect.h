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

// Binds `bind`:`port` (0: any free port) and prints "listening on HOST:PORT" on stdout. The peer
// is always configured, never guessed: `remote` is "HOST:PORT", or "file:PATH" to wait (up to
// `wait_us`) for PATH to hold "HOST:PORT" (a launcher writes it once the peer printed where it
// listens, so both sides can bind port 0 and nothing depends on a fixed port). Taking the first
// datagram's sender as the peer, as "any" once did, let one stranger's byte steal the match.
// Messages go to stderr; false on failure.
bool open_udp_peer(const std::string& bind, uint16_t port, const std::string& remote, uint64_t wait_us,
                   std::unique_ptr<retcon::UdpTransport>* udp, retcon::PeerAddress* peer);

}  // namespace fighter
