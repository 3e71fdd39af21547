// Whole matches under attack (docs/SECURITY.md): a blind attacker spoofing the peer's address
// during the handshake and all through play, with and without a match key. Every test asserts
// what players notice: both reach running, frames advance, states agree, nobody is dropped.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "net/datagram_auth.h"
#include "net/wire.h"
#include "session/decision_exchange.h"
#include "session/delay_change.h"
#include "session/state_transfer.h"
#include "support/channel_insider.h"
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
  m.quality = {uint8_t(rng()), int32_t(rng() % 100000), int32_t(rng() % 2 ? 1000000000 : -1000000000)};
  m.reply = {uint8_t(rng()), uint32_t(rng() % 1000000)};
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
    m.handshake = {rng(), {2, 2, 60, 8}, 2, false, 2, 2, false};  // a whole valid hello
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

namespace retcon::test {
namespace {

// A blind forgery of any of the eleven types, the reliable channel's included, with bodies an
// attacker would pick: a chunk of a blob claiming 4 GiB or a huge offset, a message on a
// stream nobody reads or on the decision stream naming another player and an absurd frame,
// an acknowledgement of chunks and messages never sent.
size_t blind_forgery_of_any_type(std::mt19937_64& rng, uint8_t* out) {
  const auto type = static_cast<detail::MessageType>(1 + rng() % 11);
  if (type != detail::MessageType::channel_data && type != detail::MessageType::channel_ack)
    return blind_forgery(rng, out);
  detail::Message m;
  m.header.type = type;
  m.header.nonce = uint32_t(rng());
  m.header.sequence = rng() % 2 ? uint32_t(rng() % 100) : 0xFFFFFFFFu - uint32_t(rng() % 100);
  uint8_t body[64] = {};
  size_t size = 0;
  auto u32 = [&](uint32_t v) {
    std::memcpy(body + size, &v, 4);
    size += 4;
  };
  if (type == detail::MessageType::channel_data) {
    switch (rng() % 3) {
      case 0:  // a chunk: id, total (4 GiB - 1 or huge), hash, tag, frame, index, payload
        body[size++] = 2;
        u32(uint32_t(1 + rng() % 4));
        u32(rng() % 2 ? 0xFFFFFFFFu : uint32_t(rng()));
        u32(uint32_t(rng()));
        u32(uint32_t(rng()));
        u32(uint32_t(rng() % 3));
        u32(rng() % 2 ? 0x7FFFFFFFu : uint32_t(rng()));
        u32(uint32_t(rng()));
        break;
      case 1:  // a message: sequence, stream (unknown, or decisions), body
        body[size++] = 1;
        u32(uint32_t(rng() % 40));
        body[size++] = uint8_t(rng() % 2 ? 2 : rng() % 256);
        u32(0x7FFFFFF0u);
        u32(uint32_t(rng()));
        break;
      default:  // a cancel of some transfer
        body[size++] = 3;
        u32(uint32_t(1 + rng() % 4));
        break;
    }
  } else {  // an ack of messages and chunks never sent, with every bit set
    u32(uint32_t(rng()));
    u32(0xFFFFFFFFu);
    u32(uint32_t(1 + rng() % 4));
    body[size++] = uint8_t(rng() % 5);
    u32(uint32_t(rng()));
    std::memset(body + size, 0xFF, 32);
    size += 32;
  }
  m.channel_body = body;
  m.channel_size = size;
  return detail::encode_message(m, out, detail::kMaxDatagramSize);
}

// The delay changes the sessions applied (adaptive delay), for the lockstep reference; and a
// round that ends at frame 300 on every player machine, so one more is decided mid-match.
void note_applied_delays(Match& match) {
  for (const Event& e : match.machine(0).game.events)
    if (e.type == EventType::input_delay_applied) match.note_delay_change(e.frame, e.count);
}
void end_a_round_at_300(Match& match) {
  match.before_input = [&match](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    if (!match.machine(m).spectator && s.current_frame() == 300) {
      EXPECT_EQ(s.between_rounds(), Result::ok);
    }
  };
}
// A match whose layers are all busy, for the attacks below: adaptive delay applied through the
// timed-message stream (one more change decided at the round end of frame 300), and a spectator
// joining late from the host's transferred state.
MatchOptions busy_match(bool match_key, Frame frames, Frame spectator_joins) {
  MatchOptions o;
  o.frames = frames;
  o.link.latency_us = 20000;
  o.match_key = match_key;
  o.adaptive_delay = true;
  o.spectators = 1;
  o.state_transfer = true;
  o.spectator_join = {spectator_joins};
  return o;
}

// Blind spoofing of every type (the channel's included) into a match whose layers are all
// busy: adaptive delay applied through the timed-message stream, and a spectator joining late
// from the host's transferred state. Forged "from" each machine to each other one, from the
// first tick: both players run once, the spectator gets the state and follows, everyone agrees
// with the reference, nobody is dropped.
TEST_P(MatchModes, BlindSpoofingOfEveryTypeIntoEveryLayerChangesNothing) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  const MatchOptions o = busy_match(GetParam(), 700, 240);
  Match match(o);
  ASSERT_TRUE(match.build());
  end_a_round_at_300(match);
  std::mt19937_64 rng(31);
  uint8_t d[detail::kMaxDatagramSize];
  const uint32_t n = uint32_t(match.size());
  bool done = false;
  for (int t = 0; t < 4000 && !done; ++t) {
    for (uint32_t from = 0; from < n; ++from)
      for (uint32_t to = 0; to < n; ++to)
        if (from != to) match.machine(from).wire->send(match.machine(to).wire->address(), d, blind_forgery_of_any_type(rng, d));
    match.tick();
    done = true;
    for (uint32_t m = 0; m < n; ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
  }
  ASSERT_TRUE(done);
  note_applied_delays(match);
  EXPECT_EQ(match.count_events(0, EventType::input_delay_applied), 2u) << "at the start and after the round";
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < n; ++m) {
    EXPECT_EQ(match.count_events(m, EventType::running), 1u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
  }
  // The spectator started from the transferred state, not from frame 0.
  EXPECT_EQ(match.machine(2).hashes[0], 0u);
}

// A tap in front of one machine: what reaches it is recorded (sender and bytes) and passed on.
struct Capture {
  struct Datagram {
    uint32_t from;
    std::vector<uint8_t> bytes;
  };
  std::vector<Datagram> recorded;

  // Takes what waits for machine `to`, records it, and puts it back as sent by its sender.
  void tap(Match& match, uint32_t to) {
    InMemoryTransport& wire = *match.machine(to).wire;
    std::vector<Datagram> now;
    PeerAddress from;
    uint8_t buffer[detail::kMaxDatagramSize];
    size_t length = 0;
    while (wire.receive(&from, buffer, sizeof buffer, &length)) {
      for (uint32_t m = 0; m < match.size(); ++m)
        if (match.machine(m).wire->address() == from) now.push_back({m, std::vector<uint8_t>(buffer, buffer + length)});
    }
    for (const Datagram& g : now) match.machine(g.from).wire->send(wire.address(), g.bytes.data(), g.bytes.size());
    recorded.insert(recorded.end(), now.begin(), now.end());
  }
};

// Replayed captures: everything machine 0 received in the first 300 ticks (handshake, inputs,
// acks, quality reports, checksums, channel traffic: the state transfer to a late spectator
// and the delay decisions) is sent to it again, from the real senders' addresses, ten
// datagrams a tick, later in the match. Every one is an old sequence (or an old handshake):
// nothing changes, the match runs to its end, states agree, nobody is dropped or desyncs.
TEST_P(MatchModes, ReplayedCapturesOfAWholeMatchChangeNothing) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  const MatchOptions o = busy_match(GetParam(), 900, 100);
  Match match(o);
  ASSERT_TRUE(match.build());
  end_a_round_at_300(match);
  Capture capture;
  for (int t = 0; t < 300; ++t) {
    capture.tap(match, 0);
    match.tick();
  }
  ASSERT_GT(capture.recorded.size(), 300u);
  size_t next = 0;
  bool done = false;
  for (int t = 0; t < 4000 && !done; ++t) {
    for (int k = 0; k < 10 && next < capture.recorded.size(); ++k, ++next) {
      const Capture::Datagram& g = capture.recorded[next];
      match.machine(g.from).wire->send(match.machine(0).wire->address(), g.bytes.data(), g.bytes.size());
    }
    match.tick();
    done = next == capture.recorded.size();
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
  }
  ASSERT_TRUE(done);
  note_applied_delays(match);
  EXPECT_EQ(match.count_events(0, EventType::input_delay_applied), 2u) << "at the start and after the round";
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < match.size(); ++m) {
    EXPECT_EQ(match.count_events(m, EventType::running), 1u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
    EXPECT_EQ(match.count_events(m, EventType::handshake_rejected), 0u) << m;
  }
  PeerStats st{};
  ASSERT_EQ(match.machine(0).session->peer_stats(1, &st), Result::ok);
  EXPECT_GT(st.dropped_replayed + st.dropped_bad_nonce + st.dropped_wrong_state + st.dropped_out_of_window, 100u);
}


// A player machine that schedules delay changes far ahead (four of them, each a legal frame)
// cannot crowd out another machine's change: before, every machine kept four pending changes
// in all, so machine 2's change (due soon) was dropped on machines 0 and 1 and applied on
// machine 2 alone, and machine 0 could not schedule one of its own any more.
TEST(P2PAttack, DelayChangesScheduledFarAheadCannotCrowdOutAnotherMachines) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 500;
  o.link.latency_us = 30000;
  Match match(o);
  ASSERT_TRUE(match.build());
  int far_scheduled = 0;
  Frame planned = kNullFrame;
  Result own = Result::internal_error;
  match.before_input = [&](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    DelayChoice c;
    if (m == 1 && far_scheduled == 0 && s.current_frame() >= 100) {
      for (int k = 0; k < 4; ++k)
        far_scheduled += s.apply_input_delay(AdaptiveDelayRule{}, s.current_frame() + 20000 + k, &c) == Result::ok;
    }
    if (m == 2 && planned == kNullFrame && s.current_frame() >= 160) {
      ASSERT_EQ(s.apply_input_delay(AdaptiveDelayRule{}, s.earliest_decision_frame() + 10, &c), Result::ok);
      planned = c.frame;
    }
    if (m == 0 && own == Result::internal_error && s.current_frame() >= 160)
      own = s.apply_input_delay(AdaptiveDelayRule{}, s.earliest_decision_frame() + 10, &c);
  };
  ASSERT_TRUE(match.run(20000));
  EXPECT_EQ(far_scheduled, 4);
  EXPECT_EQ(own, Result::ok) << "machine 0 can still schedule its own change";
  ASSERT_NE(planned, kNullFrame);
  // Machine 2's change applied on every machine at its frame (and machine 0's too).
  for (uint32_t m = 0; m < 3; ++m) {
    bool seen = false;
    for (const Event& e : match.machine(m).game.events)
      if (e.type == EventType::input_delay_applied && e.player == 2) seen = seen || e.frame == planned;
    EXPECT_TRUE(seen) << "machine " << m << " did not apply machine 2's change at frame " << planned;
    EXPECT_EQ(match.count_events(m, EventType::input_delay_applied), 2u) << "machine " << m;
  }
  for (const Event& e : match.machine(0).game.events)
    if (e.type == EventType::input_delay_applied) match.note_delay_change(e.frame, e.count);
  expect_agree_with_reference(match, o.frames, true);
}


// An attacker on the path who sees every datagram but lacks the key (with a key), or does not
// recompute the connection-keyed checksum (without one): ahead of each real datagram to
// machine 0 it sends forgeries carrying the real header (nonce, the very sequence number and
// the next ones, the type changed to any of the eleven: acks, inputs, quality and checksum
// reports, disconnects, handshakes, channel traffic) with a tampered body. None may consume the
// sequence number the real datagram then brings, or change anything: the match runs to its end
// with the reference states, nobody is dropped, no desync, no handshake rejected.
TEST_P(MatchModes, OnPathForgeriesAheadOfEveryDatagramChangeNothing) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  const MatchOptions o = busy_match(GetParam(), 600, 150);
  Match match(o);
  ASSERT_TRUE(match.build());
  end_a_round_at_300(match);
  std::mt19937_64 rng(41);
  uint64_t forged = 0;
  bool done = false;
  for (int t = 0; t < 4000 && !done; ++t) {
    // Everything waiting for machine 0 (from the other player and the spectator): forgeries
    // first, then the real datagram, from its real sender.
    InMemoryTransport& wire = *match.machine(0).wire;
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> waiting;
    PeerAddress from;
    uint8_t buffer[detail::kMaxDatagramSize];
    size_t length = 0;
    while (wire.receive(&from, buffer, sizeof buffer, &length))
      for (uint32_t m = 0; m < match.size(); ++m)
        if (match.machine(m).wire->address() == from) waiting.push_back({m, std::vector<uint8_t>(buffer, buffer + length)});
    for (const auto& [sender, bytes] : waiting) {
      InMemoryTransport& as = *match.machine(sender).wire;
      for (int k = 0; k < 3; ++k) {
        std::vector<uint8_t> f = bytes;
        // The real datagram's layout: a handshake's 32-bit sequence at 8, a data message's
        // 16 bits at 4; its checksum (or tag) and body follow its public header.
        const bool handshake = f.size() >= 4 && detail::is_handshake(detail::MessageType(f[3]));
        const size_t header = handshake ? detail::kHandshakeHeaderSize : detail::kDataHeaderSize;
        if (f.size() < header) f.resize(header);
        f[3] = uint8_t(1 + rng() % 11);  // any type
        if (handshake) {
          uint32_t sequence = 0;
          std::memcpy(&sequence, f.data() + 8, 4);
          sequence += uint32_t(k);  // this one, and the next two
          std::memcpy(f.data() + 8, &sequence, 4);
        } else {
          uint16_t sequence = 0;
          std::memcpy(&sequence, f.data() + 4, 2);
          sequence = uint16_t(sequence + k);
          std::memcpy(f.data() + 4, &sequence, 2);
        }
        for (size_t i = header - 4; i < f.size(); ++i)
          if (rng() % 3 == 0) f[i] = uint8_t(rng());
        if (f.size() == header || rng() % 4 == 0) f.push_back(uint8_t(rng()));
        as.send(wire.address(), f.data(), f.size());
        ++forged;
      }
      as.send(wire.address(), bytes.data(), bytes.size());
    }
    match.tick();
    done = true;
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
  }
  ASSERT_TRUE(done);
  EXPECT_GT(forged, 2000u);
  note_applied_delays(match);
  EXPECT_EQ(match.count_events(0, EventType::input_delay_applied), 2u) << "at the start and after the round";
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < match.size(); ++m) {
    EXPECT_EQ(match.count_events(m, EventType::running), 1u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
    EXPECT_EQ(match.count_events(m, EventType::handshake_rejected), 0u) << m;
  }
  EXPECT_EQ(match.machine(2).hashes[0], 0u) << "the spectator started from the transferred state";
}


// Timed decisions stamped as far ahead as allowed, as many as a machine may have in flight,
// cannot crowd out another machine's: every sender has its own share of every machine's queue.
// Machine 1 fills its share with decisions 30,000 frames ahead; machine 2's decision for a near
// frame is then taken everywhere, on the same frame (the states, which fold decisions in,
// equal the reference's on every machine).
TEST(P2PAttack, DecisionsStampedFarAheadCannotCrowdOutAnotherMachines) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 500;
  o.link.latency_us = 30000;
  Match match(o);
  ASSERT_TRUE(match.build());
  int far = 0, refused_far = 0;
  Frame near = kNullFrame;
  match.before_input = [&](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    if (m == 1 && far + refused_far == 0 && s.current_frame() >= 100) {
      for (int k = 0; k < 40; ++k) {
        const Result r = match.send_decision(1, s.current_frame() + 30000 + k, {uint8_t(k), 1});
        if (r == Result::ok) ++far;
        else ++refused_far;
      }
    }
    if (m == 2 && near == kNullFrame && s.current_frame() >= 160) {
      const Frame f = s.earliest_decision_frame() + 5;
      ASSERT_EQ(match.send_decision(2, f, {0x22, 2}), Result::ok);
      near = f;
    }
  };
  ASSERT_TRUE(match.run(20000));
  EXPECT_GT(far, 0);
  EXPECT_GT(refused_far, 0) << "machine 1 was held to its share";
  ASSERT_NE(near, kNullFrame);
  ASSERT_LT(near, o.frames);
  expect_agree_with_reference(match, o.frames, true);
}


// An insider on the connection (no key: an on-path attacker who computes the connection-keyed
// checksum from the nonces it sees, i.e. what a peer's own modified client can send): it taps
// every datagram, learns each connection's nonces and sequence numbers, and sends well-formed,
// verified channel messages the session must refuse by who sent them:
//   player 1 -> machine 0: a state request (only spectators may ask), a decision and a delay
//     change in the name of player 0 (not its own), a decision for a frame already final, a
//     message on a stream nobody reads;
//   spectator -> machine 0: a decision and a delay change (spectators decide nothing).
// Every one is dropped: machine 0's states (which would fold an accepted decision in) equal the
// reference's, no delay change is applied, nobody is dropped.
TEST(P2PAttack, VerifiedChannelMessagesFromTheWrongSenderAreRefused) {
  MatchOptions o;
  o.frames = 500;
  o.link.latency_us = 20000;
  o.spectators = 1;
  Match match(o);
  ASSERT_TRUE(match.build());
  Insider insider(match);
  auto forge = [&](uint32_t sender, uint8_t stream, const uint8_t* payload, size_t n) {
    ASSERT_TRUE(insider.forge(sender, 0, stream, payload, n));
  };
  int forged = 0;
  for (int t = 0; t < 4000; ++t) {
    insider.tap_all();
    P2PSession& host = *match.machine(0).session;
    if (t == 200 && host.running()) {
      uint8_t body[detail::kMaxChannelMessage];
      detail::TransferMessage request;
      request.kind = detail::TransferKind::request;
      forge(1, uint8_t(detail::ChannelStream::state_transfer), body, detail::encode_transfer(request, body));
      const uint8_t decision[2] = {0x66, 0x66};
      const Frame ahead = host.current_frame() + 30;
      forge(1, uint8_t(detail::ChannelStream::decisions), body,
            detail::encode_decision(body, sizeof body, 0, ahead, decision, sizeof decision));
      forge(1, uint8_t(detail::ChannelStream::decisions), body,
            detail::encode_decision(body, sizeof body, 1, host.confirmed_frame() - 1, decision, sizeof decision));
      detail::DelayChange change;
      change.sender = 0;
      change.frame = ahead;
      change.delay = 7;
      forge(1, uint8_t(detail::ChannelStream::decisions), body, detail::encode_delay_change(change, body, sizeof body));
      forge(1, 77, decision, sizeof decision);
      forge(2, uint8_t(detail::ChannelStream::decisions), body,
            detail::encode_decision(body, sizeof body, 1, ahead, decision, sizeof decision));
      change.sender = 1;
      forge(2, uint8_t(detail::ChannelStream::decisions), body, detail::encode_delay_change(change, body, sizeof body));
      forged = 7;
    }
    match.tick();
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
    if (done) break;
  }
  ASSERT_EQ(forged, 7);
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < match.size(); ++m) {
    EXPECT_EQ(match.count_events(m, EventType::input_delay_applied), 0u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
  }
}


// The same insider stamps messages of the decision stream, each in the name of a player its
// connection owns, for frames no honest sender can name: just past the documented maximum
// (kMaxReceivedDecisionLead past the frame the receiver knows), far past it, at INT32_MAX, a
// delay change at INT32_MAX, and the host's decision to its spectator at INT32_MAX. Each is
// refused and told through the log callback, with the count; nothing is stored, and the match
// runs to its end with every machine (and the spectator) on the reference states, no delay
// change, nobody dropped. One stamped at the sender's own limit (36,000 frames) is taken.
TEST(P2PAttack, DecisionsForFramesNoHonestSenderCanNameAreRefused) {
  MatchOptions o;
  o.frames = 500;
  o.link.latency_us = 20000;
  o.spectators = 1;
  o.capture_logs = true;
  Match match(o);
  ASSERT_TRUE(match.build());
  Insider insider(match);
  int forged = 0;
  Frame known = kNullFrame;
  for (int t = 0; t < 4000; ++t) {
    insider.tap_all();
    P2PSession& host = *match.machine(0).session;
    if (t == 200 && host.running()) {
      uint8_t body[detail::kMaxChannelMessage];
      const uint8_t decision[2] = {0x66, 0x66};
      // Machine 0 knows at least its own frame; the sender's newest input it holds is within
      // a round trip of it. 100 frames past that is past the limit either way.
      known = host.current_frame();
      const Frame past = known + detail::kMaxReceivedDecisionLead + 100;
      for (const Frame f : {past, past + 1000000, Frame(INT32_MAX)}) {
        ASSERT_TRUE(insider.forge(1, 0, uint8_t(detail::ChannelStream::decisions), body,
                                  detail::encode_decision(body, sizeof body, 1, f, decision, sizeof decision)));
        ++forged;
      }
      detail::DelayChange change;
      change.sender = 1;
      change.frame = INT32_MAX;
      change.delay = 3;
      ASSERT_TRUE(insider.forge(1, 0, uint8_t(detail::ChannelStream::decisions), body,
                                detail::encode_delay_change(change, body, sizeof body)));
      ASSERT_TRUE(insider.forge(0, 2, uint8_t(detail::ChannelStream::decisions), body,
                                detail::encode_decision(body, sizeof body, 0, INT32_MAX, decision, sizeof decision)));
      forged += 2;
    }
    match.tick();
    bool done = true;
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
    if (done) break;
  }
  ASSERT_EQ(forged, 5);
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < match.size(); ++m) {
    EXPECT_EQ(match.count_events(m, EventType::input_delay_applied), 0u) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
  }
  const Machine& host = match.machine(0);
  EXPECT_TRUE(host.logged("decision of player 1 for frame " + std::to_string(known + detail::kMaxReceivedDecisionLead + 100) +
                          " refused"));
  EXPECT_TRUE(host.logged("(2 refused so far)"));
  EXPECT_FALSE(host.logged("(3 refused so far)")) << "told on powers of two only";
  EXPECT_TRUE(host.logged("delay change of player 1 for frame 2147483647 refused"));
  EXPECT_TRUE(match.machine(2).logged("decision of player 0 for frame 2147483647 refused"));
}

// The bound is not tighter than an honest sender's own limit: a decision stamped 36,000 frames
// ahead of the sender's frame (the most send_decision takes) is kept by every receiver, and
// one for a near frame after it still applies on the same frame everywhere.
TEST(P2PAttack, ADecisionAtTheSendersOwnLimitIsKept) {
  MatchOptions o;
  o.machines = 3;
  o.frames = 400;
  o.link.latency_us = 30000;
  o.spectators = 1;
  o.capture_logs = true;
  Match match(o);
  ASSERT_TRUE(match.build());
  Frame near = kNullFrame;
  bool far = false;
  match.before_input = [&](uint32_t m) {
    P2PSession& s = *match.machine(m).session;
    if (m == 1 && !far && s.current_frame() >= 100) {
      ASSERT_EQ(match.send_decision(1, s.current_frame() + detail::kMaxDecisionLead, {0x11, 1}), Result::ok);
      far = true;
    }
    if (m == 1 && far && near == kNullFrame && s.current_frame() >= 150) {
      near = s.earliest_decision_frame() + 5;
      ASSERT_EQ(match.send_decision(1, near, {0x22, 2}), Result::ok);
    }
  };
  bool done = false;
  for (int t = 0; t < 20000 && !done; ++t) {  // the spectator too
    match.tick();
    done = true;
    for (uint32_t m = 0; m < match.size(); ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
  }
  ASSERT_TRUE(done);
  ASSERT_NE(near, kNullFrame);
  expect_agree_with_reference(match, o.frames, true);
  for (uint32_t m = 0; m < match.size(); ++m) EXPECT_FALSE(match.machine(m).logged("refused")) << m;
}

// A flood of verified state requests on a spectator's connection (forged as in the test above:
// 200 of them, a few a tick, while the host serves that spectator its state): the host answers
// each within its bounds (a request restarts that spectator's transfer, nothing else), and the
// players' match runs on untouched: both reach the end with the reference states, nobody is
// dropped, no desync.
TEST(P2PAttack, StateRequestsFloodingASpectatorsConnectionLeaveThePlayersUntouched) {
  MatchOptions o;
  o.frames = 600;
  o.link.latency_us = 20000;
  o.spectators = 1;
  o.state_transfer = true;
  o.spectator_join = {120};
  o.state_padding = 20000;  // a state of several chunks: transfers are under way when asked again
  Match match(o);
  ASSERT_TRUE(match.build());
  Insider insider(match);
  int forged = 0;
  for (int t = 0; t < 4000; ++t) {
    insider.tap_all();
    if (forged < 200 && match.machine(0).session->current_frame() > 150) {
      uint8_t body[detail::kMaxChannelMessage];
      detail::TransferMessage request;
      request.kind = detail::TransferKind::request;
      for (int k = 0; k < 3; ++k)
        forged += insider.forge(2, 0, uint8_t(detail::ChannelStream::state_transfer), body, detail::encode_transfer(request, body));
    }
    match.tick();
    if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(1).session->confirmed_frame() >= o.frames)
      break;
  }
  EXPECT_GE(forged, 200);
  // The forgeries passed the datagram checks: they reached the host's state-transfer layer.
  PeerStats st{};
  ASSERT_EQ(match.machine(0).session->spectator_stats(0, &st), Result::ok);
  EXPECT_EQ(st.dropped_bad_checksum, 0u);
  EXPECT_EQ(st.dropped_bad_nonce, 0u);
  for (uint32_t m = 0; m < 2; ++m) {
    ASSERT_GE(match.machine(m).session->confirmed_frame(), o.frames) << m;
    EXPECT_EQ(match.count_events(m, EventType::disconnected), 0u) << m;
    EXPECT_EQ(match.count_events(m, EventType::desync_detected), 0u) << m;
  }
  const std::vector<uint64_t> ref = match.reference();
  for (uint32_t m = 0; m < 2; ++m)
    for (Frame f = 0; f <= o.frames; ++f) ASSERT_EQ(match.machine(m).hashes[size_t(f)], ref[size_t(f)]) << m << " " << f;
}

}  // namespace
}  // namespace retcon::test
