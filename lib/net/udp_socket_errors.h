// What UdpTransport does with an error from a socket call. One place for both receive paths
// (Linux recvmmsg, receive_from elsewhere) and for sends, so it is tested directly on every
// platform (tests/net/udp_socket_errors_test.cpp) whatever the local OS reports.
//
// Why it matters: a UDP socket reports an ICMP port unreachable (the peer's game has closed)
// as an error on a LATER call of the same socket: WSAECONNRESET on Windows (unless
// SIO_UDP_CONNRESET is off; UdpTransport::open switches it off, best effort), ECONNREFUSED on
// Linux (only with IP_RECVERR or a connected socket; UdpTransport has neither). Such an error
// says nothing about the call it comes back from: a receive goes on to the datagrams waiting,
// a send is made again, and the socket keeps working for every other peer.
#pragma once

#include <cstdint>
#include <system_error>

namespace retcon::detail {

enum class SocketOutcome {
  done,             // a datagram (or a batch of them) went out or came in
  nothing_waiting,  // a receive found nothing (would block): the poll is over
  interrupted,      // a signal interrupted the call: just call again, nothing to count
  earlier_report,   // an ICMP report about an earlier datagram (port unreachable): not this call's
  failed,           // anything else (unreachable network, full buffer, ...)
};

// The error code of a socket call, as asio gives it and as `std::error_code(errno or
// WSAGetLastError(), std::system_category())` makes it. No error: done.
SocketOutcome classify_socket_error(const std::error_code& error) noexcept;

// Socket calls one receive() or send() makes at most before giving up for this call: the errors
// come one per earlier datagram, so a run of them is bounded, but never loop on a socket that
// fails every call.
constexpr int kMaxSocketAttempts = 8;

// Receives past the errors: calls `attempt` (returning a SocketOutcome) until something came in
// (true) or nothing is waiting (false). Reports and failures are counted in *errors and skipped;
// after kMaxSocketAttempts calls it returns false, and the next poll goes on.
template <class Attempt>
bool receive_past_errors(Attempt&& attempt, uint64_t* errors) {
  for (int i = 0; i < kMaxSocketAttempts; ++i) {
    switch (attempt()) {
      case SocketOutcome::done: return true;
      case SocketOutcome::nothing_waiting: return false;
      case SocketOutcome::interrupted: break;
      case SocketOutcome::earlier_report:
      case SocketOutcome::failed: ++*errors; break;
    }
  }
  return false;
}

// Sends past the reports about earlier datagrams: calls `attempt` again while it was interrupted
// or answered with such a report (the datagram did not go out, and the report is used up by
// saying it). true: it went out. false: it failed (the caller counts and drops it, as UDP may).
template <class Attempt>
bool send_past_reports(Attempt&& attempt) {
  for (int i = 0; i < kMaxSocketAttempts; ++i) {
    switch (attempt()) {
      case SocketOutcome::done: return true;
      case SocketOutcome::interrupted:
      case SocketOutcome::earlier_report: break;
      case SocketOutcome::nothing_waiting:  // a full send buffer: this datagram is lost
      case SocketOutcome::failed: return false;
    }
  }
  return false;
}

}  // namespace retcon::detail
