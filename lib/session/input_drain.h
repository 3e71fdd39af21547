// The drain of a player peer's received inputs into the rollback driver (the P2P session's
// drain_inputs, every poll after the datagrams came in): the endpoint holds the frames it
// received in order in its receive ring, and the driver takes them in order, inside its window.
// Here rather than in the session so that tests drive the same code against each other.
#pragma once

#include <cstdint>

#include "core/rollback_driver.h"
#include "net/endpoint.h"

namespace retcon::detail {

// Whether a drain is due: the endpoint holds a frame not popped yet (the session asks every
// poll, inline). It may be one the driver does not take yet (past its window; before a rejoin's
// first frame, until that frame comes): the drain then takes nothing, and is asked again.
inline bool drain_due(const Endpoint& endpoint) noexcept {
  return endpoint.next_pop() <= endpoint.last_received_frame();
}

// The usual drain, in one call each way: a one-player peer whose frames from the driver's next
// one to `next` (the newest received, past the driver's newest: the caller asked) are held as
// one run of the receive ring, all of which the driver takes (RollbackDriver::take_remote_run:
// one window test, one horizons update); the endpoint is then told how many went. False with
// nothing taken otherwise (after a cut, a rejoin, the window's end, the ring's end): the
// general drain goes on from there as it would have.
inline bool drain_held_run(Endpoint& endpoint, RollbackDriver& driver, PlayerIndex player, Frame next,
                           size_t stride) noexcept {
  const Frame first = driver.last_confirmed(player) + 1;
  const uint8_t* blob = endpoint.held_run(first, next);
  if (blob == nullptr || !driver.take_remote_run(player, next, blob, stride)) return false;
  endpoint.pop_inputs(uint32_t(next - first) + 1);
  return true;
}

// A one-player peer's frames a run of the receive ring at a time (two when it wraps), into the
// driver in one call when it takes them all as it would one by one. False where the driver or
// the ring would not (drain_frame_by_frame goes on from there).
inline bool drain_ring_runs(Endpoint& endpoint, RollbackDriver& driver, PlayerIndex player, Frame next,
                            size_t stride) noexcept {
  for (;;) {
    const Frame want = driver.last_confirmed(player) + 1;
    if (want > next) return true;
    // The run starts at the endpoint's next frame: where it is not `want` (after a cut or a
    // rejoin), or there is none, the driver takes nothing (its next frame is `want`, and it takes
    // no empty run) and drain_frame_by_frame decides, as it would have.
    Frame frame = kNullFrame;
    const uint8_t* blob = nullptr;
    const uint32_t held = endpoint.peek_inputs(&frame, &blob);
    if (driver.accept_remote_run(player, frame, blob, stride, held) == 0) return false;
    endpoint.pop_inputs(held);
    // Taken up to the newest frame (the usual drain): the next look would find want > next.
    if (Frame(held) > next - want) return true;
  }
}

// The general drain: frame by frame, each of the peer's players' inputs of a frame (`players`,
// `count` of them, blobs `input_size` bytes apart in the frame's blob), while the driver takes
// the next frame of the first player.
inline void drain_frame_by_frame(Endpoint& endpoint, RollbackDriver& driver, const PlayerIndex* players,
                                 uint32_t count, size_t input_size, Frame next) noexcept {
  const PlayerIndex first = players[0];
  for (;;) {
    // Peek at the next frame first: the driver takes it only in order and inside its window.
    const Frame want = driver.last_confirmed(first) + 1;
    if (want > next || !driver.can_accept(first, want)) return;
    Frame frame;
    const uint8_t* blob;
    if (!endpoint.pop_input(&frame, &blob)) return;
    (void)driver.add_remote_input(first, frame, blob);
    for (uint32_t k = 1; k < count; ++k)
      (void)driver.add_remote_input(players[k], frame, blob + size_t(k) * input_size);
  }
}

}  // namespace retcon::detail
