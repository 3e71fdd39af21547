// The P2P session's send passes (send_due) skip what cannot be due: they ask an endpoint for the
// urgency only where it reads it, and leave a quiet endpoint's report and channel work alone;
// advance_frame's (advance_sends) queues each player peer's new frame right before that peer's
// part of the pass, in one loop (the full path queues to every peer first, then passes).
// Against their full path (session/send_pass_switch.h: the urgency worked out and told to every
// endpoint, every endpoint polled through its plain calls) over random matches, every machine
// must send the same datagrams, byte for byte, to the same peers, at the same ticks, and the
// match must play the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "session/send_pass_switch.h"
#include "support/match_checks.h"
#include "support/match_harness.h"
#include "support/played_records.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

using Sent = SentDatagram;

// What a game sees of an event, and of a peer's lateness (the judge reads when our inputs of
// each frame first went out: the send passes keep that timeline).
using Seen = SeenEvent;

struct Played {
  std::vector<std::vector<Sent>> sent;  // per machine, in sending order
  std::vector<std::vector<Seen>> events;  // per machine
  std::vector<int32_t> lateness;          // per machine and player: the worst seen (0 for its own)
  size_t late_events = 0;
  std::vector<Frame> confirmed;
  std::vector<uint64_t> stalls;
  size_t decisions = 0;
  bool finished = false;
};

// One random match: 2 or 3 player machines (sometimes a spectator), latency, jitter, loss,
// reordering and a blackout (the machines stall at their prediction windows), small windows,
// input delay, timed decisions over the reliable channel, checksum reports, quality reports
// every half second, machines that poll again and retry a refused frame in the same tick; in
// `lag_every`-th match (0: none) machine 1 holds what it sends for a while (a lag switch, its
// inputs judged late by the others).
// `machines`, `spectators`: that many instead of the random draw (0: drawn).
Played play(uint32_t seed, bool full, uint32_t machines = 0, uint32_t spectators = 0, uint32_t lag_every = 0) {
  detail::set_full_send_passes_for_tests(full);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.machines = 2 + rng() % 2;
  o.spectators = rng() % 3 == 0 ? 1 : 0;
  if (machines != 0) o.machines = machines;
  if (spectators != 0) o.spectators = spectators;
  o.seed = seed;
  o.frames = 420;
  o.max_prediction = 3 + int32_t(rng() % 8);
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = rng() % 2 == 0;
  o.retry_stalled = rng() % 2 == 0;
  o.catch_up = rng() % 3 == 0;
  o.link.latency_us = 5000 + rng() % 90000;
  o.link.jitter_us = rng() % 15000;
  o.link.loss = 0.01 * double(rng() % 12);
  o.link.reorder = 0.01 * double(rng() % 5);
  const uint64_t blackout = 1500000 + rng() % 2000000;
  o.link.blackouts.push_back({blackout, blackout + 100000 + rng() % 900000});
  Match match(o);
  Played out;
  out.sent.resize(o.machines + o.spectators);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    out.sent[m].push_back({match.now(), to, std::vector<uint8_t>(data, data + length)});
  };
  std::mt19937 lag(seed * 13 + 5);  // its own draws: the matches above stay as they were
  const bool lag_switch = lag_every != 0 && seed % lag_every == 0;
  const uint64_t lag_from = 2000000 + lag() % 1500000, lag_to = lag_from + 400000 + lag() % 800000;
  std::mt19937 decide(seed * 7 + 1);
  match.before_input = [&](uint32_t m) {
    if (decide() % 23 != 0) return;
    Machine& me = match.machine(m);
    const Frame at = me.session->earliest_decision_frame();
    if (at == kNullFrame) return;
    const std::vector<uint8_t> bytes{uint8_t(m), uint8_t(decide())};
    if (match.send_decision(m, at + Frame(decide() % 4), bytes) == Result::ok) ++out.decisions;
  };
  EXPECT_TRUE(match.build());
  if (lag_switch) {
    LinkProfile held = o.link;
    held.blackouts = {o.link.blackouts[0], BlackoutWindow{lag_from, lag_to}};
    match.machine(1).sim->set_outgoing(held);
  }
  out.finished = match.run(6000);
  for (int i = 0; i < 90; ++i) match.tick();
  out.events.resize(match.size());
  for (uint32_t m = 0; m < match.size(); ++m) {
    out.confirmed.push_back(match.machine(m).session->confirmed_frame());
    out.stalls.push_back(match.machine(m).stalls);
    for (const Event& e : match.machine(m).game.events) {
      out.events[m].push_back({e.type, e.player, e.frame, e.count, e.total});
      out.late_events += e.type == EventType::late_inputs;
    }
    for (uint32_t p = 0; m < o.machines && p < o.machines; ++p) {
      PeerStats s{};
      const bool remote = match.machine(m).session->peer_stats(PlayerIndex(p), &s) == Result::ok;
      out.lateness.push_back(remote ? s.lateness_max_frames : 0);
    }
  }
  EXPECT_EQ(match.errors(), 0u) << "seed " << seed;
  expect_agree_with_reference(match, o.frames, true);
  detail::set_full_send_passes_for_tests(false);
  return out;
}

// Both plays sent the same datagrams to the same peers at the same ticks, and played alike.
void expect_same_play(const Played& full, const Played& skipping, uint32_t seed, uint64_t* datagrams) {
  ASSERT_TRUE(full.finished) << "seed " << seed;
  ASSERT_TRUE(skipping.finished) << "seed " << seed;
  ASSERT_EQ(skipping.sent.size(), full.sent.size());
  for (size_t m = 0; m < full.sent.size(); ++m) {
    ASSERT_GT(full.sent[m].size(), 100u) << "seed " << seed << " machine " << m;
    ASSERT_EQ(skipping.sent[m].size(), full.sent[m].size()) << "seed " << seed << " machine " << m;
    for (size_t i = 0; i < full.sent[m].size(); ++i)
      ASSERT_TRUE(skipping.sent[m][i] == full.sent[m][i])
          << "seed " << seed << " machine " << m << " datagram " << i << " at " << full.sent[m][i].at_us;
    *datagrams += full.sent[m].size();
  }
  EXPECT_EQ(skipping.confirmed, full.confirmed) << "seed " << seed;
  EXPECT_EQ(skipping.stalls, full.stalls) << "seed " << seed;
  EXPECT_EQ(skipping.decisions, full.decisions) << "seed " << seed;
  EXPECT_TRUE(skipping.events == full.events) << "seed " << seed;
  EXPECT_EQ(skipping.lateness, full.lateness) << "seed " << seed;
}

// poll's usual pass asks every peer whether it is quiet first (send_due_poll_pass) and hands the
// rest of the pass over at the first peer that is not (finish_poll_pass): machine 0 of a match of
// four players and two spectators has five peers, three players then two spectators, so the
// hand-over comes at every place in its list, for the endpoint or for the channel (decisions),
// and the other machines' at each of their three.
TEST(SendPasses, PollsQuietProbeHandsOverAtAnyPeer) {
  uint64_t datagrams = 0;
  for (uint32_t seed = 21; seed <= 24; ++seed) {
    const Played full = play(seed, true, 4, 2), skipping = play(seed, false, 4, 2);
    expect_same_play(full, skipping, seed, &datagrams);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_GT(full.decisions, 3u) << "seed " << seed;
  }
  EXPECT_GT(datagrams, 10000u);
}

TEST(SendPasses, SkippingPassesSendWhatTheFullPassesSend) {
  uint64_t stalls = 0, datagrams = 0;
  size_t decisions = 0, late = 0;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const Played full = play(seed, true), skipping = play(seed, false);
    expect_same_play(full, skipping, seed, &datagrams);
    if (::testing::Test::HasFatalFailure()) return;
    for (uint64_t s : full.stalls) stalls += s;
    decisions += full.decisions;
  }
  // Two or three machines, one of them a lag switch in every other match: advance_sends' steps
  // for the usual frame (advance_sends_one, advance_sends_all) against the full passes, the
  // judge's verdicts included.
  for (uint32_t seed = 31; seed <= 38; ++seed) {
    const uint32_t machines = 2 + (seed / 2) % 2;  // lag switches in matches of both sizes
    const Played full = play(seed, true, machines, 0, 2), skipping = play(seed, false, machines, 0, 2);
    expect_same_play(full, skipping, seed, &datagrams);
    if (::testing::Test::HasFatalFailure()) return;
    decisions += full.decisions;
    late += full.late_events;
  }
  // The matches did what they are here for: frames refused at the window, decisions sent,
  // inputs judged late.
  EXPECT_GT(stalls, 20u);
  EXPECT_GT(decisions, 20u);
  EXPECT_GT(datagrams, 5000u);
  EXPECT_GE(late, 3u);
}

// A match in which a player machine crashes and comes back (rejoin_connect, apply_rejoin,
// resend_local_inputs, take_rejoin_state: where the streams restart and resume), played with the
// full passes and with the skipping ones: send_local_inputs' idle mark (idle_ready_, forgotten on
// each of those) must leave every machine sending the same datagrams at the same ticks as the
// walk over the peers, which the full passes always take.
Played play_rejoin(uint32_t seed, bool full) {
  detail::set_full_send_passes_for_tests(full);
  std::mt19937 rng(seed);
  MatchOptions o;
  o.machines = 3;
  o.seed = seed;
  o.frames = 700;
  o.max_prediction = 4 + int32_t(rng() % 6);
  o.input_delay = int32_t(rng() % 3);
  o.random_inputs = true;
  o.allow_rejoin = true;
  o.state_transfer = true;
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
  const uint32_t leaver = 1 + rng() % 2;
  const Frame leave_at = Frame(40 + rng() % 80);
  for (int t = 0; t < 30000 && match.machine(leaver).session->current_frame() < leave_at; ++t) match.tick();
  match.machine(leaver).stopped = true;
  auto cut_everywhere = [&] {
    for (uint32_t m = 0; m < o.machines; ++m)
      if (m != leaver && match.count_events(m, EventType::disconnected) == 0) return false;
    return true;
  };
  for (int t = 0; t < 30000 && !cut_everywhere(); ++t) match.tick();
  EXPECT_TRUE(cut_everywhere()) << "seed " << seed;
  for (int t = 0; t < int(rng() % 60); ++t) match.tick();
  EXPECT_TRUE(match.restart_rejoining(leaver)) << "seed " << seed;
  std::vector<size_t> answered(match.size(), 0);
  bool done = false;
  for (int t = 0; t < 40000 && !done; ++t) {
    match.tick();
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
  out.finished = done;
  for (uint32_t m = 0; m < match.size(); ++m) {
    out.confirmed.push_back(match.machine(m).session->confirmed_frame());
    out.stalls.push_back(match.count_events(m, EventType::player_rejoined));
  }
  EXPECT_EQ(match.errors(), 0u) << "seed " << seed;
  detail::set_full_send_passes_for_tests(false);
  return out;
}

TEST(SendPasses, ARejoinSendsWhatTheFullPassesSend) {
  uint64_t rejoined = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Played full = play_rejoin(seed, true), skipping = play_rejoin(seed, false);
    ASSERT_TRUE(full.finished) << "seed " << seed;
    ASSERT_TRUE(skipping.finished) << "seed " << seed;
    ASSERT_EQ(skipping.sent.size(), full.sent.size());
    for (size_t m = 0; m < full.sent.size(); ++m) {
      ASSERT_EQ(skipping.sent[m].size(), full.sent[m].size()) << "seed " << seed << " machine " << m;
      for (size_t i = 0; i < full.sent[m].size(); ++i)
        ASSERT_TRUE(skipping.sent[m][i] == full.sent[m][i])
            << "seed " << seed << " machine " << m << " datagram " << i << " at " << full.sent[m][i].at_us;
    }
    EXPECT_EQ(skipping.confirmed, full.confirmed) << "seed " << seed;
    EXPECT_EQ(skipping.stalls, full.stalls) << "seed " << seed;  // the player_rejoined events
    for (uint64_t r : full.stalls) rejoined += r;
  }
  EXPECT_GE(rejoined, 8u);  // every machine saw the rejoin in every match
}


// A rejoin whose host dies after its notice reached machine 1 but not machine 2 (as in
// rejoin_partial_notice_test.cpp): machine 1 relays the notice to machine 2 and holds its inputs
// from the live frame on until machine 2 acknowledged it (session/rejoin.h, the relay hold),
// while no decision of its own and no rejoin notice of its own is in flight. Played with the full
// passes (every hold asked for every peer) and with the skipping ones (the holds asked only
// while one may apply: holds_may_apply), every machine must send the same datagrams at the
// same ticks. `lossy`: 3% loss, so the relayed notice may need a resend.
Played play_relayed_notice(uint32_t seed, bool full, bool lossy, Frame* live, Frame* relayed) {
  detail::set_full_send_passes_for_tests(full);
  MatchOptions o = slow_transfer_rejoin_options(700);
  o.machines = 4;
  o.seed = seed;
  o.random_inputs = true;
  o.state_padding = 0;
  o.max_prediction = 30;
  o.link.loss = lossy ? 0.03 : 0.0;
  Match match(o);
  Played out;
  out.sent.resize(o.machines);
  match.on_send = [&](uint32_t m, const PeerAddress& to, const uint8_t* data, size_t length) {
    out.sent[m].push_back({match.now(), to, std::vector<uint8_t>(data, data + length)});
  };
  EXPECT_TRUE(match.build());
  crash_and_restart(match, 3, 150, 0);
  std::vector<size_t> answered;
  for (int t = 0; t < 1500 && seen(match, 0, 3).rejoining == kNullFrame; ++t) {
    match.tick();
    answer_requests(match, answered, true);
  }
  *live = seen(match, 0, 3).rejoining;
  match.block(0, 2);  // from the stamp on, nothing of the host's reaches machine 2
  for (int t = 0; t < 600 && seen(match, 1, 3).rejoining == kNullFrame; ++t) match.tick();
  // Machine 1 plays past the live frame before the host dies (its window reaches that far
  // beyond machine 2's last input, and machine 2's beyond the host's last), so that once it
  // relays the notice, every frame it goes on to play is one the relay hold keeps from machine 2.
  for (int t = 0; t < 600 && match.machine(1).session->current_frame() < *live + 2; ++t) match.tick();
  match.machine(0).stopped = true;  // the host dies
  match.block(1, 2);
  for (int t = 0; t < 3000; ++t) {
    if (t == 30) match.block(1, 2, false);  // (half a second: nobody is dropped for it)
    match.tick();
    Machine& back = match.machine(3);
    if (!back.stopped && !back.session->running() && match.count_events(3, EventType::cannot_continue) > 0)
      back.stopped = true;  // it gave up
    if (match.machine(1).session->confirmed_frame() >= o.frames && match.machine(2).session->confirmed_frame() >= o.frames)
      break;
  }
  out.finished = match.machine(1).session->confirmed_frame() >= o.frames &&
                 match.machine(2).session->confirmed_frame() >= o.frames;
  *relayed = seen(match, 2, 3).rejoining;
  for (uint32_t m = 0; m < match.size(); ++m) out.confirmed.push_back(match.machine(m).session->confirmed_frame());
  EXPECT_EQ(match.errors(), 0u) << "seed " << seed;
  detail::set_full_send_passes_for_tests(false);
  return out;
}

TEST(SendPasses, ARelayedRejoinNoticeHoldsAsTheFullPassesHold) {
  uint64_t datagrams = 0;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const bool lossy = seed > 4;
    Frame live_full = kNullFrame, relayed_full = kNullFrame, live = kNullFrame, relayed = kNullFrame;
    const Played full = play_relayed_notice(seed, true, lossy, &live_full, &relayed_full);
    const Played skipping = play_relayed_notice(seed, false, lossy, &live, &relayed);
    ASSERT_NE(live_full, kNullFrame) << "seed " << seed << ": the host stamped the rejoin";
    ASSERT_EQ(relayed_full, live_full) << "seed " << seed << ": machine 2 heard of it from machine 1 only";
    ASSERT_TRUE(full.finished) << "seed " << seed;
    ASSERT_TRUE(skipping.finished) << "seed " << seed;
    EXPECT_EQ(live, live_full) << "seed " << seed;
    EXPECT_EQ(relayed, relayed_full) << "seed " << seed;
    ASSERT_EQ(skipping.sent.size(), full.sent.size());
    for (size_t m = 0; m < full.sent.size(); ++m) {
      ASSERT_EQ(skipping.sent[m].size(), full.sent[m].size()) << "seed " << seed << " machine " << m;
      for (size_t i = 0; i < full.sent[m].size(); ++i)
        ASSERT_TRUE(skipping.sent[m][i] == full.sent[m][i])
            << "seed " << seed << " machine " << m << " datagram " << i << " at " << full.sent[m][i].at_us;
      datagrams += full.sent[m].size();
    }
    EXPECT_EQ(skipping.confirmed, full.confirmed) << "seed " << seed;
  }
  EXPECT_GT(datagrams, 5000u);
}

}  // namespace
}  // namespace retcon::test
