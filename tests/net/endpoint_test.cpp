// Two endpoints over an InMemoryNetwork behind NetworkSimulators, on a virtual clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "net/endpoint.h"
#include "net/endpoint_pair.h"
#include "net/wire.h"

namespace retcon {
namespace {

using detail::DropReason;
using detail::Endpoint;
using detail::EndpointConfig;
using detail::EndpointEvent;
using detail::EndpointEventType;
using detail::EndpointState;
using test::EndpointPair;
using test::default_config;

constexpr uint64_t kFrameUs = 16667;

uint64_t dropped(const Endpoint& e, DropReason r) { return e.stats().dropped[size_t(r)]; }

// The blob side `side` sends for `frame`: a deterministic pattern checkable on arrival.
void blob_for(int side, Frame frame, uint8_t* out, size_t size) {
  for (size_t i = 0; i < size; ++i) out[i] = uint8_t((frame / 7) * 31 + side * 101 + int(i) * 13);
}

std::vector<EndpointEvent> drain_events(Endpoint& e) {
  std::vector<EndpointEvent> events;
  EndpointEvent ev;
  while (e.pop_event(&ev)) events.push_back(ev);
  return events;
}

// Streams `frames` frames each way at 60 fps; checks order and content on arrival.
void stream_inputs(EndpointPair& pair, Frame frames, uint64_t max_time_us) {
  Frame next_send = 0;
  Frame expected[2] = {0, 0};
  uint64_t next_frame_at = pair.now;
  const uint64_t deadline = pair.now + max_time_us;
  Endpoint* eps[2] = {&pair.a().endpoint, &pair.b().endpoint};
  std::vector<uint8_t> blob(2), want(2);
  while (pair.now < deadline && (expected[0] < frames || expected[1] < frames)) {
    if (pair.now >= next_frame_at && next_send < frames) {
      for (int side = 0; side < 2; ++side) {
        blob_for(side, next_send, blob.data(), blob.size());
        ASSERT_EQ(eps[side]->send_input(next_send, blob.data()), Result::ok);
        eps[side]->set_local_frame(next_send, 0);  // as a session does: reports must be plausible
      }
      ++next_send;
      next_frame_at += kFrameUs;
    }
    pair.step(1000);
    for (int side = 0; side < 2; ++side) {
      Frame f;
      const uint8_t* got;
      while (eps[side]->pop_input(&f, &got)) {
        ASSERT_EQ(f, expected[side]);
        blob_for(1 - side, f, want.data(), want.size());
        ASSERT_EQ(0, std::memcmp(got, want.data(), want.size())) << "frame " << f;
        ++expected[side];
      }
    }
  }
  EXPECT_EQ(expected[0], frames);
  EXPECT_EQ(expected[1], frames);
}

TEST(Endpoint, HandshakeOnCleanLink) {
  EndpointPair pair(default_config(1), default_config(2));
  ASSERT_EQ(pair.init_a, Result::ok);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  auto events = drain_events(pair.a().endpoint);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().type, EndpointEventType::synchronizing);
  EXPECT_EQ(events.back().type, EndpointEventType::synchronized);
  int progress = 0;
  for (const auto& e : events) {
    if (e.type == EndpointEventType::synchronizing) {
      EXPECT_EQ(e.count, progress++);
      EXPECT_EQ(e.total, 5);
    }
  }
  EXPECT_EQ(progress, 6);  // 0 of 5 at start, then one per round trip
  EXPECT_EQ(pair.a().endpoint.remote_handshake().shape.num_players, 2u);
}

TEST(Endpoint, StreamSurvivesLossDuplicatesReorderingJitter) {
  EndpointPair pair(default_config(3), default_config(4), 99);
  LinkProfile bad;
  bad.latency_us = 30000;
  bad.jitter_us = 20000;
  bad.loss = 0.25;
  bad.duplicate = 0.10;
  bad.reorder = 0.10;
  pair.set_link(bad);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  stream_inputs(pair, 2000, 120000000);
  const auto& a = pair.a().endpoint;
  EXPECT_GT(pair.a().sim->outgoing_stats().dropped_loss, 0u);
  EXPECT_GT(pair.a().sim->outgoing_stats().duplicated, 0u);
  EXPECT_GT(dropped(a, DropReason::replayed), 0u);  // the duplicates
  EXPECT_EQ(dropped(a, DropReason::malformed), 0u);
  EXPECT_EQ(dropped(a, DropReason::bad_nonce), 0u);
  EXPECT_EQ(a.state(), EndpointState::running);
}

TEST(Endpoint, StatsCountExactBytes) {
  EndpointPair pair(default_config(5), default_config(6));
  pair.a().recorder->recording = true;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  stream_inputs(pair, 100, 10000000);
  uint64_t bytes = 0;
  for (const auto& d : pair.a().recorder->sent) bytes += d.size();
  const auto s = pair.a().endpoint.stats();
  EXPECT_EQ(s.datagrams_sent, pair.a().recorder->sent.size());
  EXPECT_EQ(s.bytes_sent, bytes);
  const auto r = pair.b().endpoint.stats();
  EXPECT_EQ(r.datagrams_received, s.datagrams_sent);  // clean link, nothing in flight
  EXPECT_EQ(r.bytes_received, s.bytes_sent);
}

TEST(Endpoint, PingMatchesSimulatedRoundTrip) {
  EndpointPair pair(default_config(7), default_config(8));
  LinkProfile link;
  link.latency_us = 40000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  // 600 frames: 20 quality reports at the default 500 ms, enough for the smoothed variation
  // (which starts at half the first sample) to settle below 3 ms.
  stream_inputs(pair, 600, 20000000);
  const double ping = double(pair.a().endpoint.ping_us());
  EXPECT_NEAR(ping, 80000.0, 3000.0);
  EXPECT_LT(pair.a().endpoint.jitter_us(), 3000u);

  EndpointPair jittery(default_config(9), default_config(10), 5);
  link.jitter_us = 20000;  // uniform [0, 20 ms] each way: mean round trip 100 ms
  jittery.set_link(link);
  jittery.start();
  ASSERT_TRUE(jittery.run_handshake());
  stream_inputs(jittery, 600, 30000000);
  EXPECT_NEAR(double(jittery.a().endpoint.ping_us()), 100000.0, 15000.0);
  EXPECT_GT(jittery.a().endpoint.jitter_us(), 1000u);
}

// Protocol 7: quality reports, their replies and checksum reports ride on inputs datagrams
// (no datagram of their own while inputs flow), every checksum still arrives, and the ping is
// still the link's although a reply now waits up to a few frames for an inputs datagram (the
// reply says how long it was held). Batching 3 frames makes replies wait the longest.
TEST(Endpoint, ReportsRideOnInputsAndThePingIsStillTheLinks) {
  EndpointConfig ca = default_config(31), cb = default_config(32);
  ca.input_batch_frames = cb.input_batch_frames = 3;
  EndpointPair pair(ca, cb);
  LinkProfile link;
  link.latency_us = 40000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  pair.a().recorder->recording = true;
  Endpoint& a = pair.a().endpoint;
  Endpoint& b = pair.b().endpoint;
  std::vector<uint8_t> blob(2, 0);
  uint64_t next_frame_at = pair.now;
  std::vector<Frame> checksummed, arrived;
  for (Frame f = 0; f < 600;) {
    if (pair.now >= next_frame_at) {
      blob[0] = uint8_t(f / 20);  // a change every 20 frames: most frames wait to be batched
      ASSERT_EQ(a.send_input(f, blob.data()), Result::ok);
      ASSERT_EQ(b.send_input(f, blob.data()), Result::ok);
      a.set_local_frame(f, 0);
      b.set_local_frame(f, 0);
      if (f % 30 == 29 && f >= 59) {  // a frame b holds by now: a checksum it can take
        ASSERT_EQ(a.send_checksum(f - 40, uint64_t(f) * 977), Result::ok);
        checksummed.push_back(f - 40);
      }
      ++f;
      next_frame_at += kFrameUs;
    }
    pair.step(1000);
    Frame got;
    const uint8_t* input;
    while (a.pop_input(&got, &input)) {}
    while (b.pop_input(&got, &input)) {}
    uint64_t sum;
    while (b.pop_checksum(&got, &sum)) {
      EXPECT_EQ(sum, uint64_t(got + 40) * 977);
      arrived.push_back(got);
    }
  }
  for (int i = 0; i < 100; ++i) pair.step(1000);  // the last ones land
  Frame got;
  uint64_t sum;
  while (b.pop_checksum(&got, &sum)) arrived.push_back(got);
  EXPECT_EQ(arrived, checksummed);
  size_t alone = 0, inputs = 0;
  for (const auto& d : pair.a().recorder->sent) {
    const auto type = detail::MessageType(d[3]);
    alone += type == detail::MessageType::quality_report || type == detail::MessageType::quality_reply ||
             type == detail::MessageType::checksum_report;
    inputs += type == detail::MessageType::inputs;
  }
  EXPECT_EQ(alone, 0u) << "reports ride while inputs flow";
  EXPECT_GT(inputs, 200u);
  EXPECT_NEAR(double(a.ping_us()), 80000.0, 3000.0);
  EXPECT_NEAR(double(b.ping_us()), 80000.0, 3000.0);
  EXPECT_NEAR(double(b.remote_frame()), 600.0, 40.0);  // a's reports arrived
}

// A side that sends no inputs (a spectator) has no inputs datagram to ride on: its reports and
// replies go alone at once, and both sides still measure the link.
TEST(Endpoint, ASideWithoutInputsSendsItsReportsAlone) {
  EndpointConfig ca = default_config(33), cb = default_config(34);
  cb.send_blob_size = 0;
  ca.receive_blob_size = 0;
  EndpointPair pair(ca, cb);
  LinkProfile link;
  link.latency_us = 30000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  pair.b().recorder->recording = true;
  std::vector<uint8_t> blob(2, 1);
  for (Frame f = 0; f < 300; ++f) {
    ASSERT_EQ(pair.a().endpoint.send_input(f, blob.data()), Result::ok);
    pair.a().endpoint.set_local_frame(f, 0);
    pair.b().endpoint.set_local_frame(f > 3 ? f - 3 : 0, 0);
    for (int i = 0; i < 17; ++i) pair.step(1000);
    Frame got;
    const uint8_t* input;
    while (pair.b().endpoint.pop_input(&got, &input)) {}
  }
  size_t reports = 0;
  for (const auto& d : pair.b().recorder->sent) reports += detail::MessageType(d[3]) == detail::MessageType::quality_report;
  EXPECT_GE(reports, 9u);  // every 500 ms for 5 s
  EXPECT_NEAR(double(pair.a().endpoint.ping_us()), 60000.0, 3000.0);
  EXPECT_NEAR(double(pair.b().endpoint.ping_us()), 60000.0, 3000.0);
}

TEST(Endpoint, TimeSyncReportsRemoteFrame) {
  EndpointPair pair(default_config(11), default_config(12));
  LinkProfile link;
  link.latency_us = 50000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  // B plays at 60 fps with an input delay of 2: at frame f its newest input is frame f + 2.
  // A's estimate of B's frame follows what B did: its input minus the delay learned from B's
  // reports, plus the 50 ms one way (3 frames) while B's inputs flow.
  std::vector<uint8_t> blob(2, 1);
  Frame b_frame = 0;
  for (int tick = 0; tick < 120; ++tick, ++b_frame) {
    blob[0] = uint8_t(tick);
    ASSERT_EQ(pair.b().endpoint.send_input(b_frame, blob.data()), Result::ok);
    pair.b().endpoint.set_local_frame(b_frame - 2, 0);
    for (int i = 0; i < 16; ++i) pair.step(1000);
    pair.step(667);
  }
  const auto& a = pair.a().endpoint;
  EXPECT_GE(a.remote_frame(), b_frame - 2 - 40) << "reported every 500 ms";
  const Frame playing = b_frame - 3;  // B's frame now
  EXPECT_NEAR(double(a.estimated_remote_frame(pair.now)), double(playing), 2.0);
  // B stalls (a blackout, its prediction limit): no new input. A does not extrapolate it.
  for (int i = 0; i < 1000; ++i) pair.step(1000);
  EXPECT_NEAR(double(a.estimated_remote_frame(pair.now)), double(playing), 2.0) << "one second later";
}

TEST(Endpoint, InterruptedResumedDisconnectedAtConfiguredDelays) {
  EndpointConfig ca = default_config(13), cb = default_config(14);
  ca.notify_delay_us = cb.notify_delay_us = 500000;
  ca.disconnect_timeout_us = cb.disconnect_timeout_us = 2000000;
  EndpointPair pair(ca, cb);
  LinkProfile link;
  link.latency_us = 20000;
  const uint64_t blackout1 = 3000000, blackout1_end = 4000000, blackout2 = 7000000;
  link.blackouts = {{blackout1, blackout1_end}, {blackout2, 1000000000}};
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  drain_events(pair.a().endpoint);

  uint64_t interrupted_at[2] = {0, 0}, resumed_at = 0, disconnected_at = 0;
  int interrupts = 0;
  Frame frame = 0;
  std::vector<uint8_t> blob(2, 1);
  uint64_t next_frame_at = pair.now;
  while (pair.now < 12000000) {
    if (pair.now >= next_frame_at) {
      blob[0] = uint8_t(frame);
      if (pair.a().endpoint.running()) (void)pair.a().endpoint.send_input(frame, blob.data());
      if (pair.b().endpoint.running()) (void)pair.b().endpoint.send_input(frame, blob.data());
      ++frame;
      next_frame_at += kFrameUs;
    }
    pair.step(1000);
    Frame f;
    const uint8_t* p;
    while (pair.a().endpoint.pop_input(&f, &p)) {}
    while (pair.b().endpoint.pop_input(&f, &p)) {}
    for (const auto& e : drain_events(pair.a().endpoint)) {
      if (e.type == EndpointEventType::interrupted && interrupts < 2) {
        interrupted_at[interrupts++] = pair.now;
        EXPECT_LE(e.timeout_us, 1500000u);
      }
      if (e.type == EndpointEventType::resumed) resumed_at = pair.now;
      if (e.type == EndpointEventType::disconnected) {
        disconnected_at = pair.now;
        EXPECT_FALSE(e.by_peer);
      }
    }
  }
  // The last datagram before a blackout arrives within latency + one frame of its start.
  const uint64_t slack = 20000 + kFrameUs + 2000;
  EXPECT_GE(interrupted_at[0], blackout1 + 500000);
  EXPECT_LE(interrupted_at[0], blackout1 + 500000 + slack);
  EXPECT_GE(resumed_at, blackout1_end);
  EXPECT_LE(resumed_at, blackout1_end + slack + 200000);  // the first datagram after it
  EXPECT_GE(interrupted_at[1], blackout2 + 500000);
  EXPECT_LE(interrupted_at[1], blackout2 + 500000 + slack);
  EXPECT_GE(disconnected_at, blackout2 + 2000000);
  EXPECT_LE(disconnected_at, blackout2 + 2000000 + slack);
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::disconnected);
}

// on_datagram sends the usual inputs datagram the straight way on one kept byte
// (Endpoint::usual_receive) instead of asking the connection's state each time: after every call
// that can change that state (init, start, the handshake, receiving, pausing and restarting the
// stream, an interruption, a resume, a timeout, a notice, a shape rejection, a re-init) the byte
// is what the state says now, and it is set while the connection runs.
TEST(Endpoint, UsualReceiveByteIsTheConnectionsStateAfterEveryCall) {
  auto agrees = [](EndpointPair& pair, const char* when) {
    for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint})
      EXPECT_EQ(e->usual_receive(), e->usual_receive_now()) << when << " at " << pair.now;
  };
  EndpointConfig ca = default_config(41), cb = default_config(42);
  ca.notify_delay_us = cb.notify_delay_us = 300000;
  ca.disconnect_timeout_us = cb.disconnect_timeout_us = 1500000;
  EndpointPair pair(ca, cb);
  LinkProfile link;
  link.latency_us = 20000;
  link.blackouts = {{2000000, 2600000}, {4000000, 1000000000}};
  pair.set_link(link);
  agrees(pair, "init");
  pair.start();
  agrees(pair, "start");
  while (!(pair.a().endpoint.running() && pair.b().endpoint.running()) && pair.now < 3000000) {
    pair.step(1000);
    agrees(pair, "handshake");
  }
  ASSERT_TRUE(pair.a().endpoint.running() && pair.b().endpoint.running());
  EXPECT_TRUE(pair.a().endpoint.usual_receive());
  Frame frame = 0;
  uint8_t blob[2] = {0, 0};
  uint64_t next_frame_at = pair.now;
  bool paused = false, restarted = false;
  while (pair.now < 7000000) {
    if (pair.now >= next_frame_at) {
      blob[0] = uint8_t(frame / 3);
      for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint})
        if (e->running()) (void)e->send_input(frame, blob);
      ++frame;
      next_frame_at += kFrameUs;
    }
    pair.step(1000);
    agrees(pair, "stream");
    Frame f;
    const uint8_t* p;
    while (pair.a().endpoint.pop_input(&f, &p)) {}
    while (pair.b().endpoint.pop_input(&f, &p)) {}
    if (!paused && pair.now >= 1000000) {
      paused = true;
      pair.a().endpoint.pause_receive();
      agrees(pair, "paused");
      EXPECT_FALSE(pair.a().endpoint.usual_receive());
    }
    if (!restarted && pair.now >= 1200000) {
      restarted = true;
      pair.a().endpoint.restart_incoming_at(pair.a().endpoint.last_received_frame() + 1);
      agrees(pair, "restarted");
      EXPECT_TRUE(pair.a().endpoint.usual_receive());
    }
  }
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::disconnected);
  EXPECT_FALSE(pair.a().endpoint.usual_receive());
  // A notice, then the same endpoints again from init.
  EndpointPair again(default_config(43), default_config(44));
  again.start();
  ASSERT_TRUE(again.run_handshake());
  agrees(again, "running");
  again.a().endpoint.send_disconnect();
  agrees(again, "notice sent");
  for (int i = 0; i < 100; ++i) {
    again.step(1000);
    agrees(again, "notice");
  }
  for (Endpoint* e : {&again.a().endpoint, &again.b().endpoint}) {
    ASSERT_EQ(e->init(default_config(45)), Result::ok);
    agrees(again, "re-init");
  }
  // A shape rejection.
  EndpointConfig cc = default_config(46), cd = default_config(47);
  cd.shape.frame_rate = 30;
  EndpointPair shapes(cc, cd);
  shapes.start();
  for (int i = 0; i < 3000; ++i) {
    shapes.step(1000);
    agrees(shapes, "shape handshake");
  }
  EXPECT_EQ(shapes.a().endpoint.reject_reason(), detail::RejectReason::shape);
}

// The clock of a random run over `pair`: 1 ms on, now and then up to 3 ms more, both simulators
// told. True when a frame is due (next_frame_at then moves one frame on).
bool random_run_step(EndpointPair& pair, std::mt19937_64& rng, uint64_t& next_frame_at) {
  pair.now += 1000 + (rng() % 4 == 0 ? rng() % 3000 : 0);
  pair.a().sim->set_time(pair.now);
  pair.b().sim->set_time(pair.now);
  if (pair.now < next_frame_at) return false;
  next_frame_at += kFrameUs;
  return true;
}

// Every datagram waiting for `s` from its peer into its endpoint, `after` called after each.
template <class After>
void deliver_from_peer(EndpointPair::Side& s, uint64_t now, After&& after) {
  uint8_t buffer[2048];
  PeerAddress from;
  size_t length = 0;
  while (s.sim->receive(&from, buffer, sizeof buffer, &length)) {
    if (from != s.remote) continue;
    s.endpoint.on_datagram(buffer, length, now);
    after();
  }
}

// quiet_at asks one kept byte (Endpoint::quiet_allowed) for the connection's state instead of
// its seven tests (running, no reply owed to the peer or strangers, the peer not back from a
// silence, no player disconnected, no rider waiting, something sent): after every call of
// random runs (handshakes with strangers' requests, datagrams lost, duplicated, reordered and
// replayed, blackouts, inputs, checksums, reports, players disconnected and back, urgency and
// stalls, the polls of every kind, a notice, a re-init) the byte is what the state says now.
TEST(Endpoint, QuietByteIsTheConnectionsStateAfterEveryCall) {
  uint64_t checks = 0, quiet = 0, loud_running = 0;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    std::mt19937_64 rng(seed * 7919 + 5);
    EndpointConfig ca = default_config(seed * 2 + 101), cb = default_config(seed * 2 + 102);
    ca.notify_delay_us = cb.notify_delay_us = 300000;
    ca.disconnect_timeout_us = cb.disconnect_timeout_us = seed % 3 == 0 ? 1200000 : 4000000;
    ca.quality_interval_us = cb.quality_interval_us = 100000 + 50000 * (seed % 4);
    EndpointPair pair(ca, cb, seed + 1);
    LinkProfile link;
    link.latency_us = 5000 + rng() % 30000;
    link.jitter_us = rng() % 8000;
    link.loss = double(rng() % 20) / 100;
    link.duplicate = double(rng() % 5) / 100;
    link.reorder = double(rng() % 5) / 100;
    link.blackouts = {{800000 + rng() % 400000, 1300000 + rng() % 500000}};
    if (seed % 2 == 0) link.blackouts.push_back({2500000, 2500000 + 300000 + rng() % 1500000});
    pair.set_link(link);
    EndpointPair::Side* sides[2] = {&pair.a(), &pair.b()};
    for (EndpointPair::Side* s : sides) s->recorder->recording = true;
    auto agrees = [&](const char* when) {
      for (EndpointPair::Side* s : sides) {
        const Endpoint& e = s->endpoint;
        EXPECT_EQ(e.quiet_allowed(), e.quiet_allowed_now()) << when << " at " << pair.now << " seed " << seed;
        ++checks;
        quiet += e.quiet_allowed();
        loud_running += e.running() && !e.quiet_allowed();
      }
    };
    agrees("init");
    pair.start();
    agrees("start");
    Frame next_frame[2] = {0, 0};
    uint64_t next_frame_at = pair.now;
    uint8_t blob[2] = {0, 0};
    uint8_t buffer[2048];
    detail::ConnectStatus status[2] = {};
    const uint64_t end = 5000000 + rng() % 2000000;
    const uint64_t notice_at = seed % 3 == 1 ? 3000000 + rng() % 1000000 : ~uint64_t(0);
    while (pair.now < end) {
      const bool frame_time = random_run_step(pair, rng, next_frame_at);
      for (int i = 0; i < 2; ++i) {
        EndpointPair::Side& s = *sides[i];
        EndpointPair::Side& other = *sides[1 - i];
        Endpoint& e = s.endpoint;
        deliver_from_peer(s, pair.now, [&] { agrees("datagram"); });
        // An old datagram of the peer again (a handshake request: a reply owed), or a stranger's
        // request while the handshake runs.
        if (rng() % 40 == 0 && !other.recorder->sent.empty()) {
          const auto& old = other.recorder->sent[rng() % other.recorder->sent.size()];
          e.on_datagram(old.data(), old.size(), pair.now);
          agrees("replayed");
        }
        if (rng() % 60 == 0) {
          detail::Message m;
          m.header.type = detail::MessageType::handshake_request;
          m.header.nonce = 5000 + uint32_t(rng() % 100);
          m.handshake = {rng(), {2, 2, 60}, 1, false, 2, 2};
          const size_t n = detail::encode_message(m, buffer, sizeof buffer);
          e.on_datagram(buffer, n, pair.now);
          agrees("stranger");
        }
        if (frame_time && e.running()) {
          if (rng() % 3 == 0) blob[0] = uint8_t(rng());
          (void)e.send_input(next_frame[i]++, blob);
          agrees("input");
          e.set_local_frame(next_frame[i] - 1, int32_t(rng() % 5) - 2);
          agrees("local frame");
        }
        if (rng() % 30 == 0) {
          (void)e.send_checksum(next_frame[i] > 0 ? next_frame[i] - 1 : 0, rng());
          agrees("checksum");
        }
        if (rng() % 200 == 0) {
          status[rng() % 2] = detail::ConnectStatus{rng() % 2 == 0, next_frame[i] - 1};
          e.set_local_connect_status(status, 2);
          agrees("status");
        }
        if (rng() % 10 == 0) {
          e.set_urgent(rng() % 2 == 0, rng() % 3 == 0);
          agrees("urgency");
        }
        switch (rng() % 3) {
          case 0:
            (void)e.poll(pair.now, *s.recorder, s.remote);
            break;
          case 1:
            (void)e.poll(pair.now, *s.recorder, s.remote, [&] { return rng() % 2 == 0; });
            break;
          default:
            if (e.polled_at(pair.now)) (void)e.poll_polled_again(pair.now, *s.recorder, s.remote);
            else (void)e.poll_again(pair.now, *s.recorder, s.remote);
        }
        agrees("poll");
        if (rng() % 4 == 0) {
          (void)e.poll_again(pair.now, *s.recorder, s.remote);
          agrees("poll again");
        }
        Frame f;
        const uint8_t* p;
        while (e.pop_input(&f, &p)) {}
        if (i == 0 && pair.now >= notice_at) {
          e.send_disconnect();
          agrees("notice");
        }
      }
    }
    for (EndpointPair::Side* s : sides) {
      ASSERT_EQ(s->endpoint.init(default_config(seed + 900)), Result::ok);
      agrees("re-init");
      EXPECT_FALSE(s->endpoint.quiet_allowed());
    }
  }
  // Both answers were seen often while running.
  EXPECT_GT(quiet, checks / 10);
  EXPECT_GT(loud_running, checks / 100);
}

// quiet_at leaves riders waiting (a report, a reply, checksums) to its other questions until
// their patience runs out (Endpoint::riders_wait): poll_full sends none of them before; and a
// report that falls due it makes due as poll_full does (report_rides), then it rides. Two pairs
// in lockstep over random runs, one polled through the probe (poll) and one through the general
// path (poll_loudly: poll_full every time), with quality reports every 2-5 frames, replies,
// checksums, frames paused (riders then go alone: a late reply, report or checksum), loss,
// jitter, a blackout, urgency and stalls: both send the same datagrams, byte for byte, at the
// same times, and agree on what each poll leaves (polled_at, quiet_allowed).
TEST(Endpoint, QuietProbeWithRidersWaitingPollsAsTheGeneralPath) {
  uint64_t datagrams = 0, riders_alone = 0, riding_polls = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    std::mt19937_64 rng(seed * 104729 + 11);
    EndpointConfig ca = default_config(seed * 2 + 301), cb = default_config(seed * 2 + 302);
    ca.notify_delay_us = cb.notify_delay_us = 300000;
    ca.disconnect_timeout_us = cb.disconnect_timeout_us = 4000000;
    ca.quality_interval_us = cb.quality_interval_us = 2 * kFrameUs + kFrameUs * (seed % 4);
    ca.input_batch_frames = cb.input_batch_frames = 1 + uint32_t(seed % 3);
    LinkProfile link;
    link.latency_us = 5000 + rng() % 30000;
    link.jitter_us = rng() % 6000;
    link.loss = double(rng() % 10) / 100;
    link.reorder = double(rng() % 4) / 100;
    link.blackouts = {{900000 + rng() % 300000, 1200000 + rng() % 300000}};
    EndpointPair probe(ca, cb, seed + 1), general(ca, cb, seed + 1);
    EndpointPair* pairs[2] = {&probe, &general};
    for (EndpointPair* pair : pairs) {
      pair->set_link(link);
      pair->a().recorder->recording = pair->b().recorder->recording = true;
      pair->start();
    }
    Frame next_frame[2][2] = {};  // [pair][side]
    uint64_t next_frame_at = 0, now = 0;
    uint8_t blob[2] = {0, 0};
    const uint64_t end = 3000000 + rng() % 1000000;
    while (now < end) {
      now += 1000 + (rng() % 4 == 0 ? rng() % 3000 : 0);
      // Frames stop now and then (a game waiting): riders then wait past their patience.
      const bool paused = (now / 250000) % 3 == 2;
      const bool frame_time = now >= next_frame_at;
      if (frame_time) next_frame_at += kFrameUs;
      for (int i = 0; i < 2; ++i) {
        // Every random draw once for both pairs.
        if (rng() % 3 == 0) blob[0] = uint8_t(rng());
        const int32_t advantage = int32_t(rng() % 5) - 2;
        const bool checksum = rng() % 25 == 0;
        const uint64_t checksum_value = rng();
        const bool stalled = rng() % 5 == 0;
        const bool urgent = rng() % 4 == 0;
        const bool sending = frame_time && !paused;
        for (int k = 0; k < 2; ++k) {
          EndpointPair& pair = *pairs[k];
          pair.now = now;
          EndpointPair::Side& s = i == 0 ? pair.a() : pair.b();
          s.sim->set_time(now);
          Endpoint& e = s.endpoint;
          deliver_from_peer(s, now, [] {});
          Frame& frame = next_frame[k][i];
          if (sending && e.running()) {
            (void)e.send_input(frame, blob);
            e.set_local_frame(frame++, advantage);
          }
          if (checksum && e.running()) (void)e.send_checksum(frame, checksum_value);
          e.set_stalled(stalled);
          if (k == 0) {
            riding_polls += e.running() && !e.quiet_allowed() && e.riders_wait(now);
            (void)e.poll(now, *s.recorder, s.remote, [urgent] { return urgent; });
          } else {
            (void)e.poll_loudly(now, *s.recorder, s.remote, [urgent] { return urgent; });
          }
          Frame f;
          const uint8_t* p;
          while (e.pop_input(&f, &p)) {}
        }
        const EndpointPair::Side& p = i == 0 ? probe.a() : probe.b();
        const EndpointPair::Side& g = i == 0 ? general.a() : general.b();
        ASSERT_EQ(p.recorder->sent.size(), g.recorder->sent.size()) << "seed " << seed << " side " << i << " at " << now;
        if (!p.recorder->sent.empty()) {
          ASSERT_EQ(p.recorder->sent.back(), g.recorder->sent.back()) << "seed " << seed << " side " << i << " at " << now;
        }
        EXPECT_EQ(p.endpoint.polled_at(now), g.endpoint.polled_at(now)) << "seed " << seed << " at " << now;
        EXPECT_EQ(p.endpoint.quiet_allowed(), g.endpoint.quiet_allowed()) << "seed " << seed << " at " << now;
      }
    }
    for (EndpointPair::Side* s : {&probe.a(), &probe.b()}) {
      datagrams += s->recorder->sent.size();
      for (const auto& d : s->recorder->sent) {
        const auto type = detail::MessageType(d[3]);
        riders_alone += type == detail::MessageType::quality_report || type == detail::MessageType::quality_reply ||
                        type == detail::MessageType::checksum_report;
      }
    }
  }
  // The runs did what they are here for: riders waited through quiet polls, and went alone.
  EXPECT_GT(datagrams, 5000u);
  EXPECT_GT(riding_polls, 20000u);
  EXPECT_GT(riders_alone, 500u);
}

TEST(Endpoint, DisconnectNoticeReachesPeer) {
  EndpointPair pair(default_config(15), default_config(16));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  drain_events(pair.b().endpoint);
  pair.a().endpoint.send_disconnect();
  for (int i = 0; i < 10; ++i) pair.step(1000);
  EXPECT_EQ(pair.b().endpoint.state(), EndpointState::disconnected);
  const auto events = drain_events(pair.b().endpoint);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, EndpointEventType::disconnected);
  EXPECT_TRUE(events[0].by_peer);
}

TEST(Endpoint, HandshakeTimesOutWhenConfigured) {
  EndpointConfig ca = default_config(34), cb = default_config(35);
  ca.handshake_timeout_us = 1500000;
  EndpointPair pair(ca, cb);
  LinkProfile dead;
  dead.loss = 1.0;
  pair.set_link(dead);
  pair.start();
  EXPECT_FALSE(pair.run_handshake(1499000));
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::synchronizing);
  pair.step(1000);
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::disconnected);
  EXPECT_EQ(drain_events(pair.a().endpoint).back().type, EndpointEventType::disconnected);
  for (int i = 0; i < 1000; ++i) pair.step(1000);
  EXPECT_EQ(pair.b().endpoint.state(), EndpointState::synchronizing);  // 0: never gives up
}

// One side finishes its handshake long before the other (here B needs 120 round trips, about
// 6 s at 50 ms, A 5; under 25-30% loss the sides differ by seconds the same way). Meanwhile B
// sends only requests, which move nothing; on the old code A's silence timer ended the
// connection after the disconnect timeout (2 s) while B went on and completed later: a split,
// A gone for B only once B's own timer ran out. A request carrying the peer's own nonce now
// keeps a running connection alive: A stays running, B completes, and inputs flow both ways.
TEST(Endpoint, ASideStillHandshakingIsNotTimedOutByTheOneThatFinished) {
  EndpointConfig ca = default_config(36), cb = default_config(37);
  ca.notify_delay_us = cb.notify_delay_us = 500000;
  ca.disconnect_timeout_us = cb.disconnect_timeout_us = 2000000;
  cb.sync_round_trips = 120;
  EndpointPair pair(ca, cb);
  LinkProfile link;
  link.latency_us = 25000;
  pair.set_link(link);
  pair.start();
  uint64_t a_ran_at = 0;
  while (pair.now < 20000000 && !pair.b().endpoint.running()) {
    pair.step(1000);
    if (a_ran_at == 0 && pair.a().endpoint.running()) a_ran_at = pair.now;
  }
  ASSERT_NE(a_ran_at, 0u);
  ASSERT_TRUE(pair.b().endpoint.running()) << "B completes";
  EXPECT_GT(pair.now, a_ran_at + 3000000) << "B finished seconds after A (past A's disconnect timeout)";
  for (const auto& e : drain_events(pair.a().endpoint)) {
    EXPECT_NE(e.type, EndpointEventType::disconnected) << "A kept the connection";
    EXPECT_NE(e.type, EndpointEventType::interrupted) << "A heard B all along";
  }
  EXPECT_EQ(pair.a().endpoint.state(), EndpointState::running);
  stream_inputs(pair, 60, 5000000);
  EXPECT_EQ(pair.a().endpoint.last_received_frame(), 59);
  EXPECT_EQ(pair.b().endpoint.last_received_frame(), 59);
}

TEST(Endpoint, MismatchedShapeIsRejected) {
  EndpointConfig ca = default_config(17), cb = default_config(18);
  cb.shape.frame_rate = 30;
  EndpointPair pair(ca, cb);
  pair.start();
  EXPECT_FALSE(pair.run_handshake(3000000));
  for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) {
    EXPECT_EQ(e->state(), EndpointState::disconnected);
    EXPECT_EQ(e->reject_reason(), detail::RejectReason::shape);
    bool rejected = false, synced = false;
    for (const auto& ev : drain_events(*e)) {
      rejected |= ev.type == EndpointEventType::handshake_rejected;
      synced |= ev.type == EndpointEventType::synchronized;
    }
    EXPECT_TRUE(rejected);
    EXPECT_FALSE(synced);
  }
  // A peer that would send 4-byte blobs where 2 are expected is a shape mismatch too.
  EndpointConfig cc = default_config(19);
  cc.send_blob_size = 4;
  EndpointPair blobs(default_config(20), cc);
  blobs.start();
  EXPECT_FALSE(blobs.run_handshake(3000000));
  EXPECT_EQ(blobs.a().endpoint.reject_reason(), detail::RejectReason::shape);
}

// Players with different rollback windows are not refused (issue 11): each learns the other's
// configured window from the handshake and the session plays with the smaller one
// (docs/NETWORKING.md, "How late a cut can come"). A spectator's (it sends 0) is never read.
TEST(Endpoint, PlayersWithDifferentWindowsAreNotRejected) {
  EndpointConfig ca = default_config(31), cb = default_config(32);
  ca.shape.max_prediction = 8;
  cb.shape.max_prediction = 64;
  EndpointPair players(ca, cb);
  players.start();
  EXPECT_TRUE(players.run_handshake(3000000));
  for (Endpoint* e : {&players.a().endpoint, &players.b().endpoint}) {
    EXPECT_EQ(e->state(), EndpointState::running);
    EXPECT_EQ(e->reject_reason(), detail::RejectReason::none);
  }
  EXPECT_EQ(players.a().endpoint.remote_handshake().shape.max_prediction, 64u);
  EXPECT_EQ(players.b().endpoint.remote_handshake().shape.max_prediction, 8u);

  EndpointConfig host = default_config(33), spectator = default_config(34);
  host.shape.max_prediction = 8;
  host.receive_blob_size = 0;
  host.send_blob_size = 4;  // both players' inputs
  spectator.spectator = true;
  spectator.players_owned = 0;
  spectator.send_blob_size = 0;
  spectator.receive_blob_size = 4;
  EndpointPair watch(host, spectator);
  ASSERT_EQ(watch.init_a, Result::ok);
  ASSERT_EQ(watch.init_b, Result::ok);
  watch.start();
  EXPECT_TRUE(watch.run_handshake(3000000));
  EXPECT_EQ(watch.a().endpoint.state(), EndpointState::running);
  EXPECT_EQ(watch.b().endpoint.state(), EndpointState::running);

  EndpointConfig bad = default_config(35);
  bad.shape.max_prediction = 65;
  Endpoint e;
  EXPECT_EQ(e.init(bad), Result::invalid_argument);
}

// One datagram of another version proves nothing (anyone can forge one): it never stops a
// handshake. A peer that only ever speaks another version is named at the handshake timeout.
TEST(Endpoint, OtherProtocolVersionIsRejectedOnlyAtTheHandshakeTimeout) {
  EndpointConfig config = default_config(21);
  config.handshake_timeout_us = 2000000;
  Endpoint e;
  ASSERT_EQ(e.init(config), Result::ok);
  ASSERT_EQ(e.start(0), Result::ok);
  detail::Message m;
  m.header.type = detail::MessageType::handshake_request;
  m.header.version = detail::kProtocolVersion - 1;
  m.header.nonce = 1234;
  m.handshake = {1, {2, 2, 60}, 1, false, 2, 2};
  uint8_t buffer[detail::kMaxDatagramSize];
  const size_t n = detail::encode_message(m, buffer, sizeof buffer);
  e.on_datagram(buffer, n, 1000);
  EXPECT_EQ(e.state(), EndpointState::synchronizing);
  EXPECT_EQ(dropped(e, DropReason::bad_version), 1u);
  test::CountingTransport sink;
  ASSERT_EQ(e.poll(1999000, sink, PeerAddress{}), Result::ok);
  EXPECT_EQ(e.state(), EndpointState::synchronizing);
  ASSERT_EQ(e.poll(2000000, sink, PeerAddress{}), Result::ok);
  EXPECT_EQ(e.state(), EndpointState::disconnected);
  EXPECT_EQ(e.reject_reason(), detail::RejectReason::version);
  bool rejected = false;
  for (const auto& ev : drain_events(e)) {
    rejected |= ev.type == EndpointEventType::handshake_rejected;
  }
  EXPECT_TRUE(rejected);

  // The same forged datagram in the middle of a real handshake changes nothing.
  EndpointPair pair(default_config(40), default_config(41));
  pair.start();
  pair.step(1000);
  pair.a().endpoint.on_datagram(buffer, n, pair.now);
  pair.b().endpoint.on_datagram(buffer, n, pair.now);
  ASSERT_TRUE(pair.run_handshake());
}

// Every class of bad datagram reaching a running endpoint is dropped, counted, and harmless.
TEST(Endpoint, BadDatagramsAreDroppedAndCounted) {
  EndpointPair pair(default_config(22), default_config(23));
  pair.b().recorder->recording = true;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  stream_inputs(pair, 400, 20000000);
  Endpoint& a = pair.a().endpoint;
  const Frame received = a.last_received_frame();
  ASSERT_EQ(received, 399);

  // A datagram B really sent, to replay and to forge from.
  std::vector<uint8_t> real;
  for (const auto& d : pair.b().recorder->sent) {
    if (d[3] == uint8_t(detail::MessageType::inputs)) real = d;
  }
  ASSERT_FALSE(real.empty());
  // An insider's view: both nonces, so the connection's checksum key.
  const uint32_t nonce = pair.b().endpoint.local_nonce();
  detail::Integrity key;
  key.connection_key = detail::connection_checksum_key(nonce, a.local_nonce());
  detail::Message decoded;
  ASSERT_EQ(detail::decode_message(real.data(), real.size(), &decoded, key), detail::DecodeError::ok);
  EXPECT_EQ(decoded.header.nonce, 0u) << "data messages carry no nonce: the keyed checksum binds them";

  a.on_datagram(real.data(), real.size(), pair.now);  // replay
  EXPECT_EQ(dropped(a, DropReason::replayed), 1u);

  auto truncated = real;
  truncated.resize(7);
  a.on_datagram(truncated.data(), truncated.size(), pair.now);
  EXPECT_EQ(dropped(a, DropReason::truncated), 1u);

  auto bad_magic = real;
  bad_magic[1] = 0;
  a.on_datagram(bad_magic.data(), bad_magic.size(), pair.now);
  EXPECT_EQ(dropped(a, DropReason::bad_magic), 1u);

  auto bad_version = real;
  bad_version[2] = 9;
  a.on_datagram(bad_version.data(), bad_version.size(), pair.now);
  EXPECT_EQ(dropped(a, DropReason::bad_version), 1u);
  EXPECT_TRUE(a.running());  // after the handshake another version is only noise

  auto unknown = real;
  unknown[3] = 77;
  a.on_datagram(unknown.data(), unknown.size(), pair.now);
  EXPECT_EQ(dropped(a, DropReason::unknown_type), 1u);

  std::vector<uint8_t> oversized(detail::kMaxDatagramSize + 10, 0);
  std::copy(real.begin(), real.end(), oversized.begin());
  a.on_datagram(oversized.data(), oversized.size(), pair.now);
  EXPECT_EQ(dropped(a, DropReason::oversized), 1u);

  auto forge = [&](uint32_t with_nonce, uint32_t sequence, Frame start, Frame ack) {
    detail::Header h;
    h.sequence = sequence;
    uint8_t out[detail::kMaxDatagramSize];
    uint8_t zeros[2] = {0, 0}, blob[2] = {7, 7};
    detail::InputsWriter w(out, sizeof out, h, start, ack, 2, nullptr, 0, zeros);
    w.append(blob);
    const size_t n = w.finish();
    // Another connection's (another nonce's) key: what a datagram of an old connection has.
    detail::seal_datagram(out, n, detail::connection_checksum_key(with_nonce, a.local_nonce()), sequence);
    a.on_datagram(out, n, pair.now);
  };
  const uint64_t garbled = dropped(a, DropReason::bad_checksum);
  forge(nonce ^ 1, decoded.header.sequence + 1000, received + 1, -1);
  EXPECT_EQ(dropped(a, DropReason::bad_checksum), garbled + 1);
  forge(nonce, decoded.header.sequence + 1001, received + 100000, -1);  // far future: a gap
  EXPECT_EQ(dropped(a, DropReason::out_of_window), 1u);
  forge(nonce, decoded.header.sequence + 1002, 3, -1);  // far past
  EXPECT_EQ(dropped(a, DropReason::out_of_window), 2u);
  forge(nonce, decoded.header.sequence + 1003, received, 1000000);  // acks frames never sent
  EXPECT_EQ(dropped(a, DropReason::out_of_window), 3u);
  forge(nonce, 0, received + 1, -1);  // a sequence number far too old
  EXPECT_EQ(dropped(a, DropReason::replayed), 2u);

  // Random garbage in bulk: dropped, never accepted as inputs.
  std::mt19937 rng(3);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> junk(rng() % 64);
    for (auto& b : junk) b = uint8_t(rng());
    if (!junk.empty() && rng() % 2) junk[0] = detail::kMagic0;
    if (junk.size() > 1 && rng() % 2) junk[1] = detail::kMagic1;
    a.on_datagram(junk.data(), junk.size(), pair.now);
  }
  EXPECT_EQ(a.last_received_frame(), received);
  EXPECT_TRUE(a.running());

  // The stream carries on untouched.
  stream_inputs(pair, 0, 0);
  std::vector<uint8_t> blob(2, 0);
  for (Frame f = 400; f < 500; ++f) {
    blob_for(1, f, blob.data(), 2);
    ASSERT_EQ(pair.b().endpoint.send_input(f, blob.data()), Result::ok);
  }
  for (int i = 0; i < 200; ++i) pair.step(1000);
  EXPECT_EQ(a.last_received_frame(), 499);
  std::vector<uint8_t> want(2);
  blob_for(1, 450, want.data(), 2);
  ASSERT_NE(a.received_input(450), nullptr);
  EXPECT_EQ(0, std::memcmp(a.received_input(450), want.data(), 2));
}

// Datagrams garbled on the way are all dropped, and never alter the inputs delivered.
TEST(Endpoint, GarbledDatagramsNeverCorruptInputs) {
  EndpointPair pair(default_config(28), default_config(29));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  pair.a().recorder->garble = true;
  pair.b().recorder->garble = true;
  stream_inputs(pair, 1000, 60000000);  // checks every blob's content
  for (auto* side : {&pair.a(), &pair.b()}) {
    const auto& other = side == &pair.a() ? pair.b() : pair.a();
    const auto stats = other.endpoint.stats();
    uint64_t drops = 0;
    for (uint64_t d : stats.dropped) drops += d;
    EXPECT_EQ(drops, side->recorder->garbled);
    // A garbled nonce is caught before the checksum is computed.
    EXPECT_GT(stats.dropped[size_t(DropReason::bad_checksum)] +
                  stats.dropped[size_t(DropReason::bad_nonce)],
              side->recorder->garbled / 2);
  }
}

// A long backlog of incompressible blobs crosses in datagrams of at most 1200 bytes and
// arrives complete, oldest first.
TEST(Endpoint, BacklogRespectsDatagramCap) {
  EndpointConfig ca = default_config(24), cb = default_config(25);
  ca.shape = cb.shape = {8, 128, 60};
  ca.send_blob_size = 1024;  // a host sending all 8 players to a spectator
  ca.receive_blob_size = 0;
  cb.send_blob_size = 0;
  cb.receive_blob_size = 1024;
  cb.spectator = true;
  EndpointPair pair(ca, cb);
  pair.a().recorder->recording = true;
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  std::mt19937 rng(8);
  std::vector<std::vector<uint8_t>> blobs(300, std::vector<uint8_t>(1024));
  for (Frame f = 0; f < 300; ++f) {
    for (auto& b : blobs[size_t(f)]) b = uint8_t(rng());
    ASSERT_EQ(pair.a().endpoint.send_input(f, blobs[size_t(f)].data()), Result::ok);
  }
  EXPECT_EQ(pair.a().endpoint.stats().send_queue_length, 300u);
  Frame expected = 0;
  for (int i = 0; i < 20000 && expected < 300; ++i) {
    pair.step(1000);
    Frame f;
    const uint8_t* p;
    while (pair.b().endpoint.pop_input(&f, &p)) {
      ASSERT_EQ(f, expected);
      ASSERT_EQ(0, std::memcmp(p, blobs[size_t(f)].data(), 1024));
      ++expected;
    }
  }
  EXPECT_EQ(expected, 300);
  EXPECT_LE(pair.a().recorder->max_size, detail::kMaxDatagramSize);
  for (int i = 0; i < 100; ++i) pair.step(1000);
  EXPECT_EQ(pair.a().endpoint.stats().send_queue_length, 0u);
}

TEST(Endpoint, ChecksumsAndConnectStatusCross) {
  EndpointPair pair(default_config(26), default_config(27));
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  detail::ConnectStatus status[2] = {{false, 10}, {true, 8}};
  pair.a().endpoint.set_local_connect_status(status, 2);
  std::vector<uint8_t> blob(2, 3);
  // B sent frames 0..10, so A may have confirmed (and checksummed) frame 10.
  for (Frame f = 0; f <= 10; ++f) ASSERT_EQ(pair.b().endpoint.send_input(f, blob.data()), Result::ok);
  ASSERT_EQ(pair.a().endpoint.send_checksum(10, 0xABCDEF), Result::ok);
  ASSERT_EQ(pair.a().endpoint.send_input(0, blob.data()), Result::ok);
  for (int i = 0; i < 10; ++i) pair.step(1000);
  Frame f;
  uint64_t c;
  ASSERT_TRUE(pair.b().endpoint.pop_checksum(&f, &c));
  EXPECT_EQ(f, 10);
  EXPECT_EQ(c, 0xABCDEFu);
  EXPECT_FALSE(pair.b().endpoint.pop_checksum(&f, &c));
  EXPECT_TRUE(pair.b().endpoint.remote_connect_status(1).disconnected);
  EXPECT_EQ(pair.b().endpoint.remote_connect_status(1).last_frame, 8);
  // A connected player's last frame does not travel (protocol 2): only where a disconnected
  // player stops matters to the receiver.
  EXPECT_EQ(pair.b().endpoint.remote_connect_status(0).last_frame, kNullFrame);
  EXPECT_FALSE(pair.b().endpoint.remote_connect_status(0).disconnected);
}

TEST(Endpoint, LogsGoThroughTheLogger) {
  struct Lines {
    std::vector<std::string> text;
    std::vector<LogLevel> levels;
  } lines;
  EndpointConfig ca = default_config(30), cb = default_config(31);
  ca.logger.user = &lines;
  ca.logger.min_level = LogLevel::info;
  ca.logger.log = [](void* user, LogLevel level, const char* message) {
    static_cast<Lines*>(user)->text.emplace_back(message);
    static_cast<Lines*>(user)->levels.push_back(level);
  };
  cb.shape.input_size = 3;  // rejected: an error line
  cb.send_blob_size = cb.receive_blob_size = 3;
  EndpointPair pair(ca, cb);
  pair.start();
  pair.run_handshake(1000000);
  ASSERT_FALSE(lines.text.empty());
  EXPECT_NE(lines.text.back().find("rejected"), std::string::npos) << lines.text.back();
  EXPECT_EQ(lines.levels.back(), LogLevel::error);
  Endpoint e;
  EndpointConfig bad = ca;
  bad.sync_round_trips = 0;
  EXPECT_EQ(e.init(bad), Result::invalid_argument);
  EXPECT_NE(lines.text.back().find("sync_round_trips"), std::string::npos) << lines.text.back();
}

// A user transport (C function pointers) carries a whole connection, and a transport that
// fails is reported by poll() and counted, without breaking the endpoint.
TEST(Endpoint, RunsOverCallbackTransportAndSurvivesSendFailures) {
  InMemoryNetwork net;
  struct User {
    InMemoryTransport* link;
    bool fail = false;
  } ua{net.add_endpoint()}, ub{net.add_endpoint()};
  TransportCallbacks cb;
  cb.send = [](void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data,
               size_t length) -> int32_t {
    auto* u = static_cast<User*>(user);
    PeerAddress to;
    if (u->fail || !PeerAddress::from_bytes(addr, addr_len, &to)) return -1;
    return u->link->send(to, data, length) == Result::ok ? 0 : -1;
  };
  cb.receive = [](void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer,
                  size_t capacity, size_t* length) -> int32_t {
    PeerAddress from;
    if (!static_cast<User*>(user)->link->receive(&from, buffer, capacity, length)) return 0;
    std::memcpy(addr, from.bytes, from.size);
    *addr_len = from.size;
    return 1;
  };
  cb.user = &ua;
  CallbackTransport ta(cb);
  cb.user = &ub;
  CallbackTransport tb(cb);
  Endpoint a, b;
  ASSERT_EQ(a.init(default_config(32)), Result::ok);
  ASSERT_EQ(b.init(default_config(33)), Result::ok);
  a.start(0);
  b.start(0);
  uint8_t buffer[1500];
  Frame sent = 0;
  Result failed = Result::ok;
  for (uint64_t now = 1000; now < 3000000 && b.last_received_frame() < 99; now += 1000) {
    size_t length;
    PeerAddress from;
    while (ta.receive(&from, buffer, sizeof buffer, &length)) a.on_datagram(buffer, length, now);
    while (tb.receive(&from, buffer, sizeof buffer, &length)) b.on_datagram(buffer, length, now);
    if (a.running() && sent < 100) {
      const uint8_t blob[2] = {uint8_t(sent), 0};
      ASSERT_EQ(a.send_input(sent++, blob), Result::ok);
    }
    ua.fail = sent > 20 && sent < 40;  // a stretch where every send fails
    const Result r = a.poll(now, ta, ub.link->address());
    if (r != Result::ok) failed = r;
    b.poll(now, tb, ua.link->address());
  }
  EXPECT_EQ(failed, Result::transport_error);
  EXPECT_GT(a.stats().send_failures, 0u);
  EXPECT_EQ(b.last_received_frame(), 99);
  EXPECT_EQ(b.received_input(30)[0], 30);
}

TEST(Endpoint, ApiMisuseIsAnError) {
  Endpoint e;
  uint8_t blob[2] = {};
  EXPECT_EQ(e.send_input(0, blob), Result::wrong_state);
  EXPECT_EQ(e.start(0), Result::wrong_state);
  EndpointConfig bad = default_config(1);
  bad.shape.num_players = 0;
  EXPECT_EQ(e.init(bad), Result::invalid_argument);
  ASSERT_EQ(e.init(default_config(1)), Result::ok);
  EXPECT_EQ(e.send_input(1, blob), Result::invalid_argument);  // not frame 0
  EXPECT_EQ(e.send_input(0, nullptr), Result::invalid_argument);
  EXPECT_EQ(e.send_input(0, blob), Result::ok);
  EXPECT_EQ(e.send_input(0, blob), Result::invalid_argument);  // twice
  e.on_datagram(blob, 2, 0);  // before start: wrong state, counted
  EXPECT_EQ(dropped(e, DropReason::wrong_state), 1u);
  EXPECT_EQ(e.received_input(0), nullptr);
}

}  // namespace
}  // namespace retcon

namespace retcon::test {
namespace {

// The send policy: a changed input goes out at the next poll; unchanged ones wait until
// input_batch_frames (here 3) are pending (or that many frame times pass), then share one
// datagram.
// Every frame still arrives and is acknowledged.
TEST(Endpoint, ChangedInputsGoAtOnceUnchangedOnesShareADatagram) {
  detail::EndpointConfig ca = default_config(40), cb = default_config(41);
  ca.input_batch_frames = cb.input_batch_frames = 3;
  EndpointPair pair(ca, cb);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  auto& a = pair.a().endpoint;
  auto& b = pair.b().endpoint;
  const uint8_t x[2] = {1, 0};
  auto settle = [&](int ms) {
    for (int i = 0; i < ms; ++i) pair.step(1000);
  };
  ASSERT_EQ(a.send_input(0, x), Result::ok);  // differs from the zeros before frame 0
  settle(2);
  EXPECT_EQ(b.last_received_frame(), 0);
  ASSERT_EQ(a.send_input(1, x), Result::ok);  // unchanged: waits
  settle(2);
  ASSERT_EQ(a.send_input(2, x), Result::ok);
  settle(2);
  EXPECT_EQ(b.last_received_frame(), 0);
  ASSERT_EQ(a.send_input(3, x), Result::ok);  // the third pending frame: the batch goes
  settle(2);
  EXPECT_EQ(b.last_received_frame(), 3);
  const uint8_t y[2] = {3, 0};
  ASSERT_EQ(a.send_input(4, y), Result::ok);  // changed: at once
  settle(2);
  EXPECT_EQ(b.last_received_frame(), 4);
  // An unchanged frame with no more to come goes after 3.5 frame times (58 ms).
  ASSERT_EQ(a.send_input(5, y), Result::ok);
  settle(40);
  EXPECT_EQ(b.last_received_frame(), 4);
  settle(40);
  EXPECT_EQ(b.last_received_frame(), 5);
  settle(100);
  EXPECT_EQ(a.last_acked_frame(), 5);
  EXPECT_EQ(a.stats().send_queue_length, 0u);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// A stalled owner resends its unacknowledged frames every frame time, so the first datagram
// after a blackout ends the peer's stall. While the peer is silent (the blackout itself) that
// would throw ~40 datagrams a second into the void: they go every resend_interval_us (50 ms)
// instead, and at once when the peer speaks again.
TEST(Endpoint, StalledResendsSlowDownWhileThePeerIsSilentAndResumeAtOnce) {
  EndpointPair pair(default_config(50), default_config(51));
  LinkProfile link;
  link.latency_us = 20000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  auto& a = pair.a().endpoint;
  auto& b = pair.b().endpoint;
  const uint8_t x[2] = {1, 0};
  for (int i = 0; i < 300; ++i) pair.step(1000);
  const uint64_t dark_from = pair.now, dark_to = dark_from + 1000000;
  link.blackouts.push_back({dark_from, dark_to});
  pair.set_link(link);
  // A plays 10 frames into the blackout and stalls on them; B stalls too.
  for (Frame f = 0; f < 10; ++f) {
    ASSERT_EQ(a.send_input(f, x), Result::ok);
    for (int i = 0; i < 16; ++i) pair.step(1000);
  }
  a.set_urgent(true, true);
  b.set_urgent(true, true);
  pair.a().recorder->recording = true;
  while (pair.now < dark_to) pair.step(1000);
  pair.a().recorder->recording = false;
  uint64_t inputs_in_the_dark = 0;
  for (const auto& d : pair.a().recorder->sent) inputs_in_the_dark += d[3] == uint8_t(detail::MessageType::inputs);
  EXPECT_LE(inputs_in_the_dark, 1000000u / 50000 + 2) << "every 50 ms, not every frame time";
  EXPECT_GE(inputs_in_the_dark, 1000000u / 50000 - 6) << "still resent";
  EXPECT_LT(b.last_received_frame(), 9);
  // B's first word after the blackout reaches A; A's frames follow at A's next poll.
  const uint64_t heard_before = a.datagrams_received();
  while (a.datagrams_received() == heard_before && pair.now < dark_to + 500000) pair.step(1000);
  ASSERT_GT(a.datagrams_received(), heard_before);
  const uint64_t heard_at = pair.now;
  while (b.last_received_frame() < 9 && pair.now < heard_at + 100000) pair.step(1000);
  EXPECT_EQ(b.last_received_frame(), 9);
  EXPECT_LE(pair.now - heard_at, link.latency_us + 2000) << "resent at once, not at the next 50 ms";
}

// After a blackout each side tells the other how long it heard nothing (late-input detection:
// net/silence_log.h), on its inputs datagrams for 2 s, then no more; a gap shorter than 200 ms
// (a loss or two) is not told.
TEST(Endpoint, EachSideTellsItsSilenceAfterABlackoutFor2Seconds) {
  EndpointPair pair(default_config(60), default_config(61));
  LinkProfile link;
  link.latency_us = 20000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  auto& a = pair.a().endpoint;
  auto& b = pair.b().endpoint;
  const uint8_t x[2] = {1, 0};
  Frame next = 0;
  auto play = [&](uint64_t until) {
    while (pair.now < until) {
      (void)a.send_input(next, x);
      (void)b.send_input(next, x);
      ++next;
      for (int i = 0; i < 16 && pair.now < until; ++i) pair.step(1000);
    }
  };
  play(pair.now + 1000000);
  EXPECT_EQ(a.silences().heard_nothing().to_us, 0u) << "no silence yet";
  EXPECT_EQ(b.silences().told().arrived_at_us, 0u) << "nothing told";
  const uint64_t dark_from = pair.now, dark_to = dark_from + 500000;
  link.blackouts.push_back({dark_from, dark_to});
  pair.set_link(link);
  play(dark_to + 200000);
  for (auto* side : {&a, &b}) {
    const detail::Silence& heard = side->silences().heard_nothing();
    EXPECT_GE(heard.to_us - heard.from_us, 500000u);
    EXPECT_LE(heard.to_us - heard.from_us, 500000u + 60000u) << "the blackout and a resend at most";
  }
  // Each side's note is the other's silence, told from one way after it ended.
  for (auto [teller, hearer] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    const detail::Silence& heard = teller->silences().heard_nothing();
    const detail::PeerSilence& told = hearer->silences().told();
    ASSERT_NE(told.arrived_at_us, 0u);
    EXPECT_NEAR(double(told.gap_us), double(heard.to_us - heard.from_us), 1000.0);
    EXPECT_NEAR(double(told.arrived_at_us - link.latency_us - told.ago_us), double(heard.to_us), 1000.0);
  }
  // Told for 2 s after the silence ended, then no more.
  const uint64_t ended = a.silences().heard_nothing().to_us;
  play(ended + 1900000);
  EXPECT_GE(b.silences().told().arrived_at_us, ended + 1800000) << "still told";
  play(ended + 2600000);
  const uint64_t last_told = b.silences().told().arrived_at_us;
  EXPECT_LE(last_told, ended + detail::SilenceLog::kToldForUs + link.latency_us + 1000);
  play(pair.now + 1000000);
  EXPECT_EQ(b.silences().told().arrived_at_us, last_told) << "not told after 2 s";
  // Loss of a datagram or two (60 ms of silence at most) is no silence.
  link.blackouts.push_back({pair.now, pair.now + 60000});
  pair.set_link(link);
  const uint64_t before = a.silences().heard_nothing().to_us;
  play(pair.now + 500000);
  EXPECT_EQ(a.silences().heard_nothing().to_us, before);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// The poll_again tests' stream over `pair` (handshake done), recorded: `frames` ticks of
// 16,667 us; each side drains its inputs, changes its input about every `change_every` ticks,
// does the test's own work of the tick (`before_poll`), queues the input and makes the tick's
// second send pass: poll, or poll_again when `again`; `after_poll` looks at it after that.
void poll_again_stream(
    EndpointPair& pair, bool again, Frame frames, std::mt19937& rng, uint32_t change_every,
    const std::function<void(EndpointPair::Side&, Frame)>& before_poll,
    const std::function<void(EndpointPair::Side&)>& after_poll = nullptr) {
  for (auto* s : {&pair.a(), &pair.b()}) s->recorder->recording = true;
  uint8_t input[2] = {0, 0};
  for (Frame f = 0; f < frames; ++f) {
    pair.step(16667);
    for (auto* s : {&pair.a(), &pair.b()}) {
      Frame popped;
      const uint8_t* blob;
      while (s->endpoint.pop_input(&popped, &blob)) {
      }
      if (rng() % change_every == 0) input[0] = uint8_t(rng());
      if (before_poll) before_poll(*s, f);
      EXPECT_EQ(s->endpoint.send_input(f, input), Result::ok);
      if (again) (void)s->endpoint.poll_again(pair.now, *s->recorder, s->remote);
      else (void)s->endpoint.poll(pair.now, *s->recorder, s->remote);
      if (after_poll) after_poll(*s);
    }
  }
}

// What both sides sent while recording: A's datagrams, then B's.
std::vector<std::vector<uint8_t>> sent_by_both(EndpointPair& pair) {
  std::vector<std::vector<uint8_t>> sent = pair.a().recorder->sent;
  sent.insert(sent.end(), pair.b().recorder->sent.begin(), pair.b().recorder->sent.end());
  return sent;
}

// poll_again (the session's second send pass of a tick, after it queued its new input) sends
// exactly what a second poll() at that time would: the same datagrams, byte for byte, in the
// same order, under loss, jitter and reordering, with inputs that change now and then, the
// owner's urgency flipping between the passes and checksums queued between them. And the
// stream still arrives whole.
TEST(Endpoint, PollAgainSendsWhatASecondPollWould) {
  struct Outcome {
    std::vector<std::vector<uint8_t>> sent;
    Frame received = kNullFrame;
  };
  auto run = [](bool again) {
    EndpointPair pair(default_config(60), default_config(61), 7);
    LinkProfile link;
    link.latency_us = 30000;
    link.jitter_us = 8000;
    link.loss = 0.05;
    link.reorder = 0.05;
    pair.set_link(link);
    pair.start();
    EXPECT_TRUE(pair.run_handshake());
    std::mt19937 rng(3);
    poll_again_stream(pair, again, 600, rng, 5, [&](EndpointPair::Side& s, Frame f) {
      s.endpoint.set_urgent(rng() % 7 == 0, rng() % 11 == 0);
      if (f >= 10 && f % 25 == 0) {
        EXPECT_EQ(s.endpoint.send_checksum(f - 10, uint64_t(f)), Result::ok);
      }
    });
    for (int i = 0; i < 60; ++i) pair.step(16667);
    Outcome o;
    o.sent = sent_by_both(pair);
    o.received = pair.b().endpoint.last_received_frame();
    return o;
  };
  const Outcome twice = run(false), again = run(true);
  ASSERT_GT(twice.sent.size(), 600u);
  EXPECT_EQ(again.sent, twice.sent);
  EXPECT_EQ(again.received, 599);
  EXPECT_EQ(twice.received, 599);
}

// poll_again's inline answer (poll_polled_again) takes the kept quiet byte for "the peer did not
// speak again after a silence and no rider waited its patience out" (quiet_allowed(), which
// implies both); without it, it asks them one by one. Datagrams that arrive between the two send
// passes of a tick (the first after a blackout among them: the peer spoke again, so the byte is
// false) must leave poll_again sending what a second poll() at that time sends, byte for byte,
// and the stream arriving whole.
TEST(Endpoint, PollAgainAfterDatagramsBetweenThePassesSendsWhatASecondPollWould) {
  struct Outcome {
    std::vector<std::vector<uint8_t>> sent;
    Frame received = kNullFrame;
    size_t between = 0, spoke_again = 0;
  };
  auto run = [](bool again, uint32_t seed) {
    EndpointPair pair(default_config(62), default_config(63), seed);
    LinkProfile link;
    link.latency_us = 20000 + 7000 * (seed % 3);
    link.jitter_us = 5000;
    link.loss = 0.02 * (seed % 3);
    for (uint64_t at = 1000000; at < 9000000; at += 1700000) link.blackouts.push_back({at, at + 300000 + 50000 * (seed % 4)});
    pair.set_link(link);
    pair.start();
    EXPECT_TRUE(pair.run_handshake());
    for (auto* s : {&pair.a(), &pair.b()}) s->recorder->recording = true;
    std::mt19937 rng(seed);
    uint8_t input[2] = {0, 0};
    Outcome o;
    std::vector<std::vector<uint8_t>> held;
    for (Frame f = 0; f < 600; ++f) {
      pair.now += 16667;
      for (auto* s : {&pair.a(), &pair.b()}) s->sim->set_time(pair.now);
      for (auto* s : {&pair.a(), &pair.b()}) {
        // What arrived this tick: some before the first pass, the rest between the two.
        held.clear();
        uint8_t buffer[2048];
        PeerAddress from;
        size_t length = 0;
        while (s->sim->receive(&from, buffer, sizeof buffer, &length))
          if (from == s->remote) held.emplace_back(buffer, buffer + length);
        const size_t before = rng() % 2 == 0 ? held.size() : rng() % (held.size() + 1);
        for (size_t k = 0; k < before; ++k) s->endpoint.on_datagram(held[k].data(), held[k].size(), pair.now);
        (void)s->endpoint.poll(pair.now, *s->recorder, s->remote);
        for (size_t k = before; k < held.size(); ++k) s->endpoint.on_datagram(held[k].data(), held[k].size(), pair.now);
        o.between += held.size() - before;
        o.spoke_again += held.size() > before && s->endpoint.running() && !s->endpoint.quiet_allowed();
        Frame popped;
        const uint8_t* blob;
        while (s->endpoint.pop_input(&popped, &blob)) {
        }
        if (rng() % 5 == 0) input[0] = uint8_t(rng());
        if (f >= 10 && f % 37 == 0) {
          EXPECT_EQ(s->endpoint.send_checksum(f - 10, uint64_t(f)), Result::ok);
        }
        EXPECT_EQ(s->endpoint.send_input(f, input), Result::ok);
        if (again) (void)s->endpoint.poll_again(pair.now, *s->recorder, s->remote);
        else (void)s->endpoint.poll(pair.now, *s->recorder, s->remote);
      }
    }
    for (int i = 0; i < 90; ++i) pair.step(16667);
    o.sent = sent_by_both(pair);
    o.received = pair.b().endpoint.last_received_frame();
    return o;
  };
  size_t between = 0, spoke_again = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const Outcome twice = run(false, seed), again = run(true, seed);
    ASSERT_GT(twice.sent.size(), 600u) << "seed " << seed;
    EXPECT_EQ(again.sent, twice.sent) << "seed " << seed;
    EXPECT_EQ(again.received, 599) << "seed " << seed;
    EXPECT_EQ(twice.received, 599) << "seed " << seed;
    between += again.between;
    spoke_again += again.spoke_again;
  }
  EXPECT_GT(between, 500u);
  EXPECT_GT(spoke_again, 10u) << "the second pass must see the byte false now and then";
}

// The session's two send passes ask the owner's urgency only where a decision reads it (poll
// and poll_polled_again with an urgency callable; the stall told before by set_stalled): they
// send exactly what the passes that set the urgency every time (set_urgent, then poll and
// poll_again) send, byte for byte, under loss, jitter, reordering and a blackout, with inputs
// that change now and then, the urgency and the stall flipping at random between the passes,
// checksums queued between them and ticks without a new frame. The callable is asked in
// fewer passes than not (the point of asking it lazily), and the stream arrives whole.
TEST(Endpoint, UrgencyAskedOnlyWhereReadSendsWhatSettingItEveryPassSends) {
  struct Outcome {
    std::vector<std::vector<uint8_t>> sent;
    Frame received = kNullFrame;
    size_t asked = 0, passes = 0;
  };
  auto run = [](bool lazy, uint32_t seed) {
    detail::EndpointConfig ca = default_config(64), cb = default_config(65);
    ca.loss_hold_frames = cb.loss_hold_frames = 3;
    EndpointPair pair(ca, cb, seed);
    LinkProfile link;
    link.latency_us = 20000 + 10000 * (seed % 4);
    link.jitter_us = 6000;
    link.loss = 0.04 * (seed % 3);
    link.reorder = 0.03;
    link.blackouts.push_back({2000000, 2000000 + 150000 * (seed % 3)});
    pair.set_link(link);
    pair.start();
    EXPECT_TRUE(pair.run_handshake());
    for (auto* s : {&pair.a(), &pair.b()}) s->recorder->recording = true;
    std::mt19937 rng(seed);
    uint8_t input[2] = {0, 0};
    Frame next[2] = {0, 0};
    Outcome o;
    auto pass = [&](decltype(&pair.a()) s, bool again) {
      const bool urgent = rng() % 6 == 0, stalled = rng() % 9 == 0;
      ++o.passes;
      if (!lazy) {
        s->endpoint.set_urgent(urgent, stalled);
        if (again) (void)s->endpoint.poll_again(pair.now, *s->recorder, s->remote);
        else (void)s->endpoint.poll(pair.now, *s->recorder, s->remote);
        return;
      }
      s->endpoint.set_stalled(stalled);
      auto urgency = [&] {
        ++o.asked;
        return urgent;
      };
      if (again && s->endpoint.polled_at(pair.now))
        (void)s->endpoint.poll_polled_again(pair.now, *s->recorder, s->remote, urgency);
      else
        (void)s->endpoint.poll(pair.now, *s->recorder, s->remote, urgency);
    };
    // As EndpointPair::step, without its poll: every poll here is one of the two passes.
    auto deliver = [&](decltype(&pair.a()) s) {
      uint8_t buffer[2048];
      PeerAddress from;
      size_t length = 0;
      while (s->sim->receive(&from, buffer, sizeof buffer, &length))
        if (from == s->remote) s->endpoint.on_datagram(buffer, length, pair.now);
    };
    for (int t = 0; t < 700; ++t) {
      pair.now += 16667;
      for (auto* s : {&pair.a(), &pair.b()}) s->sim->set_time(pair.now);
      for (int k = 0; k < 2; ++k) {
        auto* s = k == 0 ? &pair.a() : &pair.b();
        deliver(s);
        Frame popped;
        const uint8_t* blob;
        while (s->endpoint.pop_input(&popped, &blob)) {
        }
        pass(s, false);
        if (rng() % 5 == 0) input[0] = uint8_t(rng());
        const bool frame = rng() % 8 != 0;  // now and then a tick without a new frame
        if (frame) {
          EXPECT_EQ(s->endpoint.send_input(next[k]++, input), Result::ok);
        }
        if (rng() % 40 == 0 && next[k] > 12) {
          EXPECT_EQ(s->endpoint.send_checksum(next[k] - 10, uint64_t(t)), Result::ok);
        }
        pass(s, true);
      }
    }
    for (int i = 0; i < 60; ++i) pair.step(16667);
    o.sent = pair.a().recorder->sent;
    o.sent.insert(o.sent.end(), pair.b().recorder->sent.begin(), pair.b().recorder->sent.end());
    o.received = pair.b().endpoint.last_received_frame();
    return o;
  };
  for (uint32_t seed : {21u, 22u, 23u, 24u, 25u, 26u}) {
    const Outcome every = run(false, seed), lazy = run(true, seed);
    ASSERT_GT(every.sent.size(), 500u) << "seed " << seed;
    EXPECT_EQ(lazy.sent, every.sent) << "seed " << seed;
    EXPECT_EQ(lazy.received, every.received) << "seed " << seed;
    EXPECT_GT(lazy.received, 550) << "seed " << seed;
    EXPECT_GT(lazy.asked, 0u) << "seed " << seed;
    EXPECT_LT(lazy.asked, lazy.passes / 2) << "seed " << seed;
  }
}

// poll_again leaves loss detection to the poll at the same time (it does not ask again), and
// decides the usual call (one frame queued since) inline: with the owner's loss rule on
// (loss_hold_frames), a second send pass by poll_again must still see every loss when a second
// poll would, tick by tick (loss_recent, which makes the session's confirmations urgent), and
// send the same datagrams, under loss bursts long enough to leave frames unacknowledged past a
// round trip.
TEST(Endpoint, PollAgainSeesLossWhenASecondPollWould) {
  struct Outcome {
    std::vector<std::vector<uint8_t>> sent;
    std::vector<bool> loss_recent;
  };
  auto run = [](bool again) {
    detail::EndpointConfig ca = default_config(62), cb = default_config(63);
    ca.loss_hold_frames = cb.loss_hold_frames = 4;
    EndpointPair pair(ca, cb, 11);
    LinkProfile link;
    link.latency_us = 40000;
    link.jitter_us = 5000;
    link.loss = 0.15;
    link.blackouts.push_back({3000000, 3400000});
    pair.set_link(link);
    pair.start();
    EXPECT_TRUE(pair.run_handshake());
    std::mt19937 rng(5);
    Outcome o;
    poll_again_stream(pair, again, 400, rng, 6, nullptr, [&](EndpointPair::Side& s) {
      o.loss_recent.push_back(s.endpoint.loss_recent(pair.now));
    });
    o.sent = sent_by_both(pair);
    return o;
  };
  const Outcome twice = run(false), again = run(true);
  const auto seen = std::count(twice.loss_recent.begin(), twice.loss_recent.end(), true);
  EXPECT_GT(seen, 20);  // the losses are seen, and not in every tick
  EXPECT_LT(size_t(seen), twice.loss_recent.size() / 2);
  EXPECT_EQ(again.loss_recent, twice.loss_recent);
  EXPECT_EQ(again.sent, twice.sent);
}

// polled_at (the session's "polled again" path: poll_polled_again instead of poll) holds only
// for a mark taken while running, by the poll at that time of this connection: an endpoint
// stopped (its own send_disconnect, the peer's notice) or re-initialised between the two passes
// of a tick is not polled again, and poll_again then does what poll does. The case that went
// wrong: re-initialised and synchronised anew at the time of the last pass, the mark of a poll
// while still synchronising said "polled", and poll_again skipped the first report poll sends.
TEST(Endpoint, StoppedOrReinitialisedBetweenPassesIsNotPolledAgain) {
  using Side = EndpointPair::Side;
  // As EndpointPair::step without moving the clock (no latency: datagrams arrive at once).
  auto deliver = [](EndpointPair& pair, Side& s) {
    s.sim->set_time(pair.now);
    uint8_t buffer[2048];
    PeerAddress from;
    size_t length = 0;
    while (s.sim->receive(&from, buffer, sizeof buffer, &length))
      if (from == s.remote) s.endpoint.on_datagram(buffer, length, pair.now);
  };
  auto running_pair = [](EndpointPair& pair) {
    pair.start();
    ASSERT_TRUE(pair.run_handshake());
    for (int i = 0; i < 10; ++i) pair.step(kFrameUs);
  };
  {  // our own send_disconnect: poll_again sends the notices, as poll would
    EndpointPair pair(default_config(80), default_config(81));
    running_pair(pair);
    Side& a = pair.a();
    pair.step(kFrameUs);
    ASSERT_TRUE(a.endpoint.polled_at(pair.now));
    a.endpoint.send_disconnect();
    EXPECT_FALSE(a.endpoint.polled_at(pair.now));
    a.recorder->recording = true;
    (void)a.endpoint.poll_again(pair.now, *a.recorder, a.remote);
    EXPECT_EQ(a.recorder->sent.size(), 3u);  // kDisconnectNotices copies
    // and the peer hears it at once: disconnected by its notice, between its two passes
    Side& b = pair.b();
    (void)b.endpoint.poll(pair.now, *b.recorder, b.remote);
    ASSERT_TRUE(b.endpoint.polled_at(pair.now));
    deliver(pair, b);
    EXPECT_EQ(b.endpoint.state(), EndpointState::disconnected);
    EXPECT_FALSE(b.endpoint.polled_at(pair.now));
  }
  {  // both re-initialised and synchronised anew without the clock moving
    EndpointPair pair(default_config(82), default_config(83));
    running_pair(pair);
    pair.step(kFrameUs);
    ASSERT_TRUE(pair.a().endpoint.polled_at(pair.now));
    ASSERT_EQ(pair.a().endpoint.init(default_config(84)), Result::ok);
    ASSERT_EQ(pair.b().endpoint.init(default_config(85)), Result::ok);
    EXPECT_FALSE(pair.a().endpoint.polled_at(pair.now));
    drain_events(pair.a().endpoint);
    drain_events(pair.b().endpoint);
    pair.start();
    // Poll both at the same time until one becomes running on a datagram, after its poll.
    Side* fresh = nullptr;
    for (int round = 0; round < 50 && fresh == nullptr; ++round) {
      for (Side* s : {&pair.a(), &pair.b()}) {
        const bool was = s->endpoint.running();
        deliver(pair, *s);
        if (!was && s->endpoint.running()) {
          fresh = s;
          break;
        }
        (void)s->endpoint.poll(pair.now, *s->recorder, s->remote);
      }
    }
    ASSERT_NE(fresh, nullptr);
    EXPECT_FALSE(fresh->endpoint.polled_at(pair.now));
    // The first poll while running sends (the first quality report falls due at once), and
    // poll_again, the session's second pass, is that poll.
    fresh->recorder->recording = true;
    (void)fresh->endpoint.poll_again(pair.now, *fresh->recorder, fresh->remote);
    EXPECT_GE(fresh->recorder->sent.size(), 1u);
    EXPECT_TRUE(fresh->endpoint.polled_at(pair.now));
    // And the new connection carries a stream both ways.
    for (Frame f = 0; f < 30; ++f) {
      const uint8_t blob[2] = {uint8_t(f), 1};
      EXPECT_EQ(pair.a().endpoint.send_input(f, blob), Result::ok);
      EXPECT_EQ(pair.b().endpoint.send_input(f, blob), Result::ok);
      pair.step(kFrameUs);
    }
    for (int i = 0; i < 10; ++i) pair.step(kFrameUs);
    EXPECT_EQ(pair.a().endpoint.last_received_frame(), 29);
    EXPECT_EQ(pair.b().endpoint.last_received_frame(), 29);
  }
}

// The session's two send passes a tick (poll, then our input and poll_again at the same time)
// find nothing due in most polls (quiet_at; poll_polled_again holding a frame back): every timer
// they skip past must still fire on its tick. Unchanged frames go in pairs (batch 2: every
// other tick, none held longer), a frame left alone goes 2.5 frame times after the last inputs
// datagram, the peer's acknowledgement waits at most 1.5 frame times, and once frames stop and
// are acknowledged a keep-alive goes every keepalive_interval_us (on the first tick at or past
// it), nothing in between.
TEST(Endpoint, TimersFireOnTimeWhileMostPollsFindNothingDue) {
  constexpr uint64_t kTick = 16667;
  EndpointPair pair(default_config(70), default_config(71));
  LinkProfile link;
  link.latency_us = 20000;
  pair.set_link(link);
  pair.start();
  ASSERT_TRUE(pair.run_handshake());
  struct Sent {
    uint64_t at;
    detail::MessageType type;
  };
  std::vector<Sent> log[2];
  size_t seen[2] = {0, 0};
  decltype(&pair.a()) sides[2] = {&pair.a(), &pair.b()};
  for (int k = 0; k < 2; ++k) {
    sides[k]->recorder->recording = true;
    sides[k]->recorder->sent.clear();
  }
  auto note = [&] {
    for (int k = 0; k < 2; ++k)
      for (; seen[k] < sides[k]->recorder->sent.size(); ++seen[k])
        log[k].push_back({pair.now, detail::MessageType(sides[k]->recorder->sent[seen[k]][3])});
  };
  const uint8_t input[2] = {1, 2};
  const uint64_t start = pair.now;
  Frame f = 0;
  for (int t = 0; t < 122; ++t) {  // frame 0 alone, 60 pairs, and a last one with no second
    pair.step(kTick);
    note();
    Frame popped;
    const uint8_t* blob;
    while (pair.b().endpoint.pop_input(&popped, &blob)) {
    }
    ASSERT_EQ(pair.a().endpoint.send_input(f++, input), Result::ok);
    (void)pair.a().endpoint.poll_again(pair.now, *pair.a().recorder, pair.a().remote);
    note();
  }
  const uint64_t frames_end = pair.now;
  for (int t = 0; t < 90; ++t) {  // 1.5 s without frames
    pair.step(kTick);
    note();
  }
  EXPECT_EQ(pair.b().endpoint.last_received_frame(), 121);
  // A's inputs datagrams: the first frame (changed against the zeros before it) at once, then
  // one every other tick, then the lone last frame 2.5 frame times (the third tick) after the
  // one before it.
  std::vector<uint64_t> inputs, others;
  for (const Sent& s : log[0]) (s.type == detail::MessageType::inputs ? inputs : others).push_back(s.at);
  ASSERT_GE(inputs.size(), 62u);
  EXPECT_EQ(inputs[0], start + kTick);
  for (size_t i = 1; i + 1 < inputs.size() && inputs[i] <= frames_end; ++i)
    EXPECT_EQ(inputs[i] - inputs[i - 1], 2 * kTick) << "inputs datagram " << i;
  const uint64_t last_pair = inputs[60];
  EXPECT_EQ(inputs[61], last_pair + 3 * kTick) << "the lone frame goes on the first tick at or past 2.5 frame times";
  // Then only keep-alives (and the quality reports, riding or alone), on time: a datagram at
  // least every keepalive_interval_us plus a tick, a keep-alive never before the interval.
  const uint64_t keepalive = default_config(70).keepalive_interval_us;
  uint64_t previous = inputs.back();
  int keepalives = 0;
  for (const Sent& s : log[0]) {
    if (s.at <= inputs.back()) continue;
    EXPECT_LT(s.at - previous, keepalive + kTick) << "nothing sent for longer than a keep-alive interval";
    if (s.type == detail::MessageType::keep_alive) {
      EXPECT_GE(s.at - previous, keepalive) << "a keep-alive before the interval";
      ++keepalives;
    }
    previous = s.at;
  }
  EXPECT_GE(keepalives, 4);
  EXPECT_LT(pair.now - previous, keepalive + kTick);
  // B sends no inputs: each of its acknowledgements goes alone, on the first tick at least 1.5
  // frame times after the inputs datagram it answers arrived (20 ms one way: on the second tick
  // after it went), so within four ticks of each of A's inputs datagrams.
  size_t acks = 0;
  for (const uint64_t sent : inputs) {
    bool answered = false;
    for (const Sent& s : log[1])
      answered |= s.type == detail::MessageType::input_ack && s.at > sent && s.at <= sent + 4 * kTick;
    EXPECT_TRUE(answered) << "the inputs datagram sent at " << sent - start << " us";
    acks += answered;
  }
  EXPECT_EQ(acks, inputs.size());
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// send_input queues the usual frame (an input of 4 to 8 bytes, the next in order, room in the
// queue: the kept usual frame) inline and leaves every other case to send_input_general: both
// must send the same datagrams, byte for byte, and answer alike, whatever the input size, through
// changes and repeats, the ring's wrap (its first slot), its growth behind a blackout, a full
// queue, and a restart of the stream (a state transfer) at the frame that was next (its reference
// is zeros then), at a later frame whose successor is the ring's sixth slot (fresh from the
// restart, the queue's room then reaches past the ring's end, which must stop the inline path),
// or just before the largest frame (which neither queues). Rings of 32 and of 7 frames (growing
// to their limit).
TEST(Endpoint, InlineSendInputSendsWhatTheGeneralPathSends) {
  for (const size_t size : {1u, 3u, 4u, 5u, 8u, 9u, 16u}) {
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<std::vector<uint8_t>> sent[2];
      std::vector<Result> results[2];
      Frame received[2] = {0, 0};
      for (int path = 0; path < 2; ++path) {
        detail::EndpointConfig ca = default_config(50), cb = default_config(51);
        ca.send_blob_size = cb.receive_blob_size = uint16_t(size);
        ca.send_queue_frames = variant == 1 ? 7 : 32;  // grows to its limit
        ca.max_send_queue_frames = variant == 1 ? 112 : 128;
        EndpointPair pair(ca, cb);
        LinkProfile link;
        link.latency_us = 20000;
        link.loss = 0.1;
        link.blackouts.push_back({2000000, 4500000});  // the queue grows to its limit, then fails
        pair.set_link(link);
        pair.start();
        ASSERT_TRUE(pair.run_handshake());
        auto& a = pair.a().endpoint;
        auto& b = pair.b().endpoint;
        pair.a().recorder->recording = true;
        std::mt19937 rng(7);
        std::vector<uint8_t> blob(size, 0);
        Frame next = 0;
        for (int t = 0; t < 500; ++t) {
          if (t == (variant == 2 ? 300 : 420)) {
            // A state transfer: at the frame that was next, at a frame whose successor is slot 5
            // of the ring as it is (128 frames), or just before the largest frame.
            const Frame restart = variant == 0   ? next
                                  : variant == 2 ? next - next % 128 + 128 + 4
                                                 : std::numeric_limits<Frame>::max() - 60;
            a.restart_outgoing_at(restart);
            b.pause_receive();
            b.restart_incoming_at(restart);
            next = restart;
          }
          if (rng() % 4 == 0) blob[rng() % size] = uint8_t(rng());  // else unchanged
          const Result r = path == 0 ? a.send_input(next, blob.data()) : a.send_input_general(next, blob.data());
          results[path].push_back(r);
          if (r == Result::ok) ++next;
          a.set_local_frame(next, 0);
          for (int ms = 0; ms < 16; ++ms) pair.step(1000);
          Frame f;
          const uint8_t* got;
          while (b.pop_input(&f, &got)) ++received[path];
        }
        if (next < std::numeric_limits<Frame>::max()) {  // (at the largest frame there is no next one)
          EXPECT_EQ(a.send_input(next + 1, blob.data()), Result::invalid_argument);  // a gap
        }
        EXPECT_EQ(a.send_input(next, nullptr), Result::invalid_argument);
        sent[path] = pair.a().recorder->sent;
      }
      EXPECT_EQ(results[0], results[1]) << size;
      EXPECT_NE(std::count(results[0].begin(), results[0].end(), Result::input_out_of_window), 0) << size;
      EXPECT_EQ(std::count(results[0].begin(), results[0].end(), Result::invalid_argument), variant == 1 ? 20 : 0)
          << size;  // the largest frame, never queued
      EXPECT_GT(std::count(results[0].begin(), results[0].end(), Result::ok), 300) << size;
      EXPECT_GT(received[0], 300) << size;
      EXPECT_EQ(received[0], received[1]) << size;
      ASSERT_EQ(sent[0].size(), sent[1].size()) << size;
      for (size_t i = 0; i < sent[0].size(); ++i) ASSERT_EQ(sent[0][i], sent[1][i]) << size << " " << i;
    }
  }
}

// An inputs datagram with one usual rider (a quality report or a reply waiting alone, no
// silence note) takes it through usual_rider_waits and take_usual_rider
// instead of gather_riders: the same riders taken the same way. Two endpoints polled and polled
// again as the session does, with quality reports every 30 ms (so replies too), checksums queued
// now and then, a blackout (silence notes after it), a disconnected player for a while and loss,
// for inputs of 1, 4 and 8 bytes: both sides send byte for byte what they send when every riding
// datagram takes gather_riders (set_general_riders_for_tests), and the usual rider rode often.
TEST(Endpoint, UsualRiderIsWhatGatherRidersTakes) {
  for (const size_t size : {1u, 4u, 8u}) {
    std::vector<std::vector<uint8_t>> sent[2][2];
    size_t usual_riders = 0;
    for (int path = 0; path < 2; ++path) {
      detail::EndpointConfig ca = default_config(70), cb = default_config(71);
      ca.send_blob_size = cb.receive_blob_size = cb.send_blob_size = ca.receive_blob_size = uint16_t(size);
      ca.shape.input_size = cb.shape.input_size = uint16_t(size);
      ca.quality_interval_us = cb.quality_interval_us = 30000;
      EndpointPair pair(ca, cb);
      LinkProfile link;
      link.latency_us = 15000;
      link.loss = 0.05;
      link.blackouts.push_back({1500000, 2100000});
      pair.set_link(link);
      pair.start();
      ASSERT_TRUE(pair.run_handshake());
      auto& a = pair.a().endpoint;
      auto& b = pair.b().endpoint;
      a.set_general_riders_for_tests(path == 1);
      b.set_general_riders_for_tests(path == 1);
      pair.a().recorder->recording = pair.b().recorder->recording = true;
      std::mt19937 rng(9);
      std::vector<uint8_t> blob(size, 0);
      Frame next[2] = {0, 0};
      detail::ConnectStatus status[2] = {};
      for (int t = 0; t < 400; ++t) {
        if (t == 250) status[1] = detail::ConnectStatus{true, 240};
        if (t == 300) status[1] = detail::ConnectStatus{};
        int k = 0;
        for (Endpoint* e : {&a, &b}) {
          if (rng() % 4 == 0) blob[rng() % size] = uint8_t(rng());
          e->set_local_connect_status(status, 2);
          if (e->send_input(next[k], blob.data()) == Result::ok) ++next[k];
          e->set_local_frame(next[k], int32_t(rng() % 5) - 2);
          if (rng() % 16 == 0) (void)e->send_checksum(next[k] - 1, uint64_t(rng()));
          ++k;
        }
        // As advance_frame: a second poll at the time of the first, after the new frame.
        (void)a.poll_again(pair.now, *pair.a().recorder, pair.a().remote);
        (void)b.poll_again(pair.now, *pair.b().recorder, pair.b().remote);
        for (int ms = 0; ms < 16; ++ms) pair.step(1000);
        Frame f;
        const uint8_t* got;
        while (a.pop_input(&f, &got)) {}
        while (b.pop_input(&f, &got)) {}
      }
      sent[path][0] = pair.a().recorder->sent;
      sent[path][1] = pair.b().recorder->sent;
      if (path == 1) continue;
      // The usual riders among a's datagrams.
      const uint64_t key = detail::connection_checksum_key(a.local_nonce(), b.local_nonce());
      uint32_t base = 0;
      for (const auto& d : sent[0][0]) {
        detail::Message m;
        detail::Integrity integrity;
        integrity.connection_key = key;
        integrity.sequence_base = base;
        ASSERT_EQ(detail::decode_message(d.data(), d.size(), &m, integrity), detail::DecodeError::ok);
        base = std::max(base, detail::widen_sequence(uint16_t(m.header.sequence), base));
        if (m.header.type != detail::MessageType::inputs) continue;
        const detail::Riders& r = m.inputs.riders;
        usual_riders += r.has_report != r.has_reply && r.checksum_count == 0 && !r.has_silence;
      }
    }
    EXPECT_GT(usual_riders, 50u) << size;
    for (int side = 0; side < 2; ++side) {
      ASSERT_EQ(sent[0][side].size(), sent[1][side].size()) << size << " side " << side;
      for (size_t i = 0; i < sent[0][side].size(); ++i)
        ASSERT_EQ(sent[0][side][i], sent[1][side][i]) << size << " side " << side << " " << i;
    }
  }
}

// Endpoint::on_accepted asks whether the peer was silent (peer_silent) and whether a silence ends
// (SilenceLog::on_received) only for a datagram arriving quiet_gap_us() or later after the one
// before: sooner, both must say no. Random and edge configurations (resend intervals from 0 up,
// frame rates 1 to 1000), jitters and gaps around each threshold: whenever the gap is shorter
// than quiet_gap_us(), neither test would have fired.
TEST(Endpoint, ADatagramSoonerThanTheQuietGapEndsNoSilence) {
  std::mt19937_64 rng(14);
  const uint64_t resends[] = {0, 1, 1000, 16667, 50000, 150000, 199999, 200000, 1000000, uint64_t(1) << 40};
  const uint32_t rates[] = {1, 10, 30, 60, 120, 1000};
  uint64_t sooner = 0;
  for (int round = 0; round < 200000; ++round) {
    const uint64_t resend = round % 3 == 0 ? rng() % 400000 : resends[rng() % std::size(resends)];
    const uint64_t frame_us = 1000000u / rates[rng() % std::size(rates)];
    const uint64_t jitter = rng() % 4 == 0 ? 0 : rng() % 100000;
    const uint64_t previous = 1 + rng() % 1000000000;
    const uint64_t gap_limit = Endpoint::quiet_gap_us(resend, frame_us);
    // Gaps around the limit, both thresholds and anywhere below.
    const uint64_t around[] = {gap_limit, resend + 4 * frame_us + 2 * jitter, detail::SilenceLog::kMinGapUs};
    const uint64_t base = around[rng() % 3];
    const uint64_t gap = rng() % 2 == 0 ? rng() % (gap_limit + 1) : base + (rng() % 5) - std::min<uint64_t>(base, 2);
    const uint64_t now = previous + gap;
    if (now >= previous + gap_limit) continue;  // on_accepted asks both tests as ever
    ++sooner;
    // peer_silent's test, and SilenceLog's own.
    EXPECT_FALSE(now > previous + resend + 4 * frame_us + 2 * jitter) << resend << " " << frame_us << " " << gap;
    detail::SilenceLog log;
    log.on_received(previous, now);
    EXPECT_EQ(log.heard_nothing().to_us, 0u) << resend << " " << frame_us << " " << gap;
  }
  EXPECT_GT(sooner, 50000u);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

// send_inputs builds the usual inputs datagram from the prepared run in one pass, riders or
// not, and leaves every other (a disconnected player's status, a run that does not fit, a
// repeat) to send_inputs_general and InputsWriter: every inputs datagram the endpoint sends must
// be, byte for byte, the one InputsWriter builds frame by frame from what it says it carries
// (start, acknowledgement, statuses, riders) and the inputs queued. Through loss, a blackout
// (silence notes, a long run), checksum reports, quality reports and replies, a disconnected
// player for a while, and input sizes from 1 to 16 bytes. Each size twice: polled only (poll's
// sends, send_inputs), and as the session's advance_frame polls, each new frame followed by a
// second poll at the same time (poll_polled_again: send_pending, which builds the usual datagram
// inline), after send_input's inline queuing of 4 to 8 byte inputs.
TEST(Endpoint, EveryInputsDatagramIsTheOneInputsWriterBuildsFrameByFrame) {
  const size_t sizes[] = {1, 3, 4, 6, 8, 16};
  for (size_t run = 0; run < 2 * std::size(sizes); ++run) {
    const bool again = run >= std::size(sizes);
    const size_t size = sizes[run % std::size(sizes)];
    detail::EndpointConfig ca = default_config(60), cb = default_config(61);
    ca.send_blob_size = cb.receive_blob_size = uint16_t(size);
    ca.shape.num_players = cb.shape.num_players = 3;
    EndpointPair pair(ca, cb);
    LinkProfile link;
    link.latency_us = 30000;
    link.jitter_us = 8000;
    link.loss = 0.1;
    link.blackouts.push_back({3000000, 3600000});  // a silence both ways: notes, a long run
    pair.set_link(link);
    pair.start();
    ASSERT_TRUE(pair.run_handshake());
    auto& a = pair.a().endpoint;
    auto& b = pair.b().endpoint;
    pair.a().recorder->sent.clear();
    pair.a().recorder->recording = true;
    std::mt19937 rng{uint32_t(size)};
    std::vector<std::vector<uint8_t>> blobs;
    std::vector<uint8_t> blob(size, 0);
    Frame received = 0;
    uint64_t polled_again_sent = 0;
    for (Frame f = 0; f < 600; ++f) {
      if (rng() % 3 == 0) blob[rng() % size] = uint8_t(rng());
      blobs.push_back(blob);
      ASSERT_EQ(a.send_input(f, blob.data()), Result::ok);
      a.set_local_frame(f, 0);
      if (f % 40 == 7) {
        ASSERT_EQ(a.send_checksum(f, rng()), Result::ok);
      }
      // Player 2 disconnected (its last frame carried) for a while, then connected again.
      if (f == 200 || f == 300) {
        detail::ConnectStatus status[3];
        status[2].disconnected = f == 200;
        status[2].last_frame = f == 200 ? 150 : kNullFrame;
        a.set_local_connect_status(status, 3);
      }
      // advance_frame's pass: the new frame seen to at the time of the last poll.
      if (again && a.polled_at(pair.now)) {
        const uint64_t before = a.stats().datagrams_sent;
        (void)a.poll_polled_again(pair.now, *pair.a().recorder, pair.a().remote);
        polled_again_sent += a.stats().datagrams_sent - before;
      }
      for (int ms = 0; ms < 17; ++ms) pair.step(1000);
      Frame got;
      const uint8_t* in;
      while (b.pop_input(&got, &in)) {
        ASSERT_EQ(got, received);
        ASSERT_EQ(0, std::memcmp(in, blobs[size_t(got)].data(), size)) << size << " frame " << got;
        ++received;
      }
    }
    EXPECT_GT(received, 500) << size;  // the peer plays on
    const uint64_t key = detail::connection_checksum_key(a.local_nonce(), b.local_nonce());
    const std::vector<uint8_t> zeros(size, 0);
    uint32_t base = 0;
    size_t inputs = 0, with_riders = 0, with_status = 0, long_runs = 0;
    for (const auto& d : pair.a().recorder->sent) {
      detail::Message m;
      detail::Integrity integrity;
      integrity.connection_key = key;
      integrity.sequence_base = base;
      ASSERT_EQ(detail::decode_message(d.data(), d.size(), &m, integrity), detail::DecodeError::ok);
      const uint32_t sequence = detail::widen_sequence(uint16_t(m.header.sequence), base);
      base = std::max(base, sequence);
      if (m.header.type != detail::MessageType::inputs) continue;
      ++inputs;
      const detail::InputsBody& body = m.inputs;
      with_riders += !body.riders.empty();
      with_status += body.disconnected != 0;
      long_runs += body.count > 20;
      detail::Header h;
      h.type = detail::MessageType::inputs;
      h.sequence = sequence;
      const Frame start = body.start_frame;
      ASSERT_GE(start, 0);
      ASSERT_LE(size_t(start) + body.count, blobs.size());
      uint8_t out[detail::kMaxDatagramSize];
      detail::InputsWriter w(out, sizeof out, h, start, body.ack_frame, uint16_t(size), body.status,
                             body.disconnected != 0 ? uint8_t(3) : uint8_t(0),
                             start == 0 ? zeros.data() : blobs[size_t(start) - 1].data(),
                             body.riders.empty() ? nullptr : &body.riders);
      for (Frame f = start; f < start + body.count; ++f) ASSERT_TRUE(w.append(blobs[size_t(f)].data()));
      const size_t n = w.finish(detail::Seal::none);
      detail::seal_data_datagram(out, n, key, sequence);
      ASSERT_EQ(std::vector<uint8_t>(out, out + n), d) << size << " sequence " << sequence;
    }
    EXPECT_GT(inputs, 300u) << size;
    if (again) {
      EXPECT_GT(polled_again_sent, 100u) << size;  // the second poll sent its share
    }
    EXPECT_GT(with_riders, 10u) << size;
    EXPECT_GT(with_status, 10u) << size;
    EXPECT_GT(long_runs, 0u) << size;
  }
}

// send_input asks one kept byte (Endpoint::usual_queue) for its checks of the set-up and the
// state (initialized, not disconnected, inputs of 4 to 8 bytes) before it queues a frame inline:
// after every call (a fresh endpoint, init, the handshake, inputs, a notice, a failed init after
// a good one, init again), for inputs of 1 to 10 bytes, the byte is what those say now, and
// send_input answers as the general path does (wrong_state once disconnected or after a failed
// init, ok again after a good one).
TEST(Endpoint, UsualQueueByteIsTheEndpointsStateAfterEveryCall) {
  uint64_t usual = 0;
  for (uint16_t size = 1; size <= 10; ++size) {
    EndpointConfig ca = default_config(size * 2 + 201), cb = default_config(size * 2 + 202);
    ca.shape.input_size = cb.shape.input_size = size;
    ca.send_blob_size = ca.receive_blob_size = cb.send_blob_size = cb.receive_blob_size = size;
    auto agrees = [&](const Endpoint& e, const char* when) {
      EXPECT_EQ(e.usual_queue(), e.usual_queue_now()) << when << " size " << size;
      usual += e.usual_queue();
    };
    Endpoint fresh;
    agrees(fresh, "fresh");
    EndpointPair pair(ca, cb);
    for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) agrees(*e, "init");
    pair.start();
    for (Endpoint* e : {&pair.a().endpoint, &pair.b().endpoint}) agrees(*e, "start");
    ASSERT_TRUE(pair.run_handshake());
    std::vector<uint8_t> blob(size, 0);
    Endpoint& a = pair.a().endpoint;
    for (Frame f = 0; f < 40; ++f) {
      blob[0] = uint8_t(f / 3);
      EXPECT_EQ(a.send_input(f, blob.data()), Result::ok) << "size " << size;
      agrees(a, "input");
      pair.step(kFrameUs);
      agrees(a, "step");
    }
    EXPECT_EQ(a.usual_queue(), size >= 4 && size <= 8);
    Endpoint& b = pair.b().endpoint;
    b.send_disconnect();
    agrees(b, "notice");
    EXPECT_FALSE(b.usual_queue());
    EXPECT_EQ(b.send_input(0, blob.data()), Result::wrong_state);
    // A failed init after a good one, while running: not initialized, so nothing is queued.
    EndpointConfig bad = ca;
    bad.shape.num_players = 0;
    EXPECT_NE(a.init(bad), Result::ok);
    agrees(a, "failed init");
    EXPECT_FALSE(a.usual_queue());
    EXPECT_EQ(a.send_input(40, blob.data()), Result::wrong_state);
    ASSERT_EQ(a.init(ca), Result::ok);
    agrees(a, "init again");
    EXPECT_EQ(a.send_input(0, blob.data()), Result::ok);
    agrees(a, "input after init");
  }
  EXPECT_GT(usual, 0u);
}

// estimated_remote_frame (every frame, per peer, for time sync) keeps its terms that change only
// with the round trip (the one-way trip plus half a frame, the input patience): after every call
// of random runs (lossy, jittery links, so the round trip and its jitter move; quality reports;
// a re-init) the kept terms are what the round trip gives now, and the estimate at several times
// from now on is the one worked out from the round trip as it is.
TEST(Endpoint, KeptEstimateTermsEstimateAsTheRoundTripNow) {
  uint64_t checks = 0, estimates = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    std::mt19937_64 rng(seed * 104729 + 3);
    EndpointConfig ca = default_config(seed * 2 + 301), cb = default_config(seed * 2 + 302);
    ca.quality_interval_us = cb.quality_interval_us = 50000 + 50000 * (seed % 3);
    ca.input_batch_frames = cb.input_batch_frames = uint32_t(1 + seed % 3);
    EndpointPair pair(ca, cb, seed + 1);
    LinkProfile link;
    link.latency_us = 5000 + rng() % 40000;
    link.jitter_us = rng() % 15000;
    link.loss = double(rng() % 15) / 100;
    pair.set_link(link);
    EndpointPair::Side* sides[2] = {&pair.a(), &pair.b()};
    auto agrees = [&](const char* when) {
      for (EndpointPair::Side* s : sides) {
        const Endpoint& e = s->endpoint;
        EXPECT_TRUE(e.estimate_terms_current()) << when << " at " << pair.now << " seed " << seed;
        for (uint64_t later : {uint64_t{0}, uint64_t{1}, uint64_t{4999}, uint64_t{8333}, uint64_t{16666}, uint64_t{47000}}) {
          const Frame kept = e.estimated_remote_frame(pair.now + later);
          EXPECT_EQ(kept, e.estimated_remote_frame_now(pair.now + later)) << when << " at " << pair.now << " seed " << seed;
          estimates += kept != kNullFrame;
        }
        ++checks;
      }
    };
    agrees("init");
    pair.start();
    agrees("start");
    Frame next_frame[2] = {0, 0};
    uint64_t next_frame_at = pair.now;
    uint8_t blob[2] = {0, 0};
    const uint64_t end = 3000000 + rng() % 1000000;
    while (pair.now < end) {
      const bool frame_time = random_run_step(pair, rng, next_frame_at);
      for (int i = 0; i < 2; ++i) {
        EndpointPair::Side& s = *sides[i];
        Endpoint& e = s.endpoint;
        deliver_from_peer(s, pair.now, [&] { agrees("datagram"); });
        if (frame_time && e.running()) {
          if (rng() % 3 == 0) blob[0] = uint8_t(rng());
          (void)e.send_input(next_frame[i]++, blob);
          e.set_local_frame(next_frame[i] - 1, int32_t(rng() % 5) - 2);
          agrees("input");
        }
        (void)e.poll(pair.now, *s.recorder, s.remote);
        agrees("poll");
        Frame f;
        const uint8_t* p;
        while (e.pop_input(&f, &p)) {}
      }
    }
    for (EndpointPair::Side* s : sides) {
      ASSERT_EQ(s->endpoint.init(default_config(seed + 400)), Result::ok);
      agrees("re-init");
    }
  }
  EXPECT_GT(checks, 10000u);
  EXPECT_GT(estimates, 1000u);
}

}  // namespace
}  // namespace retcon::test

namespace retcon::test {
namespace {

using detail::Endpoint;
using detail::EndpointConfig;

// The receive ring's kept values against what they stand for, after every step of random runs
// (loss, duplicates, reordering, a blackout, every blob size and small windows, pops of random
// runs and of single frames, pauses and restarts of the incoming stream): pop_index() is the
// next frame's ring index, peek_inputs answers from it what the ring holds (received_input), and
// usual_frames_fit (take_usual_inputs' bounds in four compares) decides as the test-by-test
// usual_frames_fit_general for datagram frames around every edge of the state, with the windows the
// usual path takes (Endpoint::kUsualWindow or more). And the outcome:
// every frame popped is the one the peer sent, in order.
TEST(Endpoint, KeptPopIndexAndFrameBoundsAreTheGeneralOnesAfterEveryCall) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    std::mt19937 rng(uint32_t(seed * 7919));
    const uint16_t blob = uint16_t(1 + rng() % 8);
    const uint32_t windows[] = {2, 3, 5, 8, 13, 64, 128, 256};
    EndpointConfig ca = default_config(seed * 2), cb = default_config(seed * 2 + 1);
    for (EndpointConfig* c : {&ca, &cb}) {
      c->shape = {2, blob, 60};
      c->send_blob_size = c->receive_blob_size = blob;
      c->receive_window_frames = windows[rng() % 8];
    }
    EndpointPair pair(ca, cb, seed);
    LinkProfile link;
    link.latency_us = 5000 + rng() % 30000;
    link.jitter_us = rng() % 8000;
    link.loss = double(rng() % 20) / 100;
    link.duplicate = double(rng() % 15) / 100;
    link.reorder = double(rng() % 15) / 100;
    link.blackouts = {{1500000, 1500000 + rng() % 400000}};
    pair.set_link(link);
    pair.start();
    ASSERT_TRUE(pair.run_handshake()) << "seed " << seed;
    Endpoint& a = pair.a().endpoint;
    Endpoint& b = pair.b().endpoint;
    const uint32_t window = ca.receive_window_frames;
    Frame sent = 0, popped = a.next_pop() - 1;
    uint64_t next_frame_at = pair.now;
    bool paused = false, restarted = false;
    std::vector<uint8_t> inputs;  // every frame b sent, `blob` bytes each
    // A popped run holds the frames b sent (until a restart: the test's restart is not paired
    // with the sender's, so the frames after it are expanded against another reference).
    auto check = [&](Frame f, const uint8_t* p, uint32_t n) {
      for (uint32_t k = 0; !restarted && k < n; ++k)
        ASSERT_EQ(std::memcmp(p + size_t(k) * blob, &inputs[size_t(f + Frame(k)) * blob], blob), 0)
            << "seed " << seed << " frame " << f + Frame(k);
    };
    auto agrees = [&](const char* when) {
      ASSERT_EQ(a.pop_index(), uint32_t(a.next_pop()) % window) << when << " seed " << seed;
      Frame frame = kNullFrame;
      const uint8_t* ring = nullptr;
      const uint32_t count = a.peek_inputs(&frame, &ring);
      const Frame next = a.next_pop(), last = a.last_received_frame();
      if (next > last) {
        ASSERT_EQ(count, 0u) << when << " seed " << seed;
      } else {
        ASSERT_EQ(frame, next) << when;
        ASSERT_EQ(count, std::min<uint32_t>(uint32_t(last - next) + 1, window - uint32_t(next) % window)) << when;
        for (uint32_t k = 0; k < count; ++k)
          ASSERT_EQ(ring + size_t(k) * blob, a.received_input(next + Frame(k))) << when << " frame " << next + Frame(k);
      }
      // Datagram frames around every bound of the state: the acknowledgement, the first frame
      // and the last one.
      const Frame w = Frame(window);
      const Frame firsts[] = {0, 1, a.next_pop() - 1, a.next_pop(), last - w - 1, last - w, last - w + 1, last - w + 2,
                              last - 1, last, last + 1, last + 2, Frame(rng() % uint32_t(last + 3))};
      for (Frame first : firsts) {
        if (first < 0) continue;
        for (int k = 0; k < 6; ++k) {
          const Frame count_edges[] = {1, 2, 127, last - first + 1, last - first + 2, a.next_pop() + w - first,
                                       a.next_pop() + w - first - 1, a.next_pop() + w - first + 1};
          const Frame frames = count_edges[(k + rng()) % 8];
          if (frames < 1 || frames > 127) continue;
          const Frame ack = k == 0   ? kNullFrame - 1
                            : k == 1 ? a.last_sent_frame() + 1
                            : k == 2 ? a.last_sent_frame()
                                     : first - 64 + Frame(rng() % 128);
          const Frame end = first + frames - 1;
          if (window < Endpoint::kUsualWindow) continue;  // the usual path's windows only (usual_receive_now)
          ASSERT_EQ(a.usual_frames_fit(ack, first, end, last, w), a.usual_frames_fit_general(ack, first, end, last, w))
              << when << " seed " << seed << " ack " << ack << " first " << first << " end " << end << " last " << last
              << " next_pop " << a.next_pop();
        }
      }
    };
    agrees("running");
    while (pair.now < 4000000) {
      if (pair.now >= next_frame_at) {
        uint8_t mine[8];
        for (uint16_t i = 0; i < blob; ++i) mine[i] = uint8_t((sent / (1 + i)) * (7 + i) + (rng() % 4 == 0 ? i : 0));
        mine[0] = uint8_t(sent / 3);
        if (b.send_input(sent, mine) == Result::ok) {
          inputs.insert(inputs.end(), mine, mine + blob);
          ++sent;
        }
        next_frame_at += kFrameUs;
      }
      pair.step(1000);
      agrees("step");
      // Pops: none for a while (the window fills), a random part of the run, or frame by frame.
      const uint32_t how = rng() % 8;
      if (how == 0) {
        Frame f;
        const uint8_t* p;
        while (a.pop_input(&f, &p)) {
          ASSERT_EQ(f, popped + 1);
          check(f, p, 1);
          popped = f;
        }
      } else if (how < 5) {
        Frame f = kNullFrame;
        const uint8_t* p = nullptr;
        const uint32_t held = a.peek_inputs(&f, &p);
        if (held != 0) {
          const uint32_t n = 1 + uint32_t(rng() % held);
          ASSERT_EQ(f, popped + 1);
          check(f, p, n);
          a.pop_inputs(n);
          popped = f + Frame(n) - 1;
        }
      }
      agrees("popped");
      if (!paused && rng() % 700 == 0) {
        paused = true;
        a.pause_receive();
        agrees("paused");
      } else if (paused && rng() % 40 == 0) {
        paused = false;
        restarted = true;
        a.restart_incoming_at(a.last_received_frame() + 1);
        popped = a.next_pop() - 1;
        agrees("restarted");
      }
    }
    EXPECT_GT(a.last_received_frame(), Frame(50)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace retcon::test
