// The send policy's decisions (lib/net/send_policy.h), and an endpoint pair that shows the
// effect a player feels: an urgent peer's frames arrive every frame, a relaxed one's batched.
#include <gtest/gtest.h>

#include "net/endpoint_pair.h"
#include "net/send_policy.h"

namespace retcon {
namespace {

using detail::decide_send;
using detail::SendPolicyConfig;
using detail::SendPolicyInput;

constexpr uint64_t kFrame = 16667;

SendPolicyInput unchanged_frame_pending(uint64_t now) {
  SendPolicyInput in;
  in.now_us = now;
  in.frame_us = kFrame;
  in.pending_frames = 1;
  in.last_inputs_at_us = now - kFrame;
  return in;
}

TEST(SendPolicy, UnchangedFramesWaitOnlyWhenNothingIsUrgent) {
  SendPolicyConfig c;  // batch 2
  SendPolicyInput in = unchanged_frame_pending(100 * kFrame);
  EXPECT_FALSE(decide_send(c, in).inputs) << "free: the unchanged frame waits for a second one";
  in.pending_frames = 2;
  EXPECT_TRUE(decide_send(c, in).inputs) << "a batch is full";
  in.pending_frames = 1;
  in.urgent = true;
  EXPECT_TRUE(decide_send(c, in).inputs) << "urgent: at once";
  in.urgent = false;
  in.changed = true;
  EXPECT_TRUE(decide_send(c, in).inputs) << "a changed input: at once";
  in.changed = false;
  in.now_us = in.last_inputs_at_us + 2 * kFrame + kFrame / 2;
  EXPECT_TRUE(decide_send(c, in).inputs) << "no second frame came: it goes after 2.5 frame times";
  c.batch_frames = 1;
  EXPECT_TRUE(decide_send(c, unchanged_frame_pending(100 * kFrame)).inputs) << "batch 1: every frame";
}

// inputs_due (the usual second send pass's question, asked without the acknowledgement's part
// of the answer) says what decide_send says of the inputs for every input: batch sizes 0 to 60,
// nothing to several frames pending, every flag, and each time on both sides of the batch's and
// the acknowledgement's deadlines.
TEST(SendPolicy, InputsDueAnswersAsDecideSend) {
  int due = 0, held = 0;
  for (const uint32_t batch : {0u, 1u, 2u, 3u, 60u}) {
    for (const uint32_t pending : {0u, 1u, 2u, 3u, 59u, 60u, 61u}) {
      for (int flags = 0; flags < 8; ++flags) {
        for (const uint64_t sent_ago : {uint64_t(0), 2 * kFrame, 2 * kFrame + kFrame / 2 - 1, 2 * kFrame + kFrame / 2,
                                        3 * kFrame + kFrame / 2, 61 * kFrame}) {
          for (const uint64_t ack_ago : {uint64_t(0), kFrame + kFrame / 2 - 1, kFrame + kFrame / 2}) {
            const SendPolicyConfig c{batch, 0};
            SendPolicyInput in;
            in.now_us = 1000 * kFrame;
            in.frame_us = kFrame;
            in.pending_frames = pending;
            in.urgent = flags & 1;
            in.changed = flags & 2;
            in.ack_due = flags & 4;
            in.last_inputs_at_us = in.now_us - sent_ago;
            in.ack_due_since_us = in.now_us - ack_ago;
            const bool expected = decide_send(c, in).inputs;
            ASSERT_EQ(detail::inputs_due(c, in), expected)
                << "batch " << batch << " pending " << pending << " flags " << flags << " sent " << sent_ago
                << " us ago, ack due " << ack_ago << " us ago";
            (expected ? due : held)++;
          }
        }
      }
    }
  }
  EXPECT_GT(due, 100);
  EXPECT_GT(held, 10);
}

// An acknowledgement confirms nothing the peer's game waits for: it waits for an inputs
// datagram to ride on even when urgent (it used to go alone at once: one acknowledgement-only
// datagram per datagram received, ~1,000 B/s at 100 ms +-40 and 10% loss).
TEST(SendPolicy, AcknowledgementsWaitAFrameEvenWhenUrgent) {
  SendPolicyConfig c;
  SendPolicyInput in;
  in.now_us = 1000 * kFrame;
  in.frame_us = kFrame;
  in.ack_due = true;
  in.ack_due_since_us = in.now_us - kFrame;
  EXPECT_FALSE(decide_send(c, in).ack);
  in.urgent = true;
  EXPECT_FALSE(decide_send(c, in).ack) << "the next frame's inputs datagram carries it";
  in.urgent = false;
  in.ack_due_since_us = in.now_us - 2 * kFrame;
  EXPECT_TRUE(decide_send(c, in).ack);
  in.pending_frames = 1;
  in.last_inputs_at_us = in.now_us;
  EXPECT_TRUE(decide_send(c, in).inputs) << "an overdue ack takes the pending frames along";
}

// Unchanged inputs, one per frame: relaxed, they share datagrams; urgent, each goes at once.
TEST(SendPolicy, UrgentEndpointSendsEveryFrameRelaxedOneBatches) {
  for (bool urgent : {false, true}) {
    test::EndpointPair pair(test::default_config(50), test::default_config(51));
    pair.start();
    ASSERT_TRUE(pair.run_handshake());
    auto& a = pair.a().endpoint;
    a.set_urgent(urgent);
    const uint8_t x[2] = {1, 0};
    const uint64_t before = a.stats().datagrams_sent;
    int late = 0;
    for (Frame f = 0; f < 120; ++f) {
      ASSERT_EQ(a.send_input(f, x), Result::ok);
      pair.step(kFrame);
      late += pair.b().endpoint.last_received_frame() < f;
    }
    const uint64_t datagrams = a.stats().datagrams_sent - before;
    if (urgent) {
      EXPECT_EQ(late, 0) << "every frame arrived within its frame";
      EXPECT_GE(datagrams, 120u);
    } else {
      EXPECT_GT(late, 40) << "batched frames arrive a frame later";
      EXPECT_LE(datagrams, 90u);
    }
  }
}

}  // namespace
}  // namespace retcon
