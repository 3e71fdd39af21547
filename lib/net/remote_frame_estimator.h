// Where the peer's game is now, estimated from what the peer actually did.
//
// The peer's newest input frame we hold moves only when the peer advances (it sends an input
// once per frame it plays), so it is the estimate's anchor: a peer stalled at its prediction
// limit, waiting on time sync or cut off by a blackout is seen standing still, never
// extrapolated by wall-clock time. Its input runs ahead of its frame by its input delay; that
// lead is learned from its quality reports (reported frame vs the newest input we held when the
// report arrived, median of the last few: a report that overtook its inputs reads low). While
// inputs flow, the peer kept playing during the one-way trip, which is added; when they stop,
// it is not.
//
// Sans-IO and allocation-free: the endpoint feeds it times and frames.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "retcon/types.h"

namespace retcon::detail {

class RemoteFrameEstimator {
 public:
  void reset() noexcept { *this = RemoteFrameEstimator{}; }

  // A quality report said the peer was at `reported`; we hold its inputs up to `newest_input`.
  void on_report(Frame reported, Frame newest_input) noexcept {
    reported_ = reported;
    if (newest_input == kNullFrame) return;
    const int64_t lead = int64_t(newest_input) - int64_t(reported);
    // A lead beyond any input delay is a report from before a long gap (or a lie): ignore it.
    if (lead < -kMaxLead || lead > kMaxLead) return;
    leads_[next_] = int32_t(lead);
    next_ = (next_ + 1) % kLeads;
    if (count_ < kLeads) ++count_;
  }
  // The newest input frame moved forward at `now_us`.
  void on_input_progress(uint64_t now_us) noexcept { progress_at_us_ = now_us; }

  bool have_lead() const noexcept { return count_ > 0; }

  // The peer's frame now, or kNullFrame before its first report. `newest_input`: the newest
  // input frame held; `one_way_us`: half the round trip; `patience_us`: how long inputs may
  // pause before the peer counts as stalled (a frame or two plus jitter).
  Frame estimate(Frame newest_input, uint64_t now_us, uint64_t one_way_us, uint64_t patience_us,
                 uint32_t frame_rate) const noexcept {
    if (reported_ == kNullFrame) return kNullFrame;
    if (count_ == 0 || newest_input == kNullFrame) return reported_;  // no inputs yet: what it said
    int64_t frame = int64_t(newest_input) - int64_t(lead());
    const bool flowing = now_us <= progress_at_us_ + patience_us;
    if (flowing) frame += int64_t((one_way_us * frame_rate + 500000u) / 1000000u);
    return Frame(std::clamp<int64_t>(frame, 0, int64_t(INT32_MAX)));
  }

 private:
  static constexpr uint32_t kLeads = 5;
  static constexpr int64_t kMaxLead = 4 * kMaxPredictionFrames + 64;

  int32_t lead() const noexcept {
    std::array<int32_t, kLeads> v = leads_;
    for (uint32_t i = 1; i < count_; ++i)  // insertion sort of at most five
      for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; --j) std::swap(v[j - 1], v[j]);
    return v[count_ / 2];
  }

  Frame reported_ = kNullFrame;
  std::array<int32_t, kLeads> leads_{};
  uint32_t next_ = 0, count_ = 0;
  uint64_t progress_at_us_ = 0;
};

}  // namespace retcon::detail
