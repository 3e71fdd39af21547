/* tiny_arena's game (arena_game.h). */
#include "arena_game.h"

#include <stdio.h>
#include <string.h>

void arena_state_init(arena_state* s) {
  memset(s, 0, sizeof *s);
  s->x[0] = 20 * 256;
  s->x[1] = 80 * 256;
  s->y[0] = s->y[1] = 50 * 256;
  s->ball_x = s->ball_y = 50 * 256;
  s->ball_dx = 96;
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void arena_step(arena_state* s, const uint8_t* inputs /* kPlayers bytes */) {
  int p;
  for (p = 0; p < kPlayers; ++p) {
    const uint8_t in = inputs[p];
    int32_t dx, dy;
    if (in & kLeft) s->x[p] -= 192;
    if (in & kRight) s->x[p] += 192;
    if (in & kUp) s->y[p] -= 192;
    if (in & kDown) s->y[p] += 192;
    s->x[p] = clamp(s->x[p], 0, kArena);
    s->y[p] = clamp(s->y[p], 0, kArena);
    dx = s->ball_x - s->x[p];
    dy = s->ball_y - s->y[p];
    if ((in & kKick) && dx > -1280 && dx < 1280 && dy > -1280 && dy < 1280) {
      s->ball_dx += dx / 8;
      s->ball_dy += dy / 8;
    }
  }
  s->ball_x += s->ball_dx;
  s->ball_y += s->ball_dy;
  s->ball_dx = s->ball_dx * 63 / 64;
  s->ball_dy = s->ball_dy * 63 / 64;
  if (s->ball_y < 0 || s->ball_y > kArena) {
    s->ball_dy = -s->ball_dy;
    s->ball_y = clamp(s->ball_y, 0, kArena);
  }
  if (s->ball_x < 0 || s->ball_x > kArena) { /* a goal: the other side scores, ball resets */
    ++s->score[s->ball_x < 0 ? 1 : 0];
    s->ball_x = s->ball_y = 50 * 256;
    s->ball_dx = (s->frame & 1) ? 96 : -96;
    s->ball_dy = 0;
  }
  ++s->frame;
}

uint8_t scripted_input(int p, int32_t frame) {
  const uint32_t h = (uint32_t)frame / 12u * 2654435761u + (uint32_t)p * 40503u;
  return (uint8_t)((h >> 13) & 31u);
}

void arena_describe(void* user, int32_t frame, const uint8_t* buffer, size_t length,
                    const retcon_text_sink* sink) {
  arena_state s;
  char text[256];
  int n;
  (void)user;
  if (length != sizeof s) return;
  memcpy(&s, buffer, sizeof s);
  n = snprintf(text, sizeof text, "frame %d ball (%d,%d) v (%d,%d) score %d:%d\np0 (%d,%d)\np1 (%d,%d)", (int)frame,
               (int)s.ball_x, (int)s.ball_y, (int)s.ball_dx, (int)s.ball_dy, (int)s.score[0], (int)s.score[1],
               (int)s.x[0], (int)s.y[0], (int)s.x[1], (int)s.y[1]);
  if (n > 0) sink->write(sink->user, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}
