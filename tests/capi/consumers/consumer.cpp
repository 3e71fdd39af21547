// A tiny C++ program built against an installed retcon through retcon::retcon_cpp.
#include <cstdio>
#include <cstring>
#include <memory>

#include "retcon/session.h"

struct Counter {
  int32_t frame = 0;
  uint32_t total = 0;
  size_t save_state(retcon::Frame, uint8_t* buffer, size_t capacity) {
    if (capacity < sizeof *this) return sizeof *this;
    std::memcpy(buffer, this, sizeof *this);
    return sizeof *this;
  }
  void load_state(retcon::Frame, const uint8_t* buffer, size_t) { std::memcpy(this, buffer, sizeof *this); }
  void advance_frame(retcon::Frame, const retcon::FrameInputs& in, uint32_t) {
    for (uint32_t p = 0; p < in.player_count; ++p) total = total * 31u + in.player(retcon::PlayerIndex(p))[0];
    ++frame;
  }
};

int main() {
  Counter game;
  retcon::SyncTestConfig config;
  config.session.num_players = 2;
  config.session.input_size = 1;
  config.session.max_state_size = sizeof game;
  config.session.callbacks = retcon::bind_game(game);
  std::unique_ptr<retcon::Session> session;
  if (retcon::create_sync_test_session(config, &session) != retcon::Result::ok) return 1;
  for (int f = 0; f < 120; ++f) {
    const uint8_t a = uint8_t(f), b = uint8_t(f * 7);
    if (session->add_local_input(0, &a, 1) != retcon::Result::ok) return 1;
    if (session->add_local_input(1, &b, 1) != retcon::Result::ok) return 1;
    if (session->advance_frame() != retcon::Result::ok) return 1;
  }
  std::printf("retcon C++: %d frames, total %u, %llu rollbacks\n", int(session->current_frame()), game.total,
              static_cast<unsigned long long>(session->stats().rollbacks));
  return 0;
}
