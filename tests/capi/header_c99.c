/* retcon.h compiles as strict C99 (-std=c99 -pedantic-errors -Werror) and works from C: this
 * program is built with those flags and run by ctest. */
#include "retcon.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

/* Structs initialise as plain C aggregates. */
static const retcon_frame_inputs kInputs = {NULL, NULL, 4u, 2u, NULL, 0u};

int main(void) {
  retcon_session_config config;
  retcon_game_callbacks callbacks;
  retcon_sync_test_config sync;
  retcon_session_stats stats;
  retcon_session* session = NULL;
  retcon_event event;

  memset(&event, 0, sizeof event);
  CHECK(retcon_version() == RETCON_VERSION_NUMBER);
  CHECK(strcmp(retcon_version_string(), RETCON_VERSION_STRING) == 0);
  CHECK(strcmp(retcon_result_name(RETCON_RESULT_WRONG_STATE), "wrong_state") == 0);
  CHECK(strcmp(retcon_event_type_name(RETCON_EVENT_SAVE_FAILED), "save_failed") == 0);
  CHECK(retcon_session_config_init(&config) == RETCON_RESULT_OK);
  CHECK(config.size == sizeof config);
  CHECK(retcon_game_callbacks_init(&callbacks) == RETCON_RESULT_OK);
  CHECK(retcon_sync_test_config_init(&sync) == RETCON_RESULT_OK);
  CHECK(retcon_session_stats_init(&stats) == RETCON_RESULT_OK);
  CHECK(sizeof stats.rollback_depth_histogram / sizeof stats.rollback_depth_histogram[0] ==
        RETCON_MAX_PREDICTION_FRAMES + 1);
  config.max_state_size = 64;
  /* No callbacks: refused, never a crash, and *out cleared. */
  session = (retcon_session*)&config;
  CHECK(retcon_local_session_create(&config, &callbacks, &session) == RETCON_RESULT_INVALID_ARGUMENT);
  CHECK(session == NULL);
  CHECK(retcon_session_destroy(NULL) == RETCON_RESULT_OK);
  CHECK(kInputs.input_size == 4u && event.type == 0u);
  CHECK(RETCON_MAX_STATE_SIZE == (uint64_t)256 * 1024 * 1024);
  if (failures == 0) printf("retcon.h as C99: ok (retcon %s)\n", retcon_version_string());
  return failures == 0 ? 0 : 1;
}
