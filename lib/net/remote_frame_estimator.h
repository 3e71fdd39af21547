// Where the peer's game is now, estimated from what the peer actually did.
//
// The peer sends its inputs as it plays, so its newest input frame we hold and when it arrived
// anchor the estimate: from then on the peer is assumed to keep playing (one frame per frame
// time, plus the one-way trip the datagram took) only while its inputs keep flowing. A peer
// stalled at its prediction limit, waiting on time sync or cut off by a blackout sends nothing
// new and is seen standing still after a short patience, never extrapolated for long. Its
// input runs ahead of its frame by its input delay; that lead is learned from its quality
// reports (the reported frame vs the newest input moved forward to the report's arrival, the
// median of the last few). Moving inputs forward by the time since they arrived also makes the
// estimate blind to the peer's batching (frames that wait to share a datagram).
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

  // A quality report said the peer was at `reported` (sent one way ago); we hold its inputs up
  // to `newest_input`.
  void on_report(Frame reported, Frame newest_input, uint64_t now_us, uint64_t frame_us,
                 uint64_t patience_us) noexcept {
    reported_ = reported;
    ready_ = reported != kNullFrame && count_ != 0;
    if (newest_input == kNullFrame || frame_us == 0) return;
    // Where the peer's input stream was when it sent the report, as far as we can tell.
    const int64_t since = now_us > progress_at_us_ && now_us - progress_at_us_ <= patience_us
                              ? int64_t((now_us - progress_at_us_) / frame_us) : 0;
    const int64_t lead = int64_t(newest_input) + since - int64_t(reported);
    // A lead beyond any input delay is a report from before a long gap (or a lie): ignore it.
    if (lead < -kMaxLead || lead > kMaxLead) return;
    leads_[next_] = int32_t(lead);
    next_ = (next_ + 1) % kLeads;
    if (count_ < kLeads) ++count_;
    ready_ = reported != kNullFrame;
    lead_ = median_lead();  // estimate() runs several times a frame, reports come a few a second
  }
  // The newest input frame moved forward at `now_us`.
  void on_input_progress(uint64_t now_us) noexcept { progress_at_us_ = now_us; }

  bool have_lead() const noexcept { return count_ > 0; }

  // The peer's frame now, or kNullFrame before its first report. `newest_input`: the newest
  // input frame held; `one_way_us`: half the round trip; `patience_us`: how long inputs may
  // pause before the peer counts as stalled (a batch, a loss, the jitter).
  Frame estimate(Frame newest_input, uint64_t now_us, uint64_t one_way_us, uint64_t patience_us,
                 uint64_t frame_us) const noexcept {
    return estimate_reaching(newest_input, now_us, one_way_us + frame_us / 2, patience_us, frame_us);
  }
  // estimate() with `reach_us` = one_way_us + frame_us / 2 (the trip and the rounding), which
  // change only with the round trip: the endpoint keeps it, and asks this every frame.
  Frame estimate_reaching(Frame newest_input, uint64_t now_us, uint64_t reach_us, uint64_t patience_us,
                          uint64_t frame_us) const noexcept {
    // Not ready: before a report (kNullFrame) or before a lead (what the peer said).
    if (!ready_) [[unlikely]] return reported_;
    if (newest_input == kNullFrame || frame_us == 0) [[unlikely]] return reported_;  // what it said
    int64_t frame = int64_t(newest_input) - int64_t(lead_);
    const uint64_t since = now_us > progress_at_us_ ? now_us - progress_at_us_ : 0;
    if (since <= patience_us) frame += int64_t((since + reach_us) / frame_us);
    return clamp_frame(frame);
  }
  // std::clamp(frame, 0, INT32_MAX): a frame in range (always, but for a lying peer) in one
  // compare. Public for its test.
  static Frame clamp_frame(int64_t frame) noexcept {
    if (uint64_t(frame) <= uint64_t(INT32_MAX)) [[likely]] return Frame(frame);
    return frame < 0 ? 0 : INT32_MAX;
  }

 private:
  static constexpr uint32_t kLeads = 5;
  static constexpr int64_t kMaxLead = 4 * kMaxPredictionFrames + 64;

  int32_t median_lead() const noexcept {
    std::array<int32_t, kLeads> v = leads_;
    for (uint32_t i = 1; i < count_; ++i)  // insertion sort of at most five
      for (uint32_t j = i; j > 0 && v[j - 1] > v[j]; --j) std::swap(v[j - 1], v[j]);
    return v[count_ / 2];
  }

  Frame reported_ = kNullFrame;
  std::array<int32_t, kLeads> leads_{};
  uint32_t next_ = 0, count_ = 0;
  int32_t lead_ = 0;  // median_lead() as of the last report
  // A report and a lead (reported_ != kNullFrame, count_ > 0), kept where either changes so
  // estimate, asked every frame, asks once.
  bool ready_ = false;
  uint64_t progress_at_us_ = 0;
};

}  // namespace retcon::detail
