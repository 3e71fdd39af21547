// Hands events and log lines to the game's callbacks. The library never prints; without a
// callback, events and logs are simply dropped.
#pragma once

#include <cstdarg>
#include <cstdio>

#include "retcon/callbacks.h"
#include "retcon/event.h"

namespace retcon::detail {

class Reporter {
 public:
  void init(const GameCallbacks& callbacks, const Logger& logger) noexcept {
    callbacks_ = callbacks;
    logger_ = logger;
  }

  // Returns an Event with every field cleared, ready to fill.
  static Event make(EventType type, const char* message) noexcept {
    Event e{};
    e.type = type;
    e.player = -1;
    e.frame = kNullFrame;
    e.message = message ? message : "";
    return e;
  }

  void emit(const Event& event) const noexcept {
    if (callbacks_.on_event) callbacks_.on_event(callbacks_.user, &event);
  }

// MinGW: libstdc++ formats like C99 (__USE_MINGW_ANSI_STDIO), not like msvcrt.
#if defined(__MINGW32__)
  __attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  void log(LogLevel level, const char* format, ...) const noexcept {
    if (!logger_.log || level < logger_.min_level) return;
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    logger_.log(logger_.user, level, line);
  }

  bool logs(LogLevel level) const noexcept { return logger_.log && level >= logger_.min_level; }

 private:
  GameCallbacks callbacks_{};
  Logger logger_{};
};

}  // namespace retcon::detail
