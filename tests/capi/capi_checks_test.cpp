// The C API's checks: every config kind validated with a reason (and the reason logged by a
// refused create), a P2P config with nobody to play with refused unless allowed, distinct
// results before the handshake, the field named in a handshake rejection, retcon's checksum of a
// confirmed frame and the desync comparisons made, and the report policy (the first failure in
// full, then summaries, not one event per frame).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capi/c_test_game.h"
#include "retcon.h"

namespace {

struct LogLines {
  std::vector<std::string> lines;
  static void log(void* user, uint32_t, const char* message) { static_cast<LogLines*>(user)->lines.emplace_back(message); }
};

struct Net {
  retcon_memory_network* network = nullptr;
  std::vector<retcon_transport*> transports;
  std::vector<retcon_session*> sessions;
  Net() { EXPECT_EQ(retcon_memory_network_create(&network), RETCON_RESULT_OK); }
  retcon_transport* endpoint() {
    retcon_transport* t = nullptr;
    EXPECT_EQ(retcon_memory_network_add_endpoint(network, &t), RETCON_RESULT_OK);
    transports.push_back(t);
    return t;
  }
  ~Net() {
    for (retcon_session* s : sessions) EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
    for (auto it = transports.rbegin(); it != transports.rend(); ++it) EXPECT_EQ(retcon_transport_destroy(*it), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_memory_network_destroy(network), RETCON_RESULT_OK);
  }
};

struct Checks : ::testing::Test {
  ctg_game game;
  retcon_session_config config;
  retcon_game_callbacks callbacks;
  retcon_p2p_config p2p;
  retcon_spectator_config spectator;
  retcon_sync_test_config sync;
  LogLines log;

  Checks() {
    ctg_init(&game);
    retcon_session_config_init(&config);
    config.max_state_size = 256;
    config.logger.log = LogLines::log;
    config.logger.user = &log;
    config.logger.min_level = RETCON_LOG_DEBUG;
    retcon_game_callbacks_init(&callbacks);
    ctg_bind(&game, &callbacks, 0);
    retcon_p2p_config_init(&p2p);
    retcon_spectator_config_init(&spectator);
    retcon_sync_test_config_init(&sync);
  }
  std::string p2p_reason() {
    const char* reason = reinterpret_cast<const char*>(1);
    const retcon_result r = retcon_p2p_config_validate(&config, &p2p, &callbacks, &reason);
    if (r == RETCON_RESULT_OK) {
      EXPECT_EQ(reason, nullptr);
      return "";
    }
    EXPECT_EQ(r, RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_NE(reason, nullptr);
    return reason ? reason : "";
  }
};

TEST_F(Checks, EveryConfigKindIsValidatedWithAReason) {
  const char* reason = nullptr;
  // NULLs and sizes, each named.
  EXPECT_EQ(retcon_p2p_config_validate(nullptr, &p2p, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "config is NULL");
  EXPECT_EQ(retcon_p2p_config_validate(&config, nullptr, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "p2p is NULL");
  EXPECT_EQ(retcon_p2p_config_validate(&config, &p2p, nullptr, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "callbacks is NULL");
  EXPECT_EQ(retcon_p2p_config_validate(&config, &p2p, &callbacks, nullptr), RETCON_RESULT_INVALID_ARGUMENT);  // reason optional
  retcon_p2p_config bad = p2p;
  bad.size = 8;
  EXPECT_EQ(retcon_p2p_config_validate(&config, &bad, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(reason).find("retcon_p2p_config_init"), std::string::npos);
  EXPECT_EQ(retcon_sync_test_config_validate(&config, nullptr, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "sync_test is NULL");
  EXPECT_EQ(retcon_spectator_config_validate(&config, nullptr, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_STREQ(reason, "spectator is NULL");

  // The P2P config: the default one has nobody to play with.
  EXPECT_NE(p2p_reason().find("no remote player and no spectator"), std::string::npos);
  p2p.allow_local_only = 1;
  EXPECT_EQ(p2p_reason(), "");
  p2p.allow_local_only = 0;
  p2p.player_kinds[1] = RETCON_PLAYER_REMOTE;
  EXPECT_NE(p2p_reason().find("remote player's address"), std::string::npos);
  p2p.player_addresses[1].size = 4;
  EXPECT_EQ(p2p_reason(), "");
  p2p.desync_interval = -1;
  EXPECT_NE(p2p_reason().find("desync_interval"), std::string::npos);
  p2p.desync_interval = 30;
  EXPECT_EQ(p2p.late_input_threshold, 15);  // the documented default
  p2p.late_input_threshold = -1;
  EXPECT_NE(p2p_reason().find("late_input_threshold"), std::string::npos);
  p2p.late_input_threshold = 601;
  EXPECT_NE(p2p_reason().find("late_input_threshold"), std::string::npos);
  p2p.late_input_threshold = 0;  // off
  EXPECT_EQ(p2p_reason(), "");
  p2p.late_input_threshold = 15;
  p2p.frame_rate = 0;
  EXPECT_NE(p2p_reason().find("frame_rate"), std::string::npos);
  p2p.frame_rate = 60;
  p2p.sync_round_trips = 0;
  EXPECT_NE(p2p_reason().find("sync_round_trips"), std::string::npos);
  p2p.sync_round_trips = 5;
  p2p.has_match_key = 1;  // with an all-zero key
  EXPECT_NE(p2p_reason().find("match_key is all zeros"), std::string::npos);
  p2p.match_key[7] = 42;
  EXPECT_EQ(p2p_reason(), "");
  p2p.num_spectators = 1;
  p2p.spectators[0] = p2p.player_addresses[1];
  EXPECT_NE(p2p_reason().find("also a player's"), std::string::npos);
  p2p.num_spectators = 0;
  p2p.player_kinds[0] = RETCON_PLAYER_REMOTE;
  p2p.player_addresses[0] = p2p.player_addresses[1];
  EXPECT_NE(p2p_reason().find("no local player"), std::string::npos);
  p2p.player_kinds[0] = 9;
  EXPECT_NE(p2p_reason().find("neither local nor remote"), std::string::npos);
  p2p.player_kinds[0] = RETCON_PLAYER_LOCAL;
  config.input_size = 0;  // the shared settings come first
  EXPECT_NE(p2p_reason().find("input_size"), std::string::npos);
  config.input_size = 4;

  // Sync test and spectator.
  sync.check_distance = config.max_prediction + 1;
  EXPECT_EQ(retcon_sync_test_config_validate(&config, &sync, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(reason).find("check_distance"), std::string::npos);
  sync.check_distance = 2;
  EXPECT_EQ(retcon_sync_test_config_validate(&config, &sync, &callbacks, &reason), RETCON_RESULT_OK);
  EXPECT_EQ(reason, nullptr);
  EXPECT_EQ(retcon_spectator_config_validate(&config, &spectator, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(reason).find("host address"), std::string::npos);
  spectator.host.size = 4;
  spectator.catchup_threshold = 0;
  EXPECT_EQ(retcon_spectator_config_validate(&config, &spectator, &callbacks, &reason), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(reason).find("catchup_threshold"), std::string::npos);
  spectator.catchup_threshold = 8;
  EXPECT_EQ(retcon_spectator_config_validate(&config, &spectator, &callbacks, &reason), RETCON_RESULT_OK);
}

TEST_F(Checks, RefusedNetworkCreatesLogTheReason) {
  Net net;
  retcon_transport* t = net.endpoint();
  retcon_session* s = nullptr;
  EXPECT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, t, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  ASSERT_FALSE(log.lines.empty());
  EXPECT_NE(log.lines.back().find("retcon_p2p_session_create: no remote player"), std::string::npos) << log.lines.back();
  EXPECT_EQ(retcon_spectator_session_create(&config, &spectator, &callbacks, t, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_NE(log.lines.back().find("retcon_spectator_session_create: the host address"), std::string::npos)
      << log.lines.back();
  p2p.allow_local_only = 1;  // deliberately alone: accepted, and it runs
  ASSERT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, t, &s), RETCON_RESULT_OK);
  net.sessions.push_back(s);
  ASSERT_EQ(retcon_session_poll(s, 0), RETCON_RESULT_OK);
  uint32_t running = 0;
  ASSERT_EQ(retcon_session_is_running(s, &running), RETCON_RESULT_OK);
  EXPECT_EQ(running, 1u);
}

// Validation and creation read the same C fields: for random configs (each field sometimes
// out of range), retcon_*_config_validate says OK exactly when create succeeds, and a refused
// create logs the very reason validate gave. A field that one path maps and the other forgets
// shows up here as a disagreement.
TEST_F(Checks, ValidateAgreesWithCreateOnRandomConfigs) {
  Net net;
  retcon_transport* t = net.endpoint();
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto next = [&](uint32_t n) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return uint32_t(seed % n);
  };
  int accepted = 0, refused = 0;
  for (int round = 0; round < 400; ++round) {
    retcon_p2p_config c;
    retcon_p2p_config_init(&c);
    retcon_spectator_config sc;
    retcon_spectator_config_init(&sc);
    c.player_kinds[1] = next(8) ? RETCON_PLAYER_REMOTE : RETCON_PLAYER_LOCAL;
    c.player_addresses[1].size = next(8) ? 4 : 0;
    c.player_addresses[1].bytes[0] = 1;
    if (next(6) == 0) c.player_kinds[0] = next(3) ? RETCON_PLAYER_REMOTE : 7;
    c.player_addresses[0] = c.player_addresses[1];
    c.player_addresses[0].bytes[0] = 2;
    if (next(6) == 0) c.frame_rate = next(2) ? 0 : 70000;
    if (next(6) == 0) c.sync_round_trips = 0;
    if (next(6) == 0) c.desync_interval = -1 - int32_t(next(5));
    if (next(6) == 0) c.input_batch_frames = next(2) ? 0 : 61;
    if (next(6) == 0) c.loss_hold_frames = next(100);
    if (next(6) == 0) c.handshake_timeout_us = next(2) ? 0 : 1;
    if (next(6) == 0) c.late_input_threshold = next(2) ? 601 : int32_t(next(601));
    if (next(6) == 0) {
      c.has_match_key = 1;
      c.match_key[3] = uint8_t(next(2));  // sometimes all zeros
    }
    if (next(5) == 0) {
      c.num_spectators = 1 + next(2);
      c.spectators[0].size = 4;
      c.spectators[0].bytes[0] = uint8_t(next(4));  // sometimes a player's address
      c.spectators[1] = c.spectators[0];
      c.spectators[1].bytes[1] = uint8_t(next(2));  // sometimes the same spectator twice
    }
    c.allow_local_only = next(4) == 0;
    sc.host = c.player_addresses[1];
    sc.frame_rate = c.frame_rate;
    sc.sync_round_trips = c.sync_round_trips;
    sc.has_match_key = c.has_match_key;
    std::memcpy(sc.match_key, c.match_key, sizeof sc.match_key);
    if (next(6) == 0) sc.catchup_threshold = 0;
    if (next(6) == 0) sc.catchup_max_frames = -1;

    const char* reason = nullptr;
    const retcon_result validated = retcon_p2p_config_validate(&config, &c, &callbacks, &reason);
    retcon_session* s = nullptr;
    const retcon_result created = retcon_p2p_session_create(&config, &c, &callbacks, t, &s);
    // Without libsodium (the Windows build) a valid config with a match key is UNSUPPORTED:
    // not a disagreement about the config.
    if (created == RETCON_RESULT_UNSUPPORTED && c.has_match_key) continue;
    ASSERT_EQ(validated == RETCON_RESULT_OK, created == RETCON_RESULT_OK)
        << "round " << round << ": validate " << (reason ? reason : "OK") << ", create " << retcon_result_name(created);
    if (created == RETCON_RESULT_OK) {
      ++accepted;
      EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
    } else {
      ++refused;
      ASSERT_FALSE(log.lines.empty());
      EXPECT_NE(log.lines.back().find(reason), std::string::npos) << log.lines.back() << " vs " << reason;
    }
    reason = nullptr;
    const retcon_result sv = retcon_spectator_config_validate(&config, &sc, &callbacks, &reason);
    const retcon_result sr = retcon_spectator_session_create(&config, &sc, &callbacks, t, &s);
    if (sr == RETCON_RESULT_UNSUPPORTED && sc.has_match_key) continue;
    ASSERT_EQ(sv == RETCON_RESULT_OK, sr == RETCON_RESULT_OK)
        << "round " << round << ": spectator validate " << (reason ? reason : "OK") << ", create "
        << retcon_result_name(sr);
    if (sr == RETCON_RESULT_OK) {
      EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
    }
  }
  EXPECT_GT(accepted, 50);
  EXPECT_GT(refused, 50);
}

TEST_F(Checks, BeforeTheHandshakeEachMistakeHasItsOwnResult) {
  Net net;
  retcon_transport* a = net.endpoint();
  retcon_transport* b = net.endpoint();
  p2p.player_kinds[1] = RETCON_PLAYER_REMOTE;
  ASSERT_EQ(retcon_transport_address(b, &p2p.player_addresses[1]), RETCON_RESULT_OK);
  retcon_session* s = nullptr;
  ASSERT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, a, &s), RETCON_RESULT_OK);
  net.sessions.push_back(s);
  const uint8_t four[4] = {1, 2, 3, 4};
  EXPECT_EQ(retcon_session_add_local_input(s, 0, four, 3), RETCON_RESULT_INVALID_INPUT_SIZE);
  EXPECT_EQ(retcon_session_add_local_input(s, 5, four, 4), RETCON_RESULT_INVALID_PLAYER);
  EXPECT_EQ(retcon_session_add_local_input(s, 1, four, 4), RETCON_RESULT_INVALID_PLAYER);  // remote
  EXPECT_EQ(retcon_session_add_local_input(s, 0, nullptr, 4), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_add_local_input(s, 0, four, 4), RETCON_RESULT_NOT_SYNCHRONIZED);
}

// Two machines whose configs differ in one field: each is told which, with both values.
struct Rejection {
  std::string message;
  int32_t count = 0, total = 0;
  int events = 0;
};

void on_event_rejection(void* user, const retcon_event* e) {
  if (e->type != RETCON_EVENT_HANDSHAKE_REJECTED) return;
  auto* r = static_cast<Rejection*>(static_cast<ctg_game*>(user)->test_data);
  if (r->events++ == 0) {
    r->message = e->message;
    r->count = e->count;
    r->total = e->total;
  }
}

// Two C sessions whose configs differ as `differ` makes them (i: which side); each side's
// first handshake_rejected event is kept in seen[i].
void run_rejected_pair(const retcon_session_config& config, void (*differ)(retcon_session_config*, int),
                       Rejection seen[2]) {
  Net net;
  retcon_transport* t[2] = {net.endpoint(), net.endpoint()};
  retcon_peer_address addr[2];
  ctg_game games[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(retcon_transport_address(t[i], &addr[i]), RETCON_RESULT_OK);
  for (int i = 0; i < 2; ++i) {
    ctg_init(&games[i]);
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    ctg_bind(&games[i], &cb, 0);
    games[i].test_data = &seen[i];
    cb.on_event = on_event_rejection;
    retcon_session_config c = config;
    c.logger.log = nullptr;
    differ(&c, i);
    retcon_p2p_config p;
    retcon_p2p_config_init(&p);
    p.rng_seed = 5 + uint64_t(i);
    p.player_kinds[1 - i] = RETCON_PLAYER_REMOTE;
    p.player_addresses[1 - i] = addr[1 - i];
    retcon_session* s = nullptr;
    ASSERT_EQ(retcon_p2p_session_create(&c, &p, &cb, t[i], &s), RETCON_RESULT_OK);
    net.sessions.push_back(s);
  }
  for (uint64_t now = 0; now < 2000000 && (seen[0].events == 0 || seen[1].events == 0); now += 16667)
    for (retcon_session* s : net.sessions) retcon_session_poll(s, now);  // version_mismatch once rejected
}

TEST_F(Checks, AHandshakeRejectionNamesTheFieldThatDiffers) {
  Rejection seen[2];
  run_rejected_pair(config, [](retcon_session_config* c, int i) { c->input_size = i == 0 ? 4 : 2; }, seen);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(seen[i].events, 1) << i;
    EXPECT_NE(seen[i].message.find("input_size differs"), std::string::npos) << seen[i].message;
    EXPECT_EQ(seen[i].count, i == 0 ? 4 : 2);
    EXPECT_EQ(seen[i].total, i == 0 ? 2 : 4);
  }
}

// Players with different rollback windows play together (issue 11): each plays with the
// smaller window, which retcon_session_stats.prediction_window reports, and the one that lowered
// its window says so in an info line naming the peer and both windows. Both play the same match.
TEST_F(Checks, PlayersWithDifferentWindowsPlayWithTheSmallerOne) {
  Net net;
  retcon_transport* t[2] = {net.endpoint(), net.endpoint()};
  retcon_peer_address addr[2];
  ctg_game games[2];
  LogLines logs[2];
  constexpr int32_t kFrames = 300;
  std::vector<uint64_t> hashes[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(retcon_transport_address(t[i], &addr[i]), RETCON_RESULT_OK);
  for (int i = 0; i < 2; ++i) {
    ctg_init(&games[i]);
    hashes[i].assign(kFrames + 64, 0);
    games[i].start_hashes = hashes[i].data();
    games[i].start_hash_count = hashes[i].size();
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    ctg_bind(&games[i], &cb, 0);
    retcon_session_config c = config;
    c.logger.user = &logs[i];
    c.logger.min_level = RETCON_LOG_INFO;
    c.max_prediction = i == 0 ? 8 : 12;
    retcon_p2p_config p;
    retcon_p2p_config_init(&p);
    p.rng_seed = 5 + uint64_t(i);
    p.player_kinds[1 - i] = RETCON_PLAYER_REMOTE;
    p.player_addresses[1 - i] = addr[1 - i];
    retcon_session* s = nullptr;
    ASSERT_EQ(retcon_p2p_session_create(&c, &p, &cb, t[i], &s), RETCON_RESULT_OK);
    net.sessions.push_back(s);
  }
  int32_t confirmed[2] = {RETCON_NULL_FRAME, RETCON_NULL_FRAME};
  uint64_t now = 0;
  for (int tick = 0; tick < 3000 && std::min(confirmed[0], confirmed[1]) < kFrames; ++tick, now += 16667) {
    for (int i = 0; i < 2; ++i) {
      retcon_session* s = net.sessions[size_t(i)];
      ASSERT_EQ(retcon_session_poll(s, now), RETCON_RESULT_OK);
      const int32_t input = tick * 7 + i;
      (void)retcon_session_add_local_input(s, i, &input, sizeof input);  // not_synchronized at first
      (void)retcon_session_advance_frame(s);                             // or prediction_limit
      ASSERT_EQ(retcon_session_confirmed_frame(s, &confirmed[i]), RETCON_RESULT_OK);
    }
  }
  for (int i = 0; i < 2; ++i) {
    retcon_session_stats stats;
    ASSERT_EQ(retcon_session_stats_init(&stats), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_get_stats(net.sessions[size_t(i)], &stats), RETCON_RESULT_OK);
    EXPECT_EQ(stats.prediction_window, 8) << "machine " << i;
    EXPECT_GE(confirmed[i], kFrames) << "machine " << i << " played";
    EXPECT_EQ(games[i].desyncs, 0u);
    EXPECT_EQ(games[i].frame_errors, 0);
  }
  for (int32_t f = 0; f <= kFrames; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << "frame " << f;
  auto lowered = [](const LogLines& l) {
    std::vector<std::string> out;
    for (const std::string& line : l.lines)
      if (line.find("rollback window lowered") != std::string::npos) out.push_back(line);
    return out;
  };
  EXPECT_TRUE(lowered(logs[0]).empty());
  const std::vector<std::string> at_1 = lowered(logs[1]);
  ASSERT_EQ(at_1.size(), 1u);
  EXPECT_NE(at_1[0].find("player 0's machine has max_prediction 8"), std::string::npos) << at_1[0];
  EXPECT_NE(at_1[0].find("from 12 to 8"), std::string::npos) << at_1[0];
}

TEST_F(Checks, FrameChecksumsOfConfirmedFramesAndChecksumsCompared) {
  retcon_session* s = nullptr;
  config.max_prediction = 8;
  sync.check_distance = 3;
  ASSERT_EQ(retcon_sync_test_session_create(&config, &sync, &callbacks, &s), RETCON_RESULT_OK);
  retcon_recording_config rec;
  retcon_recording_config_init(&rec);
  ASSERT_EQ(retcon_session_start_recording(s, &rec), RETCON_RESULT_OK);
  uint64_t sum = 0;
  EXPECT_EQ(retcon_session_frame_checksum(s, 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_frame_checksum(nullptr, 0, &sum), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_frame_checksum(s, -1, &sum), RETCON_RESULT_INVALID_ARGUMENT);
  const uint8_t in[4] = {1, 2, 3, 4};
  for (int f = 0; f < 50; ++f) {
    ASSERT_EQ(retcon_session_add_local_input(s, 0, in, 4), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_add_local_input(s, 1, in, 4), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(s), RETCON_RESULT_OK);
  }
  EXPECT_EQ(retcon_session_frame_checksum(s, 60, &sum), RETCON_RESULT_WRONG_STATE);  // not confirmed yet
  EXPECT_EQ(retcon_session_frame_checksum(s, 1, &sum), RETCON_RESULT_NOT_FOUND);     // long gone
  // The frames still held equal what the recording verified for them.
  retcon_replay* replay = nullptr;
  ASSERT_EQ(retcon_session_copy_recording(s, &replay), RETCON_RESULT_OK);
  int held = 0;
  for (int32_t f = 40; f <= 50; ++f) {
    if (retcon_session_frame_checksum(s, f, &sum) != RETCON_RESULT_OK) continue;
    ++held;
    retcon_replay_checkpoint cp;
    ASSERT_EQ(retcon_replay_get_checkpoint(replay, uint32_t(f), &cp), RETCON_RESULT_OK);
    EXPECT_EQ(cp.frame, f);
    EXPECT_EQ(cp.checksum, sum) << f;
  }
  EXPECT_GE(held, 3);
  uint64_t compared = 7;
  EXPECT_EQ(retcon_session_checksums_compared(s, &compared), RETCON_RESULT_OK);
  EXPECT_EQ(compared, 0u);  // not a network session
  EXPECT_EQ(retcon_session_checksums_compared(s, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_checksums_compared(nullptr, &compared), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_replay_destroy(replay);
  retcon_session_destroy(s);
}

TEST_F(Checks, TwoPeersCompareChecksumsAndAgreeOnFrameChecksums) {
  Net net;
  retcon_transport* t[2] = {net.endpoint(), net.endpoint()};
  retcon_peer_address addr[2];
  ctg_game games[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(retcon_transport_address(t[i], &addr[i]), RETCON_RESULT_OK);
  for (int i = 0; i < 2; ++i) {
    ctg_init(&games[i]);
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    ctg_bind(&games[i], &cb, 0);
    retcon_session_config c = config;
    c.logger.log = nullptr;
    retcon_p2p_config p;
    retcon_p2p_config_init(&p);
    p.rng_seed = 9 + uint64_t(i);
    p.desync_interval = 10;
    p.player_kinds[1 - i] = RETCON_PLAYER_REMOTE;
    p.player_addresses[1 - i] = addr[1 - i];
    retcon_session* s = nullptr;
    ASSERT_EQ(retcon_p2p_session_create(&c, &p, &cb, t[i], &s), RETCON_RESULT_OK);
    net.sessions.push_back(s);
  }
  int32_t confirmed[2] = {-1, -1};
  for (uint64_t now = 0; now < 60000000 && (confirmed[0] < 200 || confirmed[1] < 200); now += 16667) {
    for (int i = 0; i < 2; ++i) {
      retcon_session* s = net.sessions[size_t(i)];
      ASSERT_EQ(retcon_session_poll(s, now), RETCON_RESULT_OK);
      const uint8_t in[4] = {uint8_t(now >> 14), uint8_t(i), 0, 0};
      if (retcon_session_add_local_input(s, i, in, 4) == RETCON_RESULT_NOT_SYNCHRONIZED) continue;
      retcon_session_advance_frame(s);
      retcon_session_confirmed_frame(s, &confirmed[i]);
    }
  }
  ASSERT_GE(confirmed[0], 200);
  ASSERT_GE(confirmed[1], 200);
  uint64_t compared[2] = {0, 0};
  for (int i = 0; i < 2; ++i) ASSERT_EQ(retcon_session_checksums_compared(net.sessions[size_t(i)], &compared[i]), RETCON_RESULT_OK);
  EXPECT_GE(compared[0], 10u);
  EXPECT_GE(compared[1], 10u);
  EXPECT_EQ(games[0].desyncs + games[1].desyncs, 0u);
  const int32_t f = std::min(confirmed[0], confirmed[1]);
  uint64_t sums[2] = {0, 1};
  for (int i = 0; i < 2; ++i) ASSERT_EQ(retcon_session_frame_checksum(net.sessions[size_t(i)], f, &sums[i]), RETCON_RESULT_OK);
  EXPECT_EQ(sums[0], sums[1]);
}

TEST_F(Checks, SyncTestMismatchesAreReportedOnceThenSummarized) {
  game.nondeterministic_from = 20;
  sync.check_distance = 2;
  retcon_session* s = nullptr;
  ASSERT_EQ(retcon_sync_test_session_create(&config, &sync, &callbacks, &s), RETCON_RESULT_OK);
  const uint8_t in[4] = {1, 2, 3, 4};
  for (int f = 0; f < 320; ++f) {
    ASSERT_EQ(retcon_session_add_local_input(s, 0, in, 4), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_add_local_input(s, 1, in, 4), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_advance_frame(s), RETCON_RESULT_OK);
  }
  retcon_session_destroy(s);
  // ~300 mismatching frames: one full report, then a summary per 60.
  ASSERT_GE(game.event_count, 2u);
  EXPECT_LE(game.event_count, 7u);
  const ctg_event& first = game.events[0];
  EXPECT_EQ(first.type, uint32_t(RETCON_EVENT_SYNC_TEST_MISMATCH));
  EXPECT_GE(first.frame, 20);
  EXPECT_NE(std::string(first.text_local), "");  // the full report describes both states
  const ctg_event& summary = game.events[1];
  EXPECT_EQ(summary.type, uint32_t(RETCON_EVENT_SYNC_TEST_MISMATCH));
  EXPECT_EQ(std::string(summary.text_local), "");
  EXPECT_NE(std::string(summary.message).find("summary"), std::string::npos);
  size_t error_lines = 0;
  for (const std::string& line : log.lines) error_lines += line.find("sync test") != std::string::npos ? 1 : 0;
  EXPECT_LE(error_lines, 7u);
}

}  // namespace
