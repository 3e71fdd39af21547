/* A tiny C program built against an installed retcon (CMake package or pkg-config): a sync
 * test of a counter game for 120 frames, then it prints what it saw. */
#include <retcon.h>

#include <stdio.h>
#include <string.h>

typedef struct counter {
  int32_t frame;
  uint32_t total;
} counter;

static size_t save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  (void)frame;
  if (capacity < sizeof(counter)) return sizeof(counter);
  memcpy(buffer, user, sizeof(counter));
  return sizeof(counter);
}

static void load(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  (void)frame;
  if (length == sizeof(counter)) memcpy(user, buffer, sizeof(counter));
}

static void advance(void* user, int32_t frame, const retcon_frame_inputs* in, uint32_t flags) {
  counter* c = (counter*)user;
  uint32_t p;
  (void)frame;
  (void)flags;
  for (p = 0; p < in->player_count; ++p) c->total = c->total * 31u + in->bytes[p * in->input_size];
  ++c->frame;
}

int main(void) {
  counter game = {0, 0};
  retcon_session_config config;
  retcon_sync_test_config sync;
  retcon_game_callbacks callbacks;
  retcon_session_stats stats;
  retcon_session* session = NULL;
  retcon_result r;
  int32_t f;

  if (retcon_version() / 10000 != RETCON_VERSION_MAJOR) {
    fprintf(stderr, "header %s, library %s\n", RETCON_VERSION_STRING, retcon_version_string());
    return 1;
  }
  retcon_session_config_init(&config);
  config.num_players = 2;
  config.input_size = 1;
  config.max_state_size = sizeof(counter);
  retcon_sync_test_config_init(&sync);
  retcon_game_callbacks_init(&callbacks);
  callbacks.user = &game;
  callbacks.save_state = save;
  callbacks.load_state = load;
  callbacks.advance_frame = advance;
  r = retcon_sync_test_session_create(&config, &sync, &callbacks, &session);
  if (r != RETCON_RESULT_OK) {
    fprintf(stderr, "create: %s\n", retcon_result_name(r));
    return 1;
  }
  for (f = 0; f < 120 && r == RETCON_RESULT_OK; ++f) {
    const uint8_t a = (uint8_t)f, b = (uint8_t)(f * 7);
    r = retcon_session_add_local_input(session, 0, &a, 1);
    if (r == RETCON_RESULT_OK) r = retcon_session_add_local_input(session, 1, &b, 1);
    if (r == RETCON_RESULT_OK) r = retcon_session_advance_frame(session);
  }
  retcon_session_stats_init(&stats);
  if (r == RETCON_RESULT_OK) r = retcon_session_get_stats(session, &stats);
  retcon_session_destroy(session);
  if (r != RETCON_RESULT_OK) {
    fprintf(stderr, "run: %s\n", retcon_result_name(r));
    return 1;
  }
  printf("retcon %s: %d frames, total %u, %llu rollbacks\n", retcon_version_string(),
         (int)stats.current_frame, (unsigned)game.total, (unsigned long long)stats.rollbacks);
  return stats.current_frame == 120 ? 0 : 1;
}
