// Catching up after a stall: frames the game lost while its prediction window was full (a
// blackout, a peer that froze) are run again later, one extra frame at a time.
//
// A 1 s blackout stops both peers once the window is used up; when datagrams flow again both
// resume ~55 frames behind where the wall clock says they should be, and without catching up
// they stay there: the match ends that much later and every blackout adds to it (issue 10:
// frames lost per 1 s blackout, target <= 45, was ~56 with any amount of time sync). A game
// that asks should_catch_up() after each frame it advanced runs one more frame in that tick
// while it owes some, so the peers regain the lost time at 1.5x speed, both of them (each
// stalled the same way), side by side: the time sync sees no gap.
//
// Only frames refused by the prediction window are owed, and only for a stall of more than
// kMinStallFrames (a time-sync wait, a game that paused or a jittery link's short stalls owe
// nothing), at most kMaxFrames (half a second: a player sees one second at 1.5x speed
// after a blackout, not a long fast-forward), and the debt expires kExpiryFrames frame times
// after the stall if the window never left room to pay it (the peer was the one that froze,
// and time sync already keeps us from running further ahead).
#pragma once

#include <algorithm>
#include <cstdint>

namespace retcon::detail {

class CatchUp {
 public:
  static constexpr int32_t kMaxFrames = 30;
  static constexpr int32_t kExpiryFrames = 180;
  // Shorter stalls owe nothing: on a jittery link a frame or two refused now and then is the
  // window at work, and running those frames again would only refill it (more stalls).
  static constexpr uint64_t kMinStallFrames = 10;
  // An extra frame at most once per this many frame times: 1.5x speed, which leaves the peers'
  // prediction windows room (their inputs come half again as fast, not twice).
  static constexpr uint64_t kSpacingFrames = 2;

  void set_frame_time(uint64_t frame_us) noexcept { frame_us_ = frame_us; }
  void reset() noexcept {
    owed_ = 0;
    stalled_ = advanced_once_ = usual_ = false;
    last_advance_us_ = last_extra_us_ = stall_end_us_ = 0;
  }
  // A frame advanced at `now_us`. The usual frame (one frame time or so after the last, no
  // stall before it, nothing owed) only moves the last advance: what the general path below
  // comes to then, without its tests (every frame of a match asks).
  void on_advanced(uint64_t now_us) noexcept {
    if (usual_ && now_us >= last_advance_us_ + frame_us_ / 2) [[likely]] {
      last_advance_us_ = now_us;
      return;
    }
    advance_general(now_us);
  }
  // The prediction window refused a frame.
  void on_refused() noexcept {
    stalled_ = true;
    usual_ = false;
  }
  // Whether one more frame may run now: some are owed, the last frame advanced within this
  // frame time (so the extra one shares its tick), none ran for kSpacingFrames, and the window
  // has `room` frames left (the caller's judgement).
  bool should(uint64_t now_us, bool room) const noexcept {
    return owed_ > 0 && room && advanced_once_ && now_us < last_advance_us_ + frame_us_ / 2 &&
           (last_extra_us_ == 0 || now_us >= last_extra_us_ + kSpacingFrames * frame_us_ - frame_us_ / 2);
  }
  int32_t owed() const noexcept { return owed_; }
  // Extra frames ran recently: the peers' frame estimates lag behind their real pace. (A debt
  // alone is not: a game that never catches up keeps its time sync.)
  bool active(uint64_t now_us) const noexcept {
    return last_extra_us_ != 0 && now_us < last_extra_us_ + 4 * kSpacingFrames * frame_us_;
  }

 private:
  void advance_general(uint64_t now_us) noexcept {
    if (advanced_once_ && now_us < last_advance_us_ + frame_us_ / 2) {
      // A second frame within the same frame time: an extra one, paid off.
      owed_ = std::max(owed_ - 1, 0);
      last_extra_us_ = now_us;
    } else if (advanced_once_ && stalled_) {
      // Frame times that passed without a frame, beyond the one this frame fills.
      const uint64_t gap = (now_us - last_advance_us_ + frame_us_ / 2) / frame_us_;
      if (gap > kMinStallFrames) owed_ = int32_t(std::min<uint64_t>(uint64_t(owed_) + gap - 1, kMaxFrames));
      stall_end_us_ = now_us;
    }
    stalled_ = false;
    advanced_once_ = true;
    last_advance_us_ = now_us;
    if (owed_ > 0 && now_us >= stall_end_us_ + kExpiryFrames * frame_us_) owed_ = 0;
    usual_ = owed_ == 0;  // advanced once, not stalled since
  }

  uint64_t frame_us_ = 16667;
  int32_t owed_ = 0;
  bool stalled_ = false, advanced_once_ = false;
  bool usual_ = false;  // advanced_once_ && !stalled_ && owed_ == 0: on_advanced's usual frame
  uint64_t last_advance_us_ = 0, last_extra_us_ = 0, stall_end_us_ = 0;
};

}  // namespace retcon::detail
