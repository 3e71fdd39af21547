// Desync detection: at every `interval`-th frame, once that frame is confirmed here (so no
// rollback can change it) we checksum its saved state and send it to the peers; a peer's report
// is compared only with our checksum of the same confirmed frame. Comparing only confirmed
// frames is what keeps it free of the false alarms peer libraries raise for frames about to be
// rolled back.
#pragma once

#include <array>
#include <cstdint>

#include "retcon/types.h"

namespace retcon::detail {

class DesyncDetector {
 public:
  void init(int32_t interval) noexcept {
    interval_ = interval;
    next_local_ = interval;
  }
  bool enabled() const noexcept { return interval_ > 0; }
  // The next frame whose checksum we owe, and its recording once computed (or skipped: 0 sum
  // with `have` false when the state was no longer saved).
  Frame next_local() const noexcept { return next_local_; }
  void record_local(Frame frame, uint64_t sum, bool have) noexcept {
    Entry& e = local_[slot(frame)];
    e = Entry{frame, sum, have};
    next_local_ = frame + interval_;
  }
  // A remote report: true with `*local` filled when it can be compared now.
  enum class Match { pending, compared, stale };
  Match lookup(Frame frame, uint64_t* local) const noexcept {
    if (frame >= next_local_) return Match::pending;
    const Entry& e = local_[slot(frame)];
    if (e.frame != frame || !e.have) return Match::stale;
    *local = e.sum;
    return Match::compared;
  }
  // A disconnect moved a player's last frame to `after`: checksums of later frames were taken
  // with inputs that changed, so forget them and recompute from there.
  void invalidate_after(Frame after) noexcept {
    for (Entry& e : local_)
      if (e.frame > after) e = Entry{};
    const Frame first = (after / (interval_ > 0 ? interval_ : 1) + 1) * interval_;
    if (interval_ > 0 && first < next_local_) next_local_ = first;
  }

 private:
  struct Entry {
    Frame frame = kNullFrame;
    uint64_t sum = 0;
    bool have = false;
  };
  static constexpr uint32_t kEntries = 64;
  uint32_t slot(Frame frame) const noexcept { return uint32_t(frame / (interval_ > 0 ? interval_ : 1)) % kEntries; }
  std::array<Entry, kEntries> local_{};
  int32_t interval_ = 0;
  Frame next_local_ = 0;
};

}  // namespace retcon::detail
