// Misuse of the C API is an error code, never a crash: null pointers, wrong struct sizes,
// unknown players, inputs of the wrong size, calls in the wrong state, saves that do not fit.
// Also: names and versions, the logger, and that steady-state calls allocate nothing.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capi/c_test_game.h"
#include "retcon.h"
#include "retcon/event.h"
#include "retcon/result.h"
#include "support/alloc_counter.h"

namespace {

struct LogLines {
  std::vector<std::pair<uint32_t, std::string>> lines;
  static void log(void* user, uint32_t level, const char* message) {
    static_cast<LogLines*>(user)->lines.emplace_back(level, message);
  }
};

// A valid 2-player setup over the C test game; tests break one thing at a time.
struct Fixture : ::testing::Test {
  ctg_game game;
  retcon_session_config config;
  retcon_sync_test_config sync;
  retcon_game_callbacks callbacks;
  retcon_session* session = nullptr;
  uint8_t input[4] = {1, 2, 3, 4};

  Fixture() {
    ctg_init(&game);
    retcon_session_config_init(&config);
    config.max_state_size = 256;
    retcon_sync_test_config_init(&sync);
    retcon_game_callbacks_init(&callbacks);
    ctg_bind(&game, &callbacks, 0);
  }
  ~Fixture() override { EXPECT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK); }

  retcon_result create_local() { return retcon_local_session_create(&config, &callbacks, &session); }
  retcon_result create_sync() { return retcon_sync_test_session_create(&config, &sync, &callbacks, &session); }
  // Both session kinds must reject the current config, leave *out NULL, and say why.
  void expect_rejected(const char* why_contains) {
    retcon_session* s = reinterpret_cast<retcon_session*>(&game);  // garbage that must be cleared
    EXPECT_EQ(retcon_local_session_create(&config, &callbacks, &s), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
    s = reinterpret_cast<retcon_session*>(&game);
    EXPECT_EQ(retcon_sync_test_session_create(&config, &sync, &callbacks, &s), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
    const char* reason = nullptr;
    EXPECT_EQ(retcon_session_config_validate(&config, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
    ASSERT_NE(reason, nullptr);
    EXPECT_NE(std::string(reason).find(why_contains), std::string::npos) << reason;
  }
  retcon_result add_all(int32_t players = 2) {
    for (int32_t p = 0; p < players; ++p) {
      const retcon_result r = retcon_session_add_local_input(session, p, input, sizeof input);
      if (r != RETCON_RESULT_OK) return r;
    }
    return RETCON_RESULT_OK;
  }
};

using CapiMisuse = Fixture;

TEST_F(CapiMisuse, ValidSetupCreatesBothKinds) {
  const char* reason = "untouched";
  EXPECT_EQ(retcon_session_config_validate(&config, &callbacks, &reason), RETCON_RESULT_OK);
  EXPECT_EQ(reason, nullptr);
  EXPECT_EQ(retcon_session_config_validate(&config, &callbacks, nullptr), RETCON_RESULT_OK);
  ASSERT_EQ(create_local(), RETCON_RESULT_OK);
  uint32_t kind = 0;
  EXPECT_EQ(retcon_session_get_kind(session, &kind), RETCON_RESULT_OK);
  EXPECT_EQ(kind, uint32_t(RETCON_SESSION_LOCAL));
  EXPECT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK);
  session = nullptr;
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_get_kind(session, &kind), RETCON_RESULT_OK);
  EXPECT_EQ(kind, uint32_t(RETCON_SESSION_SYNC_TEST));
}

TEST_F(CapiMisuse, InitFunctionsRejectNullAndFillDefaults) {
  EXPECT_EQ(retcon_session_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_sync_test_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_game_callbacks_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_stats_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_session_config c;
  std::memset(&c, 0xab, sizeof c);
  ASSERT_EQ(retcon_session_config_init(&c), RETCON_RESULT_OK);
  EXPECT_EQ(c.size, sizeof c);
  EXPECT_EQ(c.num_players, 2u);
  EXPECT_EQ(c.input_size, 4u);
  EXPECT_EQ(c.max_prediction, 8);
  EXPECT_EQ(c.save_mode, uint32_t(RETCON_SAVE_AUTOMATIC));
  EXPECT_EQ(c.max_state_size, 0u);
  EXPECT_EQ(c.predictor.predict, nullptr);
  EXPECT_EQ(c.logger.log, nullptr);
  EXPECT_EQ(c.logger.min_level, uint32_t(RETCON_LOG_INFO));
  retcon_game_callbacks cb;
  std::memset(&cb, 0xab, sizeof cb);
  ASSERT_EQ(retcon_game_callbacks_init(&cb), RETCON_RESULT_OK);
  EXPECT_EQ(cb.size, sizeof cb);
  EXPECT_EQ(cb.user, nullptr);
  EXPECT_EQ(cb.save_state, nullptr);
  EXPECT_EQ(cb.checksum, nullptr);
  retcon_sync_test_config st;
  ASSERT_EQ(retcon_sync_test_config_init(&st), RETCON_RESULT_OK);
  EXPECT_EQ(st.size, sizeof st);
  EXPECT_EQ(st.check_distance, 2);
  EXPECT_EQ(st.check_interval, 1);
}

TEST(CapiMemoryBudget, TakesTheBudgetAndReportsTheCommitment) {
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  cb.save_state = [](void*, int32_t, uint8_t*, size_t) -> size_t { return 1; };
  cb.load_state = [](void*, int32_t, const uint8_t*, size_t) {};
  cb.advance_frame = [](void*, int32_t, const retcon_frame_inputs*, uint32_t) {};
  retcon_session_config c;
  ASSERT_EQ(retcon_session_config_init(&c), RETCON_RESULT_OK);
  EXPECT_EQ(c.memory_budget, uint64_t{4} << 30);
  c.max_state_size = RETCON_MAX_STATE_SIZE;
  c.max_prediction = RETCON_MAX_PREDICTION_FRAMES;
  c.save_mode = RETCON_SAVE_EVERY_FRAME;
  retcon_session* s = nullptr;
  retcon_sync_test_config st;
  retcon_sync_test_config_init(&st);
  st.check_distance = RETCON_MAX_PREDICTION_FRAMES;
  EXPECT_EQ(retcon_sync_test_session_create(&c, &st, &cb, &s), RETCON_RESULT_OUT_OF_MEMORY);
  EXPECT_EQ(s, nullptr);
  c.max_state_size = 1000;
  c.max_prediction = 8;
  ASSERT_EQ(retcon_local_session_create(&c, &cb, &s), RETCON_RESULT_OK);
  retcon_session_stats stats;
  retcon_session_stats_init(&stats);
  ASSERT_EQ(retcon_session_get_stats(s, &stats), RETCON_RESULT_OK);
  EXPECT_EQ(stats.committed_bytes, 2 * uint64_t{1024} + 64);  // a local session keeps 2 slots
  EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
}

TEST_F(CapiMisuse, SyncTestCheckIntervalOutOfRange) {
  for (int32_t bad : {0, -1, 3601, INT32_MIN, INT32_MAX}) {
    sync.check_interval = bad;
    retcon_session* s = reinterpret_cast<retcon_session*>(&game);  // garbage that must be cleared
    EXPECT_EQ(retcon_sync_test_session_create(&config, &sync, &callbacks, &s), RETCON_RESULT_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(s, nullptr);
  }
  sync.check_interval = 3600;
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
}

TEST_F(CapiMisuse, NullArgumentsToCreate) {
  EXPECT_EQ(retcon_local_session_create(&config, &callbacks, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_sync_test_session_create(&config, &sync, &callbacks, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_local_session_create(nullptr, &callbacks, &session), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(retcon_local_session_create(&config, nullptr, &session), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(retcon_sync_test_session_create(nullptr, &sync, &callbacks, &session), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_sync_test_session_create(&config, nullptr, &callbacks, &session), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_sync_test_session_create(&config, &sync, nullptr, &session), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(session, nullptr);
  const char* reason = nullptr;
  EXPECT_EQ(retcon_session_config_validate(nullptr, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "config is NULL");
  EXPECT_EQ(retcon_session_config_validate(&config, nullptr, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "callbacks is NULL");
}

TEST_F(CapiMisuse, WrongStructSizes) {
  for (uint32_t size : {0u, uint32_t(sizeof config) - 8, uint32_t(sizeof config) + 8, 0xffffffffu}) {
    config.size = size;
    expect_rejected("retcon_session_config_init");
  }
  config.size = sizeof config;
  for (uint32_t size : {0u, uint32_t(sizeof callbacks) - 8, uint32_t(sizeof callbacks) + 8}) {
    callbacks.size = size;
    expect_rejected("retcon_game_callbacks_init");
  }
  callbacks.size = sizeof callbacks;
  for (uint32_t size : {0u, uint32_t(sizeof sync) + 4}) {
    sync.size = size;
    EXPECT_EQ(create_sync(), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(session, nullptr);
  }
  sync.size = sizeof sync;
  ASSERT_EQ(create_local(), RETCON_RESULT_OK);
  retcon_session_stats stats;
  retcon_session_stats_init(&stats);
  stats.size = 8;
  EXPECT_EQ(retcon_session_get_stats(session, &stats), RETCON_RESULT_INVALID_ARGUMENT);
  stats.size = sizeof stats + 8;
  EXPECT_EQ(retcon_session_get_stats(session, &stats), RETCON_RESULT_INVALID_ARGUMENT);
}

TEST_F(CapiMisuse, MissingRequiredCallbacks) {
  retcon_game_callbacks good = callbacks;
  callbacks.save_state = nullptr;
  expect_rejected("save_state");
  callbacks = good;
  callbacks.load_state = nullptr;
  expect_rejected("load_state");
  callbacks = good;
  callbacks.advance_frame = nullptr;
  expect_rejected("advance_frame");
  callbacks = good;
  // The optional ones may be NULL.
  callbacks.on_event = nullptr;
  callbacks.describe_state = nullptr;
  callbacks.checksum = nullptr;
  EXPECT_EQ(create_sync(), RETCON_RESULT_OK);
}

TEST_F(CapiMisuse, BadConfigValues) {
  const retcon_session_config good = config;
  config.num_players = 0;
  expect_rejected("num_players");
  config.num_players = RETCON_MAX_PLAYERS + 1;
  expect_rejected("num_players");
  config = good;
  config.input_size = 0;
  expect_rejected("input_size");
  config.input_size = RETCON_MAX_INPUT_SIZE + 1;
  expect_rejected("input_size");
  config = good;
  config.max_prediction = -1;
  expect_rejected("max_prediction");
  config.max_prediction = RETCON_MAX_PREDICTION_FRAMES + 1;
  expect_rejected("max_prediction");
  config = good;
  config.max_state_size = 0;
  expect_rejected("max_state_size");
  config.max_state_size = RETCON_MAX_STATE_SIZE + 1;
  expect_rejected("max_state_size");
  config.max_state_size = UINT64_MAX;
  expect_rejected("max_state_size");
  config = good;
  config.save_mode = 3;
  expect_rejected("save_mode");
  config = good;
  config.logger.log = [](void*, uint32_t, const char*) {};
  config.logger.min_level = 4;
  expect_rejected("min_level");
  config = good;
  // Check distance: 1..max_prediction.
  for (int32_t d : {0, -1, config.max_prediction + 1}) {
    sync.check_distance = d;
    EXPECT_EQ(create_sync(), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(session, nullptr);
  }
}

TEST_F(CapiMisuse, RejectedCreateLogsTheReason) {
  LogLines log;
  config.logger.user = &log;
  config.logger.log = LogLines::log;
  config.num_players = 0;
  EXPECT_EQ(create_local(), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0].first, uint32_t(RETCON_LOG_ERROR));
  EXPECT_EQ(log.lines[0].second, "retcon_local_session_create: num_players must be 1..8");
  config.num_players = 2;
  sync.check_distance = config.max_prediction + 1;
  EXPECT_EQ(create_sync(), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[1].second, "retcon_sync_test_session_create: check_distance must be 1..max_prediction");
  // A predictor is accepted (local and sync-test sessions have no remote player to predict).
  sync.check_distance = 2;
  config.predictor.predict = [](void*, int32_t, int32_t, const uint8_t*, uint8_t* out, size_t n) {
    std::memset(out, 0, n);
  };
  EXPECT_EQ(create_sync(), RETCON_RESULT_OK);
  // No error: the one new line is the info line saying what state memory create committed.
  ASSERT_EQ(log.lines.size(), 3u);
  EXPECT_EQ(log.lines[2].first, uint32_t(RETCON_LOG_INFO));
  EXPECT_NE(log.lines[2].second.find("committed"), std::string::npos) << log.lines[2].second;
}

TEST_F(CapiMisuse, DestroyNullIsOk) { EXPECT_EQ(retcon_session_destroy(nullptr), RETCON_RESULT_OK); }

TEST_F(CapiMisuse, NullSessionAndNullOutputs) {
  int32_t frame = 0;
  uint32_t kind = 0;
  retcon_session_stats stats;
  retcon_session_stats_init(&stats);
  EXPECT_EQ(retcon_session_add_local_input(nullptr, 0, input, sizeof input), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_advance_frame(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_poll(nullptr, 0), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_set_input_delay(nullptr, 0, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_current_frame(nullptr, &frame), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_confirmed_frame(nullptr, &frame), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_stats(nullptr, &stats), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_kind(nullptr, &kind), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(create_local(), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_current_frame(session, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_confirmed_frame(session, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_stats(session, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_kind(session, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_add_local_input(session, 0, nullptr, sizeof input), RETCON_RESULT_INVALID_ARGUMENT);
}

TEST_F(CapiMisuse, PointerThatIsNotASessionIsRejected) {
  // Zeroed memory of a session's size stands for a stray pointer.
  alignas(16) unsigned char fake[512] = {};
  auto* s = reinterpret_cast<retcon_session*>(fake);
  int32_t frame = 0;
  uint32_t kind = 0;
  retcon_session_stats stats;
  retcon_session_stats_init(&stats);
  EXPECT_EQ(retcon_session_add_local_input(s, 0, input, sizeof input), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_advance_frame(s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_poll(s, 0), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_set_input_delay(s, 0, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_current_frame(s, &frame), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_confirmed_frame(s, &frame), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_stats(s, &stats), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_kind(s, &kind), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_INVALID_ARGUMENT);
}

TEST_F(CapiMisuse, UnknownPlayersAndWrongInputSizes) {
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  for (int32_t p : {-1, 2, RETCON_MAX_PLAYERS, 1000}) {
    EXPECT_EQ(retcon_session_add_local_input(session, p, input, sizeof input), RETCON_RESULT_INVALID_PLAYER);
    EXPECT_EQ(retcon_session_set_input_delay(session, p, 1), RETCON_RESULT_INVALID_PLAYER);
  }
  for (size_t size : {size_t{0}, size_t{3}, size_t{5}, size_t{1} << 40}) {
    EXPECT_EQ(retcon_session_add_local_input(session, 0, input, size), RETCON_RESULT_INVALID_INPUT_SIZE);
  }
  EXPECT_EQ(retcon_session_set_input_delay(session, 0, -1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_set_input_delay(session, 0, RETCON_MAX_INPUT_DELAY + 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_set_input_delay(session, 0, RETCON_MAX_INPUT_DELAY), RETCON_RESULT_OK);
}

TEST_F(CapiMisuse, InputOrderErrors) {
  ASSERT_EQ(create_local(), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_MISSING_LOCAL_INPUT);
  EXPECT_EQ(retcon_session_add_local_input(session, 0, input, sizeof input), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_add_local_input(session, 0, input, sizeof input), RETCON_RESULT_INPUT_ALREADY_ADDED);
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_MISSING_LOCAL_INPUT);
  EXPECT_EQ(retcon_session_add_local_input(session, 1, input, sizeof input), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_poll(session, 12345), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  int32_t frame = -5;
  EXPECT_EQ(retcon_session_current_frame(session, &frame), RETCON_RESULT_OK);
  EXPECT_EQ(frame, 1);
  EXPECT_EQ(retcon_session_confirmed_frame(session, &frame), RETCON_RESULT_OK);
  EXPECT_EQ(frame, 0);
}

TEST_F(CapiMisuse, SaveTooLargeIsAnErrorEventAndLogLine) {
  LogLines log;
  config.logger.user = &log;
  config.logger.log = LogLines::log;
  config.logger.min_level = RETCON_LOG_WARNING;
  config.max_state_size = 64;
  game.extra_save_bytes = 64;  // every save needs 109..172 bytes
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  ASSERT_EQ(add_all(), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_SAVE_FAILED);
  int32_t frame = -5;
  EXPECT_EQ(retcon_session_current_frame(session, &frame), RETCON_RESULT_OK);
  EXPECT_EQ(frame, 0);  // not advanced
  EXPECT_EQ(game.advances, 0u);
  ASSERT_GE(game.event_count, 1u);
  EXPECT_EQ(game.events[0].type, uint32_t(RETCON_EVENT_SAVE_FAILED));
  EXPECT_EQ(game.events[0].frame, 0);
  EXPECT_EQ(size_t(game.events[0].count), ctg_saved_size(&game.state) + 64);
  EXPECT_STRNE(game.events[0].message, "");
  ASSERT_FALSE(log.lines.empty());
  EXPECT_EQ(log.lines[0].first, uint32_t(RETCON_LOG_ERROR));
  EXPECT_NE(log.lines[0].second.find("max_state_size"), std::string::npos) << log.lines[0].second;
  // Once the game's state fits again, the same session goes on.
  game.extra_save_bytes = 0;
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_current_frame(session, &frame), RETCON_RESULT_OK);
  EXPECT_EQ(frame, 1);
}

// From inside a callback, calls that change the session are refused; queries still work.
struct Reentry {
  retcon_session* session = nullptr;
  retcon_result add = RETCON_RESULT_OK, advance = RETCON_RESULT_OK, delay = RETCON_RESULT_OK,
                poll = RETCON_RESULT_OK, destroy = RETCON_RESULT_OK, frame = RETCON_RESULT_INTERNAL_ERROR;
  int32_t current = -5;
  int calls = 0;
};

TEST_F(CapiMisuse, CallsFromInsideCallbacksAreWrongState) {
  Reentry re;
  game.test_data = &re;
  game.on_advance = [](ctg_game* g) {
    auto* r = static_cast<Reentry*>(g->test_data);
    const uint8_t in[4] = {};
    ++r->calls;
    r->add = retcon_session_add_local_input(r->session, 0, in, sizeof in);
    r->advance = retcon_session_advance_frame(r->session);
    r->delay = retcon_session_set_input_delay(r->session, 0, 1);
    r->poll = retcon_session_poll(r->session, 1);
    r->destroy = retcon_session_destroy(r->session);
    r->frame = retcon_session_current_frame(r->session, &r->current);
  };
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  re.session = session;
  for (int f = 0; f < 5; ++f) {
    ASSERT_EQ(add_all(), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  }
  EXPECT_GT(re.calls, 5);  // the sync test re-simulates too
  EXPECT_EQ(re.add, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(re.advance, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(re.delay, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(re.poll, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(re.destroy, RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(re.frame, RETCON_RESULT_OK);
  EXPECT_EQ(re.current, 4);
  // After the callbacks returned, the session takes calls again.
  game.on_advance = nullptr;
  EXPECT_EQ(add_all(), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
}

TEST_F(CapiMisuse, SyncTestMismatchReachesCEventWithTexts) {
  game.nondeterministic_from = 3;
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  for (int f = 0; f < 8; ++f) {
    ASSERT_EQ(add_all(), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  }
  ASSERT_GE(game.event_count, 1u);
  const ctg_event& e = game.events[0];
  EXPECT_EQ(e.type, uint32_t(RETCON_EVENT_SYNC_TEST_MISMATCH));
  EXPECT_EQ(e.frame, 4);  // the first state a non-deterministic step produced
  EXPECT_NE(e.checksum_local, e.checksum_remote);
  EXPECT_EQ(std::string(e.text_local).rfind("frame 4 chain ", 0), 0u) << e.text_local;
  EXPECT_EQ(std::string(e.text_remote).rfind("frame 4 chain ", 0), 0u) << e.text_remote;
  EXPECT_STRNE(e.text_local, e.text_remote);
  EXPECT_EQ(game.frame_errors, 0);
}

TEST(CapiNames, ResultNamesEqualTheCppNames) {
  for (int32_t r = 0; r <= RETCON_RESULT_UNSUPPORTED; ++r)
    EXPECT_STREQ(retcon_result_name(retcon_result(r)), retcon::result_name(retcon::Result(r)));
  EXPECT_STREQ(retcon_result_name(RETCON_RESULT_OK), "ok");
  EXPECT_STREQ(retcon_result_name(RETCON_RESULT_SAVE_FAILED), "save_failed");
  EXPECT_STREQ(retcon_result_name(retcon_result(22)), "unknown_result");
  EXPECT_STREQ(retcon_result_name(retcon_result(31)), "unknown_result");
  for (uint32_t t = 1; t <= RETCON_EVENT_SPECTATOR_LEFT; ++t)
    EXPECT_STREQ(retcon_event_type_name(t), retcon::event_type_name(retcon::EventType(t)));
  EXPECT_STREQ(retcon_event_type_name(RETCON_EVENT_SYNC_TEST_MISMATCH), "sync_test_mismatch");
  EXPECT_STREQ(retcon_event_type_name(0), "unknown_event");
  EXPECT_STREQ(retcon_event_type_name(99), "unknown_event");
}

TEST(CapiVersion, RuntimeEqualsCompileTime) {
  EXPECT_EQ(retcon_version(), uint32_t(RETCON_VERSION_NUMBER));
  EXPECT_STREQ(retcon_version_string(), RETCON_VERSION_STRING);
  const std::string expected = std::to_string(RETCON_VERSION_MAJOR) + "." + std::to_string(RETCON_VERSION_MINOR) +
                               "." + std::to_string(RETCON_VERSION_PATCH);
  EXPECT_EQ(retcon_version_string(), expected);
}

TEST_F(CapiMisuse, SteadyStateCallsAllocateNothing) {
  ASSERT_EQ(create_sync(), RETCON_RESULT_OK);
  retcon_session_stats stats;
  retcon_session_stats_init(&stats);
  for (int f = 0; f < 20; ++f) {  // warm up
    ASSERT_EQ(add_all(), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
  }
  const uint64_t before = retcon::test::allocation_count();
  int32_t frame = 0;
  for (int f = 0; f < 200; ++f) {
    input[0] = uint8_t(f);
    ASSERT_EQ(add_all(), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_poll(session, uint64_t(f) * 16000), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(session), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_current_frame(session, &frame), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_get_stats(session, &stats), RETCON_RESULT_OK);
  }
  EXPECT_EQ(retcon::test::allocation_count(), before);
  EXPECT_EQ(stats.current_frame, 220);
  EXPECT_EQ(stats.frames_advanced, 220u);
  EXPECT_GT(stats.rollbacks, 0u);
}

}  // namespace
