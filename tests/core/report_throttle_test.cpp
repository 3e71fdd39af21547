// The log throttles (core/report_throttle.h): a failure that may repeat without end is told on
// the first occurrence and then rarely, never once per occurrence.
#include <gtest/gtest.h>

#include "core/report_throttle.h"

namespace retcon::detail {
namespace {

TEST(ReportThrottle, FullFirstThenASummaryEveryN) {
  ReportThrottle t(3);
  EXPECT_EQ(t.next(), ReportThrottle::Action::full);
  EXPECT_EQ(t.next(), ReportThrottle::Action::silent);
  EXPECT_EQ(t.next(), ReportThrottle::Action::silent);
  EXPECT_EQ(t.next(), ReportThrottle::Action::summary);
  EXPECT_EQ(t.total(), 4u);
}

TEST(ReachedPowerOfTwo, OneLineAtTheFirstDropAndAtEveryDoubling) {
  uint64_t told = 0;
  for (uint64_t n = 1; n <= 1000; ++n) told += reached_power_of_two(n - 1, n) ? 1 : 0;
  EXPECT_EQ(told, 10u);  // 1, 2, 4, ..., 512
  EXPECT_TRUE(reached_power_of_two(5, 9));   // a batch that crosses 8
  EXPECT_FALSE(reached_power_of_two(9, 15));  // none between 9 and 15
  EXPECT_FALSE(reached_power_of_two(0, 0));
  EXPECT_TRUE(reached_power_of_two(0, UINT64_MAX));
  EXPECT_FALSE(reached_power_of_two(uint64_t{1} << 63, UINT64_MAX));  // no power past 2^63
}

}  // namespace
}  // namespace retcon::detail
