// The parts of Session that every session kind forwards to its RollbackDriver unchanged.
#pragma once

#include <memory>
#include <new>
#include <string>

#include "core/rollback_driver.h"
#include "retcon/session.h"

namespace retcon::detail {

// The driver's counters with the live frame numbers filled in.
inline SessionStats driver_stats(const RollbackDriver& driver) {
  SessionStats s = driver.stats();
  s.committed_bytes = driver.committed_bytes();
  s.current_frame = driver.frame();
  s.confirmed_frame = driver.confirmed_frame();
  s.prediction_window = driver.prediction_window();
  return s;
}

// Session::frame_checksum over a driver: confirmed frames only.
inline Result driver_frame_checksum(RollbackDriver& driver, Frame frame, uint64_t* out) noexcept {
  if (out == nullptr || frame < 0) return Result::invalid_argument;
  if (frame > driver.confirmed_frame() + 1) return Result::wrong_state;
  // A correction the next advance re-simulates changes every state after its frame: the saved
  // ones are stale until then.
  if (driver.first_incorrect() != kNullFrame && frame > driver.first_incorrect()) return Result::wrong_state;
  return driver.checksum_of(frame, out);
}

// describe_state of a saved state into `out` (cleared first); false when the game gave no
// describer. Only used when reporting a mismatch, so the string may grow then.
inline bool describe_saved_state(const GameCallbacks& cb, const SavedState& state, std::string* out) {
  out->clear();
  if (!cb.describe_state) return false;
  const TextSink sink{out, [](void* ctx, const char* text, size_t length) {
                        if (text) static_cast<std::string*>(ctx)->append(text, length);
                      }};
  cb.describe_state(cb.user, state.frame, state.data, state.length, &sink);
  return true;
}

// Set while a session call runs the game's callbacks (events, logs, the frame loop, or its
// transport): calls that change the session made from inside them are refused with
// Result::wrong_state, since re-entering the frame loop mid-frame would corrupt it.
class CallGuard {
 public:
  bool busy() const noexcept { return busy_; }
  class Scope {
   public:
    explicit Scope(CallGuard& guard) noexcept : guard_(guard) { guard_.busy_ = true; }
    ~Scope() { guard_.busy_ = false; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CallGuard& guard_;
  };

 private:
  bool busy_ = false;
};

// Runs `body` inside `guard`, or refuses when the guard is already held (a re-entrant call).
template <class Body>
Result guarded_call(CallGuard& guard, Body&& body) {
  if (guard.busy()) return Result::wrong_state;
  CallGuard::Scope scope(guard);
  return body();
}

class DriverSession : public Session {
 public:
  // Refused from inside a callback, without holding the guard: taking an input reaches no
  // callback (the driver only stores it).
  Result add_local_input(PlayerIndex player, const void* input, size_t size) override {
    if (guard_.busy()) return Result::wrong_state;
    return driver_.add_local_input(player, input, size);
  }
  Result set_input_delay(PlayerIndex player, int32_t frames) override {
    return guarded_call(guard_, [&] { return driver_.set_input_delay(player, frames); });
  }
  Frame current_frame() const override { return driver_.frame(); }
  Frame confirmed_frame() const override { return driver_.confirmed_frame(); }
  SessionStats stats() const override { return driver_stats(driver_); }
  Result frame_checksum(Frame frame, uint64_t* out) override { return driver_frame_checksum(driver_, frame, out); }

  RollbackDriver& driver() noexcept { return driver_; }

 protected:
  RollbackDriver driver_;
  CallGuard guard_;
};

// Runs `build` (which may throw std::bad_alloc while allocating rings) and turns failures into
// a Result; nothing leaks since every allocation is owned by the session being built.
template <class Build>
Result guarded_create(Build&& build) noexcept {
  try {
    return build();
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  } catch (...) {
    return Result::internal_error;
  }
}

// The create_*_session pattern: validate the shared settings, build `Impl` from `config`, hand
// it out only if init succeeded.
template <class Impl, class Base, class Config>
Result create_session(const SessionConfig& shared, const Config& config, std::unique_ptr<Base>* out) noexcept {
  if (out == nullptr) return Result::invalid_argument;
  out->reset();
  if (validate_session_config(shared) != nullptr) return Result::invalid_argument;
  return guarded_create([&] {
    auto session = std::make_unique<Impl>();
    Result r = session->init(config);
    if (r == Result::ok) *out = std::move(session);
    return r;
  });
}

}  // namespace retcon::detail
