// A RollbackDriver around a TestGame with chosen players remote, for tests that feed remote
// inputs by hand in any schedule.
#pragma once

#include <memory>

#include "core/rollback_driver.h"
#include "support/test_game.h"

namespace retcon::test {

// The sizes of a driver or session test (the game's callbacks are the caller's to set).
inline SessionConfig sized_config(uint32_t players, uint32_t input_size, int32_t max_prediction,
                                  SaveMode mode = SaveMode::automatic, size_t max_state = 256) {
  SessionConfig c;
  c.num_players = players;
  c.input_size = input_size;
  c.max_prediction = max_prediction;
  c.max_state_size = max_state;
  c.save_mode = mode;
  return c;
}

struct DriverHarness {
  TestGame game;
  detail::RollbackDriver driver;

  // Players [0, local_players) are local, the rest remote.
  Result init(uint32_t players, uint32_t local_players, uint32_t input_size, int32_t max_prediction,
              SaveMode mode = SaveMode::automatic, size_t max_state = 256) {
    game.events.reserve(64);
    SessionConfig c = sized_config(players, input_size, max_prediction, mode, max_state);
    c.callbacks = bind_game(game);
    Result r = driver.init(c, max_prediction, mode);
    for (uint32_t p = 0; p < players; ++p) driver.set_local(PlayerIndex(p), p < local_players);
    return r;
  }
};

}  // namespace retcon::test
