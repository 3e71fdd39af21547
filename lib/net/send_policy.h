// When inputs and acknowledgements go out: the endpoint's send policy, in one place.
//
// Batching saves bytes (frames that share a datagram share its header) but every frame of
// batching delays the peer's confirmation by a frame. That is free while nothing waits for the
// confirmation and costly when something does, so the policy sends at once whenever a
// confirmation matters and batches only when it is free:
//   - the owner says it is urgent: lockstep; its prediction window nearly full, or half full
//     while loss was observed recently (the endpoint tells: the peer resent frames we had, or
//     ours went unacknowledged for longer than a round trip); it is stalled;
//   - a frame's input changed (the peer predicts an unchanged input right, a changed one wrong);
// otherwise unchanged frames wait until `batch_frames` are pending or that many frame times
// passed.
// An acknowledgement waits up to one frame for an inputs datagram to ride on, urgent or not: it
// only trims the peer's resends and confirms nothing the peer's game waits for. (Sent alone at
// once when urgent, it cost a datagram per datagram received: ~1,000 B/s at 100 ms +-40 and 10%
// loss, where every frame goes at once anyway.)
#pragma once

#include <cstdint>

namespace retcon::detail {

struct SendPolicyConfig {
  // Unchanged frames that may share one datagram when nothing is urgent. 1: every frame goes
  // out at once. 1..60.
  uint32_t batch_frames = 2;
  // Frames after an observed loss during which the owner treats a half-full window as urgent
  // (0: never; the default, see NetworkConfig).
  uint32_t loss_hold_frames = 0;
};

struct SendPolicyInput {
  uint64_t now_us = 0;
  uint64_t frame_us = 16667;
  uint32_t pending_frames = 0;      // frames queued since the last inputs datagram
  bool changed = false;             // a pending frame's input differs from the one before it
  uint64_t last_inputs_at_us = 0;   // when the last inputs datagram went out
  bool ack_due = false;
  uint64_t ack_due_since_us = 0;
  bool urgent = false;              // the owner wants confirmations now
};

struct SendDecision {
  bool inputs = false;  // send the pending frames now
  bool ack = false;     // the acknowledgement is overdue: send it (alone if no inputs go)
};

// An acknowledgement waits one frame (plus half of one, so the count rules at a steady rate)
// for an inputs datagram.
inline bool ack_overdue(const SendPolicyInput& in) noexcept {
  return in.ack_due && in.now_us >= in.ack_due_since_us + in.frame_us + in.frame_us / 2;
}

inline SendDecision decide_send(const SendPolicyConfig& c, const SendPolicyInput& in) noexcept {
  SendDecision d;
  const uint64_t batch = c.batch_frames < 1 ? 1 : c.batch_frames;
  const bool urgent = in.urgent || batch == 1;
  d.ack = ack_overdue(in);
  if (in.pending_frames == 0) return d;
  d.inputs = urgent || in.changed || in.pending_frames >= batch ||
             in.now_us >= in.last_inputs_at_us + batch * in.frame_us + in.frame_us / 2 || d.ack;
  return d;
}

// decide_send(c, in).inputs alone, asking only until the answer is known: the endpoint asks it
// in both send passes of every tick (quiet_at, poll_polled_again), and ack_overdue only where
// no inputs go. The same answer for every input (net_send_policy_test): with frames pending, an
// overdue acknowledgement sends them.
inline bool inputs_due(const SendPolicyConfig& c, const SendPolicyInput& in) noexcept {
  if (in.pending_frames == 0) return false;
  const uint64_t batch = c.batch_frames < 1 ? 1 : c.batch_frames;
  if (in.urgent || batch == 1 || in.changed || in.pending_frames >= batch) return true;
  if (in.now_us >= in.last_inputs_at_us + batch * in.frame_us + in.frame_us / 2) return true;
  return ack_overdue(in);
}

}  // namespace retcon::detail
