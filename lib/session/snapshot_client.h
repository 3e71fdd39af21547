// The spectator's side of state transfer (stream 1, session/state_transfer.h): instead of
// replaying a running match from frame 0, a spectator with state transfer asks its host for a
// recent final state, loads it (RollbackDriver::start_from) and plays the confirmed inputs from
// that frame on. Its endpoint takes no inputs until the host says where its stream starts (an
// offer: the state's frame; declined: frame 0, for a host without state transfer or a match
// that has not begun), so the old stream and the new one are never mixed.
//
// The receive buffer (max_state_size) is allocated at create. A state that stops arriving (the
// host went away, or the channel's stall timeout) ends the session: cannot_continue.
#pragma once

#include <cstdint>
#include <memory>

#include "core/rollback_driver.h"
#include "session/peer.h"

namespace retcon::detail {

class SnapshotClient {
 public:
  enum class Phase : uint8_t {
    off,        // no state transfer: the stream plays from frame 0
    asking,     // the request is (about to be) sent: no inputs taken yet
    accepted,   // the host will send a state once it has a final one
    awaiting,   // the host offered a state of frame(): its inputs are buffered meanwhile
    loaded,     // the state was loaded: inputs play from frame()
    from_start, // the host declined: the stream plays from frame 0
    failed,     // the host's state cannot be taken (larger than max_state_size)
  };

  // With `enabled`, allocates the receive buffer, lends it to the host's channel and pauses the
  // host's input stream until the answer. Call before the endpoint starts.
  Result init(RollbackDriver& driver, bool enabled, size_t max_state_size, Peer& host);
  Phase phase() const noexcept { return phase_; }
  // Inputs may be drained into the driver (the stream's start is known and the state loaded).
  bool ready() const noexcept { return phase_ == Phase::off || phase_ == Phase::loaded || phase_ == Phase::from_start; }
  // While this is true the spectator is not stalled by its host: it waits for the state.
  bool transferring() const noexcept {
    return phase_ == Phase::asking || phase_ == Phase::accepted || phase_ == Phase::awaiting;
  }
  Frame frame() const noexcept { return frame_; }

  // Per poll once the host is synchronized: sends the request when due, handles the host's
  // answers and the state's arrival. A host that acknowledged the request but has not answered
  // for kSilentHostUs is one without state transfer: the stream then plays from frame 0.
  void poll(RollbackDriver& driver, Peer& host, uint64_t now_us) noexcept;
  static constexpr uint64_t kSilentHostUs = 2000000;
  // A stream-1 message from the host.
  void on_message(RollbackDriver& driver, Peer& host, const uint8_t* body, size_t size) noexcept;

  // True once after the transfer failed for good (the session then says cannot_continue).
  bool take_failure() noexcept {
    const bool news = failure_news_;
    failure_news_ = false;
    return news;
  }

  uint64_t requests() const noexcept { return requests_; }
  uint64_t malformed() const noexcept { return malformed_; }

 private:
  void ask(Peer& host) noexcept;
  bool take_state(RollbackDriver& driver, Peer& host) noexcept;

  Phase phase_ = Phase::off;
  bool asked_ = false;
  uint64_t delivered_at_ = 0;  // when the host's channel acknowledged the request (0: not yet)
  bool failure_news_ = false;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;
  Frame frame_ = kNullFrame;
  uint64_t requests_ = 0, malformed_ = 0;
};

}  // namespace retcon::detail
