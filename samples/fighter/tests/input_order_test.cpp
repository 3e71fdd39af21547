// Fighter: the state depends on which input came on which frame.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "test_inputs.h"

namespace fighter::test {
namespace {

// Checksums after every frame of a replay.
std::vector<uint64_t> replay(const std::vector<Inputs>& inputs, int players) {
  FighterGame game(players, 5);
  std::vector<uint64_t> sums;
  for (const Inputs& in : inputs) {
    game.advance_frame(game.state().frame, in.frame(), 0);
    sums.push_back(fighter_checksum(game.state()));
  }
  return sums;
}

TEST(InputOrder, SwappingTwoFramesInputsChangesTheChecksum) {
  Recording rec = record_bots(2, 5, 300, 900);
  const std::vector<uint64_t> original = replay(rec.inputs, 2);
  ASSERT_EQ(original, rec.checksums);
  int swaps = 0;
  int changed_final = 0;
  // Swap adjacent frames whose inputs differ, during the fight (after the intro).
  for (size_t f = kIntroFrames + 10; f + 1 < rec.inputs.size() && swaps < 10; f += 37) {
    if (std::memcmp(rec.inputs[f].bytes, rec.inputs[f + 1].bytes, sizeof rec.inputs[f].bytes) == 0)
      continue;
    std::vector<Inputs> swapped = rec.inputs;
    std::swap(swapped[f], swapped[f + 1]);
    const std::vector<uint64_t> sums = replay(swapped, 2);
    EXPECT_EQ(sums[f - 1], original[f - 1]);
    EXPECT_NE(sums[f], original[f]) << "swap at frame " << f;
    EXPECT_NE(sums[f + 1], original[f + 1]) << "swap at frame " << f;
    // Some swaps are absorbed later (a press during hitstun does nothing), most are not.
    if (sums.back() != original.back()) ++changed_final;
    ++swaps;
  }
  EXPECT_GE(swaps, 5);
  EXPECT_GE(changed_final, swaps / 2);
}

TEST(InputOrder, WalkThenJumpDiffersFromJumpThenWalk) {
  FighterState a, b;
  fighter_init(a, 2, 1);
  skip_intro(a);
  b = a;
  step(a, {kInputRight, 0});
  step(a, {kInputUp, 0});
  step(b, {kInputUp, 0});
  step(b, {kInputRight, 0});
  for (int i = 0; i < 20; ++i) {
    step(a, {0, 0});
    step(b, {0, 0});
  }
  EXPECT_NE(a.p[0].x, b.p[0].x);
  EXPECT_NE(fighter_checksum(a), fighter_checksum(b));
}

}  // namespace
}  // namespace fighter::test
