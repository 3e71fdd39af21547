// Fighter: the fields two states differ in, by name ("p0.health 1000 vs 999"), for the
// desync_states event (both machines' states of a desync frame). A field table rather than a
// memcmp of the bytes: the point is to tell the developer *which* value went astray.
#include <cinttypes>
#include <cstdio>

#include "fighter.h"

namespace fighter {
namespace {

struct Field {
  const char* name;
  int32_t FighterPlayer::*member;
};

constexpr Field kPlayerFields[] = {
    {"x", &FighterPlayer::x},
    {"y", &FighterPlayer::y},
    {"vx", &FighterPlayer::vx},
    {"vy", &FighterPlayer::vy},
    {"facing", &FighterPlayer::facing},
    {"health", &FighterPlayer::health},
    {"move", &FighterPlayer::move},
    {"move_frame", &FighterPlayer::move_frame},
    {"stun", &FighterPlayer::stun},
    {"hit_mask", &FighterPlayer::hit_mask},
    {"buffered_move", &FighterPlayer::buffered_move},
    {"buffer_frames", &FighterPlayer::buffer_frames},
    {"combo", &FighterPlayer::combo},
    {"damage_dealt", &FighterPlayer::damage_dealt},
    {"round_wins", &FighterPlayer::round_wins},
    {"match_wins", &FighterPlayer::match_wins},
};

// Every field is compared: a field added to the state must be added here too.
static_assert(sizeof kPlayerFields / sizeof kPlayerFields[0] + 2 == sizeof(FighterPlayer) / 4,
              "a FighterPlayer field is missing from the diff");
static_assert(11 + kMaxRoundsPerMatch + kMaxPlayers * sizeof(FighterPlayer) / 4 + 2 == sizeof(FighterState) / 4,
              "a FighterState field is missing from the diff");

struct Differ {
  const retcon::TextSink& sink;
  int count = 0;
  void compare(const char* name, int64_t a, int64_t b) {
    if (a == b) return;
    ++count;
    char line[160];
    const int n = std::snprintf(line, sizeof line, "%s %" PRId64 " vs %" PRId64 "\n", name, a, b);
    if (n > 0) sink.append(line, size_t(n) < sizeof line ? size_t(n) : sizeof line - 1);
  }
};

}  // namespace

int fighter_diff(const FighterState& a, const FighterState& b, const retcon::TextSink& sink) {
  Differ d{sink};
  d.compare("frame", a.frame, b.frame);
  d.compare("players", a.players, b.players);
  d.compare("rng", a.rng, b.rng);
  d.compare("phase", a.phase, b.phase);
  d.compare("phase_timer", a.phase_timer, b.phase_timer);
  d.compare("round", a.round, b.round);
  d.compare("round_timer", a.round_timer, b.round_timer);
  d.compare("round_winner", a.round_winner, b.round_winner);
  d.compare("match", a.match, b.match);
  d.compare("match_winner", a.match_winner, b.match_winner);
  d.compare("rounds_played", a.rounds_played, b.rounds_played);
  char name[48];
  for (int r = 0; r < kMaxRoundsPerMatch; ++r) {
    std::snprintf(name, sizeof name, "round_results[%d]", r);
    d.compare(name, a.round_results[r], b.round_results[r]);
  }
  for (int i = 0; i < kMaxPlayers; ++i) {
    for (const Field& f : kPlayerFields) {
      std::snprintf(name, sizeof name, "p%d.%s", i, f.name);
      d.compare(name, a.p[i].*f.member, b.p[i].*f.member);
    }
    std::snprintf(name, sizeof name, "p%d.buttons", i);
    d.compare(name, a.p[i].buttons, b.p[i].buttons);
    std::snprintf(name, sizeof name, "p%d.prev_buttons", i);
    d.compare(name, a.p[i].prev_buttons, b.p[i].prev_buttons);
  }
  d.compare("decided_round_end", a.decided_round_end, b.decided_round_end);
  d.compare("round_end_due_frame", a.round_end_due_frame, b.round_end_due_frame);
  return d.count;
}

}  // namespace fighter
