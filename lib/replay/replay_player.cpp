// ReplayPlayer: plays a replay's frames through the game's callbacks, comparing the recorded
// checksums with the live state's before each checkpoint frame.
#include <new>

#include "core/checksum.h"
#include "retcon/replay.h"

namespace retcon {

ReplayPlayer::ReplayPlayer() = default;
ReplayPlayer::~ReplayPlayer() = default;

Result ReplayPlayer::init(const Replay& replay, const GameCallbacks& game, size_t max_state_size) {
  if (!game.complete() || max_state_size < 1 || max_state_size > kMaxStateSize) return Result::invalid_argument;
  // The recorder hashed with the game's checksum: the same function must compare.
  if ((replay.header().flags & kReplayGameChecksum) != 0 && game.checksum == nullptr) return Result::invalid_argument;
  try {
    scratch_ = std::make_unique<uint8_t[]>(max_state_size);
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  }
  replay_ = &replay;
  game_ = game;
  capacity_ = max_state_size;
  last_length_ = 0;
  frame_ = 0;
  final_checked_ = false;
  verdict_ = ReplayVerdict{};
  return Result::ok;
}

bool ReplayPlayer::done() const noexcept { return replay_ == nullptr || frame_ >= replay_->frame_count(); }

const uint8_t* ReplayPlayer::last_state() const noexcept { return last_length_ ? scratch_.get() : nullptr; }

Result ReplayPlayer::step() {
  if (replay_ == nullptr || final_checked_) return Result::wrong_state;
  // A checkpoint may name the frame after the last one: the final state.
  if (const ReplayCheckpoint* c = replay_->checkpoint(frame_)) {
    const size_t n = game_.save_state(game_.user, frame_, scratch_.get(), capacity_);
    if (n > capacity_) return Result::save_failed;
    last_length_ = n;
    const uint64_t sum = (replay_->header().flags & kReplayGameChecksum) != 0
                             ? game_.checksum(game_.user, frame_, scratch_.get(), n)
                             : detail::xxh3_64(scratch_.get(), n);
    if (sum == c->checksum) {
      ++verdict_.checkpoints_verified;
      // The last match before the first divergence: what bounds it (a state can re-converge).
      if (!verdict_.diverged()) verdict_.last_good = frame_;
    } else if (!verdict_.diverged()) {
      verdict_.first_bad = frame_;
      verdict_.expected = c->checksum;
      verdict_.actual = sum;
    }
  }
  if (done()) {
    final_checked_ = true;
    return Result::wrong_state;
  }
  const FrameInputs in = replay_->inputs(frame_);
  game_.advance_frame(game_.user, frame_, &in, kAdvanceNone);
  ++frame_;
  verdict_.frames_played = frame_;
  return Result::ok;
}

const ReplayVerdict& ReplayPlayer::run(bool stop_at_divergence) {
  while (step() == Result::ok) {
    if (stop_at_divergence && verdict_.diverged()) break;
  }
  return verdict_;
}

}  // namespace retcon
