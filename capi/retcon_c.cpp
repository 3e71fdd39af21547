// The C API over the C++ sessions. Every entry point checks its pointers and struct sizes,
// catches every C++ exception, and allocates only in create (one handle holding the bridge and
// the C++ session); per-frame calls forward without allocating.
#include "retcon.h"

#include "handles.h"

namespace {
using namespace retcon::capi;
using retcon::Result;
}  // namespace

extern "C" {

const char* retcon_result_name(retcon_result result) {
  return retcon::result_name(static_cast<Result>(result));
}

uint32_t retcon_version(void) { return RETCON_VERSION_NUMBER; }

const char* retcon_version_string(void) { return RETCON_VERSION_STRING; }

const char* retcon_event_type_name(uint32_t type) {
  return retcon::event_type_name(static_cast<retcon::EventType>(type));
}

retcon_result retcon_game_callbacks_init(retcon_game_callbacks* callbacks) {
  if (callbacks == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *callbacks = retcon_game_callbacks{};
  callbacks->size = sizeof(retcon_game_callbacks);
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_config_init(retcon_session_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::SessionConfig defaults;
  *config = retcon_session_config{};
  config->size = sizeof(retcon_session_config);
  config->num_players = defaults.num_players;
  config->input_size = defaults.input_size;
  config->max_prediction = defaults.max_prediction;
  config->save_mode = static_cast<uint32_t>(defaults.save_mode);
  config->max_state_size = defaults.max_state_size;
  config->logger.min_level = static_cast<uint32_t>(defaults.logger.min_level);
  config->memory_budget = defaults.memory_budget;
  return RETCON_RESULT_OK;
}

retcon_result retcon_sync_test_config_init(retcon_sync_test_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *config = retcon_sync_test_config{};
  config->size = sizeof(retcon_sync_test_config);
  config->check_distance = retcon::SyncTestConfig{}.check_distance;
  config->check_interval = retcon::SyncTestConfig{}.check_interval;
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_stats_init(retcon_session_stats* stats) {
  if (stats == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *stats = retcon_session_stats{};
  stats->size = sizeof(retcon_session_stats);
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_config_validate(const retcon_session_config* config,
                                             const retcon_game_callbacks* callbacks, const char** reason) {
  if (reason != nullptr) *reason = nullptr;
  return guarded([&] {
    retcon::capi::CallbackBridge bridge;
    retcon::SessionConfig cpp;
    const char* why = convert_config(config, callbacks, &bridge, &cpp);
    if (reason != nullptr) *reason = why;
    return why == nullptr ? RETCON_RESULT_OK : RETCON_RESULT_INVALID_ARGUMENT;
  });
}

retcon_result retcon_local_session_create(const retcon_session_config* config,
                                          const retcon_game_callbacks* callbacks, retcon_session** out) {
  return create_session("retcon_local_session_create", config, callbacks, RETCON_SESSION_LOCAL, out,
                        [](const retcon::SessionConfig& c, retcon_session& s) {
                          return retcon::create_local_session(c, &s.impl);
                        });
}

retcon_result retcon_sync_test_session_create(const retcon_session_config* config,
                                              const retcon_sync_test_config* sync_test,
                                              const retcon_game_callbacks* callbacks, retcon_session** out) {
  static constexpr const char* kFunction = "retcon_sync_test_session_create";
  if (out != nullptr) *out = nullptr;
  if (sync_test == nullptr) return reject(config, kFunction, "sync_test is NULL");
  if (!known_size(sync_test->size, sizeof(retcon_sync_test_config)))
    return reject(config, kFunction,
                  "sync_test->size is not sizeof(retcon_sync_test_config): fill it with retcon_sync_test_config_init");
  if (config != nullptr && known_size(config->size, sizeof(retcon_session_config)) &&
      (sync_test->check_distance < 1 || sync_test->check_distance > config->max_prediction))
    return reject(config, kFunction, "check_distance must be 1..max_prediction");
  if (sync_test->check_interval < 1 || sync_test->check_interval > retcon::kMaxCheckInterval)
    return reject(config, kFunction, "check_interval must be 1..3600");
  return create_session(kFunction, config, callbacks, RETCON_SESSION_SYNC_TEST, out,
                        [&](const retcon::SessionConfig& c, retcon_session& s) {
                          retcon::SyncTestConfig st;
                          st.session = c;
                          st.check_distance = sync_test->check_distance;
                          st.check_interval = sync_test->check_interval;
                          return retcon::create_sync_test_session(st, &s.impl);
                        });
}

retcon_result retcon_session_destroy(retcon_session* session) {
  if (session == nullptr) return RETCON_RESULT_OK;
  if (!is_session(session)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->in_callbacks) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    delete session;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_get_kind(const retcon_session* session, uint32_t* kind) {
  if (!is_session(session) || kind == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *kind = session->kind;
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_add_local_input(retcon_session* session, int32_t player, const void* input,
                                             size_t size) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    CallbackScope scope(*session);  // may log
    return to_c(session->impl->add_local_input(player, input, size));
  });
}

retcon_result retcon_session_advance_frame(retcon_session* session) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    CallbackScope scope(*session);
    const retcon::Result r = session->impl->advance_frame();
    // Frames up to the confirmed one can no longer change: they move into the recording.
    if (session->recorder) session->recorder->commit(session->impl->confirmed_frame());
    return to_c(r);
  });
}

retcon_result retcon_session_poll(retcon_session* session, uint64_t now_us) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    CallbackScope scope(*session);
    return to_c(session->impl->poll(now_us));
  });
}

retcon_result retcon_session_set_input_delay(retcon_session* session, int32_t player, int32_t frames) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    CallbackScope scope(*session);  // may log
    return to_c(session->impl->set_input_delay(player, frames));
  });
}

retcon_result retcon_session_current_frame(const retcon_session* session, int32_t* frame) {
  if (!is_session(session) || frame == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *frame = session->impl->current_frame();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_confirmed_frame(const retcon_session* session, int32_t* frame) {
  if (!is_session(session) || frame == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    *frame = session->impl->confirmed_frame();
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_get_stats(const retcon_session* session, retcon_session_stats* stats) {
  if (!is_session(session) || stats == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  if (!known_size(stats->size, sizeof(retcon_session_stats))) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    const retcon::SessionStats s = session->impl->stats();
    stats->current_frame = s.current_frame;
    stats->confirmed_frame = s.confirmed_frame;
    stats->max_rollback_depth = s.max_rollback_depth;
    stats->frames_advanced = s.frames_advanced;
    stats->frames_resimulated = s.frames_resimulated;
    stats->rollbacks = s.rollbacks;
    stats->saves = s.saves;
    stats->loads = s.loads;
    stats->checksums = s.checksums;
    stats->frames_stalled = s.frames_stalled;
    stats->committed_bytes = s.committed_bytes;
    stats->prediction_window = s.prediction_window;
    static_assert(sizeof stats->rollback_depth_histogram == sizeof s.rollback_depth_histogram);
    for (size_t i = 0; i < sizeof s.rollback_depth_histogram / sizeof s.rollback_depth_histogram[0]; ++i)
      stats->rollback_depth_histogram[i] = s.rollback_depth_histogram[i];
    return RETCON_RESULT_OK;
  });
}

}  // extern "C"
