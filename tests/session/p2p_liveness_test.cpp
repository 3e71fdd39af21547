// Liveness: whenever a session cannot advance, the game is told, and a peer that is gone is
// dropped so the others go on. Each test plays a whole match on the virtual clock and asserts
// what a player would notice: who gets which event when, that the survivors run, and that their
// states agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "support/liveness_monitor.h"
#include "support/match_checks.h"

namespace retcon::test {
namespace {

constexpr uint64_t kTick = 16667;

size_t match_count(const std::vector<Event>& events, EventType type) {
  size_t n = 0;
  for (const Event& e : events) n += e.type == type;
  return n;
}

// Survivors' recorded states agree frame by frame up to what each confirmed.
void expect_survivors_agree(Match& match, const std::vector<uint32_t>& survivors, Frame upto) {
  for (uint32_t m : survivors) {
    Machine& me = match.machine(m);
    EXPECT_EQ(me.game.frame_errors, 0) << "machine " << m;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
    EXPECT_GE(me.session->confirmed_frame(), upto) << "machine " << m;
  }
  for (Frame f = 0; f <= upto; ++f)
    for (uint32_t m : survivors)
      ASSERT_EQ(match.machine(m).hashes[size_t(f)], match.machine(survivors[0]).hashes[size_t(f)])
          << "machine " << m << " frame " << f;
}

// One machine dies at `death_tick` (from the first poll, handshake included). Returns whether,
// at that moment, some survivor had synchronized with it and another had not.
struct DeathOutcome {
  bool asymmetric = false;  // synchronized with some survivors but not all
  bool dead_ran = false;    // its session was running when it died
};

DeathOutcome die_during_handshake(uint32_t machines, int death_tick, uint64_t seed) {
  MatchOptions o;
  o.machines = machines;
  o.frames = 240;
  o.seed = seed;
  o.link.latency_us = 40000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.05;
  Match match(o);
  EXPECT_TRUE(match.build());
  LivenessMonitor monitor(match, {});
  const uint32_t dead = machines - 1;
  const PlayerIndex dead_player = PlayerIndex(dead);
  std::vector<uint32_t> survivors;
  for (uint32_t m = 0; m < dead; ++m) survivors.push_back(m);

  DeathOutcome out;
  uint64_t death_at = 0;
  bool done = false;
  for (int t = 0; t < 60 * 40 && !done; ++t) {
    if (t == death_tick) {
      size_t synced = 0;
      for (uint32_t m : survivors) synced += monitor.find_event(m, EventType::synchronized, dead_player) >= 0;
      out.asymmetric = synced > 0 && synced < survivors.size();
      out.dead_ran = match.machine(dead).session->running();
      match.machine(dead).stopped = true;
      death_at = match.now();
    }
    match.tick();
    monitor.observe();
    if (t > death_tick) {
      done = true;
      for (uint32_t m : survivors)
        if (match.machine(m).session->confirmed_frame() < o.frames) done = false;
    }
  }
  EXPECT_EQ(monitor.violation(), "");
  EXPECT_TRUE(done) << "the survivors did not finish the match";
  EXPECT_EQ(match.errors(), 0u);
  for (uint32_t m : survivors) {
    // Told of the death within the handshake timeout (or the silence timeout, if it had
    // synchronized with us and died later), and the match runs without it.
    const long gone = monitor.find_event(m, EventType::disconnected, dead_player);
    EXPECT_GE(gone, 0) << "machine " << m << " was never told";
    if (gone < 0) continue;
    const uint64_t told_at = monitor.event_time(m, size_t(gone));
    EXPECT_LE(told_at, death_at + 10000000 + 500000) << "machine " << m;
    EXPECT_GE(monitor.find_event(m, EventType::running), 0) << "machine " << m;
    EXPECT_LT(monitor.find_event(m, EventType::cannot_continue), 0) << "machine " << m;
  }
  expect_survivors_agree(match, survivors, o.frames);
  if (!out.dead_ran) {
    // It never played: every survivor's match is the match without its players at all.
    std::vector<Frame> cut(machines, -2);
    cut[dead] = -1;
    const std::vector<uint64_t> ref = match.reference(cut);
    for (uint32_t m : survivors)
      for (Frame f = 0; f <= o.frames; ++f) {
        EXPECT_EQ(match.machine(m).hashes[size_t(f)], ref[size_t(f)]) << "machine " << m << " frame " << f;
        if (match.machine(m).hashes[size_t(f)] != ref[size_t(f)]) break;
      }
  }
  return out;
}

void peer_dies_mid_handshake(uint32_t machines) {
  int asymmetric = 0;
  // A round trip takes ~5 ticks; the handshake (5 round trips) ~25. Every moment of it.
  for (int death_tick = 0; death_tick < 90; death_tick += 2) {
    SCOPED_TRACE("death at tick " + std::to_string(death_tick));
    const DeathOutcome o = die_during_handshake(machines, death_tick, uint64_t(death_tick) + 1);
    asymmetric += o.asymmetric;
    if (testing::Test::HasFatalFailure()) return;
  }
  // The case that deadlocked: synchronized with one survivor, not with another.
  EXPECT_GT(asymmetric, 0);
}

TEST(P2PLiveness, PeerDyingMidHandshakeWithThreePlayersLeavesTheOthersPlaying) { peer_dies_mid_handshake(3); }

TEST(P2PLiveness, PeerDyingMidHandshakeWithFourPlayersLeavesTheOthersPlaying) { peer_dies_mid_handshake(4); }

// Two players, and the only peer never answers: the session must not run alone; it says the
// match cannot start, within the handshake timeout.
TEST(P2PLiveness, TwoPlayersWhosePeerNeverAnswersAreToldTheMatchCannotStart) {
  MatchOptions o;
  o.machines = 2;
  o.handshake_timeout_us = 3000000;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).stopped = true;
  LivenessMonitor::Limits limits;
  limits.handshake_timeout_us = o.handshake_timeout_us;
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < 60 * 6; ++t) {
    match.tick();
    monitor.observe();
  }
  EXPECT_EQ(monitor.violation(), "");
  EXPECT_FALSE(match.machine(0).session->running());
  const long gone = monitor.find_event(0, EventType::disconnected, 1);
  const long over = monitor.find_event(0, EventType::cannot_continue);
  ASSERT_GE(gone, 0);
  ASSERT_GE(over, 0);
  EXPECT_LE(monitor.event_time(0, size_t(over)), o.handshake_timeout_us + 3 * kTick);  // from the first poll
  EXPECT_LT(monitor.find_event(0, EventType::running), 0);
  const uint8_t input[2] = {};
  EXPECT_EQ(match.machine(0).session->add_local_input(0, input, sizeof input), Result::not_synchronized);
}

// Dropping the only peer by API before it synchronized does not start a match alone either.
TEST(P2PLiveness, DroppingTheOnlyPeerBeforeItSynchronizedDoesNotStartAMatchAlone) {
  MatchOptions o;
  o.machines = 2;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).stopped = true;
  match.tick();
  ASSERT_EQ(match.machine(0).session->disconnect_player(1), Result::ok);
  for (int t = 0; t < 10; ++t) match.tick();
  EXPECT_FALSE(match.machine(0).session->running());
  EXPECT_EQ(match.count_events(0, EventType::cannot_continue), 1u);
  EXPECT_EQ(match.count_events(0, EventType::running), 0u);
}

// Timeouts off, and a peer black-holed twice: no disconnect ever, but each stall is told once,
// after the notify delay, naming the player awaited; the match resumes after each blackout.
TEST(P2PLiveness, BlackHoleWithTimeoutsOffIsToldOncePerStall) {
  MatchOptions o;
  o.machines = 2;
  o.frames = 100000;
  o.disconnect_timeout_us = 0;
  o.notify_delay_us = 500000;
  Match match(o);
  ASSERT_TRUE(match.build());
  LinkProfile holes;
  holes.blackouts = {{3000000, 8000000}, {12000000, 20000000}};
  match.machine(1).sim->set_outgoing(holes);
  LivenessMonitor::Limits limits;
  limits.notify_delay_us = o.notify_delay_us;
  limits.disconnect_timeout_us = 0;
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < 60 * 24; ++t) {
    match.tick();
    monitor.observe();
  }
  EXPECT_EQ(monitor.violation(), "");
  EXPECT_GT(monitor.longest_stall_us(), 4000000u);
  // Machine 0 waited for player 1 in each blackout: told once each time, at the notify delay.
  std::vector<uint64_t> told;
  const std::vector<Event>& events = match.machine(0).game.events;
  for (size_t k = 0; k < events.size(); ++k) {
    if (events[k].type != EventType::prediction_limit) continue;
    EXPECT_EQ(events[k].player, 1);
    EXPECT_GE(events[k].frame, 0);
    told.push_back(monitor.event_time(0, k));
  }
  ASSERT_EQ(told.size(), 2u);
  EXPECT_GT(told[0], 3000000u);
  EXPECT_LT(told[0], 3000000u + 8 * kTick + o.notify_delay_us + 3 * kTick);
  EXPECT_GT(told[1], 12000000u);
  EXPECT_LT(told[1], 12000000u + 8 * kTick + o.notify_delay_us + 3 * kTick);
  EXPECT_EQ(match.count_events(0, EventType::disconnected), 0u);
  // And it plays on after each blackout.
  EXPECT_GT(match.machine(0).session->confirmed_frame(), 60 * 10);  // 24 s less 13 s of blackouts
  expect_survivors_agree(match, {0, 1}, std::min(match.machine(0).session->confirmed_frame(),
                                                 match.machine(1).session->confirmed_frame()));
}

// A peer that keeps sending keep-alives while its game no longer advances: the endpoint sees a
// live connection, the session sees a stream that does not move. Told after the notify delay,
// dropped after the disconnect timeout, and the other machine plays on.
TEST(P2PLiveness, PeerWhoseFramesStopButKeepsSendingIsDropped) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 100000;
  Match match(o);
  ASSERT_TRUE(match.build());
  LivenessMonitor monitor(match, {});
  uint64_t frozen_at = 0;
  for (int t = 0; t < 60 * 15; ++t) {
    if (t == 60 * 3) {
      match.machine(2).frozen = true;
      frozen_at = match.now();
    }
    match.tick();
    monitor.observe();
  }
  EXPECT_EQ(monitor.violation(), "");
  for (uint32_t m : {0u, 1u}) {
    EXPECT_EQ(match.count_events(m, EventType::connection_interrupted), 0u) << "machine " << m;  // it was heard
    const long stall = monitor.find_event(m, EventType::prediction_limit, 2);
    const long gone = monitor.find_event(m, EventType::disconnected, 2);
    ASSERT_GE(stall, 0) << "machine " << m;
    ASSERT_GE(gone, 0) << "machine " << m;
    EXPECT_LE(monitor.event_time(m, size_t(stall)), frozen_at + 1000000 + 750000);
    EXPECT_GE(monitor.event_time(m, size_t(gone)), frozen_at + 5000000);
    EXPECT_LE(monitor.event_time(m, size_t(gone)), frozen_at + 5000000 + 1000000);
    EXPECT_GT(match.machine(m).session->current_frame(), 60 * 9) << "machine " << m << " did not go on";
  }
  expect_survivors_agree(match, {0, 1}, std::min(match.machine(0).session->confirmed_frame(),
                                                 match.machine(1).session->confirmed_frame()));
}

// A machine frozen before its first frame (it handshakes, then never advances), with the
// handshake timeout off: every survivor drops it after the disconnect timeout plus the first-frame
// grace, and hears of it then, not a round trip later: nobody can report a cut earlier than "no
// frame at all", so there is nothing to wait for. The property test found this (issue 9).
TEST(P2PLiveness, PeerFrozenBeforeItsFirstFrameIsAnnouncedWithoutWaitingForTheOthers) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 100000;
  o.disconnect_timeout_us = 2000000;
  o.handshake_timeout_us = 0;
  o.notify_delay_us = 0;
  o.link.latency_us = 80000;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(2).frozen = true;
  LivenessMonitor::Limits limits;
  limits.notify_delay_us = o.notify_delay_us;
  limits.disconnect_timeout_us = o.disconnect_timeout_us;
  limits.handshake_timeout_us = 0;
  LivenessMonitor monitor(match, limits);
  for (int t = 0; t < 60 * 10; ++t) {
    match.tick();
    monitor.observe();
  }
  EXPECT_EQ(monitor.violation(), "");
  for (uint32_t m : {0u, 1u}) {
    const long running = monitor.find_event(m, EventType::running);
    const long gone = monitor.find_event(m, EventType::disconnected, 2);
    ASSERT_GE(running, 0) << "machine " << m;
    ASSERT_GE(gone, 0) << "machine " << m;
    // The grace for a peer that never sent a frame is the disconnect timeout again (no handshake
    // timeout): dropped 4 s after running, announced within a few ticks of that.
    EXPECT_LE(monitor.event_time(m, size_t(gone)), monitor.event_time(m, size_t(running)) + 4000000 + 3 * kTick)
        << "machine " << m;
    EXPECT_EQ(match.machine(m).game.events[size_t(gone)].frame, kNullFrame) << "machine " << m;
    EXPECT_GT(match.machine(m).session->current_frame(), 60 * 4) << "machine " << m << " did not go on";
  }
  expect_survivors_agree(match, {0, 1}, std::min(match.machine(0).session->confirmed_frame(),
                                                 match.machine(1).session->confirmed_frame()));
}

// A peer that stops receiving (so stops acknowledging) but still sends: the others hear it and
// get its frames, it hears nobody. It drops them after its silence timeout, they learn it from
// its connect status and part ways with it; every machine keeps playing.
TEST(P2PLiveness, PeerThatStopsAcknowledgingPartsWaysAndEveryoneGoesOn) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 100000;
  Match match(o);
  ASSERT_TRUE(match.build());
  LinkProfile deaf;
  deaf.blackouts = {{3000000, UINT64_MAX}};
  match.machine(2).sim->set_incoming(deaf);
  LivenessMonitor monitor(match, {});
  for (int t = 0; t < 60 * 15; ++t) {
    match.tick();
    monitor.observe();
  }
  EXPECT_EQ(monitor.violation(), "");
  for (uint32_t m : {0u, 1u}) {
    const long gone = monitor.find_event(m, EventType::disconnected, 2);
    ASSERT_GE(gone, 0) << "machine " << m;
    EXPECT_LE(monitor.event_time(m, size_t(gone)), 3000000u + 5000000u + 1000000u) << "machine " << m;
    EXPECT_GT(match.machine(m).session->current_frame(), 60 * 9) << "machine " << m;
  }
  EXPECT_GE(monitor.find_event(2, EventType::cannot_continue), 0);  // alone now, and told so
  expect_survivors_agree(match, {0, 1}, std::min(match.machine(0).session->confirmed_frame(),
                                                 match.machine(1).session->confirmed_frame()));
}

// The handshake timeout is the config's: with it off, a silent peer is waited for (the match
// has not started, so no stall), and nothing is dropped.
TEST(P2PLiveness, HandshakeTimeoutZeroWaitsForever) {
  MatchOptions o;
  o.machines = 3;
  o.handshake_timeout_us = 0;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(2).stopped = true;
  for (int t = 0; t < 60 * 30; ++t) match.tick();
  EXPECT_FALSE(match.machine(0).session->running());
  EXPECT_EQ(match.count_events(0, EventType::disconnected), 0u);
  EXPECT_EQ(match.count_events(0, EventType::cannot_continue), 0u);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// The C++ sessions guard themselves too: a call that changes the session, made from inside one
// of its callbacks, is refused with wrong_state instead of re-entering the frame loop.
struct Reentrant {
  TestGame game;
  P2PSession* session = nullptr;
  std::vector<Result> results;
  bool armed = false;
};

TEST(P2PLiveness, CallsFromInsideCallbacksAreRefusedInCpp) {
  InMemoryNetwork net;
  InMemoryTransport* wires[2] = {net.add_endpoint(), net.add_endpoint()};
  Reentrant machines[2];
  std::unique_ptr<P2PSession> sessions[2];
  for (uint32_t i = 0; i < 2; ++i) {
    P2PConfig c;
    c.session.num_players = 2;
    c.session.input_size = 1;
    c.session.max_state_size = 256;
    c.session.callbacks = bind_game(machines[i].game);
    c.session.callbacks.user = &machines[i];
    c.session.callbacks.save_state = [](void* u, Frame f, uint8_t* b, size_t n) {
      return static_cast<Reentrant*>(u)->game.save_state(f, b, n);
    };
    c.session.callbacks.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
      static_cast<Reentrant*>(u)->game.load_state(f, b, n);
    };
    c.session.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
      static_cast<Reentrant*>(u)->game.advance_frame(f, *in, flags);
    };
    c.session.callbacks.describe_state = nullptr;
    c.session.callbacks.checksum = nullptr;
    c.session.callbacks.on_event = [](void* u, const Event* e) {
      auto* r = static_cast<Reentrant*>(u);
      r->game.on_event(*e);
      if (!r->armed) return;
      const uint8_t in = 1;
      r->results.push_back(r->session->add_local_input(0, &in, 1));
      r->results.push_back(r->session->advance_frame());
      r->results.push_back(r->session->poll(1));
      r->results.push_back(r->session->set_input_delay(0, 2));
      r->results.push_back(r->session->disconnect_player(1));
      DelayChoice choice;
      r->results.push_back(r->session->choose_input_delay(AdaptiveDelayRule{}, &choice));  // emits an event
      r->results.push_back(r->session->apply_input_delay(AdaptiveDelayRule{}, kNullFrame, &choice));
      r->results.push_back(r->session->between_rounds());
      const uint8_t decision = 7;
      r->results.push_back(r->session->send_decision(&decision, 1, r->session->current_frame() + 100, nullptr));
    };
    c.network.transport = wires[i];
    c.network.rng_seed = 3 + i;
    for (uint32_t p = 0; p < 2; ++p) {
      c.players[p].kind = p == i ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = wires[p]->address();
    }
    ASSERT_EQ(create_p2p_session(c, &sessions[i]), Result::ok);
    machines[i].session = sessions[i].get();
  }
  machines[0].armed = true;  // from the events of poll (synchronizing, synchronized, running)
  uint64_t now = 0;
  for (int t = 0; t < 100; ++t) {
    now += kTick;
    for (uint32_t i = 0; i < 2; ++i) {
      sessions[i]->poll(now);
      if (!sessions[i]->running()) continue;
      const uint8_t in = uint8_t(t);
      sessions[i]->add_local_input(PlayerIndex(i), &in, 1);
      sessions[i]->advance_frame();
    }
  }
  ASSERT_FALSE(machines[0].results.empty());
  for (Result r : machines[0].results) EXPECT_EQ(r, Result::wrong_state);
  // None of them took effect: player 1 is still connected and both ran to the same frame.
  EXPECT_EQ(machines[0].game.frame_errors, 0);
  EXPECT_GT(sessions[0]->current_frame(), 50);
  EXPECT_EQ(match_count(machines[0].game.events, EventType::disconnected), 0u);
}

}  // namespace
}  // namespace retcon::test
