// retcon: UdpTransport on standalone asio. Only the synchronous, non-blocking socket calls are
// used, so no io_context ever runs and no thread is started. Every call takes an error_code:
// no asio exception can escape into the game.
//
// System calls. On Linux, where the build has io_uring and the kernel allows it, datagrams are
// received through a completion ring (udp_completion_ring.h): a poll that finds nothing makes no
// system call. Otherwise (refused by seccomp, an old kernel, ReceivePath::batched_calls asked
// for), datagrams are received in batches with recvmmsg. The datagrams of
// a tick are sent together with sendmmsg at flush() (the sessions flush once per tick; until
// the first flush(), every send is its own send_to, so direct callers need no flush). A
// batch shorter than the batch size means nothing more was waiting, so the next receive()
// returns false without another system call: one receive call per poll. Elsewhere (and for
// what the Linux path does not cover) each datagram is one send_to / receive_from.
//
// Floods. receive() hands out at most `receive_budget` datagrams between two `false` returns,
// i.e. per poll of the session draining it: the rest waits in the kernel (or in the batch) for
// the next poll, and the stop is counted. A time budget does the same when a poll (the
// receive() calls and whatever the caller does with each datagram in between, e.g. decrypting
// it) has run longer than `receive_time_budget_us`: the clock is read once per poll and once per
// batch of 32, never per datagram. Memory is fixed at open: two batches of buffers.
//
// Errors (udp_socket_errors.h): an ICMP report about an earlier datagram (a peer's port closed)
// that comes back from a receive is counted and skipped, from a send the send is made again;
// any other receive error is counted and skipped, any other send error drops that datagram.
#include <asio/io_context.hpp>
#include <chrono>
#include <asio/ip/v6_only.hpp>
#include <asio/ip/udp.hpp>
#include <cstring>
#include <new>
#include <system_error>

#if defined(__linux__)
#include <sys/socket.h>
#include <cerrno>

#include "net/udp_completion_ring.h"
#endif

#include "net/ip_address.h"
#include "net/udp_socket_errors.h"
#include "retcon/transport.h"

#if defined(_WIN32)
#include <mswsock.h>  // SIO_UDP_CONNRESET (asio has already included <winsock2.h>)
#endif

namespace retcon {

namespace {
#if defined(__linux__)
constexpr unsigned kBatch = 32;         // datagrams per recvmmsg / sendmmsg
constexpr size_t kSlotSize = 2048;      // above the protocol's 1200; longer ones are truncated

// What a failed recvmmsg / sendmmsg said (udp_socket_errors.h: ICMP reports are skipped).
detail::SocketOutcome errno_outcome() noexcept {
  return detail::classify_socket_error(std::error_code(errno, std::system_category()));
}
#endif
}  // namespace

struct UdpTransport::Impl {
  asio::io_context io{1};
  asio::ip::udp::socket socket{io};
  uint16_t port = 0;
  bool v6 = false;
  PeerAddress local;
  uint64_t send_errors = 0;
  uint64_t receive_errors = 0;
  uint64_t system_calls = 0;
  uint64_t budget_stops = 0;
  uint32_t receive_budget = kDefaultReceiveBudget;
  uint32_t handed_out = 0;  // since receive() last returned false
  uint64_t receive_time_budget_us = kDefaultReceiveTimeBudgetUs;  // 0: no time budget
  std::chrono::steady_clock::time_point poll_started;  // when this poll handed out its first

  // Whether this poll has used up its time (checked between batches).
  bool out_of_time() const {
    if (receive_time_budget_us == 0 || handed_out == 0) return false;
    const auto spent = std::chrono::steady_clock::now() - poll_started;
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(spent).count()) >= receive_time_budget_us;
  }
  bool stop_poll() {
    handed_out = 0;
    ++budget_stops;
    return false;
  }

#if defined(__linux__)
  struct Batch {
    uint8_t data[kBatch][kSlotSize];
    sockaddr_storage addresses[kBatch];
    iovec iov[kBatch];
    mmsghdr headers[kBatch];
  };
  Batch in;
  Batch out;
  unsigned in_count = 0;  // datagrams in `in` from the last recvmmsg
  unsigned in_next = 0;   // the next one to hand out
  bool in_drained = false;  // the last batch was short: nothing more was waiting
  unsigned out_count = 0;   // datagrams queued in `out`
  // Sends are queued only once the owner has shown it flushes (sessions do every tick); a
  // caller that never calls flush() keeps one send_to per send, as before.
  bool batching = false;

  // Declared after the socket, so it goes first: its receive is cancelled before the socket
  // closes.
  detail::UdpCompletionRing ring;

  int fd() noexcept { return socket.native_handle(); }
  bool receive_batch() noexcept;
  bool receive_from_ring(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) noexcept;
  void send_batch() noexcept;
#endif
};

#if defined(__linux__)
bool UdpTransport::Impl::receive_batch() noexcept {
  return detail::receive_past_errors([this] {
    for (unsigned i = 0; i < kBatch; ++i) {
      in.iov[i] = {in.data[i], kSlotSize};
      in.headers[i] = mmsghdr{};
      in.headers[i].msg_hdr.msg_name = &in.addresses[i];
      in.headers[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      in.headers[i].msg_hdr.msg_iov = &in.iov[i];
      in.headers[i].msg_hdr.msg_iovlen = 1;
    }
    ++system_calls;
    const int n = ::recvmmsg(fd(), in.headers, kBatch, MSG_DONTWAIT, nullptr);
    if (n > 0) {
      in_count = unsigned(n);
      in_next = 0;
      in_drained = in_count < kBatch;
      return detail::SocketOutcome::done;
    }
    return n == 0 ? detail::SocketOutcome::nothing_waiting : errno_outcome();
  }, &receive_errors);
}

bool UdpTransport::Impl::receive_from_ring(PeerAddress* from, uint8_t* buffer, size_t capacity,
                                           size_t* length) noexcept {
  if (handed_out % 32 == 0 && out_of_time()) return stop_poll();
  detail::UdpCompletionRing::Datagram d;
  if (!ring.next(&d, &receive_errors)) {
    handed_out = 0;
    return false;
  }
  if (handed_out == 0 && receive_time_budget_us != 0) poll_started = std::chrono::steady_clock::now();
  const size_t n = d.length < capacity ? d.length : capacity;  // truncated, as UDP would
  std::memcpy(buffer, d.data, n);
  asio::ip::udp::endpoint sender;
  if (from != nullptr && d.name_length <= sender.capacity()) {
    std::memcpy(sender.data(), d.name, d.name_length);
    sender.resize(d.name_length);
    *from = detail::to_peer_address(sender);
  }
  ring.release();
  *length = n;
  ++handed_out;
  return true;
}

void UdpTransport::Impl::send_batch() noexcept {
  unsigned done = 0;
  while (done < out_count) {
    int n = 0;
    // A report about an earlier datagram (ICMP port unreachable) fails the call before the
    // first one is sent: send it again rather than drop a datagram that was never at fault.
    const bool sent = detail::send_past_reports([&] {
      ++system_calls;
      n = ::sendmmsg(fd(), out.headers + done, out_count - done, MSG_DONTWAIT);
      return n > 0 ? detail::SocketOutcome::done : errno_outcome();
    });
    if (sent) {
      done += unsigned(n);
      continue;
    }
    ++send_errors;  // the first one failed (full buffer, unreachable): drop it, like UDP
    ++done;
  }
  out_count = 0;
}
#endif

UdpTransport::UdpTransport(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
UdpTransport::~UdpTransport() {
  if (impl_) flush();
}

Result UdpTransport::open(const char* host, uint16_t port,
                          std::unique_ptr<UdpTransport>* out) noexcept {
  return open(host, port, out, ReceivePath::completion_ring);
}

Result UdpTransport::open(const char* host, uint16_t port, std::unique_ptr<UdpTransport>* out,
                          ReceivePath preferred) noexcept {
  if (host == nullptr || out == nullptr) return Result::invalid_argument;
  out->reset();
  std::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(host, ec);
  if (ec) return Result::invalid_argument;
  try {
    auto impl = std::make_unique<Impl>();
    const asio::ip::udp::endpoint bind_to(ip, port);
    impl->socket.open(bind_to.protocol(), ec);
    if (ec) return Result::transport_error;
    if (ip.is_v6()) {
      // Dual stack where the OS allows it, so "::" also reaches IPv4 peers.
      impl->socket.set_option(asio::ip::v6_only(false), ec);
      ec.clear();
    }
    impl->socket.bind(bind_to, ec);
    if (ec) return Result::transport_error;
    impl->socket.non_blocking(true, ec);
    if (ec) return Result::transport_error;
#if defined(_WIN32)
    // Windows turns an ICMP port unreachable (the peer's game closed) into WSAECONNRESET on a
    // later receive of this unconnected socket, as Linux does not. Switched off here (best
    // effort: receive() skips such errors anyway), so a player who quits never breaks the
    // others' socket.
    BOOL report_connreset = FALSE;
    DWORD returned = 0;
    (void)WSAIoctl(impl->socket.native_handle(), SIO_UDP_CONNRESET, &report_connreset,
                   sizeof report_connreset, nullptr, 0, &returned, nullptr, nullptr);
#endif
    const asio::ip::udp::endpoint bound = impl->socket.local_endpoint(ec);
    if (ec) return Result::transport_error;
    impl->port = bound.port();
    impl->v6 = ip.is_v6();
    impl->local = detail::to_peer_address(bound);
#if defined(__linux__)
    if (preferred == ReceivePath::completion_ring) (void)impl->ring.open(impl->fd());
#else
    (void)preferred;  // one receive_from per datagram here
#endif
    out->reset(new UdpTransport(std::move(impl)));
    return Result::ok;
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  } catch (...) {
    return Result::transport_error;
  }
}

uint16_t UdpTransport::local_port() const noexcept { return impl_->port; }
PeerAddress UdpTransport::local_address() const noexcept { return impl_->local; }
uint64_t UdpTransport::send_errors() const noexcept { return impl_->send_errors; }
uint64_t UdpTransport::receive_errors() const noexcept { return impl_->receive_errors; }
uint64_t UdpTransport::system_calls() const noexcept {
#if defined(__linux__)
  return impl_->system_calls + impl_->ring.system_calls();
#else
  return impl_->system_calls;
#endif
}

UdpTransport::ReceivePath UdpTransport::receive_path() const noexcept {
#if defined(__linux__)
  return impl_->ring.active() ? ReceivePath::completion_ring : ReceivePath::batched_calls;
#else
  return ReceivePath::single_calls;
#endif
}
uint64_t UdpTransport::receive_budget_stops() const noexcept { return impl_->budget_stops; }

Result UdpTransport::set_receive_budget(uint32_t datagrams) noexcept {
  if (datagrams == 0) return Result::invalid_argument;
  impl_->receive_budget = datagrams;
  return Result::ok;
}

void UdpTransport::set_receive_time_budget(uint64_t microseconds) noexcept {
  impl_->receive_time_budget_us = microseconds;
}

Result UdpTransport::send(const PeerAddress& to, const uint8_t* data, size_t length) {
  if (data == nullptr && length != 0) return Result::invalid_argument;
  asio::ip::udp::endpoint target;
  if (!detail::to_udp_endpoint(to, &target)) return Result::invalid_argument;
  if (impl_->v6 && target.address().is_v4()) {
    target = asio::ip::udp::endpoint(
        asio::ip::make_address_v6(asio::ip::v4_mapped, target.address().to_v4()), target.port());
  }
#if defined(__linux__)
  Impl& s = *impl_;
  if (s.batching && length <= kSlotSize && target.size() <= sizeof(sockaddr_storage)) {
    if (s.out_count == kBatch) s.send_batch();
    const unsigned i = s.out_count++;
    if (length != 0) std::memcpy(s.out.data[i], data, length);
    std::memcpy(&s.out.addresses[i], target.data(), target.size());
    s.out.iov[i] = {s.out.data[i], length};
    s.out.headers[i] = mmsghdr{};
    s.out.headers[i].msg_hdr.msg_name = &s.out.addresses[i];
    s.out.headers[i].msg_hdr.msg_namelen = socklen_t(target.size());
    s.out.headers[i].msg_hdr.msg_iov = &s.out.iov[i];
    s.out.headers[i].msg_hdr.msg_iovlen = 1;
    return Result::ok;  // a failure at flush is counted in send_errors(), as a loss would be
  }
  if (impl_->out_count != 0) impl_->send_batch();  // keep the order of what was queued
#endif
  const bool sent = detail::send_past_reports([&] {
    std::error_code ec;
    ++impl_->system_calls;
    impl_->socket.send_to(asio::buffer(data, length), target, 0, ec);
    return detail::classify_socket_error(ec);
  });
  if (!sent) {
    ++impl_->send_errors;
    return Result::transport_error;
  }
  return Result::ok;
}

void UdpTransport::flush() {
#if defined(__linux__)
  impl_->batching = true;
  if (impl_->out_count != 0) impl_->send_batch();
#endif
}

bool UdpTransport::receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) {
  if (buffer == nullptr || length == nullptr) return false;
  Impl& s = *impl_;
  // This poll had its share (datagrams or time): the rest waits for the next one.
  if (s.handed_out >= s.receive_budget) return s.stop_poll();
#if defined(__linux__)
  // Anything queued outside a session's tick goes out before we read the replies.
  if (s.out_count != 0) s.send_batch();
  if (s.ring.active()) return s.receive_from_ring(from, buffer, capacity, length);
  if (s.in_next == s.in_count) {
    if (s.out_of_time()) return s.stop_poll();
    if (s.in_drained) {
      // The last batch was short: nothing more was waiting a moment ago. Next poll asks again.
      s.in_drained = false;
      s.in_next = s.in_count = 0;
      s.handed_out = 0;
      return false;
    }
    if (!s.receive_batch()) {
      s.in_next = s.in_count = 0;
      s.handed_out = 0;
      return false;
    }
  }
  if (s.handed_out == 0 && s.receive_time_budget_us != 0) s.poll_started = std::chrono::steady_clock::now();
  const unsigned i = s.in_next++;
  const mmsghdr& h = s.in.headers[i];
  const size_t n = h.msg_len < capacity ? h.msg_len : capacity;  // truncated, as UDP would
  std::memcpy(buffer, s.in.data[i], n);
  asio::ip::udp::endpoint sender;
  if (from != nullptr && h.msg_hdr.msg_namelen <= sender.capacity()) {
    std::memcpy(sender.data(), &s.in.addresses[i], h.msg_hdr.msg_namelen);
    sender.resize(h.msg_hdr.msg_namelen);
    *from = detail::to_peer_address(sender);
  }
  *length = n;
  ++s.handed_out;
  return true;
#else
  if (s.handed_out % 32 == 0 && s.out_of_time()) return s.stop_poll();
  // Windows' WSAECONNRESET (should SIO_UDP_CONNRESET not have been switched off) ends up here.
  const bool received = detail::receive_past_errors([&] {
    asio::ip::udp::endpoint sender;
    std::error_code ec;
    ++s.system_calls;
    const size_t n = s.socket.receive_from(asio::buffer(buffer, capacity), sender, 0, ec);
    if (!ec) {
      if (from) *from = detail::to_peer_address(sender);
      *length = n;
    }
    return detail::classify_socket_error(ec);
  }, &s.receive_errors);
  if (!received) {
    s.handed_out = 0;
    return false;
  }
  if (s.handed_out == 0 && s.receive_time_budget_us != 0) s.poll_started = std::chrono::steady_clock::now();
  ++s.handed_out;
  return true;
#endif
}

}  // namespace retcon
