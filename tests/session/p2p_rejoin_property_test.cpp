// Property (issue 11): the P2P property's matches (2-4 players, random inputs per frame, input
// delays that change mid-match, every save mode, lockstep or rollback, any network: latency 0-250
// ms, jitter, loss 0-25%, duplicates, reordering, a blackout; spectators joining at random
// frames, with or without state transfer) in which a player machine leaves at a random frame (it
// crashes, or machine 0 drops it through the API) and comes back: it restarts from nothing on a
// new address once every survivor agreed its cut, every machine accepts it, and it rejoins.
// Checked: every player machine, the one that came back included, names one live frame for the
// rejoin (player_rejoining and player_rejoined, once each) and the survivors one cut; every
// machine's state at every confirmed frame it ran (the one that came back: from its state on; a
// spectator: from its state on) equals the lockstep reference with the player disconnected from
// its cut up to the live frame and live again from it; no desync; the match finishes.
//
// A rejoin may also fail cleanly under a hostile network (the rejoiner is told cannot_continue,
// the others cut it again just before its live frame): then every survivor names the same
// frames, and the states agree with the player cut for good. The gating run uses a fixed
// RapidCheck seed; a run with a fresh seed (label known_gap) keeps exploring (tests.cmake).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "support/arbitrary_link.h"
#include "support/match_harness.h"

namespace retcon::test {
namespace {

RC_GTEST_PROP(P2PRejoinProperty, ALeaverThatComesBackPlaysFromOneFrameAndEveryStateAgrees, ()) {
  MatchOptions o;
  o.machines = *rc::gen::inRange(2u, 5u);
  o.spectators = *rc::gen::inRange(0u, 3u);
  for (uint32_t k = 0; k < o.spectators; ++k) o.spectator_join.push_back(*rc::gen::inRange(0, 500));
  o.spectator_state_transfer = *rc::gen::arbitrary<bool>() ? 1 : 0;
  o.input_size = *rc::gen::inRange(1u, 9u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.frames = 900;  // the cut's timeout, the new handshake, the state and the catch-up fit
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.random_inputs = true;
  o.save_mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  if (*rc::gen::arbitrary<bool>()) o.delay_changes.push_back({*rc::gen::inRange(1, 400), *rc::gen::inRange(0, 6)});
  if (*rc::gen::arbitrary<bool>()) o.delay_changes.push_back({*rc::gen::inRange(300, 850), *rc::gen::inRange(0, 6)});
  o.link = arbitrary_link();
  const uint32_t leaver = *rc::gen::inRange(1u, o.machines);  // never the spectators' host
  const Frame leave_at = *rc::gen::inRange(10, 200);
  const bool by_api = *rc::gen::arbitrary<bool>();
  const int restart_after = *rc::gen::inRange(0, 120);  // ticks after every survivor agreed the cut
  o.allow_rejoin = true;
  o.state_transfer = true;
  // Long enough that a handshake under 25% loss and a blackout is not cut short.
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 2500000;
  Match match(o);
  RC_ASSERT(match.build());
  for (int t = 0; t < 30000; ++t) {
    if (match.machine(leaver).session->current_frame() >= leave_at) break;
    match.tick();
  }
  if (by_api) RC_ASSERT(match.machine(0).session->disconnect_player(PlayerIndex(leaver)) == Result::ok);
  match.machine(leaver).stopped = true;

  auto events_of = [&](uint32_t m, EventType type) {
    std::vector<Frame> frames;
    for (const Event& e : match.machine(m).game.events)
      if (e.type == type && e.player == PlayerIndex(leaver)) frames.push_back(e.frame);
    return frames;
  };
  auto cut_everywhere = [&] {
    for (uint32_t m = 0; m < o.machines; ++m)
      if (m != leaver && events_of(m, EventType::disconnected).empty()) return false;
    return true;
  };
  for (int t = 0; t < 30000 && !cut_everywhere(); ++t) match.tick();
  RC_ASSERT(cut_everywhere());
  for (int t = 0; t < restart_after; ++t) match.tick();
  RC_ASSERT(match.restart_rejoining(leaver));

  // Every rejoin request is accepted (a game's lobby would ask someone).
  std::vector<size_t> answered(match.size(), 0);
  bool done = false;
  for (int t = 0; t < 30000 && !done; ++t) {
    match.tick();
    for (uint32_t m = 0; m < o.machines; ++m) {
      Machine& me = match.machine(m);
      for (size_t k = answered[m]; k < me.game.events.size(); ++k)
        if (me.game.events[k].type == EventType::rejoin_requested)
          RC_ASSERT(me.session->answer_rejoin(me.game.events[k].player, true) == Result::ok);
      answered[m] = me.game.events.size();
    }
    Machine& back = match.machine(leaver);
    if (!back.stopped && !back.session->running() && match.count_events(leaver, EventType::cannot_continue) > 0)
      back.stopped = true;  // the rejoin failed: it never ran
    done = true;
    for (uint32_t m = 0; m < o.machines; ++m)
      if (!match.machine(m).stopped && match.machine(m).session->confirmed_frame() < o.frames) done = false;
  }
  RC_ASSERT(done);
  for (int i = 0; i < 240; ++i) match.tick();  // spectators catch up
  RC_ASSERT(match.errors() == 0u);

  // The survivors name the same frames: the cut, and the rejoin (or its failure).
  const std::vector<Frame> cuts = events_of(0, EventType::disconnected);
  const std::vector<Frame> coming = events_of(0, EventType::player_rejoining);
  const std::vector<Frame> rejoined = events_of(0, EventType::player_rejoined);
  for (uint32_t m = 1; m < o.machines; ++m) {
    if (m == leaver) continue;
    RC_ASSERT(events_of(m, EventType::disconnected) == cuts);
    RC_ASSERT(events_of(m, EventType::player_rejoined) == rejoined);
  }
  RC_ASSERT(!cuts.empty());
  const bool came_back = !match.machine(leaver).stopped;
  std::vector<Frame> cut(match.players(), -2), live(match.players(), -2);
  cut[leaver] = cuts[0];
  if (came_back) {
    RC_ASSERT(cuts.size() == 1u);
    RC_ASSERT(coming.size() == 1u);
    RC_ASSERT(rejoined.size() == 1u);
    RC_ASSERT(rejoined[0] == coming[0]);
    RC_ASSERT(coming[0] > cuts[0]);
    RC_ASSERT(events_of(leaver, EventType::player_rejoining) == coming);
    RC_ASSERT(events_of(leaver, EventType::player_rejoined) == rejoined);
    live[leaver] = coming[0];
  } else {
    // Failed: never live anywhere; cut again just before its live frame where it was stamped.
    RC_ASSERT(rejoined.empty());
    for (uint32_t m = 1; m < o.machines; ++m)
      if (m != leaver) RC_ASSERT(events_of(m, EventType::player_rejoining) == coming);
    if (!coming.empty()) RC_ASSERT(cuts.size() == 2u && cuts[1] == coming[0] - 1);
  }
  const std::vector<uint64_t> ref = match.reference(cut, live);
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    if (me.stopped) continue;
    RC_ASSERT(me.game.frame_errors == 0);
    RC_ASSERT(match.count_events(m, EventType::desync_detected) == 0u);
    const Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    RC_ASSERT(last >= (me.spectator ? o.frames / 2 : o.frames));
    // A spectator from a transferred state, and the machine that came back, ran only the frames
    // from their state's on.
    Frame first = 0;
    if (me.spectator || m == leaver)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    if (m == leaver) RC_ASSERT(first > cut[leaver]);
    for (Frame f = first; f <= last; ++f) RC_ASSERT(me.hashes[size_t(f)] == ref[size_t(f)]);
  }
  RC_CLASSIFY(came_back, "came back");
  RC_CLASSIFY(!came_back, "the rejoin failed cleanly");
  RC_CLASSIFY(o.max_prediction == 0, "lockstep");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
  RC_CLASSIFY(o.save_mode == SaveMode::sparse, "sparse saving");
  RC_CLASSIFY(o.spectators > 0, "spectators");
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// Two leavers (issue 11, "one rejoin at a time per host"; it found the never-answered machine
// of on_rejoin_message: the second to restart knew the first's old address, loaded its state,
// and ran on alone while the others cut it): in a match of 3-4 player machines two
// of them (never machine 0, the spectators' host) leave at random frames, together or apart, and
// each restarts once its cut is agreed everywhere, after a random wait. The host serves one rejoin
// at a time; both come back, or a rejoin fails cleanly (cannot_continue, cut again just before its
// live frame). Checked: for each leaver, every machine that saw its rejoin names the same live
// frame; the machines that never left name the same cuts; every state at every confirmed frame
// equals the reference; no desync; the match finishes.
struct TwoLeavers {
  MatchOptions o;
  uint32_t a = 1, b = 2;  // the leavers' machines
  Frame leave_a = 0, leave_b = 0;
  int wait_a = 0, wait_b = 0;  // ticks after its cut is agreed everywhere before it restarts
};

// Returns how many of the two came back (the rest gave up cleanly).
int two_leavers(const TwoLeavers& c) {
  MatchOptions o = c.o;
  const uint32_t a = c.a, b = c.b;
  const Frame leave_a = c.leave_a, leave_b = c.leave_b;
  const int wait_a = c.wait_a, wait_b = c.wait_b;
  o.frames = 1300;
  o.random_inputs = true;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 2500000;
  Match match(o);
  RC_ASSERT(match.build());
  const uint32_t leavers[2] = {a, b};
  const Frame leave_at[2] = {leave_a, leave_b};
  const int wait[2] = {wait_a, wait_b};
  int state[2] = {0, 0};  // 0 playing, 1 gone (waiting for its cut), 2 waiting to restart, 3 restarted
  int waited[2] = {0, 0};
  size_t cut_events[2] = {0, 0};  // machine 0's disconnected events for it when it left
  auto events_of = [&](uint32_t m, uint32_t p, EventType type) {
    std::vector<Frame> frames;
    for (const Event& e : match.machine(m).game.events)
      if (e.type == type && e.player == PlayerIndex(p)) frames.push_back(e.frame);
    return frames;
  };
  std::vector<size_t> answered(match.size(), 0);
  bool done = false;
  for (int t = 0; t < 40000 && !done; ++t) {
    for (int k = 0; k < 2; ++k) {
      const uint32_t p = leavers[k];
      Machine& me = match.machine(p);
      if (state[k] == 0 && !me.stopped && me.session->running() && me.session->current_frame() >= leave_at[k]) {
        me.stopped = true;
        state[k] = 1;
        cut_events[k] = events_of(0, p, EventType::disconnected).size();
      } else if (state[k] == 1) {
        bool everywhere = true;
        for (uint32_t m = 0; m < o.machines; ++m)
          if (m != a && m != b && events_of(m, p, EventType::disconnected).size() <= cut_events[k]) everywhere = false;
        if (everywhere) state[k] = 2;
      } else if (state[k] == 2 && ++waited[k] >= wait[k]) {
        RC_ASSERT(match.restart_rejoining(p));
        state[k] = 3;
      }
    }
    match.tick();
    for (uint32_t m = 0; m < o.machines; ++m) {
      Machine& me = match.machine(m);
      if (me.stopped) continue;
      if (answered[m] > me.game.events.size()) answered[m] = 0;  // restarted
      for (size_t k = answered[m]; k < me.game.events.size(); ++k)
        if (me.game.events[k].type == EventType::rejoin_requested)
          RC_ASSERT(me.session->answer_rejoin(me.game.events[k].player, true) == Result::ok);
      answered[m] = me.game.events.size();
    }
    for (int k = 0; k < 2; ++k) {
      Machine& back = match.machine(leavers[k]);
      if (state[k] == 3 && !back.stopped && !back.session->running() &&
          match.count_events(leavers[k], EventType::cannot_continue) > 0)
        back.stopped = true;  // the rejoin failed: it never ran
    }
    done = state[0] == 3 && state[1] == 3;
    for (uint32_t m = 0; m < o.machines; ++m)
      if (!match.machine(m).stopped && match.machine(m).session->confirmed_frame() < o.frames) done = false;
  }
  RC_ASSERT(done);
  // A machine's confirmed frame can move in the tick's last poll, after its last advance: the
  // state of the frame after it is then still the predicted one, corrected at the next advance
  // (seed 7170597072767107367: machine 0 took an input of frame 1299 in that poll, its state of
  // 1300 differed from the reference). The check stops at what was confirmed before one more tick.
  std::vector<Frame> confirmed(match.size(), 0);
  for (uint32_t m = 0; m < o.machines; ++m)
    if (!match.machine(m).stopped) confirmed[m] = match.machine(m).session->confirmed_frame();
  match.tick();
  RC_ASSERT(match.errors() == 0u);
  std::vector<Frame> cut(match.players(), -2), live(match.players(), -2), recut(match.players(), -2);
  int back = 0;
  for (int k = 0; k < 2; ++k) {
    const uint32_t p = leavers[k];
    const std::vector<Frame> cuts = events_of(0, p, EventType::disconnected);
    const std::vector<Frame> coming = events_of(0, p, EventType::player_rejoining);
    for (uint32_t m = 1; m < o.machines; ++m)
      if (m != a && m != b) {
        RC_ASSERT(events_of(m, p, EventType::disconnected) == cuts);
        RC_ASSERT(events_of(m, p, EventType::player_rejoining) == coming);
        RC_ASSERT(events_of(m, p, EventType::player_rejoined) == events_of(0, p, EventType::player_rejoined));
      }
    RC_ASSERT(!cuts.empty());
    cut[p] = cuts[0];
    const bool came_back = !match.machine(p).stopped;
    back += came_back ? 1 : 0;
    if (came_back) {
      RC_ASSERT(coming.size() == 1u);
      RC_ASSERT(events_of(p, p, EventType::player_rejoining) == coming);
      RC_ASSERT(events_of(p, p, EventType::player_rejoined) == coming);
      RC_ASSERT(cuts.size() == 1u);
      live[p] = coming[0];
      // The other leaver, back too: it saw this one's rejoin when its own came first.
      const uint32_t q = leavers[1 - k];
      if (!match.machine(q).stopped) {
        const std::vector<Frame> seen_there = events_of(q, p, EventType::player_rejoining);
        RC_ASSERT(seen_there.empty() || seen_there == coming);
      }
    }
    if (!came_back && !coming.empty()) {
      // It gave up: cut again where it was stamped, just before its live frame, or (its input of
      // that frame went out before it gave up) once it had played from it, the same everywhere.
      RC_ASSERT(cuts.size() == 2u);
      const std::vector<Frame> rejoined = events_of(0, p, EventType::player_rejoined);
      if (rejoined.empty()) {
        RC_ASSERT(cuts[1] == coming[0] - 1);
      } else {
        RC_ASSERT(rejoined == coming && cuts[1] >= coming[0]);
        live[p] = coming[0];
        recut[p] = cuts[1];
      }
    }
    RC_CLASSIFY(came_back, "came back");
  }
  const std::vector<uint64_t> ref = match.reference(cut, live, recut);
  for (uint32_t m = 0; m < o.machines; ++m) {
    Machine& me = match.machine(m);
    if (me.stopped) continue;
    RC_ASSERT(me.game.frame_errors == 0);
    RC_ASSERT(match.count_events(m, EventType::desync_detected) == 0u);
    const Frame last = std::min({o.frames, confirmed[m] + 1, me.session->current_frame() - 1});
    RC_ASSERT(last >= o.frames);
    Frame first = 0;
    if (m == a || m == b)
      while (first <= last && me.hashes[size_t(first)] == 0) ++first;
    for (Frame f = first; f <= last; ++f) RC_ASSERT(me.hashes[size_t(f)] == ref[size_t(f)]);
  }
  return back;
}

RC_GTEST_PROP(P2PRejoinProperty, TwoLeaversComeBackOneAfterTheOther, ()) {
  TwoLeavers c;
  MatchOptions& o = c.o;
  o.machines = *rc::gen::inRange(3u, 5u);
  o.input_size = *rc::gen::inRange(1u, 5u);
  o.max_prediction = *rc::gen::inRange(0, 11);
  o.input_delay = *rc::gen::inRange(0, 4);
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.desync_interval = *rc::gen::inRange(1, 20);
  o.save_mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  o.link = arbitrary_link();
  c.a = *rc::gen::inRange(1u, o.machines);
  c.b = *rc::gen::distinctFrom(rc::gen::inRange(1u, o.machines), c.a);
  c.leave_a = *rc::gen::inRange(10, 200);
  c.leave_b = c.leave_a + *rc::gen::inRange(0, 300);
  c.wait_a = *rc::gen::inRange(0, 120);
  c.wait_b = *rc::gen::inRange(0, 120);
  (void)two_leavers(c);
  RC_CLASSIFY(c.leave_b - c.leave_a < 30, "left together");
  RC_CLASSIFY(o.link.loss > 0.1, "loss > 10%");
}

// The fresh-seed run's case (RapidCheck seed 6006849875241409222, shrunk): 4 machines, 67 ms one
// way, 20% loss; machines 2 and 3 leave at frames 60 and 75 and each asks a different host (2 had
// not reached machine 0), which stamped them 5 ticks apart, neither knowing of the other: each
// rejoiner's state had the other player cut, and the match split (every survivor cut everyone,
// two cuts of player 2). Now the lower player's rejoin goes first: both come back, one after
// the other, every state agrees. Replayed without RapidCheck, since its replay of a passing case
// reports a failure.
TEST(P2PRejoinProperty, TwoLeaversReproduce) {
  TwoLeavers c;
  c.o.machines = 4;
  c.o.input_size = 1;
  c.o.max_prediction = 0;
  c.o.input_delay = 0;
  c.o.seed = 71637354132027365ull;
  c.o.desync_interval = 1;
  c.o.save_mode = SaveMode::automatic;
  c.o.link.latency_us = 67000;
  c.o.link.jitter_us = 6000;
  c.o.link.loss = 0.20;
  c.o.link.duplicate = 0.08;
  c.o.link.reorder = 0.01;
  c.a = 2;
  c.b = 3;
  c.leave_a = 60;
  c.leave_b = 75;
  c.wait_a = 3;
  c.wait_b = 0;
  try {
    EXPECT_EQ(two_leavers(c), 2);  // both play again
  } catch (const rc::detail::CaseResult& r) {
    FAIL() << r.description;
  }
}

// The fresh-seed run's next case (RapidCheck seed 7170597072767107367, shrunk): machine 0's
// confirmed frame reached 1300 in the last poll of the match's last tick, after its advance, so
// its state of frame 1300 was still a prediction when the property read it (it is corrected at
// the next advance; the check now stops at what was confirmed before one more tick). Player 3
// gives up (a machine never answered its handshake); player 2 comes back.
TEST(P2PRejoinProperty, TwoLeaversReproduceStates) {
  TwoLeavers c;
  c.o.machines = 4;
  c.o.input_size = 3;
  c.o.max_prediction = 8;
  c.o.input_delay = 3;
  c.o.seed = 19074936028922977ull;
  c.o.desync_interval = 5;
  c.o.save_mode = SaveMode::sparse;
  c.o.link.latency_us = 55000;
  c.o.link.jitter_us = 36000;
  c.o.link.loss = 0.16;
  c.o.link.duplicate = 0.05;
  c.o.link.reorder = 0.08;
  c.o.link.blackouts.push_back({1867000, 1867000 + 434000});
  c.a = 2;
  c.b = 3;
  c.leave_a = 77;
  c.leave_b = 77 + 4;
  c.wait_a = 93;
  c.wait_b = 82;
  try {
    EXPECT_EQ(two_leavers(c), 1);  // player 2 plays again
  } catch (const rc::detail::CaseResult& r) {
    FAIL() << r.description;
  }
}

}  // namespace
}  // namespace retcon::test
