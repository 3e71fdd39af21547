#include "core/state_ring.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace retcon::detail {
namespace {

TEST(StateRing, SlotsAreAlignedDisjointAndTaggedByFrame) {
  StateRing ring;
  ring.init(4, 100);
  EXPECT_EQ(ring.size(), 4u);
  for (Frame f = 0; f < 4; ++f) {
    SavedState& s = ring.slot_for(f);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s.data) % 64, 0u);
    s.frame = f;
    s.data[0] = uint8_t(f);
    s.data[99] = uint8_t(f);
  }
  for (Frame f = 0; f < 4; ++f) {
    ASSERT_NE(ring.find(f), nullptr);
    EXPECT_EQ(ring.find(f)->data[99], f);
  }
  ring.slot_for(4).frame = 4;  // overwrites frame 0's slot
  EXPECT_EQ(ring.find(0), nullptr);
  EXPECT_NE(ring.find(4), nullptr);
}

}  // namespace
}  // namespace retcon::detail
