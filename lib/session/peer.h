// One remote machine as the P2P session sees it: its address, its protocol endpoint, the
// players it owns (or that it is a spectator), time-sync samples and pending checksum reports.
#pragma once

#include <array>
#include <cstdint>

#include "net/endpoint.h"
#include "net/reliable_channel.h"
#include "retcon/p2p.h"
#include "session/lateness_monitor.h"
#include "session/stall_watch.h"
#include "session/time_sync.h"

namespace retcon::detail {

// Larger than any valid datagram, so an oversized one arrives whole enough to be recognised
// (and counted) as oversized rather than silently cut by the transport.
inline constexpr size_t kReceiveBufferSize = 2048;

// Sends a channel body through a peer's endpoint, which numbers and seals it (DatagramAuth) like
// every other datagram.
struct EndpointChannelOutput final : ChannelOutput {
  Endpoint* endpoint = nullptr;
  Transport* transport = nullptr;
  const PeerAddress* to = nullptr;
  bool send(MessageType type, const uint8_t* body, size_t size) override {
    return endpoint->send_channel(type, body, size, *transport, *to) == Result::ok;
  }
};

struct Peer final : ChannelSink {
  PeerAddress address;
  Endpoint endpoint;
  // The reliable channel beside the inputs: ordered messages by stream (state requests, timed
  // decisions) and state blobs. Its datagrams arrive through the endpoint (on_channel).
  ReliableChannel channel;
  uint64_t channel_messages_dropped = 0;  // of a stream this machine does not serve
  void on_channel(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) override {
    channel.on_datagram(type, body, size, now_us);
  }
  // Sends what the channel has due. Called after the endpoint's poll, so the tick's inputs go
  // first; the channel paces blobs to its byte rate.
  void poll_channel(uint64_t now_us, Transport& transport) {
    if (!endpoint.running() || channel.poll_idle(now_us)) return;  // most polls: nothing to send
    EndpointChannelOutput out;
    out.endpoint = &endpoint;
    out.transport = &transport;
    out.to = &address;
    channel.poll(now_us, endpoint.ping_us(), out);
  }
  bool spectator = false;
  std::array<PlayerIndex, kMaxPlayers> players{};  // players this peer owns, ascending
  uint32_t player_count = 0;
  bool synchronized = false;       // handshake completed and accepted (synchronized event given)
  bool dropped = false;            // disconnected (or a spectator that left)
  // Rejoin (session/rejoin.h), on the machines it comes back to: the machine of these players
  // is coming back (accepted; until its first live frame is confirmed). Its reports are not
  // counted in disconnect agreement, time sync or lateness until then.
  bool rejoining = false;
  FrameProgress progress;          // when its input stream last moved (liveness in frames)
  FrameProgress handshake;         // when its handshake last made a round trip
  TimeSync time_sync;
  LatenessMonitor lateness;
  // Checksum reports not yet comparable (our own checksum of that frame is not taken yet).
  struct Report { Frame frame; uint64_t sum; };
  std::array<Report, 16> pending{};
  uint32_t pending_count = 0;
};

inline PeerStats make_peer_stats(const Peer& peer, Frame local_frame, uint64_t now_us) {
  PeerStats s{};
  const EndpointStats e = peer.endpoint.stats();
  s.state = uint32_t(peer.endpoint.state());
  s.ping_us = e.ping_us;
  s.jitter_us = e.jitter_us;
  s.send_queue_length = e.send_queue_length;
  const Frame remote = peer.endpoint.estimated_remote_frame(now_us);
  s.local_frames_ahead = remote == kNullFrame ? 0 : local_frame - remote;
  s.remote_frames_ahead = peer.endpoint.remote_frame_advantage();
  s.bytes_sent = e.bytes_sent;
  s.datagrams_sent = e.datagrams_sent;
  s.bytes_received = e.bytes_received;
  s.datagrams_received = e.datagrams_received;
  auto drop = [&](DropReason r) { return e.dropped[size_t(r)]; };
  s.dropped_truncated = drop(DropReason::truncated);
  s.dropped_oversized = drop(DropReason::oversized);
  s.dropped_bad_magic = drop(DropReason::bad_magic);
  s.dropped_bad_version = drop(DropReason::bad_version);
  s.dropped_unknown_type = drop(DropReason::unknown_type);
  s.dropped_malformed = drop(DropReason::malformed);
  s.dropped_bad_nonce = drop(DropReason::bad_nonce);
  s.dropped_replayed = drop(DropReason::replayed);
  s.dropped_out_of_window = drop(DropReason::out_of_window);
  s.dropped_wrong_state = drop(DropReason::wrong_state);
  s.send_failures = e.send_failures;
  s.dropped_bad_checksum = drop(DropReason::bad_checksum);
  const LatenessNumbers& late = peer.lateness.numbers();
  for (uint32_t b = 0; b < kLatenessBuckets; ++b) s.lateness_histogram[b] = late.histogram[b];
  s.lateness_max_frames = late.max_frames;
  s.late_input_events = late.events;
  return s;
}

}  // namespace retcon::detail
