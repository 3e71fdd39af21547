// Desync detection: at every `interval`-th frame, once that frame is confirmed here (so no
// rollback can change it) we checksum its saved state and send it to the peers; a peer's report
// is compared only with our checksum of the same confirmed frame. Comparing only confirmed
// frames is what keeps it free of the false alarms peer libraries raise for frames about to be
// rolled back.
#pragma once

#include <algorithm>
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
    if (settling(frame)) return Match::stale;
    if (frame >= next_local_) return Match::pending;
    const Entry& e = local_[slot(frame)];
    if (e.frame != frame || !e.have) return Match::stale;
    *local = e.sum;
    return Match::compared;
  }
  // True for frames after a recent disconnect cut: neither sent nor compared, since peers may not
  // all have applied the same cut yet.
  bool settling(Frame frame) const noexcept {
    return settle_until_ != kNullFrame && frame >= settle_from_ && frame <= settle_until_;
  }
  // True once `now` is past the settling time of the latest cut.
  bool settled(Frame now) const noexcept { return settle_until_ == kNullFrame || now > settle_until_; }
  // A disconnect moved a player's last frame to `after` (we are at `now`): checksums of later
  // frames were taken with inputs that changed, so forget ours and recompute from there. A
  // peer's reports of such frames may predate the peer learning the same cut, so frames after
  // the cut up to `settle` frames from now are not compared (stale) while the cut propagates.
  void invalidate_after(Frame after, Frame now, int32_t settle) noexcept {
    for (Entry& e : local_)
      if (e.frame > after) e = Entry{};
    const Frame first = (after / (interval_ > 0 ? interval_ : 1) + 1) * interval_;
    if (interval_ > 0 && first < next_local_) next_local_ = first;
    if (settle_until_ == kNullFrame || after + 1 < settle_from_) settle_from_ = after + 1;
    settle_until_ = std::max(settle_until_, now + settle);
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
  Frame settle_from_ = kNullFrame, settle_until_ = kNullFrame;
};

}  // namespace retcon::detail
