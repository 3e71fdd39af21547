// The C API's handles and the helpers every entry point shares: argument and struct-size
// checks, the exception guard, the re-entrancy guard, and session creation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>

#include "callback_bridge.h"
#include "retcon.h"
#include "retcon/p2p.h"
#include "retcon/replay.h"
#include "retcon/result.h"
#include "retcon/session.h"
#include "retcon/transport.h"

struct retcon_memory_network {
  static constexpr uint32_t kMagic = 0x52434e4d;  // "RCNM"
  uint32_t magic = kMagic;
  retcon::InMemoryNetwork network;
  uint32_t endpoints = 0;  // live endpoint handles: the network must outlive them
};

// A transport handle. UDP, callback and simulator transports own their C++ transport; an
// in-memory endpoint belongs to its network. `users` counts the sessions and simulators that
// borrow it: it cannot be destroyed before them.
struct retcon_transport {
  static constexpr uint32_t kMagic = 0x52434e54;  // "RCNT"
  uint32_t magic = kMagic;
  std::unique_ptr<retcon::Transport> owned;
  retcon::Transport* transport = nullptr;      // owned.get(), or the network's endpoint
  retcon::UdpTransport* udp = nullptr;         // when it is a UDP socket
  retcon::InMemoryTransport* memory = nullptr; // when it is an in-memory endpoint
  retcon::NetworkSimulator* simulator = nullptr;
  retcon_transport* inner = nullptr;           // a simulator's wrapped transport (borrowed)
  retcon_memory_network* network = nullptr;    // an endpoint's network
  // A simulator's link conditions as the C API last set them: retcon_network_simulator_set_links
  // and _set_blackouts each replace their part of a direction and keep the other's.
  retcon::LinkProfile outgoing_link, incoming_link;
  uint32_t users = 0;
  // Non-zero while the C API runs code that may call this transport's callbacks (directly or
  // through a simulator wrapping it): destroying it from one of them is refused then.
  uint32_t busy = 0;

  retcon_transport() = default;
  retcon_transport(const retcon_transport&) = delete;
  retcon_transport& operator=(const retcon_transport&) = delete;
  ~retcon_transport() {
    magic = 0;
    owned.reset();  // a simulator stops using its inner transport here
    if (inner != nullptr) --inner->users;
    if (network != nullptr) --network->endpoints;
  }
};

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
  retcon::P2PSession* p2p = nullptr;      // impl, when the session is peer-to-peer or a spectator
  retcon_transport* transport = nullptr;  // borrowed by a network session (its use count held)
  // The session's shape, for what is built beside it (a recorder).
  uint32_t num_players = 0, input_size = 0;
  size_t max_state_size = 0;
  // retcon_session_start_recording: sits between the session and the game (through the bridge).
  std::unique_ptr<retcon::ReplayRecorder> recorder;

  retcon_session() = default;
  retcon_session(const retcon_session&) = delete;
  retcon_session& operator=(const retcon_session&) = delete;
  ~retcon_session();
};

namespace retcon::capi {

inline retcon_result to_c(retcon::Result r) noexcept { return static_cast<retcon_result>(r); }

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
inline bool known_size(uint32_t size, size_t current) noexcept { return size == current; }

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

// Marks a transport, and every transport it wraps, busy while it may call user callbacks.
class TransportScope {
 public:
  explicit TransportScope(retcon_transport& t) noexcept : t_(t) {
    for (retcon_transport* p = &t_; p != nullptr; p = p->inner) ++p->busy;
  }
  ~TransportScope() {
    for (retcon_transport* p = &t_; p != nullptr; p = p->inner) --p->busy;
  }
  TransportScope(const TransportScope&) = delete;
  TransportScope& operator=(const TransportScope&) = delete;

 private:
  retcon_transport& t_;
};

// Validates the C structs and fills the C++ config, with `bridge` (initialised here) standing
// between the C++ callbacks and the C ones. Returns a static reason, or null when valid.
inline const char* convert_config(const retcon_session_config* config, const retcon_game_callbacks* callbacks,
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
  out->memory_budget = config->memory_budget;
  out->save_mode = static_cast<retcon::SaveMode>(config->save_mode);
  out->callbacks = bridge->game_callbacks();
  out->predictor.user = config->predictor.user;
  out->predictor.predict = config->predictor.predict;  // the same function type in C and C++
  out->logger = bridge->logger();
  return retcon::validate_session_config(*out);
}

// A rejected create: with no global last error, the reason goes to the config's logger (when
// the config is readable and has one) as an error line.
inline retcon_result reject(const retcon_session_config* config, const char* function, const char* reason) noexcept {
  if (config != nullptr && known_size(config->size, sizeof(retcon_session_config)) && config->logger.log &&
      config->logger.min_level <= RETCON_LOG_ERROR) {
    char line[256];
    std::snprintf(line, sizeof line, "%s: %s", function, reason);
    config->logger.log(config->logger.user, RETCON_LOG_ERROR, line);
  }
  return RETCON_RESULT_INVALID_ARGUMENT;
}

// Creates the handle, wires the bridge into `config`, and lets `make(cpp_config, handle)` build
// the C++ session into handle.impl.
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
    s->num_players = cpp.num_players;
    s->input_size = cpp.input_size;
    s->max_state_size = cpp.max_state_size;
    const retcon::Result r = make(cpp, *s);
    if (r != retcon::Result::ok) return to_c(r);
    if (!s->impl) return RETCON_RESULT_INTERNAL_ERROR;
    *out = s.release();
    return RETCON_RESULT_OK;
  });
}

inline bool is_session(const retcon_session* s) noexcept {
  return s != nullptr && s->magic == retcon_session::kMagic && s->impl;
}

// For calls that change the session: refused from inside its callbacks.
inline retcon_result check_mutable(const retcon_session* s) noexcept {
  if (!is_session(s)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (s->in_callbacks) return RETCON_RESULT_WRONG_STATE;
  return RETCON_RESULT_OK;
}

inline bool is_transport(const retcon_transport* t) noexcept {
  return t != nullptr && t->magic == retcon_transport::kMagic && t->transport != nullptr;
}

inline bool is_memory_network(const retcon_memory_network* n) noexcept {
  return n != nullptr && n->magic == retcon_memory_network::kMagic;
}

}  // namespace retcon::capi

inline retcon_session::~retcon_session() {
  magic = 0;
  impl.reset();  // the session stops using its transport here
  recorder.reset();  // after the session: it called the recorder until now
  if (transport != nullptr) --transport->users;
}
