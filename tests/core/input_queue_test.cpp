#include "core/input_queue.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace retcon::detail
