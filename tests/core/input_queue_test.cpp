#include "core/input_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace retcon::detail {
namespace {

// predict_in_row (the driver's live frame) writes what predict(frame, Predictor{}) writes, in
// the same slot, and keeps the same misprediction record: two shared rings of 3 players fed the
// same random confirmed inputs, one predicting each way, stay byte for byte equal.
TEST(InputQueue, PredictionIntoTheRowIsThePredictionIntoTheRing) {
  std::mt19937 rng(17);
  for (uint32_t size : {1u, 2u, 3u, 4u, 8u}) {
    constexpr uint32_t kPlayers = 3, kRows = 32;
    const size_t stride = size_t(kPlayers) * size;
    std::vector<uint8_t> ring_a(kRows * stride), ring_b(kRows * stride);
    InputQueue a[kPlayers], b[kPlayers];
    for (uint32_t p = 0; p < kPlayers; ++p) {
      a[p].init_shared(PlayerIndex(p), size, kRows, ring_a.data(), stride, size_t(p) * size);
      b[p].init_shared(PlayerIndex(p), size, kRows, ring_b.data(), stride, size_t(p) * size);
    }
    Frame next[kPlayers] = {0, 0, 0};
    for (Frame f = 0; f < 400; ++f) {
      for (uint32_t p = 0; p < kPlayers; ++p) {
        // Confirm 0..2 frames, never past the frame about to run.
        for (int n = int(rng() % 3); n > 0 && next[p] <= f; --n, ++next[p]) {
          std::vector<uint8_t> in(size);
          for (uint8_t& byte : in) byte = uint8_t(rng() % 3);
          ASSERT_EQ(a[p].add_confirmed(next[p], in.data()), b[p].add_confirmed(next[p], in.data()));
        }
        if (f <= a[p].last_confirmed()) continue;
        uint8_t* row = ring_a.data() + size_t(uint32_t(f) % kRows) * stride;
        a[p].predict_in_row(f, row);
        b[p].predict(f, Predictor{});
      }
      ASSERT_EQ(ring_a, ring_b) << "size " << size << " frame " << f;
    }
  }
}

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
