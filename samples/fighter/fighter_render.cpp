// Fighter window: the renderer.
#include "fighter_render.h"

#include <cstdio>

#include "bitmap_font.h"
#include "fighter_moves.h"

namespace fighter {
namespace {

constexpr int kFloorY = 318;       // screen y of the floor (world y = 0)
constexpr int kOverlayY = 336;     // network overlay strip below the floor

struct Rgb {
  uint8_t r, g, b;
};
constexpr Rgb kPlayerColors[kMaxPlayers] = {
    {230, 70, 60}, {70, 130, 240}, {80, 200, 90}, {235, 200, 60}};

int screen_x(int32_t world_x) { return world_x / kFixOne; }
int screen_y(int32_t world_y) { return kFloorY - world_y / kFixOne; }

}  // namespace

FighterRenderer::FighterRenderer(SDL_Renderer* renderer) : r_(renderer) {
  SDL_SetRenderDrawBlendMode(r_, SDL_BLENDMODE_BLEND);
}

void FighterRenderer::color(uint8_t r, uint8_t g, uint8_t b, uint8_t a) {
  SDL_SetRenderDrawColor(r_, r, g, b, a);
}

void FighterRenderer::fill(int x, int y, int w, int h) {
  const SDL_Rect rect{x, y, w, h};
  SDL_RenderFillRect(r_, &rect);
}

void FighterRenderer::outline(int x, int y, int w, int h) {
  const SDL_Rect rect{x, y, w, h};
  SDL_RenderDrawRect(r_, &rect);
}

void FighterRenderer::add_effects(const FighterEffects& fx) {
  for (int i = 0; i < fx.count; ++i) {
    const FighterEffect& e = fx.items[i];
    if (e.type != kEffectHit && e.type != kEffectBlock && e.type != kEffectKnockOut) continue;
    if (spark_count_ == kMaxSparks) {
      for (int k = 1; k < kMaxSparks; ++k) sparks_[k - 1] = sparks_[k];
      --spark_count_;
    }
    sparks_[spark_count_++] = Spark{e.x, e.y, 0, e.type};
  }
}

void FighterRenderer::draw(const FighterState& s, const NetOverlay& overlay) {
  color(24, 26, 44);
  SDL_RenderClear(r_);
  draw_stage();
  // Knocked-out fighters first, so the living stand in front.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < s.players && i < kMaxPlayers; ++i) {
      if ((s.p[i].move == kMoveKnockedOut) == (pass == 0)) draw_fighter(s, i);
    }
  }
  draw_sparks();
  draw_hud(s);
  draw_banner(s);
  draw_overlay(s, overlay);
}

void FighterRenderer::draw_stage() {
  color(40, 44, 70);
  fill(0, kFloorY, kWidth, kOverlayY - kFloorY);
  color(120, 120, 150);
  fill(0, kFloorY, kWidth, 2);
  color(70, 70, 100);
  // Walls stop the body centre at kWallLeft/kWallRight; draw them at the body's edge.
  fill(screen_x(kWallLeft - kBodyHalfWidth) - 2, 60, 2, kFloorY - 60);
  fill(screen_x(kWallRight + kBodyHalfWidth), 60, 2, kFloorY - 60);
}

void FighterRenderer::draw_fighter(const FighterState& s, int i) {
  const FighterPlayer& p = s.p[i];
  const Rgb c = kPlayerColors[i];
  const int x = screen_x(p.x);
  const int feet = screen_y(p.y);
  const int half = kBodyHalfWidth / kFixOne;

  if (p.move == kMoveKnockedOut) {  // lying down
    color(c.r / 2, c.g / 2, c.b / 2);
    fill(x - 44, feet - 18, 88, 18);
    return;
  }
  const int h = (p.move == kMoveCrouch ? kCrouchHeight : kStandHeight) / kFixOne -
                (p.move == kMoveJump && p.y == 0 ? 8 : 0) - (p.move == kMoveLanding ? 6 : 0);
  const bool flash = p.move == kMoveHitstun && (s.frame / 2) % 2 == 0;
  if (flash) color(255, 255, 255);
  else color(c.r, c.g, c.b);
  fill(x - half, feet - h, 2 * half, h);
  // Head band on the facing side: which way the fighter looks.
  color(20, 20, 30);
  fill(p.facing > 0 ? x + half - 10 : x - half + 4, feet - h + 10, 6, 6);

  const int front = p.facing > 0 ? x + half : x - half - 6;
  if ((p.move == kMoveBlock && p.move_frame >= move_data(kMoveBlock).startup) ||
      p.move == kMoveBlockstun) {
    color(150, 220, 255, 220);
    fill(front, feet - h + 4, 6, h - 8);
  }
  if (move_is_attack(p.move)) {
    const MoveData& m = move_data(p.move);
    const int x0 = p.facing > 0 ? x + m.reach_x0 / kFixOne : x - m.reach_x1 / kFixOne;
    const int w = (m.reach_x1 - m.reach_x0) / kFixOne;
    const int y0 = feet - m.reach_y1 / kFixOne;
    const int hh = (m.reach_y1 - m.reach_y0) / kFixOne;
    Box hit;
    if (hitbox(p, &hit)) {
      color(255, 240, 180, 230);  // active: the hitbox itself
      fill(x0, y0, w, hh);
    } else if (p.move_frame < m.startup) {
      color(c.r, c.g, c.b, 160);  // startup: winding up
      outline(x0, y0, w, hh);
    } else {
      color(c.r / 2, c.g / 2, c.b / 2, 200);  // recovery: limb still out
      fill(p.facing > 0 ? x0 : x0 + w / 2, y0 + hh / 3, w / 2, hh / 3);
    }
  }
  color(255, 255, 255);
  char label[16];
  std::snprintf(label, sizeof label, "P%d", i + 1);
  draw_text(r_, x - 7, feet - h - 14, 2, label);
}

void FighterRenderer::draw_hud(const FighterState& s) {
  const int n = s.players < 1 ? 1 : (s.players > kMaxPlayers ? kMaxPlayers : s.players);
  const int gap = 12;
  const int w = (kWidth - 2 * 16 - (n - 1) * gap) / n;
  for (int i = 0; i < n; ++i) {
    const FighterPlayer& p = s.p[i];
    const int x = 16 + i * (w + gap);
    const Rgb c = kPlayerColors[i];
    color(60, 20, 20);
    fill(x, 24, w, 14);
    const int filled = w * (p.health < 0 ? 0 : p.health) / kMaxHealth;
    color(c.r, c.g, c.b);
    fill(x, 24, filled, 14);
    color(220, 220, 220);
    outline(x - 1, 23, w + 2, 16);
    char label[24];
    std::snprintf(label, sizeof label, "P%d %d", i + 1, static_cast<int>(p.health));
    draw_text(r_, x, 12, 2, label);
    // Round-win pips.
    for (int k = 0; k < kRoundsToWin; ++k) {
      if (k < p.round_wins) color(255, 220, 80);
      else color(70, 70, 90);
      fill(x + k * 14, 44, 10, 10);
    }
    if (p.match_wins > 0) {
      std::snprintf(label, sizeof label, "W%d", static_cast<int>(p.match_wins));
      color(180, 180, 200);
      draw_text(r_, x + w - text_width(2, label), 44, 2, label);
    }
  }
  char text[32];
  const int seconds = (s.round_timer + 59) / 60;
  std::snprintf(text, sizeof text, "%d", seconds);
  color(255, 255, 255);
  draw_text(r_, kWidth / 2 - text_width(4, text) / 2, 62, 4, text);
  std::snprintf(text, sizeof text, "ROUND %d", static_cast<int>(s.round));
  color(190, 190, 210);
  draw_text(r_, kWidth / 2 - text_width(2, text) / 2, 88, 2, text);
}

void FighterRenderer::draw_banner(const FighterState& s) {
  char text[40] = "";
  if (s.phase == kPhaseIntro) {
    std::snprintf(text, sizeof text, s.phase_timer > 20 ? "ROUND %d" : "FIGHT!",
                  static_cast<int>(s.round));
  } else if (s.phase == kPhaseRoundOver) {
    if (s.round_winner >= 0) {
      std::snprintf(text, sizeof text, "P%d WINS%s", static_cast<int>(s.round_winner) + 1,
                    s.round_timer <= 0 ? " - TIME" : "");
    } else {
      std::snprintf(text, sizeof text, s.round_timer <= 0 ? "TIME - DRAW" : "DOUBLE KO");
    }
  } else if (s.phase == kPhaseMatchOver) {
    if (s.match_winner >= 0) {
      std::snprintf(text, sizeof text, "P%d WINS THE MATCH", static_cast<int>(s.match_winner) + 1);
    } else {
      std::snprintf(text, sizeof text, "MATCH DRAWN");
    }
  }
  if (text[0] == '\0') return;
  const int w = text_width(5, text);
  color(0, 0, 0, 150);
  fill(kWidth / 2 - w / 2 - 12, 140, w + 24, 45);
  color(255, 240, 200);
  draw_text(r_, kWidth / 2 - w / 2, 150, 5, text);
}

void FighterRenderer::draw_sparks() {
  int kept = 0;
  for (int i = 0; i < spark_count_; ++i) {
    Spark sp = sparks_[i];
    const int size = 6 + sp.age * 3;
    const uint8_t alpha = static_cast<uint8_t>(255 - sp.age * 25);
    if (sp.kind == kEffectBlock) color(150, 220, 255, alpha);
    else color(255, 230, 120, alpha);
    const int x = screen_x(sp.x);
    const int y = screen_y(sp.y);
    outline(x - size / 2, y - size / 2, size, size);
    fill(x - 2, y - 2, 4, 4);
    if (++sp.age < 10) sparks_[kept++] = sp;
  }
  spark_count_ = kept;
}

void FighterRenderer::draw_overlay(const FighterState& s, const NetOverlay& o) {
  color(12, 12, 22);
  fill(0, kOverlayY, kWidth, kHeight - kOverlayY);
  char text[64];
  color(140, 150, 170);
  std::snprintf(text, sizeof text, "FRAME %d", static_cast<int>(s.frame));
  draw_text(r_, 10, kOverlayY + 8, 2, text);
  if (!o.visible) {
    draw_text(r_, 10, kOverlayY + 24, 2, "LOCAL");
    return;
  }
  color(220, 230, 250);
  std::snprintf(text, sizeof text, "PING %dMS  ADV %+d  DELAY %d", static_cast<int>(o.ping_ms),
                static_cast<int>(o.frame_advantage), static_cast<int>(o.input_delay));
  draw_text(r_, 10, kOverlayY + 24, 2, text);
  std::snprintf(text, sizeof text, "ROLLBACKS %llu  RESIM %llu",
                static_cast<unsigned long long>(o.rollbacks),
                static_cast<unsigned long long>(o.frames_resimulated));
  draw_text(r_, 10, kOverlayY + 40, 2, text);
  if (o.late_player >= 0) {
    color(240, 110, 90);
    // Beside the frame number: a player whose inputs arrive later than the network explains.
    std::snprintf(text, sizeof text, "LAG P%d +%dF", static_cast<int>(o.late_player) + 1,
                  static_cast<int>(o.late_frames));
    draw_text(r_, 170, kOverlayY + 8, 2, text);
  }

  // Rollback depth per frame, oldest on the left; a tick every 4 frames of depth.
  const int gx = kWidth - 10 - 2 * NetOverlay::kHistory;
  const int gy = kOverlayY + 6;
  const int gh = kHeight - kOverlayY - 12;
  color(30, 32, 50);
  fill(gx, gy, 2 * NetOverlay::kHistory, gh);
  color(60, 64, 90);
  for (int d = 4; d * 3 < gh; d += 4) fill(gx, gy + gh - d * 3, 2 * NetOverlay::kHistory, 1);
  for (int i = 0; i < NetOverlay::kHistory; ++i) {
    int bar = o.history_at(i) * 3;
    if (bar > gh) bar = gh;
    if (bar == 0) continue;
    if (o.history_at(i) > 6) color(240, 110, 90);
    else color(120, 210, 140);
    fill(gx + 2 * i, gy + gh - bar, 2, bar);
  }
}

}  // namespace fighter
