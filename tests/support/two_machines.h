// The configuration of one machine of a plain two-player match (one local player each), for
// tests that bring their own transports: UDP sockets, a simulator, a transport that counts or
// watches calls. The machine-specific parts (transport, addresses, seed, input size) are the
// arguments; everything else is the usual small match a test plays.
#pragma once

#include <cstdint>

#include "retcon/p2p.h"
#include "support/test_game.h"

namespace retcon::test {

// Machine `m` (0 or 1) of the match: its player is `m`, the other one is remote at `addresses[1 - m]`.
inline P2PConfig two_player_config(uint32_t m, TestGame& game, Transport* transport, const PeerAddress addresses[2],
                                   uint64_t rng_seed, uint32_t input_size = 2) {
  P2PConfig c;
  c.session.num_players = 2;
  c.session.input_size = input_size;
  c.session.max_state_size = 256;
  c.session.callbacks = bind_game(game);
  c.network.transport = transport;
  c.network.rng_seed = rng_seed;
  for (uint32_t p = 0; p < 2; ++p) {
    c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
    c.players[p].address = addresses[p];
  }
  return c;
}

}  // namespace retcon::test
