// Frame-advantage time sync. Each tick we estimate how far our frame is ahead of each peer's,
// using the peer's last reported frame moved forward by the time since the report and half the
// round trip (a one-way estimate; GGPO used the whole round trip, which biases the faster
// side). The peer reports the same about us. If we are ahead by A and the peer says it is ahead
// by B, the gap closes fairly when we wait (A - B) / 2 frames: after that both see ~0.
// Samples are taken once per frame advanced; advice is given once per interval and the samples
// are then cleared, so a wait already taken is not advised again (as GGPO's interval does).
#pragma once

#include <array>
#include <cstdint>

namespace retcon::detail {

class TimeSync {
 public:
  void add_sample(int32_t local_ahead, int32_t remote_ahead) noexcept {
    local_[next_] = local_ahead;
    remote_[next_] = remote_ahead;
    next_ = (next_ + 1) % kSamples;
    if (count_ < kSamples) ++count_;
  }
  void reset() noexcept { next_ = count_ = 0; }
  // Average advantage over the last samples, in frames (rounded toward zero).
  double local_average() const noexcept { return average(local_); }
  double remote_average() const noexcept { return average(remote_); }
  // Whole frames to wait: half the difference of the averages, when it is at least one frame.
  int32_t frames_to_wait() const noexcept {
    if (count_ < kMinSamples) return 0;
    const double gap = (local_average() - remote_average()) / 2.0;
    return gap >= 1.0 ? int32_t(gap) : 0;
  }

 private:
  static constexpr uint32_t kSamples = 32;
  static constexpr uint32_t kMinSamples = 8;
  double average(const std::array<int32_t, kSamples>& v) const noexcept {
    if (count_ == 0) return 0;
    int64_t sum = 0;
    for (uint32_t i = 0; i < count_; ++i) sum += v[i];
    return double(sum) / double(count_);
  }
  std::array<int32_t, kSamples> local_{}, remote_{};
  uint32_t next_ = 0, count_ = 0;
};

}  // namespace retcon::detail
