/* tiny_arena's game: players pushing a ball around an arena, fixed-point physics. Shared by
 * the sample program (tiny_arena.c) and its game module for retcon_replay (arena_module.c). */
#ifndef RETCON_SAMPLE_ARENA_GAME_H
#define RETCON_SAMPLE_ARENA_GAME_H

#include <retcon.h>

#include <stddef.h>
#include <stdint.h>
/* ---------------------------------------------------------------------------------------------
 * The game. All state lives in one plain struct of fixed-width integers, so saving is a
 * memcpy and the saved bytes are the same on every machine.
 */
enum { kPlayers = 2, kFrames = 600, kArena = 100 * 256 /* 8.8 fixed point */ };

/* One byte of input per player per frame. */
enum { kLeft = 1, kRight = 2, kUp = 4, kDown = 8, kKick = 16 };

typedef struct arena_state {
  int32_t frame;
  int32_t x[kPlayers], y[kPlayers];
  int32_t ball_x, ball_y, ball_dx, ball_dy;
  int32_t score[kPlayers];
} arena_state;

/* The starting state. */
void arena_state_init(arena_state* s);
/* One frame: `inputs` holds kPlayers bytes. */
void arena_step(arena_state* s, const uint8_t* inputs);
/* Scripted players: player p's input at frame f (a stand-in for reading a gamepad). */
uint8_t scripted_input(int p, int32_t frame);
/* describe_state: one line of text. */
void arena_describe(void* user, int32_t frame, const uint8_t* buffer, size_t length, const retcon_text_sink* sink);

#endif
