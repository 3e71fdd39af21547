// RemoteFrameEstimator: its ready flag (kept where the report and the lead change) answers as
// the checks it replaced, and the estimate follows a peer that plays.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "net/remote_frame_estimator.h"

namespace retcon::detail {
namespace {

// The estimator as it was before the ready flag: every estimate asks the report and the lead
// count itself. The general path the flag must equal.
class ReferenceEstimator {
 public:
  void reset() { *this = ReferenceEstimator{}; }
  void on_report(Frame reported, Frame newest_input, uint64_t now_us, uint64_t frame_us, uint64_t patience_us) {
    reported_ = reported;
    if (newest_input == kNullFrame || frame_us == 0) return;
    const int64_t since = now_us > progress_at_us_ && now_us - progress_at_us_ <= patience_us
                              ? int64_t((now_us - progress_at_us_) / frame_us) : 0;
    const int64_t lead = int64_t(newest_input) + since - int64_t(reported);
    if (lead < -kMaxLead || lead > kMaxLead) return;
    leads_[next_] = int32_t(lead);
    next_ = (next_ + 1) % 5;
    if (count_ < 5) ++count_;
    std::array<int32_t, 5> v = leads_;
    for (uint32_t i = 1; i < count_; ++i)
      for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; --j) std::swap(v[j - 1], v[j]);
    lead_ = v[count_ / 2];
  }
  void on_input_progress(uint64_t now_us) { progress_at_us_ = now_us; }
  Frame estimate(Frame newest_input, uint64_t now_us, uint64_t one_way_us, uint64_t patience_us,
                 uint64_t frame_us) const {
    if (reported_ == kNullFrame) return kNullFrame;
    if (count_ == 0 || newest_input == kNullFrame || frame_us == 0) return reported_;
    int64_t frame = int64_t(newest_input) - int64_t(lead_);
    const uint64_t since = now_us > progress_at_us_ ? now_us - progress_at_us_ : 0;
    if (since <= patience_us) frame += int64_t((since + one_way_us + frame_us / 2) / frame_us);
    return Frame(std::clamp<int64_t>(frame, 0, int64_t(INT32_MAX)));
  }

 private:
  static constexpr int64_t kMaxLead = 4 * kMaxPredictionFrames + 64;
  Frame reported_ = kNullFrame;
  std::array<int32_t, 5> leads_{};
  uint32_t next_ = 0, count_ = 0;
  int32_t lead_ = 0;
  uint64_t progress_at_us_ = 0;
};

// Random runs of reports (some kNullFrame, some with leads out of range, before any input, with
// a frame time of 0), input progress and resets: every estimate, with random arguments, equals
// the reference's.
// The estimate's clamp (one compare for a frame in range) is std::clamp(frame, 0, INT32_MAX):
// at and around every edge, and for random values of every magnitude.
TEST(RemoteFrameEstimator, ClampIsTheStandardClampEverywhere) {
  const int64_t edges[] = {INT64_MIN, INT64_MIN + 1, -int64_t(UINT32_MAX) - 1, int64_t(INT32_MIN) - 1, INT32_MIN,
                           -2, -1, 0, 1, 2, INT32_MAX - 1, INT32_MAX, int64_t(INT32_MAX) + 1,
                           int64_t(UINT32_MAX), int64_t(UINT32_MAX) + 1, INT64_MAX - 1, INT64_MAX};
  for (int64_t v : edges)
    EXPECT_EQ(RemoteFrameEstimator::clamp_frame(v), Frame(std::clamp<int64_t>(v, 0, INT32_MAX))) << v;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    const int64_t v = int64_t(rng()) >> (rng() % 64);
    ASSERT_EQ(RemoteFrameEstimator::clamp_frame(v), Frame(std::clamp<int64_t>(v, 0, INT32_MAX))) << v;
  }
}

TEST(RemoteFrameEstimator, ReadyFlagAnswersAsTheChecksItReplaced) {
  std::mt19937 rng(14);
  size_t estimated = 0, null = 0, said = 0;
  for (int run = 0; run < 200; ++run) {
    RemoteFrameEstimator fast;
    ReferenceEstimator reference;
    uint64_t now = 1000000;
    Frame newest = kNullFrame;
    for (int step = 0; step < 300; ++step) {
      now += rng() % 40000;
      const uint64_t frame_us = rng() % 50 == 0 ? 0 : 16667;
      const uint64_t patience = 20000 + rng() % 100000;
      switch (rng() % 8) {
        case 0: {
          const Frame reported = rng() % 6 == 0 ? kNullFrame
                                 : rng() % 10 == 0 ? Frame(rng() % 100000)
                                                   : std::max<Frame>(0, newest - Frame(rng() % 8));
          const Frame held = rng() % 5 == 0 ? kNullFrame : newest;
          fast.on_report(reported, held, now, frame_us, patience);
          reference.on_report(reported, held, now, frame_us, patience);
          break;
        }
        case 1:
        case 2:
          newest = newest == kNullFrame ? 0 : newest + Frame(1 + rng() % 3);
          fast.on_input_progress(now);
          reference.on_input_progress(now);
          break;
        case 3:
          if (rng() % 20 == 0) {
            fast.reset();
            reference.reset();
            newest = kNullFrame;
          }
          break;
        default: {
          const Frame held = rng() % 8 == 0 ? kNullFrame : newest;
          const uint64_t one_way = rng() % 80000;
          const uint64_t at = now + rng() % 200000;
          const Frame want = reference.estimate(held, at, one_way, patience, frame_us);
          ASSERT_EQ(fast.estimate(held, at, one_way, patience, frame_us), want)
              << "run " << run << " step " << step;
          ++estimated;
          null += want == kNullFrame;
          said += fast.have_lead() && want != kNullFrame;
        }
      }
    }
  }
  EXPECT_GT(estimated, 10000u);
  EXPECT_GT(null, 100u);   // before a report, or after a report that said kNullFrame
  EXPECT_GT(said, 5000u);  // with a lead: the extrapolation
}

// A peer that plays one frame a frame time, two frames of input delay, reports every 10 frames:
// once a report came, the estimate is its frame now (within one), and it stops moving once
// its inputs stop.
TEST(RemoteFrameEstimator, FollowsAPeerThatPlaysAndStandsWhenItStops) {
  RemoteFrameEstimator e;
  constexpr uint64_t kFrame = 16667, kPatience = 60000;
  EXPECT_EQ(e.estimate(kNullFrame, 0, 0, kPatience, kFrame), kNullFrame);
  Frame newest = kNullFrame;
  uint64_t now = 0;
  for (Frame peer = 0; peer < 120; ++peer) {
    now = uint64_t(peer) * kFrame;
    newest = peer + 2;  // its input delay: its input runs two frames ahead
    e.on_input_progress(now);
    if (peer % 10 == 0) e.on_report(peer, newest, now, kFrame, kPatience);
    const Frame est = e.estimate(newest, now, 0, kPatience, kFrame);
    EXPECT_NEAR(est, peer, 1) << "frame " << peer;
  }
  const Frame stopped = e.estimate(newest, now + 10 * kFrame, 0, kPatience, kFrame);
  EXPECT_EQ(stopped, e.estimate(newest, now + 40 * kFrame, 0, kPatience, kFrame));
  EXPECT_LE(stopped, 120);
}

}  // namespace
}  // namespace retcon::detail
