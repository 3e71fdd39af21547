// The C API over the C++ sessions. Every entry point checks its pointers and struct sizes,
// catches every C++ exception, and allocates only in create (one handle holding the bridge and
// the C++ session); per-frame calls forward without allocating.
#include "retcon.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>

#include "callback_bridge.h"
#include "retcon/result.h"
#include "retcon/session.h"

struct retcon_session {
  // Tells a live handle from a destroyed one or a stray pointer, in the common cases: a
  // best-effort check that turns those into RETCON_RESULT_INVALID_ARGUMENT, not a guarantee.
  static constexpr uint32_t kMagic = 0x52434e53;  // "RCNS"
  uint32_t magic = kMagic;
  std::unique_ptr<retcon::Session> impl;
  retcon::capi::CallbackBridge bridge;  // the C++ callbacks' user pointer: never moves
  uint32_t kind = 0;
  // Set while the session runs game callbacks; calls that change the session are refused then.
  bool in_callbacks = false;
};

namespace {

using retcon::Result;

retcon_result to_c(Result r) noexcept { return static_cast<retcon_result>(r); }

// Runs `body` (returning retcon_result), turning any escaping exception into a result code.
template <class Body>
retcon_result guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return RETCON_RESULT_OUT_OF_MEMORY;
  } catch (...) {
    return RETCON_RESULT_INTERNAL_ERROR;
  }
}

// Version 1 of every struct is the only size this library knows. When a struct grows, the
// older sizes stay accepted here and the fields they lack take their defaults.
bool known_size(uint32_t size, size_t current) noexcept { return size == current; }

// Marks a session busy for the duration of a call that runs game callbacks.
class CallbackScope {
 public:
  explicit CallbackScope(retcon_session& s) noexcept : s_(s) { s_.in_callbacks = true; }
  ~CallbackScope() { s_.in_callbacks = false; }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  retcon_session& s_;
};

// Validates the C structs and fills the C++ config, with `bridge` (initialised here) standing
// between the C++ callbacks and the C ones. Returns a static reason, or null when valid.
const char* convert_config(const retcon_session_config* config, const retcon_game_callbacks* callbacks,
                           retcon::capi::CallbackBridge* bridge, retcon::SessionConfig* out) noexcept {
  if (config == nullptr) return "config is NULL";
  if (!known_size(config->size, sizeof(retcon_session_config)))
    return "config->size is not sizeof(retcon_session_config): fill it with retcon_session_config_init";
  if (callbacks == nullptr) return "callbacks is NULL";
  if (!known_size(callbacks->size, sizeof(retcon_game_callbacks)))
    return "callbacks->size is not sizeof(retcon_game_callbacks): fill it with retcon_game_callbacks_init";
  if (config->max_state_size > SIZE_MAX) return "max_state_size must be 1 byte..256 MiB";
  bridge->init(*callbacks, config->logger);
  out->num_players = config->num_players;
  out->input_size = config->input_size;
  out->max_prediction = config->max_prediction;
  out->max_state_size = static_cast<size_t>(config->max_state_size);
  out->save_mode = static_cast<retcon::SaveMode>(config->save_mode);
  out->callbacks = bridge->game_callbacks();
  out->predictor.user = config->predictor.user;
  out->predictor.predict = config->predictor.predict;  // the same function type in C and C++
  out->logger = bridge->logger();
  return retcon::validate_session_config(*out);
}

// A rejected create: with no global last error, the reason goes to the config's logger (when
// the config is readable and has one) as an error line.
retcon_result reject(const retcon_session_config* config, const char* function, const char* reason) noexcept {
  if (config != nullptr && known_size(config->size, sizeof(retcon_session_config)) && config->logger.log &&
      config->logger.min_level <= RETCON_LOG_ERROR) {
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s", function, reason);
    config->logger.log(config->logger.user, RETCON_LOG_ERROR, line);
  }
  return RETCON_RESULT_INVALID_ARGUMENT;
}

// Creates the handle, wires the bridge into `config`, and lets `make` build the C++ session.
template <class Make>
retcon_result create_session(const char* function, const retcon_session_config* config,
                             const retcon_game_callbacks* callbacks, uint32_t kind, retcon_session** out,
                             Make&& make) noexcept {
  if (out == nullptr) return reject(config, function, "out is NULL");
  *out = nullptr;
  return guarded([&] {
    std::unique_ptr<retcon_session> s(new retcon_session);  // bad_alloc -> OUT_OF_MEMORY
    s->kind = kind;
    retcon::SessionConfig cpp;
    if (const char* why = convert_config(config, callbacks, &s->bridge, &cpp)) return reject(config, function, why);
    const Result r = make(cpp, &s->impl);
    if (r != Result::ok) return to_c(r);
    if (!s->impl) return RETCON_RESULT_INTERNAL_ERROR;
    *out = s.release();
    return RETCON_RESULT_OK;
  });
}

bool is_session(const retcon_session* s) noexcept {
  return s != nullptr && s->magic == retcon_session::kMagic && s->impl;
}

// For calls that change the session: refused from inside its callbacks.
retcon_result check_mutable(const retcon_session* s) noexcept {
  if (!is_session(s)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (s->in_callbacks) return RETCON_RESULT_WRONG_STATE;
  return RETCON_RESULT_OK;
}

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
  return RETCON_RESULT_OK;
}

retcon_result retcon_sync_test_config_init(retcon_sync_test_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *config = retcon_sync_test_config{};
  config->size = sizeof(retcon_sync_test_config);
  config->check_distance = retcon::SyncTestConfig{}.check_distance;
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
                        [](const retcon::SessionConfig& c, std::unique_ptr<retcon::Session>* s) {
                          return retcon::create_local_session(c, s);
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
  return create_session(kFunction, config, callbacks, RETCON_SESSION_SYNC_TEST, out,
                        [&](const retcon::SessionConfig& c, std::unique_ptr<retcon::Session>* s) {
                          retcon::SyncTestConfig st;
                          st.session = c;
                          st.check_distance = sync_test->check_distance;
                          return retcon::create_sync_test_session(st, s);
                        });
}

retcon_result retcon_session_destroy(retcon_session* session) {
  if (session == nullptr) return RETCON_RESULT_OK;
  if (!is_session(session)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->in_callbacks) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    session->magic = 0;
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
  return guarded([&] { return to_c(session->impl->add_local_input(player, input, size)); });
}

retcon_result retcon_session_advance_frame(retcon_session* session) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    CallbackScope scope(*session);
    return to_c(session->impl->advance_frame());
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
  return guarded([&] { return to_c(session->impl->set_input_delay(player, frames)); });
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
    static_assert(sizeof stats->rollback_depth_histogram == sizeof s.rollback_depth_histogram);
    for (size_t i = 0; i < sizeof s.rollback_depth_histogram / sizeof s.rollback_depth_histogram[0]; ++i)
      stats->rollback_depth_histogram[i] = s.rollback_depth_histogram[i];
    return RETCON_RESULT_OK;
  });
}

}  // extern "C"
