// The fighter over a simulated network with rounds ended by timed decisions and the delay
// chosen before each round: every machine (and the spectator) ends every round on the same
// frame with the same winner, no machine shows a round end that is then taken back, and the
// delay every machine uses is the same.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fighter_peer.h"
#include "retcon/transport.h"

namespace fighter {
namespace {

struct NetMachine {
  retcon::InMemoryTransport* wire = nullptr;
  std::unique_ptr<retcon::NetworkSimulator> sim;
  FighterPeer peer;
};

TEST(FighterNetRounds, RoundsEndByDecisionOnTheSameFrameEverywhere) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    retcon::InMemoryNetwork net;
    std::vector<std::unique_ptr<NetMachine>> ms;
    retcon::LinkProfile link;  // transatlantic
    link.latency_us = 50000;
    link.jitter_us = 8000;
    link.loss = 0.05;
    const int players = 2, total = 3;
    for (int m = 0; m < total; ++m) {
      auto x = std::make_unique<NetMachine>();
      x->wire = net.add_endpoint();
      x->sim = std::make_unique<retcon::NetworkSimulator>(*x->wire, seed * 97 + uint64_t(m));
      x->sim->set_outgoing(link);
      ms.push_back(std::move(x));
    }
    for (int m = 0; m < total; ++m) {
      PeerSetup s;
      s.players = players;
      s.local_player = m < players ? m : -1;
      s.game_seed = uint32_t(seed);
      s.bot_seed = uint32_t(seed * 7919u + uint32_t(m));
      s.transport = ms[size_t(m)]->sim.get();
      for (int p = 0; p < players; ++p) s.addresses[p] = ms[size_t(p)]->wire->address();
      if (m == 0) s.spectators.push_back(ms[2]->wire->address());
      s.host = ms[0]->wire->address();
      s.rng_seed = seed * 31 + uint64_t(m);
      s.checksum_interval = 1;
      s.decided_round_end = true;
      s.adaptive_delay = true;
      ASSERT_EQ(ms[size_t(m)]->peer.start(s), retcon::Result::ok);
    }
    // Per machine, the frames its live state showed a round end on (first simulations only).
    std::vector<std::vector<std::pair<retcon::Frame, int32_t>>> ends(total);
    const retcon::Frame last = 3 * 60 * 60;  // three minutes: rounds end by KO or after 60 s
    uint64_t now = 0;
    for (int t = 0; t < 16000; ++t) {
      now += 16667;
      for (int m = 0; m < total; ++m) {
        NetMachine& me = *ms[size_t(m)];
        me.sim->set_time(now);
        const int32_t rounds_before = me.peer.game().state().rounds_played;
        me.peer.tick(now, last);
        const FighterState& st = me.peer.game().state();
        if (st.rounds_played != rounds_before) ends[size_t(m)].push_back({st.frame, st.round_winner});
      }
      bool done = true;
      for (int m = 0; m < total; ++m)
        if (ms[size_t(m)]->peer.recorder().recorded_frames() < last) done = false;
      if (done) break;
    }
    for (int m = 0; m < total; ++m) {
      const FighterPeer& p = ms[size_t(m)]->peer;
      ASSERT_GE(p.recorder().recorded_frames(), last) << "machine " << m;
      EXPECT_EQ(p.errors(), 0u);
      EXPECT_EQ(p.desyncs(), 0u);
      EXPECT_EQ(p.recorder().error(), retcon::Result::ok);
    }
    // The same states at every confirmed frame (the recorders' checksums).
    for (retcon::Frame f = 0; f < last; ++f) {
      uint64_t a = 0, b = 0, c = 0;
      ASSERT_TRUE(ms[0]->peer.confirmed_checksum(f, &a));
      ASSERT_TRUE(ms[1]->peer.confirmed_checksum(f, &b));
      ASSERT_TRUE(ms[2]->peer.confirmed_checksum(f, &c));
      ASSERT_EQ(a, b) << "frame " << f;
      ASSERT_EQ(a, c) << "spectator, frame " << f;
    }
    // Rounds ended, each by a decision, on the same frame with the same winner everywhere: the
    // live state never showed an end that a rollback took back (nor one at another frame).
    EXPECT_GE(ms[0]->peer.rounds_decided(), 2u);
    const auto& reference = ends[0];
    ASSERT_GE(reference.size(), 2u);
    for (int m = 1; m < total; ++m) {
      const size_t common = std::min(reference.size(), ends[size_t(m)].size());
      ASSERT_GE(common + 1, reference.size()) << "machine " << m;
      for (size_t k = 0; k < common; ++k) {
        // (The spectator may run several frames in a tick to catch up: its frame after the tick
        // says less; its states at every frame were compared above.)
        if (m < players) {
          EXPECT_EQ(ends[size_t(m)][k].first, reference[k].first) << "machine " << m << " round " << k;
        }
        EXPECT_EQ(ends[size_t(m)][k].second, reference[k].second) << "machine " << m << " round " << k;
      }
    }
    // The delay was chosen (transatlantic: 3-4 frames) and is the same on both players.
    EXPECT_GE(ms[0]->peer.input_delay(), 2);
    EXPECT_EQ(ms[0]->peer.input_delay(), ms[1]->peer.input_delay());
  }
}

// Player 0's machine (the one that decides round ends) leaves mid-round: the machine of the
// lowest player still in takes over once the disconnect is agreed, so the match still ends
// rounds, on the same frame with the same winner on both machines left.
TEST(FighterNetRounds, AnotherMachineDecidesRoundEndsWhenPlayerZeroLeaves) {
  retcon::InMemoryNetwork net;
  std::vector<std::unique_ptr<NetMachine>> ms;
  retcon::LinkProfile link;
  link.latency_us = 30000;
  link.jitter_us = 5000;
  link.loss = 0.02;
  const int players = 3;
  for (int m = 0; m < players; ++m) {
    auto x = std::make_unique<NetMachine>();
    x->wire = net.add_endpoint();
    x->sim = std::make_unique<retcon::NetworkSimulator>(*x->wire, 4242 + uint64_t(m));
    x->sim->set_outgoing(link);
    ms.push_back(std::move(x));
  }
  for (int m = 0; m < players; ++m) {
    PeerSetup s;
    s.players = players;
    s.local_player = m;
    s.game_seed = 5;
    s.bot_seed = 17u + uint32_t(m);
    s.transport = ms[size_t(m)]->sim.get();
    for (int p = 0; p < players; ++p) s.addresses[p] = ms[size_t(p)]->wire->address();
    s.rng_seed = 77 + uint64_t(m);
    s.decided_round_end = true;
    s.disconnect_timeout_us = 1000000;
    ASSERT_EQ(ms[size_t(m)]->peer.start(s), retcon::Result::ok);
  }
  const retcon::Frame leave_at = 10 * 60;  // mid-round: a round lasts up to 60 s
  const retcon::Frame last = 150 * 60;     // two more full rounds at least, even by time over
  std::vector<std::vector<std::pair<retcon::Frame, int32_t>>> ends(players);
  uint64_t now = 0;
  for (int t = 0; t < 12000; ++t) {
    now += 16667;
    for (int m = 0; m < players; ++m) {
      NetMachine& me = *ms[size_t(m)];
      if (m == 0 && me.peer.session().current_frame() >= leave_at) continue;  // gone: no more polls
      me.sim->set_time(now);
      const int32_t rounds_before = me.peer.game().state().rounds_played;
      me.peer.tick(now, last);
      const FighterState& st = me.peer.game().state();
      if (st.rounds_played != rounds_before) ends[size_t(m)].push_back({st.frame, st.round_winner});
    }
    if (ms[1]->peer.recorder().recorded_frames() >= last && ms[2]->peer.recorder().recorded_frames() >= last) break;
  }
  for (int m = 1; m < players; ++m) {
    const FighterPeer& p = ms[size_t(m)]->peer;
    ASSERT_GE(p.recorder().recorded_frames(), last) << "machine " << m;
    EXPECT_EQ(p.errors(), 0u);
    EXPECT_EQ(p.desyncs(), 0u);
    EXPECT_EQ(p.disconnects(), 1u) << "machine " << m << ": only player 0 left";
    EXPECT_EQ(p.deciding_player(), 1);
  }
  for (retcon::Frame f = 0; f < last; ++f) {
    uint64_t a = 0, b = 0;
    ASSERT_TRUE(ms[1]->peer.confirmed_checksum(f, &a));
    ASSERT_TRUE(ms[2]->peer.confirmed_checksum(f, &b));
    ASSERT_EQ(a, b) << "frame " << f;
  }
  // Player 1's machine took over and rounds ended after the leave, alike on both machines.
  EXPECT_GE(ms[1]->peer.rounds_decided(), 2u);
  EXPECT_EQ(ms[2]->peer.rounds_decided(), 0u);
  size_t after_leave = 0;
  for (const auto& e : ends[1]) after_leave += e.first > leave_at;
  EXPECT_GE(after_leave, 2u);
  ASSERT_EQ(ends[1].size(), ends[2].size());
  for (size_t k = 0; k < ends[1].size(); ++k) {
    EXPECT_EQ(ends[1][k].first, ends[2][k].first) << "round " << k;
    EXPECT_EQ(ends[1][k].second, ends[2][k].second) << "round " << k;
  }
}

// A machine whose game differs from frame 300 on (player 0 one health point down there): with
// share_desync_states both machines get the other's state of the desync frame and name the field.
TEST(FighterNetDesync, BothMachinesNameTheFieldThatDiffers) {
  retcon::InMemoryNetwork net;
  std::vector<std::unique_ptr<NetMachine>> ms;
  retcon::LinkProfile link;
  link.latency_us = 40000;
  link.jitter_us = 5000;
  link.loss = 0.05;
  for (int m = 0; m < 2; ++m) {
    auto x = std::make_unique<NetMachine>();
    x->wire = net.add_endpoint();
    x->sim = std::make_unique<retcon::NetworkSimulator>(*x->wire, 5 + uint64_t(m));
    x->sim->set_outgoing(link);
    ms.push_back(std::move(x));
  }
  for (int m = 0; m < 2; ++m) {
    PeerSetup s;
    s.local_player = m;
    s.bot_seed = 11u + uint32_t(m);
    s.transport = ms[size_t(m)]->sim.get();
    for (int p = 0; p < 2; ++p) s.addresses[p] = ms[size_t(p)]->wire->address();
    s.rng_seed = 41 + uint64_t(m);
    s.share_desync_states = true;
    if (m == 1) s.diverge_at = 300;
    ASSERT_EQ(ms[size_t(m)]->peer.start(s), retcon::Result::ok);
  }
  uint64_t now = 0;
  for (int t = 0; t < 3000; ++t) {
    now += 16667;
    for (auto& x : ms) {
      x->sim->set_time(now);
      x->peer.tick(now, 900);
    }
    if (!ms[0]->peer.desync_diff().empty() && !ms[1]->peer.desync_diff().empty()) break;
  }
  for (int m = 0; m < 2; ++m) {
    const FighterPeer& p = ms[size_t(m)]->peer;
    EXPECT_GE(p.desyncs(), 1u);
    EXPECT_GE(p.desync_diff_frame(), 301) << "the first checksummed frame after the divergence";
    EXPECT_NE(p.desync_diff().find("p0.health"), std::string::npos) << "machine " << m << ": " << p.desync_diff();
  }
}

}  // namespace
}  // namespace fighter
