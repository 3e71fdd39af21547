// Fighter: a bot whose inputs change like a person's: a direction held for a while, short
// attack presses, a reaction now and then to what the opponent does.
#include "fighter_bot.h"

#include "fighter_input.h"
#include "fighter_moves.h"

namespace fighter {
namespace {

int nearest_living_opponent(const FighterState& s, int me) {
  int best = -1;
  int32_t best_dist = 0;
  for (int o = 0; o < s.players; ++o) {
    if (o == me || s.p[o].health <= 0) continue;
    const int32_t d = s.p[o].x > s.p[me].x ? s.p[o].x - s.p[me].x : s.p[me].x - s.p[o].x;
    if (best < 0 || d < best_dist) {
      best = o;
      best_dist = d;
    }
  }
  return best;
}

}  // namespace

FighterBot::FighterBot(uint32_t seed, int player)
    : rng_((seed ^ (0x9E3779B9u * static_cast<uint32_t>(player + 1))) | 1u), player_(player) {}

uint32_t FighterBot::random() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 17;
  rng_ ^= rng_ << 5;
  return rng_;
}

int32_t FighterBot::random_between(int32_t lo, int32_t hi) {
  return lo + static_cast<int32_t>(random() % static_cast<uint32_t>(hi - lo + 1));
}

void FighterBot::choose_intent(int32_t distance_px, bool opponent_attacking) {
  // Weights out of 100 per distance band: far, mid, close.
  struct Weights { int32_t idle, approach, retreat, crouch, jump_in, jump_up, guard; };
  static constexpr Weights kFar{15, 60, 8, 4, 8, 3, 2};
  static constexpr Weights kMid{22, 35, 15, 8, 8, 4, 8};
  static constexpr Weights kClose{25, 15, 22, 12, 5, 6, 15};
  const Weights& w = distance_px > 200 ? kFar : (distance_px > 90 ? kMid : kClose);
  int32_t r = random_between(0, 99);
  const int32_t table[] = {w.idle, w.approach, w.retreat, w.crouch, w.jump_in, w.jump_up, w.guard};
  int32_t pick = kIdle;
  for (int32_t i = 0; i < 7; ++i) {
    if (r < table[i]) { pick = i; break; }
    r -= table[i];
  }
  if (opponent_attacking && random_between(0, 99) < 35) pick = kGuard;  // a reaction
  intent_ = pick;
  switch (pick) {
    case kJumpIn:
    case kJumpUp: intent_left_ = random_between(3, 7); break;   // a tap of up
    case kGuard: intent_left_ = random_between(8, 24); break;
    case kCrouch: intent_left_ = random_between(6, 20); break;
    default: intent_left_ = random_between(4, 30); break;
  }
}

uint16_t FighterBot::next_input(const FighterState& s) {
  if (player_ < 0 || player_ >= s.players || s.p[player_].health <= 0) return 0;
  const FighterPlayer& me = s.p[player_];
  const int o = nearest_living_opponent(s, player_);
  int32_t distance_px = 1000;
  int32_t toward = me.facing;
  bool opponent_attacking = false;
  if (o >= 0) {
    const FighterPlayer& op = s.p[o];
    const int32_t dx = op.x - me.x;
    distance_px = (dx < 0 ? -dx : dx) / kFixOne;
    toward = dx > 0 ? 1 : (dx < 0 ? -1 : me.facing);
    // React once to each attack of the opponent that starts nearby.
    const int32_t start = s.frame - op.move_frame;
    if (move_is_attack(op.move) && distance_px < 130 && start != seen_attack_frame_) {
      seen_attack_frame_ = start;
      opponent_attacking = true;
    }
  }

  if (opponent_attacking || intent_left_ <= 0) choose_intent(distance_px, opponent_attacking);
  --intent_left_;

  // Short attack presses when in range, then a pause before the next.
  if (press_left_ > 0) {
    --press_left_;
    if (press_left_ == 0) press_ = 0;
  } else if (attack_cooldown_ > 0) {
    --attack_cooldown_;
  } else if (intent_ != kGuard && s.phase == kPhaseFight) {
    const int32_t r = random_between(0, 99);
    if (distance_px < 80 && r < 12) {
      press_ = kInputLight;
    } else if (distance_px < 100 && r >= 94) {
      press_ = kInputHeavy;
    } else if (distance_px >= 100 && r == 0) {
      press_ = kInputLight;  // a whiff now and then, as people do
    }
    if (press_ != 0) {
      press_left_ = random_between(2, 5);
      attack_cooldown_ = random_between(8, 24);
    }
  }

  uint16_t bits = press_;
  const uint16_t fwd = toward > 0 ? kInputRight : kInputLeft;
  const uint16_t back = toward > 0 ? kInputLeft : kInputRight;
  switch (intent_) {
    case kApproach: bits |= fwd; break;
    case kRetreat: bits |= back; break;
    case kCrouch: bits |= kInputDown; break;
    case kJumpIn: bits |= static_cast<uint16_t>(kInputUp | fwd); break;
    case kJumpUp: bits |= kInputUp; break;
    case kGuard: bits |= kInputBlock; break;
    default: break;
  }
  return bits;
}

void FighterBot::next_input(const FighterState& state, uint8_t out[2]) {
  write_input(next_input(state), out);
}

namespace {

struct ScriptStep {
  uint16_t bits;
  int32_t frames;
};

// Holds and presses in roughly the rhythm of play: walk in, jab, walk, pause, back off,
// heavy, jump, guard, crouch jab.
constexpr ScriptStep kScript[] = {
    {kInputRight, 20},
    {kInputRight | kInputLight, 3},
    {kInputRight, 10},
    {0, 8},
    {kInputLeft, 15},
    {kInputHeavy, 4},
    {0, 6},
    {kInputUp, 3},
    {0, 20},
    {kInputBlock, 12},
    {kInputDown, 10},
    {kInputDown | kInputLight, 3},
    {0, 12},
    {kInputLeft | kInputUp, 4},
    {0, 14},
    {kInputLight, 2},
    {0, 5},
    {kInputLight, 2},
    {0, 9},
};

constexpr int32_t script_period() {
  int32_t total = 0;
  for (const ScriptStep& s : kScript) total += s.frames;
  return total;
}

}  // namespace

ScriptedInputs::ScriptedInputs(int player) : offset_(player * 37) {}

int32_t ScriptedInputs::period() { return script_period(); }

uint16_t ScriptedInputs::at(int32_t frame) const {
  const int32_t period = script_period();
  int32_t t = ((frame + offset_) % period + period) % period;
  for (const ScriptStep& s : kScript) {
    if (t < s.frames) return s.bits;
    t -= s.frames;
  }
  return 0;
}

}  // namespace fighter
