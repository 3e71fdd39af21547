// Socket errors by kind (udp_socket_errors.h). asio's error values are the platform's own
// (errno on Linux, WSA codes on Windows), so this is one comparison list for every platform.
#include "net/udp_socket_errors.h"

#include <asio/error.hpp>

namespace retcon::detail {

SocketOutcome classify_socket_error(const std::error_code& error) noexcept {
  if (!error) return SocketOutcome::done;
  // asio reports socket errors in its own "asio.system" category, errno and WSAGetLastError()
  // are std::system_category(): the same native values in both.
  if (error.category() != asio::error::get_system_category() && error.category() != std::system_category()) {
    return SocketOutcome::failed;
  }
  const int value = error.value();
  if (value == asio::error::would_block || value == asio::error::try_again) return SocketOutcome::nothing_waiting;
  if (value == asio::error::interrupted) return SocketOutcome::interrupted;
  // Port unreachable: ECONNREFUSED on Linux; WSAECONNRESET on Windows (asio also turns
  // ERROR_PORT_UNREACHABLE into connection_refused). WSAENETRESET: the ICMP "TTL expired" report.
  if (value == asio::error::connection_refused || value == asio::error::connection_reset ||
      value == asio::error::network_reset) {
    return SocketOutcome::earlier_report;
  }
  return SocketOutcome::failed;
}

}  // namespace retcon::detail
