// The P2P session's drain of received inputs (session/input_drain.h): the one-call usual drain
// (Endpoint::held_run, RollbackDriver::take_remote_run) and the ring runs, against the general
// frame-by-frame drain.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "net/endpoint_pair.h"
#include "session/input_drain.h"
#include "support/driver_harness.h"

namespace retcon::test {
namespace {

using detail::Endpoint;
using detail::EndpointConfig;

constexpr uint64_t kFrameUs = 16667;

struct DrainCounts {
  uint32_t held_runs = 0;  // drains the one-call path took whole
  uint32_t ring_runs = 0;  // drains drain_ring_runs finished
  uint32_t by_frame = 0;   // drains that went frame by frame
};

// The session's drain of a one-player peer (P2PSessionImpl::drain_inputs and what it calls).
void session_drain(Endpoint& e, detail::RollbackDriver& d, PlayerIndex player, size_t size, DrainCounts& counts) {
  if (!detail::drain_due(e)) return;
  const Frame next = e.last_received_frame();
  if (detail::drain_held_run(e, d, player, next, size)) {
    ++counts.held_runs;
  } else if (detail::drain_ring_runs(e, d, player, next, size)) {
    ++counts.ring_runs;
  } else {
    ++counts.by_frame;
    detail::drain_frame_by_frame(e, d, &player, 1, size, next);
  }
}

// The general drain alone, as the session drained before runs: when the driver's newest input
// is older than the newest frame received.
void general_drain(Endpoint& e, detail::RollbackDriver& d, PlayerIndex player, size_t size) {
  const Frame next = e.last_received_frame();
  if (d.last_confirmed(player) >= next) return;
  detail::drain_frame_by_frame(e, d, &player, 1, size, next);
}

// Two copies of a match, each a driver (player 0 local, the others remote) fed by one endpoint
// pair per remote player, the pairs' links identical: one drained as the session drains (the
// one-call run first, then ring runs, then frame by frame), the other frame by frame only. After
// every drain and every frame they must agree on everything the drain decides: what each driver
// took (newest input per player, the first wrong frame, the confirmed frame, whether the window
// is full), what each endpoint still holds (its next frame and ring index), and the game's
// state. The runs: 2 and 3 players, pads (4 bytes, the run's own loop) and 2-byte inputs, receive
// rings of 8, 13 and 256 frames (runs that wrap), lossy and reordering links, the local machine
// pausing (remote frames far ahead: past the input queue's end), the prediction window lowered
// and raised, a player cut (agreed or not) and rejoining later, the local delay changed.
TEST(InputDrain, OneCallDrainTakesWhatFrameByFrameTakes) {
  DrainCounts total;
  uint32_t window_refusals = 0;
  uint64_t rollbacks = 0, stalls = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed * 7717);
    const uint32_t players = 2 + seed % 2;
    const uint32_t size = seed % 3 == 0 ? 2 : 4;
    const uint32_t ring = std::array<uint32_t, 3>{8, 13, 256}[seed % 3 == 1 ? 0 : (seed / 3) % 3];
    DriverHarness fast, ref;
    ASSERT_EQ(fast.init(players, 1, size, 8), Result::ok);
    ASSERT_EQ(ref.init(players, 1, size, 8), Result::ok);
    LinkProfile link;
    link.latency_us = 10000 + rng() % 40000;
    link.jitter_us = rng() % 20000;
    link.loss = double(rng() % 15) / 100;
    link.reorder = double(rng() % 10) / 100;
    std::vector<std::unique_ptr<EndpointPair>> pairs[2];  // [0]: the session's drain, [1]: general
    for (uint32_t k = 1; k < players; ++k)
      for (auto& side : pairs) {
        EndpointConfig ca = default_config(seed * 10 + k), cb = default_config(seed * 10 + k + 100);
        for (EndpointConfig* c : {&ca, &cb}) {
          c->shape = {2, uint16_t(size), 60};
          c->send_blob_size = c->receive_blob_size = uint16_t(size);
          c->receive_window_frames = ring;
        }
        side.push_back(std::make_unique<EndpointPair>(ca, cb, seed * 31 + k));
        side.back()->set_link(link);
        side.back()->start();
        ASSERT_TRUE(side.back()->run_handshake()) << "seed " << seed;
      }
    std::vector<Frame> sent(players, 0);
    uint32_t pause = 0, burst = 0;
    bool added = false;
    for (int tick = 0; tick < 700; ++tick) {
      // The remote machines' inputs, one frame each per tick (the same bytes to both copies).
      for (uint32_t k = 1; k < players; ++k) {
        uint8_t input[4];
        for (uint32_t i = 0; i < size; ++i) input[i] = uint8_t(sent[k] / (2 + i) + (rng() % 3 == 0 ? rng() : 0));
        const Result a = pairs[0][k - 1]->b().endpoint.send_input(sent[k], input);
        const Result b = pairs[1][k - 1]->b().endpoint.send_input(sent[k], input);
        ASSERT_EQ(a, b);
        if (a == Result::ok) ++sent[k];
      }
      for (int step = 0; step < 4; ++step)
        for (auto& side : pairs)
          for (auto& pair : side) pair->step(kFrameUs / 4);
      for (uint32_t k = 1; k < players; ++k) {
        const PlayerIndex p = PlayerIndex(k);
        const Frame want = fast.driver.last_confirmed(p) + 1;
        const bool full_before =
            want < pairs[0][k - 1]->a().endpoint.last_received_frame() && !fast.driver.can_accept(p, want);
        window_refusals += full_before ? 1 : 0;
        session_drain(pairs[0][k - 1]->a().endpoint, fast.driver, p, size, total);
        general_drain(pairs[1][k - 1]->a().endpoint, ref.driver, p, size);
        const Endpoint& ea = pairs[0][k - 1]->a().endpoint;
        const Endpoint& eb = pairs[1][k - 1]->a().endpoint;
        ASSERT_EQ(ea.last_received_frame(), eb.last_received_frame()) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(ea.next_pop(), eb.next_pop()) << "seed " << seed << " tick " << tick << " player " << k;
        ASSERT_EQ(ea.pop_index(), eb.pop_index()) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(fast.driver.last_confirmed(p), ref.driver.last_confirmed(p)) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(fast.driver.first_incorrect(), ref.driver.first_incorrect()) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(fast.driver.confirmed_frame(), ref.driver.confirmed_frame()) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(fast.driver.window_full(), ref.driver.window_full()) << "seed " << seed << " tick " << tick;
      }
      // What the session does between drains: window changes, cuts, rejoins, delay changes.
      const uint32_t event = uint32_t(rng() % 100);
      const int32_t delay = int32_t(rng() % 3);
      const PlayerIndex last_player = PlayerIndex(players - 1);
      auto apply = [&](detail::RollbackDriver& d) -> Result {
        if (event < 3) return d.set_prediction_window(int32_t(event * 3));
        if (event < 8) return d.set_prediction_window(8);
        if (event == 10 && tick > 100 && !d.is_disconnected(last_player)) {
          // At its newest input, or a little before (frames it sent after the cut are ignored);
          // agreed at once or later.
          const Frame after = std::max<Frame>(d.last_confirmed(last_player) - Frame(tick % 3), 0);
          return d.disconnect_player(last_player, after, tick % 2 == 0);
        }
        if (event == 11 && d.is_disconnected(last_player)) d.agree_disconnect(last_player);
        if (event == 12 && d.is_disconnected(last_player) && d.cut_agreed(last_player)) {
          Frame after = kNullFrame;
          (void)d.is_disconnected(last_player, &after);
          return d.rejoin_player(last_player, std::max(d.frame() + 2, after + 1));
        }
        if (event == 13) return d.set_input_delay(0, delay);
        return Result::ok;
      };
      ASSERT_EQ(apply(fast.driver), apply(ref.driver)) << "seed " << seed << " tick " << tick;
      if (event == 14 && pause == 0) pause = 5 + uint32_t(rng() % 60);  // the local machine stops a while
      if (event == 15 && burst == 0) burst = 3 + uint32_t(rng() % 12);   // or runs ahead into the window
      if (burst > 0) --burst;
      ASSERT_EQ(fast.driver.is_disconnected(last_player), ref.driver.is_disconnected(last_player));
      if (pause > 0) {
        --pause;
        continue;
      }
      // One frame a tick, up to three while behind the remote machine (as time sync catches up)
      // or in a burst: then the local frames run ahead of the remote inputs, which come late and
      // roll back, and reach the window's end (refused until the inputs come).
      const Frame remote = pairs[0][0]->a().endpoint.last_received_frame();
      for (int run = 0; run < 3 && (run == 0 || burst > 0 || fast.driver.frame() < remote); ++run) {
        const uint8_t local[4] = {uint8_t(tick / 4), uint8_t(run), 1, 2};
        if (!added) {
          ASSERT_EQ(fast.driver.add_local_input(0, local, size), ref.driver.add_local_input(0, local, size));
          added = true;
        }
        const Result a = fast.driver.advance(), b = ref.driver.advance();
        ASSERT_EQ(a, b) << "seed " << seed << " tick " << tick;
        ASSERT_EQ(fast.game.state.chain, ref.game.state.chain) << "seed " << seed << " tick " << tick;
        stalls += a == Result::prediction_limit;
        if (a != Result::ok) break;
        added = false;
      }
    }
    EXPECT_EQ(fast.game.loads, ref.game.loads) << "seed " << seed;
    EXPECT_EQ(fast.game.frame_errors, 0);
    rollbacks += fast.driver.stats().rollbacks;
  }
  std::printf("held runs %u, ring runs %u, frame by frame %u, queue refusals %u, rollbacks %llu, stalls %llu\n",
              total.held_runs, total.ring_runs, total.by_frame, window_refusals,
              static_cast<unsigned long long>(rollbacks), static_cast<unsigned long long>(stalls));
  EXPECT_GT(rollbacks, 300u);
  EXPECT_GT(stalls, 100u) << "frames refused at the window's end";
  EXPECT_GT(total.held_runs, 3000u) << "the one-call drain took the usual drains";
  EXPECT_GT(total.ring_runs, 5u) << "runs past the ring's end went to the ring runs";
  EXPECT_GT(total.by_frame, 50u) << "cuts, rejoins, the queue's end: frame by frame";
  EXPECT_GT(window_refusals, 50u) << "the driver refused frames past its queue";
}

}  // namespace
}  // namespace retcon::test
