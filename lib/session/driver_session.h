// The parts of Session that every session kind forwards to its RollbackDriver unchanged.
#pragma once

#include "core/rollback_driver.h"
#include "retcon/session.h"

namespace retcon::detail {

class DriverSession : public Session {
 public:
  Result add_local_input(PlayerIndex player, const void* input, size_t size) override {
    return driver_.add_local_input(player, input, size);
  }
  Result set_input_delay(PlayerIndex player, int32_t frames) override {
    return driver_.set_input_delay(player, frames);
  }
  Frame current_frame() const override { return driver_.frame(); }
  Frame confirmed_frame() const override { return driver_.confirmed_frame(); }
  SessionStats stats() const override {
    SessionStats s = driver_.stats();
    s.current_frame = driver_.frame();
    s.confirmed_frame = driver_.confirmed_frame();
    return s;
  }

  RollbackDriver& driver() noexcept { return driver_; }

 protected:
  RollbackDriver driver_;
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

}  // namespace retcon::detail
