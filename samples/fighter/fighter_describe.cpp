// Fighter: the state as readable text, for desync and sync-test reports.
#include <cinttypes>
#include <cstdio>

#include "fighter.h"

namespace fighter {
namespace {

// Fixed point as "-12.50" (two decimals, truncated toward zero).
void fixed_text(char* out, size_t size, int32_t v) {
  const int64_t a = v < 0 ? -int64_t{v} : int64_t{v};
  std::snprintf(out, size, "%s%" PRId64 ".%02" PRId64, v < 0 ? "-" : "", a / kFixOne,
                (a % kFixOne) * 100 / kFixOne);
}

void winner_text(char* out, size_t size, int32_t w) {
  if (w == kNoWinner) std::snprintf(out, size, "-");
  else if (w == kDraw) std::snprintf(out, size, "draw");
  else std::snprintf(out, size, "p%d", static_cast<int>(w));
}

void buttons_text(char* out, uint32_t b) {
  const char names[] = "LRUDlhb";
  for (int i = 0; i < 7; ++i) out[i] = (b & (1u << i)) ? names[i] : '.';
  out[7] = '\0';
}

constexpr int kLineSize = 256;

// snprintf returns the length it wanted; never send more than the line holds.
void put(const retcon::TextSink& sink, const char* text, int n) {
  if (n > kLineSize - 1) n = kLineSize - 1;
  if (n > 0) sink.append(text, static_cast<size_t>(n));
}

}  // namespace

const char* phase_name(int32_t phase) {
  switch (phase) {
    case kPhaseIntro: return "intro";
    case kPhaseFight: return "fight";
    case kPhaseRoundOver: return "round-over";
    case kPhaseMatchOver: return "match-over";
    default: return "?";
  }
}

const char* effect_name(int32_t type) {
  static const char* const kNames[kEffectTypeCount] = {
      "swing", "hit", "block", "jump", "land", "knock-out", "round-start", "round-end",
      "match-end"};
  return type >= 0 && type < kEffectTypeCount ? kNames[type] : "?";
}

void fighter_describe(const FighterState& s, const retcon::TextSink& sink) {
  char line[kLineSize];
  char rw[16], mw[16];
  winner_text(rw, sizeof rw, s.round_winner);
  winner_text(mw, sizeof mw, s.match_winner);
  put(sink, line, std::snprintf(line, sizeof line,
      "frame %d players %d checksum %016" PRIx64 " rng %08" PRIx32 "\n", static_cast<int>(s.frame),
      static_cast<int>(s.players), fighter_checksum(s), s.rng));
  put(sink, line, std::snprintf(line, sizeof line,
      "match %d round %d phase %s phase_timer %d round_timer %d last_round_winner %s "
      "match_winner %s\n", static_cast<int>(s.match), static_cast<int>(s.round),
      phase_name(s.phase), static_cast<int>(s.phase_timer), static_cast<int>(s.round_timer), rw, mw));
  int n = std::snprintf(line, sizeof line, "round results:");
  for (int r = 0; r < s.rounds_played && r < kMaxRoundsPerMatch && n < 200; ++r) {
    winner_text(rw, sizeof rw, s.round_results[r]);
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), " %s", rw);
  }
  n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "\n");
  put(sink, line, n);
  const int players = s.players < 0 ? 0 : (s.players > kMaxPlayers ? kMaxPlayers : s.players);
  for (int i = 0; i < players; ++i) {
    const FighterPlayer& p = s.p[i];
    char x[24], y[24], vx[24], vy[24], b[8];
    fixed_text(x, sizeof x, p.x);
    fixed_text(y, sizeof y, p.y);
    fixed_text(vx, sizeof vx, p.vx);
    fixed_text(vy, sizeof vy, p.vy);
    buttons_text(b, p.buttons);
    put(sink, line, std::snprintf(line, sizeof line,
        "p%d pos (%s, %s) vel (%s, %s) facing %s health %d/%d move %s frame %d stun %d "
        "combo %d input %s wins %d matches %d\n", i, x, y, vx, vy, p.facing < 0 ? "left" : "right",
        static_cast<int>(p.health), static_cast<int>(kMaxHealth), move_name(p.move),
        static_cast<int>(p.move_frame), static_cast<int>(p.stun), static_cast<int>(p.combo), b,
        static_cast<int>(p.round_wins), static_cast<int>(p.match_wins)));
  }
}

}  // namespace fighter
