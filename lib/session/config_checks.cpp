// Validation of the P2P, spectator and sync-test configs with a static reason naming the bad
// field, as validate_session_config does for the shared settings. The sessions' init keeps its
// own checks; these exist so a refused create can say why (C API: logged, and
// retcon_*_config_validate).
#include "retcon/p2p.h"
#include "retcon/session.h"

namespace retcon {
namespace {

bool valid_address(const PeerAddress& a) noexcept { return a.size >= 1 && a.size <= PeerAddress::kCapacity; }

const char* check_network(const NetworkConfig& n) noexcept {
  if (n.frame_rate < 1 || n.frame_rate > 65535) return "frame_rate must be 1..65535";
  if (n.sync_round_trips < 1) return "sync_round_trips must be at least 1";
  if (n.has_match_key) {
    uint8_t any = 0;
    for (uint8_t b : n.match_key) any = uint8_t(any | b);
    if (any == 0) return "has_match_key is set but match_key is all zeros: give the key from the lobby";
  }
  if (n.transfer_bytes_per_second < (uint64_t{1} << 14) || n.transfer_bytes_per_second > (uint64_t{1} << 30))
    return "transfer_bytes_per_second must be 16384..1073741824";
  return nullptr;
}

}  // namespace

const char* validate_sync_test_config(const SyncTestConfig& config) noexcept {
  if (const char* why = validate_session_config(config.session)) return why;
  if (config.check_distance < 1 || config.check_distance > config.session.max_prediction)
    return "check_distance must be 1..max_prediction";
  if (config.check_interval < 1 || config.check_interval > kMaxCheckInterval)
    return "check_interval must be 1..3600";
  return nullptr;
}

const char* validate_p2p_config(const P2PConfig& config) noexcept {
  if (const char* why = validate_session_config(config.session)) return why;
  if (const char* why = check_network(config.network)) return why;
  if (config.desync_interval < 0) return "desync_interval must be 0 (off) or more frames";
  if (config.share_desync_states && config.desync_interval == 0)
    return "share_desync_states needs desync detection (desync_interval > 0)";
  if (config.desync_state_max_size > config.session.max_state_size)
    return "desync_state_max_size must be 0 (max_state_size) up to max_state_size";
  if (config.network.input_batch_frames < 1 || config.network.input_batch_frames > 60)
    return "input_batch_frames must be 1..60";
  if (config.num_spectators > uint32_t(kMaxSpectators)) return "num_spectators must be 0..32";
  if (config.late_input_threshold < 0 || config.late_input_threshold > 600)
    return "late_input_threshold must be 0 (off)..600 frames";
  uint32_t local = 0, remote = 0;
  for (uint32_t p = 0; p < config.session.num_players; ++p) {
    const PlayerSetup& s = config.players[p];
    if (s.kind == PlayerKind::local) {
      ++local;
    } else if (s.kind == PlayerKind::remote) {
      if (!valid_address(s.address)) return "a remote player's address is empty or longer than 32 bytes";
      ++remote;
    } else {
      return "a player kind is neither local nor remote";
    }
  }
  if (local == 0) return "no local player: a machine without players watches with a spectator session";
  for (uint32_t i = 0; i < config.num_spectators; ++i) {
    if (!valid_address(config.spectators[i])) return "a spectator's address is empty or longer than 32 bytes";
    for (uint32_t p = 0; p < config.session.num_players; ++p)
      if (config.players[p].kind == PlayerKind::remote && config.players[p].address == config.spectators[i])
        return "a spectator's address is also a player's";
    for (uint32_t j = 0; j < i; ++j)
      if (config.spectators[j] == config.spectators[i]) return "two spectators have the same address";
  }
  if (config.rejoining && (!config.network.state_transfer || remote == 0))
    return "rejoining needs state_transfer and a remote player to come back to";
  if (remote == 0 && config.num_spectators == 0 && !config.allow_local_only)
    return "no remote player and no spectator: set the remote players' kinds and addresses (every player is "
           "local by default), or allow_local_only for a session that runs alone";
  return nullptr;
}

const char* validate_spectator_config(const SpectatorConfig& config) noexcept {
  SessionConfig s = config.session;
  s.max_prediction = 0;  // a spectator never predicts: its own value does not matter
  if (const char* why = validate_session_config(s)) return why;
  if (const char* why = check_network(config.network)) return why;
  if (!valid_address(config.host)) return "the host address is empty or longer than 32 bytes";
  if (config.catchup_threshold < 1) return "catchup_threshold must be at least 1";
  if (config.catchup_max_frames < 0) return "catchup_max_frames must be 0 or more";
  return nullptr;
}

}  // namespace retcon
