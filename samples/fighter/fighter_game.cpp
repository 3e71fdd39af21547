// Fighter: the retcon game-callback adapter.
#include "fighter_game.h"

#include <cstring>

namespace fighter {

FighterGame::FighterGame(int players, uint32_t seed) { reset(players, seed); }

void FighterGame::reset(int players, uint32_t seed) {
  fighter_init(state_, players, seed);
  effects_.clear();
  counters_ = FighterGameCounters{};
}

size_t FighterGame::save_state(retcon::Frame, uint8_t* buffer, size_t capacity) {
  if (buffer == nullptr || capacity < sizeof state_) return sizeof state_;
  std::memcpy(buffer, &state_, sizeof state_);
  ++counters_.saves;
  return sizeof state_;
}

void FighterGame::load_state(retcon::Frame, const uint8_t* buffer, size_t length) {
  if (buffer == nullptr || length != sizeof state_) {
    ++counters_.bad_loads;  // not ours: keep the current state rather than read garbage
    return;
  }
  std::memcpy(&state_, buffer, sizeof state_);
  ++counters_.loads;
}

void FighterGame::advance_frame(retcon::Frame, const retcon::FrameInputs& inputs, uint32_t flags) {
  effects_.clear();
  fighter_step(state_, inputs, flags, &effects_);
  if ((flags & retcon::kAdvanceResimulating) != 0) {
    ++counters_.frames_resimulated;
  } else {
    ++counters_.frames_advanced;
  }
  counters_.effects_played += static_cast<uint64_t>(effects_.count);
  for (int i = 0; i < effects_.count; ++i) {
    const int32_t t = effects_.items[i].type;
    if (t >= 0 && t < kEffectTypeCount) ++counters_.effects_by_type[t];
  }
}

void FighterGame::describe_state(retcon::Frame, const uint8_t* buffer, size_t length,
                                 const retcon::TextSink& sink) {
  if (buffer == nullptr || length != sizeof(FighterState)) {
    static const char kBad[] = "not a fighter state\n";
    sink.append(kBad, sizeof kBad - 1);
    return;
  }
  FighterState s;
  std::memcpy(&s, buffer, sizeof s);
  fighter_describe(s, sink);
}

uint64_t FighterGame::checksum(retcon::Frame, const uint8_t* buffer, size_t length) {
  if (buffer == nullptr || length != sizeof(FighterState)) return 0;
  FighterState s;
  std::memcpy(&s, buffer, sizeof s);
  return fighter_checksum(s);
}

}  // namespace fighter
