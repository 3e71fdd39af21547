// retcon: what the game supplies. A plain struct of function pointers with a user-data pointer,
// so the C API maps onto it one to one; bind_game() builds one from a C++ object.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "retcon/event.h"
#include "retcon/types.h"

namespace retcon {

// Receives text from describe_state. Call write() as often as needed.
struct TextSink {
  void* ctx;
  void (*write)(void* ctx, const char* text, size_t length);
  void append(const char* text, size_t length) const { write(ctx, text, length); }
};

struct GameCallbacks {
  void* user = nullptr;
  // Write the game state of `frame` into `buffer` (owned by retcon, `capacity` bytes).
  // Return the number of bytes used. A return above `capacity` means it did not fit
  // (return what was needed): the session reports save_failed and does not advance.
  size_t (*save_state)(void* user, Frame frame, uint8_t* buffer, size_t capacity) = nullptr;
  // Restore the state saved for `frame`. `buffer` is owned by retcon; do not keep it.
  void (*load_state)(void* user, Frame frame, const uint8_t* buffer, size_t length) = nullptr;
  // Simulate one frame with every player's input. `flags` holds AdvanceFlags bits.
  void (*advance_frame)(void* user, Frame frame, const FrameInputs* inputs, uint32_t flags) = nullptr;
  // Optional: session events.
  void (*on_event)(void* user, const Event* event) = nullptr;
  // Optional: turn a saved state into text for desync and sync-test reports.
  void (*describe_state)(void* user, Frame frame, const uint8_t* buffer, size_t length,
                         const TextSink* sink) = nullptr;
  // Optional: checksum of a saved state. Default: XXH3-64 of the bytes. Supply one when the
  // saved bytes hold pointers or padding that differ between machines.
  uint64_t (*checksum)(void* user, Frame frame, const uint8_t* buffer, size_t length) = nullptr;

  bool complete() const noexcept { return save_state && load_state && advance_frame; }
};

// Guesses a remote player's input for a frame not yet received. Default: carry the last
// confirmed input forward (zeros before any). `last` is null when nothing was confirmed yet.
struct Predictor {
  void* user = nullptr;
  void (*predict)(void* user, PlayerIndex player, Frame frame, const uint8_t* last,
                  uint8_t* out, size_t input_size) = nullptr;
};

enum class LogLevel : uint32_t { debug = 0, info = 1, warning = 2, error = 3 };

// The library never prints: it hands log lines to this callback (if set).
struct Logger {
  void* user = nullptr;
  void (*log)(void* user, LogLevel level, const char* message) = nullptr;
  LogLevel min_level = LogLevel::info;
};

// Builds GameCallbacks from a C++ object with member functions:
//   size_t save_state(Frame, uint8_t* buffer, size_t capacity);
//   void load_state(Frame, const uint8_t* buffer, size_t length);
//   void advance_frame(Frame, const FrameInputs&, uint32_t flags);
// and optionally on_event(const Event&), describe_state(Frame, const uint8_t*, size_t,
// const TextSink&), checksum(Frame, const uint8_t*, size_t) -> uint64_t.
template <class Game>
GameCallbacks bind_game(Game& game) {
  GameCallbacks cb;
  cb.user = &game;
  cb.save_state = [](void* u, Frame f, uint8_t* b, size_t c) -> size_t {
    return static_cast<Game*>(u)->save_state(f, b, c);
  };
  cb.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
    static_cast<Game*>(u)->load_state(f, b, n);
  };
  cb.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
    static_cast<Game*>(u)->advance_frame(f, *in, flags);
  };
  if constexpr (requires(Game& g, const Event& e) { g.on_event(e); }) {
    cb.on_event = [](void* u, const Event* e) { static_cast<Game*>(u)->on_event(*e); };
  }
  if constexpr (requires(Game& g, const uint8_t* b, const TextSink& s) {
                  g.describe_state(Frame{}, b, size_t{}, s);
                }) {
    cb.describe_state = [](void* u, Frame f, const uint8_t* b, size_t n, const TextSink* s) {
      static_cast<Game*>(u)->describe_state(f, b, n, *s);
    };
  }
  if constexpr (requires(Game& g, const uint8_t* b) {
                  { g.checksum(Frame{}, b, size_t{}) } -> std::convertible_to<uint64_t>;
                }) {
    cb.checksum = [](void* u, Frame f, const uint8_t* b, size_t n) -> uint64_t {
      return static_cast<Game*>(u)->checksum(f, b, n);
    };
  }
  return cb;
}

}  // namespace retcon
