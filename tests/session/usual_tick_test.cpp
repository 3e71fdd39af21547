// The P2P session's usual tick (usual_tick_): while the match is the usual one (running, no
// handshake open, nobody cut, no rejoin, no automatic delay still to pick, no delay change
// pending or of ours out, one local player, no spectators, no desync detection) poll and
// advance_frame run only the routines that match needs, without their tests; every other poll
// is poll_unusual and every other advance advance_unusual, which test each routine. Against the
// general tick (session/tick_path_switch.h: those two on every call) over random matches that
// leave the usual match and come back to it (delay changes, adaptive delay, timed decisions, a
// blackout that stalls the machines, players dropped for silence or through the API, a player
// that crashes and rejoins), every machine must send the same datagrams, byte for byte, to the
// same peers, at the same ticks, and tell its game the same events. And after every tick, no
// machine's byte may say usual where its state is not.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "session/tick_path_switch.h"
#include "support/match_harness.h"
#include "support/played_records.h"

namespace retcon::test {
namespace {

using Sent = SentDatagram;

using Told = SeenEvent;

struct Played {
  std::vector<std::vector<Sent>> sent;  // per machine, in sending order
  std::vector<std::vector<Told>> told;  // per machine, the events its game was told
  std::vector<Frame> confirmed;
  uint64_t usual_ticks = 0;  // player machine ticks that ended with the usual byte set
  uint64_t ticks = 0;
  uint64_t byte_wrong = 0;   // player machine ticks that ended with the byte set out of the usual match
  bool finished = false;
};

// Every player machine's byte after a tick: never usual where the state is not.
void check_bytes(Match& match, Played& out) {
  for (uint32_t m = 0; m < match.size(); ++m) {
    const Machine& me = match.machine(m);
    if (me.spectator || me.stopped) continue;
    ++out.ticks;
    out.usual_ticks += detail::usual_tick_for_tests(*me.session);
    out.byte_wrong += !detail::usual_tick_holds_for_tests(*me.session);
  }
}

void collect(Match& match, Played& out) {
  out.told.resize(match.size());
  for (uint32_t m = 0; m < match.size(); ++m) {
    out.confirmed.push_back(match.machine(m).session->confirmed_frame());
    for (const Event& e : match.machine(m).game.events) out.told[m].push_back({e.type, e.player, e.frame, e.count, e.total});
  }
}

struct Draw {
  uint32_t machines, spectators;
  bool desync, adaptive, drop_by_api, drop_by_silence, freeze;
};

// One random match. `general`: every session polls through poll_unusual and advances through
// advance_unusual.
Played play(uint32_t seed, bool general, const Draw& d) {
  detail::set_general_ticks_for_tests(general);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.machines = d.machines;
  o.spectators = d.spectators;
  o.seed = seed;
  o.frames = 500;
  o.max_prediction = 3 + int32_t(rng() % 8);
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = true;
  o.retry_stalled = rng() % 2 == 0;
  o.catch_up = rng() % 3 == 0;
  o.desync_interval = d.desync ? 7 : 0;
  o.adaptive_delay = d.adaptive;
  if (rng() % 2 == 0) o.delay_changes.push_back({Frame(50 + rng() % 200), int32_t(rng() % 4)});
  o.link.latency_us = 5000 + rng() % 150000;
  o.link.jitter_us = rng() % 30000;
  o.link.loss = 0.01 * double(rng() % 20);
  o.link.reorder = 0.01 * double(rng() % 4);
  const uint64_t blackout = 1500000 + rng() % 2000000;
  o.link.blackouts.push_back({blackout, blackout + 100000 + rng() % 700000});
  o.late_input_threshold = 2 + int32_t(rng() % 6);
  if (d.drop_by_silence || d.freeze) {
    o.notify_delay_us = 300000;
    o.disconnect_timeout_us = 600000;
  }
  Match match(o);
  Played out;
  out.sent.resize(o.machines + o.spectators);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    out.sent[m].push_back({match.now(), to, std::vector<uint8_t>(data, data + length)});
  };
  std::mt19937 decide(seed * 7 + 1);
  // Delay changes made mid-match (apply_input_delay: a timed message to every player machine),
  // by the first machine at two random frames.
  Frame apply_at[4];
  for (int k = 0; k < 4; ++k) apply_at[k] = Frame(60 + 100 * k + rng() % 100);
  bool applied[4] = {};
  match.before_input = [&](uint32_t m) {
    Machine& me = match.machine(m);
    for (int k = 0; k < 4; ++k)
      if (m == 0 && !applied[k] && me.session->current_frame() >= apply_at[k]) {
        applied[k] = true;
        DelayChoice c;
        me.session->apply_input_delay(AdaptiveDelayRule{}, kNullFrame, &c);
      }
    if (decide() % 19 != 0) return;
    const Frame at = me.session->earliest_decision_frame();
    if (at == kNullFrame) return;
    const std::vector<uint8_t> bytes{uint8_t(m), uint8_t(decide())};
    match.send_decision(m, at + Frame(decide() % 4), bytes);
  };
  EXPECT_TRUE(match.build());
  const uint32_t leaver = 1 + uint32_t(rng() % (o.machines - 1));
  const Frame leave_at = Frame(100 + rng() % 200);
  bool left = false;
  for (int t = 0; t < 9000; ++t) {
    if (d.drop_by_api && !left && match.machine(leaver).session->current_frame() >= leave_at) {
      EXPECT_EQ(match.machine(0).session->disconnect_player(PlayerIndex(leaver)), Result::ok) << "seed " << seed;
      match.machine(leaver).stopped = true;
      left = true;
    }
    // A game that freezes (it polls, so its keep-alives flow, but never advances again): the
    // others stall at their windows and drop it when its frames stop (watch_stall, from when its
    // input stream last moved).
    if (d.freeze && !left && match.machine(leaver).session->current_frame() >= leave_at) {
      match.machine(leaver).frozen = true;
      left = true;
    }
    match.tick();
    check_bytes(match, out);
    bool done = true;
    for (uint32_t m = 0; m < o.machines; ++m)
      if (!match.machine(m).stopped && !match.machine(m).frozen && match.machine(m).session->confirmed_frame() < o.frames)
        done = false;
    if (done) {
      out.finished = true;
      break;
    }
  }
  for (int i = 0; i < 60; ++i) {
    match.tick();
    check_bytes(match, out);
  }
  collect(match, out);
  detail::set_general_ticks_for_tests(false);
  return out;
}

// Both plays sent the same datagrams to the same peers at the same ticks and told the same events.
void expect_same_play(const Played& general, const Played& usual, uint32_t seed, uint64_t* datagrams) {
  ASSERT_EQ(usual.finished, general.finished) << "seed " << seed;
  ASSERT_EQ(usual.sent.size(), general.sent.size());
  for (size_t m = 0; m < general.sent.size(); ++m) {
    ASSERT_EQ(usual.sent[m].size(), general.sent[m].size()) << "seed " << seed << " machine " << m;
    for (size_t i = 0; i < general.sent[m].size(); ++i)
      ASSERT_TRUE(usual.sent[m][i] == general.sent[m][i])
          << "seed " << seed << " machine " << m << " datagram " << i << " at " << general.sent[m][i].at_us;
    *datagrams += general.sent[m].size();
  }
  ASSERT_EQ(usual.told.size(), general.told.size());
  for (size_t m = 0; m < general.told.size(); ++m) {
    ASSERT_EQ(usual.told[m].size(), general.told[m].size()) << "seed " << seed << " machine " << m;
    for (size_t i = 0; i < general.told[m].size(); ++i)
      ASSERT_TRUE(usual.told[m][i] == general.told[m][i])
          << "seed " << seed << " machine " << m << " event " << i << " type " << int(general.told[m][i].type);
  }
  EXPECT_EQ(usual.confirmed, general.confirmed) << "seed " << seed;
  EXPECT_EQ(usual.byte_wrong, 0u) << "seed " << seed;
  EXPECT_EQ(general.usual_ticks, 0u) << "seed " << seed;  // the switch: never the usual tick
}

TEST(UsualTick, PlaysAsTheGeneralTickInRandomMatches) {
  uint64_t datagrams = 0, usual = 0, ticks = 0;
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    std::mt19937 rng(seed * 31 + 5);
    Draw d;
    d.machines = seed % 2 == 0 ? 2 : 2 + uint32_t(rng() % 3);  // two: the one-peer poll
    d.spectators = rng() % 4 == 0 ? 1 : 0;
    d.desync = rng() % 4 == 0;
    d.adaptive = rng() % 3 == 0;
    d.drop_by_api = seed % 3 == 1;
    d.drop_by_silence = seed % 3 == 2;
    d.freeze = seed % 3 == 0;
    const Played general = play(seed, true, d), skipping = play(seed, false, d);
    expect_same_play(general, skipping, seed, &datagrams);
    if (::testing::Test::HasFatalFailure()) return;
    usual += skipping.usual_ticks;
    ticks += skipping.ticks;
  }
  EXPECT_GT(datagrams, 10000u);
  // The matches did take the usual tick (until a cut, in those with a drop; never with desync
  // detection, nor on a machine that waits for the adaptive delay's pick).
  EXPECT_GT(usual, ticks / 8);
}

// A player machine crashes and comes back (rejoin_connect, on_rejoin_message, serve_rejoin,
// apply_rejoin, take_rejoin_state, tell_rejoined_players: where a rejoin leaves the usual match
// and where it returns), with the general tick and with the usual one.
Played play_rejoin(uint32_t seed, bool general) {
  detail::set_general_ticks_for_tests(general);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.machines = 2 + uint32_t(rng() % 2);
  o.seed = seed;
  o.frames = 700;
  o.max_prediction = 4 + int32_t(rng() % 6);
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = true;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.desync_interval = 0;
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 1500000;
  o.link.latency_us = 5000 + rng() % 60000;
  o.link.jitter_us = rng() % 10000;
  o.link.loss = 0.01 * double(rng() % 6);
  Match match(o);
  Played out;
  out.sent.resize(o.machines);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    out.sent[m].push_back({match.now(), to, std::vector<uint8_t>(data, data + length)});
  };
  EXPECT_TRUE(match.build());
  const uint32_t leaver = 1 + uint32_t(rng() % (o.machines - 1));
  const Frame leave_at = Frame(40 + rng() % 80);
  for (int t = 0; t < 30000 && match.machine(leaver).session->current_frame() < leave_at; ++t) {
    match.tick();
    check_bytes(match, out);
  }
  match.machine(leaver).stopped = true;
  auto cut_everywhere = [&] {
    for (uint32_t m = 0; m < o.machines; ++m)
      if (m != leaver && match.count_events(m, EventType::disconnected) == 0) return false;
    return true;
  };
  for (int t = 0; t < 30000 && !cut_everywhere(); ++t) {
    match.tick();
    check_bytes(match, out);
  }
  EXPECT_TRUE(cut_everywhere()) << "seed " << seed;
  for (int t = 0; t < int(rng() % 60); ++t) match.tick();
  EXPECT_TRUE(match.restart_rejoining(leaver)) << "seed " << seed;
  std::vector<size_t> answered(match.size(), 0);
  bool done = false;
  for (int t = 0; t < 40000 && !done; ++t) {
    match.tick();
    check_bytes(match, out);
    for (uint32_t m = 0; m < o.machines; ++m) {
      Machine& me = match.machine(m);
      for (size_t k = answered[m]; k < me.game.events.size(); ++k)
        if (me.game.events[k].type == EventType::rejoin_requested) {
          EXPECT_EQ(me.session->answer_rejoin(me.game.events[k].player, true), Result::ok);
        }
      answered[m] = me.game.events.size();
    }
    done = true;
    for (uint32_t m = 0; m < o.machines; ++m)
      if (match.machine(m).session->confirmed_frame() < o.frames) done = false;
  }
  for (int i = 0; i < 60; ++i) {
    match.tick();
    check_bytes(match, out);
  }
  out.finished = done;
  collect(match, out);
  EXPECT_EQ(match.errors(), 0u) << "seed " << seed;
  detail::set_general_ticks_for_tests(false);
  return out;
}

TEST(UsualTick, ARejoinPlaysAsTheGeneralTick) {
  uint64_t datagrams = 0, rejoined = 0, usual = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Played general = play_rejoin(seed, true), skipping = play_rejoin(seed, false);
    ASSERT_TRUE(general.finished) << "seed " << seed;
    expect_same_play(general, skipping, seed, &datagrams);
    if (::testing::Test::HasFatalFailure()) return;
    for (const auto& told : skipping.told)
      for (const Told& t : told) rejoined += t.type == EventType::player_rejoined;
    usual += skipping.usual_ticks;
  }
  EXPECT_GE(rejoined, 8u);  // every machine saw the rejoin in every match
  EXPECT_GT(usual, 1000u);
}

}  // namespace
}  // namespace retcon::test
