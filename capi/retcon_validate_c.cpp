// The C API's checks: validation of every config kind with a static reason, retcon's checksum
// of a confirmed frame, and the desync comparisons a session made.
#include <cstring>

#include "handles.h"
#include "network_config_c.h"
#include "retcon/p2p.h"

using namespace retcon::capi;

namespace {

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
  p2p_config_from_c(*p2p, nullptr, &c);
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
  spectator_config_from_c(*spectator, nullptr, &c);
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
