// A rejoin turned away (issue 11): the rejoining machine hears it within a round trip or two of
// the decision, not after its handshake timeout (10 s; a rejoining machine used to retry for
// ever): a machine of another shape gets handshake_rejected naming the field, one whose rejoin
// the game refused gets rejoin_refused; then cannot_continue, and it sends nothing more. The
// others play on and agree. A blind attacker's forged refusal (it cannot echo the rejoiner's
// challenge) changes nothing: the rejoin goes through.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <random>
#include <string>

#include "net/datagram_auth.h"
#include "net/wire.h"
#include "support/match_harness.h"
#include "support/match_keys.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

// Ticks (1/60 s) until machine m saw an event of `type` (from event index `from` on), at most
// `max_ticks` (-1: never), answering rejoin requests with `accept` meanwhile.
int ticks_until(Match& match, uint32_t m, EventType type, int max_ticks, std::vector<size_t>& answered, bool accept) {
  for (int t = 0; t <= max_ticks; ++t) {
    if (match.count_events(m, type) > 0) return t;
    match.tick();
    answer_requests(match, answered, accept);
  }
  return -1;
}

const Event* first_event(Match& match, uint32_t m, EventType type) {
  for (const Event& e : match.machine(m).game.events)
    if (e.type == type) return &e;
  return nullptr;
}

MatchOptions three_machines() {
  MatchOptions o;
  o.machines = 3;
  o.frames = 900;
  o.random_inputs = true;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  o.link.latency_us = 20000;
  return o;
}

// The rejoiner stopped: after its disconnect notices, nothing more leaves it.
void expect_silent_from_now(Match& match, uint32_t m) {
  for (int t = 0; t < 10; ++t) match.tick();
  const uint64_t sent = match.machine(m).sim->outgoing_stats().sent;
  for (int t = 0; t < 120; ++t) match.tick();
  EXPECT_EQ(match.machine(m).sim->outgoing_stats().sent, sent) << "it stopped asking";
}

struct ShapeCase {
  const char* field;
  void (*tweak)(P2PConfig&);
  int32_t ours, theirs;  // the rejoiner's value and the others'
};

void PrintTo(const ShapeCase& c, std::ostream* out) { *out << c.field; }

class RejoinOfAnotherShape : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(RejoinOfAnotherShape, HearsWhichFieldDiffersWithinARoundTripAndTheMatchGoesOn) {
  const ShapeCase c = GetParam();
  const MatchOptions o = three_machines();
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 2, 150, 0);
  // crash_and_restart made a rejoiner of the match's shape: make it again, differently built.
  ASSERT_TRUE(match.restart_rejoining(2, c.tweak));
  std::vector<size_t> answered;
  const int ticks = ticks_until(match, 2, EventType::handshake_rejected, 600, answered, true);
  ASSERT_GE(ticks, 0) << "the rejoiner is told";
  EXPECT_LE(ticks, 30) << "within a few round trips (40 ms RTT), not the 10 s handshake timeout";
  const Event* e = first_event(match, 2, EventType::handshake_rejected);
  EXPECT_NE(std::string(e->message).find(std::string("'s ") + c.field + " differs"), std::string::npos) << e->message;
  EXPECT_EQ(e->count, c.ours);
  EXPECT_EQ(e->total, c.theirs);
  for (int t = 0; t < 10; ++t) match.tick();
  EXPECT_EQ(match.count_events(2, EventType::cannot_continue), 1u) << "then it gives up";
  EXPECT_FALSE(match.machine(2).session->running());
  expect_silent_from_now(match, 2);
  match.machine(2).stopped = true;
  for (int t = 0; t < 1500 && !match.run(1);) ++t;
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_EQ(seen(match, m, 2).requests, 0u) << "its game is never asked";
    EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u);
  }
  std::vector<Frame> cuts = {-2, -2, cut};
  expect_states_agree(match, match.reference(cuts), o.frames);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, RejoinOfAnotherShape,
    ::testing::Values(ShapeCase{"input_size", [](P2PConfig& c) { c.session.input_size = 3; }, 3, 2},
                      // Not max_prediction: a rejoiner with another window is let in and every
                      // machine plays with the smaller one
                      // (LateCut.AMachineThatRejoinsWithASmallerWindowFollowsALateCut).
                      ShapeCase{"frame_rate", [](P2PConfig& c) { c.network.frame_rate = 30; }, 30, 60}),
    [](const ::testing::TestParamInfo<ShapeCase>& i) { return std::string(i.param.field); });

class RejoinRefusedByTheGame : public ::testing::TestWithParam<bool> {};

// Machine 0's game refuses, machine 1's accepts (param false) or refuses too (true).
TEST_P(RejoinRefusedByTheGame, TheRejoinerHearsItThenCannotContinueAndTheOthersPlayOn) {
  const bool both = GetParam();
  const MatchOptions o = three_machines();
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 2, 150, 0);
  // Until the request reaches machine 0's game.
  for (int t = 0; t < 600 && seen(match, 0, 2).requests == 0; ++t) match.tick();
  ASSERT_EQ(seen(match, 0, 2).requests, 1u);
  ASSERT_EQ(match.machine(0).session->answer_rejoin(2, false), Result::ok);
  int ticks = -1;
  for (int t = 0; t <= 600 && ticks < 0; ++t) {
    if (match.count_events(2, EventType::rejoin_refused) > 0) ticks = t;
    if (ticks >= 0) break;
    match.tick();
    // Machine 1 answers whenever its game was asked.
    for (const Event& e : match.machine(1).game.events)
      if (e.type == EventType::rejoin_requested) (void)match.machine(1).session->answer_rejoin(2, !both);
  }
  ASSERT_GE(ticks, 0) << "the rejoiner is told";
  EXPECT_LE(ticks, 30) << "within a few round trips of the answer (a retry is 200 ms), not a timeout";
  const Event* refused = first_event(match, 2, EventType::rejoin_refused);
  EXPECT_EQ(refused->player, both ? refused->player : 0) << "the refusing machine's player";
  EXPECT_TRUE(refused->player == 0 || (both && refused->player == 1));
  // cannot_continue comes right after, once.
  EXPECT_EQ(match.count_events(2, EventType::cannot_continue), 1u);
  EXPECT_EQ(match.count_events(2, EventType::player_rejoining), 0u);
  EXPECT_FALSE(match.machine(2).session->running());
  expect_silent_from_now(match, 2);
  match.machine(2).stopped = true;
  for (int t = 0; t < 1500 && !match.run(1);) ++t;
  for (uint32_t m = 0; m < 2; ++m) {
    SCOPED_TRACE("machine " + std::to_string(m));
    EXPECT_EQ(seen(match, m, 2).rejoining, kNullFrame);
    EXPECT_EQ(seen(match, m, 2).cut, cut);
    EXPECT_EQ(match.count_events(m, EventType::cannot_continue), 0u);
    EXPECT_GE(match.machine(m).session->confirmed_frame(), o.frames);
  }
  std::vector<Frame> cuts = {-2, -2, cut};
  expect_states_agree(match, match.reference(cuts), o.frames);
  EXPECT_EQ(match.errors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Answers, RejoinRefusedByTheGame, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "BothRefuse" : "OneRefusesOneAccepts");
                         });

// A blind attacker (with the match key when there is one, but not on the path) floods the
// rejoiner with refusals "from" every other machine's address: well formed, sealed, the refused
// flag set, but it cannot know the challenge they must echo. Every one is dropped; the rejoin
// goes through and every machine agrees.
class RejoinForgedRefusal : public ::testing::TestWithParam<bool> {};

TEST_P(RejoinForgedRefusal, FromABlindAttackerIsIgnored) {
  const bool key = GetParam();
  RETCON_SKIP_WITHOUT_MATCH_KEYS(key);
  MatchOptions o = three_machines();
  o.match_key = key;
  Match match(o);
  ASSERT_TRUE(match.build());
  const Frame cut = crash_and_restart(match, 2, 150, 0);
  detail::DatagramAuth auth;
  uint8_t match_key[32];
  test_match_key(match_key);
  ASSERT_TRUE(auth.configure(key ? match_key : nullptr, true));
  detail::Xoshiro256 seal_rng(99);
  std::mt19937_64 rng(7);
  uint64_t forged = 0;
  auto forge = [&](uint32_t as) {
    detail::Message m;
    m.header.type = detail::MessageType::handshake_reply;
    m.header.nonce = uint32_t(rng()) | 1u;
    m.header.sequence = uint32_t(rng() % 1000);
    m.handshake.challenge = rng();
    m.handshake.shape = detail::SessionShape{3, o.input_size, 60, uint32_t(o.max_prediction)};
    m.handshake.players_owned = uint16_t(1u << as);
    m.handshake.send_blob_size = uint16_t(o.input_size);
    m.handshake.receive_blob_size = uint16_t(o.input_size);
    m.handshake.aes256gcm = key && auth.offers_aes256gcm();
    m.handshake.refused = true;
    uint8_t d[detail::kMaxDatagramSize];
    size_t n = detail::encode_message(m, d, auth.plain_capacity(m.header.type));
    ASSERT_GT(n, 0u);
    n = auth.seal(d, n, sizeof d, seal_rng, m.header.sequence);
    ASSERT_GT(n, 0u);
    match.machine(as).wire->send(match.machine(2).wire->address(), d, n);
    ++forged;
  };
  std::vector<size_t> answered;
  for (int t = 0; t < 1500 && match.machine(2).session->confirmed_frame() < o.frames; ++t) {
    if (seen(match, 2, 2).rejoining == kNullFrame)
      for (int k = 0; k < 4; ++k) {
        forge(0);
        forge(1);
      }
    match.tick();
    answer_requests(match, answered, true);
  }
  EXPECT_GT(forged, 100u);
  EXPECT_EQ(match.count_events(2, EventType::rejoin_refused), 0u);
  EXPECT_EQ(match.count_events(2, EventType::cannot_continue), 0u);
  const Seen back = seen(match, 2, 2);
  ASSERT_NE(back.rejoining, kNullFrame) << "it came back";
  for (int t = 0; t < 300 && !match.run(1);) ++t;
  for (uint32_t m = 0; m < 2; ++m) EXPECT_EQ(seen(match, m, 2).rejoined, back.rejoining);
  std::vector<Frame> cuts = {-2, -2, cut}, live = {-2, -2, back.rejoining};
  expect_states_agree(match, match.reference(cuts, live), o.frames);
}

INSTANTIATE_TEST_SUITE_P(Key, RejoinForgedRefusal, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return std::string(i.param ? "Keyed" : "NoKey"); });

}  // namespace
}  // namespace retcon::test
