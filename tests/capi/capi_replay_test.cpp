// Replays through the C API: misuse (NULL, sizes, wrong state, corrupt images) is an error code;
// a C game's recording equals the C++ recorder's byte for byte on the same inputs; play, bisect
// and the sync test agree with the C++ functions and name the exact frame of a changed input,
// with checksums every frame and states only every K frames.
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#ifndef RETCON_NO_RAPIDCHECK
#include <rapidcheck/gtest.h>
#endif

#include "capi/c_test_game.h"
#include "retcon.h"
#include "retcon/replay.h"
#include "retcon/session.h"
#include "support/test_game.h"

namespace {

using Bytes = std::vector<uint8_t>;

struct ReplayDeleter {
  void operator()(retcon_replay* r) const { EXPECT_EQ(retcon_replay_destroy(r), RETCON_RESULT_OK); }
};
using ReplayPtr = std::unique_ptr<retcon_replay, ReplayDeleter>;

struct SessionDeleter {
  void operator()(retcon_session* s) const { retcon_session_destroy(s); }
};
using SessionPtr = std::unique_ptr<retcon_session, SessionDeleter>;

// Inputs of every player for every frame.
std::vector<Bytes> random_inputs(std::mt19937_64& rng, int32_t frames, uint32_t players, uint32_t size) {
  std::vector<Bytes> out(size_t(frames), Bytes(size_t(players) * size));
  for (Bytes& f : out)
    for (uint8_t& b : f) b = uint8_t(rng());
  return out;
}

// Records a local C session of the C test game over `inputs` (frames 0..n-1 confirmed).
ReplayPtr record_c(const std::vector<Bytes>& inputs, uint32_t players, uint32_t size, bool custom_checksum,
                   const retcon_recording_config& rc) {
  ctg_game game;
  ctg_init(&game);
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.num_players = players;
  c.input_size = size;
  c.max_state_size = 256;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&game, &cb, custom_checksum ? 1 : 0);
  retcon_session* raw = nullptr;
  EXPECT_EQ(retcon_local_session_create(&c, &cb, &raw), RETCON_RESULT_OK);
  SessionPtr s(raw);
  EXPECT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_OK);
  for (const Bytes& f : inputs) {
    for (uint32_t p = 0; p < players; ++p)
      EXPECT_EQ(retcon_session_add_local_input(s.get(), int32_t(p), f.data() + p * size, size), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_session_advance_frame(s.get()), RETCON_RESULT_OK);
  }
  retcon_replay* r = nullptr;
  EXPECT_EQ(retcon_session_copy_recording(s.get(), &r), RETCON_RESULT_OK);
  return ReplayPtr(r);
}

uint64_t cpp_ctg_checksum(void*, retcon::Frame f, const uint8_t* b, size_t n) { return ctg_checksum(nullptr, f, b, n); }

[[maybe_unused]]  // used by the RapidCheck property only (Linux-only)
retcon::Replay record_cpp(const std::vector<Bytes>& inputs, uint32_t players, uint32_t size, bool custom_checksum,
                          uint32_t checksum_interval, uint32_t state_interval) {
  retcon::test::TestGame game;
  retcon::GameCallbacks cb = retcon::bind_game(game);
  cb.checksum = custom_checksum ? cpp_ctg_checksum : nullptr;
  retcon::ReplayRecorderConfig rc;
  rc.num_players = players;
  rc.input_size = size;
  rc.max_state_size = 256;
  rc.checksum_interval = checksum_interval;
  rc.store_states = state_interval != 0 && checksum_interval != 0;
  rc.state_interval = state_interval ? state_interval : 1;
  retcon::ReplayRecorder rec;
  EXPECT_EQ(rec.init(rc, cb), retcon::Result::ok);
  retcon::SessionConfig c;
  c.num_players = players;
  c.input_size = size;
  c.max_state_size = 256;
  c.callbacks = rec.callbacks();
  std::unique_ptr<retcon::Session> s;
  EXPECT_EQ(retcon::create_local_session(c, &s), retcon::Result::ok);
  for (const Bytes& f : inputs) {
    for (uint32_t p = 0; p < players; ++p) EXPECT_EQ(s->add_local_input(retcon::PlayerIndex(p), f.data() + p * size, size), retcon::Result::ok);
    EXPECT_EQ(s->advance_frame(), retcon::Result::ok);
    rec.commit(s->confirmed_frame());
  }
  EXPECT_EQ(rec.error(), retcon::Result::ok);
  return rec.replay();
}

Bytes image_of(const retcon_replay* r) {
  size_t n = 0;
  EXPECT_EQ(retcon_replay_serialize(r, nullptr, 0, &n), RETCON_RESULT_OK);
  Bytes out(n);
  EXPECT_EQ(retcon_replay_serialize(r, out.data(), out.size(), &n), RETCON_RESULT_OK);
  return out;
}

struct CGame {
  ctg_game game;
  retcon_game_callbacks cb;
  explicit CGame(bool custom_checksum) {
    ctg_init(&game);
    retcon_game_callbacks_init(&cb);
    ctg_bind(&game, &cb, custom_checksum ? 1 : 0);
  }
};

retcon_replay_run_config run_config() {
  retcon_replay_run_config c;
  retcon_replay_run_config_init(&c);
  c.max_state_size = 256;
  return c;
}

retcon_recording_config recording(uint32_t checksum_interval, uint32_t state_interval) {
  retcon_recording_config rc;
  retcon_recording_config_init(&rc);
  rc.checksum_interval = checksum_interval;
  rc.state_interval = state_interval;
  return rc;
}

// ------------------------------------------------------------------------------ misuse

TEST(CapiReplayMisuse, InitFunctions) {
  EXPECT_EQ(retcon_recording_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_info_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_run_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_report_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_recording_config rc;
  ASSERT_EQ(retcon_recording_config_init(&rc), RETCON_RESULT_OK);
  EXPECT_EQ(rc.checksum_interval, 1u);  // a checksum every frame by default
  EXPECT_EQ(rc.state_interval, 60u);
  EXPECT_EQ(rc.frame_rate, 60u);
  retcon_replay_run_config c;
  ASSERT_EQ(retcon_replay_run_config_init(&c), RETCON_RESULT_OK);
  EXPECT_EQ(c.max_state_size, 0u);  // no default: the game's
  EXPECT_EQ(c.check_distance, 2);
  retcon_replay_report r;
  ASSERT_EQ(retcon_replay_report_init(&r), RETCON_RESULT_OK);
  EXPECT_EQ(r.first_bad, RETCON_NULL_FRAME);
  EXPECT_EQ(r.mismatch_frame, RETCON_NULL_FRAME);
}

TEST(CapiReplayMisuse, RecordingInTheWrongState) {
  CGame g(false);
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.max_state_size = 256;
  retcon_session* raw = nullptr;
  ASSERT_EQ(retcon_local_session_create(&c, &g.cb, &raw), RETCON_RESULT_OK);
  SessionPtr s(raw);
  retcon_replay* r = reinterpret_cast<retcon_replay*>(&g);  // garbage that must be cleared
  EXPECT_EQ(retcon_session_copy_recording(s.get(), &r), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(retcon_session_save_recording(s.get(), "/tmp/never.rpl"), RETCON_RESULT_NOT_FOUND);
  retcon_recording_config rc = recording(1, 60);
  EXPECT_EQ(retcon_session_start_recording(nullptr, &rc), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_start_recording(s.get(), nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  rc.size = 3;
  EXPECT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_INVALID_ARGUMENT);
  rc = recording(1, 60);
  rc.user_data_size = 4;  // with no bytes
  EXPECT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_INVALID_ARGUMENT);
  rc = recording(1, 60);
  rc.frame_rate = 0;
  EXPECT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_INVALID_ARGUMENT);
  rc = recording(1, 60);
  ASSERT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_start_recording(s.get(), &rc), RETCON_RESULT_WRONG_STATE);  // once
  EXPECT_EQ(retcon_session_copy_recording(s.get(), nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_copy_recording(nullptr, &r), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_save_recording(s.get(), nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_save_recording(s.get(), "/nonexistent-dir/x.rpl"), RETCON_RESULT_IO_ERROR);

  // After the first advance a new recording cannot start (frames 0.. would be missing).
  retcon_session* raw2 = nullptr;
  ASSERT_EQ(retcon_local_session_create(&c, &g.cb, &raw2), RETCON_RESULT_OK);
  SessionPtr s2(raw2);
  const uint8_t in[4] = {1, 2, 3, 4};
  ASSERT_EQ(retcon_session_add_local_input(s2.get(), 0, in, 4), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_session_add_local_input(s2.get(), 1, in, 4), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_session_advance_frame(s2.get()), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_start_recording(s2.get(), &rc), RETCON_RESULT_WRONG_STATE);
}

TEST(CapiReplayMisuse, RecordingFromInsideACallbackIsWrongState) {
  CGame g(false);
  struct Ctx {
    retcon_session* s = nullptr;
    retcon_result seen = RETCON_RESULT_OK;
  } ctx;
  g.game.test_data = &ctx;
  g.game.on_advance = [](ctg_game* game) {
    Ctx& c = *static_cast<Ctx*>(game->test_data);
    retcon_recording_config rc;
    retcon_recording_config_init(&rc);
    c.seen = retcon_session_start_recording(c.s, &rc);
  };
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.max_state_size = 256;
  ASSERT_EQ(retcon_local_session_create(&c, &g.cb, &ctx.s), RETCON_RESULT_OK);
  SessionPtr s(ctx.s);
  const uint8_t in[4] = {1, 2, 3, 4};
  retcon_session_add_local_input(s.get(), 0, in, 4);
  retcon_session_add_local_input(s.get(), 1, in, 4);
  ASSERT_EQ(retcon_session_advance_frame(s.get()), RETCON_RESULT_OK);
  EXPECT_EQ(ctx.seen, RETCON_RESULT_WRONG_STATE);
}

TEST(CapiReplayMisuse, LoadingRefusesNullAndCorruptImages) {
  retcon_replay* r = reinterpret_cast<retcon_replay*>(&r);
  char error[128] = "unchanged";
  EXPECT_EQ(retcon_replay_load(nullptr, 10, &r, error, sizeof error), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(retcon_replay_load("x", 1, nullptr, error, sizeof error), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_load(nullptr, 0, &r, error, sizeof error), RETCON_RESULT_CORRUPT_DATA);
  EXPECT_NE(std::string(error).find("replay: truncated"), std::string::npos) << error;
  const char text[] = "hello, not a replay at all, but long enough to hold a header.....";
  EXPECT_EQ(retcon_replay_load(text, sizeof text, &r, error, sizeof error), RETCON_RESULT_CORRUPT_DATA);
  EXPECT_NE(std::string(error).find("magic"), std::string::npos) << error;
  char tiny[8];
  EXPECT_EQ(retcon_replay_load(text, sizeof text, &r, tiny, sizeof tiny), RETCON_RESULT_CORRUPT_DATA);
  EXPECT_EQ(std::strlen(tiny), 7u);  // cut, NUL-terminated
  EXPECT_EQ(retcon_replay_load(text, sizeof text, &r, nullptr, 0), RETCON_RESULT_CORRUPT_DATA);
  EXPECT_EQ(retcon_replay_load_file(nullptr, &r, error, sizeof error), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_load_file("/nonexistent/x.rpl", &r, error, sizeof error), RETCON_RESULT_IO_ERROR);
  EXPECT_NE(std::string(error).find("cannot open"), std::string::npos) << error;

  // Every truncation of a good image is refused.
  std::mt19937_64 rng(5);
  ReplayPtr good = record_c(random_inputs(rng, 40, 2, 3), 2, 3, false, recording(1, 10));
  const Bytes image = image_of(good.get());
  for (size_t n = 0; n < image.size(); n += 7) {
    EXPECT_NE(retcon_replay_load(image.data(), n, &r, nullptr, 0), RETCON_RESULT_OK) << n;
    EXPECT_EQ(r, nullptr);
  }
  ASSERT_EQ(retcon_replay_load(image.data(), image.size(), &r, error, sizeof error), RETCON_RESULT_OK);
  EXPECT_STREQ(error, "");
  ReplayPtr copy(r);
  EXPECT_EQ(image_of(copy.get()), image);
}

TEST(CapiReplayMisuse, AccessorsCheckEverything) {
  std::mt19937_64 rng(6);
  ReplayPtr r = record_c(random_inputs(rng, 30, 2, 4), 2, 4, false, recording(1, 10));
  retcon_replay_info info;
  retcon_replay_info_init(&info);
  EXPECT_EQ(retcon_replay_get_info(nullptr, &info), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_get_info(r.get(), nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  info.size = 1;
  EXPECT_EQ(retcon_replay_get_info(r.get(), &info), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_replay_info_init(&info);
  ASSERT_EQ(retcon_replay_get_info(r.get(), &info), RETCON_RESULT_OK);
  EXPECT_EQ(info.num_players, 2u);
  EXPECT_EQ(info.input_size, 4u);
  EXPECT_EQ(info.frame_count, 30);
  EXPECT_EQ(info.checkpoint_count, 30u);
  EXPECT_EQ(info.stored_states, 3u);  // frames 0, 10, 20
  EXPECT_EQ(info.flags, uint32_t(RETCON_REPLAY_STORES_STATES));

  retcon_frame_inputs in;
  EXPECT_EQ(retcon_replay_get_inputs(r.get(), -1, &in), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_replay_get_inputs(r.get(), 30, &in), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_replay_get_inputs(r.get(), 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_get_inputs(nullptr, 0, &in), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_replay_get_inputs(r.get(), 29, &in), RETCON_RESULT_OK);
  EXPECT_EQ(in.player_count, 2u);
  EXPECT_EQ(in.input_size, 4u);

  const uint8_t four[4] = {9, 9, 9, 9};
  EXPECT_EQ(retcon_replay_set_input(r.get(), 30, 0, four, 4), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_replay_set_input(r.get(), 0, 2, four, 4), RETCON_RESULT_INVALID_PLAYER);
  EXPECT_EQ(retcon_replay_set_input(r.get(), 0, -1, four, 4), RETCON_RESULT_INVALID_PLAYER);
  EXPECT_EQ(retcon_replay_set_input(r.get(), 0, 0, four, 3), RETCON_RESULT_INVALID_INPUT_SIZE);
  EXPECT_EQ(retcon_replay_set_input(r.get(), 0, 0, nullptr, 4), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_replay_set_input(r.get(), 7, 1, four, 4), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_replay_get_inputs(r.get(), 7, &in), RETCON_RESULT_OK);
  EXPECT_EQ(std::memcmp(in.bytes + 4, four, 4), 0);

  retcon_replay_checkpoint cp;
  EXPECT_EQ(retcon_replay_get_checkpoint(r.get(), 30, &cp), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_replay_get_checkpoint(r.get(), 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_replay_get_checkpoint(r.get(), 10, &cp), RETCON_RESULT_OK);
  EXPECT_EQ(cp.frame, 10);
  EXPECT_NE(cp.state, nullptr);
  ASSERT_EQ(retcon_replay_get_checkpoint(r.get(), 11, &cp), RETCON_RESULT_OK);
  EXPECT_EQ(cp.state, nullptr);
  EXPECT_EQ(cp.state_length, 0u);

  size_t n = 0;
  EXPECT_EQ(retcon_replay_serialize(nullptr, nullptr, 0, &n), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_serialize(r.get(), nullptr, 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_replay_serialize(r.get(), nullptr, 0, &n), RETCON_RESULT_OK);
  Bytes small(n - 1);
  EXPECT_EQ(retcon_replay_serialize(r.get(), small.data(), small.size(), &n), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_save_file(r.get(), nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_save_file(nullptr, "/tmp/x.rpl"), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_replay_destroy(nullptr), RETCON_RESULT_OK);
  int not_a_replay[16] = {};
  EXPECT_EQ(retcon_replay_destroy(reinterpret_cast<retcon_replay*>(not_a_replay)), RETCON_RESULT_INVALID_ARGUMENT);
}

TEST(CapiReplayMisuse, RunsCheckTheirArguments) {
  std::mt19937_64 rng(7);
  ReplayPtr r = record_c(random_inputs(rng, 20, 2, 4), 2, 4, true, recording(1, 10));
  CGame g(true);
  retcon_replay_run_config c = run_config();
  retcon_replay_report rep;
  retcon_replay_report_init(&rep);
  using RunFn = retcon_result (*)(retcon_replay*, const retcon_game_callbacks*, const retcon_replay_run_config*,
                                retcon_replay_report*);
  for (RunFn run : {RunFn(retcon_replay_play), RunFn(retcon_replay_bisect), RunFn(retcon_replay_sync_test)}) {
    EXPECT_EQ(run(nullptr, &g.cb, &c, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(run(r.get(), nullptr, &c, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(run(r.get(), &g.cb, nullptr, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(run(r.get(), &g.cb, &c, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
    retcon_replay_run_config bad = c;
    bad.size = 2;
    EXPECT_EQ(run(r.get(), &g.cb, &bad, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    bad = c;
    bad.max_state_size = 0;
    EXPECT_EQ(run(r.get(), &g.cb, &bad, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    bad.max_state_size = RETCON_MAX_STATE_SIZE + 1;
    EXPECT_EQ(run(r.get(), &g.cb, &bad, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    retcon_replay_report bad_report = rep;
    bad_report.size = 0;
    EXPECT_EQ(run(r.get(), &g.cb, &c, &bad_report), RETCON_RESULT_INVALID_ARGUMENT);
    retcon_game_callbacks no_checksum = g.cb;
    no_checksum.checksum = nullptr;  // the replay was hashed by the game's function
    EXPECT_EQ(run(r.get(), &no_checksum, &c, &rep), RETCON_RESULT_INVALID_ARGUMENT);
    retcon_game_callbacks no_advance = g.cb;
    no_advance.advance_frame = nullptr;
    EXPECT_EQ(run(r.get(), &no_advance, &c, &rep), RETCON_RESULT_INVALID_ARGUMENT);
  }
  for (int32_t d : {0, -1, RETCON_MAX_PREDICTION_FRAMES + 1}) {
    c.check_distance = d;
    EXPECT_EQ(retcon_replay_sync_test(r.get(), &g.cb, &c, &rep), RETCON_RESULT_INVALID_ARGUMENT);
  }
  // A state that does not fit is a result, not a crash.
  c = run_config();
  c.max_state_size = 8;
  EXPECT_EQ(retcon_replay_play(r.get(), &g.cb, &c, &rep), RETCON_RESULT_SAVE_FAILED);
  EXPECT_EQ(retcon_replay_bisect(r.get(), &g.cb, &c, &rep), RETCON_RESULT_SAVE_FAILED);
}

TEST(CapiReplay, SaveLoadFileRoundTrip) {
  std::mt19937_64 rng(8);
  ReplayPtr r = record_c(random_inputs(rng, 50, 3, 2), 3, 2, false, recording(5, 10));
  const std::string path = testing::TempDir() + "capi_replay_round_trip.rpl";
  ASSERT_EQ(retcon_replay_save_file(r.get(), path.c_str()), RETCON_RESULT_OK);
  retcon_replay* loaded = nullptr;
  ASSERT_EQ(retcon_replay_load_file(path.c_str(), &loaded, nullptr, 0), RETCON_RESULT_OK);
  ReplayPtr l(loaded);
  EXPECT_EQ(image_of(l.get()), image_of(r.get()));
  std::remove(path.c_str());
}

TEST(CapiReplay, ProgressIsReportedUpToTheEnd) {
  std::mt19937_64 rng(9);
  ReplayPtr r = record_c(random_inputs(rng, 1000, 2, 1), 2, 1, false, recording(1, 60));
  CGame g(false);
  retcon_replay_run_config c = run_config();
  std::vector<std::pair<int32_t, int32_t>> seen;
  c.progress_user = &seen;
  c.progress = [](void* u, int32_t done, int32_t total) {
    static_cast<std::vector<std::pair<int32_t, int32_t>>*>(u)->emplace_back(done, total);
  };
  retcon_replay_report rep;
  retcon_replay_report_init(&rep);
  ASSERT_EQ(retcon_replay_bisect(r.get(), &g.cb, &c, &rep), RETCON_RESULT_OK);
  ASSERT_GE(seen.size(), 3u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].first, seen[i - 1].first);
  EXPECT_EQ(seen.back(), std::make_pair(1000, 1000));
  EXPECT_EQ(rep.first_bad, RETCON_NULL_FRAME);
  EXPECT_EQ(rep.checksums_verified, 1000u);  // frames 0..999 (the last frame's end is not confirmed)
}

// ------------------------------------------------------------------------------ C vs C++

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
RC_GTEST_PROP(CapiReplayProperty, CRecordingPlaybackAndBisectEqualCpp, ()) {
  const uint32_t players = *rc::gen::inRange<uint32_t>(1, 5);
  const uint32_t size = *rc::gen::inRange<uint32_t>(1, 9);
  const int32_t frames = *rc::gen::inRange<int32_t>(20, 400);
  const uint32_t checksum_interval = *rc::gen::element<uint32_t>(1, 1, 2, 7, 30);
  const uint32_t state_interval = *rc::gen::element<uint32_t>(0, 1, 10, 60);
  const bool custom = *rc::gen::arbitrary<bool>();
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);
  const std::vector<Bytes> inputs = random_inputs(rng, frames, players, size);

  ReplayPtr c_replay = record_c(inputs, players, size, custom, recording(checksum_interval, state_interval));
  RC_ASSERT(bool(c_replay));
  retcon::Replay cpp_replay = record_cpp(inputs, players, size, custom, checksum_interval, state_interval);
  Bytes cpp_image;
  RC_ASSERT(cpp_replay.serialize(&cpp_image) == retcon::Result::ok);
  RC_ASSERT(image_of(c_replay.get()) == cpp_image);  // the same file, byte for byte

  // A clean replay plays back clean in both.
  {
    CGame g(custom);
    retcon_replay_run_config c = run_config();
    retcon_replay_report rep;
    retcon_replay_report_init(&rep);
    RC_ASSERT(retcon_replay_play(c_replay.get(), &g.cb, &c, &rep) == RETCON_RESULT_OK);
    RC_ASSERT(rep.first_bad == RETCON_NULL_FRAME);
    RC_ASSERT(rep.frames_played == frames);
    RC_ASSERT(rep.checksums_verified == uint32_t(cpp_replay.checkpoints().size()));
  }

  // Change one input: bisect names the frame it changed (exact with a checksum every frame),
  // in C and in C++, from the start and from the nearest stored state.
  const int32_t bad_frame = *rc::gen::inRange<int32_t>(0, frames);
  const int32_t bad_player = *rc::gen::inRange<int32_t>(0, int32_t(players));
  Bytes changed(inputs[size_t(bad_frame)].begin() + bad_player * int32_t(size),
                inputs[size_t(bad_frame)].begin() + (bad_player + 1) * int32_t(size));
  changed[0] ^= uint8_t(1 + rng() % 255);
  RC_ASSERT(retcon_replay_set_input(c_replay.get(), bad_frame, bad_player, changed.data(), size) == RETCON_RESULT_OK);
  std::vector<Bytes> cpp_inputs = inputs;
  std::memcpy(cpp_inputs[size_t(bad_frame)].data() + bad_player * int32_t(size), changed.data(), size);
  {
    const retcon::FrameInputs in = cpp_replay.inputs(bad_frame);
    cpp_replay.revise_frame(bad_frame, cpp_inputs[size_t(bad_frame)].data(), in.status);
  }
  // The first checksum frame after the changed one.
  const retcon::ReplayCheckpoint* expected_bad = nullptr;
  for (const retcon::ReplayCheckpoint& c : cpp_replay.checkpoints())
    if (c.frame > bad_frame) {
      expected_bad = &c;
      break;
    }
  for (const int32_t from : {0, bad_frame}) {
    CGame g(custom);
    retcon_replay_run_config c = run_config();
    c.from_frame = from;
    retcon_replay_report rep;
    retcon_replay_report_init(&rep);
    RC_ASSERT(retcon_replay_bisect(c_replay.get(), &g.cb, &c, &rep) == RETCON_RESULT_OK);

    retcon::test::TestGame tg;
    retcon::GameCallbacks cb = retcon::bind_game(tg);
    cb.checksum = custom ? cpp_ctg_checksum : nullptr;
    retcon::ReplayBisectResult b;
    RC_ASSERT(retcon::bisect_replay(cpp_replay, cb, 256, from, nullptr, &b) == retcon::Result::ok);
    RC_ASSERT(rep.first_bad == b.first_bad);
    RC_ASSERT(rep.last_good == b.last_good);
    RC_ASSERT(rep.start_frame == b.start_frame);
    RC_ASSERT(rep.frames_played == b.frames_played);
    RC_ASSERT(rep.expected == b.expected);
    RC_ASSERT(rep.actual == b.actual);
    RC_ASSERT(Bytes(rep.replayed_state, rep.replayed_state + rep.replayed_state_length) == b.replayed_state);
    // The game is left in the replayed state of first_bad.
    if (rep.first_bad != RETCON_NULL_FRAME) RC_ASSERT(g.game.state.frame == rep.first_bad);

    if (expected_bad == nullptr) {  // no checksum after the change: nothing can tell
      RC_ASSERT(rep.first_bad == RETCON_NULL_FRAME);
      continue;
    }
    RC_ASSERT(rep.first_bad == expected_bad->frame);
    RC_ASSERT(rep.last_good < rep.first_bad);
    RC_ASSERT(rep.last_good <= bad_frame);
    if (checksum_interval == 1) {
      RC_ASSERT(rep.exact == 1u);
      RC_ASSERT(rep.first_bad == bad_frame + 1);  // the exact frame, whatever the state interval
    }
    // From the changed frame: re-ran only from the nearest stored state at or before it.
    if (from == bad_frame && state_interval != 0 && checksum_interval == 1) {
      const int32_t nearest = bad_frame / int32_t(state_interval) * int32_t(state_interval);
      RC_ASSERT(rep.start_frame == nearest);
      RC_ASSERT(rep.frames_played == bad_frame + 1 - nearest);
    }
  }

  // The sync test runs the corrupted replay deterministically, and says it differs.
  {
    CGame g(custom);
    retcon_replay_run_config c = run_config();
    c.check_distance = *rc::gen::inRange<int32_t>(1, 9);
    retcon_replay_report rep;
    retcon_replay_report_init(&rep);
    RC_ASSERT(retcon_replay_sync_test(c_replay.get(), &g.cb, &c, &rep) == RETCON_RESULT_OK);
    RC_ASSERT(rep.mismatch_frame == RETCON_NULL_FRAME);
    RC_ASSERT(rep.first_bad == (expected_bad ? expected_bad->frame : RETCON_NULL_FRAME));
  }
}
#endif

}  // namespace
