// retcon: IP address encoding in PeerAddress, shared by UdpTransport and its helpers.
#include "net/ip_address.h"

#include <cstdio>
#include <cstring>
#include <system_error>

namespace retcon {
namespace detail {

namespace {
constexpr uint32_t kV4Size = 7;   // family, port(2), address(4)
constexpr uint32_t kV6Size = 23;  // family, port(2), address(16), scope(4)
}  // namespace

PeerAddress to_peer_address(const asio::ip::udp::endpoint& endpoint) noexcept {
  PeerAddress a;
  asio::ip::address ip = endpoint.address();
  // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; naming them as IPv4 keeps one
  // peer equal to the address the game built with make_ip_address("a.b.c.d").
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
    ip = asio::ip::make_address_v4(asio::ip::v4_mapped, ip.to_v6());
  }
  const uint16_t port = endpoint.port();
  a.bytes[1] = static_cast<uint8_t>(port >> 8);
  a.bytes[2] = static_cast<uint8_t>(port);
  if (ip.is_v4()) {
    a.size = kV4Size;
    a.bytes[0] = 4;
    const auto b = ip.to_v4().to_bytes();
    std::memcpy(a.bytes + 3, b.data(), b.size());
  } else {
    a.size = kV6Size;
    a.bytes[0] = 6;
    const asio::ip::address_v6 v6 = ip.to_v6();
    const auto b = v6.to_bytes();
    std::memcpy(a.bytes + 3, b.data(), b.size());
    const unsigned long scope = v6.scope_id();
    for (int i = 0; i < 4; ++i) a.bytes[19 + i] = static_cast<uint8_t>(scope >> (8 * i));
  }
  return a;
}

bool to_udp_endpoint(const PeerAddress& address, asio::ip::udp::endpoint* out) noexcept {
  const uint16_t port = static_cast<uint16_t>((address.bytes[1] << 8) | address.bytes[2]);
  if (address.size == kV4Size && address.bytes[0] == 4) {
    asio::ip::address_v4::bytes_type b;
    std::memcpy(b.data(), address.bytes + 3, b.size());
    *out = asio::ip::udp::endpoint(asio::ip::address_v4(b), port);
    return true;
  }
  if (address.size == kV6Size && address.bytes[0] == 6) {
    asio::ip::address_v6::bytes_type b;
    std::memcpy(b.data(), address.bytes + 3, b.size());
    asio::ip::scope_id_type scope = 0;
    for (int i = 0; i < 4; ++i) {
      scope |= static_cast<asio::ip::scope_id_type>(address.bytes[19 + i]) << (8 * i);
    }
    *out = asio::ip::udp::endpoint(asio::ip::address_v6(b, scope), port);
    return true;
  }
  return false;
}

}  // namespace detail

Result make_ip_address(const char* host, uint16_t port, PeerAddress* out) noexcept {
  if (host == nullptr || out == nullptr) return Result::invalid_argument;
  std::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(host, ec);
  if (ec) return Result::invalid_argument;
  *out = detail::to_peer_address(asio::ip::udp::endpoint(ip, port));
  return Result::ok;
}

uint16_t ip_address_port(const PeerAddress& address) noexcept {
  asio::ip::udp::endpoint ep;
  return detail::to_udp_endpoint(address, &ep) ? ep.port() : 0;
}

size_t format_ip_address(const PeerAddress& address, char* buffer, size_t capacity) noexcept {
  asio::ip::udp::endpoint ep;
  if (buffer == nullptr || capacity == 0 || !detail::to_udp_endpoint(address, &ep)) return 0;
  // address::to_string() allocates; the platform's inet_ntop through asio's detail does not.
  char text[64];
  std::error_code ec;
  const asio::ip::address ip = ep.address();
  int n = 0;
  if (ip.is_v4()) {
    const auto b = ip.to_v4().to_bytes();
    n = std::snprintf(buffer, capacity, "%u.%u.%u.%u:%u", b[0], b[1], b[2], b[3], ep.port());
  } else {
    const auto b = ip.to_v6().to_bytes();
    const char* s = asio::detail::socket_ops::inet_ntop(AF_INET6, b.data(), text, sizeof text,
                                                        ip.to_v6().scope_id(), ec);
    if (s == nullptr) return 0;
    n = std::snprintf(buffer, capacity, "[%s]:%u", text, ep.port());
  }
  if (n < 0) return 0;
  return size_t(n) < capacity ? size_t(n) : capacity - 1;
}

}  // namespace retcon
