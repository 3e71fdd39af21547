// The fighter over a simulated network with rounds ended by timed decisions and the delay
// chosen before each round: every machine (and the spectator) ends every round on the same
// frame with the same winner, no machine shows a round end that is then taken back, and the
// delay every machine uses is the same.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fighter_peer.h"
#include "net_overlay_feed.h"
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
    // Chosen at match start and then before each round, never during one: both players
    // changed it at the same frames, once at the start (before the first round's fight) and
    // once per round decided, each time at the frame the round ended on or later in its
    // round-over pause, so every input the new delay places lands outside a fight.
    const auto& applied = ms[0]->peer.delays_applied();
    ASSERT_EQ(applied.size(), 1 + ms[0]->peer.rounds_decided()) << "seed " << seed;
    EXPECT_LT(applied[0].frame, kIntroFrames) << "the first at match start";
    for (size_t k = 1; k < applied.size(); ++k) {
      bool between = false;
      for (const auto& e : reference) {
        const retcon::Frame ended = e.first - 1;  // the frame whose simulation ended the round
        between = between || (applied[k].frame >= ended && applied[k].frame < ended + kRoundOverFrames);
      }
      EXPECT_TRUE(between) << "change " << k << " at frame " << applied[k].frame;
    }
    ASSERT_EQ(ms[1]->peer.delays_applied().size(), applied.size());
    for (size_t k = 0; k < applied.size(); ++k) {
      EXPECT_EQ(ms[1]->peer.delays_applied()[k].frame, applied[k].frame) << "change " << k;
      EXPECT_EQ(ms[1]->peer.delays_applied()[k].delay, applied[k].delay) << "change " << k;
    }
  }
}

// What a person sees on the overlay: the delay in use, the one the automatic mode chose; and
// when the other player's machine holds its inputs for a second (a lag switch: its outgoing
// traffic cut from 5 s to 6 s, receiving all along) the warning "LAG P2" comes up on player 0's
// overlay within a second of the release, naming player 1 and at least the 15-frame threshold,
// and goes away 3 s later. The honest machine is never shown as late on the other overlay.
TEST(FighterNetOverlay, ShowsTheChosenDelayAndALatenessWarning) {
  retcon::InMemoryNetwork net;
  std::vector<std::unique_ptr<NetMachine>> ms;
  retcon::LinkProfile link;  // transatlantic
  link.latency_us = 50000;
  link.jitter_us = 8000;
  link.loss = 0.05;
  constexpr uint64_t kHoldFrom = 5000000, kHoldTo = 6000000;
  for (int m = 0; m < 2; ++m) {
    auto x = std::make_unique<NetMachine>();
    x->wire = net.add_endpoint();
    x->sim = std::make_unique<retcon::NetworkSimulator>(*x->wire, 500 + uint64_t(m));
    retcon::LinkProfile l = link;
    if (m == 1) l.blackouts.push_back({kHoldFrom, kHoldTo});
    x->sim->set_outgoing(l);
    ms.push_back(std::move(x));
  }
  for (int m = 0; m < 2; ++m) {
    PeerSetup s;
    s.players = 2;
    s.local_player = m;
    s.game_seed = 3;
    s.bot_seed = 11u + uint32_t(m);
    s.transport = ms[size_t(m)]->sim.get();
    for (int p = 0; p < 2; ++p) s.addresses[p] = ms[size_t(p)]->wire->address();
    s.rng_seed = 900 + uint64_t(m);
    s.decided_round_end = true;
    s.adaptive_delay = true;
    ASSERT_EQ(ms[size_t(m)]->peer.start(s), retcon::Result::ok);
  }
  NetOverlay overlay[2];
  uint64_t now = 0, shown_at = 0, gone_at = 0;
  int32_t shown_frames = 0, shown_player = -1;
  bool other_flagged = false;
  for (int t = 0; t < 60 * 12; ++t) {
    now += 16667;
    for (int m = 0; m < 2; ++m) {
      NetMachine& me = *ms[size_t(m)];
      me.sim->set_time(now);
      const PeerTick tick = me.peer.tick(now, 60 * 60 * 10);
      feed_net_overlay(me.peer, tick, &overlay[m]);
    }
    if (overlay[0].late_player >= 0 && shown_at == 0) {
      EXPECT_EQ(overlay[0].late_player, 1);
      shown_at = now;
      shown_frames = overlay[0].late_frames;
      shown_player = overlay[0].late_player;
    }
    if (shown_at != 0 && gone_at == 0 && overlay[0].late_player < 0) gone_at = now;
    other_flagged = other_flagged || overlay[1].late_player >= 0;
  }
  ASSERT_NE(shown_at, 0u) << "no lateness warning on player 0's overlay";
  std::printf("[fighter overlay] LAG P%d +%dF shown %llu ms after the release, for %llu ms; delay shown %d\n",
              int(shown_player + 1), int(shown_frames),
              static_cast<unsigned long long>((shown_at - kHoldTo) / 1000),
              static_cast<unsigned long long>(gone_at > shown_at ? (gone_at - shown_at) / 1000 : 0),
              int(overlay[0].input_delay));
  EXPECT_GE(shown_at, kHoldTo) << "shown before anything was released";
  EXPECT_LE(shown_at - kHoldTo, 1000000u) << "shown within a second of the release";
  EXPECT_GE(shown_frames, 15);
  ASSERT_NE(gone_at, 0u) << "the warning stays up for good";
  EXPECT_NEAR(double(gone_at - shown_at), 3e6, 0.5e6) << "up for about 3 s";
  EXPECT_FALSE(other_flagged) << "player 0 is honest";
  // The delay shown is the one the automatic mode applied (transatlantic: 3-4), on both.
  ASSERT_FALSE(ms[0]->peer.delays_applied().empty());
  EXPECT_GE(overlay[0].input_delay, 3);
  EXPECT_EQ(overlay[0].input_delay, ms[0]->peer.delays_applied().back().delay);
  EXPECT_EQ(overlay[1].input_delay, overlay[0].input_delay);
  EXPECT_EQ(ms[0]->peer.errors(), 0u);
  EXPECT_EQ(ms[0]->peer.desyncs(), 0u);
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
