// The C API's networking: misuse of transports and network sessions is an error code, and a
// whole peer-to-peer match (with a spectator) driven through retcon.h goes exactly as the same
// match driven through the C++ API (tests/support/match_harness.h): the same state at every
// frame, the same counters, the same traffic; and every confirmed frame equals lockstep.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#ifndef RETCON_NO_RAPIDCHECK
#include <rapidcheck/gtest.h>
#endif

#include <deque>

#include "capi/c_test_game.h"
#include "retcon.h"
#include "support/alloc_counter.h"
#include "support/match_harness.h"
#include "support/match_keys.h"

namespace retcon::test {
namespace {

struct Handles {
  std::vector<retcon_session*> sessions;
  std::vector<retcon_transport*> transports;  // destroyed in reverse order of creation
  retcon_memory_network* network = nullptr;
  ~Handles() {
    for (retcon_session* s : sessions) EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
    for (auto it = transports.rbegin(); it != transports.rend(); ++it)
      EXPECT_EQ(retcon_transport_destroy(*it), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_memory_network_destroy(network), RETCON_RESULT_OK);
  }
};

// ---------------------------------------------------------------------------------- misuse

struct CapiNet : ::testing::Test {
  ctg_game game;
  retcon_session_config config;
  retcon_game_callbacks callbacks;
  retcon_p2p_config p2p;
  Handles h;
  retcon_transport* a = nullptr;  // two endpoints of one in-memory network
  retcon_transport* b = nullptr;

  CapiNet() {
    ctg_init(&game);
    retcon_session_config_init(&config);
    config.max_state_size = 256;
    retcon_game_callbacks_init(&callbacks);
    ctg_bind(&game, &callbacks, 0);
    EXPECT_EQ(retcon_memory_network_create(&h.network), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_memory_network_add_endpoint(h.network, &a), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_memory_network_add_endpoint(h.network, &b), RETCON_RESULT_OK);
    h.transports = {a, b};
    retcon_p2p_config_init(&p2p);
    p2p.player_kinds[1] = RETCON_PLAYER_REMOTE;
    EXPECT_EQ(retcon_transport_address(b, &p2p.player_addresses[1]), RETCON_RESULT_OK);
  }
};

TEST_F(CapiNet, InitFunctionsFillDefaults) {
  EXPECT_EQ(retcon_p2p_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_spectator_config_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_link_profile_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_peer_stats_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_transport_callbacks_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_p2p_config c;
  ASSERT_EQ(retcon_p2p_config_init(&c), RETCON_RESULT_OK);
  EXPECT_EQ(c.size, sizeof c);
  EXPECT_EQ(c.frame_rate, 60u);
  EXPECT_EQ(c.desync_interval, 30);
  EXPECT_EQ(c.sync_round_trips, 5);
  EXPECT_EQ(c.player_kinds[0], uint32_t(RETCON_PLAYER_LOCAL));
  retcon_spectator_config s;
  ASSERT_EQ(retcon_spectator_config_init(&s), RETCON_RESULT_OK);
  EXPECT_EQ(s.size, sizeof s);
  EXPECT_EQ(s.catchup_threshold, 8);
  EXPECT_EQ(s.catchup_max_frames, 3);
  retcon_link_profile l;
  ASSERT_EQ(retcon_link_profile_init(&l), RETCON_RESULT_OK);
  EXPECT_EQ(l.size, sizeof l);
  EXPECT_EQ(l.reorder_delay_us, 20000u);
  EXPECT_EQ(l.loss, 0.0);
}

TEST_F(CapiNet, Addresses) {
  retcon_peer_address addr;
  EXPECT_EQ(retcon_ip_address("127.0.0.1", 7000, &addr), RETCON_RESULT_OK);
  EXPECT_GT(addr.size, 0u);
  EXPECT_EQ(retcon_ip_address("not an address", 7000, &addr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(addr.size, 0u);
  EXPECT_EQ(retcon_ip_address(nullptr, 7000, &addr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_ip_address("::1", 7000, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_peer_address mine, theirs;
  ASSERT_EQ(retcon_transport_address(a, &mine), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_transport_address(b, &theirs), RETCON_RESULT_OK);
  EXPECT_GT(mine.size, 0u);
  EXPECT_NE(std::memcmp(&mine, &theirs, sizeof mine), 0);
  EXPECT_EQ(retcon_transport_address(nullptr, &mine), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_transport_address(a, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
}

TEST_F(CapiNet, TransportMisuse) {
  retcon_transport* t = reinterpret_cast<retcon_transport*>(&game);
  EXPECT_EQ(retcon_transport_destroy(nullptr), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_destroy(nullptr), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_create(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_memory_network_add_endpoint(nullptr, &t), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(retcon_memory_network_add_endpoint(h.network, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_open(nullptr, 0, &t), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_open("not a host", 0, &t), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(retcon_udp_transport_open("127.0.0.1", 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  // User transports: size and both functions required.
  retcon_transport_callbacks cb;
  retcon_transport_callbacks_init(&cb);
  EXPECT_EQ(retcon_callback_transport_create(&cb, &t), RETCON_RESULT_INVALID_ARGUMENT);
  cb.send = [](void*, const uint8_t*, uint32_t, const uint8_t*, size_t) -> int32_t { return 0; };
  cb.receive = [](void*, uint8_t*, uint32_t*, uint8_t*, size_t, size_t*) -> int32_t { return 0; };
  cb.size = 4;
  EXPECT_EQ(retcon_callback_transport_create(&cb, &t), RETCON_RESULT_INVALID_ARGUMENT);
  cb.size = sizeof cb;
  EXPECT_EQ(retcon_callback_transport_create(nullptr, &t), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_callback_transport_create(&cb, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_callback_transport_create(&cb, &t), RETCON_RESULT_OK);
  retcon_peer_address addr;
  EXPECT_EQ(retcon_transport_address(t, &addr), RETCON_RESULT_NOT_FOUND);
  // Simulators: only on a simulator, probabilities 0..1, sizes known.
  retcon_link_profile link;
  retcon_link_profile_init(&link);
  EXPECT_EQ(retcon_network_simulator_set_links(t, &link, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_time(t, 5), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_transport* sim = nullptr;
  EXPECT_EQ(retcon_network_simulator_create(nullptr, 1, &sim), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_create(t, 1, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_network_simulator_create(t, 1, &sim), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_address(sim, &addr), RETCON_RESULT_NOT_FOUND);
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    link.loss = bad;
    EXPECT_EQ(retcon_network_simulator_set_links(sim, &link, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
    EXPECT_EQ(retcon_network_simulator_set_links(sim, nullptr, &link), RETCON_RESULT_INVALID_ARGUMENT);
  }
  link.loss = 0.5;
  link.size = 8;
  EXPECT_EQ(retcon_network_simulator_set_links(sim, &link, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  link.size = sizeof link;
  EXPECT_EQ(retcon_network_simulator_set_links(sim, &link, &link), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_network_simulator_set_links(sim, nullptr, nullptr), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_network_simulator_set_time(sim, 1000), RETCON_RESULT_OK);
  // The simulator borrows t: t cannot go first.
  EXPECT_EQ(retcon_transport_destroy(t), RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(retcon_transport_destroy(sim), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(t), RETCON_RESULT_OK);
  // Endpoints keep their network alive.
  EXPECT_EQ(retcon_memory_network_destroy(h.network), RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(retcon_memory_network_destroy(reinterpret_cast<retcon_memory_network*>(&game)),
            RETCON_RESULT_INVALID_ARGUMENT);
}

TEST_F(CapiNet, UdpTransportHasALocalAddress) {
  retcon_transport* udp = nullptr;
  ASSERT_EQ(retcon_udp_transport_open("127.0.0.1", 0, &udp), RETCON_RESULT_OK);
  retcon_peer_address addr;
  EXPECT_EQ(retcon_transport_address(udp, &addr), RETCON_RESULT_OK);
  EXPECT_GT(addr.size, 0u);
  EXPECT_EQ(retcon_transport_destroy(udp), RETCON_RESULT_OK);
}

TEST_F(CapiNet, P2PCreateMisuse) {
  retcon_session* s = nullptr;
  EXPECT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, nullptr, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_p2p_session_create(&config, nullptr, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_p2p_session_create(nullptr, &p2p, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_p2p_session_create(&config, &p2p, nullptr, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, a, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, reinterpret_cast<retcon_transport*>(&game), &s),
            RETCON_RESULT_INVALID_ARGUMENT);
  retcon_p2p_config bad = p2p;
  bad.size = 16;
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  bad = p2p;
  bad.player_kinds[1] = 7;
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  bad = p2p;
  bad.player_addresses[1].size = 0;  // a remote player needs an address
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  bad.player_addresses[1].size = RETCON_PEER_ADDRESS_CAPACITY + 1;
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  bad = p2p;
  bad.player_kinds[0] = RETCON_PLAYER_REMOTE;  // no local player
  bad.player_addresses[0] = bad.player_addresses[1];
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  bad = p2p;
  bad.num_spectators = RETCON_MAX_SPECTATORS + 1;
  EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
  for (uint32_t batch : {0u, 61u, 0xffffffffu}) {
    bad = p2p;
    bad.input_batch_frames = batch;
    EXPECT_EQ(retcon_p2p_session_create(&config, &bad, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT) << batch;
    EXPECT_EQ(s, nullptr);
  }
  EXPECT_EQ(p2p.input_batch_frames, 2u) << "retcon_p2p_config_init fills the C++ defaults";
  EXPECT_EQ(p2p.loss_hold_frames, 0u);
  retcon_spectator_config sc;
  retcon_spectator_config_init(&sc);
  EXPECT_EQ(retcon_spectator_session_create(&config, nullptr, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  sc.size = 0;
  EXPECT_EQ(retcon_spectator_session_create(&config, &sc, &callbacks, a, &s), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(s, nullptr);
}

TEST_F(CapiNet, SessionBorrowsItsTransport) {
  retcon_session* s = nullptr;
  ASSERT_EQ(retcon_p2p_session_create(&config, &p2p, &callbacks, a, &s), RETCON_RESULT_OK);
  uint32_t kind = 0, running = 7;
  EXPECT_EQ(retcon_session_get_kind(s, &kind), RETCON_RESULT_OK);
  EXPECT_EQ(kind, uint32_t(RETCON_SESSION_P2P));
  EXPECT_EQ(retcon_session_is_running(s, &running), RETCON_RESULT_OK);
  EXPECT_EQ(running, 0u);
  const uint8_t in[4] = {};
  EXPECT_EQ(retcon_session_add_local_input(s, 0, in, sizeof in), RETCON_RESULT_NOT_SYNCHRONIZED);
  EXPECT_EQ(retcon_session_poll(s, 1000), RETCON_RESULT_OK);
  retcon_peer_stats ps;
  retcon_peer_stats_init(&ps);
  EXPECT_EQ(retcon_session_get_peer_stats(s, 1, &ps), RETCON_RESULT_OK);
  EXPECT_EQ(ps.state, uint32_t(RETCON_PEER_SYNCHRONIZING));
  EXPECT_GT(ps.datagrams_sent, 0u);
  EXPECT_EQ(retcon_session_get_peer_stats(s, 0, &ps), RETCON_RESULT_NOT_FOUND);  // local player
  ps.size = 3;
  EXPECT_EQ(retcon_session_get_peer_stats(s, 1, &ps), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_peer_stats_init(&ps);
  EXPECT_EQ(retcon_session_get_spectator_stats(s, 0, &ps), RETCON_RESULT_NOT_FOUND);  // none configured
  // Adaptive delay: refused before any RTT, and every bad argument named by its result.
  retcon_adaptive_delay_rule rule;
  retcon_delay_choice choice;
  EXPECT_EQ(retcon_adaptive_delay_rule_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_delay_choice_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_adaptive_delay_rule_init(&rule), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_delay_choice_init(&choice), RETCON_RESULT_OK);
  EXPECT_EQ(rule.rtt_percent, 50u);
  EXPECT_EQ(rule.min_frames, 2);
  EXPECT_EQ(rule.max_frames, 4);
  EXPECT_EQ(retcon_session_choose_input_delay(s, &rule, &choice), RETCON_RESULT_NOT_SYNCHRONIZED);
  EXPECT_EQ(retcon_session_choose_input_delay(s, nullptr, &choice), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_choose_input_delay(s, &rule, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_choose_input_delay(nullptr, &rule, &choice), RETCON_RESULT_INVALID_ARGUMENT);
  rule.size = 3;
  EXPECT_EQ(retcon_session_choose_input_delay(s, &rule, &choice), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_adaptive_delay_rule_init(&rule);
  rule.max_frames = 1;  // below min_frames
  EXPECT_EQ(retcon_session_choose_input_delay(s, &rule, &choice), RETCON_RESULT_INVALID_ARGUMENT);
  int32_t wait = -1;
  EXPECT_EQ(retcon_session_frames_to_wait(s, &wait), RETCON_RESULT_OK);
  EXPECT_EQ(wait, 0);
  uint32_t should = 7;
  EXPECT_EQ(retcon_session_should_wait(s, &should), RETCON_RESULT_OK);
  EXPECT_EQ(should, 0u);
  should = 7;
  EXPECT_EQ(retcon_session_should_catch_up(s, &should), RETCON_RESULT_OK);
  EXPECT_EQ(should, 0u) << "nothing owed before a stall";
  EXPECT_EQ(retcon_session_disconnect_player(s, 7), RETCON_RESULT_INVALID_PLAYER);
  EXPECT_EQ(retcon_transport_destroy(a), RETCON_RESULT_WRONG_STATE);
  EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(a), RETCON_RESULT_OK);
  h.transports = {b};
}

TEST_F(CapiNet, NetworkQueriesOnLocalSessions) {
  retcon_session* s = nullptr;
  ASSERT_EQ(retcon_local_session_create(&config, &callbacks, &s), RETCON_RESULT_OK);
  h.sessions.push_back(s);
  uint32_t running = 0;
  int32_t wait = -1;
  EXPECT_EQ(retcon_session_is_running(s, &running), RETCON_RESULT_OK);
  EXPECT_EQ(running, 1u);
  EXPECT_EQ(retcon_session_frames_to_wait(s, &wait), RETCON_RESULT_OK);
  EXPECT_EQ(wait, 0);
  uint32_t should = 7;
  EXPECT_EQ(retcon_session_should_wait(s, &should), RETCON_RESULT_OK);
  EXPECT_EQ(should, 0u);
  EXPECT_EQ(retcon_session_should_wait(s, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_should_wait(nullptr, &should), RETCON_RESULT_INVALID_ARGUMENT);
  should = 7;
  EXPECT_EQ(retcon_session_should_catch_up(s, &should), RETCON_RESULT_OK);
  EXPECT_EQ(should, 0u);
  EXPECT_EQ(retcon_session_should_catch_up(s, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_should_catch_up(nullptr, &should), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_disconnect_player(s, 1), RETCON_RESULT_WRONG_STATE);
  retcon_peer_stats ps;
  retcon_peer_stats_init(&ps);
  EXPECT_EQ(retcon_session_get_peer_stats(s, 1, &ps), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_session_get_spectator_stats(s, 0, &ps), RETCON_RESULT_NOT_FOUND);
  EXPECT_EQ(retcon_session_is_running(nullptr, &running), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_is_running(s, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_frames_to_wait(s, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_disconnect_player(nullptr, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_peer_stats(nullptr, 1, &ps), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_get_spectator_stats(s, 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
}

// Two peers over user transports: C callbacks that pass datagrams through mailboxes.
struct Mailboxes {
  struct Datagram {
    uint8_t from;
    std::vector<uint8_t> bytes;
  };
  std::deque<Datagram> box[3];  // by one-byte address 1, 2
  uint64_t sent = 0;
};
struct Port {
  Mailboxes* net;
  uint8_t me;
};

int32_t mailbox_send(void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data, size_t length) {
  auto* port = static_cast<Port*>(user);
  if (addr_len != 1 || addr[0] < 1 || addr[0] > 2) return -1;
  port->net->box[addr[0]].push_back({port->me, std::vector<uint8_t>(data, data + length)});
  ++port->net->sent;
  return 0;
}

int32_t mailbox_receive(void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer, size_t capacity,
                        size_t* length) {
  auto* port = static_cast<Port*>(user);
  auto& box = port->net->box[port->me];
  if (box.empty()) return 0;
  if (*addr_len < 1 || box.front().bytes.size() > capacity) return -1;
  addr[0] = box.front().from;
  *addr_len = 1;
  *length = box.front().bytes.size();
  std::memcpy(buffer, box.front().bytes.data(), *length);
  box.pop_front();
  return 1;
}

// Plays `frames` frames between two machines over `wire[0]`, `wire[1]` (their addresses in
// `addr`); returns the ticks it took, or -1. `hashes[m]` gets machine m's state hashes.
int play_pair(retcon_transport* wire[2], const retcon_peer_address addr[2], int frames, ctg_game games[2],
              std::vector<uint64_t> hashes[2], uint64_t* allocations_after_warmup = nullptr,
              const uint8_t* match_key = nullptr) {
  retcon_session* s[2] = {};
  for (int m = 0; m < 2; ++m) {
    ctg_init(&games[m]);
    hashes[m].assign(size_t(frames) + 64, 0);
    games[m].start_hashes = hashes[m].data();
    games[m].start_hash_count = hashes[m].size();
    retcon_session_config c;
    retcon_session_config_init(&c);
    c.input_size = 2;
    c.max_state_size = 256;
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    ctg_bind(&games[m], &cb, 0);
    retcon_p2p_config p;
    retcon_p2p_config_init(&p);
    p.rng_seed = 5 + uint64_t(m);
    p.desync_interval = 10;
    if (match_key != nullptr) {
      p.has_match_key = 1;
      std::memcpy(p.match_key, match_key, RETCON_MATCH_KEY_SIZE);
    }
    for (int q = 0; q < 2; ++q) {
      p.player_kinds[q] = q == m ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
      p.player_addresses[q] = addr[q];
    }
    if (retcon_p2p_session_create(&c, &p, &cb, wire[m], &s[m]) != RETCON_RESULT_OK) return -1;
  }
  uint64_t now = 0, before = 0;
  int tick = 0;
  for (; tick < 20000; ++tick) {
    now += 16667;
    int32_t confirmed[2] = {};
    for (int m = 0; m < 2; ++m) {
      EXPECT_EQ(retcon_session_poll(s[m], now), RETCON_RESULT_OK);
      uint32_t running = 0;
      retcon_session_is_running(s[m], &running);
      retcon_session_confirmed_frame(s[m], &confirmed[m]);
      int32_t f = 0;
      retcon_session_current_frame(s[m], &f);
      if (!running || f >= frames + 10) continue;
      const uint8_t in[2] = {uint8_t(f / 7 + m), uint8_t(f / 11)};
      const retcon_result r = retcon_session_add_local_input(s[m], m, in, sizeof in);
      EXPECT_TRUE(r == RETCON_RESULT_OK || r == RETCON_RESULT_INPUT_ALREADY_ADDED) << retcon_result_name(r);
      const retcon_result a = retcon_session_advance_frame(s[m]);
      EXPECT_TRUE(a == RETCON_RESULT_OK || a == RETCON_RESULT_PREDICTION_LIMIT) << retcon_result_name(a);
    }
    if (confirmed[0] >= frames / 4 && before == 0) before = allocation_count();
    if (confirmed[0] >= frames && confirmed[1] >= frames) break;
  }
  if (allocations_after_warmup) *allocations_after_warmup = allocation_count() - before;
  for (int m = 0; m < 2; ++m) EXPECT_EQ(retcon_session_destroy(s[m]), RETCON_RESULT_OK);
  return tick < 20000 ? tick : -1;
}

TEST(CapiNetMatch, TwoPeersOverUserTransports) {
  Mailboxes net;
  Port ports[2] = {{&net, 1}, {&net, 2}};
  retcon_transport* wire[2] = {};
  retcon_peer_address addr[2] = {};
  for (int m = 0; m < 2; ++m) {
    retcon_transport_callbacks cb;
    retcon_transport_callbacks_init(&cb);
    cb.user = &ports[m];
    cb.send = mailbox_send;
    cb.receive = mailbox_receive;
    ASSERT_EQ(retcon_callback_transport_create(&cb, &wire[m]), RETCON_RESULT_OK);
    addr[m].size = 1;
    addr[m].bytes[0] = uint8_t(m + 1);
  }
  ctg_game games[2];
  std::vector<uint64_t> hashes[2];
  const int ticks = play_pair(wire, addr, 200, games, hashes);
  EXPECT_GE(ticks, 200);
  EXPECT_GT(net.sent, 200u);
  EXPECT_EQ(games[0].state.frame, games[1].state.frame);
  EXPECT_GT(games[0].state.frame, 200);
  EXPECT_NE(hashes[0][200], 0u);
  for (int f = 0; f <= 200; ++f) EXPECT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << f;
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(games[m].frame_errors, 0);
    EXPECT_EQ(games[m].desyncs, 0u);
    EXPECT_EQ(retcon_transport_destroy(wire[m]), RETCON_RESULT_OK);
  }
}

TEST(CapiNetMatch, SteadyStateAllocatesNothing) {
  retcon_memory_network* network = nullptr;
  ASSERT_EQ(retcon_memory_network_create(&network), RETCON_RESULT_OK);
  retcon_transport* wire[2] = {};
  retcon_peer_address addr[2] = {};
  for (int m = 0; m < 2; ++m) {
    ASSERT_EQ(retcon_memory_network_add_endpoint(network, &wire[m]), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_transport_address(wire[m], &addr[m]), RETCON_RESULT_OK);
  }
  ctg_game games[2];
  std::vector<uint64_t> hashes[2];
  uint64_t allocated = 1;
  EXPECT_GT(play_pair(wire, addr, 400, games, hashes, &allocated), 0);
  EXPECT_EQ(allocated, 0u) << "heap allocations in the last 3/4 of a C API match";
  for (int m = 0; m < 2; ++m) EXPECT_EQ(retcon_transport_destroy(wire[m]), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_destroy(network), RETCON_RESULT_OK);
}

// ---------------------------------------------------------------------------------- matches

// Match (match_harness.h), rebuilt on the C API: the same machines, seeds and tick.
class CMatch {
 public:
  struct CMachine {
    ctg_game game;
    retcon_transport* wire = nullptr;
    retcon_transport* sim = nullptr;
    retcon_session* session = nullptr;
    std::vector<uint64_t> hashes;
    bool spectator = false;
    Frame join_at = 0;  // as Machine::join_at
    bool joined = false;
  };

  explicit CMatch(const MatchOptions& o) : opt_(o), reference_(o) {}
  ~CMatch() {
    for (auto& m : machines_) {
      EXPECT_EQ(retcon_session_destroy(m->session), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_transport_destroy(m->sim), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_transport_destroy(m->wire), RETCON_RESULT_OK);
    }
    EXPECT_EQ(retcon_memory_network_destroy(net_), RETCON_RESULT_OK);
  }

  bool build() {
    if (retcon_memory_network_create(&net_) != RETCON_RESULT_OK) return false;
    const uint32_t total = opt_.machines + opt_.spectators;
    retcon_link_profile link;
    retcon_link_profile_init(&link);
    link.latency_us = opt_.link.latency_us;
    link.jitter_us = opt_.link.jitter_us;
    link.loss = opt_.link.loss;
    link.duplicate = opt_.link.duplicate;
    link.reorder = opt_.link.reorder;
    for (uint32_t m = 0; m < total; ++m) {
      auto machine = std::make_unique<CMachine>();
      ctg_init(&machine->game);
      if (retcon_memory_network_add_endpoint(net_, &machine->wire) != RETCON_RESULT_OK) return false;
      if (retcon_network_simulator_create(machine->wire, opt_.seed * 7919 + m, &machine->sim) != RETCON_RESULT_OK)
        return false;
      if (retcon_network_simulator_set_links(machine->sim, &link, nullptr) != RETCON_RESULT_OK) return false;
      machine->hashes.assign(size_t(opt_.frames) + 400, 0);
      machine->game.start_hashes = machine->hashes.data();
      machine->game.start_hash_count = machine->hashes.size();
      machine->spectator = m >= opt_.machines;
      if (machine->spectator && m - opt_.machines < opt_.spectator_join.size())
        machine->join_at = opt_.spectator_join[m - opt_.machines];
      machines_.push_back(std::move(machine));
    }
    for (uint32_t m = 0; m < total; ++m) {
      CMachine& me = *machines_[m];
      retcon_session_config s;
      retcon_session_config_init(&s);
      s.num_players = opt_.machines;
      s.input_size = opt_.input_size;
      s.max_prediction = opt_.max_prediction;
      s.max_state_size = 256;
      retcon_game_callbacks cb;
      retcon_game_callbacks_init(&cb);
      ctg_bind(&me.game, &cb, 0);
      if (me.spectator) {
        retcon_spectator_config c;
        retcon_spectator_config_init(&c);
        c.rng_seed = opt_.seed * 31 + m;
        c.disconnect_timeout_us = opt_.disconnect_timeout_us;
        c.notify_delay_us = opt_.notify_delay_us;
        c.state_transfer = opt_.spectator_state_transfer >= 0 ? uint32_t(opt_.spectator_state_transfer)
                                                              : uint32_t(opt_.state_transfer);
        retcon_transport_address(machines_[0]->wire, &c.host);
        if (retcon_spectator_session_create(&s, &c, &cb, me.sim, &me.session) != RETCON_RESULT_OK) return false;
        continue;
      }
      retcon_p2p_config c;
      retcon_p2p_config_init(&c);
      c.rng_seed = opt_.seed * 31 + m;
      c.disconnect_timeout_us = opt_.disconnect_timeout_us;
      c.notify_delay_us = opt_.notify_delay_us;
      c.desync_interval = opt_.desync_interval;
      c.state_transfer = opt_.state_transfer ? 1u : 0u;
      for (uint32_t p = 0; p < opt_.machines; ++p) {
        c.player_kinds[p] = p == m ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
        retcon_transport_address(machines_[p]->wire, &c.player_addresses[p]);
      }
      if (m == 0) {
        c.num_spectators = opt_.spectators;
        for (uint32_t k = 0; k < opt_.spectators; ++k)
          retcon_transport_address(machines_[opt_.machines + k]->wire, &c.spectators[k]);
      }
      if (retcon_p2p_session_create(&s, &c, &cb, me.sim, &me.session) != RETCON_RESULT_OK) return false;
    }
    return true;
  }

  void tick() {
    now_ += 16667;
    for (uint32_t m = 0; m < machines_.size(); ++m) {
      CMachine& me = *machines_[m];
      if (me.spectator && !me.joined) {
        int32_t host_frame = 0;
        retcon_session_current_frame(machines_[0]->session, &host_frame);
        if (host_frame < me.join_at) continue;
        me.joined = true;
      }
      retcon_network_simulator_set_time(me.sim, now_);
      retcon_session_poll(me.session, now_);
      uint32_t running = 0;
      retcon_session_is_running(me.session, &running);
      if (!running) continue;
      if (me.spectator) {
        if (retcon_session_advance_frame(me.session) != RETCON_RESULT_OK) ++stalls_;
        continue;
      }
      // Time sync as retcon.h documents it: skip the tick when told to.
      uint32_t wait = 0;
      if (retcon_session_should_wait(me.session, &wait) != RETCON_RESULT_OK) ++errors_;
      if (wait) {
        ++waits_;
        continue;
      }
      int32_t f = 0;
      retcon_session_current_frame(me.session, &f);
      if (f >= opt_.frames + 120) continue;
      uint8_t in[RETCON_MAX_INPUT_SIZE];
      for (uint32_t i = 0; i < opt_.input_size; ++i) in[i] = reference_.input_byte(m, f, i);
      const retcon_result r = retcon_session_add_local_input(me.session, int32_t(m), in, opt_.input_size);
      if (r != RETCON_RESULT_OK && r != RETCON_RESULT_INPUT_ALREADY_ADDED) ++errors_;
      const retcon_result adv = retcon_session_advance_frame(me.session);
      if (adv == RETCON_RESULT_PREDICTION_LIMIT) ++stalls_;
      else if (adv != RETCON_RESULT_OK) ++errors_;
    }
  }

  bool run(int max_ticks) {
    for (int t = 0; t < max_ticks; ++t) {
      tick();
      bool done = true;
      for (auto& m : machines_) {
        int32_t confirmed = 0;
        retcon_session_confirmed_frame(m->session, &confirmed);
        if (!m->spectator && confirmed < opt_.frames) done = false;
      }
      if (done) return true;
    }
    return false;
  }

  CMachine& machine(uint32_t m) { return *machines_[m]; }
  uint64_t errors() const { return errors_; }

 private:
  MatchOptions opt_;
  Match reference_;  // only for its input_byte()
  retcon_memory_network* net_ = nullptr;
  std::vector<std::unique_ptr<CMachine>> machines_;
  uint64_t now_ = 0, errors_ = 0, stalls_ = 0, waits_ = 0;
};

#ifndef RETCON_NO_RAPIDCHECK  // RapidCheck is Linux-only (tests/CMakeLists.txt)
RC_GTEST_PROP(CapiP2PProperty, CApiMatchEqualsCppMatchAndLockstep, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 4u);
  o.spectators = *rc::gen::inRange(0u, 2u);
  o.input_size = *rc::gen::inRange(1u, 9u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.frames = 180;
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.link.latency_us = uint64_t(*rc::gen::inRange(0, 101)) * 1000;
  o.link.jitter_us = uint64_t(*rc::gen::inRange(0, 31)) * 1000;
  o.link.loss = *rc::gen::inRange(0, 21) / 100.0;
  o.link.duplicate = *rc::gen::inRange(0, 11) / 100.0;
  o.link.reorder = *rc::gen::inRange(0, 11) / 100.0;

  Match cpp(o);
  RC_ASSERT(cpp.build());
  CMatch c(o);
  RC_ASSERT(c.build());
  const bool cpp_done = cpp.run(20000);
  const bool c_done = c.run(20000);
  RC_ASSERT(cpp_done);
  RC_ASSERT(c_done);
  for (int i = 0; i < 200; ++i) {  // spectators catch up
    cpp.tick();
    c.tick();
  }
  RC_ASSERT(cpp.errors() == 0u);
  RC_ASSERT(c.errors() == 0u);
  const std::vector<uint64_t> ref = cpp.reference();
  for (uint32_t m = 0; m < o.machines + o.spectators; ++m) {
    Machine& mine = cpp.machine(m);
    CMatch::CMachine& theirs = c.machine(m);
    // The same run: every frame's state, every counter, every datagram.
    RC_ASSERT(theirs.hashes == mine.hashes);
    RC_ASSERT(theirs.game.frame_errors == 0);
    RC_ASSERT(theirs.game.desyncs == 0u);
    retcon_session_stats cs;
    retcon_session_stats_init(&cs);
    RC_ASSERT(retcon_session_get_stats(theirs.session, &cs) == RETCON_RESULT_OK);
    const SessionStats ss = mine.session->stats();
    RC_ASSERT(cs.current_frame == ss.current_frame);
    RC_ASSERT(cs.confirmed_frame == ss.confirmed_frame);
    RC_ASSERT(cs.frames_advanced == ss.frames_advanced);
    RC_ASSERT(cs.rollbacks == ss.rollbacks);
    RC_ASSERT(cs.frames_resimulated == ss.frames_resimulated);
    RC_ASSERT(cs.saves == ss.saves);
    RC_ASSERT(cs.loads == ss.loads);
    RC_ASSERT(cs.frames_stalled == ss.frames_stalled);
    if (!mine.spectator) {
      const PlayerIndex other = m == 0 ? 1 : 0;
      retcon_peer_stats cp;
      retcon_peer_stats_init(&cp);
      PeerStats sp{};
      RC_ASSERT(retcon_session_get_peer_stats(theirs.session, other, &cp) == RETCON_RESULT_OK);
      RC_ASSERT(mine.session->peer_stats(other, &sp) == Result::ok);
      RC_ASSERT(cp.state == sp.state);
      RC_ASSERT(cp.datagrams_sent == sp.datagrams_sent);
      RC_ASSERT(cp.bytes_received == sp.bytes_received);
      RC_ASSERT(cp.ping_us == sp.ping_us);
      RC_ASSERT(cp.dropped_bad_checksum == sp.dropped_bad_checksum);
      RC_ASSERT(cp.send_failures == sp.send_failures);
    }
    // And every confirmed frame equals lockstep.
    const Frame last = std::min({o.frames, cs.confirmed_frame + 1, cs.current_frame - 1});
    RC_ASSERT(last >= (mine.spectator ? o.frames / 2 : o.frames));
    for (Frame f = 0; f <= last; ++f) RC_ASSERT(theirs.hashes[size_t(f)] == ref[size_t(f)]);
  }
  if (o.spectators > 0) {
    retcon_peer_stats sp;
    retcon_peer_stats_init(&sp);
    RC_ASSERT(retcon_session_get_spectator_stats(c.machine(0).session, 0, &sp) == RETCON_RESULT_OK);
    RC_ASSERT(sp.datagrams_sent > 0u);
  }
  RC_CLASSIFY(o.spectators > 0, "spectator");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
}
#endif

// Late spectators with state transfer through the C API: the same run as the C++ sessions
// (every frame's state), each spectator starting from the host's state and keeping up.
TEST(CapiNetMatch, LateSpectatorsFromATransferredStateRunAsTheCppSessions) {
  retcon_p2p_config p;
  ASSERT_EQ(retcon_p2p_config_init(&p), RETCON_RESULT_OK);
  EXPECT_EQ(p.state_transfer, 0u) << "opt-in";
  EXPECT_EQ(p.transfer_bytes_per_second, 1u << 20);
  retcon_spectator_config sc;
  ASSERT_EQ(retcon_spectator_config_init(&sc), RETCON_RESULT_OK);
  EXPECT_EQ(sc.state_transfer, 0u);
  retcon_session_config s;
  retcon_session_config_init(&s);
  s.input_size = 1;
  s.max_state_size = 64;
  ctg_game game;
  ctg_init(&game);
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&game, &cb, 0);
  sc.host.size = 4;
  const char* why = nullptr;
  EXPECT_EQ(retcon_spectator_config_validate(&s, &sc, &cb, &why), RETCON_RESULT_OK);
  sc.transfer_bytes_per_second = 100;  // below the 16 KiB/s floor
  EXPECT_EQ(retcon_spectator_config_validate(&s, &sc, &cb, &why), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("transfer_bytes_per_second"), std::string::npos);

  MatchOptions o;
  o.spectators = 2;
  o.spectator_join = {150, 400};
  o.state_transfer = true;
  o.frames = 700;
  o.seed = 5;
  o.link.latency_us = 30000;
  o.link.loss = 0.05;
  Match cpp(o);
  ASSERT_TRUE(cpp.build());
  CMatch c(o);
  ASSERT_TRUE(c.build());
  ASSERT_TRUE(cpp.run(5000));
  ASSERT_TRUE(c.run(5000));
  for (int i = 0; i < 300; ++i) {
    cpp.tick();
    c.tick();
  }
  EXPECT_EQ(c.errors(), 0u);
  const std::vector<uint64_t> ref = cpp.reference();
  for (uint32_t k = 0; k < o.spectators; ++k) {
    CMatch::CMachine& theirs = c.machine(2 + k);
    EXPECT_EQ(theirs.hashes, cpp.machine(2 + k).hashes) << "spectator " << k;
    EXPECT_EQ(theirs.hashes[0], 0u) << "spectator " << k << " started from a state, not frame 0";
    Frame ran = 0;
    for (Frame f = 0; f <= o.frames; ++f) {
      if (theirs.hashes[size_t(f)] == 0) continue;
      ASSERT_EQ(theirs.hashes[size_t(f)], ref[size_t(f)]) << "spectator " << k << " frame " << f;
      ++ran;
    }
    EXPECT_GT(ran, o.frames - o.spectator_join[k] - 60) << "it ran the rest of the match";
  }
}

// A match key through the C API: both machines with the same key play and agree, with no
// allocation per frame; an all-zero key is refused, and the config init leaves none.
TEST(CapiNetMatch, MatchKeyAuthenticatesEveryDatagram) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  retcon_memory_network* network = nullptr;
  ASSERT_EQ(retcon_memory_network_create(&network), RETCON_RESULT_OK);
  retcon_transport* wire[2] = {};
  retcon_peer_address addr[2] = {};
  for (int m = 0; m < 2; ++m) {
    ASSERT_EQ(retcon_memory_network_add_endpoint(network, &wire[m]), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_transport_address(wire[m], &addr[m]), RETCON_RESULT_OK);
  }
  retcon_p2p_config defaults;
  ASSERT_EQ(retcon_p2p_config_init(&defaults), RETCON_RESULT_OK);
  EXPECT_EQ(defaults.has_match_key, 0u);
  EXPECT_EQ(defaults.rng_seed, 0u) << "0: fresh OS entropy per connection";
  retcon_spectator_config spectator;
  ASSERT_EQ(retcon_spectator_config_init(&spectator), RETCON_RESULT_OK);
  EXPECT_EQ(spectator.has_match_key, 0u);

  uint8_t key[RETCON_MATCH_KEY_SIZE];
  for (int i = 0; i < RETCON_MATCH_KEY_SIZE; ++i) key[i] = uint8_t(0x30 + i);
  ctg_game games[2];
  std::vector<uint64_t> hashes[2];
  uint64_t allocations = 0;
  const int ticks = play_pair(wire, addr, 300, games, hashes, &allocations, key);
  EXPECT_GE(ticks, 300);
  EXPECT_EQ(games[0].state.frame, games[1].state.frame);
  for (size_t f = 0; f < 300; ++f) ASSERT_EQ(hashes[0][f], hashes[1][f]) << f;
  EXPECT_EQ(allocations, 0u);

  const uint8_t zeros[RETCON_MATCH_KEY_SIZE] = {};
  EXPECT_EQ(play_pair(wire, addr, 10, games, hashes, nullptr, zeros), -1) << "an all-zero key";
  for (retcon_transport* w : wire) EXPECT_EQ(retcon_transport_destroy(w), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_destroy(network), RETCON_RESULT_OK);
}

// Without libsodium (RETCON_WITH_SODIUM=OFF: a Windows build without RETCON_SODIUM_DIR) a match key is refused with a
// clear error instead of the match running unprotected; with it, the key is accepted.
TEST(CapiNetMatch, MatchKeyIsRefusedOnlyWithoutLibsodium) {
  retcon_memory_network* network = nullptr;
  ASSERT_EQ(retcon_memory_network_create(&network), RETCON_RESULT_OK);
  retcon_transport* wire[2] = {};
  retcon_peer_address addr[2] = {};
  for (int m = 0; m < 2; ++m) {
    ASSERT_EQ(retcon_memory_network_add_endpoint(network, &wire[m]), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_transport_address(wire[m], &addr[m]), RETCON_RESULT_OK);
  }
  ctg_game game;
  ctg_init(&game);
  retcon_session_config c;
  retcon_session_config_init(&c);
  c.input_size = 2;
  c.max_state_size = 256;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(&game, &cb, 0);
  retcon_p2p_config p;
  retcon_p2p_config_init(&p);
  p.has_match_key = 1;
  for (int i = 0; i < RETCON_MATCH_KEY_SIZE; ++i) p.match_key[i] = uint8_t(0x30 + i);
  for (int q = 0; q < 2; ++q) {
    p.player_kinds[q] = q == 0 ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
    p.player_addresses[q] = addr[q];
  }
  retcon_session* s = nullptr;
  const retcon_result r = retcon_p2p_session_create(&c, &p, &cb, wire[0], &s);
  if (detail::match_keys_supported()) {
    EXPECT_EQ(r, RETCON_RESULT_OK);
    EXPECT_NE(s, nullptr);
  } else {
    EXPECT_EQ(r, RETCON_RESULT_UNSUPPORTED);
    EXPECT_STREQ(retcon_result_name(r), "unsupported");
    EXPECT_EQ(s, nullptr);
  }
  if (s != nullptr) {
    EXPECT_EQ(retcon_session_destroy(s), RETCON_RESULT_OK);
  }
  for (retcon_transport* w : wire) EXPECT_EQ(retcon_transport_destroy(w), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_destroy(network), RETCON_RESULT_OK);
}

}  // namespace
}  // namespace retcon::test
