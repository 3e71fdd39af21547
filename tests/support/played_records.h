// What a match played in a test leaves behind for comparing two plays of it (the usual paths
// against the general ones): every datagram a machine sent, and every event its game was told.
#pragma once

#include <cstdint>
#include <vector>

#include "retcon/event.h"
#include "retcon/types.h"
#include "retcon/transport.h"

namespace retcon::test {

// One datagram as it left: when, to whom, its bytes.
struct SentDatagram {
  uint64_t at_us;
  PeerAddress to;
  std::vector<uint8_t> bytes;
  bool operator==(const SentDatagram& o) const { return at_us == o.at_us && to == o.to && bytes == o.bytes; }
};

// What a game sees of an event (the late-inputs counts included).
struct SeenEvent {
  EventType type;
  PlayerIndex player;
  Frame frame;
  int32_t count, total;
  bool operator==(const SeenEvent& o) const {
    return type == o.type && player == o.player && frame == o.frame && count == o.count && total == o.total;
  }
};

}  // namespace retcon::test
