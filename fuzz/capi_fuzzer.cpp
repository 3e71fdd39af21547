// Fuzz target 5: the C API (capi/retcon.h) as a misbehaving program would call it.
//
// The input is a program: each byte picks a call, later bytes its arguments. Up to four sessions
// live at once; configs are fuzzed field by field (struct sizes, player counts, input sizes,
// prediction windows, save modes, state sizes, missing callbacks, NULL pointers), inputs have
// fuzzed sizes and players, and the game's callbacks misbehave on command: saves that do not
// fit, non-determinism, and re-entrant calls into the session from inside a callback (which
// must be refused with WRONG_STATE). Every call must return a documented result code; none
// may crash, leak (ASan checks at exit of each run) or touch memory it does not own.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "fuzz_input.h"
#include "retcon.h"

using retcon::fuzz::FuzzInput;

namespace {

constexpr int kSlots = 4;
constexpr int kMaxOperations = 3000;

bool documented(retcon_result r) {
  return int32_t(r) >= RETCON_RESULT_OK && int32_t(r) <= RETCON_RESULT_UNSUPPORTED &&
         r != RETCON_RESULT_INTERNAL_ERROR;
}

#define CALL(expr) \
  do { \
    const retcon_result r_ = (expr); \
    FUZZ_CHECK(documented(r_)); \
    FUZZ_CHECK(retcon_result_name(r_) != nullptr); \
  } while (0)

struct Game;

struct Slot {
  retcon_session* session = nullptr;
  std::unique_ptr<Game> game;
};

struct Game {
  uint64_t chain = 1;
  int32_t frame = 0;
  // Misbehaviour, chosen by the fuzzer.
  bool save_too_big = false;
  bool nondeterministic = false;
  uint8_t reenter = 0;  // 0: none; else which call advance_frame makes into its own session
  retcon_session* self = nullptr;
  uint64_t hidden = 0;
  uint32_t events = 0;
  uint32_t players = 0, input_size = 0;  // as configured (maybe invalid)

  // One input for every player, of the configured size: lets frames actually advance.
  void add_all(retcon_session* s, const uint8_t* input) const {
    for (uint32_t p = 0; p < players && p < RETCON_MAX_PLAYERS; ++p)
      CALL(retcon_session_add_local_input(s, int32_t(p), input, input_size));
  }

  static size_t save(void* user, int32_t, uint8_t* buffer, size_t capacity) {
    Game* g = static_cast<Game*>(user);
    const size_t need = sizeof g->chain + sizeof g->frame;
    if (g->save_too_big) return capacity + 1;
    if (need > capacity) return need;
    std::memcpy(buffer, &g->chain, sizeof g->chain);
    std::memcpy(buffer + sizeof g->chain, &g->frame, sizeof g->frame);
    return need;
  }
  static void load(void* user, int32_t, const uint8_t* buffer, size_t length) {
    Game* g = static_cast<Game*>(user);
    FUZZ_CHECK(buffer != nullptr && length == sizeof g->chain + sizeof g->frame);
    std::memcpy(&g->chain, buffer, sizeof g->chain);
    std::memcpy(&g->frame, buffer + sizeof g->chain, sizeof g->frame);
  }
  static void advance(void* user, int32_t frame, const retcon_frame_inputs* in, uint32_t flags) {
    Game* g = static_cast<Game*>(user);
    FUZZ_CHECK(in != nullptr && in->bytes != nullptr && in->status != nullptr);
    FUZZ_CHECK(in->player_count >= 1 && in->player_count <= RETCON_MAX_PLAYERS);
    FUZZ_CHECK(in->input_size >= 1 && in->input_size <= RETCON_MAX_INPUT_SIZE);
    for (size_t i = 0; i < size_t(in->player_count) * in->input_size; ++i) g->chain = g->chain * 31 + in->bytes[i];
    for (uint32_t p = 0; p < in->player_count; ++p) FUZZ_CHECK(in->status[p] <= RETCON_INPUT_DISCONNECTED);
    if (g->nondeterministic && (flags & RETCON_ADVANCE_RESIMULATING)) g->chain ^= ++g->hidden;
    g->frame = frame + 1;
    if (g->reenter != 0 && g->self != nullptr) {
      uint8_t input[RETCON_MAX_INPUT_SIZE] = {};
      retcon_result r = RETCON_RESULT_OK;
      switch (g->reenter % 5) {
        case 0: r = retcon_session_advance_frame(g->self); break;
        case 1: r = retcon_session_destroy(g->self); break;
        case 2: r = retcon_session_poll(g->self, 0); break;
        case 3: r = retcon_session_add_local_input(g->self, 0, input, in->input_size); break;
        default: r = retcon_session_set_input_delay(g->self, 0, 1); break;
      }
      FUZZ_CHECK(r == RETCON_RESULT_WRONG_STATE);
      int32_t current = 0;  // reading is allowed
      FUZZ_CHECK(retcon_session_current_frame(g->self, &current) == RETCON_RESULT_OK);
    }
  }
  static void on_event(void* user, const retcon_event* e) {
    Game* g = static_cast<Game*>(user);
    FUZZ_CHECK(e != nullptr && e->message != nullptr);
    FUZZ_CHECK(std::strlen(e->message) < 4096);
    if (e->text_local) FUZZ_CHECK(e->text_local_len < (1u << 20));
    FUZZ_CHECK(retcon_event_type_name(e->type) != nullptr);
    ++g->events;
  }
  static void describe(void*, int32_t, const uint8_t* buffer, size_t length, const retcon_text_sink* sink) {
    FUZZ_CHECK(sink != nullptr && sink->write != nullptr);
    FUZZ_CHECK(buffer != nullptr || length == 0);
    sink->write(sink->user, "state", 5);
    sink->write(sink->user, nullptr, 0);
  }
  static uint64_t checksum(void*, int32_t, const uint8_t* buffer, size_t length) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < length; ++i) h = (h ^ buffer[i]) * 1099511628211ull;
    return h;
  }
};

uint32_t fuzz_u32(FuzzInput& in, uint32_t lo, uint32_t hi) {
  // Mostly inside the documented range (and one past each end), sometimes anything.
  if (in.u8() < 230) return in.range(lo == 0 ? 0 : lo - 1, hi + 1);
  return in.u32();
}

void create(Slot& slot, FuzzInput& in) {
  if (slot.session != nullptr) return;
  slot.game = std::make_unique<Game>();
  Game& g = *slot.game;
  g.save_too_big = in.u8() < 8;
  g.nondeterministic = in.u8() < 32;

  retcon_session_config config;
  CALL(retcon_session_config_init(&config));
  config.num_players = fuzz_u32(in, 1, RETCON_MAX_PLAYERS);
  static const uint32_t kInputSizes[] = {1, 2, 4, 8, 16, 255, 256, 257, 0};
  config.input_size = in.u8() < 200 ? in.pick(kInputSizes) : in.u32();
  config.max_prediction = in.u8() < 230 ? int32_t(in.range(0, 66)) - 1 : int32_t(in.u32());
  config.save_mode = fuzz_u32(in, 0, 2);
  g.players = config.num_players;
  g.input_size = config.input_size;
  // Large but valid state sizes would allocate (max_prediction + 2) x 256 MiB: the fuzzer's
  // memory limit, not a bug. Past the limit they must be refused before allocating.
  static const uint64_t kStateSizes[] = {0, 1, 12, 16, 64, 4096, 65536,
                                         RETCON_MAX_STATE_SIZE + 1, UINT64_MAX, uint64_t(1) << 32};
  config.max_state_size = in.pick(kStateSizes);
  if (in.u8() < 6) config.size = in.u32();
  if (in.u8() < 16) config.logger.log = [](void*, uint32_t level, const char* message) {
    FUZZ_CHECK(level <= RETCON_LOG_ERROR && message != nullptr && std::strlen(message) < 4096);
  };
  config.logger.min_level = in.range(0, 4);
  if (in.u8() < 16) config.predictor.predict = [](void*, int32_t, int32_t, const uint8_t*, uint8_t* out, size_t n) {
    FUZZ_CHECK(out != nullptr && n >= 1 && n <= RETCON_MAX_INPUT_SIZE);
    std::memset(out, 0x5a, n);
  };

  retcon_game_callbacks callbacks;
  CALL(retcon_game_callbacks_init(&callbacks));
  callbacks.user = &g;
  const uint8_t missing = in.u8();
  if (missing != 1) callbacks.save_state = &Game::save;
  if (missing != 2) callbacks.load_state = &Game::load;
  if (missing != 3) callbacks.advance_frame = &Game::advance;
  if (in.flag()) callbacks.on_event = &Game::on_event;
  if (in.flag()) callbacks.describe_state = &Game::describe;
  if (in.flag()) callbacks.checksum = &Game::checksum;
  if (in.u8() < 6) callbacks.size = in.u32();

  const char* reason = nullptr;
  const bool validate_null = in.u8() < 4;
  retcon_result valid = retcon_session_config_validate(validate_null ? nullptr : &config, &callbacks, &reason);
  if (validate_null) {
    FUZZ_CHECK(valid == RETCON_RESULT_INVALID_ARGUMENT && reason != nullptr);
    valid = retcon_session_config_validate(&config, &callbacks, nullptr);
  }
  CALL(valid);
  if (!validate_null) FUZZ_CHECK((valid == RETCON_RESULT_OK) == (reason == nullptr));

  retcon_result r;
  const uint8_t kind = in.u8() % 8;
  if (kind == 0) {
    r = retcon_local_session_create(&config, &callbacks, nullptr);  // no out pointer
    FUZZ_CHECK(r == RETCON_RESULT_INVALID_ARGUMENT);
    return;
  }
  if (kind < 4) {
    r = retcon_local_session_create(in.u8() < 4 ? nullptr : &config, &callbacks, &slot.session);
  } else {
    retcon_sync_test_config sync;
    CALL(retcon_sync_test_config_init(&sync));
    sync.check_distance = in.u8() < 230 ? int32_t(in.range(0, 12)) - 1 : int32_t(in.u32());
    if (in.u8() < 6) sync.size = in.u32();
    r = retcon_sync_test_session_create(&config, in.u8() < 4 ? nullptr : &sync, &callbacks, &slot.session);
  }
  CALL(r);
  FUZZ_CHECK((r == RETCON_RESULT_OK) == (slot.session != nullptr));
  // A config create accepts must validate, and one validate refuses must not create.
  if (valid != RETCON_RESULT_OK) FUZZ_CHECK(r != RETCON_RESULT_OK);
  if (slot.session != nullptr) {
    uint32_t k = 0;
    CALL(retcon_session_get_kind(slot.session, &k));
    FUZZ_CHECK(k == (kind < 4 ? RETCON_SESSION_LOCAL : RETCON_SESSION_SYNC_TEST));
    g.self = slot.session;
  }
}

void destroy(Slot& slot) {
  FUZZ_CHECK(retcon_session_destroy(slot.session) == RETCON_RESULT_OK);
  slot.session = nullptr;
  slot.game.reset();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  Slot slots[kSlots];
  uint8_t input[RETCON_MAX_INPUT_SIZE + 64] = {};
  for (int op = 0; op < kMaxOperations && !in.empty(); ++op) {
    const uint8_t code = in.u8();
    Slot& slot = slots[(code >> 4) % kSlots];
    retcon_session* s = in.u8() < 4 ? nullptr : slot.session;  // sometimes NULL
    switch (code % 12) {
      case 0: create(slot, in); break;
      case 1:
        if (slot.session != nullptr && in.u8() < 64) destroy(slot);
        break;
      case 2:
      case 3: {
        const int32_t player = in.u8() < 240 ? int32_t(in.range(0, 9)) - 1 : int32_t(in.u32());
        static const size_t kSizes[] = {0, 1, 2, 4, 8, 16, 255, 256, 257, 300};
        const size_t n = in.u8() < 128 ? 0 : in.pick(kSizes);  // 0: the session's own size
        in.bytes(input, in.range(0, 16));
        if (n == 0) {
          if (slot.game) slot.game->add_all(s, input);
        } else {
          CALL(retcon_session_add_local_input(s, player, in.u8() < 8 ? nullptr : input, n));
        }
        break;
      }
      case 4:
      case 5: {
        if (slot.game && in.u8() < 8) slot.game->reenter = uint8_t(1 + in.u8() % 5);
        CALL(retcon_session_advance_frame(s));
        if (slot.game) slot.game->reenter = 0;
        break;
      }
      case 6: CALL(retcon_session_poll(s, in.u64())); break;
      case 7: {
        const int32_t player = int32_t(in.range(0, 9)) - 1;
        const int32_t frames = in.u8() < 240 ? int32_t(in.range(0, 34)) - 1 : int32_t(in.u32());
        CALL(retcon_session_set_input_delay(s, player, frames));
        break;
      }
      case 8: {
        int32_t current = 0, confirmed = 0;
        CALL(retcon_session_current_frame(s, in.u8() < 4 ? nullptr : &current));
        CALL(retcon_session_confirmed_frame(s, in.u8() < 4 ? nullptr : &confirmed));
        uint32_t kind = 0;
        CALL(retcon_session_get_kind(s, in.u8() < 4 ? nullptr : &kind));
        break;
      }
      case 9: {
        retcon_session_stats stats;
        CALL(retcon_session_stats_init(in.u8() < 4 ? nullptr : &stats));
        if (in.u8() < 8) stats.size = in.u32();
        const retcon_result r = retcon_session_get_stats(s, &stats);
        CALL(r);
        if (r == RETCON_RESULT_OK) {
          FUZZ_CHECK(stats.max_rollback_depth <= RETCON_MAX_PREDICTION_FRAMES);
          FUZZ_CHECK(stats.confirmed_frame >= RETCON_NULL_FRAME && stats.current_frame >= 0);
        }
        break;
      }
      case 10: {
        // Values 21..31 are unknown results but still inside the C++ enum's range. Wider ones
        // are valid C but undefined behaviour in the C++ callee (reported, docs/FUZZING.md).
        FUZZ_CHECK(retcon_result_name(retcon_result(in.u8() % 32)) != nullptr);
        FUZZ_CHECK(retcon_event_type_name(in.u32()) != nullptr);
        FUZZ_CHECK(retcon_version() == RETCON_VERSION_NUMBER);
        FUZZ_CHECK(std::strcmp(retcon_version_string(), RETCON_VERSION_STRING) == 0);
        break;
      }
      default:  // a few frames in a row, with inputs for everyone
        if (!slot.game) break;
        for (int k = 0; k < 8; ++k) {
          input[0] = uint8_t(input[0] + k);
          slot.game->add_all(slot.session, input);
          CALL(retcon_session_advance_frame(slot.session));
        }
        break;
    }
  }
  if (std::getenv("RETCON_FUZZ_VERBOSE") != nullptr) {  // what a run reached, for corpus tuning
    for (const Slot& slot : slots) {
      if (slot.session == nullptr) continue;
      retcon_session_stats st;
      retcon_session_stats_init(&st);
      retcon_session_get_stats(slot.session, &st);
      std::fprintf(stderr, "session: frame %d advanced %llu resimulated %llu events %u\n", st.current_frame,
                   static_cast<unsigned long long>(st.frames_advanced),
                   static_cast<unsigned long long>(st.frames_resimulated), slot.game->events);
    }
  }
  for (Slot& slot : slots) destroy(slot);
  return 0;
}
