/* The C twin of tests/support/test_game.h: a game written in C against retcon.h whose state
 * depends on the order and history of every input, with a save length that varies by frame.
 * Its saved bytes and hash() equal TestGame's for the same inputs, so C API sessions can be
 * compared with C++ sessions state by state. It never allocates. */
#ifndef RETCON_TESTS_C_TEST_GAME_H
#define RETCON_TESTS_C_TEST_GAME_H

#include <stddef.h>
#include <stdint.h>

#include "retcon.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctg_state {
  uint64_t chain;
  int32_t frame;
  int32_t position[8];
  uint8_t tail_length; /* 0..63: varies the save length */
  uint8_t tail[63];
} ctg_state;

#define CTG_MAX_EVENTS 32

typedef struct ctg_event {
  uint32_t type;
  int32_t player;
  int32_t frame;
  int32_t count;
  uint64_t checksum_local;
  uint64_t checksum_remote;
  char text_local[96];
  char text_remote[96];
  char message[160];
} ctg_event;

typedef struct ctg_game {
  ctg_state state;
  /* When >= 0, re-simulated frames at or after it fold a hidden counter into the state. */
  int32_t nondeterministic_from;
  uint64_t hidden_calls;
  /* When set, every advanced frame f < start_hash_count records the hash it started from. */
  uint64_t* start_hashes;
  size_t start_hash_count;
  /* Added to every save's length (to test saves that do not fit). */
  size_t extra_save_bytes;
  uint64_t advances, resimulated, loads, saves;
  int32_t frame_errors; /* a callback got a frame the state disagrees with */
  uint32_t event_count; /* events seen; the first CTG_MAX_EVENTS are kept */
  uint32_t desyncs;     /* RETCON_EVENT_DESYNC_DETECTED events */
  uint64_t timesyncs;   /* RETCON_EVENT_TIMESYNC events, and the count of the last one */
  int32_t last_timesync_count;
  ctg_event events[CTG_MAX_EVENTS];
  /* Called at the end of advance_frame when set (re-entrancy tests). */
  void (*on_advance)(struct ctg_game* game);
  void* test_data;
} ctg_game;

void ctg_init(ctg_game* game);
/* Fills `callbacks` (after retcon_game_callbacks_init) with this game's callbacks. With
 * `custom_checksum`, the game supplies ctg_checksum instead of retcon's default XXH3. */
void ctg_bind(ctg_game* game, retcon_game_callbacks* callbacks, int32_t custom_checksum);

uint64_t ctg_hash(const ctg_state* state);
void ctg_step(ctg_state* state, const retcon_frame_inputs* inputs);
size_t ctg_saved_size(const ctg_state* state);
/* FNV-1a 64 of the saved bytes (the optional checksum callback). */
uint64_t ctg_checksum(void* user, int32_t frame, const uint8_t* buffer, size_t length);

#ifdef __cplusplus
}
#endif

#endif
