// GoogleTest checks over a Match (support/match_harness.h).
#pragma once

#include <algorithm>

#include <gtest/gtest.h>

#include "support/match_harness.h"

namespace retcon::test {

// Every machine's recorded states equal the lockstep reference for every frame it ran with
// confirmed inputs, up to `upto`; no desync report anywhere. With `every_machine_got_there`,
// each machine must also have reached `upto` (leave it off when some machine stopped early).
inline void expect_agree_with_reference(Match& match, Frame upto, bool every_machine_got_there = false) {
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    EXPECT_EQ(me.game.frame_errors, 0) << "machine " << m;
    // Hashes are recorded when a frame is simulated: only frames before the current one exist.
    const Frame last = std::min({upto, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    if (every_machine_got_there) {
      EXPECT_GE(last, upto) << "machine " << m << " did not get that far";
    }
    // A spectator that joined late from a transferred state ran only the frames after it.
    Frame first = 0;
    if (me.spectator)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    for (Frame f = first; f <= last; ++f) ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "machine " << m << " frame " << f;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
  }
}

}  // namespace retcon::test
