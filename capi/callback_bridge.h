// Turns the C callbacks of a session into retcon::GameCallbacks and retcon::Logger. The C++
// callbacks get the bridge as their user pointer; each trampoline forwards to the C function
// with the game's own user pointer. The C structs handed on (frame inputs, events, text sinks)
// are the C++ objects themselves, reinterpreted: abi_checks.cpp pins their layouts as equal.
#pragma once

#include "retcon.h"
#include "retcon/callbacks.h"

namespace retcon::capi {

class CallbackBridge {
 public:
  // `game` and `logger` are copied; both must already be validated as far as C allows.
  void init(const retcon_game_callbacks& game, const retcon_logger& logger) noexcept {
    game_ = game;
    logger_ = logger;
  }

  GameCallbacks game_callbacks() noexcept {
    GameCallbacks cb;
    cb.user = this;
    if (game_.save_state) cb.save_state = save_state;
    if (game_.load_state) cb.load_state = load_state;
    if (game_.advance_frame) cb.advance_frame = advance_frame;
    if (game_.on_event) cb.on_event = on_event;
    if (game_.describe_state) cb.describe_state = describe_state;
    if (game_.checksum) cb.checksum = checksum;
    return cb;
  }

  // The game's callbacks without the interception below: what a recorder decorates.
  GameCallbacks game_callbacks_direct() noexcept {
    GameCallbacks cb = game_callbacks();
    if (game_.advance_frame) cb.advance_frame = advance_frame_direct;
    return cb;
  }

  // From now on advance_frame goes through `cb` (a recorder's), which calls the game itself.
  void intercept_advance(const GameCallbacks& cb) noexcept { intercept_ = cb; }

  Logger logger() noexcept {
    Logger l;
    l.min_level = static_cast<LogLevel>(logger_.min_level);
    if (logger_.log) {
      l.user = this;
      l.log = log;
    }
    return l;
  }

 private:
  static CallbackBridge& self(void* user) noexcept { return *static_cast<CallbackBridge*>(user); }

  static size_t save_state(void* user, Frame frame, uint8_t* buffer, size_t capacity) {
    const retcon_game_callbacks& g = self(user).game_;
    return g.save_state(g.user, frame, buffer, capacity);
  }
  static void load_state(void* user, Frame frame, const uint8_t* buffer, size_t length) {
    const retcon_game_callbacks& g = self(user).game_;
    g.load_state(g.user, frame, buffer, length);
  }
  static void advance_frame(void* user, Frame frame, const FrameInputs* inputs, uint32_t flags) {
    const GameCallbacks& i = self(user).intercept_;
    if (i.advance_frame != nullptr) return i.advance_frame(i.user, frame, inputs, flags);
    advance_frame_direct(user, frame, inputs, flags);
  }
  static void advance_frame_direct(void* user, Frame frame, const FrameInputs* inputs, uint32_t flags) {
    const retcon_game_callbacks& g = self(user).game_;
    g.advance_frame(g.user, frame, reinterpret_cast<const retcon_frame_inputs*>(inputs), flags);
  }
  static void on_event(void* user, const Event* event) {
    const retcon_game_callbacks& g = self(user).game_;
    g.on_event(g.user, reinterpret_cast<const retcon_event*>(event));
  }
  static void describe_state(void* user, Frame frame, const uint8_t* buffer, size_t length,
                             const TextSink* sink) {
    const retcon_game_callbacks& g = self(user).game_;
    g.describe_state(g.user, frame, buffer, length, reinterpret_cast<const retcon_text_sink*>(sink));
  }
  static uint64_t checksum(void* user, Frame frame, const uint8_t* buffer, size_t length) {
    const retcon_game_callbacks& g = self(user).game_;
    return g.checksum(g.user, frame, buffer, length);
  }
  static void log(void* user, LogLevel level, const char* message) {
    const retcon_logger& l = self(user).logger_;
    l.log(l.user, static_cast<uint32_t>(level), message);
  }

  retcon_game_callbacks game_{};
  retcon_logger logger_{};
  GameCallbacks intercept_{};
};

}  // namespace retcon::capi
