// The C API's transport settings and counters take effect in a running match: a simulator's
// explicit blackouts silence exactly their windows (and survive a later set_links), its limits
// bound what one poll reads, its statistics count what happened; a UDP socket's receive budget
// leaves a flood for the next poll. Misuse is an error code.
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "capi/c_test_game.h"
#include "retcon.h"
#include "retcon/transport.h"

namespace {

constexpr uint64_t kTick = 16667;

// A two-player C session on `transport` for `game` (bound to it): this machine is player `me`,
// the other one is at `remote`. NULL when create refused.
retcon_session* make_session(ctg_game* game, retcon_transport* transport, int me, const retcon_peer_address& remote,
                             uint64_t seed) {
  retcon_session_config s;
  retcon_session_config_init(&s);
  s.max_state_size = 256;
  retcon_game_callbacks cb;
  retcon_game_callbacks_init(&cb);
  ctg_bind(game, &cb, 0);
  retcon_p2p_config c;
  retcon_p2p_config_init(&c);
  c.rng_seed = seed;
  for (int p = 0; p < 2; ++p) c.player_kinds[p] = p == me ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
  c.player_addresses[1 - me] = remote;
  retcon_session* session = nullptr;
  return retcon_p2p_session_create(&s, &c, &cb, transport, &session) == RETCON_RESULT_OK ? session : nullptr;
}

retcon_peer_address address_of(const retcon_transport* transport) {
  retcon_peer_address a;
  EXPECT_EQ(retcon_transport_address(transport, &a), RETCON_RESULT_OK);
  return a;
}

// Two machines, each session on a simulator around its in-memory endpoint.
struct CPair {
  retcon_memory_network* net = nullptr;
  retcon_transport* wire[2] = {nullptr, nullptr};
  retcon_transport* sim[2] = {nullptr, nullptr};
  retcon_session* session[2] = {nullptr, nullptr};
  ctg_game game[2];
  std::vector<uint64_t> hashes[2];
  uint64_t now = 0;

  explicit CPair(int frames) {
    EXPECT_EQ(retcon_memory_network_create(&net), RETCON_RESULT_OK);
    for (int m = 0; m < 2; ++m) {
      EXPECT_EQ(retcon_memory_network_add_endpoint(net, &wire[m]), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_network_simulator_create(wire[m], 11 + m, &sim[m]), RETCON_RESULT_OK);
      ctg_init(&game[m]);
      hashes[m].assign(size_t(frames) + 64, 0);
      game[m].start_hashes = hashes[m].data();
      game[m].start_hash_count = hashes[m].size();
    }
    for (int m = 0; m < 2; ++m) {
      session[m] = make_session(&game[m], sim[m], m, address_of(wire[1 - m]), 5 + m);
      EXPECT_NE(session[m], nullptr);
    }
  }
  ~CPair() {
    for (int m = 0; m < 2; ++m) {
      EXPECT_EQ(retcon_session_destroy(session[m]), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_transport_destroy(sim[m]), RETCON_RESULT_OK);
      EXPECT_EQ(retcon_transport_destroy(wire[m]), RETCON_RESULT_OK);
    }
    EXPECT_EQ(retcon_memory_network_destroy(net), RETCON_RESULT_OK);
  }

  void tick(int frames) {
    now += kTick;
    for (int m = 0; m < 2; ++m) {
      retcon_network_simulator_set_time(sim[m], now);
      retcon_session_poll(session[m], now);
      uint32_t running = 0, wait = 0;
      retcon_session_is_running(session[m], &running);
      retcon_session_should_wait(session[m], &wait);
      int32_t f = 0;
      retcon_session_current_frame(session[m], &f);
      if (!running || wait || f >= frames + 60) continue;
      const uint8_t in[4] = {uint8_t(f * 7 + m), uint8_t(f / 5), uint8_t(m), 0};
      retcon_session_add_local_input(session[m], m, in, sizeof in);
      retcon_session_advance_frame(session[m]);
    }
  }
  int32_t confirmed(int m) const {
    int32_t c = -1;
    retcon_session_confirmed_frame(session[m], &c);
    return c;
  }
  uint64_t received_by(int m) const {  // datagrams machine m took from the other one
    retcon_peer_stats s;
    retcon_peer_stats_init(&s);
    EXPECT_EQ(retcon_session_get_peer_stats(session[m], 1 - m, &s), RETCON_RESULT_OK);
    return s.datagrams_received;
  }
  // Both machines confirmed `frames` frames and started every one of them from the same state.
  void expect_agree(int frames) const {
    ASSERT_GE(confirmed(0), frames);
    ASSERT_GE(confirmed(1), frames);
    for (int f = 1; f < frames; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << "frame " << f;
    EXPECT_EQ(game[0].desyncs + game[1].desyncs, 0u);
  }
};

uint64_t ticks_at(double seconds) { return uint64_t(seconds * 1e6) / kTick; }

TEST(CapiSimulatorSettings, ExplicitBlackoutsSilenceTheirWindowsAndSurviveSetLinks) {
  const int frames = 600;
  CPair pair(frames);
  const retcon_blackout_window windows[2] = {{2000000, 3000000}, {6000000, 6500000}};
  ASSERT_EQ(retcon_network_simulator_set_blackouts(pair.sim[0], RETCON_LINK_OUTGOING, windows, 2), RETCON_RESULT_OK);

  uint64_t inside_first_start = 0, inside_second_start = 0;
  uint64_t tick = 0;
  for (; tick < ticks_at(20); ++tick) {
    pair.tick(frames);
    const double t = double(pair.now) / 1e6;
    // Between the two windows the link changes: the explicit blackouts must stay.
    if (tick == ticks_at(4)) {
      retcon_link_profile link;
      retcon_link_profile_init(&link);
      link.latency_us = 20000;
      ASSERT_EQ(retcon_network_simulator_set_links(pair.sim[0], &link, nullptr), RETCON_RESULT_OK);
    }
    if (tick == ticks_at(2.1)) inside_first_start = pair.received_by(1);
    if (tick == ticks_at(2.95)) {
      EXPECT_EQ(pair.received_by(1), inside_first_start) << "B heard A inside the first blackout, t=" << t;
    }
    if (tick == ticks_at(6.1)) inside_second_start = pair.received_by(1);
    if (tick == ticks_at(6.45)) {
      EXPECT_EQ(pair.received_by(1), inside_second_start) << "the second blackout was lost by set_links";
    }
    if (pair.confirmed(0) >= frames && pair.confirmed(1) >= frames) break;
  }
  // A heard B all along (only A's outgoing direction was silenced).
  retcon_simulator_stats out, in;
  retcon_simulator_stats_init(&out);
  retcon_simulator_stats_init(&in);
  ASSERT_EQ(retcon_network_simulator_get_stats(pair.sim[0], &out, &in), RETCON_RESULT_OK);
  EXPECT_GE(out.dropped_blackout, 60u);  // about a datagram a tick for 1.5 s
  EXPECT_EQ(in.dropped_blackout, 0u);
  EXPECT_EQ(out.dropped_loss, 0u);
  EXPECT_GT(out.sent, out.dropped_blackout);
  uint64_t held = 0;  // A's 20 ms outgoing latency holds the last few (incoming has none)
  ASSERT_EQ(retcon_network_simulator_in_flight(pair.sim[0], &held, nullptr), RETCON_RESULT_OK);
  EXPECT_EQ(out.delivered + out.dropped_blackout + held, out.sent);
  pair.expect_agree(frames);

  // Clearing the list ends the silences; a bad list changes nothing.
  const retcon_blackout_window backwards = {5, 5};
  EXPECT_EQ(retcon_network_simulator_set_blackouts(pair.sim[0], RETCON_LINK_BOTH, &backwards, 1),
            RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(pair.sim[0], RETCON_LINK_BOTH, nullptr, 0), RETCON_RESULT_OK);
}

TEST(CapiSimulatorSettings, ReceiveBudgetLeavesTheRestForTheNextPollAndTheMatchStillRuns) {
  const int frames = 300;
  CPair pair(frames);
  retcon_simulator_limits limits;
  ASSERT_EQ(retcon_simulator_limits_init(&limits), RETCON_RESULT_OK);
  EXPECT_EQ(limits.size, sizeof limits);
  EXPECT_EQ(limits.receive_budget, 1024u);
  EXPECT_EQ(limits.capacity, 8192u);
  EXPECT_EQ(limits.receive_time_budget_us, 0u);
  limits.receive_budget = 1;
  ASSERT_EQ(retcon_network_simulator_set_limits(pair.sim[1], &limits), RETCON_RESULT_OK);
  retcon_simulator_limits read_back;
  retcon_simulator_limits_init(&read_back);
  ASSERT_EQ(retcon_network_simulator_get_limits(pair.sim[1], &read_back), RETCON_RESULT_OK);
  EXPECT_EQ(read_back.receive_budget, 1u);
  EXPECT_EQ(read_back.capacity, 8192u);

  // Every datagram to B arrives twice: more than one a poll, so the budget of 1 cuts polls.
  retcon_link_profile doubled;
  retcon_link_profile_init(&doubled);
  doubled.duplicate = 1.0;
  ASSERT_EQ(retcon_network_simulator_set_links(pair.sim[1], nullptr, &doubled), RETCON_RESULT_OK);
  for (uint64_t t = 0; t < ticks_at(30) && (pair.confirmed(0) < frames || pair.confirmed(1) < frames); ++t)
    pair.tick(frames);
  retcon_simulator_stats in;
  retcon_simulator_stats_init(&in);
  ASSERT_EQ(retcon_network_simulator_get_stats(pair.sim[1], nullptr, &in), RETCON_RESULT_OK);
  EXPECT_GT(in.duplicated, 100u);
  EXPECT_GT(in.budget_exhausted, 100u);
  uint64_t held = 0, bytes = 0;
  ASSERT_EQ(retcon_network_simulator_in_flight(pair.sim[1], &held, &bytes), RETCON_RESULT_OK);
  EXPECT_GT(bytes, 0u);
  pair.expect_agree(frames);
}

TEST(CapiSimulatorSettings, Misuse) {
  retcon_memory_network* net = nullptr;
  retcon_transport* wire = nullptr;
  retcon_transport* sim = nullptr;
  ASSERT_EQ(retcon_memory_network_create(&net), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_memory_network_add_endpoint(net, &wire), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_network_simulator_create(wire, 1, &sim), RETCON_RESULT_OK);
  retcon_blackout_window w = {10, 20};
  // Only simulators have blackouts, limits and stats.
  EXPECT_EQ(retcon_network_simulator_set_blackouts(wire, RETCON_LINK_OUTGOING, &w, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(nullptr, RETCON_LINK_OUTGOING, &w, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(sim, 0, &w, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(sim, 4, &w, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(sim, RETCON_LINK_INCOMING, nullptr, 1), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(sim, RETCON_LINK_INCOMING, &w, RETCON_SIMULATOR_MAX_BLACKOUTS + 1),
            RETCON_RESULT_INVALID_ARGUMENT);
  std::vector<retcon_blackout_window> many(RETCON_SIMULATOR_MAX_BLACKOUTS, w);
  EXPECT_EQ(retcon_network_simulator_set_blackouts(sim, RETCON_LINK_INCOMING, many.data(), uint32_t(many.size())),
            RETCON_RESULT_OK);

  retcon_simulator_limits limits;
  EXPECT_EQ(retcon_simulator_limits_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_simulator_limits_init(&limits);
  EXPECT_EQ(retcon_network_simulator_set_limits(wire, &limits), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_set_limits(sim, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  limits.size = 3;
  EXPECT_EQ(retcon_network_simulator_set_limits(sim, &limits), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_get_limits(sim, &limits), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_simulator_limits_init(&limits);
  limits.receive_budget = 0;  // taken as 1
  limits.capacity = 0;
  ASSERT_EQ(retcon_network_simulator_set_limits(sim, &limits), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_network_simulator_get_limits(sim, &limits), RETCON_RESULT_OK);
  EXPECT_EQ(limits.receive_budget, 1u);
  EXPECT_EQ(limits.capacity, 1u);

  retcon_simulator_stats stats;
  EXPECT_EQ(retcon_simulator_stats_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  std::memset(&stats, 0xff, sizeof stats);
  EXPECT_EQ(retcon_network_simulator_get_stats(sim, &stats, nullptr), RETCON_RESULT_INVALID_ARGUMENT);  // no size
  retcon_simulator_stats_init(&stats);
  EXPECT_EQ(stats.size, sizeof stats);
  EXPECT_EQ(retcon_network_simulator_get_stats(wire, &stats, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_get_stats(sim, nullptr, nullptr), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_network_simulator_in_flight(wire, nullptr, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_network_simulator_in_flight(sim, nullptr, nullptr), RETCON_RESULT_OK);

  // Only UDP sockets have receive budgets and UDP stats.
  retcon_udp_stats udp_stats;
  EXPECT_EQ(retcon_udp_stats_init(nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_udp_stats_init(&udp_stats);
  EXPECT_EQ(retcon_udp_transport_set_receive_budget(wire, 4), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_set_receive_budget(sim, 4), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_set_receive_time_budget(nullptr, 4), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_get_stats(wire, &udp_stats), RETCON_RESULT_INVALID_ARGUMENT);

  EXPECT_EQ(retcon_transport_destroy(sim), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(wire), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_memory_network_destroy(net), RETCON_RESULT_OK);
}

// A stranger's handshakes reach a session that does not list it: dropped and counted by the
// session; a datagram to an address nobody has is counted by the memory network.
TEST(CapiUnknownAddresses, StrangersAndNowhereAreCounted) {
  const int frames = 60;
  CPair pair(frames);
  retcon_transport* stranger_wire = nullptr;
  ASSERT_EQ(retcon_memory_network_add_endpoint(pair.net, &stranger_wire), RETCON_RESULT_OK);
  ctg_game game[2];
  ctg_init(&game[0]);
  ctg_init(&game[1]);
  // The stranger thinks machine 0 is its opponent.
  retcon_session* stranger = make_session(&game[0], stranger_wire, 0, address_of(pair.wire[0]), 1);
  ASSERT_NE(stranger, nullptr);
  retcon_transport* nowhere_wire = nullptr;  // a session whose opponent's address does not exist
  ASSERT_EQ(retcon_memory_network_add_endpoint(pair.net, &nowhere_wire), RETCON_RESULT_OK);
  retcon_peer_address nowhere = address_of(pair.wire[0]);
  nowhere.bytes[0] ^= 0x5a;
  retcon_session* lost = make_session(&game[1], nowhere_wire, 0, nowhere, 2);
  ASSERT_NE(lost, nullptr);

  for (int t = 0; t < 200 && (pair.confirmed(0) < frames || pair.confirmed(1) < frames); ++t) {
    pair.tick(frames);
    ASSERT_EQ(retcon_session_poll(stranger, pair.now), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_session_poll(lost, pair.now), RETCON_RESULT_OK);
  }
  pair.expect_agree(frames);  // the stranger changed nothing in the match
  uint64_t count = 0;
  ASSERT_EQ(retcon_session_dropped_unknown_address(pair.session[0], &count), RETCON_RESULT_OK);
  EXPECT_GT(count, 0u);
  ASSERT_EQ(retcon_session_dropped_unknown_address(pair.session[1], &count), RETCON_RESULT_OK);
  EXPECT_EQ(count, 0u);
  ASSERT_EQ(retcon_memory_network_dropped_unknown_address(pair.net, &count), RETCON_RESULT_OK);
  EXPECT_GT(count, 0u);
  EXPECT_EQ(retcon_session_dropped_unknown_address(nullptr, &count), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_session_dropped_unknown_address(pair.session[0], nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_memory_network_dropped_unknown_address(nullptr, &count), RETCON_RESULT_INVALID_ARGUMENT);

  EXPECT_EQ(retcon_session_destroy(lost), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_session_destroy(stranger), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(nowhere_wire), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(stranger_wire), RETCON_RESULT_OK);
}

// A flood of junk at a session's UDP socket: with a receive budget of 4 one poll reads at most
// 4 datagrams, the rest waits for later polls, and the counters say so. Loopback, port 0.
TEST(CapiUdpSettings, ReceiveBudgetSpreadsAFloodOverPolls) {
  retcon_transport* udp = nullptr;
  ASSERT_EQ(retcon_udp_transport_open("127.0.0.1", 0, &udp), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_udp_transport_set_receive_budget(udp, 0), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_udp_transport_set_receive_budget(udp, 4), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_udp_transport_set_receive_time_budget(udp, 0), RETCON_RESULT_OK);  // only the count

  std::unique_ptr<retcon::UdpTransport> attacker;
  ASSERT_EQ(retcon::UdpTransport::open("127.0.0.1", 0, &attacker), retcon::Result::ok);

  ctg_game game;
  ctg_init(&game);
  retcon_peer_address remote;
  ASSERT_EQ(retcon_ip_address("127.0.0.1", attacker->local_port(), &remote), RETCON_RESULT_OK);
  retcon_session* session = make_session(&game, udp, 0, remote, 0);
  ASSERT_NE(session, nullptr);

  retcon_peer_address target;
  ASSERT_EQ(retcon_transport_address(udp, &target), RETCON_RESULT_OK);
  retcon::PeerAddress to;
  to.size = target.size;
  std::memcpy(to.bytes, target.bytes, sizeof to.bytes);
  const uint8_t junk[24] = {1, 2, 3};
  const int flood = 40;
  for (int i = 0; i < flood; ++i) ASSERT_EQ(attacker->send(to, junk, sizeof junk), retcon::Result::ok);
  attacker->flush();

  retcon_udp_stats stats;
  retcon_udp_stats_init(&stats);
  ASSERT_EQ(retcon_session_poll(session, kTick), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_udp_transport_get_stats(udp, &stats), RETCON_RESULT_OK);
  EXPECT_EQ(stats.receive_budget_stops, 1u) << "the first poll must stop at the budget";
  // Enough polls read the whole flood; each of the first ones stops at the budget.
  for (int p = 2; p <= flood / 4 + 2; ++p) ASSERT_EQ(retcon_session_poll(session, uint64_t(p) * kTick), RETCON_RESULT_OK);
  ASSERT_EQ(retcon_udp_transport_get_stats(udp, &stats), RETCON_RESULT_OK);
  EXPECT_GE(stats.receive_budget_stops, uint64_t(flood / 4 - 1));
  EXPECT_GT(stats.system_calls, 0u);
  uint32_t running = 1;
  retcon_session_is_running(session, &running);
  EXPECT_EQ(running, 0u);  // junk never completes a handshake

  EXPECT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(udp), RETCON_RESULT_OK);
}

// The receive path from C: each one asked for reads a flood the same way (a budget of 4 stops
// the first poll), and the transport says which path runs. Linux always has recvmmsg, so single
// calls are asked in vain there; io_uring runs where the build and the kernel allow it.
TEST(CapiUdpSettings, EveryReceivePathCanBeChosenAndReadsTheFlood) {
  for (const uint32_t preferred : {uint32_t(RETCON_UDP_RECEIVE_COMPLETION_RING), uint32_t(RETCON_UDP_RECEIVE_BATCHED_CALLS),
                                   uint32_t(RETCON_UDP_RECEIVE_SINGLE_CALLS)}) {
    SCOPED_TRACE(preferred);
    retcon_transport* udp = nullptr;
    ASSERT_EQ(retcon_udp_transport_open_with_receive_path("127.0.0.1", 0, preferred, &udp), RETCON_RESULT_OK);
    uint32_t path = 99;
    ASSERT_EQ(retcon_udp_transport_receive_path(udp, &path), RETCON_RESULT_OK);
#if defined(__linux__)
    if (preferred == RETCON_UDP_RECEIVE_COMPLETION_RING)
      EXPECT_TRUE(path == RETCON_UDP_RECEIVE_COMPLETION_RING || path == RETCON_UDP_RECEIVE_BATCHED_CALLS);
    else
      EXPECT_EQ(path, uint32_t(RETCON_UDP_RECEIVE_BATCHED_CALLS));
#else
    EXPECT_EQ(path, uint32_t(RETCON_UDP_RECEIVE_SINGLE_CALLS));
#endif
    ASSERT_EQ(retcon_udp_transport_set_receive_budget(udp, 4), RETCON_RESULT_OK);
    ASSERT_EQ(retcon_udp_transport_set_receive_time_budget(udp, 0), RETCON_RESULT_OK);
    std::unique_ptr<retcon::UdpTransport> attacker;
    ASSERT_EQ(retcon::UdpTransport::open("127.0.0.1", 0, &attacker), retcon::Result::ok);
    ctg_game game;
    ctg_init(&game);
    retcon_peer_address remote;
    ASSERT_EQ(retcon_ip_address("127.0.0.1", attacker->local_port(), &remote), RETCON_RESULT_OK);
    retcon_session* session = make_session(&game, udp, 0, remote, 0);
    ASSERT_NE(session, nullptr);
    retcon_peer_address target;
    ASSERT_EQ(retcon_transport_address(udp, &target), RETCON_RESULT_OK);
    retcon::PeerAddress to;
    to.size = target.size;
    std::memcpy(to.bytes, target.bytes, sizeof to.bytes);
    const uint8_t junk[24] = {1, 2, 3};
    for (int i = 0; i < 12; ++i) ASSERT_EQ(attacker->send(to, junk, sizeof junk), retcon::Result::ok);
    attacker->flush();
    retcon_udp_stats stats;
    retcon_udp_stats_init(&stats);
    // Loopback delivery may lag a poll on a loaded machine: poll until the first budget stop.
    for (int p = 1; p <= 200 && stats.receive_budget_stops == 0; ++p) {
      ASSERT_EQ(retcon_session_poll(session, uint64_t(p) * kTick), RETCON_RESULT_OK);
      ASSERT_EQ(retcon_udp_transport_get_stats(udp, &stats), RETCON_RESULT_OK);
    }
    EXPECT_GE(stats.receive_budget_stops, 1u) << "12 datagrams through a budget of 4";
    EXPECT_EQ(retcon_session_destroy(session), RETCON_RESULT_OK);
    EXPECT_EQ(retcon_transport_destroy(udp), RETCON_RESULT_OK);
  }
}

TEST(CapiUdpSettings, ReceivePathMisuse) {
  retcon_transport* udp = reinterpret_cast<retcon_transport*>(1);
  EXPECT_EQ(retcon_udp_transport_open_with_receive_path("127.0.0.1", 0, 3, &udp), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(udp, nullptr);
  EXPECT_EQ(retcon_udp_transport_open_with_receive_path(nullptr, 0, 0, &udp), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_open_with_receive_path("127.0.0.1", 0, 0, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  EXPECT_EQ(retcon_udp_transport_open_with_receive_path("not an address", 0, 0, &udp), RETCON_RESULT_INVALID_ARGUMENT);
  uint32_t path = 0;
  EXPECT_EQ(retcon_udp_transport_receive_path(nullptr, &path), RETCON_RESULT_INVALID_ARGUMENT);
  ASSERT_EQ(retcon_udp_transport_open("127.0.0.1", 0, &udp), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_udp_transport_receive_path(udp, nullptr), RETCON_RESULT_INVALID_ARGUMENT);
  retcon_transport* sim = nullptr;
  ASSERT_EQ(retcon_network_simulator_create(udp, 1, &sim), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_udp_transport_receive_path(sim, &path), RETCON_RESULT_INVALID_ARGUMENT) << "a simulator is no socket";
  EXPECT_EQ(retcon_transport_destroy(sim), RETCON_RESULT_OK);
  EXPECT_EQ(retcon_transport_destroy(udp), RETCON_RESULT_OK);
}

}  // namespace
