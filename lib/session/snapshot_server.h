// The host's side of state transfer (stream 1, session/state_transfer.h): a spectator that
// joins a running match asks for a state; the host picks a recent saved state that is final
// (every input before it confirmed, no correction or unsettled disconnect cut pending), copies it
// into one transfer buffer, restarts that spectator's input stream at the state's frame, and
// sends an offer and then the state on the spectator's reliable channel. The spectator loads
// it and plays the confirmed inputs from there.
//
// One buffer, allocated at create (max_state_size, counted against the memory budget): requests
// that arrive together share one state; one that arrives while a state is on its way waits
// until it is delivered. While a spectator waits, nothing is streamed to it (held()). Without
// state transfer enabled every request is declined, and the spectator plays from frame 0.
#pragma once

#include <cstdint>
#include <memory>

#include "core/rollback_driver.h"
#include "session/peer.h"

namespace retcon::detail {

class SnapshotServer {
 public:
  // Allocates the transfer buffer when `enabled` (out_of_memory beyond the budget).
  Result init(RollbackDriver& driver, bool enabled, size_t max_state_size);
  bool enabled() const noexcept { return enabled_; }

  // A stream-1 message from spectator `index` (its peer). Malformed ones are counted and dropped.
  void on_message(uint32_t index, Peer& peer, const uint8_t* body, size_t size, Frame next_streamed) noexcept;
  // The spectator's channel events (its blob delivered or given up).
  void on_channel_events(uint32_t index, Peer& peer) noexcept;
  // Nothing is streamed to a spectator that waits for its state.
  bool held(uint32_t index) const noexcept { return index < kMaxSpectators && wanted_[index]; }
  // Serves the waiting requests when a final state is at hand. `last_streamed`: the newest frame
  // cleared for streaming to spectators; `stable`: no disconnect cut may still move;
  // `everywhere`: every player machine has every input up to this frame (so no later cut can
  // revise them: a state of a frame up to everywhere + 1 never changes); `oldest`: the first
  // frame whose timed decisions are still kept (an older state would miss some: none is
  // offered, the next frames save a newer one). A served spectator's next_to_stream[index]
  // becomes the state's frame: the session streams it the frames from there.
  void serve(RollbackDriver& driver, Peer* spectators, uint32_t count, Frame last_streamed, bool stable,
             Frame everywhere, Frame oldest, Frame* next_to_stream) noexcept;

  uint64_t states_sent() const noexcept { return states_sent_; }
  uint64_t malformed() const noexcept { return malformed_; }
  // Frame of the state in the buffer (kNullFrame when none).
  Frame frame() const noexcept { return frame_; }

 private:
  bool busy() const noexcept;
  bool send_accepted(Peer& peer) noexcept;

  bool enabled_ = false;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t size_ = 0;
  Frame frame_ = kNullFrame;
  bool wanted_[kMaxSpectators] = {};   // asked, not served yet
  bool sending_[kMaxSpectators] = {};  // the buffer is on its way to this spectator
  bool accept_owed_[kMaxSpectators] = {};  // "accepted" not sent yet (its channel was full)
  uint64_t states_sent_ = 0, malformed_ = 0;
};

}  // namespace retcon::detail
