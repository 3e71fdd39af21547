// How often a repeating failure is reported: the first one in full (texts, log line), then a
// short summary every `summary_every` more, instead of one event per occurrence (a sync test
// that diverged once mismatches on every later frame: ~300 events in 300 frames).
#pragma once

#include <cstdint>

namespace retcon::detail {

class ReportThrottle {
 public:
  enum class Action : uint8_t { full, summary, silent };

  explicit ReportThrottle(uint32_t summary_every) noexcept : every_(summary_every ? summary_every : 1) {}

  Action next() noexcept {
    ++total_;
    if (total_ == 1) return Action::full;
    if (++since_summary_ < every_) return Action::silent;
    since_summary_ = 0;
    return Action::summary;
  }
  uint64_t total() const noexcept { return total_; }

 private:
  uint32_t every_;
  uint32_t since_summary_ = 0;
  uint64_t total_ = 0;
};

// For a count that grew from `before` to `after`: whether it reached a new power of two (1, 2,
// 4, 8, ...), the moments a drop that may repeat without end is worth a log line.
inline bool reached_power_of_two(uint64_t before, uint64_t after) noexcept {
  for (uint64_t p = 1; p != 0 && p <= after; p <<= 1)
    if (p > before) return true;
  return false;
}

}  // namespace retcon::detail
