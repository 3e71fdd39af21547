// Fighter window: draws a FighterState (fighters as rectangles, health bars, round counter,
// timer, banners) and the network overlay (ping, frame advantage, rollbacks and a rollback
// graph) with SDL2's 2D renderer. Drawing only: it never changes the state.
#pragma once

#include <SDL.h>

#include <cstdint>

#include "fighter.h"
#include "net_overlay.h"

namespace fighter {

class FighterRenderer {
 public:
  static constexpr int kWidth = 640;   // logical size; the window may be scaled
  static constexpr int kHeight = 400;

  explicit FighterRenderer(SDL_Renderer* renderer);

  // Effects heard this tick become short-lived sparks (cosmetic, outside the game state).
  void add_effects(const FighterEffects& effects);
  void draw(const FighterState& state, const NetOverlay& overlay);

 private:
  struct Spark {
    int32_t x, y, age, kind;
  };
  static constexpr int kMaxSparks = 32;

  void draw_stage();
  void draw_fighter(const FighterState& s, int i);
  void draw_hud(const FighterState& s);
  void draw_banner(const FighterState& s);
  void draw_sparks();
  void draw_overlay(const FighterState& s, const NetOverlay& o);
  void color(uint8_t r, uint8_t g, uint8_t b, uint8_t a = 255);
  void fill(int x, int y, int w, int h);
  void outline(int x, int y, int w, int h);

  SDL_Renderer* r_;
  Spark sparks_[kMaxSparks] = {};
  int spark_count_ = 0;
};

}  // namespace fighter
