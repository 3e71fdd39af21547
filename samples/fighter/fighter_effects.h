// Fighter: presentation events (sounds, hit sparks) produced by a step. They are output only:
// nothing in the state depends on them, so muting them during re-simulation is safe.
#pragma once

#include <cstdint>

namespace fighter {

enum EffectType : int32_t {
  kEffectSwing = 0,   // an attack's first active frame (whoosh)
  kEffectHit,         // player hit other (spark at x, y)
  kEffectBlock,       // player blocked other's attack
  kEffectJump,
  kEffectLand,
  kEffectKnockOut,    // player was knocked out by other
  kEffectRoundStart,  // "FIGHT!"
  kEffectRoundEnd,    // player = winner or kDraw; other = 1 when the timer ran out
  kEffectMatchEnd,    // player = winner or kDraw
  kEffectTypeCount
};

struct FighterEffect {
  int32_t type;     // EffectType
  int32_t player;
  int32_t other;
  int32_t x, y;     // fixed point world position
  int32_t variant;  // spark / sound variation, from the state's PRNG
};

struct FighterEffects {
  static constexpr int kCapacity = 32;
  int32_t count = 0;
  int32_t dropped = 0;  // events beyond kCapacity in one step
  FighterEffect items[kCapacity] = {};

  void clear() { count = 0; dropped = 0; }
  void push(const FighterEffect& e) {
    if (count < kCapacity) items[count++] = e; else ++dropped;
  }
};

const char* effect_name(int32_t type);

}  // namespace fighter
