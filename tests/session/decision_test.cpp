// Timed decisions: every machine (and spectator) applies each decision on the frame it names,
// once, in the same order, whatever the network does; a frame too close is refused with the
// earliest one that works. The states are compared with a lockstep reference that applies the
// decisions where they were stamped: a decision applied on another frame, twice, or not at all
// changes the hash of every later frame.
#include <gtest/gtest.h>

#include <cstring>

#include "session/decision_exchange.h"
#include "session/decision_queue.h"
#include "support/match_harness.h"

namespace retcon::test {
namespace {

using detail::DecisionQueue;

std::vector<uint8_t> bytes_of(std::initializer_list<int> v) {
  std::vector<uint8_t> out;
  for (int b : v) out.push_back(uint8_t(b));
  return out;
}

// Every machine's state at every frame up to `last` equals the reference with the decisions.
void expect_states_match_reference(Match& match, Frame last) {
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < match.size(); ++m) {
    Machine& me = match.machine(m);
    EXPECT_EQ(me.game.frame_errors, 0) << "machine " << m;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
    const Frame upto = std::min({last, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
    EXPECT_GE(upto, me.spectator ? last / 2 : last) << "machine " << m;
    for (Frame f = 0; f <= upto; ++f) {
      ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "machine " << m << " frame " << f;
    }
  }
}

TEST(DecisionQueue, OrdersByFrameThenSenderThenSendingOrder) {
  DecisionQueue q;
  ASSERT_EQ(q.init(), Result::ok);
  const uint8_t a[] = {1}, b[] = {2}, c[] = {3}, d[] = {4};
  ASSERT_EQ(q.insert(2, 10, a, 1), Result::ok);
  ASSERT_EQ(q.insert(1, 10, b, 1), Result::ok);
  ASSERT_EQ(q.insert(2, 5, c, 1), Result::ok);
  ASSERT_EQ(q.insert(1, 10, d, 1), Result::ok);
  const Decision* list = nullptr;
  ASSERT_EQ(q.for_frame(10, &list), 3u);
  EXPECT_EQ(list[0].bytes[0], 2);  // sender 1, first sent
  EXPECT_EQ(list[1].bytes[0], 4);  // sender 1, second sent
  EXPECT_EQ(list[2].bytes[0], 1);  // sender 2
  EXPECT_EQ(q.for_frame(7, &list), 0u);
  EXPECT_EQ(list, nullptr);
  ASSERT_EQ(q.for_frame(5, &list), 1u);
  EXPECT_EQ(list[0].sender, 2);
}

TEST(DecisionQueue, DigestCoversEveryDecisionBeforeTheFrameAcrossRetirement) {
  DecisionQueue q, r;
  ASSERT_EQ(q.init(), Result::ok);
  ASSERT_EQ(r.init(), Result::ok);
  EXPECT_EQ(q.digest_before(100), 0u);  // no decision: checksums are the states' own
  const uint8_t a[] = {1, 2}, b[] = {3};
  for (DecisionQueue* x : {&q, &r}) {
    ASSERT_EQ(x->insert(0, 10, a, 2), Result::ok);
    ASSERT_EQ(x->insert(1, 20, b, 1), Result::ok);
  }
  EXPECT_EQ(q.digest_before(10), 0u);
  const uint64_t through_10 = q.digest_before(11);
  EXPECT_NE(through_10, 0u);
  EXPECT_NE(q.digest_before(21), through_10);
  q.retire_before(15);  // folded, the same digest
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.digest_before(21), r.digest_before(21));
  EXPECT_EQ(q.digest_before(16), r.digest_before(16));
  // Another frame for the same bytes is another digest.
  DecisionQueue s;
  ASSERT_EQ(s.init(), Result::ok);
  ASSERT_EQ(s.insert(0, 11, a, 2), Result::ok);
  EXPECT_NE(s.digest_before(12), r.digest_before(12));
}

TEST(DecisionQueue, RefusesBadArgumentsAndCapsEachSender) {
  DecisionQueue q;
  ASSERT_EQ(q.init(), Result::ok);
  uint8_t big[kMaxDecisionSize + 1] = {};
  EXPECT_EQ(q.insert(0, 1, big, sizeof big), Result::invalid_argument);
  EXPECT_EQ(q.insert(0, 1, big, 0), Result::invalid_argument);
  EXPECT_EQ(q.insert(-1, 1, big, 1), Result::invalid_argument);
  EXPECT_EQ(q.insert(kMaxPlayers, 1, big, 1), Result::invalid_argument);
  EXPECT_EQ(q.insert(0, -1, big, 1), Result::invalid_argument);
  for (uint32_t i = 0; i < detail::kDecisionsPerSender; ++i) ASSERT_EQ(q.insert(3, Frame(i), big, 1), Result::ok);
  EXPECT_EQ(q.insert(3, 100, big, 1), Result::out_of_memory);
  EXPECT_EQ(q.insert(4, 100, big, 1), Result::ok);  // other senders are not starved
}

TEST(DecisionWire, RoundTripsAndRejectsMalformedBodies) {
  const uint8_t payload[] = {9, 8, 7};
  uint8_t body[detail::kMaxChannelMessage];
  const size_t n = detail::encode_decision(body, sizeof body, 3, 1234, payload, 3);
  ASSERT_EQ(n, detail::kDecisionHeaderSize + 3);
  PlayerIndex sender;
  Frame frame;
  const uint8_t* bytes;
  size_t length;
  ASSERT_TRUE(detail::decode_decision(body, n, &sender, &frame, &bytes, &length));
  EXPECT_EQ(sender, 3);
  EXPECT_EQ(frame, 1234);
  ASSERT_EQ(length, 3u);
  EXPECT_EQ(bytes[2], 7);
  EXPECT_FALSE(detail::decode_decision(body, detail::kDecisionHeaderSize, &sender, &frame, &bytes, &length));
  uint8_t bad[16];
  std::memcpy(bad, body, n);
  bad[0] = 2;  // unknown kind
  EXPECT_FALSE(detail::decode_decision(bad, n, &sender, &frame, &bytes, &length));
  std::memcpy(bad, body, n);
  bad[1] = kMaxPlayers;  // no such player
  EXPECT_FALSE(detail::decode_decision(bad, n, &sender, &frame, &bytes, &length));
  std::memcpy(bad, body, n);
  bad[5] = 0x80;  // negative frame
  EXPECT_FALSE(detail::decode_decision(bad, n, &sender, &frame, &bytes, &length));
}

TEST(Decisions, HostDecisionHappensOnTheSameFrameOnEveryMachine) {
  MatchOptions o;
  o.machines = 3;
  o.spectators = 1;
  o.frames = 300;
  o.input_delay = 2;
  o.link.latency_us = 40000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.05;
  Match match(o);
  ASSERT_TRUE(match.build());
  Frame stamped = kNullFrame;
  match.before_input = [&](uint32_t m) {
    if (m != 0 || stamped != kNullFrame || match.machine(0).session->current_frame() < 100) return;
    Frame earliest = kNullFrame;
    P2PSession& host = *match.machine(0).session;
    // Too close for the round trip: refused, with the frame that works.
    EXPECT_EQ(match.send_decision(0, host.current_frame() + 1, bytes_of({42}), &earliest), Result::input_out_of_window);
    EXPECT_EQ(earliest, host.earliest_decision_frame());
    EXPECT_GT(earliest, host.current_frame() + o.input_delay + 1);  // 80 ms RTT is 5 frames
    ASSERT_EQ(match.send_decision(0, earliest, bytes_of({42, 7}), &earliest), Result::ok);
    stamped = earliest;
  };
  ASSERT_TRUE(match.run(20000));
  for (int i = 0; i < 200; ++i) match.tick();
  ASSERT_NE(stamped, kNullFrame);
  ASSERT_EQ(match.sent_decisions.size(), 1u);
  EXPECT_EQ(match.errors(), 0u);
  expect_states_match_reference(match, o.frames);
  // The reference without the decision differs from the decision's frame on: it took effect.
  const std::vector<uint64_t> with = match.reference();
  match.sent_decisions.clear();
  const std::vector<uint64_t> without = match.reference();
  EXPECT_EQ(with[size_t(stamped)], without[size_t(stamped)]);
  EXPECT_NE(with[size_t(stamped) + 1], without[size_t(stamped) + 1]);
}

// The decision's datagrams are lost for a while right after it is sent: the others simulate
// its frame without it first. They roll back to it, and nobody confirms the frame before
// holding it (the sender holds its input of that frame until every machine acknowledged).
TEST(Decisions, ALateDecisionIsRolledBackIntoNeverMissed) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    MatchOptions o;
    o.machines = 2 + uint32_t(seed % 3);
    o.frames = 240;
    o.seed = seed;
    o.max_prediction = 12;
    o.link.latency_us = 20000;
    Match match(o);
    ASSERT_TRUE(match.build());
    const uint32_t sender = uint32_t(seed % o.machines);
    bool sent = false;
    match.before_input = [&](uint32_t m) {
      Machine& me = match.machine(m);
      if (m != sender || sent || me.session->current_frame() < 60) return;
      // Everything the sender sends is lost for 150 ms: the decision and the inputs of the
      // frames before it; only the decision's frame is stamped as early as allowed.
      LinkProfile lossy = o.link;
      lossy.blackouts.push_back({match.now(), match.now() + 150000});
      me.sim->set_outgoing(lossy);
      ASSERT_EQ(match.send_decision(m, me.session->earliest_decision_frame(), bytes_of({int(seed)})), Result::ok);
      sent = true;
    };
    ASSERT_TRUE(match.run(20000));
    for (int i = 0; i < 100; ++i) match.tick();
    ASSERT_TRUE(sent);
    EXPECT_EQ(match.errors(), 0u);
    expect_states_match_reference(match, o.frames);
  }
}

TEST(Decisions, AnyPlayerMaySendAndOrderIsTheSameEverywhere) {
  MatchOptions o;
  o.machines = 4;
  o.spectators = 2;
  o.frames = 400;
  o.link.latency_us = 30000;
  o.link.jitter_us = 20000;
  o.link.loss = 0.1;
  o.link.reorder = 0.1;
  Match match(o);
  ASSERT_TRUE(match.build());
  // Every machine sends a decision for the same frame, and two more each later.
  match.before_input = [&](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    const Frame f = s.current_frame();
    if (f == 80 || f == 150 || f == 151) {
      const Frame target = std::max<Frame>(200, s.earliest_decision_frame());
      EXPECT_EQ(match.send_decision(m, target, bytes_of({int(m), int(f)})), Result::ok);
    }
  };
  ASSERT_TRUE(match.run(30000));
  for (int i = 0; i < 300; ++i) match.tick();
  EXPECT_EQ(match.sent_decisions.size(), 12u);
  EXPECT_EQ(match.errors(), 0u);
  expect_states_match_reference(match, o.frames);
}

TEST(Decisions, RefusesWhatCannotWork) {
  MatchOptions o;
  o.machines = 2;
  o.frames = 100;
  Match match(o);
  ASSERT_TRUE(match.build());
  Frame earliest = 5;
  EXPECT_EQ(match.machine(0).session->send_decision("x", 1, 50, &earliest), Result::not_synchronized);
  ASSERT_TRUE(match.run(20000));
  P2PSession& s = *match.machine(0).session;
  const Frame ok = s.earliest_decision_frame();
  EXPECT_EQ(s.send_decision(nullptr, 1, ok, nullptr), Result::invalid_argument);
  uint8_t big[kMaxDecisionSize + 1] = {};
  EXPECT_EQ(s.send_decision(big, sizeof big, ok, nullptr), Result::invalid_argument);
  EXPECT_EQ(s.send_decision(big, 0, ok, nullptr), Result::invalid_argument);
  EXPECT_EQ(s.send_decision(big, 1, ok + detail::kMaxDecisionLead + s.current_frame(), nullptr),
            Result::input_out_of_window);
  // The in-flight limit: 16, then prediction_limit until they age out.
  for (uint32_t i = 0; i < detail::kMaxDecisionsInFlight; ++i) ASSERT_EQ(s.send_decision(big, 1, ok + 10, nullptr), Result::ok);
  EXPECT_EQ(s.send_decision(big, 1, ok + 10, nullptr), Result::prediction_limit);
  // Spectators decide nothing.
  MatchOptions so = o;
  so.spectators = 1;
  Match watched(so);
  ASSERT_TRUE(watched.build());
  EXPECT_EQ(watched.machine(2).session->send_decision("x", 1, 50, &earliest), Result::unsupported);
  EXPECT_EQ(earliest, kNullFrame);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// A spectator that joins late from the host's transferred state applies every decision of the
// frames from the state's on, once, including those of the frames the host streams it right
// after the state (they were confirmed before it asked): each spectator has its own place in
// the stream, and the host offers no state older than the decisions it still keeps.
TEST(Decisions, ASpectatorFromATransferredStateAppliesEveryDecisionFromItsStartOnce) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    MatchOptions o;
    o.machines = 3;
    o.spectators = 2;
    o.state_transfer = true;
    o.spectator_join = {0, 200};
    o.frames = 400;
    o.seed = seed;
    o.input_delay = 1;
    o.link.latency_us = 30000;
    o.link.jitter_us = 5000;
    o.link.loss = 0.05;
    Match match(o);
    ASSERT_TRUE(match.build());
    // Machines 0 and 1 decide often, before and after the late spectator comes.
    match.before_input = [&](uint32_t m) {
      P2PSession& s = *match.machine(m).session;
      if (m > 1 || s.current_frame() < 100 || s.current_frame() > o.frames - 40 || s.current_frame() % 3 != Frame(m)) return;
      const Result r = match.send_decision(m, s.earliest_decision_frame(), bytes_of({int(m), int(s.current_frame() & 0xff)}));
      EXPECT_TRUE(r == Result::ok || r == Result::prediction_limit);
    };
    ASSERT_TRUE(match.run(20000));
    for (int i = 0; i < 400; ++i) match.tick();
    EXPECT_EQ(match.errors(), 0u);
    const std::vector<uint64_t> ref = match.reference();
    Machine& late = match.machine(o.machines + 1);
    Frame first = 0;
    while (first < o.frames && late.hashes[size_t(first)] == 0) ++first;
    ASSERT_GT(first, 100) << "seed " << seed << ": it started from a state";
    size_t decisions_after = 0;
    for (const SentDecision& d : match.sent_decisions) decisions_after += d.frame >= first && d.frame < o.frames;
    EXPECT_GE(decisions_after, 20u);
    const Frame upto = std::min(o.frames, late.session->confirmed_frame());
    EXPECT_GE(upto, o.frames - 1) << "seed " << seed;
    for (Frame f = first; f <= upto; ++f)
      ASSERT_EQ(late.hashes[size_t(f)], ref[size_t(f)]) << "seed " << seed << " frame " << f << " (from " << first << ")";
    EXPECT_EQ(late.game.frame_errors, 0);
    // The players and the spectator watching from the start, from frame 0.
    for (uint32_t m = 0; m <= o.machines; ++m) {
      Machine& me = match.machine(m);
      EXPECT_EQ(me.game.frame_errors, 0) << "machine " << m;
      EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << "machine " << m;
      const Frame last = std::min({o.frames, me.session->confirmed_frame() + 1, me.session->current_frame() - 1});
      EXPECT_GE(last, me.spectator ? o.frames - 1 : o.frames) << "machine " << m;
      for (Frame f = 0; f <= last; ++f)
        ASSERT_EQ(me.hashes[size_t(f)], ref[size_t(f)]) << "seed " << seed << " machine " << m << " frame " << f;
    }
  }
}

}  // namespace
}  // namespace retcon::test
