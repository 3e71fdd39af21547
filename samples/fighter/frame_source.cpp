// Fighter: LocalFrameSource, the game run on this machine with an optional rollback self-test.
#include "frame_source.h"

namespace fighter {

LocalFrameSource::LocalFrameSource(int players, uint32_t seed, int rollback_test)
    : game_(players, seed),
      rollback_test_(rollback_test < 0 ? 0 : (rollback_test >= kRing ? kRing - 1 : rollback_test)) {
  overlay_.visible = rollback_test_ > 0;
}

void LocalFrameSource::set_local_input(int player, uint16_t bits) {
  if (player >= 0 && player < kMaxPlayers) local_[player] = bits;
}

void LocalFrameSource::step(uint8_t* inputs, uint32_t flags) {
  retcon::InputStatus status[kMaxPlayers] = {};
  const retcon::FrameInputs in{inputs, status, kInputSize,
                               static_cast<uint32_t>(game_.state().players)};
  game_.advance_frame(game_.state().frame, in, flags);
}

int LocalFrameSource::tick() {
  const int32_t frame = game_.state().frame;
  Saved& slot = ring_[frame % kRing];
  game_.save_state(frame, reinterpret_cast<uint8_t*>(&slot.state), sizeof slot.state);
  for (int p = 0; p < kMaxPlayers; ++p) write_input(local_[p], slot.inputs + p * kInputSize);
  step(slot.inputs, retcon::kAdvanceNone);
  effects_ = game_.last_effects();
  slot.checksum_after = fighter_checksum(game_.state());

  int depth = 0;
  // A varying depth 1..rollback_test_, like late packets would cause.
  const int want = rollback_test_ > 0
      ? 1 + static_cast<int>(((static_cast<uint32_t>(frame) * 2654435761u) >> 20) %
                             static_cast<uint32_t>(rollback_test_))
      : 0;
  if (want > 0 && frame + 1 >= want) {
    // Go back `want` frames and play them again, muted, as a session would.
    const int32_t from = frame + 1 - want;
    const Saved& start = ring_[from % kRing];
    game_.load_state(from, reinterpret_cast<const uint8_t*>(&start.state), sizeof start.state);
    for (int32_t f = from; f <= frame; ++f) {
      Saved& s = ring_[f % kRing];
      step(s.inputs, retcon::kAdvanceResimulating);
      if (fighter_checksum(game_.state()) != s.checksum_after) ++mismatches_;
    }
    depth = want;
    overlay_.rollbacks += 1;
    overlay_.frames_resimulated += static_cast<uint64_t>(depth);
  }
  overlay_.push_rollback_depth(depth);
  return 1;
}

}  // namespace fighter
