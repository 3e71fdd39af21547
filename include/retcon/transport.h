// retcon: how datagrams leave and enter the library. The protocol (Endpoint) never opens a
// socket: it hands bytes to a Transport and polls one for bytes. This header holds the
// interface, the address type every transport shares, and the transports retcon ships:
//   CallbackTransport  user-supplied C function pointers (Steam, ENet, WebRTC, ...)
//   InMemoryNetwork    many transports in one process, for tests and local play
//   NetworkSimulator   wraps any transport and adds latency, loss, duplicates, blackouts
//   UdpTransport       a non-blocking UDP socket (IPv4 and IPv6), no thread, no run loop
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "retcon/result.h"

namespace retcon {

// An opaque peer address: whatever bytes a transport needs to reach a peer. 32 bytes hold an
// IPv6 address with port and scope, an in-memory id, or a platform user id (e.g. a Steam id).
// Only the first `size` bytes are meaningful; equality and hashing ignore the rest.
struct PeerAddress {
  static constexpr uint32_t kCapacity = 32;
  uint32_t size = 0;
  uint8_t bytes[kCapacity] = {};

  // Copies `length` bytes; false (and `*out` left empty) when length > kCapacity or data is null.
  static bool from_bytes(const uint8_t* data, size_t length, PeerAddress* out) noexcept;
};

bool operator==(const PeerAddress& a, const PeerAddress& b) noexcept;
inline bool operator!=(const PeerAddress& a, const PeerAddress& b) noexcept { return !(a == b); }
// FNV-1a over size and bytes: stable across runs and machines, usable as a map key.
uint64_t hash_peer_address(const PeerAddress& address) noexcept;
struct PeerAddressHash {
  size_t operator()(const PeerAddress& a) const noexcept { return size_t(hash_peer_address(a)); }
};

// The address of an InMemoryNetwork endpoint.
PeerAddress make_memory_address(uint32_t id) noexcept;

// IP addresses as used by UdpTransport: 1 byte family (4 or 6), 2 bytes port (big-endian),
// then 4 or 16 address bytes (IPv6 adds a 4-byte scope id). `host` is numeric text:
// "127.0.0.1", "::1", "fe80::1%2". Result::invalid_argument when it does not parse.
Result make_ip_address(const char* host, uint16_t port, PeerAddress* out) noexcept;
// 0 when `address` is not an IP address.
uint16_t ip_address_port(const PeerAddress& address) noexcept;
// "127.0.0.1:5000" or "[::1]:5000", NUL-terminated, truncated to `capacity`. Returns the
// length written (excluding the NUL); 0 when `address` is not an IP address.
size_t format_ip_address(const PeerAddress& address, char* buffer, size_t capacity) noexcept;

// A datagram transport. Unreliable and unordered by contract: the protocol copes with loss,
// duplication and reordering. Implementations never block.
class Transport {
 public:
  virtual ~Transport() = default;
  // Queue one datagram to `to`. Result::transport_error when it could not be handed over;
  // datagrams lost later on the way are not reported (as with UDP).
  virtual Result send(const PeerAddress& to, const uint8_t* data, size_t length) = 0;
  // Poll one datagram into `buffer`. False when none is waiting. A datagram longer than
  // `capacity` is dropped (or, on UDP, truncated to `capacity`): give a buffer larger than
  // the biggest datagram you expect, so an oversized one is recognisable by its length.
  virtual bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) = 0;
  // Hand over what send() queued. Sessions call it after the sends of a tick (a send pass that
  // sent nothing does not call it); a transport that batches sends (UdpTransport on Linux: one
  // sendmmsg per tick) sends them here.
  virtual void flush() {}

 protected:
  Transport() = default;
  Transport(const Transport&) = default;
  Transport& operator=(const Transport&) = default;
};

// ---------------------------------------------------------------------------------------------
// User transports through C function pointers, so the C API can offer them one to one.
struct TransportCallbacks {
  void* user = nullptr;
  // Send `length` bytes of `data` to the address `addr` (addr_len bytes). Return 0 on success,
  // anything else on failure.
  int32_t (*send)(void* user, const uint8_t* addr, uint32_t addr_len, const uint8_t* data,
                  size_t length) = nullptr;
  // Poll one datagram. `*addr_len` holds the capacity of `addr` (32) on entry and the bytes
  // written on return; `*length` the datagram's length. Return 1 when a datagram was written,
  // 0 when none is waiting, a negative number on error (counted, treated as none).
  int32_t (*receive)(void* user, uint8_t* addr, uint32_t* addr_len, uint8_t* buffer,
                     size_t capacity, size_t* length) = nullptr;
};

class CallbackTransport final : public Transport {
 public:
  explicit CallbackTransport(const TransportCallbacks& callbacks) noexcept : cb_(callbacks) {}
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override;
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override;
  // Receive calls that returned an error or an impossible address/length.
  uint64_t receive_errors() const noexcept { return receive_errors_; }

 private:
  TransportCallbacks cb_;
  uint64_t receive_errors_ = 0;
};

// ---------------------------------------------------------------------------------------------
// In-process network. Every endpoint has a queue; send() appends to the destination's queue in
// order. Queue slots keep their buffers, so nothing is allocated once the queues have grown to
// the traffic's peak. Single-threaded, like the rest of retcon.
class InMemoryNetwork;

class InMemoryTransport final : public Transport {
 public:
  InMemoryTransport(const InMemoryTransport&) = delete;
  InMemoryTransport& operator=(const InMemoryTransport&) = delete;

  PeerAddress address() const noexcept { return make_memory_address(id_); }
  uint32_t id() const noexcept { return id_; }
  // Datagrams waiting in this endpoint's queue.
  size_t pending() const noexcept { return count_; }

  // Sending to an address with no endpoint drops the datagram (as UDP would) and counts it.
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override;
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override;

 private:
  friend class InMemoryNetwork;
  struct Datagram {
    PeerAddress from;
    std::vector<uint8_t> bytes;  // capacity kept between uses
    size_t length = 0;
  };
  InMemoryTransport(InMemoryNetwork* network, uint32_t id);
  void enqueue(const PeerAddress& from, const uint8_t* data, size_t length);

  InMemoryNetwork* network_;
  uint32_t id_;
  std::vector<Datagram> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
};

class InMemoryNetwork {
 public:
  InMemoryNetwork() = default;
  InMemoryNetwork(const InMemoryNetwork&) = delete;
  InMemoryNetwork& operator=(const InMemoryNetwork&) = delete;
  ~InMemoryNetwork();

  // A new endpoint with the next id (1, 2, 3, ...), owned by the network.
  InMemoryTransport* add_endpoint();
  // Null when no endpoint has that address.
  InMemoryTransport* find(const PeerAddress& address) noexcept;
  uint64_t dropped_unknown_address() const noexcept { return dropped_unknown_address_; }

 private:
  friend class InMemoryTransport;
  std::vector<std::unique_ptr<InMemoryTransport>> endpoints_;
  uint64_t dropped_unknown_address_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Network conditions for one direction of a NetworkSimulator.
struct BlackoutWindow {
  uint64_t start_us;  // first microsecond of silence
  uint64_t end_us;    // first microsecond after it
};

struct LinkProfile {
  uint64_t latency_us = 0;
  uint64_t jitter_us = 0;          // extra delay, uniform in [0, jitter_us]
  double loss = 0.0;               // probability a datagram is dropped
  double duplicate = 0.0;          // probability a datagram is delivered twice
  double reorder = 0.0;            // probability a datagram is held back by reorder_delay_us
  uint64_t reorder_delay_us = 20000;
  uint64_t bandwidth_bytes_per_s = 0;  // 0 = unlimited
  // With a bandwidth cap, datagrams queue behind each other; beyond this backlog they drop.
  uint64_t max_queue_delay_us = 200000;
  std::vector<BlackoutWindow> blackouts;  // datagrams entering the link inside one are dropped
  // Periodic blackouts: silent during [offset + k*period, offset + k*period + duration).
  uint64_t blackout_period_us = 0;        // 0 = none
  uint64_t blackout_duration_us = 0;
  uint64_t blackout_offset_us = 0;
};

struct SimulatorStats {
  uint64_t sent = 0;               // datagrams offered to this direction
  uint64_t delivered = 0;          // datagrams handed on (duplicates count twice)
  uint64_t dropped_loss = 0;
  uint64_t dropped_blackout = 0;
  uint64_t dropped_bandwidth = 0;
  uint64_t duplicated = 0;
  uint64_t dropped_capacity = 0;   // the delay line was full (a flood): dropped, as a router would
  uint64_t budget_exhausted = 0;   // incoming: polls that stopped reading at the budget (rest waits)
  uint64_t time_budget_stops = 0;  // incoming: polls ended by the time budget (the rest waits)
};

// Bounds that keep a simulator's cost per poll and its memory fixed under a flood.
struct SimulatorLimits {
  // Datagrams read from the inner transport per poll at most (a poll is the receive() calls up
  // to the one returning false); the rest stays in the inner transport for the next poll.
  size_t receive_budget = 1024;
  // Datagrams held per direction at most; one more is dropped (dropped_capacity).
  size_t capacity = 8192;
  // A poll also ends once it has run this long in wall-clock time (the receive() calls and the
  // caller's work on each datagram between them), checked every 32 datagrams read or handed
  // out: a flood of datagrams that are each expensive to handle cannot hold the game thread.
  // What is left waits (in the inner transport or the delay line) for the next poll, counted in
  // time_budget_stops. Off (0) by default: a simulator with a virtual clock must give the same
  // run for the same seed on a fast machine and on a loaded one (a wall-clock budget made a
  // flooded match's outcome depend on the machine's speed: SimulatorFlood under ASan). Over a
  // real transport it is rarely needed, since a UdpTransport's own time budget holds through
  // the simulator; the samples that run one over UDP turn it on (2000, as UdpTransport).
  uint64_t receive_time_budget_us = 0;
};

// Wraps a transport and applies a LinkProfile to what it sends (outgoing) and to what it
// receives (incoming). Time comes from set_time(); the RNG is its own, seeded, so the same
// seed and the same calls give the same run. Delayed datagrams wait in preallocated slots.
class NetworkSimulator final : public Transport {
 public:
  NetworkSimulator(Transport& inner, uint64_t seed);
  ~NetworkSimulator() override;
  NetworkSimulator(const NetworkSimulator&) = delete;
  NetworkSimulator& operator=(const NetworkSimulator&) = delete;

  void set_outgoing(const LinkProfile& profile);
  void set_incoming(const LinkProfile& profile);
  // Zero counts are taken as 1 (a zero time budget means none).
  void set_limits(const SimulatorLimits& limits);
  const SimulatorLimits& limits() const noexcept;
  // Advance the virtual clock (never backwards; an earlier time is ignored) and hand due
  // outgoing datagrams to the inner transport.
  void set_time(uint64_t now_us);
  uint64_t time() const noexcept;

  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override;
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override;
  void flush() override;  // flushes the inner transport

  const SimulatorStats& outgoing_stats() const noexcept;
  const SimulatorStats& incoming_stats() const noexcept;
  // Datagrams held in either direction, waiting for their delivery time.
  size_t in_flight() const noexcept;
  // Bytes of buffers the simulator holds (bounded by the limits' capacity, whatever the flood).
  size_t buffer_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// A UDP socket (standalone asio underneath, never exposed). Non-blocking: receive() returns
// false at once when nothing is waiting. No thread, no run loop. An IPv6 socket sends only to
// IPv6 addresses.
class UdpTransport final : public Transport {
 public:
  // Binds `host` (numeric: "0.0.0.0", "127.0.0.1", "::", "::1") and `port` (0 = any free
  // port). Result::invalid_argument for a host that does not parse, Result::transport_error
  // when the socket cannot be opened or bound. Never throws.
  static Result open(const char* host, uint16_t port, std::unique_ptr<UdpTransport>* out) noexcept;

  // How receive() learns of datagrams. completion_ring (Linux, where the build found
  // <linux/io_uring.h> and the kernel allows io_uring, 6.0 or later): the kernel posts each
  // datagram into memory shared with the process, so a poll that finds nothing makes no
  // system call; where io_uring is refused (seccomp in many containers, the
  // kernel.io_uring_disabled sysctl) or missing, batched_calls: one recvmmsg per poll.
  // single_calls: one receive_from per datagram (Windows and other systems).
  enum class ReceivePath : uint8_t { completion_ring, batched_calls, single_calls };
  // Opens with `preferred` where this system has it, else the next path down (batched_calls
  // keeps Linux on recvmmsg, e.g. to compare or to test that path).
  static Result open(const char* host, uint16_t port, std::unique_ptr<UdpTransport>* out,
                     ReceivePath preferred) noexcept;
  ReceivePath receive_path() const noexcept;
  ~UdpTransport() override;
  UdpTransport(const UdpTransport&) = delete;
  UdpTransport& operator=(const UdpTransport&) = delete;

  uint16_t local_port() const noexcept;
  PeerAddress local_address() const noexcept;

  // On Linux, once flush() was called (sessions call it every tick), send() queues (up to 32
  // datagrams, then sends them) and flush() sends the queue in one sendmmsg; a failure there
  // is counted in send_errors(), as a loss. Before the first flush() every send goes at once.
  // A send answered with an ICMP report about an earlier datagram (a peer's port closed) is made
  // again, not counted; a receive counts such a report in receive_errors() and goes on.
  Result send(const PeerAddress& to, const uint8_t* data, size_t length) override;
  // At most receive_budget datagrams between two `false` returns (one poll of a session):
  // under a flood the rest waits for the next poll. On Linux one recvmmsg fetches up to 32; a
  // short batch means nothing more waited, so the next call returns false without asking.
  bool receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) override;
  void flush() override;
  uint64_t send_errors() const noexcept;
  uint64_t receive_errors() const noexcept;
  static constexpr uint32_t kDefaultReceiveBudget = 256;
  // invalid_argument for 0.
  Result set_receive_budget(uint32_t datagrams) noexcept;
  // A poll also stops once it has run this long (the receive() calls and the caller's work on
  // each datagram between them), checked between batches of 32: a flood of datagrams that are
  // each expensive to reject (authenticated sessions) cannot hold the game thread either.
  // 0: no time budget. The datagrams left wait for the next poll.
  static constexpr uint64_t kDefaultReceiveTimeBudgetUs = 2000;
  void set_receive_time_budget(uint64_t microseconds) noexcept;
  // Polls cut short by either budget (datagrams were left for the next poll).
  uint64_t receive_budget_stops() const noexcept;
  // Socket system calls made (sends, receives), for measuring.
  uint64_t system_calls() const noexcept;

 private:
  struct Impl;
  explicit UdpTransport(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace retcon
