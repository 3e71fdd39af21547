// Out of memory during session creation: for every N from 1 until creation succeeds, the Nth
// allocation throws std::bad_alloc. Each attempt must return out_of_memory (C: OUT_OF_MEMORY),
// hand back no session, and leave the live allocation count where it was. The C API allocates
// only through operator new (no malloc of its own), so failing operator new covers it.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "limits/failing_alloc.h"
#include "retcon.h"
#include "retcon/p2p.h"
#include "support/test_game.h"
#include "tests/capi/c_test_game.h"

namespace retcon::test {
namespace {

struct Exhausted {
  uint64_t attempts = 0;     // creations that failed with out_of_memory
  uint64_t allocations = 0;  // allocations of the creation that succeeded
};

// `create` makes the session and returns its result; `exists` says whether it holds one;
// `destroy` frees it. Failures are reported with `what` and N.
Exhausted exhaust(const char* what, const std::function<int(void)>& create, const std::function<bool(void)>& exists,
                  const std::function<void(void)>& destroy, int ok, int out_of_memory) {
  Exhausted e;
  for (uint64_t n = 1; n < 100000; ++n) {
    const int64_t before = live_allocations();
    fail_allocation(n);
    const int r = create();
    const bool failed = allocation_failed();
    const uint64_t made = allocations_since_armed();
    fail_allocation(0);
    if (!failed) {
      EXPECT_EQ(r, ok) << what << ": creation with no failing allocation";
      EXPECT_TRUE(exists()) << what;
      destroy();
      EXPECT_EQ(live_allocations(), before) << what << ": create + destroy leaked";
      e.allocations = made;
      std::printf("%s: %llu allocations, each failed in turn\n", what, static_cast<unsigned long long>(made));
      return e;
    }
    const int64_t after = live_allocations();
    EXPECT_EQ(r, out_of_memory) << what << ": allocation " << n << " failed";
    EXPECT_FALSE(exists()) << what << ": a session was handed out although allocation " << n << " failed";
    EXPECT_EQ(after, before) << what << ": leaked after allocation " << n << " failed";
    if (exists()) destroy();
    ++e.attempts;
    if (::testing::Test::HasFailure()) return e;  // one clear report, not thousands
  }
  ADD_FAILURE() << what << ": never succeeded";
  return e;
}

Exhausted exhaust_cpp(const char* what, const std::function<Result(void)>& create, const std::function<bool(void)>& exists,
                      const std::function<void(void)>& destroy) {
  return exhaust(
      what, [&] { return int(create()); }, exists, destroy, int(Result::ok), int(Result::out_of_memory));
}

SessionConfig base_config(TestGame& game, uint32_t players) {
  SessionConfig s;
  s.num_players = players;
  s.input_size = 4;
  s.max_prediction = 8;
  s.max_state_size = 256;
  s.callbacks = bind_game(game);
  return s;
}

TEST(OutOfMemory, LocalSession) {
  TestGame game;
  const SessionConfig c = base_config(game, 4);
  std::unique_ptr<Session> s;
  const Exhausted e = exhaust_cpp(
      "local", [&] { return create_local_session(c, &s); }, [&] { return s != nullptr; }, [&] { s.reset(); });
  EXPECT_GT(e.attempts, 0u) << "creation allocates nothing: the test tests nothing";
  EXPECT_EQ(e.attempts, e.allocations);
}

TEST(OutOfMemory, SyncTestSession) {
  TestGame game;
  SyncTestConfig c;
  c.session = base_config(game, 2);
  c.check_distance = 4;
  std::unique_ptr<Session> s;
  const Exhausted e = exhaust_cpp(
      "sync test", [&] { return create_sync_test_session(c, &s); }, [&] { return s != nullptr; },
      [&] { s.reset(); });
  EXPECT_GT(e.attempts, 0u);
  EXPECT_EQ(e.attempts, e.allocations);
}

TEST(OutOfMemory, P2PSessionWithSpectators) {
  TestGame game;
  InMemoryNetwork net;
  std::vector<InMemoryTransport*> wires;
  for (int i = 0; i < 7; ++i) wires.push_back(net.add_endpoint());
  P2PConfig c;
  c.session = base_config(game, 4);
  c.network.transport = wires[0];
  c.players[0].kind = PlayerKind::local;
  c.players[1].kind = PlayerKind::local;
  for (int p = 2; p < 4; ++p) {
    c.players[p].kind = PlayerKind::remote;
    c.players[p].address = wires[size_t(p - 1)]->address();
  }
  c.num_spectators = 3;
  for (uint32_t k = 0; k < 3; ++k) c.spectators[k] = wires[4 + k]->address();
  std::unique_ptr<P2PSession> s;
  const Exhausted e = exhaust_cpp(
      "p2p", [&] { return create_p2p_session(c, &s); }, [&] { return s != nullptr; }, [&] { s.reset(); });
  EXPECT_GT(e.attempts, 0u);
  EXPECT_EQ(e.attempts, e.allocations);
}

TEST(OutOfMemory, SpectatorSession) {
  TestGame game;
  InMemoryNetwork net;
  InMemoryTransport* me = net.add_endpoint();
  InMemoryTransport* host = net.add_endpoint();
  SpectatorConfig c;
  c.session = base_config(game, 3);
  c.network.transport = me;
  c.host = host->address();
  std::unique_ptr<P2PSession> s;
  const Exhausted e = exhaust_cpp(
      "spectator", [&] { return create_spectator_session(c, &s); }, [&] { return s != nullptr; },
      [&] { s.reset(); });
  EXPECT_GT(e.attempts, 0u);
  EXPECT_EQ(e.attempts, e.allocations);
}

TEST(OutOfMemory, SessionsAreUsableAfterOutOfMemory) {
  // A failed creation leaves nothing behind that breaks the next one: create after failing
  // every allocation in turn, then play a few frames.
  TestGame game;
  const SessionConfig c = base_config(game, 2);
  std::unique_ptr<Session> s;
  fail_allocation(1);
  EXPECT_EQ(create_local_session(c, &s), Result::out_of_memory);
  fail_allocation(0);
  ASSERT_EQ(create_local_session(c, &s), Result::ok);
  const uint8_t in[4] = {1, 2, 3, 4};
  for (int f = 0; f < 10; ++f) {
    ASSERT_EQ(s->add_local_input(0, in, 4), Result::ok);
    ASSERT_EQ(s->add_local_input(1, in, 4), Result::ok);
    ASSERT_EQ(s->advance_frame(), Result::ok);
  }
  EXPECT_EQ(s->current_frame(), 10);
}

TEST(OutOfMemory, UdpTransportOpen) {
  // Not a session, but the other creation a networked game makes before one: loopback, any port.
  std::unique_ptr<UdpTransport> t;
  const Exhausted e = exhaust_cpp(
      "udp transport", [&] { return UdpTransport::open("127.0.0.1", 0, &t); }, [&] { return t != nullptr; },
      [&] { t.reset(); });
  EXPECT_GT(e.attempts, 0u);
  EXPECT_EQ(e.attempts, e.allocations);
}

// ---- the C API

struct CSession {
  ctg_game game;
  retcon_game_callbacks callbacks;
  retcon_session_config config;
  retcon_session* session = nullptr;
  CSession() {
    ctg_init(&game);
    retcon_game_callbacks_init(&callbacks);
    ctg_bind(&game, &callbacks, 0);
    retcon_session_config_init(&config);
    config.num_players = 2;
    config.input_size = 4;
    config.max_state_size = 256;
  }
};

TEST(OutOfMemory, CApiLocalSession) {
  CSession c;
  c.session = reinterpret_cast<retcon_session*>(&c);  // create must set it to NULL on failure
  const Exhausted e = exhaust(
      "retcon_local_session_create",
      [&] {
        c.session = reinterpret_cast<retcon_session*>(&c);
        return int(retcon_local_session_create(&c.config, &c.callbacks, &c.session));
      },
      [&] { return c.session != nullptr; },
      [&] {
        EXPECT_EQ(retcon_session_destroy(c.session), RETCON_RESULT_OK);
        c.session = nullptr;
      },
      RETCON_RESULT_OK, RETCON_RESULT_OUT_OF_MEMORY);
  EXPECT_GT(e.attempts, 0u) << "the C API's allocations were not seen by the replaced operator new";
  EXPECT_EQ(e.attempts, e.allocations);
}

TEST(OutOfMemory, CApiSyncTestSession) {
  CSession c;
  retcon_sync_test_config st;
  retcon_sync_test_config_init(&st);
  st.check_distance = 3;
  const Exhausted e = exhaust(
      "retcon_sync_test_session_create",
      [&] {
        c.session = reinterpret_cast<retcon_session*>(&c);
        return int(retcon_sync_test_session_create(&c.config, &st, &c.callbacks, &c.session));
      },
      [&] { return c.session != nullptr; },
      [&] {
        EXPECT_EQ(retcon_session_destroy(c.session), RETCON_RESULT_OK);
        c.session = nullptr;
      },
      RETCON_RESULT_OK, RETCON_RESULT_OUT_OF_MEMORY);
  EXPECT_GT(e.attempts, 0u);
  EXPECT_EQ(e.attempts, e.allocations);
}

}  // namespace
}  // namespace retcon::test
