// Whole matches under attack (docs/SECURITY.md): a blind attacker spoofing the peer's address
// during the handshake and all through play, with and without a match key. Every test asserts
// what players notice: both reach running, frames advance, states agree, nobody is dropped.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "net/wire.h"
#include "support/match_checks.h"
#include "support/match_harness.h"
#include "support/match_keys.h"

namespace retcon::test {
namespace {

// A datagram a blind attacker could send: a v3 header (or another version) of any type with
// a guessed nonce and a sequence near either end, a valid plain checksum, hostile fields.
size_t blind_forgery(std::mt19937_64& rng, uint8_t* out) {
  detail::Message m;
  m.header.type = static_cast<detail::MessageType>(1 + rng() % 9);
  m.header.nonce = uint32_t(rng());
  m.header.sequence = rng() % 2 ? uint32_t(rng() % 100) : 0xFFFFFFFFu - uint32_t(rng() % 100);
  m.handshake = {rng(), {2, 2, uint32_t(rng() % 2 ? 60 : 30)}, 1, false, 2, 2, false};
  m.ack_frame = int32_t(rng() % 5000);
  m.quality = {rng(), int32_t(rng() % 100000), int32_t(rng() % 2 ? 1000000000 : -1000000000)};
  m.echoed_time_us = rng();
  m.checksum = {int32_t(rng() % 1000), rng()};
  size_t n = 0;
  if (m.header.type == detail::MessageType::inputs) {
    const uint8_t zeros[2] = {0, 0}, blob[2] = {0xFF, 0xFF};
    detail::InputsWriter w(out, detail::kMaxDatagramSize, m.header, Frame(rng() % 300),
                           Frame(rng() % 300), 2, nullptr, 0, zeros);
    w.append(blob);
    n = w.finish();
  } else {
    n = detail::encode_message(m, out, detail::kMaxDatagramSize);
  }
  if (rng() % 10 == 0) out[2] = uint8_t(detail::kProtocolVersion - 1);  // another version
  return n;
}

class MatchModes : public ::testing::TestWithParam<bool> {};  // match key or not
INSTANTIATE_TEST_SUITE_P(Key, MatchModes, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "WithKey" : "NoKey";
                         });

TEST_P(MatchModes, BlindSpoofingFromThePeersAddressNeverStopsTheMatch) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  MatchOptions o;
  o.frames = 600;
  o.link.latency_us = 20000;
  o.link.loss = 0.02;
  o.match_key = GetParam();
  Match match(o);
  ASSERT_TRUE(match.build());
  std::mt19937_64 rng(11);
  uint8_t d[detail::kMaxDatagramSize];
  InMemoryTransport& as_1 = *match.machine(1).wire;  // "from" machine 1, to machine 0
  InMemoryTransport& as_0 = *match.machine(0).wire;
  const PeerAddress to_0 = match.machine(0).wire->address();
  const PeerAddress to_1 = match.machine(1).wire->address();
  bool done = false;
  for (int t = 0; t < 3000 && !done; ++t) {
    for (int k = 0; k < 6; ++k) {  // from the first tick: during the handshake too
      as_1.send(to_0, d, blind_forgery(rng, d));
      as_0.send(to_1, d, blind_forgery(rng, d));
    }
    match.tick();
    done = match.machine(0).session->confirmed_frame() >= o.frames &&
           match.machine(1).session->confirmed_frame() >= o.frames;
  }
  ASSERT_TRUE(done);
  expect_agree_with_reference(match, o.frames);
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_EQ(match.count_events(m, EventType::running), 1u);
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u);
    EXPECT_EQ(match.count_events(m, EventType::handshake_rejected), 0u);
    EXPECT_LE(match.machine(m).session->frames_to_wait(), 2);
  }
  PeerStats st{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &st), Result::ok);
  EXPECT_GT(st.dropped_bad_nonce + st.dropped_bad_checksum + st.dropped_truncated, 2000u);
}

// The attack of issue 9: before machine 1 even starts, machine 0 receives a spoofed request
// (naming a nonce) and a disconnect from that nonce. Machine 0 must not play alone: both
// run once machine 1 starts, and agree.
TEST_P(MatchModes, SpoofedRequestAndDisconnectBeforeThePeerStartsCannotMakeAPeerPlayAlone) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  MatchOptions o;
  o.frames = 300;
  o.match_key = GetParam();
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).stopped = true;  // not started yet
  std::mt19937_64 rng(12);
  uint8_t d[detail::kMaxDatagramSize];
  InMemoryTransport& as_1 = *match.machine(1).wire;
  const PeerAddress to_0 = match.machine(0).wire->address();
  for (int t = 0; t < 30; ++t) {
    detail::Message m;
    m.header.type = detail::MessageType::handshake_request;
    m.header.nonce = 0x0BADF00D;
    m.header.sequence = uint32_t(t * 2);
    m.handshake = {rng(), {2, 2, 60}, 2, false, 2, 2, false};
    as_1.send(to_0, d, detail::encode_message(m, d, sizeof d));
    m.header.type = detail::MessageType::disconnect;
    m.header.sequence = uint32_t(t * 2 + 1);
    as_1.send(to_0, d, detail::encode_message(m, d, sizeof d));
    match.tick();
    EXPECT_FALSE(match.machine(0).session->running());
  }
  // Machine 1's transport received machine 0's answers meanwhile; it starts now.
  match.machine(1).stopped = false;
  ASSERT_TRUE(match.run(2000));
  expect_agree_with_reference(match, o.frames);
  EXPECT_EQ(match.count_events(0, EventType::disconnected), 0u);
}

TEST(P2PAttack, KeyedMatchWithLossAndASpectatorAgrees) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  MatchOptions o;
  o.machines = 3;
  o.spectators = 1;
  o.frames = 400;
  o.link.latency_us = 30000;
  o.link.loss = 0.05;
  o.link.duplicate = 0.05;
  o.match_key = true;
  Match match(o);
  ASSERT_TRUE(match.build());
  ASSERT_TRUE(match.run(4000));
  for (int i = 0; i < 300; ++i) match.tick();  // let the spectator catch up
  expect_agree_with_reference(match, o.frames);
  EXPECT_GE(match.machine(3).session->current_frame(), o.frames);
}

// A machine holding another key never joins: the others never run (nothing is forged into
// the match), and nobody desyncs.
TEST(P2PAttack, AMachineWithAnotherKeyNeverJoins) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  MatchOptions o;
  o.frames = 60;
  o.match_key = true;
  o.other_key_machine = 1;
  Match match(o);
  ASSERT_TRUE(match.build());
  EXPECT_FALSE(match.run(300));
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_FALSE(match.machine(m).session->running());
    EXPECT_EQ(match.count_events(m, EventType::running), 0u);
  }
  PeerStats st{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &st), Result::ok);
  EXPECT_GT(st.dropped_bad_checksum, 0u);
}

}  // namespace
}  // namespace retcon::test
