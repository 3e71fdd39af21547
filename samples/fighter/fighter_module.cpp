// The fighter as a game module (retcon.h, "Game modules"): a shared library exporting
// retcon_game_module_v1, so retcon_replay records, plays, sync-tests and bisects its replays the
// same way it does any other game's. The C callbacks forward to FighterGame; the C and C++
// input, text-sink and event structs have the same layout (pinned by capi/abi_checks.cpp).
#include <new>
#include <vector>

#include "fighter_bot.h"
#include "fighter_game.h"
#include "retcon.h"

#if defined(_WIN32) || defined(__CYGWIN__)
#  define FIGHTER_EXPORT __declspec(dllexport)
#else
#  define FIGHTER_EXPORT __attribute__((visibility("default")))
#endif

namespace {

// User data of a fighter replay: the player count and the game seed (little endian).
constexpr size_t kUserDataSize = 5;

struct ModuleGame {
  fighter::FighterGame game;
  std::vector<fighter::FighterBot> bots;
};

fighter::FighterGame& game_of(void* user) { return static_cast<ModuleGame*>(user)->game; }

size_t save(void* user, int32_t frame, uint8_t* buffer, size_t capacity) {
  return game_of(user).save_state(frame, buffer, capacity);
}
void load(void* user, int32_t frame, const uint8_t* buffer, size_t length) { game_of(user).load_state(frame, buffer, length); }
void advance(void* user, int32_t frame, const retcon_frame_inputs* inputs, uint32_t flags) {
  game_of(user).advance_frame(frame, *reinterpret_cast<const retcon::FrameInputs*>(inputs), flags);
}
void describe(void* user, int32_t frame, const uint8_t* buffer, size_t length, const retcon_text_sink* sink) {
  const retcon::TextSink s{sink->user, sink->write};
  game_of(user).describe_state(frame, buffer, length, s);
}
uint64_t checksum(void* user, int32_t frame, const uint8_t* buffer, size_t length) {
  return game_of(user).checksum(frame, buffer, length);
}

size_t new_match(uint32_t players, uint64_t seed, uint8_t* out, size_t capacity) {
  if (capacity < kUserDataSize) return kUserDataSize;
  out[0] = uint8_t(players);
  for (int i = 0; i < 4; ++i) out[1 + i] = uint8_t(seed >> (8 * i));
  return kUserDataSize;
}

void* create(const uint8_t* user_data, size_t size, uint32_t players, retcon_game_callbacks* callbacks) {
  // A 6th byte 1: rounds end by timed decisions (a network match with decided_round_end).
  if (user_data == nullptr || (size != kUserDataSize && size != kUserDataSize + 1) || user_data[0] != players ||
      players < fighter::kMinPlayers ||
      players > fighter::kMaxPlayers)
    return nullptr;
  const uint32_t seed = uint32_t(user_data[1]) | uint32_t(user_data[2]) << 8 | uint32_t(user_data[3]) << 16 |
                        uint32_t(user_data[4]) << 24;
  ModuleGame* g = new (std::nothrow) ModuleGame;
  if (g == nullptr) return nullptr;
  try {
    g->game.reset(int(players), seed);
    g->game.state().decided_round_end = size > kUserDataSize && user_data[kUserDataSize] == 1 ? 1 : 0;
    for (uint32_t p = 0; p < players; ++p) g->bots.emplace_back(seed * 7919u + p, int(p));
  } catch (...) {
    delete g;
    return nullptr;
  }
  callbacks->user = g;
  callbacks->save_state = save;
  callbacks->load_state = load;
  callbacks->advance_frame = advance;
  callbacks->describe_state = describe;
  callbacks->checksum = checksum;
  return g;
}

void destroy(void* game) { delete static_cast<ModuleGame*>(game); }

void bot_input(void* game, int32_t player, int32_t frame, uint8_t* out, size_t input_size) {
  (void)frame;
  ModuleGame& g = *static_cast<ModuleGame*>(game);
  if (player < 0 || size_t(player) >= g.bots.size() || input_size != fighter::kInputSize) return;
  g.bots[size_t(player)].next_input(g.game.state(), out);
}

}  // namespace

extern "C" FIGHTER_EXPORT const retcon_game_module* retcon_game_module_v1(void) {
  static const retcon_game_module module = {sizeof(retcon_game_module),
                                            RETCON_GAME_MODULE_ABI,
                                            "fighter",
                                            fighter::kInputSize,
                                            uint32_t(fighter::kMinPlayers),
                                            uint32_t(fighter::kMaxPlayers),
                                            fighter::FighterGame::state_size(),
                                            60,
                                            new_match,
                                            create,
                                            destroy,
                                            bot_input};
  return &module;
}
