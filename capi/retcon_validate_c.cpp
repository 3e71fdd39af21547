// The C API's checks: validation of every config kind with a static reason, retcon's checksum
// of a confirmed frame, and the desync comparisons a session made.
#include <cstring>

#include "handles.h"
#include "retcon/p2p.h"

using namespace retcon::capi;

namespace {

retcon::PeerAddress address_of(const retcon_peer_address& a) noexcept {
  retcon::PeerAddress out;
  out.size = a.size <= RETCON_PEER_ADDRESS_CAPACITY ? a.size : RETCON_PEER_ADDRESS_CAPACITY + 1;
  std::memcpy(out.bytes, a.bytes, RETCON_PEER_ADDRESS_CAPACITY);
  return out;
}

template <class CConfig>
void network_of(const CConfig& c, retcon::NetworkConfig* out) noexcept {
  out->frame_rate = c.frame_rate;
  out->notify_delay_us = c.notify_delay_us;
  out->disconnect_timeout_us = c.disconnect_timeout_us;
  out->sync_round_trips = c.sync_round_trips;
  out->rng_seed = c.rng_seed;
  out->has_match_key = c.has_match_key != 0;
  std::memcpy(out->match_key, c.match_key, sizeof out->match_key);
}

// Sets *reason (when asked) and returns the matching result.
retcon_result answer(const char* why, const char** reason) noexcept {
  if (reason != nullptr) *reason = why;
  return why == nullptr ? RETCON_RESULT_OK : RETCON_RESULT_INVALID_ARGUMENT;
}

// The shared part: the C structs' sizes, the callbacks, and the session settings.
const char* shared_reason(const retcon_session_config* config, const retcon_game_callbacks* callbacks,
                          retcon::SessionConfig* out) noexcept {
  CallbackBridge bridge;
  return convert_config(config, callbacks, &bridge, out);
}

}  // namespace

extern "C" {

retcon_result retcon_sync_test_config_validate(const retcon_session_config* config,
                                               const retcon_sync_test_config* sync_test,
                                               const retcon_game_callbacks* callbacks, const char** reason) {
  retcon::SyncTestConfig c;
  if (const char* why = shared_reason(config, callbacks, &c.session)) return answer(why, reason);
  if (sync_test == nullptr) return answer("sync_test is NULL", reason);
  if (!known_size(sync_test->size, sizeof *sync_test))
    return answer("sync_test->size is not sizeof(retcon_sync_test_config): fill it with retcon_sync_test_config_init",
                  reason);
  c.check_distance = sync_test->check_distance;
  c.check_interval = sync_test->check_interval;
  return answer(retcon::validate_sync_test_config(c), reason);
}

retcon_result retcon_p2p_config_validate(const retcon_session_config* config, const retcon_p2p_config* p2p,
                                         const retcon_game_callbacks* callbacks, const char** reason) {
  retcon::P2PConfig c;
  if (const char* why = shared_reason(config, callbacks, &c.session)) return answer(why, reason);
  if (p2p == nullptr) return answer("p2p is NULL", reason);
  if (!known_size(p2p->size, sizeof *p2p))
    return answer("p2p->size is not sizeof(retcon_p2p_config): fill it with retcon_p2p_config_init", reason);
  if (p2p->num_spectators > RETCON_MAX_SPECTATORS) return answer("num_spectators must be 0..32", reason);
  network_of(*p2p, &c.network);
  c.network.input_batch_frames = p2p->input_batch_frames;
  c.network.loss_hold_frames = p2p->loss_hold_frames;
  c.desync_interval = p2p->desync_interval;
  for (uint32_t p = 0; p < RETCON_MAX_PLAYERS; ++p) {
    c.players[p].kind = static_cast<retcon::PlayerKind>(p2p->player_kinds[p]);
    c.players[p].address = address_of(p2p->player_addresses[p]);
  }
  c.num_spectators = p2p->num_spectators;
  for (uint32_t i = 0; i < p2p->num_spectators; ++i) c.spectators[i] = address_of(p2p->spectators[i]);
  c.allow_local_only = p2p->allow_local_only != 0;
  c.late_input_threshold = p2p->late_input_threshold;
  return answer(retcon::validate_p2p_config(c), reason);
}

retcon_result retcon_spectator_config_validate(const retcon_session_config* config,
                                               const retcon_spectator_config* spectator,
                                               const retcon_game_callbacks* callbacks, const char** reason) {
  retcon::SpectatorConfig c;
  if (const char* why = shared_reason(config, callbacks, &c.session)) return answer(why, reason);
  if (spectator == nullptr) return answer("spectator is NULL", reason);
  if (!known_size(spectator->size, sizeof *spectator))
    return answer("spectator->size is not sizeof(retcon_spectator_config): fill it with retcon_spectator_config_init",
                  reason);
  network_of(*spectator, &c.network);
  c.host = address_of(spectator->host);
  c.catchup_threshold = spectator->catchup_threshold;
  c.catchup_max_frames = spectator->catchup_max_frames;
  return answer(retcon::validate_spectator_config(c), reason);
}

retcon_result retcon_session_frame_checksum(retcon_session* session, int32_t frame, uint64_t* checksum) {
  if (checksum == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    // Hashing may call the game's checksum callback.
    CallbackScope scope(*session);
    return to_c(session->impl->frame_checksum(frame, checksum));
  });
}

retcon_result retcon_session_checksums_compared(const retcon_session* session, uint64_t* count) {
  if (!is_session(session) || count == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *count = session->p2p ? session->p2p->checksums_compared() : 0;
    return RETCON_RESULT_OK;
  });
}

}  // extern "C"
