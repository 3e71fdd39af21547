#include "core/input_queue.h"

#include <gtest/gtest.h>

#include <cstring>

namespace retcon::detail {
namespace {

TEST(InputQueue, PredictsZerosBeforeAnyConfirmedInput) {
  InputQueue q;
  q.init(0, 2, 16);
  InputStatus st;
  const uint8_t* in = q.input_for(0, Predictor{}, &st);
  EXPECT_EQ(st, InputStatus::predicted);
  EXPECT_EQ(in[0], 0);
  EXPECT_EQ(in[1], 0);
}

TEST(InputQueue, CarriesLastConfirmedInputForward) {
  InputQueue q;
  q.init(0, 2, 16);
  const uint8_t a[2] = {7, 9};
  EXPECT_FALSE(q.add_confirmed(0, a));
  InputStatus st;
  const uint8_t* in = q.input_for(3, Predictor{}, &st);
  EXPECT_EQ(st, InputStatus::predicted);
  EXPECT_EQ(in[0], 7);
  EXPECT_EQ(in[1], 9);
  EXPECT_EQ(q.input_for(0, Predictor{}, &st)[0], 7);
  EXPECT_EQ(st, InputStatus::confirmed);
}

TEST(InputQueue, ReportsMispredictionOnlyForUsedPredictionsThatDiffer) {
  InputQueue q;
  q.init(0, 1, 16);
  const uint8_t zero = 0, one = 1;
  InputStatus st;
  q.input_for(0, Predictor{}, &st);  // predicted 0
  q.input_for(1, Predictor{}, &st);  // predicted 0
  EXPECT_FALSE(q.add_confirmed(0, &zero)) << "prediction was right";
  EXPECT_TRUE(q.add_confirmed(1, &one)) << "prediction was wrong";
  EXPECT_FALSE(q.add_confirmed(2, &zero)) << "frame 2 was never predicted, so nothing was wrong";
  EXPECT_EQ(q.last_confirmed(), 2);
}

TEST(InputQueue, UsesPluggablePredictor) {
  InputQueue q;
  q.init(3, 2, 16);
  const uint8_t a[2] = {0x0F, 0xF0};  // byte 0 = stick, byte 1 = buttons
  q.add_confirmed(0, a);
  Predictor keep_stick;
  keep_stick.predict = [](void*, PlayerIndex player, Frame, const uint8_t* last, uint8_t* out, size_t) {
    EXPECT_EQ(player, 3);
    out[0] = last ? last[0] : 0;
    out[1] = 0;  // drop button presses
  };
  InputStatus st;
  const uint8_t* in = q.input_for(1, keep_stick, &st);
  EXPECT_EQ(in[0], 0x0F);
  EXPECT_EQ(in[1], 0);
}

TEST(InputQueue, RingWrapsAndFitsChecksWindow) {
  InputQueue q;
  q.init(0, 1, 10);  // rounded to 16
  EXPECT_EQ(q.capacity(), 16u);
  for (Frame f = 0; f < 100; ++f) {
    const uint8_t v = uint8_t(f);
    q.add_confirmed(f, &v);
    EXPECT_EQ(*q.confirmed(f), v);
  }
  EXPECT_TRUE(q.fits(115, 100));
  EXPECT_FALSE(q.fits(116, 100));
}

TEST(InputQueue, SmallInputPathStoresAndTellsMispredictionsLikeTheGeneralOne) {
  for (uint32_t size : {1u, 2u, 4u, 8u}) {
    ASSERT_TRUE(small_input_size(size));
    InputQueue general, small;
    general.init(0, size, 16);
    small.init(0, size, 16);
    InputStatus st;
    for (Frame f = 0; f < 40; ++f) {
      uint8_t in[8];
      for (uint32_t b = 0; b < size; ++b) in[b] = uint8_t((f / 3) * 7 + b);  // changes every 3 frames
      if (f % 2 == 0) {  // predict a frame ahead first, as a running match does
        general.input_for(f, Predictor{}, &st);
        small.input_for(f, Predictor{}, &st);
      }
      EXPECT_EQ(general.add_confirmed(f, in), small.add_confirmed_small(f, in)) << "size " << size << " frame " << f;
      EXPECT_EQ(std::memcmp(general.confirmed(f), small.confirmed(f), size), 0);
      EXPECT_EQ(std::memcmp(small.confirmed(f), in, size), 0);
      // The next prediction carries the newest input forward.
      EXPECT_EQ(std::memcmp(small.input_for(f + 1, Predictor{}, &st), in, size), 0);
      EXPECT_EQ(st, InputStatus::predicted);
      general.input_for(f + 1, Predictor{}, &st);
    }
  }
  EXPECT_FALSE(small_input_size(3));
  EXPECT_FALSE(small_input_size(16));
}

}  // namespace
}  // namespace retcon::detail
