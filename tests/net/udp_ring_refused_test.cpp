// UdpTransport where io_uring is refused, as Docker's default seccomp profile and many CI
// containers refuse it: before any test runs, this process installs a seccomp filter that
// answers io_uring_setup with EPERM. The transport must fall back to recvmmsg at run time and
// work as before (ports bound to 0 on loopback, no sleeping). Linux only.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <thread>

#include "retcon/transport.h"

namespace retcon {
namespace {

bool refuse_io_uring() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}
// Before main(), so before gtest or any transport.
const bool g_refused = refuse_io_uring();

TEST(UdpRingRefused, TheFilterRefusesIoUringSetup) {
  ASSERT_TRUE(g_refused);
  errno = 0;
  EXPECT_EQ(::syscall(__NR_io_uring_setup, 2, nullptr), -1);
  EXPECT_EQ(errno, EPERM);
}

TEST(UdpRingRefused, FallsBackToRecvmmsgAndWorks) {
  ASSERT_TRUE(g_refused);
  std::unique_ptr<UdpTransport> a, b;
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &a), Result::ok);  // prefers the ring
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &b), Result::ok);
  EXPECT_EQ(a->receive_path(), UdpTransport::ReceivePath::batched_calls);
  EXPECT_EQ(b->receive_path(), UdpTransport::ReceivePath::batched_calls);
  uint8_t buffer[1500];
  size_t length = 0;
  PeerAddress from;
  const uint64_t before = b->system_calls();
  EXPECT_FALSE(b->receive(&from, buffer, sizeof buffer, &length));
  EXPECT_EQ(b->system_calls(), before + 1);  // an empty poll: one recvmmsg
  for (uint8_t round = 0; round < 10; ++round) {
    const uint8_t d[2] = {round, 3};
    ASSERT_EQ(a->send(b->local_address(), d, sizeof d), Result::ok);
    bool received = false;
    for (int i = 0; i < 1000000 && !received; ++i) received = b->receive(&from, buffer, sizeof buffer, &length);
    ASSERT_TRUE(received) << "round " << int(round);
    ASSERT_EQ(length, 2u);
    EXPECT_EQ(buffer[0], round);
    EXPECT_EQ(from, a->local_address());
    EXPECT_FALSE(b->receive(&from, buffer, sizeof buffer, &length));  // a short batch: done
  }
}

}  // namespace
}  // namespace retcon
