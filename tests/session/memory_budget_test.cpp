// Memory at create: a session knows the state memory it will commit (ring, checkpoints,
// sync-test buffers) before it allocates, reports it, and refuses beyond memory_budget with
// out_of_memory and a log line that says why, instead of touching gigabytes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "retcon/p2p.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

struct LogLines {
  std::vector<std::string> lines;
  Logger logger() {
    Logger l;
    l.user = this;
    l.min_level = LogLevel::info;
    l.log = [](void* u, LogLevel, const char* m) { static_cast<LogLines*>(u)->lines.emplace_back(m); };
    return l;
  }
  bool contains(const std::string& text) const {
    for (const auto& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

SessionConfig big_config(TestGame& game, LogLines& log, size_t state_size, int32_t prediction) {
  SessionConfig c;
  c.num_players = 2;
  c.input_size = 4;
  c.max_prediction = prediction;
  c.max_state_size = state_size;
  c.save_mode = SaveMode::every_frame;
  c.callbacks = bind_game(game);
  c.logger = log.logger();
  return c;
}

// The documented maxima (256 MiB states, window 64) would commit 66 x 256 MiB = 16.5 GiB of
// ring alone: refused at once under the default 4 GiB budget, nothing allocated, and told why.
// (A local session keeps 2 slots whatever the window: 512 MiB, within the budget.)
TEST(MemoryBudget, MaximaAreRefusedWithOutOfMemoryAndAReason) {
  TestGame game;
  LogLines log;
  const SessionConfig c = big_config(game, log, kMaxStateSize, kMaxPredictionFrames);
  EXPECT_EQ(c.memory_budget, uint64_t{4} << 30);
  std::unique_ptr<Session> session;
  SyncTestConfig st;
  st.session = c;
  st.check_distance = kMaxPredictionFrames;
  EXPECT_EQ(create_sync_test_session(st, &session), Result::out_of_memory);
  EXPECT_EQ(session, nullptr);
  EXPECT_TRUE(log.contains("memory_budget")) << "the log says which limit was hit";

  InMemoryNetwork net;
  P2PConfig p;
  p.session = c;
  p.network.transport = net.add_endpoint();
  p.players[0].kind = PlayerKind::local;
  p.players[1].kind = PlayerKind::remote;
  p.players[1].address = make_memory_address(99);
  std::unique_ptr<P2PSession> p2p;
  EXPECT_EQ(create_p2p_session(p, &p2p), Result::out_of_memory);
  EXPECT_EQ(p2p, nullptr);

  ASSERT_EQ(create_local_session(c, &session), Result::ok);
  EXPECT_EQ(session->stats().committed_bytes, 2 * uint64_t{kMaxStateSize} + 64);
}

// 16 MiB x 64 fits the budget: created without zero-filling 1 GiB, the commitment reported in
// the stats and the log, and the session plays (every byte read was written by a save first).
TEST(MemoryBudget, SixteenMiBStatesWithWindow64CreateAndPlay) {
  TestGame game;
  LogLines log;
  const SessionConfig c = big_config(game, log, size_t{16} << 20, kMaxPredictionFrames);
  SyncTestConfig st;
  st.session = c;
  st.check_distance = 2;
  std::unique_ptr<Session> session;
  ASSERT_EQ(create_sync_test_session(st, &session), Result::ok);
  const uint64_t slot = uint64_t{16} << 20;
  // The ring of 66 slots (64-byte aligned, +64) and the sync test's two buffers.
  EXPECT_EQ(session->stats().committed_bytes, 66 * slot + 64 + 2 * slot);
  EXPECT_TRUE(log.contains("committed"));
  for (int f = 0; f < 20; ++f) {
    const uint8_t in[4] = {uint8_t(f), 1, 2, 3};
    ASSERT_EQ(session->add_local_input(0, in, 4), Result::ok);
    ASSERT_EQ(session->add_local_input(1, in, 4), Result::ok);
    ASSERT_EQ(session->advance_frame(), Result::ok);
  }
  for (const Event& e : game.events) EXPECT_NE(e.type, EventType::sync_test_mismatch);
  EXPECT_EQ(session->current_frame(), 20);
}

// A smaller budget is honoured exactly: one byte short refuses, the exact amount creates; 0
// means no limit.
TEST(MemoryBudget, BudgetIsExactAndZeroMeansNoLimit) {
  TestGame game;
  LogLines log;
  SessionConfig c = big_config(game, log, 1000, 8);
  // A local session never rolls back: 2 slots of 1000 bytes rounded up to 1024, + 64.
  const uint64_t ring = 2 * uint64_t{1024} + 64;
  std::unique_ptr<Session> session;
  c.memory_budget = ring - 1;
  EXPECT_EQ(create_local_session(c, &session), Result::out_of_memory);
  c.memory_budget = ring;
  ASSERT_EQ(create_local_session(c, &session), Result::ok);
  EXPECT_EQ(session->stats().committed_bytes, ring);
  c.memory_budget = 0;
  ASSERT_EQ(create_local_session(c, &session), Result::ok);
}

}  // namespace
}  // namespace retcon::test
