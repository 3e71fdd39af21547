// retcon_udp_floor: what the kernel alone charges for one datagram over loopback, paced like a
// game. The UDP row of retcon_perf times the library's calls at 60 fps; on a virtual machine
// that sleeps between ticks most of that time is the first system calls after the wake-up
// (cold caches, the host's mitigations on re-entry), which no library can avoid. This program
// does the least a networked tick can: one 22-byte sendto and the matching recv between two
// loopback sockets, with no retcon code at all, (a) paced at 60 fps like the UDP row and (b)
// back to back, and prints the thread CPU time of each.
//
//   retcon_udp_floor [TICKS]   default 600 (~10 s)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

class LoopbackPair {
 public:
  bool open() {
    for (int& s : sockets_) {
      s = socket(AF_INET, SOCK_DGRAM, 0);
      if (s < 0) return false;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;  // any free port: never a fixed one
    if (bind(sockets_[1], reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
    socklen_t length = sizeof to_;
    return getsockname(sockets_[1], reinterpret_cast<sockaddr*>(&to_), &length) == 0;
  }
  ~LoopbackPair() {
    for (int s : sockets_)
      if (s >= 0) close(s);
  }
  // One datagram out and back in: the kernel's whole share of a datagram on one machine.
  bool round() {
    uint8_t datagram[22] = {1};
    if (sendto(sockets_[0], datagram, sizeof datagram, 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_) < 0)
      return false;
    uint8_t buffer[64];
    return recv(sockets_[1], buffer, sizeof buffer, 0) == ssize_t(sizeof datagram);
  }

 private:
  int sockets_[2] = {-1, -1};
  sockaddr_in to_{};
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int ticks = argc > 1 ? std::max(10, std::atoi(argv[1])) : 600;
  LoopbackPair pair;
  if (!pair.open()) {
    std::fprintf(stderr, "udp_floor: cannot open loopback sockets\n");
    return 1;
  }
  constexpr auto kTick = std::chrono::microseconds(16667);
  std::vector<double> paced, hot;
  auto next = std::chrono::steady_clock::now();
  for (int t = 0; t < ticks; ++t) {
    next += kTick;
    std::this_thread::sleep_until(next);
    double t0 = thread_cpu_ns();
    if (!pair.round()) return 1;
    paced.push_back(thread_cpu_ns() - t0);
    // The same again at once: everything is warm now.
    t0 = thread_cpu_ns();
    if (!pair.round()) return 1;
    hot.push_back(thread_cpu_ns() - t0);
  }
  std::printf("scenario=udp_floor ticks=%d paced_ns_per_datagram=%.0f hot_ns_per_datagram=%.0f\n", ticks,
              median(paced), median(hot));
  return 0;
}
