// Older saved states, one every `interval` frames, kept behind the state ring so a rollback can
// reach further back than the prediction window when it must: when peers agree that a dropped
// player's last frame is earlier than this machine had thought, the frames after it are
// re-simulated with that player's inputs removed, possibly from well before the window.
// A checkpoint costs no copy: the save the driver just made is swapped into the checkpoint ring
// and the ring slot takes the checkpoint's old buffer (so that slot no longer holds its frame;
// lookups fall back to the checkpoints, see RollbackDriver::saved()).
#pragma once

#include <limits>
#include <utility>

#include "core/state_ring.h"

namespace retcon::detail {

class Checkpoints {
 public:
  void init(uint32_t count, int32_t interval, size_t capacity) {
    ring_.init(count, capacity);
    interval_ = interval;
    head_ = size_ = 0;
    due_ = kNullFrame;
  }
  bool enabled() const noexcept { return ring_.size() > 0; }
  // How far back the oldest checkpoint reaches, at least.
  int32_t depth() const noexcept { return int32_t(ring_.size() - 1) * interval_; }

  // Called for every save: takes it when the newest checkpoint is an interval old.
  void offer(SavedState& saved) noexcept {
    if (saved.frame < due_) return;
    if (size_ == ring_.size()) {
      head_ = (head_ + 1) % ring_.size();
      --size_;
    }
    SavedState& slot = ring_.slot((head_ + size_) % ring_.size());
    std::swap(slot.data, saved.data);
    slot.length = saved.length;
    slot.frame = saved.frame;
    slot.checksum_valid = saved.checksum_valid;
    slot.checksum = saved.checksum;
    saved.frame = kNullFrame;
    saved.checksum_valid = false;
    ++size_;
    due_ = slot.frame + interval_;
  }
  // A rollback re-simulates from `frame`: later checkpoints hold states it may change.
  void invalidate_after(Frame frame) noexcept {
    // Usually none is later: the newest is due_ - interval_ (due_ is kNullFrame when there is
    // none, which stays so; kNever, disabled, goes the long way and stays so).
    if (due_ - interval_ <= frame) return;
    while (size_ > 0 && newest().frame > frame) --size_;
    due_ = !enabled() ? kNever : size_ > 0 ? newest().frame + interval_ : kNullFrame;
  }
  // The checkpoint of exactly `frame`, or null. From the newest: a rollback asks for one of
  // the last (the frame a checkpoint took from the ring).
  SavedState* find(Frame frame) noexcept {
    for (uint32_t i = size_; i-- > 0;) {
      SavedState& s = ring_.slot((head_ + i) % ring_.size());
      if (s.frame == frame) return &s;
    }
    return nullptr;
  }
  // The newest checkpoint at or before `frame`, or null.
  const SavedState* at_or_before(Frame frame) const noexcept {
    for (uint32_t i = size_; i-- > 0;) {
      const SavedState& s = ring_.slot((head_ + i) % ring_.size());
      if (s.frame <= frame) return &s;
    }
    return nullptr;
  }

 private:
  const SavedState& newest() const noexcept { return ring_.slot((head_ + size_ - 1) % ring_.size()); }
  static constexpr Frame kNever = std::numeric_limits<Frame>::max();
  StateRing ring_;
  int32_t interval_ = 1;
  uint32_t head_ = 0, size_ = 0;
  // offer() takes frames from this one on: an interval after the newest checkpoint, any frame
  // when there is none (kNullFrame), none when disabled (kNever).
  Frame due_ = kNever;
};

}  // namespace retcon::detail
