// The replay window (lib/net/replay_window.h): replays are refused, reordered originals pass,
// and any sequence number a peer sends can be committed without undefined behaviour. The last
// point is the regression the endpoint fuzzer found (a verified handshake reply committed with
// a sequence far below the highest seen shifted a 64-bit value by millions); this test runs
// under the sanitizer build, which turns such a shift into a failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>

#include "net/replay_window.h"
#include "net/wire.h"

namespace retcon {
namespace {

using detail::ReplayWindow;

TEST(ReplayWindow, RefusesReplaysAndAcceptsReorderedOriginals) {
  ReplayWindow w;
  EXPECT_TRUE(w.fresh(10));
  w.commit(10);
  EXPECT_FALSE(w.fresh(10));
  EXPECT_TRUE(w.fresh(9));  // late original
  w.commit(12);
  EXPECT_TRUE(w.fresh(11));
  w.commit(11);
  EXPECT_FALSE(w.fresh(11));
  EXPECT_FALSE(w.fresh(12));
  EXPECT_TRUE(w.fresh(13));
}

TEST(ReplayWindow, TooOldToTellIsRefused) {
  ReplayWindow w;
  w.commit(1000);
  EXPECT_TRUE(w.fresh(1000 - ReplayWindow::kWidth + 1));
  EXPECT_FALSE(w.fresh(1000 - ReplayWindow::kWidth));
  EXPECT_FALSE(w.fresh(0));
}

TEST(ReplayWindow, CommittingAnyOldSequenceIsHarmless) {
  ReplayWindow w;
  w.commit(0x10000000);
  w.commit(5);           // 268 million behind: remembered nowhere
  w.commit(0x10000000 - ReplayWindow::kWidth);  // exactly one past the window
  EXPECT_FALSE(w.fresh(0x10000000));
  EXPECT_TRUE(w.fresh(0x10000000 - 1));
  EXPECT_TRUE(w.fresh(0x10000001));
  w.commit(0xffffffffu);
  w.commit(0);
  EXPECT_FALSE(w.fresh(0xffffffffu));
  EXPECT_FALSE(w.fresh(0));
}

TEST(ReplayWindow, ResetForgetsEverything) {
  ReplayWindow w;
  w.commit(77);
  w.reset();
  EXPECT_TRUE(w.fresh(77));
  EXPECT_TRUE(w.fresh(0));
}

// The window keeps no "anything committed yet" flag: before the first commit every number is
// fresh (0 included), and the first commit of any number, 0 and the largest included, leaves
// what the set model says.
TEST(ReplayWindow, TheFirstCommitOfAnyNumberNeedsNoFlag) {
  for (const uint32_t first : {0u, 1u, 2u, 63u, 64u, 65u, 1000u, 0x7FFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
    ReplayWindow w;
    for (const uint32_t s : {0u, 1u, first, first - 1, first + 1, 0xFFFFFFFFu}) EXPECT_TRUE(w.fresh(s));
    w.commit(first);
    EXPECT_EQ(w.highest(), first);
    EXPECT_FALSE(w.fresh(first)) << first;
    for (uint32_t back = 1; back <= 70 && back <= first; ++back)
      EXPECT_EQ(w.fresh(first - back), back < ReplayWindow::kWidth) << first << " - " << back;
    if (first != 0xFFFFFFFFu) {
      EXPECT_TRUE(w.fresh(first + 1));
    }
    w.commit(first - 1);  // older: remembered within the window
    if (first != 0) {
      EXPECT_FALSE(w.fresh(first - 1));
    }
  }
}

// Against a model: a set of every committed number, and the highest. A number is fresh exactly
// when it was never committed and lies within the window (or above it).
TEST(ReplayWindow, AgreesWithASetModelOnRandomTraffic) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    ReplayWindow w;
    std::set<uint32_t> seen;
    uint32_t base = uint32_t(rng());
    for (int i = 0; i < 2000; ++i) {
      const uint32_t jitter = uint32_t(rng() % 200);
      uint32_t s = base + jitter - 100;  // wraps near the top: fine, any value is legal
      if (rng() % 50 == 0) s = uint32_t(rng());  // anything at all
      const bool expected_fresh = seen.empty() || s > *seen.rbegin() ||
                                  (*seen.rbegin() - s < ReplayWindow::kWidth && !seen.count(s));
      ASSERT_EQ(w.fresh(s), expected_fresh) << "round " << round << " step " << i;
      if (rng() % 3 != 0) {
        w.commit(s);
        seen.insert(s);
      }
      base += uint32_t(rng() % 3);
    }
  }
}

// The usual datagram's shortcut (on_datagram): next_is(low) says the 16 bits a data message
// carries widen to the sequence after the highest, a fresh one, and commit_next() then leaves
// the window as commit() of it does. Windows of random histories around every 16-bit boundary
// and the top of the range (where no sequence follows UINT32_MAX), each asked about the bits of
// the sequences around the highest: next_is decides as widen_sequence and fresh do, and after
// commit_next every sequence near it is fresh or not as after commit.
TEST(ReplayWindow, TheNextSequenceIsTheWidenedFreshOneAndCommitsAlike) {
  std::mt19937 rng(91);
  const uint32_t bases[] = {0, 1, 63, 64, 0xFFFE, 0xFFFF, 0x10000, 0x1FFFF, 0x7FFFFFFF, 0xFFFEFFFF, 0xFFFF0000,
                            0xFFFFFF00, 0xFFFFFFFE, 0xFFFFFFFF};
  for (int run = 0; run < 4000; ++run) {
    ReplayWindow w;
    const uint32_t base = run < 14 * 20 ? bases[run / 20] : uint32_t(rng());
    const int commits = int(rng() % 6);
    for (int i = 0; i < commits; ++i) w.commit(base - uint32_t(rng() % 100));
    if (commits == 0 && rng() % 2 == 0) w.commit(base);
    const uint32_t h = w.highest();
    for (uint32_t d = 0; d < 6; ++d) {
      const uint16_t low = uint16_t(h + d - 2);
      const uint32_t widened = detail::widen_sequence(low, h);
      const bool next = widened == h + 1 && h != UINT32_MAX && w.fresh(widened);
      ASSERT_EQ(w.next_is(low), next) << "highest " << h << " low " << low;
      if (!next) continue;
      ReplayWindow general = w;
      general.commit(h + 1);
      ReplayWindow shortcut = w;
      shortcut.commit_next();
      ASSERT_EQ(shortcut.highest(), general.highest());
      for (uint32_t back = 0; back < 70; ++back)
        ASSERT_EQ(shortcut.fresh(h + 1 - back), general.fresh(h + 1 - back)) << "highest " << h << " back " << back;
      ASSERT_EQ(shortcut.fresh(h + 2), general.fresh(h + 2));
    }
  }
}

}  // namespace
}  // namespace retcon
