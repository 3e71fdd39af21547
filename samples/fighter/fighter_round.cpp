// Fighter: fighter_init and fighter_step; the round flow (intro, fight, KO / time over, next
// round, match end, next match).
#include <cstring>

#include "fighter.h"
#include "fighter_internal.h"
#include "fighter_moves.h"

namespace fighter {
namespace {

using detail::alive;
using detail::Emitter;

void place_fighters(FighterState& s) {
  // Evenly spread, facing the centre.
  for (int i = 0; i < s.players; ++i) {
    FighterPlayer& p = s.p[i];
    const int32_t round_wins = p.round_wins;
    const int32_t match_wins = p.match_wins;
    p = FighterPlayer{};
    p.round_wins = round_wins;
    p.match_wins = match_wins;
    p.x = kWallLeft + (kWallRight - kWallLeft) * (i + 1) / (s.players + 1);
    p.facing = p.x * 2 < kStageWidth ? 1 : -1;
    p.health = kMaxHealth;
    p.move = kMoveIdle;
    p.buffered_move = kMoveIdle;
  }
}

void start_round(FighterState& s) {
  place_fighters(s);
  s.phase = kPhaseIntro;
  s.phase_timer = kIntroFrames;
  s.round_timer = kRoundFrames;
  s.round_end_due_frame = 0;
}

void start_match(FighterState& s) {
  for (int i = 0; i < s.players; ++i) s.p[i].round_wins = 0;
  s.round = 1;
  s.round_winner = kNoWinner;
  s.match_winner = kNoWinner;
  s.rounds_played = 0;
  for (int32_t& r : s.round_results) r = kNoWinner;
  start_round(s);
}

// The only player with the most of `score` (health or round wins), or kDraw.
template <class Score>
int32_t unique_best(const FighterState& s, Score score) {
  int32_t best = kDraw;
  int32_t best_score = -1;
  bool tie = false;
  for (int i = 0; i < s.players; ++i) {
    const int32_t v = score(s.p[i]);
    if (v > best_score) {
      best = i;
      best_score = v;
      tie = false;
    } else if (v == best_score) {
      tie = true;
    }
  }
  return tie ? kDraw : best;
}

void end_round(FighterState& s, int32_t winner, bool time_over, const Emitter& fx) {
  s.round_winner = winner;
  if (s.rounds_played < kMaxRoundsPerMatch) s.round_results[s.rounds_played] = winner;
  s.rounds_played += 1;
  if (winner >= 0) s.p[winner].round_wins += 1;
  fx.emit(kEffectRoundEnd, winner, time_over ? 1 : 0, 0, 0);
  if (winner >= 0 && s.p[winner].round_wins >= kRoundsToWin) {
    s.match_winner = winner;
  } else if (s.rounds_played >= kMaxRoundsPerMatch) {
    s.match_winner = unique_best(s, [](const FighterPlayer& p) { return p.round_wins; });
  }
  if (s.match_winner >= 0) s.p[s.match_winner].match_wins += 1;
  s.phase = kPhaseRoundOver;
  s.phase_timer = kRoundOverFrames;
}

// The round's end condition holds at this frame: a KO or time over.
bool round_end_holds(const FighterState& s) {
  int alive_count = 0;
  for (int i = 0; i < s.players; ++i) alive_count += alive(s.p[i]) ? 1 : 0;
  return alive_count <= 1 || s.round_timer <= 0;
}

void finish_round(FighterState& s, const Emitter& fx) {
  int alive_count = 0;
  int32_t last_alive = kDraw;
  for (int i = 0; i < s.players; ++i) {
    if (alive(s.p[i])) {
      ++alive_count;
      last_alive = i;
    }
  }
  if (alive_count <= 1) return end_round(s, alive_count == 1 ? last_alive : kDraw, false, fx);
  // Time over: the most health among the living wins; equal health is a draw.
  end_round(s, unique_best(s, [](const FighterPlayer& p) { return p.health; }), true, fx);
}

// Decided mode: the end waits for the decision, which names this round of this match.
bool round_end_decided(const FighterState& s, const retcon::FrameInputs& inputs) {
  for (uint32_t k = 0; k < inputs.decision_count; ++k) {
    const retcon::Decision& d = inputs.decisions[k];
    if (d.size == kRoundEndDecisionSize && d.bytes[0] == kDecisionRoundEnd && d.bytes[1] == uint8_t(s.round) &&
        d.bytes[2] == uint8_t(s.match))
      return true;
  }
  return false;
}

void fight(FighterState& s, const Emitter& fx) {
  for (int i = 0; i < s.players; ++i) detail::control_player(s, i, fx);
  for (int i = 0; i < s.players; ++i) detail::move_player(s.p[i], i, fx);
  detail::separate_bodies(s);
  detail::resolve_hits(s, fx);

  int alive_count = 0;
  int32_t last_alive = kDraw;
  for (int i = 0; i < s.players; ++i) {
    if (alive(s.p[i])) {
      ++alive_count;
      last_alive = i;
    }
  }
  if (s.decided_round_end) {
    // The fight goes on (a knocked-out player stays down) until the decision comes.
    if (s.round_timer > 0) s.round_timer -= 1;
    if (s.round_end_due_frame == 0 && round_end_holds(s)) s.round_end_due_frame = s.frame;
    return;
  }
  if (alive_count <= 1) return end_round(s, alive_count == 1 ? last_alive : kDraw, false, fx);
  s.round_timer -= 1;
  if (s.round_timer <= 0) {
    // Time over: the most health among the living wins; equal health is a draw.
    const int32_t w = unique_best(s, [](const FighterPlayer& p) { return p.health; });
    end_round(s, w, true, fx);
  }
}

void settle(FighterState& s, const Emitter& fx) {
  // Between rounds nobody controls anything: moves run out and bodies land.
  for (int i = 0; i < s.players; ++i) {
    s.p[i].buttons = 0;
    s.p[i].buffered_move = kMoveIdle;
    detail::control_player(s, i, fx);
  }
  for (int i = 0; i < s.players; ++i) detail::move_player(s.p[i], i, fx);
}

}  // namespace

void fighter_init(FighterState& state, int players, uint32_t seed) {
  std::memset(&state, 0, sizeof state);
  state.players = players < kMinPlayers ? kMinPlayers : (players > kMaxPlayers ? kMaxPlayers : players);
  state.rng = seed != 0 ? seed : 0x9E3779B9u;
  state.match = 0;
  start_match(state);
}

void fighter_step(FighterState& s, const retcon::FrameInputs& inputs, uint32_t flags,
                  FighterEffects* effects) {
  const Emitter fx{(flags & retcon::kAdvanceResimulating) != 0 ? nullptr : effects};
  // A state loaded from foreign bytes must not index past the player array.
  if (s.players < kMinPlayers) s.players = kMinPlayers;
  if (s.players > kMaxPlayers) s.players = kMaxPlayers;
  for (int i = 0; i < s.players; ++i) {
    s.p[i].prev_buttons = s.p[i].buttons;
    s.p[i].buttons = read_input(inputs, i);
  }
  switch (s.phase) {
    case kPhaseIntro:
      if (--s.phase_timer <= 0) {
        s.phase = kPhaseFight;
        fx.emit(kEffectRoundStart, -1, -1, 0, 0, s.round);
      }
      break;
    case kPhaseFight:
      if (s.decided_round_end && round_end_decided(s, inputs)) {
        s.round_end_due_frame = 0;
        finish_round(s, fx);
        break;
      }
      fight(s, fx);
      break;
    case kPhaseRoundOver:
      settle(s, fx);
      if (--s.phase_timer > 0) break;
      if (s.match_winner != kNoWinner) {
        s.phase = kPhaseMatchOver;
        s.phase_timer = kMatchOverFrames;
        fx.emit(kEffectMatchEnd, s.match_winner, -1, 0, 0);
      } else {
        s.round += 1;
        start_round(s);
      }
      break;
    case kPhaseMatchOver:
    default:
      settle(s, fx);
      if (--s.phase_timer <= 0) {
        s.match += 1;
        start_match(s);
      }
      break;
  }
  s.frame += 1;
}

}  // namespace fighter
