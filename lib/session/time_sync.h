// Frame-advantage time sync, one filter per remote peer.
//
// Each frame we advance we estimate how far our frame is ahead of the peer's (the estimate is
// tied to what the peer did: its newest input, see Endpoint::estimated_remote_frame, so a
// stalled peer is never extrapolated), and the peer tells us the same about us in its quality
// reports. If we are ahead by A and the peer says it is ahead by B, the gap closes fairly when
// we wait (A - B) / 2 frames: after that both see ~0, and any bias both estimates share (input
// delay, latency, batching) cancels out.
//
// One report or one late datagram must not make a game hitch, so the gap is filtered: the
// median of the last samples on each side (our window here; the peer reports the median of its
// own), so jitter and start-up spikes do not move it, a dead band of one
// frame (two peers ticking a fraction of a frame apart never wait), and a cap per advice (a
// blackout both sides suffered cannot turn into a long freeze). The session gives advice only
// from a full window of samples taken after the previous advice was carried out and the peer
// reported on it, so the same gap is never advised twice.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace retcon::detail {

class TimeSync {
 public:
  // Samples in the filter window (about half a second at 60 fps) and the fewest worth a median.
  static constexpr uint32_t kSamples = 64;
  static constexpr uint32_t kMinSamples = 48;
  // Gaps up to this many frames are left alone.
  static constexpr int32_t kDeadBandFrames = 1;
  // The most frames one advice asks for; a larger gap is closed by the next advices.
  static constexpr int32_t kMaxAdviceFrames = 6;
  // Both numbers are clamped to this before filtering (a blackout, a lying peer).
  static constexpr int32_t kMaxGap = 1000;

  // How far our frame is ahead of the peer's, estimated as we advanced one frame.
  // Inline for the usual frame (a full window whose oldest sample equals the new one: nothing
  // moves), out of line otherwise.
  void add_sample(int32_t local_ahead) noexcept {
    const int32_t sample = std::clamp(local_ahead, -kMaxGap, kMaxGap);
    if (count_ == kSamples && local_[next_] == sample) {
      next_ = (next_ + 1) % kSamples;
      return;
    }
    insert(sample);
  }
  // add_sample(local_ahead), then frames_to_wait(remote_ahead): the session's call once per
  // frame. The usual frame takes neither: the peer's advantage is the one of the last call
  // (kept only for a full window, so a match also says the window is full) and the window's
  // oldest sample equals the new one (nothing moves, so the median is the same; the window
  // holds clamped samples only, so the sample is compared unclamped): the advice worked out
  // then stands. The advantage is checked first and zero-extended, so the usual frame clamps
  // and widens nothing.
  //
  // Usually every sample in the window is the same (steady_): a new one equal to them changes
  // nothing at all, not even where the oldest is (every place holds the same value, so the
  // window read from any place is the same sequence): one compare.
  int32_t sample_and_wait(int32_t local_ahead, int32_t remote_ahead) noexcept {
    if (uint32_t(remote_ahead) == waited_for_) {
      if (int64_t(local_ahead) == steady_) return wait_;
      if (local_[next_] == local_ahead) {
        next_ = (next_ + 1) % kSamples;
        return wait_;
      }
    }
    add_sample(local_ahead);
    if (count_ == kSamples) waited_for_ = uint32_t(remote_ahead);
    wait_ = frames_to_wait(remote_ahead);
    return wait_;
  }
  void reset() noexcept {
    next_ = count_ = 0;
    waited_for_ = kNoAdvice;
    steady_ = kNotSteady;
  }
  uint32_t samples() const noexcept { return count_; }

  // Our advantage as we report it to the peer: the median of the window, so the peer's filter
  // gets a filtered number too (`instant` until the window has enough samples).
  int32_t reported_ahead(int32_t instant) const noexcept { return count_ >= 8 ? median() : instant; }

  // Whole frames to wait, given the peer's (filtered) report of its advantage over us: half
  // the gap beyond the dead band, capped. Never negative: the peer that is behind does not
  // hurry (it cannot run frames faster), the one ahead waits. 0 without enough samples.
  int32_t frames_to_wait(int32_t remote_ahead) const noexcept {
    if (count_ < kMinSamples) return 0;
    const int32_t twice = median() - std::clamp(remote_ahead, -kMaxGap, kMaxGap);
    if (twice <= 2 * kDeadBandFrames) return 0;
    return std::min(twice / 2, kMaxAdviceFrames);
  }

 private:
#if defined(__GNUC__)
  __attribute__((noinline))
#endif
  void insert(int32_t sample) noexcept {
    // The window is also kept sorted, so the median (asked for on every send and every frame)
    // is one load. A full window replaces its oldest sample: only the samples between the old
    // value and the new one move (none when they are equal, the usual case).
    int32_t* const begin = sorted_.data();
    int32_t* const end = begin + count_;
    if (count_ < kSamples) {
      int32_t* const at = std::upper_bound(begin, end, sample);
      std::copy_backward(at, end, end + 1);
      *at = sample;
      ++count_;
    } else if (const int32_t old = local_[next_]; sample > old) {
      int32_t* const gone = std::upper_bound(begin, end, old) - 1;  // its last copy
      int32_t* const above = std::lower_bound(gone + 1, end, sample);
      std::copy(gone + 1, above, gone);
      *(above - 1) = sample;
    } else if (sample < old) {
      int32_t* const gone = std::lower_bound(begin, end, old);  // its first copy
      int32_t* const above = std::upper_bound(begin, gone, sample);
      std::copy_backward(above, gone, gone + 1);
      *above = sample;
    }
    local_[next_] = sample;
    next_ = (next_ + 1) % kSamples;
    waited_for_ = kNoAdvice;  // the median may have moved: sample_and_wait works it out again
    steady_ = count_ == kSamples && sorted_[0] == sorted_[kSamples - 1] ? sorted_[0] : kNotSteady;
  }

  // The middle sample in sorted order (the upper one of an even count).
  int32_t median() const noexcept { return sorted_[count_ / 2]; }
  std::array<int32_t, kSamples> local_{};   // in arrival order: the oldest is replaced next
  std::array<int32_t, kSamples> sorted_{};  // the same samples, ascending
  uint32_t next_ = 0, count_ = 0;
  // sample_and_wait's advice (wait_) for the peer's advantage waited_for_ (as uint32_t), valid
  // while the window did not move since and set only for a full window; kNoAdvice (no uint32_t
  // equals it): none.
  static constexpr uint64_t kNoAdvice = UINT64_MAX;
  uint64_t waited_for_ = kNoAdvice;
  int32_t wait_ = 0;
  // The value of every sample of a full window that holds only one value, else kNotSteady (no
  // int32_t is; a 64-bit compare, as waited_for_). Only insert() changes which values the window
  // holds.
  static constexpr int64_t kNotSteady = INT64_MIN;
  int64_t steady_ = kNotSteady;
};

// What the game is told and how the advice is used up. The advice is consumed as the game
// actually waits: every frame time that passes without the frame advancing (a skipped tick, a
// stall at the prediction limit, a slow tick) counts as one frame waited, whatever API the
// game reads. A game that keeps skipping ticks while frames_to_wait() > 0 therefore stops
// after the advised frames; one that ignores the advice has it dropped after a window.
class WaitAdvice {
 public:
  void set_frame_time(uint64_t frame_us) noexcept { frame_us_ = frame_us; }

  // New advice (the previous one was used up or dropped).
  void advise(int32_t frames, uint64_t now_us) noexcept {
    left_ = frames;
    ignored_frames_ = 0;
    idle_mark_us_ = std::max(idle_mark_us_, now_us);
  }
  // The game's frame advanced at `now_us`.
  void on_advanced(uint64_t now_us) noexcept {
    idle_mark_us_ = now_us;
    advanced_since_wait_ = true;
    // A game that ignores the advice advances anyway: after a window of frames it is void.
    if (left_ > 0 && ++ignored_frames_ >= int32_t(TimeSync::kSamples)) left_ = 0;
  }
  // Time passes. Returns true when this call finished the advice (the last frame was waited).
  bool on_time(uint64_t now_us) noexcept {
    // The usual tick: no advice. (ignored_frames_ is read only while advice is left, and
    // advise() zeroes it first.)
    if (left_ == 0) return false;
    bool finished = false;
    // Half a frame of slack: a tick that comes a little late is not a wait.
    while (left_ > 0 && now_us >= idle_mark_us_ + frame_us_ + frame_us_ / 2) {
      idle_mark_us_ += frame_us_;
      advanced_since_wait_ = false;
      if (--left_ == 0) finished = true;
    }
    if (left_ == 0) ignored_frames_ = 0;
    return finished;
  }
  int32_t frames_left() const noexcept { return left_; }
  // Wait one tick at a time between ticks that advance, so a wait of several frames is spread
  // (and barely visible) instead of one freeze.
  bool should_wait() const noexcept { return left_ > 0 && advanced_since_wait_; }

 private:
  uint64_t frame_us_ = 16667;
  int32_t left_ = 0;
  int32_t ignored_frames_ = 0;
  uint64_t idle_mark_us_ = 0;
  bool advanced_since_wait_ = true;
};

}  // namespace retcon::detail
