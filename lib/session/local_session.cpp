// Local play: every player on this machine. Inputs are never predicted, so the session runs
// from the first frame (no synchronizing phase) and never rolls back.
#include <new>

#include "session/driver_session.h"

namespace retcon {
namespace detail {
namespace {

class LocalSession final : public DriverSession {
 public:
  Result init(const SessionConfig& config) {
    // No remote player: nothing can be mispredicted, so no history is kept (history 0).
    SessionConfig c = config;
    c.max_prediction = 0;
    if (Result r = driver_.init(c, 0, c.save_mode); r != Result::ok) return r;
    for (uint32_t p = 0; p < c.num_players; ++p) driver_.set_local(PlayerIndex(p), true);
    return Result::ok;
  }
  Result advance_frame() override {
    return guarded_call(guard_, [&] { return driver_.advance(); });
  }
};

}  // namespace
}  // namespace detail

Result create_local_session(const SessionConfig& config, std::unique_ptr<Session>* out) {
  return detail::create_session<detail::LocalSession>(config, config, out);
}

}  // namespace retcon
