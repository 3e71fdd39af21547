#include "core/state_ring.h"

#include "core/checkpoints.h"

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

// Checkpoints take a save every `interval` frames (the save's buffer is swapped in, the ring
// slot then holds none), keep the newest few, and a rollback drops those after its frame.
// invalidate_after returns at once when none is later (the newest is due - interval): every
// edge of that, and find() (which looks from the newest) for kept, dropped and absent frames.
TEST(Checkpoints, TakeEveryIntervalKeepTheNewestAndDropOnlyLaterOnes) {
  StateRing saves;
  saves.init(8, 16);
  Checkpoints cp;
  // Offers frame f's save; true when the checkpoints took it.
  auto offer = [&](Frame f) {
    SavedState& slot = saves.slot_for(f);
    slot.frame = f;
    slot.length = 1;
    slot.data[0] = uint8_t(f);
    cp.offer(slot);
    return slot.frame == kNullFrame;
  };
  auto has = [&](Frame f) {
    const SavedState* s = cp.find(f);
    return s != nullptr && s->frame == f && s->data[0] == uint8_t(f);
  };
  EXPECT_FALSE(offer(0)) << "disabled: takes nothing";
  cp.invalidate_after(-1);
  EXPECT_FALSE(offer(1)) << "still disabled after a rollback";
  cp.init(4, 4, 16);
  for (Frame f = 0; f <= 21; ++f) EXPECT_EQ(offer(f), f % 4 == 0) << f;
  for (Frame f : {8, 12, 16, 20}) EXPECT_TRUE(has(f)) << f;
  for (Frame f : {0, 4, 10, 21}) EXPECT_FALSE(has(f)) << f;
  cp.invalidate_after(23);  // none later: nothing changes, the next is still due at 24
  EXPECT_TRUE(has(20));
  EXPECT_FALSE(offer(22));
  EXPECT_TRUE(offer(24));
  cp.invalidate_after(24);  // the newest exactly at the frame stays
  EXPECT_TRUE(has(24));
  EXPECT_FALSE(offer(25));
  cp.invalidate_after(23);  // the newest one frame later goes
  EXPECT_FALSE(has(24));
  EXPECT_TRUE(has(20));
  EXPECT_FALSE(offer(23));
  EXPECT_TRUE(offer(24));
  cp.invalidate_after(17);  // 20 and 24 hold states the rollback changes
  EXPECT_FALSE(has(20));
  EXPECT_FALSE(has(24));
  EXPECT_TRUE(has(16));
  EXPECT_TRUE(has(12));
  EXPECT_FALSE(offer(19));
  EXPECT_TRUE(offer(20)) << "due again an interval after the newest kept";
  EXPECT_TRUE(has(20));
  cp.invalidate_after(3);  // all later: none left, the next save is taken whatever its frame
  for (Frame f : {12, 16, 20}) EXPECT_FALSE(has(f)) << f;
  EXPECT_EQ(cp.at_or_before(100), nullptr);
  cp.invalidate_after(2);  // none at all: stays so
  EXPECT_TRUE(offer(5));
  EXPECT_TRUE(has(5));
  EXPECT_FALSE(offer(6));
  EXPECT_TRUE(offer(9));
  ASSERT_NE(cp.at_or_before(8), nullptr);
  EXPECT_EQ(cp.at_or_before(8)->frame, 5);
}

}  // namespace
}  // namespace retcon::detail
