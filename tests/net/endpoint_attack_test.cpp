// The endpoint under attack (docs/SECURITY.md): a blind spoofer who sends datagrams "from" the
// peer's address without seeing the traffic, an on-path observer (with a key: who lacks it), and
// an insider who holds every secret but sends absurd numbers. Two endpoints on a virtual clock;
// every test checks that the connection still runs and every input arrives intact.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "net/datagram_auth.h"
#include "net/endpoint.h"
#include "net/endpoint_pair.h"
#include "net/wire.h"
#include "support/match_keys.h"

namespace retcon {
namespace {

using detail::DropReason;
using detail::Endpoint;
using detail::EndpointConfig;
using detail::EndpointEvent;
using detail::EndpointEventType;
using detail::EndpointState;
using detail::Message;
using detail::MessageType;
using test::EndpointPair;

constexpr uint64_t kFrameUs = 16667;

uint64_t dropped(const Endpoint& e, DropReason r) { return e.stats().dropped[size_t(r)]; }
// Every datagram `e` dropped, whatever the reason.
uint64_t all_dropped(const Endpoint& e) {
  uint64_t all = 0;
  for (uint64_t x : e.stats().dropped) all += x;
  return all;
}

EndpointConfig config(uint64_t seed, bool key, bool aes = true, uint8_t key_byte = 0x5A) {
  EndpointConfig c = test::default_config(seed);
  c.has_match_key = key;
  c.allow_aes256gcm = aes;
  for (size_t i = 0; i < detail::kMatchKeySize; ++i) c.match_key[i] = uint8_t(key_byte + i);
  return c;
}

void blob_for(int side, Frame frame, uint8_t* out) {
  out[0] = uint8_t(frame * 7 + side);
  out[1] = uint8_t((frame / 5) ^ (side * 0x55));
}

// Both sides queue their input of `frame` and tell it as their frame, as a session's advance
// does. False when an endpoint refuses the input.
bool send_frame_both_ways(Endpoint* const eps[2], Frame frame) {
  uint8_t blob[2];
  for (int side = 0; side < 2; ++side) {
    blob_for(side, frame, blob);
    if (eps[side]->send_input(frame, blob) != Result::ok) return false;
    eps[side]->set_local_frame(frame, 0);
  }
  return true;
}

bool saw(Endpoint& e, EndpointEventType type) {
  EndpointEvent ev;
  bool found = false;
  while (e.pop_event(&ev)) found |= ev.type == type;
  return found;
}

// Streams `frames` frames both ways at 60 fps, as sessions do (set_local_frame included),
// calling `attack` every millisecond; checks every blob on arrival. True when all arrived.
bool stream(EndpointPair& pair, Frame frames, const std::function<void()>& attack) {
  Endpoint* eps[2] = {&pair.a().endpoint, &pair.b().endpoint};
  Frame next_send = 0, expected[2] = {0, 0};
  uint64_t next_frame_at = pair.now;
  const uint64_t deadline = pair.now + uint64_t(frames) * kFrameUs + 5000000;
  uint8_t want[2];
  while (pair.now < deadline && (expected[0] < frames || expected[1] < frames)) {
    if (pair.now >= next_frame_at && next_send < frames) {
      if (!send_frame_both_ways(eps, next_send)) return false;
      ++next_send;
      next_frame_at += kFrameUs;
    }
    if (attack) attack();
    pair.step(1000);
    for (int side = 0; side < 2; ++side) {
      Frame f;
      const uint8_t* got;
      while (eps[side]->pop_input(&f, &got)) {
        blob_for(1 - side, f, want);
        if (f != expected[side] || std::memcmp(got, want, 2) != 0) {
          ADD_FAILURE() << "side " << side << " frame " << f << " wrong";
          return false;
        }
        ++expected[side];
      }
    }
  }
  return expected[0] == frames && expected[1] == frames;
}

// An insider on a keyless connection after the handshake: it holds both nonces, so B's connection
// checksum key, and sends A what it likes as B. Its sequence numbers start at 20,000 (ahead of B's,
// a few hundred so far, and within 32,768: fresh).
struct Insider {
  explicit Insider(EndpointPair& pair)
      : a(pair.a().endpoint),
        b_nonce(pair.b().endpoint.local_nonce()),
        key(detail::connection_checksum_key(b_nonce, a.local_nonce())) {}
  // B's inputs datagram in `d`, not sealed yet: `frames` blobs of `blob_size` bytes, one after the
  // other in `blobs`, from `start` (coded against `reference`), acknowledging `ack`, `status` and
  // `riders` riding. Its size.
  size_t inputs(Frame start, Frame ack, uint16_t blob_size, const uint8_t* reference, const uint8_t* blobs,
                int frames, const detail::ConnectStatus* status = nullptr, uint8_t status_count = 0,
                const detail::Riders* riders = nullptr) {
    detail::Header h;
    h.type = MessageType::inputs;
    h.nonce = b_nonce;
    h.sequence = sequence++;
    detail::InputsWriter w(d, sizeof d, h, start, ack, blob_size, status, status_count, reference, riders);
    for (int k = 0; k < frames; ++k) EXPECT_TRUE(w.append(blobs + size_t(k) * blob_size));
    return w.finish();
  }
  // Seals the last datagram written (its `n` bytes in `d`): B's key, or `with_key`.
  void seal(size_t n) { seal(n, key); }
  void seal(size_t n, uint64_t with_key) { detail::seal_datagram(d, n, with_key, sequence - 1); }

  Endpoint& a;
  const uint32_t b_nonce;
  const uint64_t key;
  uint32_t sequence = 20000;
  uint8_t d[detail::kMaxDatagramSize];
};

// A datagram of `type` as a blind attacker makes it: a guessed nonce, hostile field values,
// the plain checksum (it cannot know the connection's key). Returns its size.
size_t forge(MessageType type, uint32_t nonce, uint32_t sequence, std::mt19937_64& rng,
             uint8_t* out) {
  Message m;
  m.header.type = type;
  m.header.nonce = nonce;
  m.header.sequence = sequence;
  m.handshake = {rng(), {2, 2, 60}, 1, false, 2, 2, false};
  if (rng() % 2) m.handshake.shape.frame_rate = 30;  // another shape
  m.ack_frame = int32_t(rng() % 100000);
  m.quality = {uint8_t(rng()), int32_t(rng() % 1000000000), 1000000000};
  m.reply = {uint8_t(rng()), uint32_t(rng() % (detail::kMaxReplyHoldUs + 1))};
  m.checksum = {int32_t(rng() % 1000), rng()};
  // A channel body that would be valid if it came from the peer: a message, or a full ack.
  uint8_t channel[49] = {1, 0, 0, 0, 0, 2, 0xAB};
  for (size_t i = 7; i < sizeof channel; ++i) channel[i] = uint8_t(rng());
  m.channel_body = channel;
  m.channel_size = type == MessageType::channel_ack ? 49 : 7;
  if (type == MessageType::inputs) {
    detail::Header h = m.header;
    const uint8_t zeros[2] = {0, 0}, blob[2] = {0xEE, 0xEE};
    // "I heard nothing from you for a minute": a claim that would excuse late inputs.
    detail::Riders riders;
    riders.has_silence = true;
    riders.silence = {uint32_t(1 + rng() % detail::kMaxSilenceGapMs), uint32_t(rng() % (detail::kMaxSilenceAgoMs + 1))};
    detail::InputsWriter w(out, detail::kMaxDatagramSize, h, Frame(rng() % 400),
                           Frame(rng() % 400), 2, nullptr, 0, zeros, &riders);
    w.append(blob);
    return w.finish();
  }
  return detail::encode_message(m, out, detail::kMaxDatagramSize);
}

constexpr MessageType kEveryType[] = {
    MessageType::handshake_request, MessageType::handshake_reply, MessageType::inputs,
    MessageType::input_ack,         MessageType::quality_report,  MessageType::quality_reply,
    MessageType::keep_alive,        MessageType::disconnect,      MessageType::checksum_report,
    MessageType::channel_data,      MessageType::channel_ack};
constexpr size_t kTypes = sizeof kEveryType / sizeof kEveryType[0];

class Modes : public ::testing::TestWithParam<bool> {};  // with a match key or without
INSTANTIATE_TEST_SUITE_P(Key, Modes, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "WithKey" : "NoKey";
                         });

// A blind attacker floods both sides with spoofed datagrams of every type (guessed nonces,
// sequence numbers near 0 and 0xffffffff, other versions) from the handshake to the end of
// play: the handshake completes, every input arrives intact, nobody is disconnected.
TEST_P(Modes, BlindSpoofingOfEveryTypeNeverStopsTheConnection) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  EndpointPair pair(config(101, GetParam()), config(102, GetParam()));
  std::mt19937_64 rng(7);
  uint8_t d[detail::kMaxDatagramSize];
  int n = 0;
  auto attack = [&] {
    for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) {
      const MessageType type = kEveryType[n++ % kTypes];
      const uint32_t sequence = rng() % 2 ? uint32_t(rng() % 64) : 0xFFFFFFFFu - uint32_t(rng() % 64);
      const size_t size = forge(type, uint32_t(rng()), sequence, rng, d);
      if (n % 13 == 0) d[2] = uint8_t(detail::kProtocolVersion - 1);  // another version
      e->on_datagram(d, size, pair.now);
    }
  };
  pair.start();
  const uint64_t end = pair.now + 10000000;
  while (pair.now < end && !(pair.a().endpoint.running() && pair.b().endpoint.running())) {
    attack();
    pair.step(1000);
  }
  ASSERT_TRUE(pair.a().endpoint.running() && pair.b().endpoint.running());
  EXPECT_LT(pair.now, 1000000u) << "the handshake took long";
  ASSERT_TRUE(stream(pair, 600, attack));
  for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) {
    EXPECT_TRUE(e->running());
    EXPECT_FALSE(saw(*e, EndpointEventType::disconnected));
    EXPECT_EQ(e->remote_frame_advantage(), 0);  // forged advice never taken
    EXPECT_EQ(e->silences().told().arrived_at_us, 0u) << "a forged silence note never taken";
    EXPECT_LE(e->remote_frame(), 600);
    // With a key, forgeries shorter than a sealed datagram's tag (most standalone reports since
    // protocol 7) are truncated before any check.
    EXPECT_GT(dropped(*e, DropReason::bad_nonce) + dropped(*e, DropReason::bad_checksum) +
                  dropped(*e, DropReason::truncated),
              1000u);
  }
}

// The first request does not claim the connection: a spoofed request (and a spoofed
// disconnect from the nonce it named) reaching A before B starts changes nothing.
TEST_P(Modes, SpoofedRequestAndDisconnectBeforeThePeerStartsClaimNothing) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  EndpointPair pair(config(103, GetParam()), config(104, GetParam()));
  ASSERT_EQ(pair.a().endpoint.start(pair.now), Result::ok);
  std::mt19937_64 rng(8);
  uint8_t d[detail::kMaxDatagramSize];
  const uint32_t fake = 0x0BADF00D;
  for (int i = 0; i < 50; ++i) {
    size_t size = forge(MessageType::handshake_request, fake, uint32_t(i), rng, d);
    pair.a().endpoint.on_datagram(d, size, pair.now);
    pair.step(1000);
    size = forge(MessageType::disconnect, fake, uint32_t(100 + i), rng, d);
    pair.a().endpoint.on_datagram(d, size, pair.now);
    // The attacker even knows the keyless connection key it would have (it does not know
    // A's nonce, but try A's real one): still not the peer.
    detail::seal_datagram(d, size, detail::connection_checksum_key(fake, pair.a().endpoint.local_nonce()));
    pair.a().endpoint.on_datagram(d, size, pair.now);
  }
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::synchronizing);
  ASSERT_EQ(pair.b().endpoint.start(pair.now), Result::ok);
  ASSERT_TRUE(pair.run_handshake(2000000));
  ASSERT_TRUE(stream(pair, 120, nullptr));
  EXPECT_FALSE(saw(pair.a().endpoint, EndpointEventType::disconnected));
}

// Replies that guess the challenge are dropped, and never name the peer.
TEST_P(Modes, GuessedRepliesAreDropped) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(GetParam());
  EndpointPair pair(config(105, GetParam()), config(106, GetParam()));
  ASSERT_EQ(pair.a().endpoint.start(pair.now), Result::ok);
  std::mt19937_64 rng(9);
  uint8_t d[detail::kMaxDatagramSize];
  for (int i = 0; i < 1000; ++i) {
    const size_t size = forge(MessageType::handshake_reply, 0x0BADF00D, uint32_t(i), rng, d);
    pair.a().endpoint.on_datagram(d, size, pair.now);
  }
  EXPECT_EQ(pair.a().endpoint.sync_progress(), 0);
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::synchronizing);
  // No key: a wrong challenge (replayed). Key: not even the sealed layout (truncated).
  EXPECT_EQ(dropped(pair.a().endpoint, DropReason::replayed) +
                dropped(pair.a().endpoint, DropReason::truncated) +
                dropped(pair.a().endpoint, DropReason::bad_checksum),
            1000u);
  ASSERT_EQ(pair.b().endpoint.start(pair.now), Result::ok);
  ASSERT_TRUE(pair.run_handshake(2000000));
}

// With a key an attacker who sees every datagram can only drop or delay: B's captured
// datagrams replayed, altered, or forged with B's clear header but without the key are all
// dropped, and the stream is untouched.
TEST(EndpointAttack, OnPathForgeriesAndReplaysFailWithAKey) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  EndpointPair pair(config(107, true), config(108, true));
  pair.b().recorder->recording = true;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 200, nullptr));
  Endpoint& a = pair.a().endpoint;
  const auto captured = pair.b().recorder->sent;
  ASSERT_GT(captured.size(), 50u);
  size_t k = 0;
  std::mt19937_64 rng(10);
  uint8_t d[detail::kMaxDatagramSize];
  auto attack = [&] {
    const auto& real = captured[k++ % captured.size()];
    a.on_datagram(real.data(), real.size(), pair.now);  // replay
    auto altered = real;
    altered[detail::kDataPublicHeaderSize + rng() % (altered.size() - detail::kDataPublicHeaderSize)] ^=
        uint8_t(1 + rng() % 255);
    a.on_datagram(altered.data(), altered.size(), pair.now);
    // B's nonce (in its handshakes) and the next sequences are in the clear: forge every type
    // with them.
    detail::Header h;
    h.nonce = pair.b().endpoint.local_nonce();
    const uint32_t sequence = 0x7FFFFFFFu + uint32_t(k);
    const size_t size = forge(kEveryType[k % kTypes], h.nonce, sequence, rng, d);
    // Sealed under a key of our own: what a forger without the match key can do at best.
    detail::DatagramAuth other;
    uint8_t wrong[detail::kMatchKeySize] = {1};
    other.configure(wrong, true);
    other.bind(h.nonce, a.local_nonce(), true);
    detail::Xoshiro256 r(k);
    const size_t sealed = other.seal(d, size, sizeof d, r, sequence);
    if (sealed != 0) a.on_datagram(d, sealed, pair.now);
  };
  const Frame before = a.last_received_frame();
  pair.a().endpoint.set_local_frame(before, 0);
  // Keep streaming from where the first stream stopped.
  Frame next = before + 1;
  uint8_t want[2];
  Endpoint* const eps[2] = {&pair.a().endpoint, &pair.b().endpoint};
  for (int ms = 0; ms < 8000; ++ms) {
    if (ms % 17 == 0 && next < before + 400) {
      ASSERT_TRUE(send_frame_both_ways(eps, next));
      ++next;
    }
    attack();
    pair.step(1000);
    Frame f;
    const uint8_t* got;
    while (a.pop_input(&f, &got)) {
    }
    while (pair.b().endpoint.pop_input(&f, &got)) {
    }
  }
  EXPECT_EQ(a.last_received_frame(), before + 399);
  for (Frame f = before + 300; f < before + 400; ++f) {
    blob_for(1, f, want);
    ASSERT_NE(a.received_input(f), nullptr);
    EXPECT_EQ(0, std::memcmp(a.received_input(f), want, 2)) << f;
  }
  EXPECT_TRUE(a.running());
  EXPECT_FALSE(saw(a, EndpointEventType::disconnected));
  EXPECT_GT(dropped(a, DropReason::replayed), 1000u);
  EXPECT_GT(dropped(a, DropReason::bad_checksum), 2000u);
}

// An insider (it knows both nonces, so the keyless connection key) sends absurd numbers:
// each is a counted drop, none is taken as advice, and the stream goes on.
TEST(EndpointAttack, AbsurdNumbersFromAVerifiedPeerAreCountedDrops) {
  EndpointPair pair(config(109, false), config(110, false));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 400, nullptr));
  Insider insider(pair);
  Endpoint& a = insider.a;
  auto send = [&](Message m) {
    m.header.nonce = insider.b_nonce;
    m.header.sequence = insider.sequence++;
    const size_t n = detail::encode_message(m, insider.d, sizeof insider.d);
    insider.seal(n);
    a.on_datagram(insider.d, n, pair.now);
  };
  const uint64_t before = dropped(a, DropReason::out_of_window) + dropped(a, DropReason::malformed);
  Message m;
  m.header.type = MessageType::quality_report;
  m.quality = {1, 50, 1000000000};  // advice of a billion frames
  send(m);
  m.quality = {2, 1000000000, 0};  // a frame it cannot have reached
  send(m);
  m.quality = {3, 0, 0};  // far behind the inputs it sent
  send(m);
  m.header.type = MessageType::quality_reply;
  m.reply = {200, 0};  // an id none of our reports had
  send(m);
  m.header.type = MessageType::input_ack;
  m.ack_frame = 1000000;  // frames never sent
  send(m);
  m.header.type = MessageType::checksum_report;
  m.checksum = {1000000, 42};  // a frame never sent
  send(m);
  EXPECT_EQ(dropped(a, DropReason::out_of_window) + dropped(a, DropReason::malformed), before + 6);
  EXPECT_EQ(a.remote_frame_advantage(), 0);
  EXPECT_LE(a.remote_frame(), 400);
  Frame f;
  uint64_t c;
  EXPECT_FALSE(a.pop_checksum(&f, &c));
  // A disconnected player's last frame far beyond anything sent: dropped too.
  detail::ConnectStatus status[2] = {{true, 5000000}, {false, -1}};
  const uint8_t blob[2] = {1, 1};
  const size_t n = insider.inputs(a.last_received_frame() + 1, a.last_sent_frame(), 2,
                                  a.received_input(a.last_received_frame()), blob, 1, status, 2);
  insider.seal(n);
  const Frame received = a.last_received_frame();
  a.on_datagram(insider.d, n, pair.now);
  EXPECT_EQ(a.last_received_frame(), received);
  EXPECT_FALSE(a.remote_connect_status(0).disconnected);
  // The real stream is untouched.
  ASSERT_TRUE(stream(pair, 0, nullptr));
  EXPECT_TRUE(a.running());

  // The same absurd numbers riding on an inputs datagram (protocol 7): the frames it carries
  // are taken, every rider is refused and counted apart from the datagram drops.
  detail::Riders riders;
  riders.has_report = true;
  riders.report = {9, a.last_received_frame(), 1000000000};  // advice of a billion frames
  riders.has_reply = true;
  riders.reply = {201, 0};  // answers none of our reports
  riders.checksum_count = 1;
  riders.checksums[0] = {1000000, 42};  // a frame never sent
  std::vector<uint8_t> next(2);
  blob_for(1, a.last_received_frame() + 1, next.data());
  const size_t rn = insider.inputs(a.last_received_frame() + 1, a.last_sent_frame(), 2,
                                   a.received_input(a.last_received_frame()), next.data(), 1, nullptr, 0, &riders);
  insider.seal(rn);
  const uint64_t drops_before = [&] {
    uint64_t all = 0;
    for (uint64_t x : a.stats().dropped) all += x;
    return all;
  }();
  const Frame taken = a.last_received_frame() + 1;
  a.on_datagram(insider.d, rn, pair.now);
  EXPECT_EQ(a.last_received_frame(), taken) << "the frames stand";
  EXPECT_EQ(0, std::memcmp(a.received_input(taken), next.data(), 2));
  EXPECT_EQ(a.stats().riders_dropped, 3u);
  uint64_t drops_after = 0;
  for (uint64_t x : a.stats().dropped) drops_after += x;
  EXPECT_EQ(drops_after, drops_before) << "the datagram itself was taken";
  EXPECT_EQ(a.remote_frame_advantage(), 0);
  EXPECT_FALSE(a.pop_checksum(&f, &c));
}

// The range check of a disconnected player's last frame stops at a rejoin's cut we know of
// (rejoin_remote_player: live_at - 1, stamped seconds ahead): a peer cutting the rejoiner there
// (its machine never came) is heard however far ahead that is. Before, its every inputs datagram
// was dropped (`out_of_window`) until the two machines dropped each other. A cut beyond the
// known one stays a counted drop.
TEST(EndpointAttack, ARejoinCutFarAheadIsTakenOnlyWhereItIsKnown) {
  EndpointPair pair(config(111, false), config(112, false));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 40, nullptr));
  Insider insider(pair);
  Endpoint& a = insider.a;
  const uint8_t blob[2] = {1, 1};
  // One new frame from B, reporting player 0 cut at `cut`: was it taken?
  auto send_cut = [&](Frame cut) {
    detail::ConnectStatus status[2] = {{true, cut}, {false, -1}};
    const size_t n = insider.inputs(a.last_received_frame() + 1, a.last_sent_frame(), 2,
                                    a.received_input(a.last_received_frame()), blob, 1, status, 2);
    insider.seal(n);
    const Frame received = a.last_received_frame();
    a.on_datagram(insider.d, n, pair.now);
    return a.last_received_frame() == received + 1;
  };
  const Frame live_at = a.last_sent_frame() + detail::kMaxFrameSkew + 500;  // a slow transfer's T
  const uint64_t before = dropped(a, DropReason::out_of_window);
  EXPECT_FALSE(send_cut(live_at - 1)) << "no rejoin known: too far ahead";
  EXPECT_EQ(dropped(a, DropReason::out_of_window), before + 1);
  a.rejoin_remote_player(0, live_at - 1);
  EXPECT_FALSE(send_cut(live_at)) << "beyond the rejoin's cut";
  EXPECT_EQ(dropped(a, DropReason::out_of_window), before + 2);
  EXPECT_TRUE(send_cut(live_at - 1)) << "the rejoin's cut";
  EXPECT_TRUE(a.remote_connect_status(0).disconnected);
  EXPECT_EQ(a.remote_connect_status(0).last_frame, live_at - 1);
  EXPECT_EQ(dropped(a, DropReason::out_of_window), before + 2);
}

// Streams frames `from`..`to` both ways after the attack, as the session does, and checks that A
// holds B's real inputs for the last of them: the real stream went on untouched.
void stream_on(EndpointPair& pair, Frame from, Frame to) {
  uint8_t want[2];
  Frame next = from;
  Endpoint* const eps[2] = {&pair.a().endpoint, &pair.b().endpoint};
  for (int tick = 0; tick < int(to - from) + 300 && pair.a().endpoint.last_received_frame() < to; ++tick) {
    if (next <= to) {
      ASSERT_TRUE(send_frame_both_ways(eps, next));
      ++next;
    }
    for (int ms = 0; ms < 17; ++ms) pair.step(1000);
    Frame f;
    const uint8_t* got;
    while (pair.a().endpoint.pop_input(&f, &got)) {
      blob_for(1, f, want);
      ASSERT_EQ(0, std::memcmp(got, want, 2)) << f;
    }
    while (pair.b().endpoint.pop_input(&f, &got)) {
    }
  }
  EXPECT_EQ(pair.a().endpoint.last_received_frame(), to);
}

// The receiver's straight decode of the usual inputs datagram (Endpoint::on_inputs_datagram,
// decode_inputs_body) takes what the general path takes and nothing else. An insider (it holds
// both nonces, so the keyless connection key) sends usual datagrams at that path's edges: a
// start frame of two bytes, a gap, ahead, far behind, a count the tokens do not fill, a literal
// cut short, a body cut after its flags, another blob size, an acknowledgement of frames never
// sent or below -1, another connection's key; and B's own datagrams come again. Each is one
// counted drop that moves nothing; the real stream goes on and every input arrives intact.
TEST(EndpointAttack, UsualInputsDatagramsAtTheFastPathsEdgesAreCountedDrops) {
  EndpointPair pair(config(121, false), config(122, false));
  pair.b().recorder->recording = true;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 400, nullptr));  // start frames from 128 on take two varint bytes
  Insider insider(pair);
  Endpoint& a = insider.a;
  const uint32_t b_nonce = insider.b_nonce;
  uint8_t* const d = insider.d;
  auto all_drops = [&] { return all_dropped(a); };
  // A usual body (no status, no rider) from `start`, its real blobs (B's), then `mutate`d and
  // sealed under `with_key`.
  auto build = [&](Frame start, Frame ack, int frames, uint16_t blob_size, uint64_t with_key,
                   const std::function<size_t(uint8_t*, size_t)>& mutate) {
    uint8_t reference[4] = {};
    if (start > 0) blob_for(1, start - 1, reference);
    uint8_t blobs[8 * 4] = {};
    for (int k = 0; k < frames; ++k) {
      uint8_t* const blob = blobs + size_t(k) * blob_size;
      blob_for(1, start + k, blob);
      if (blob_size > 2) blob[2] = uint8_t(k + 1);
    }
    size_t n = insider.inputs(start, ack, blob_size, reference, blobs, frames);
    if (mutate) n = mutate(d, n);
    insider.seal(n, with_key);
    return n;
  };
  const Frame last = a.last_received_frame();
  ASSERT_EQ(last, 399);
  const Frame acked = a.last_sent_frame();
  // The body's first bytes: start (two bytes from 128 on), ack delta, count, flags.
  const size_t count_at = detail::kDataHeaderSize + 2 + 1;
  struct Case {
    const char* what;
    Frame start;
    Frame ack;
    int frames;
    uint16_t blob_size;
    bool other_key;
    std::function<size_t(uint8_t*, size_t)> mutate;
    DropReason reason;
  };
  const Case cases[] = {
      {"a gap before its first frame", last + 2, acked, 1, 2, false, nullptr, DropReason::out_of_window},
      {"ahead (a one-byte acknowledgement delta)", last + 60, acked, 1, 2, false, nullptr, DropReason::out_of_window},
      {"far ahead", last + 20000, acked, 1, 2, false, nullptr, DropReason::out_of_window},
      {"far behind (older than anything held)", 1, acked, 2, 2, false, nullptr, DropReason::out_of_window},
      {"a count its tokens do not fill", last + 1, acked, 2, 2, false,
       [&](uint8_t* p, size_t n) { p[count_at] = 3; return n; }, DropReason::malformed},
      {"a count of zero", last + 1, acked, 2, 2, false,
       [&](uint8_t* p, size_t n) { p[count_at] = 0; return n; }, DropReason::malformed},
      {"a literal cut short", last + 1, acked, 1, 2, false, [&](uint8_t*, size_t n) { return n - 1; },
       DropReason::malformed},
      {"nothing after its flags", last + 1, acked, 1, 2, false,
       [&](uint8_t*, size_t) { return count_at + 2; }, DropReason::malformed},
      {"cut inside its header fields", last + 1, acked, 1, 2, false,
       [&](uint8_t*, size_t) { return count_at; }, DropReason::truncated},
      {"another blob size", last + 1, acked, 1, 3, false, nullptr, DropReason::malformed},
      {"an acknowledgement of frames never sent", last + 1, acked + 40, 1, 2, false, nullptr,
       DropReason::out_of_window},
      {"another connection's key", last + 1, acked, 1, 2, true, nullptr, DropReason::bad_checksum},
  };
  for (const Case& c : cases) {
    const uint64_t reason_before = dropped(a, c.reason), before = all_drops();
    const uint64_t wrong_key = detail::connection_checksum_key(a.local_nonce(), b_nonce);  // a reflection's
    const size_t n = build(c.start, c.ack, c.frames, c.blob_size, c.other_key ? wrong_key : insider.key, c.mutate);
    a.on_datagram(d, n, pair.now);
    EXPECT_EQ(dropped(a, c.reason), reason_before + 1) << c.what;
    EXPECT_EQ(all_drops(), before + 1) << c.what;
    EXPECT_EQ(a.last_received_frame(), last) << c.what;
  }
  // An acknowledgement below -1 (a zigzag delta below the start frame's): malformed.
  {
    const uint64_t before = dropped(a, DropReason::malformed);
    const size_t n = build(3, 2, 1, 2, insider.key, [&](uint8_t* p, size_t m) {
      p[detail::kDataHeaderSize + 1] = 2 * 5 - 1;  // zigzag -5: frame -2
      return m;
    });
    a.on_datagram(d, n, pair.now);
    EXPECT_EQ(dropped(a, DropReason::malformed), before + 1);
  }
  // B's own datagrams again (a replay of what an on-path observer saw): each a counted drop.
  {
    const auto& captured = pair.b().recorder->sent;
    ASSERT_GT(captured.size(), 10u);
    const uint64_t replayed = dropped(a, DropReason::replayed);
    for (size_t k = captured.size() - 10; k < captured.size(); ++k)
      a.on_datagram(captured[k].data(), captured[k].size(), pair.now);
    EXPECT_EQ(dropped(a, DropReason::replayed), replayed + 10);
    EXPECT_EQ(a.last_received_frame(), last);
  }
  stream_on(pair, 400, 520);
  EXPECT_TRUE(a.running());
  EXPECT_FALSE(saw(a, EndpointEventType::disconnected));
}

// The usual inputs datagram is taken in one pass (Endpoint::take_usual_inputs: checks, token walk
// and expansion into the receive ring, no decoded body); anything at its edges goes to the general
// path, which decides as ever. An insider (it holds both nonces, so the keyless connection key)
// sends B's real inputs in usual datagrams at those edges while A does not pop: frames it holds
// repeated before new ones (the first new one inside a literal run or a zero run, the
// acknowledgement moving), none held, all held, riders (and riders that do not read), the receive
// window overrun (the general path takes what fits), paused receiving; and each taken datagram
// again. A holds exactly B's inputs after each one, and the drops are the general path's.
TEST(EndpointAttack, UsualInputsDatagramsTakenInOnePassMatchTheGeneralPath) {
  EndpointPair pair(config(125, false), config(126, false));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 300, nullptr));
  Insider insider(pair);
  Endpoint& a = insider.a;
  auto all_drops = [&] { return all_dropped(a); };
  // A's inputs run far ahead, so that B's acknowledgement of them (start - 1) is always usual: a
  // one-byte delta from the start frame.
  for (Frame f = a.last_sent_frame() + 1; f <= 900; ++f) {
    const uint8_t mine[2] = {uint8_t(f), 0};
    ASSERT_EQ(a.send_input(f, mine), Result::ok);
  }
  // B's input from frame 300 on: each held for three frames, so that zero runs span frames and a
  // first new frame can start inside one (B's stream before changes every frame: literals).
  auto input_of = [](Frame f, uint8_t* out) { blob_for(1, f < 300 ? f : f - f % 3, out); };
  // B's blobs of frames start..start+frames-1, `riders` riding,
  // acknowledging A's frames up to start - 1.
  auto build = [&](Frame start, int frames, const detail::Riders* riders = nullptr) {
    uint8_t reference[2] = {};
    if (start > 0) input_of(start - 1, reference);
    std::vector<uint8_t> blobs(size_t(frames) * 2);
    for (int k = 0; k < frames; ++k) input_of(start + k, &blobs[size_t(k) * 2]);
    const size_t n = insider.inputs(start, start - 1, 2, reference, blobs.data(), frames, nullptr, 0, riders);
    insider.seal(n);
    return std::vector<uint8_t>(insider.d, insider.d + n);
  };
  // A holds B's inputs up to `upto` and nothing after it.
  auto holds_up_to = [&](Frame upto, const char* what) {
    EXPECT_EQ(a.last_received_frame(), upto) << what;
    uint8_t want[2];
    for (Frame f = std::max<Frame>(0, upto - 200); f <= upto; ++f) {
      const uint8_t* got = a.received_input(f);
      input_of(f, want);
      if (got == nullptr || std::memcmp(got, want, 2) != 0) {
        ADD_FAILURE() << what << ": frame " << f;
        return;
      }
    }
  };
  auto send = [&](const std::vector<uint8_t>& datagram) { a.on_datagram(datagram.data(), datagram.size(), pair.now); };
  Frame last = a.last_received_frame();
  ASSERT_EQ(last, 299);
  // Held frames repeated, then new ones: every split of an 8-frame datagram (B's inputs change
  // every frame, so the first new frame starts inside a literal run or at a token), then again.
  for (int held = 0; held < 8; ++held) {
    const uint64_t drops = all_drops();
    const std::vector<uint8_t> datagram = build(last + 1 - held, 8);
    send(datagram);
    last += 8 - held;
    holds_up_to(last, "held frames, then new ones");
    EXPECT_EQ(a.last_acked_frame(), last - 8) << "the acknowledgement moves";
    EXPECT_EQ(all_drops(), drops);
    const uint64_t replayed = dropped(a, DropReason::replayed);
    send(datagram);
    EXPECT_EQ(dropped(a, DropReason::replayed), replayed + 1) << "the same datagram again";
    holds_up_to(last, "replayed");
  }
  // Only frames A holds: taken (an acknowledgement is due), nothing stored.
  {
    const uint64_t drops = all_drops();
    send(build(last - 3, 4));
    holds_up_to(last, "all held");
    EXPECT_EQ(all_drops(), drops);
  }
  // Riders (a report and a silence note): taken with the frames, the report heard.
  {
    detail::Riders riders;
    riders.has_report = true;
    riders.report = {7, last + 1, 2};  // B is at our newest frame, 2 frames ahead
    riders.has_silence = true;
    riders.silence = {5, 0};
    const uint64_t drops = all_drops(), riders_dropped = a.stats().riders_dropped;
    send(build(last - 1, 3, &riders));
    last += 1;
    holds_up_to(last, "with riders");
    EXPECT_EQ(all_drops(), drops);
    EXPECT_EQ(a.stats().riders_dropped, riders_dropped);
    EXPECT_EQ(a.remote_frame(), last) << "the report rode";
    EXPECT_EQ(a.remote_frame_advantage(), 2);
  }
  // A rider that does not read (a silence gap of 0, a report cut short): the general path drops
  // the whole datagram (malformed, truncated), frames and all.
  {
    detail::Riders riders;
    riders.has_silence = true;
    riders.silence = {5, 0};
    std::vector<uint8_t> datagram = build(last + 1, 2, &riders);
    // The silence note is the last rider: its gap byte follows the fixed fields (start: 2 bytes).
    const size_t gap_at = detail::kDataHeaderSize + 2 + 3;
    ASSERT_EQ(datagram[gap_at], 5);
    datagram[gap_at] = 0;
    detail::seal_datagram(datagram.data(), datagram.size(), insider.key, insider.sequence - 1);
    const uint64_t malformed = dropped(a, DropReason::malformed);
    send(datagram);
    EXPECT_EQ(dropped(a, DropReason::malformed), malformed + 1);
    holds_up_to(last, "a rider that does not read");
    riders.has_silence = false;
    riders.has_report = true;
    riders.report = {8, last + 1, 0};
    datagram = build(last + 1, 1, &riders);
    datagram.resize(detail::kDataHeaderSize + 2 + 3 + 1);  // the report's id only
    detail::seal_datagram(datagram.data(), datagram.size(), insider.key, insider.sequence - 1);
    const uint64_t truncated = dropped(a, DropReason::truncated);
    send(datagram);
    EXPECT_EQ(dropped(a, DropReason::truncated), truncated + 1);
    holds_up_to(last, "a rider cut short");
  }
  // The receive window overrun (A popped nothing since frame 300): the general path takes the
  // frames that fit, up to the window's end, and drops nothing.
  {
    Frame f;
    const uint8_t* got;
    ASSERT_TRUE(a.pop_input(&f, &got));  // the next frame to pop
    const Frame window_end = f + 1 + 256 - 1;  // default receive window: 256 frames
    while (last + 127 <= window_end) {
      send(build(last + 1, 127));
      last += 127;
    }
    holds_up_to(last, "filling the window");
    const uint64_t drops = all_drops();
    send(build(last + 1, 127));
    holds_up_to(window_end, "past the window's end");
    EXPECT_EQ(all_drops(), drops);
    last = window_end;
    while (a.pop_input(&f, &got)) {
    }
  }
  // Paused receiving: taken, nothing stored (the general path).
  {
    a.pause_receive();
    const uint64_t drops = all_drops();
    send(build(last + 1, 2));
    holds_up_to(last, "paused");
    EXPECT_EQ(all_drops(), drops);
  }
}

// The same straight path for the usual pad (Endpoint::take_usual_inputs<4>: a 4-byte blob, its
// size a constant throughout). An insider sends B's real 4-byte inputs in usual datagrams at
// random splits of held and new frames (the first new one inside a literal or a zero run), each
// datagram again, and at the path's edges (a gap, a count its tokens do not fill, a literal cut
// short, another blob size, another connection's key). After every datagram A holds exactly B's
// inputs, each datagram again is one replayed drop, and every edge is one counted drop that
// moves nothing.
TEST(EndpointAttack, UsualFourByteInputsDatagramsHoldExactlyThePeersInputs) {
  EndpointConfig ca = config(127, false), cb = config(128, false);
  for (EndpointConfig* c : {&ca, &cb}) {
    c->shape = {2, 4, 60};
    c->send_blob_size = 4;
    c->receive_blob_size = 4;
  }
  EndpointPair pair(ca, cb);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  Insider insider(pair);
  Endpoint& a = insider.a;
  auto all_drops = [&] { return all_dropped(a); };
  // A's inputs run far ahead, so that B's acknowledgement of them (start - 1) is usual.
  for (Frame f = a.last_sent_frame() + 1; f <= 3000; ++f) {
    const uint8_t mine[4] = {uint8_t(f), uint8_t(f >> 8), 0, 1};
    ASSERT_EQ(a.send_input(f, mine), Result::ok);
  }
  // B's pad: held 1 to 4 frames, then one to four of its bytes change.
  auto input_of = [](Frame f, uint8_t* out) {
    const uint32_t hold = uint32_t(f) / 4;
    const uint32_t v = hold * 2654435761u;
    out[0] = uint8_t(v >> 3);
    out[1] = uint8_t(hold % 3 == 0 ? v >> 11 : 0);
    out[2] = uint8_t(hold % 5 == 0 ? v >> 19 : 7);
    out[3] = uint8_t(hold % 2 == 0 ? v >> 27 : 0);
  };
  auto build = [&](Frame start, int frames, uint16_t blob_size = 4) {
    uint8_t reference[4] = {};
    if (start > 0) input_of(start - 1, reference);
    std::vector<uint8_t> blobs(size_t(frames) * blob_size);
    for (int k = 0; k < frames; ++k) {
      uint8_t b[4];
      input_of(start + k, b);
      std::memcpy(&blobs[size_t(k) * blob_size], b, blob_size);
    }
    const size_t n = insider.inputs(start, start - 1, blob_size, reference, blobs.data(), frames);
    insider.seal(n);
    return std::vector<uint8_t>(insider.d, insider.d + n);
  };
  auto send = [&](const std::vector<uint8_t>& datagram) { a.on_datagram(datagram.data(), datagram.size(), pair.now); };
  // A holds B's inputs up to `upto`: what it popped since and what it holds now.
  Frame popped = -1;
  auto holds_up_to = [&](Frame upto, const char* what) {
    EXPECT_EQ(a.last_received_frame(), upto) << what;
    Frame f;
    const uint8_t* got;
    uint8_t want[4];
    while (a.pop_input(&f, &got)) {
      input_of(f, want);
      EXPECT_EQ(f, popped + 1) << what;
      if (std::memcmp(got, want, 4) != 0) ADD_FAILURE() << what << ": frame " << f;
      popped = f;
    }
    EXPECT_EQ(popped, upto) << what;
  };
  Frame last = a.last_received_frame();
  std::mt19937 rng(41);
  for (int round = 0; round < 300; ++round) {
    const int held = std::min<int>(int(rng() % 6), last + 1);
    const int fresh = 1 + int(rng() % 7);
    const uint64_t drops = all_drops();
    const std::vector<uint8_t> datagram = build(last + 1 - held, held + fresh);
    send(datagram);
    last += fresh;
    holds_up_to(last, "held frames, then new ones");
    EXPECT_EQ(all_drops(), drops) << "round " << round;
    const uint64_t replayed = dropped(a, DropReason::replayed);
    send(datagram);
    EXPECT_EQ(dropped(a, DropReason::replayed), replayed + 1) << "the same datagram again";
    holds_up_to(last, "replayed");
    if (round % 30 != 29) continue;
    // The edges, each one counted drop that moves nothing.
    const size_t count_at = detail::kDataHeaderSize + (last + 1 < 128 ? 1 : last + 1 < 16384 ? 2 : 3) + 1;
    struct Edge {
      const char* what;
      std::vector<uint8_t> datagram;
      DropReason reason;
    };
    std::vector<Edge> edges;
    edges.push_back({"a gap before its first frame", build(last + 2, 2), DropReason::out_of_window});
    {
      std::vector<uint8_t> d = build(last + 1, 2);
      insider.d[count_at] = 3;
      insider.seal(d.size());
      edges.push_back({"a count its tokens do not fill", std::vector<uint8_t>(insider.d, insider.d + d.size()),
                       DropReason::malformed});
    }
    {
      std::vector<uint8_t> d = build(last + 1, 1);
      insider.seal(d.size() - 1);
      edges.push_back({"a literal cut short", std::vector<uint8_t>(insider.d, insider.d + d.size() - 1),
                       DropReason::malformed});
    }
    edges.push_back({"another blob size", build(last + 1, 1, 2), DropReason::malformed});
    {
      std::vector<uint8_t> d = build(last + 1, 1);
      insider.seal(d.size(), detail::connection_checksum_key(a.local_nonce(), insider.b_nonce));
      edges.push_back({"another connection's key", std::vector<uint8_t>(insider.d, insider.d + d.size()),
                       DropReason::bad_checksum});
    }
    for (const Edge& e : edges) {
      const uint64_t reason_before = dropped(a, e.reason), before = all_drops();
      send(e.datagram);
      EXPECT_EQ(dropped(a, e.reason), reason_before + 1) << e.what;
      EXPECT_EQ(all_drops(), before + 1) << e.what;
      holds_up_to(last, e.what);
    }
  }
  EXPECT_GT(last, 600) << "start frames of two bytes reached";
}

// With a match key every datagram is sealed: the straight path of the usual inputs datagram is
// only for keyless connections. An insider who knows both nonces (so the keyless connection
// checksum) but not the key sends B's next input, altered, as a plain usual datagram: each is a
// counted drop, and only B's sealed one is taken.
TEST(EndpointAttack, AKeyedEndpointTakesNoUnsealedInputsDatagram) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  EndpointPair pair(config(123, true), config(124, true));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 200, nullptr));
  Endpoint& a = pair.a().endpoint;
  const uint32_t b_nonce = pair.b().endpoint.local_nonce();
  const uint64_t key = detail::connection_checksum_key(b_nonce, a.local_nonce());
  const Frame last = a.last_received_frame();
  uint8_t d[detail::kMaxDatagramSize];
  uint8_t reference[2], blob[2];
  blob_for(1, last, reference);
  blob_for(1, last + 1, blob);
  blob[0] ^= 0x40;  // what the insider would have A believe
  auto all_drops = [&] { return all_dropped(a); };
  const uint64_t before = all_drops();
  for (uint32_t k = 0; k < 64; ++k) {
    detail::Header h;
    h.type = MessageType::inputs;
    h.nonce = b_nonce;
    h.sequence = 20000 + k;
    detail::InputsWriter w(d, sizeof d, h, last + 1, a.last_sent_frame(), 2, nullptr, 0, reference);
    ASSERT_TRUE(w.append(blob));
    const size_t n = w.finish();
    detail::seal_datagram(d, n, k % 2 ? key : 0, h.sequence);
    a.on_datagram(d, n, pair.now);
  }
  EXPECT_EQ(all_drops(), before + 64);  // too short for a sealed one, or failing its tag
  EXPECT_EQ(a.last_received_frame(), last);
  stream_on(pair, 200, 300);
  EXPECT_TRUE(a.running());
}

// Mid-match handshakes carrying the peer's real nonce (what an on-path observer can forge
// without a key) and another shape: replies are dropped (no challenge is open), requests only
// answered. The connection keeps running with the shape it agreed.
TEST(EndpointAttack, MidMatchHandshakesWithAnotherShapeChangeNothing) {
  EndpointPair pair(config(117, false), config(118, false));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  Endpoint& a = pair.a().endpoint;
  const detail::Handshake agreed = a.remote_handshake();
  std::mt19937_64 rng(13);
  uint8_t d[detail::kMaxDatagramSize];
  auto attack = [&] {
    Message m;
    m.header.type = rng() % 2 ? MessageType::handshake_reply : MessageType::handshake_request;
    m.header.nonce = pair.b().endpoint.local_nonce();
    m.header.sequence = uint32_t(rng());
    m.handshake = {rng(), {3, 4, 30}, 4, true, 4, 8, false};
    a.on_datagram(d, detail::encode_message(m, d, sizeof d), pair.now);
  };
  ASSERT_TRUE(stream(pair, 360, attack));
  EXPECT_TRUE(a.running());
  EXPECT_EQ(a.remote_handshake(), agreed);
  EXPECT_EQ(a.reject_reason(), detail::RejectReason::none);
  EXPECT_FALSE(saw(a, EndpointEventType::handshake_rejected));
  EXPECT_FALSE(saw(a, EndpointEventType::disconnected));
}

// Both sides pick the same AEAD: AES-256-GCM only when both offer it.
TEST(EndpointAttack, BothSidesAgreeOnTheAead) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  for (const bool aes_a : {false, true}) {
    for (const bool aes_b : {false, true}) {
      EndpointPair pair(config(111, true, aes_a), config(112, true, aes_b));
      pair.start();
      ASSERT_TRUE(pair.run_handshake());
      const auto expected = aes_a && aes_b && detail::aes256gcm_available()
                                ? detail::AeadAlgorithm::aes256gcm
                                : detail::AeadAlgorithm::chacha20poly1305_ietf;
      EXPECT_EQ(pair.a().endpoint.aead_algorithm(), expected);
      EXPECT_EQ(pair.b().endpoint.aead_algorithm(), expected);
      ASSERT_TRUE(stream(pair, 60, nullptr));
    }
  }
}

// Another key, or a key against none: never synchronized, the handshake timeout says so.
TEST(EndpointAttack, DifferentKeysNeverConnect) {
  RETCON_SKIP_WITHOUT_MATCH_KEYS(true);
  for (const bool second_keyed : {false, true}) {
    EndpointConfig ca = config(113, true), cb = config(114, second_keyed, true, 0x33);
    ca.handshake_timeout_us = cb.handshake_timeout_us = 3000000;
    EndpointPair pair(ca, cb);
    pair.start();
    EXPECT_FALSE(pair.run_handshake(4000000));
    EXPECT_EQ(pair.a().endpoint.state(), EndpointState::disconnected);
    EXPECT_EQ(pair.a().endpoint.sync_progress(), 0);
    EXPECT_GT(dropped(pair.a().endpoint, DropReason::bad_checksum) +
                  dropped(pair.a().endpoint, DropReason::truncated),
              0u);
  }
}

// A peer starting late is answered at once: both run within a few milliseconds of each other,
// not after the 200 ms retry.
TEST(EndpointAttack, LateStarterIsAnsweredAtOnce) {
  for (const bool key : {false, true}) {
    if (key && !detail::match_keys_supported()) continue;  // no libsodium (Windows)
    EndpointPair pair(config(115, key), config(116, key));
    LinkProfile lan;
    lan.latency_us = 500;  // 1 ms round trip
    pair.set_link(lan);
    ASSERT_EQ(pair.a().endpoint.start(pair.now), Result::ok);
    uint64_t a_running = 0, b_running = 0;
    for (int ms = 0; ms < 1000 && (a_running == 0 || b_running == 0); ++ms) {
      if (ms == 190) {
        ASSERT_EQ(pair.b().endpoint.start(pair.now), Result::ok);
      }
      pair.step(1000);
      if (a_running == 0 && pair.a().endpoint.running()) a_running = pair.now;
      if (b_running == 0 && pair.b().endpoint.running()) b_running = pair.now;
    }
    ASSERT_NE(a_running, 0u);
    ASSERT_NE(b_running, 0u);
    const uint64_t gap = a_running > b_running ? a_running - b_running : b_running - a_running;
    EXPECT_LE(gap, 3000u) << "key " << key;
    EXPECT_LE(b_running, 190000u + 5 * 2000u + 3000u) << "5 round trips of 1-2 ms after B starts";
  }
}

// A match past frame 16,384 (4.5 minutes at 60 fps), where every inputs datagram's start frame
// takes three bytes: both sides' usual datagrams (the sender's short write, the receiver's one
// pass) carry every frame across the boundary exactly, with nothing dropped.
TEST(EndpointAttack, UsualDatagramsPastFourAndAHalfMinutesCarryEveryFrame) {
  EndpointPair pair(config(127, false), config(128, false));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  ASSERT_TRUE(stream(pair, 16384 + 600, nullptr));
  EXPECT_EQ(pair.a().endpoint.last_received_frame(), 16384 + 599);
  EXPECT_EQ(pair.b().endpoint.last_received_frame(), 16384 + 599);
  for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) {
    uint64_t drops = 0;
    for (uint64_t x : e->stats().dropped) drops += x;
    EXPECT_EQ(drops, 0u);
    EXPECT_TRUE(e->running());
  }
}

// Everything one endpoint shows of what it received, against a twin's (the same after the same
// calls), with `what` said on the first difference: every counted drop by its reason, the
// frames held (each one's bytes), the acknowledgement, the replay window (through what the next
// datagrams do), the riders' effects, the silences, the events and checksums waiting.
void expect_same_receiver(Endpoint& x, Endpoint& y, size_t blob, const std::string& what) {
  const detail::EndpointStats a = x.stats(), b = y.stats();
  for (size_t r = 0; r < detail::kDropReasonCount; ++r)
    ASSERT_EQ(a.dropped[r], b.dropped[r]) << what << ": dropped " << detail::drop_reason_name(DropReason(r));
  ASSERT_EQ(a.riders_dropped, b.riders_dropped) << what;
  ASSERT_EQ(a.datagrams_received, b.datagrams_received) << what;
  ASSERT_EQ(a.bytes_received, b.bytes_received) << what;
  ASSERT_EQ(a.ping_us, b.ping_us) << what;
  ASSERT_EQ(a.jitter_us, b.jitter_us) << what;
  ASSERT_EQ(a.send_queue_length, b.send_queue_length) << what;
  ASSERT_EQ(x.state(), y.state()) << what;
  ASSERT_EQ(x.last_received_frame(), y.last_received_frame()) << what;
  ASSERT_EQ(x.last_acked_frame(), y.last_acked_frame()) << what;
  ASSERT_EQ(x.next_pop(), y.next_pop()) << what;
  ASSERT_EQ(x.remote_frame(), y.remote_frame()) << what;
  ASSERT_EQ(x.remote_frame_advantage(), y.remote_frame_advantage()) << what;
  ASSERT_EQ(x.remote_report_at(), y.remote_report_at()) << what;
  ASSERT_EQ(x.last_received_at(), y.last_received_at()) << what;
  ASSERT_EQ(x.quiet_allowed(), y.quiet_allowed()) << what;
  ASSERT_EQ(x.silences().heard_nothing().from_us, y.silences().heard_nothing().from_us) << what;
  ASSERT_EQ(x.silences().heard_nothing().to_us, y.silences().heard_nothing().to_us) << what;
  ASSERT_EQ(x.silences().told().gap_us, y.silences().told().gap_us) << what;
  ASSERT_EQ(x.silences().told().ago_us, y.silences().told().ago_us) << what;
  ASSERT_EQ(x.silences().told().arrived_at_us, y.silences().told().arrived_at_us) << what;
  for (PlayerIndex p = 0; p < 2; ++p) {
    ASSERT_EQ(x.remote_connect_status(p).disconnected, y.remote_connect_status(p).disconnected) << what;
    ASSERT_EQ(x.remote_connect_status(p).last_frame, y.remote_connect_status(p).last_frame) << what;
  }
  for (Frame f = std::max<Frame>(0, x.last_received_frame() - 300); f <= x.last_received_frame(); ++f) {
    const uint8_t* p = x.received_input(f);
    const uint8_t* q = y.received_input(f);
    ASSERT_EQ(p == nullptr, q == nullptr) << what << ": frame " << f;
    if (p != nullptr) {
      ASSERT_EQ(0, std::memcmp(p, q, blob)) << what << ": frame " << f << "'s bytes";
    }
  }
  EndpointEvent ex, ey;
  for (;;) {
    const bool gx = x.pop_event(&ex), gy = y.pop_event(&ey);
    ASSERT_EQ(gx, gy) << what << ": events";
    if (!gx) break;
    ASSERT_EQ(ex.type, ey.type) << what << ": events";
  }
  Frame fx, fy;
  uint64_t cx, cy;
  for (;;) {
    const bool gx = x.pop_checksum(&fx, &cx), gy = y.pop_checksum(&fy, &cy);
    ASSERT_EQ(gx, gy) << what << ": checksums";
    if (!gx) break;
    ASSERT_EQ(fx, fy) << what;
    ASSERT_EQ(cx, cy) << what;
  }
}

// The usual paths of a received inputs datagram (Endpoint::take_usual_inputs: the next sequence,
// one pass, the 4-byte expansion a word at a time, the frames in one zero run repeated; and
// on_inputs_datagram for the rest) against the general path (set_general_receive: the public
// header, the message's decode, its handling), on random and hostile datagrams. Two matches
// made alike (the same seeds, the same calls) but for that, A taking the usual paths and A' the
// general one, then an insider (it holds the keyless connection key) sends both the same bytes:
// B's inputs of 4, 2 or 3 bytes from frames around the held ones (gaps, repeats, none new, far
// ahead or behind, past the receive window, before the stream's start), acknowledgements of any
// frame, riders that read or do not, statuses, sequences next, skipped, repeated, far, bytes
// changed and sealed again (tokens that do not add up, literals cut short, counts and flags
// changed), cut or lengthened, other keys, other headers, times that go backwards or past a
// silence; A and A' pop, restart their incoming stream (start frames of three bytes) and poll
// alike. After each datagram both hold the same frames with the same bytes, counted the same
// drops, and send the same bytes.
TEST(EndpointAttack, UsualReceivePathsTakeAndDropAsTheGeneralPath) {
  struct Setup {
    uint16_t blob;
    uint32_t window;
  };
  for (const Setup setup : {Setup{4, 256}, Setup{2, 256}, Setup{3, 1024}, Setup{4, 24}}) {
    const uint16_t blob = setup.blob;
    EndpointConfig ca = config(131 + blob, false), cb = config(141 + blob, false);
    for (EndpointConfig* c : {&ca, &cb}) {
      c->shape = {2, blob, 60};
      c->send_blob_size = c->receive_blob_size = blob;
      c->receive_window_frames = setup.window;
    }
    EndpointPair usual(ca, cb, 7), general(ca, cb, 7);
    general.a().endpoint.set_general_receive(true);
    Endpoint& a = usual.a().endpoint;
    Endpoint& g = general.a().endpoint;
    for (EndpointPair* pair : {&usual, &general}) {
      pair->start();
      ASSERT_TRUE(pair->run_handshake());
    }
    ASSERT_EQ(a.usual_receive(), setup.window >= Endpoint::kUsualWindow);
    ASSERT_FALSE(g.usual_receive());
    // B's inputs, the insider's truth: a pad (one byte changing every few frames) or noise.
    std::mt19937 rng(977 + blob);
    auto r = [&](uint32_t n) { return uint32_t(rng() % n); };
    auto input_of = [&](Frame f, uint8_t* out) {
      const uint32_t hold = uint32_t(f) / (1 + uint32_t(f) % 5 / 2);
      const uint32_t v = hold * 2654435761u;
      for (uint16_t i = 0; i < blob; ++i) out[i] = uint8_t(hold % 7 == 0 ? v >> (5 * i) : i == hold % blob ? hold : 0);
    };
    // Both play 120 frames alike (B's datagrams reach A and A' through the usual and general paths).
    Endpoint* const sides[2][2] = {{&a, &usual.b().endpoint}, {&g, &general.b().endpoint}};
    for (Frame f = 0; f < 120; ++f) {
      for (int k = 0; k < 2; ++k) {
        uint8_t in[4];
        input_of(f, in);
        ASSERT_EQ(sides[k][1]->send_input(f, in), Result::ok);
        in[0] ^= 0x5A;
        ASSERT_EQ(sides[k][0]->send_input(f, in), Result::ok);
      }
      for (int ms = 0; ms < 17; ++ms) {
        usual.step(1000);
        general.step(1000);
      }
      Frame f1, f2;
      const uint8_t *p1, *p2;
      while (a.pop_input(&f1, &p1)) {
        ASSERT_TRUE(g.pop_input(&f2, &p2));
        ASSERT_EQ(f1, f2);
        ASSERT_EQ(0, std::memcmp(p1, p2, blob));
      }
      ASSERT_FALSE(g.pop_input(&f2, &p2));
      ASSERT_NO_FATAL_FAILURE(expect_same_receiver(a, g, blob, "playing"));
    }
    ASSERT_GT(a.last_received_frame(), 100);
    Insider insider(usual);
    insider.sequence = 400;  // near B's own (a few hundred datagrams so far)
    std::vector<std::vector<uint8_t>> sent;  // every datagram sent, for replays
    test::CountingTransport out_a, out_g;
    uint64_t now = usual.now;
    int taken = 0;
    int fresh_stream = 0;
    int interrupted = 0;  // datagrams that came while A had found the peer silent  // datagrams still to send from just before a restarted stream
    bool three_bytes = false;
    for (int round = 0; round < 6000; ++round) {
      const std::string what = "blob " + std::to_string(blob) + " window " + std::to_string(setup.window) + " round " +
                               std::to_string(round);
      const Frame last = a.last_received_frame();
      std::vector<uint8_t> d;
      uint32_t this_sequence = insider.sequence;
      const uint32_t pick = r(100);
      if (pick < 4 && !sent.empty()) {
        d = sent[sent.size() - 1 - rng() % std::min<size_t>(sent.size(), 40)];  // a replay
      } else {
        // The sequence: mostly the next, else skipped ahead, or (this datagram only) behind or far
        // ahead, some beyond what 16 bits widen to.
        const uint32_t s = r(20);
        if (s == 0) insider.sequence += 1 + r(3);
        const uint32_t next = insider.sequence;
        if (s == 1) insider.sequence -= 1 + r(70);
        else if (s == 2) insider.sequence += 20000 + r(30000);
        // The frames: from around the held ones, sometimes far.
        const uint32_t f = r(40);
        Frame start = last + 1 - Frame(r(9));
        if (f == 0) start = last + 2 + Frame(r(3));
        else if (f == 1) start = Frame(r(400));
        else if (f == 2) start = last + Frame(r(600));
        else if (f == 3) start = last - 250 - Frame(r(30));
        if (fresh_stream > 0) start = last + 1 - Frame(r(4));  // frames before a restarted stream's first
        if (start < 0) start = 0;
        int frames = 1 + int(r(10));
        if (r(30) == 0) frames = 100 + int(r(28));
        // The acknowledgement: of one of A's frames near the start (what the usual datagram's byte holds),
        // or anything.
        Frame ack = std::min(a.last_sent_frame(), start - 5 + Frame(r(12)));
        const uint32_t k = r(30);
        if (fresh_stream > 0) {
        } else if (k == 0) ack = kNullFrame - Frame(r(3));
        else if (k == 1) ack = a.last_sent_frame() + Frame(r(3));
        else if (k == 2) ack = start - 64 + Frame(r(130));
        uint8_t reference[4] = {};
        if (start > 0) input_of(start - 1, reference);
        if (r(25) == 0) reference[r(blob)] ^= uint8_t(1 + r(255));  // not what A holds
        std::vector<uint8_t> blobs(size_t(frames) * blob);
        for (int i = 0; i < frames; ++i) input_of(start + i, &blobs[size_t(i) * blob]);
        detail::Riders riders;
        const bool ride = r(6) == 0;
        if (ride) {
          riders.has_report = r(2) == 0;
          riders.report = {uint8_t(r(16)), last + Frame(r(600)) - 300, int32_t(r(600)) - 300};
          riders.has_reply = r(3) == 0;
          riders.reply = {uint8_t(r(16)), uint32_t(r(200000))};
          riders.checksum_count = uint8_t(r(3));
          for (uint8_t i = 0; i < riders.checksum_count; ++i)
            riders.checksums[i] = {Frame(r(40000)), uint64_t(rng())};
          riders.has_silence = r(3) == 0;
          riders.silence = {uint32_t(1 + r(900)), uint32_t(r(900))};
        }
        detail::ConnectStatus status[2] = {};
        const bool cut = r(40) == 0;
        if (cut) status[1] = {true, last - Frame(r(10))};
        const size_t n = insider.inputs(start, ack, blob, reference, blobs.data(), frames, cut ? status : nullptr,
                                        cut ? 2 : 0, ride ? &riders : nullptr);
        d.assign(insider.d, insider.d + n);
        // Hostile: bytes changed, cut or added (sealed again: only its checks can tell), another
        // key, another header.
        const uint32_t m = fresh_stream > 0 ? 29 : r(30);
        const size_t body = detail::kDataHeaderSize;
        if (m == 0 && d.size() > body) {
          d[body + rng() % (d.size() - body)] ^= uint8_t(1 + r(255));
        } else if (m == 1 && d.size() > body + 1) {
          d.resize(d.size() - 1 - rng() % std::min<size_t>(3, d.size() - body - 1));
        } else if (m == 2) {
          d.push_back(uint8_t(rng()));
        } else if (m == 3 && d.size() > body + 4) {
          d[body + 1 + r(4)] = uint8_t(rng());  // around the ack, count and flags
        }
        detail::seal_datagram(d.data(), d.size(), m == 4 ? insider.key ^ 1 : insider.key, insider.sequence - 1);
        this_sequence = insider.sequence - 1;
        if (s == 1 || s == 2) insider.sequence = next;
        if (m == 5) d[2 + r(2)] ^= uint8_t(1 + r(3));  // version or type
        sent.push_back(d);
      }
      // A's frames keep ahead of B's (acknowledgements of them are ones it sent).
      while (a.last_sent_frame() < a.last_received_frame() + 40 && a.last_sent_frame() - a.last_acked_frame() < 4000) {
        const Frame f = a.last_sent_frame() + 1;
        const uint8_t mine[4] = {uint8_t(f), uint8_t(f >> 8), 0, 1};
        ASSERT_EQ(a.send_input(f, mine), Result::ok);
        ASSERT_EQ(g.send_input(f, mine), Result::ok);
      }
      // The time: on, still, past a silence, or back.
      const uint32_t t = r(50);
      const bool silence = r(300) == 0;
      if (silence) now += 800000 + r(400000);  // past notify_delay_us: a poll finds the peer interrupted
      else if (t == 0) now += 100000 + r(300000);
      else if (t == 1 && now > 5000) now -= r(5000);
      else if (t > 3) now += r(9000);
      auto poll_both = [&] {
        const uint64_t sent_a = out_a.sent;
        (void)a.poll(now, out_a, usual.a().remote);
        (void)g.poll(now, out_g, general.a().remote);
        ASSERT_EQ(out_a.sent, out_g.sent) << what;
        if (out_a.sent != sent_a) {
          ASSERT_EQ(out_a.last, out_g.last) << what;
        }
        expect_same_receiver(a, g, blob, what + " polled");
      };
      if (silence) {
        ASSERT_NO_FATAL_FAILURE(poll_both());
      }
      interrupted += a.state() == EndpointState::interrupted;
      const uint64_t drops = all_dropped(a);
      a.on_datagram(d.data(), d.size(), now);
      g.on_datagram(d.data(), d.size(), now);
      // Taken far ahead: the insider goes on from there (the next ones widen to its sequences).
      if (all_dropped(a) == drops && int32_t(this_sequence + 1 - insider.sequence) > 0)
        insider.sequence = this_sequence + 1;
      ASSERT_NO_FATAL_FAILURE(expect_same_receiver(a, g, blob, what));
      if (all_dropped(a) == drops) ++taken;
      three_bytes |= a.last_received_frame() > 16384 + 10;
      // Now and then: pops, a poll (the same bytes sent), the incoming stream restarted.
      if (r(4) != 0) {
        const int pops = int(r(8));
        Frame f1, f2;
        const uint8_t *p1, *p2;
        for (int i = 0; i < pops && a.pop_input(&f1, &p1); ++i) {
          ASSERT_TRUE(g.pop_input(&f2, &p2)) << what;
          ASSERT_EQ(f1, f2) << what;
          ASSERT_EQ(0, std::memcmp(p1, p2, blob)) << what;
        }
      }
      if (r(8) == 0) {
        ASSERT_NO_FATAL_FAILURE(poll_both());
      }
      if (fresh_stream > 0) --fresh_stream;
      if (round == 3000 || r(300) == 0) {
        fresh_stream = 4;
        const Frame at = round == 3000 ? 16384 - 20 : Frame(r(20000));
        a.pause_receive();
        g.pause_receive();
        a.restart_incoming_at(at);
        g.restart_incoming_at(at);
        const Frame out = std::max<Frame>(0, at - Frame(r(30)));  // A's frames from near there too
        a.restart_outgoing_at(out);
        g.restart_outgoing_at(out);
      }
    }
    EXPECT_TRUE(three_bytes) << "start frames of three bytes";
    EXPECT_GT(taken, 3000) << blob;
    EXPECT_GT(interrupted, 5) << blob;
    EXPECT_TRUE(a.running()) << blob;
  }
}

}  // namespace
}  // namespace retcon
