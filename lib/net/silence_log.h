// Silences on one connection, both ways, for late-input detection (session/lateness_monitor.h).
//
// A lag switch cuts the cheater's outgoing traffic while it keeps hearing us; an outage (a
// blackout, a dead router) cuts both ways. From our side both look the same: the peer goes
// silent, then its held inputs arrive at once. What tells them apart is whether the peer heard
// us meanwhile, and after a two-way outage its acknowledgements cannot say so: the first
// datagram it gets through may leave only once it heard our resends, and then acknowledges
// everything. So each side tells the other its latest silence (wire.h SilenceNote, riding on
// inputs datagrams): "I heard nothing from you for this long, until this long ago".
//
// This log keeps our latest silence (no valid datagram from the peer for kMinGapUs or more),
// what we tell the peer, and the peer's latest note. Sans-IO, fixed size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "net/wire.h"

namespace retcon::detail {

// A stretch of time on our clock (to_us 0: none).
struct Silence {
  uint64_t from_us = 0, to_us = 0;
};

// The peer's latest silence note, and when (our clock) the datagram carrying it arrived.
struct PeerSilence {
  uint64_t gap_us = 0, ago_us = 0;
  uint64_t arrived_at_us = 0;  // 0: none yet
};

class SilenceLog {
 public:
  // Shorter gaps are loss or a quiet moment, not an outage: a gap this short explains less
  // lateness than any threshold worth setting.
  static constexpr uint64_t kMinGapUs = 200000;
  static constexpr uint64_t kToldForUs = uint64_t(kMaxSilenceAgoMs) * 1000;

  void reset() noexcept { *this = SilenceLog{}; }

  // A valid datagram from the peer arrived at `now_us`; the one before at `previous_us`
  // (0: none).
  void on_received(uint64_t previous_us, uint64_t now_us) noexcept {
    if (previous_us != 0 && now_us >= previous_us + kMinGapUs) ours_ = Silence{previous_us, now_us};
  }
  // Our latest silence from the peer.
  const Silence& heard_nothing() const noexcept { return ours_; }

  // The note an inputs datagram leaving at `now_us` carries: our latest silence, while it ended
  // less than kToldForUs ago. False: none.
  bool note_due(uint64_t now_us, SilenceNote* note) const noexcept {
    if (ours_.to_us == 0 || now_us < ours_.to_us || now_us - ours_.to_us > kToldForUs) return false;
    note->gap_ms = uint32_t(std::clamp<uint64_t>((ours_.to_us - ours_.from_us) / 1000, 1, kMaxSilenceGapMs));
    note->ago_ms = uint32_t((now_us - ours_.to_us) / 1000);
    return true;
  }

  // The peer's note (checked by the codec) arrived at `now_us`.
  void on_note(const SilenceNote& note, uint64_t now_us) noexcept {
    theirs_ = PeerSilence{uint64_t(note.gap_ms) * 1000, uint64_t(note.ago_ms) * 1000, now_us};
  }
  const PeerSilence& told() const noexcept { return theirs_; }

 private:
  Silence ours_;
  PeerSilence theirs_;
};

}  // namespace retcon::detail
