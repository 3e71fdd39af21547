// A handshake that completes on one side seconds before the other (issue 11, found by the
// rejoin property: 2 matches in 20,000). Each side needs its own round trips; under loss,
// jitter and a blackout one side can need seconds more, and while it does it sends only
// handshake requests. On the old code the side that had finished took that for silence and
// ended the connection after the disconnect timeout, while the other completed and ran: a
// player machine and another each cut the other (one at -1, never having had a frame), or a
// spectator was dropped by its host and, its handshake never completing, gave up. Both are the
// property's own matches (RapidCheck seeds 18 and 30), replayed here; now every machine runs
// the whole match with everyone and the states agree. In-memory transport, virtual clock.
#include <gtest/gtest.h>

#include "support/match_harness.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

// Plays until every machine that runs confirmed `frames` (or `max_ticks`).
void play(Match& match, Frame frames, int max_ticks) {
  for (int t = 0; t < max_ticks; ++t) {
    match.tick();
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= frames;
    if (done) return;
  }
}

void expect_everyone_agrees(Match& match, Frame frames) {
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    SCOPED_TRACE("machine " + std::to_string(m));
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << "nobody left";
    EXPECT_EQ(match.count_events(m, EventType::spectator_left), 0u);
    EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u);
    ASSERT_GE(me.session->confirmed_frame(), frames);
    for (Frame f = 0; f <= frames; ++f) ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "frame " << f;
  }
}

// Seed 18: three players and two spectators, 92 ms one way, 17% loss, reordering, a 318 ms
// blackout at 2.4 s. Machines 0 and 2 split at the start (0 cut player 2 at 4, 2 cut player 0
// at -1).
TEST(HandshakeSplit, APlayerMachineStillHandshakingIsNotCutByOneThatFinished) {
  MatchOptions o;
  o.machines = 3;
  o.spectators = 2;
  o.spectator_join = {1, 1};
  o.spectator_state_transfer = 0;
  o.input_size = 1;
  o.max_prediction = 4;
  o.frames = 600;
  o.seed = 22115633205927846ull;
  o.desync_interval = 1;
  o.random_inputs = true;
  o.state_transfer = true;
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 2500000;
  o.link.latency_us = 92000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.17;
  o.link.duplicate = 0.01;
  o.link.reorder = 0.09;
  o.link.blackouts.push_back({2399000, 2399000 + 318000});
  Match match(o);
  ASSERT_TRUE(match.build());
  play(match, o.frames, 5000);
  expect_everyone_agrees(match, o.frames);
}

// Seed 30: two players, spectators starting at the host's frames 116 and 122, 46 ms one way
// with 47 ms jitter, 16% loss; player 1 dropped through the API at frame 46 and rejoining 75
// ticks after its cut. The host finished its side with the first spectator 2.5 s before the
// spectator did, dropped it, and the spectator gave up after the handshake timeout.
TEST(HandshakeSplit, ASpectatorStillHandshakingIsNotDroppedByItsHost) {
  MatchOptions o;
  o.machines = 2;
  o.spectators = 2;
  o.spectator_join = {116, 122};
  o.spectator_state_transfer = 0;
  o.input_size = 3;
  o.max_prediction = 3;
  o.input_delay = 3;
  o.frames = 900;
  o.seed = 2157304921364765050ull;
  o.desync_interval = 6;
  o.random_inputs = true;
  o.delay_changes.push_back({318, 0});
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.notify_delay_us = 500000;
  o.disconnect_timeout_us = 2500000;
  o.link.latency_us = 46000;
  o.link.jitter_us = 47000;
  o.link.loss = 0.16;
  o.link.duplicate = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  while (match.machine(1).session->current_frame() < 46) match.tick();
  ASSERT_EQ(match.machine(0).session->disconnect_player(1), Result::ok);
  match.machine(1).stopped = true;
  for (int t = 0; t < 3000 && seen(match, 0, 1).cut == kNullFrame; ++t) match.tick();
  const Frame cut = seen(match, 0, 1).cut;
  ASSERT_NE(cut, kNullFrame);
  for (int t = 0; t < 75; ++t) match.tick();
  ASSERT_TRUE(match.restart_rejoining(1));
  std::vector<size_t> answered;
  accept_until_confirmed(match, answered, o.frames, 5000);
  for (int t = 0; t < 240; ++t) match.tick();
  const Frame live = seen(match, 1, 1).rejoined;
  ASSERT_NE(live, kNullFrame) << "it came back";
  for (uint32_t k = 0; k < o.spectators; ++k) {
    Machine& s = match.machine(o.machines + k);
    SCOPED_TRACE("spectator " + std::to_string(k));
    EXPECT_EQ(match.count_events(o.machines + k, EventType::cannot_continue), 0u);
    EXPECT_GE(s.session->confirmed_frame(), o.frames) << "it watched the whole match";
  }
  EXPECT_EQ(match.count_events(0, EventType::spectator_left), 0u) << "the host kept both";
  std::vector<Frame> cuts = {-2, cut}, lives = {-2, live};
  expect_states_agree(match, match.reference(cuts, lives), o.frames);
}

}  // namespace
}  // namespace retcon::test
