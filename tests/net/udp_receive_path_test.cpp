// UdpTransport's receive paths on loopback (port 0, no sleeping): the io_uring completion ring
// (Linux, where the kernel allows it) and the recvmmsg path it falls back to, each asked for
// explicitly; elsewhere both give one receive_from per datagram. Every test holds on every
// path; the system calls a poll costs are checked per path. The ring refused by seccomp is
// udp_ring_refused_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "retcon/transport.h"

#if defined(RETCON_HAVE_IO_URING)
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace retcon {
namespace {

using Path = UdpTransport::ReceivePath;

#if defined(__linux__)
// Whether this kernel lets a process set up an io_uring (the CI containers may refuse it).
bool kernel_allows_io_uring() {
#if defined(RETCON_HAVE_IO_URING)
  io_uring_params p{};
  p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  const long fd = ::syscall(__NR_io_uring_setup, 2, &p);
  if (fd < 0) return false;
  ::close(int(fd));
  return true;
#else
  return false;
#endif
}
#endif

// Polls that a datagram already sent may take to show up: on Linux loopback delivery happens
// inside the sender's call (softirq on the same CPU), elsewhere it is asynchronous. Bounded
// spinning either way, never sleeping.
constexpr int kPollsToArrive = 100000;

class UdpReceivePath : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &receiver, GetParam()), Result::ok);
    ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sender), Result::ok);
  }
  bool ring() const { return receiver->receive_path() == Path::completion_ring; }
  // What one poll of a session reads: receive() until false.
  std::vector<std::vector<uint8_t>> poll() {
    std::vector<std::vector<uint8_t>> got;
    uint8_t buffer[1500];
    size_t length = 0;
    PeerAddress from;
    while (receiver->receive(&from, buffer, sizeof buffer, &length)) {
      EXPECT_EQ(from, sender->local_address());
      got.emplace_back(buffer, buffer + length);
    }
    return got;
  }
  // Polls until something comes, at most kPollsToArrive times; *polls: how many it took.
  std::vector<std::vector<uint8_t>> poll_until_something(int* polls = nullptr) {
    std::vector<std::vector<uint8_t>> got;
    int i = 0;
    while (i < kPollsToArrive && got.empty()) {
      got = poll();
      ++i;
    }
    if (polls != nullptr) *polls = i;
    return got;
  }
  std::unique_ptr<UdpTransport> receiver, sender;
};

TEST_P(UdpReceivePath, TheRingIsUsedWhereTheKernelAllowsIt) {
#if defined(__linux__)
  const bool expect_ring = GetParam() == Path::completion_ring && kernel_allows_io_uring();
  EXPECT_EQ(receiver->receive_path(), expect_ring ? Path::completion_ring : Path::batched_calls);
#if defined(RETCON_HAVE_IO_URING)
  // Built in and allowed here: the ring path is what these tests exercise, not only the fallback.
  if (GetParam() == Path::completion_ring && kernel_allows_io_uring()) {
    EXPECT_TRUE(ring());
  }
#endif
#else
  EXPECT_EQ(receiver->receive_path(), Path::single_calls);
#endif
}

// The rule of every path: a datagram that arrived before a poll is read in that poll. Sent from
// another thread while this one spins on an atomic (no system call, so on the ring path the
// completion is still unposted, only flagged in the ring): the poll must have it posted, not
// leave it until this thread enters the kernel some other way. Loopback delivers inside the
// sender's call on Linux, so nearly every round is read in its first poll (an interrupt or a
// deferred softirq can make a round differ); without the flag check none would be.
TEST_P(UdpReceivePath, ADatagramThatArrivedBeforeAPollIsReadInThatPoll) {
  EXPECT_TRUE(poll().empty());
  constexpr int kRounds = 40;
  int first_poll = 0;
  for (uint8_t round = 0; round < kRounds; ++round) {
    const uint64_t calls = receiver->system_calls();
    std::atomic<bool> sent{false};
    std::thread other([&] {
      const uint8_t d[2] = {round, 9};
      EXPECT_EQ(sender->send(receiver->local_address(), d, sizeof d), Result::ok);
      sent.store(true, std::memory_order_release);
    });
    while (!sent.load(std::memory_order_acquire)) {
    }
    int polls = 0;
    const auto got = poll_until_something(&polls);
    other.join();
    ASSERT_EQ(got.size(), 1u) << "round " << int(round);
    EXPECT_EQ(got[0], (std::vector<uint8_t>{round, 9}));
    if (polls == 1) {
      ++first_poll;
#if defined(__linux__)
      // The ring: at most one io_uring_enter to have the flagged completion posted. recvmmsg:
      // one call, a short batch (nothing more waits).
      EXPECT_LE(receiver->system_calls(), calls + 1);
#endif
    }
    (void)calls;
  }
#if defined(__linux__)
  // A quarter, not nearly all: on a loaded machine (CI runs tests two at a time beside ASan
  // builds) the kernel may defer a round's delivery to ksoftirqd, and then it had not arrived
  // before the poll. Without the flag check no round at all is read in its first poll.
  EXPECT_GE(first_poll, kRounds / 4);
#endif
}

// A poll that finds nothing: no system call on the ring, one recvmmsg (or receive_from) else.
TEST_P(UdpReceivePath, AnEmptyPollCostsACallOnlyWithoutTheRing) {
  const uint64_t before = receiver->system_calls();
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(poll().empty());
  EXPECT_EQ(receiver->system_calls(), before + (ring() ? 0u : 10u));
}

// More datagrams than the ring has slots (64) before a poll: the kernel ends the receive when
// the slots run out; it is re-armed and the rest, waiting in the socket, comes in order.
TEST_P(UdpReceivePath, AFloodBeyondTheSlotsLosesNothingAndKeepsOrder) {
  sender->flush();  // sends are queued and go in sendmmsg batches from here on
  constexpr int kCount = 200;
  for (int i = 0; i < kCount; ++i) {
    const uint8_t d[3] = {uint8_t(i), uint8_t(i >> 8), 0x5a};
    ASSERT_EQ(sender->send(receiver->local_address(), d, sizeof d), Result::ok);
  }
  sender->flush();
  std::vector<std::vector<uint8_t>> got;
  for (int p = 0; p < 20 && got.size() < size_t(kCount); ++p) {
    const auto more = poll();
    got.insert(got.end(), more.begin(), more.end());
  }
  ASSERT_EQ(got.size(), size_t(kCount));
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(got[i], (std::vector<uint8_t>{uint8_t(i), uint8_t(i >> 8), 0x5a}));
  EXPECT_EQ(receiver->receive_errors(), 0u);
  EXPECT_TRUE(poll().empty());
}

// A transport opened on one thread and polled from another (a game that starts its loop on a
// worker): the ring's completions are posted by the thread that armed it, so the poll re-arms it
// from its own thread, and nothing waits for the opener (blocked in join here) to run.
TEST_P(UdpReceivePath, PolledFromAnotherThreadThanTheOpener) {
  std::vector<std::vector<uint8_t>> got;
  std::thread game([&] {
    for (uint8_t round = 0; round < 10; ++round) {
      const uint8_t d[1] = {round};
      ASSERT_EQ(sender->send(receiver->local_address(), d, 1), Result::ok);
      const auto more = poll_until_something();
      got.insert(got.end(), more.begin(), more.end());
    }
  });
  game.join();
  ASSERT_EQ(got.size(), 10u);
  for (uint8_t i = 0; i < 10; ++i) EXPECT_EQ(got[i], std::vector<uint8_t>{i});
  // Back on the opener's thread: still every datagram.
  const uint8_t last = 77;
  ASSERT_EQ(sender->send(receiver->local_address(), &last, 1), Result::ok);
  const auto more = poll_until_something();
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0], std::vector<uint8_t>{77});
}

// Longer than the 2048 bytes a slot holds: truncated to what the caller's buffer takes, as UDP
// truncates, on every path.
TEST_P(UdpReceivePath, ALongDatagramIsTruncatedNotDropped) {
  std::vector<uint8_t> big(3000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 7);
  ASSERT_EQ(sender->send(receiver->local_address(), big.data(), big.size()), Result::ok);
  uint8_t buffer[4096];
  size_t length = 0;
  PeerAddress from;
  bool received = false;
  for (int i = 0; i < 1000000 && !received; ++i) received = receiver->receive(&from, buffer, sizeof buffer, &length);
  ASSERT_TRUE(received);
  ASSERT_GE(length, 1200u);  // at least the protocol's largest datagram
  ASSERT_LE(length, big.size());
  EXPECT_EQ(0, std::memcmp(buffer, big.data(), length));
}

INSTANTIATE_TEST_SUITE_P(Paths, UdpReceivePath, ::testing::Values(Path::completion_ring, Path::batched_calls),
                         [](const ::testing::TestParamInfo<Path>& p) {
                           return p.param == Path::completion_ring ? "ring_preferred" : "calls";
                         });

}  // namespace
}  // namespace retcon
