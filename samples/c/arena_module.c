/* tiny_arena as a game module: a shared library that retcon_replay (or any tool) loads to
 * record, play, sync-test, verify and bisect replays of this game. It exports one function,
 * retcon_game_module_v1 (RETCON_GAME_MODULE_ENTRY_POINT), and needs only retcon.h: the tool
 * brings libretcon. docs/TOOLS.md, "Game modules".
 *   retcon_replay --game ./libretcon_game_arena.so record match.rpl --frames 600
 */
#include "arena_game.h"

#include <stdlib.h>
#include <string.h>

#if defined(_WIN32) || defined(__CYGWIN__)
#  define ARENA_EXPORT __declspec(dllexport)
#else
#  define ARENA_EXPORT __attribute__((visibility("default")))
#endif

/* The user data of an arena replay: a tag and the seed that shifts the scripted players. */
enum { kUserDataSize = 5 };

typedef struct arena_module_game {
  arena_state state;
  uint32_t seed;
} arena_module_game;

static size_t m_save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  const arena_module_game* g = (const arena_module_game*)user;
  (void)frame;
  if (capacity < sizeof g->state) return sizeof g->state;
  memcpy(buffer, &g->state, sizeof g->state);
  return sizeof g->state;
}

static void m_load(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  arena_module_game* g = (arena_module_game*)user;
  (void)frame;
  if (length == sizeof g->state) memcpy(&g->state, buffer, sizeof g->state);
}

static void m_advance(void* user, int32_t frame, const retcon_frame_inputs* in, uint32_t flags) {
  arena_module_game* g = (arena_module_game*)user;
  uint8_t inputs[kPlayers];
  uint32_t p;
  (void)frame;
  (void)flags;
  for (p = 0; p < kPlayers; ++p) inputs[p] = p < in->player_count ? in->bytes[p * in->input_size] : 0;
  arena_step(&g->state, inputs);
}

static size_t m_new_match(uint32_t players, uint64_t seed, uint8_t* out, size_t capacity) {
  (void)players;
  if (capacity < kUserDataSize) return kUserDataSize;
  out[0] = 'A';
  out[1] = (uint8_t)seed;
  out[2] = (uint8_t)(seed >> 8);
  out[3] = (uint8_t)(seed >> 16);
  out[4] = (uint8_t)(seed >> 24);
  return kUserDataSize;
}

static void* m_create(const uint8_t* user_data, size_t size, uint32_t players, retcon_game_callbacks* callbacks) {
  arena_module_game* g;
  if (players != kPlayers || size != kUserDataSize || user_data == NULL || user_data[0] != 'A') return NULL;
  g = (arena_module_game*)calloc(1, sizeof *g);
  if (g == NULL) return NULL;
  arena_state_init(&g->state);
  g->seed = (uint32_t)user_data[1] | (uint32_t)user_data[2] << 8 | (uint32_t)user_data[3] << 16 |
            (uint32_t)user_data[4] << 24;
  callbacks->user = g;
  callbacks->save_state = m_save;
  callbacks->load_state = m_load;
  callbacks->advance_frame = m_advance;
  callbacks->describe_state = arena_describe;
  return g;
}

static void m_destroy(void* game) { free(game); }

static void m_bot_input(void* game, int32_t player, int32_t frame, uint8_t* out, size_t input_size) {
  const arena_module_game* g = (const arena_module_game*)game;
  memset(out, 0, input_size);
  out[0] = scripted_input(player, frame + (int32_t)(g->seed % 1000u) * 12);
}

ARENA_EXPORT const retcon_game_module* retcon_game_module_v1(void);

const retcon_game_module* retcon_game_module_v1(void) {
  static const retcon_game_module module = {
      sizeof(retcon_game_module), RETCON_GAME_MODULE_ABI, "tiny_arena", 1, kPlayers, kPlayers,
      sizeof(arena_state), 60, m_new_match, m_create, m_destroy, m_bot_input};
  return &module;
}
