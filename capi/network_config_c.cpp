#include "network_config_c.h"

#include <cstring>

namespace retcon::capi {
namespace {

// The network settings both C structs share, field for field.
template <class CConfig>
void network_from_c(const CConfig& c, Transport* transport, NetworkConfig* out) noexcept {
  out->transport = transport;
  out->frame_rate = c.frame_rate;
  out->notify_delay_us = c.notify_delay_us;
  out->disconnect_timeout_us = c.disconnect_timeout_us;
  out->sync_round_trips = c.sync_round_trips;
  out->rng_seed = c.rng_seed;
  out->has_match_key = c.has_match_key != 0;
  std::memcpy(out->match_key, c.match_key, sizeof out->match_key);
  out->handshake_timeout_us = c.handshake_timeout_us;
  out->state_transfer = c.state_transfer != 0;
  out->transfer_bytes_per_second = c.transfer_bytes_per_second;
}

}  // namespace

PeerAddress peer_address_from_c(const retcon_peer_address& a) noexcept {
  PeerAddress out;
  out.size = a.size;
  std::memcpy(out.bytes, a.bytes, sizeof out.bytes);
  return out;
}

void p2p_config_from_c(const retcon_p2p_config& c, Transport* transport, P2PConfig* out) noexcept {
  network_from_c(c, transport, &out->network);
  out->network.input_batch_frames = c.input_batch_frames;
  out->network.loss_hold_frames = c.loss_hold_frames;
  out->desync_interval = c.desync_interval;
  for (uint32_t p = 0; p < RETCON_MAX_PLAYERS; ++p) {
    out->players[p].kind = static_cast<PlayerKind>(c.player_kinds[p]);
    out->players[p].address = peer_address_from_c(c.player_addresses[p]);
  }
  // The count is checked by the caller (0..RETCON_MAX_SPECTATORS) before it gets here.
  out->num_spectators = c.num_spectators;
  for (uint32_t i = 0; i < c.num_spectators && i < RETCON_MAX_SPECTATORS; ++i)
    out->spectators[i] = peer_address_from_c(c.spectators[i]);
  out->allow_local_only = c.allow_local_only != 0;
  out->late_input_threshold = c.late_input_threshold;
  out->adaptive_delay = c.adaptive_delay != 0;
  out->adaptive_delay_rule.rtt_percent = c.adaptive_delay_rtt_percent;
  out->adaptive_delay_rule.min_frames = c.adaptive_delay_min_frames;
  out->adaptive_delay_rule.max_frames = c.adaptive_delay_max_frames;
  out->allow_rejoin = c.allow_rejoin != 0;
  out->rejoining = c.rejoining != 0;
  out->share_desync_states = c.share_desync_states != 0;
  out->desync_state_max_size = size_t(c.desync_state_max_size);
}

void spectator_config_from_c(const retcon_spectator_config& c, Transport* transport,
                             SpectatorConfig* out) noexcept {
  network_from_c(c, transport, &out->network);
  out->host = peer_address_from_c(c.host);
  out->catchup_threshold = c.catchup_threshold;
  out->catchup_max_frames = c.catchup_max_frames;
}

}  // namespace retcon::capi
