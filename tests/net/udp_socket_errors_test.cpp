// UdpTransport's socket-error rules (net/udp_socket_errors.h) with the platform's own error
// values, as the socket calls return them: Winsock codes in the Windows build (run under Wine,
// which never reports an ICMP port unreachable itself), errno values on Linux. The real-socket
// side is in udp_test.cpp (UdpTransport.PortUnreachableReportsLoseNothing).
#include <gtest/gtest.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "net/udp_socket_errors.h"

#if defined(_WIN32)
#include <winsock2.h>
#endif

namespace retcon::detail {
namespace {

std::error_code native(int value) { return std::error_code(value, std::system_category()); }

TEST(UdpSocketErrors, PortUnreachableIsAReportAboutAnEarlierDatagram) {
  EXPECT_EQ(classify_socket_error(std::error_code()), SocketOutcome::done);
#if defined(_WIN32)
  EXPECT_EQ(classify_socket_error(native(WSAECONNRESET)), SocketOutcome::earlier_report);
  EXPECT_EQ(classify_socket_error(native(WSAECONNREFUSED)), SocketOutcome::earlier_report);
  EXPECT_EQ(classify_socket_error(native(WSAENETRESET)), SocketOutcome::earlier_report);
  EXPECT_EQ(classify_socket_error(native(WSAEWOULDBLOCK)), SocketOutcome::nothing_waiting);
  EXPECT_EQ(classify_socket_error(native(WSAEINTR)), SocketOutcome::interrupted);
  EXPECT_EQ(classify_socket_error(native(WSAENETUNREACH)), SocketOutcome::failed);
  EXPECT_EQ(classify_socket_error(native(WSAENOBUFS)), SocketOutcome::failed);
#else
  EXPECT_EQ(classify_socket_error(native(ECONNREFUSED)), SocketOutcome::earlier_report);
  EXPECT_EQ(classify_socket_error(native(ECONNRESET)), SocketOutcome::earlier_report);
  EXPECT_EQ(classify_socket_error(native(EAGAIN)), SocketOutcome::nothing_waiting);
  EXPECT_EQ(classify_socket_error(native(EWOULDBLOCK)), SocketOutcome::nothing_waiting);
  EXPECT_EQ(classify_socket_error(native(EINTR)), SocketOutcome::interrupted);
  EXPECT_EQ(classify_socket_error(native(ENETUNREACH)), SocketOutcome::failed);
  EXPECT_EQ(classify_socket_error(native(ENOBUFS)), SocketOutcome::failed);
#endif
}

// A scripted socket: each call returns the next outcome, then "nothing waiting".
struct ScriptedSocket {
  std::vector<SocketOutcome> script;
  size_t calls = 0;
  SocketOutcome operator()() {
    return calls < script.size() ? script[calls++] : (++calls, SocketOutcome::nothing_waiting);
  }
};

// What Windows does to a socket with SIO_UDP_CONNRESET on, after three datagrams to a closed
// port: three receives fail with WSAECONNRESET, then the peer's datagram comes in.
TEST(UdpSocketErrors, AReceiveGoesOnPastReportsToTheDatagramWaiting) {
  const SocketOutcome report = classify_socket_error(native(
#if defined(_WIN32)
      WSAECONNRESET
#else
      ECONNREFUSED
#endif
      ));
  ScriptedSocket socket{{report, report, SocketOutcome::interrupted, report, SocketOutcome::done}};
  uint64_t errors = 0;
  EXPECT_TRUE(receive_past_errors(socket, &errors));
  EXPECT_EQ(socket.calls, 5u);
  EXPECT_EQ(errors, 3u);  // counted, not fatal; the interruption is not an error
  EXPECT_FALSE(receive_past_errors(socket, &errors));  // then nothing is waiting
  EXPECT_EQ(errors, 3u);
}

// A socket failing every call does not hold the game thread: the receive gives up after
// kMaxSocketAttempts calls, and the next poll reaches the datagram behind the errors.
TEST(UdpSocketErrors, ARunOfErrorsEndsThePollNotTheSocket) {
  ScriptedSocket socket;
  socket.script.assign(kMaxSocketAttempts + 2, SocketOutcome::failed);
  socket.script.push_back(SocketOutcome::done);
  uint64_t errors = 0;
  EXPECT_FALSE(receive_past_errors(socket, &errors));
  EXPECT_EQ(errors, uint64_t(kMaxSocketAttempts));
  EXPECT_TRUE(receive_past_errors(socket, &errors));
  EXPECT_EQ(errors, uint64_t(kMaxSocketAttempts) + 2);
}

// A send answered with a report about an earlier datagram is made again: this one goes out.
// A real failure (or a full buffer) is not retried: the caller counts and drops it.
TEST(UdpSocketErrors, ASendRetriesReportsButNotFailures) {
  ScriptedSocket reported{{SocketOutcome::earlier_report, SocketOutcome::interrupted, SocketOutcome::done}};
  EXPECT_TRUE(send_past_reports(reported));
  EXPECT_EQ(reported.calls, 3u);
  ScriptedSocket failing{{SocketOutcome::failed, SocketOutcome::done}};
  EXPECT_FALSE(send_past_reports(failing));
  EXPECT_EQ(failing.calls, 1u);
  ScriptedSocket full{{SocketOutcome::nothing_waiting, SocketOutcome::done}};
  EXPECT_FALSE(send_past_reports(full));
  EXPECT_EQ(full.calls, 1u);
  ScriptedSocket always_reporting;
  always_reporting.script.assign(kMaxSocketAttempts + 1, SocketOutcome::earlier_report);
  EXPECT_FALSE(send_past_reports(always_reporting));  // bounded
  EXPECT_EQ(always_reporting.calls, size_t(kMaxSocketAttempts));
}

}  // namespace
}  // namespace retcon::detail
