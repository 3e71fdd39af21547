// retcon: UdpTransport on standalone asio. Only the synchronous, non-blocking socket calls are
// used, so no io_context ever runs and no thread is started. Every call takes an error_code:
// no asio exception can escape into the game.
#include <asio/io_context.hpp>
#include <asio/ip/v6_only.hpp>
#include <asio/ip/udp.hpp>
#include <new>
#include <system_error>

#include "net/ip_address.h"
#include "retcon/transport.h"

#if defined(_WIN32)
#include <mswsock.h>  // SIO_UDP_CONNRESET (asio has already included <winsock2.h>)
#endif

namespace retcon {

namespace {
// ICMP errors surface on later receive calls (e.g. connection_refused); skip a few per poll.
constexpr int kMaxErrorsPerReceive = 8;
}  // namespace

struct UdpTransport::Impl {
  asio::io_context io{1};
  asio::ip::udp::socket socket{io};
  uint16_t port = 0;
  bool v6 = false;
  PeerAddress local;
  uint64_t send_errors = 0;
  uint64_t receive_errors = 0;
};

UdpTransport::UdpTransport(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
UdpTransport::~UdpTransport() = default;

Result UdpTransport::open(const char* host, uint16_t port,
                          std::unique_ptr<UdpTransport>* out) noexcept {
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

Result UdpTransport::send(const PeerAddress& to, const uint8_t* data, size_t length) {
  if (data == nullptr && length != 0) return Result::invalid_argument;
  asio::ip::udp::endpoint target;
  if (!detail::to_udp_endpoint(to, &target)) return Result::invalid_argument;
  if (impl_->v6 && target.address().is_v4()) {
    target = asio::ip::udp::endpoint(
        asio::ip::make_address_v6(asio::ip::v4_mapped, target.address().to_v4()), target.port());
  }
  std::error_code ec;
  impl_->socket.send_to(asio::buffer(data, length), target, 0, ec);
  if (ec) {
    ++impl_->send_errors;
    return Result::transport_error;
  }
  return Result::ok;
}

bool UdpTransport::receive(PeerAddress* from, uint8_t* buffer, size_t capacity, size_t* length) {
  if (buffer == nullptr || length == nullptr) return false;
  for (int attempt = 0; attempt < kMaxErrorsPerReceive; ++attempt) {
    asio::ip::udp::endpoint sender;
    std::error_code ec;
    const size_t n = impl_->socket.receive_from(asio::buffer(buffer, capacity), sender, 0, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return false;
    if (ec) {
      ++impl_->receive_errors;
      continue;
    }
    if (from) *from = detail::to_peer_address(sender);
    *length = n;
    return true;
  }
  return false;
}

}  // namespace retcon
