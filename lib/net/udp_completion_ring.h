// UdpTransport's receive path through an io_uring completion ring (Linux, when the build found
// <linux/io_uring.h> with what it needs: RETCON_HAVE_IO_URING).
//
// Why: a non-blocking recvmmsg per poll is a system call even when nothing came (at 60 fps
// over a link that sends ~0.6 datagrams per frame, about 4 polls in 10). Here one multishot
// IORING_OP_RECVMSG, armed once, receives every datagram into a provided buffer ring and posts
// a completion per datagram into memory this process reads without a system call. The ring is
// set up with IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG: the kernel posts the
// completions whenever the thread that armed the receive enters the kernel anyway (its frame
// pacing sleep, the tick's sendmmsg), and until then sets IORING_SQ_TASKRUN in the ring, which
// next() checks: a datagram that arrived before a poll is always read in that poll (one
// io_uring_enter then), never left for the next one.
//
// The completions are posted in the context of the thread that armed the receive, so next()
// re-arms it (cancel + arm, one call) when it is called from another thread than last time.
//
// open() returns false where io_uring is not there or is refused (seccomp in containers,
// kernel.io_uring_disabled, kernels before 6.0 without multishot recvmsg): the transport then
// keeps its recvmmsg path. Memory is fixed at open; nothing is allocated per datagram.
#pragma once

#include <pthread.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

namespace retcon::detail {

class UdpCompletionRing {
 public:
  UdpCompletionRing() = default;
  ~UdpCompletionRing();
  UdpCompletionRing(const UdpCompletionRing&) = delete;
  UdpCompletionRing& operator=(const UdpCompletionRing&) = delete;

  // Sets up the ring and arms the receive on `fd` (a bound, non-blocking UDP socket). false:
  // unavailable here (nothing is left open; the caller uses its own receive calls).
  bool open(int fd) noexcept;
  bool active() const noexcept { return ring_fd_ >= 0; }

  struct Datagram {
    const uint8_t* data;
    size_t length;     // bytes at data (a longer datagram was truncated to the slot)
    const sockaddr* name;
    socklen_t name_length;
  };
  // The next datagram that arrived, or false when none is waiting. Makes a system call only to
  // have the kernel post completions it has flagged, or to re-arm the receive (after a flood
  // used up every buffer, an error, or a change of thread). Errors reported by the receive are
  // counted in *errors. The datagram stays valid until release().
  bool next(Datagram* out, uint64_t* errors) noexcept;
  // Gives the buffer of the datagram next() returned back to the kernel.
  void release() noexcept;

  // io_uring_enter calls made since open (not counting open's own setup calls).
  uint64_t system_calls() const noexcept { return system_calls_; }

  static constexpr unsigned kSlots = 64;          // datagrams the kernel can hold for a poll
  static constexpr size_t kPayloadSize = 2048;    // above the protocol's 1200
 private:
  bool arm() noexcept;        // submits a multishot receive of a new generation
  bool enter(unsigned submit, unsigned wait) noexcept;
  void close() noexcept;

  int ring_fd_ = -1;
  int socket_fd_ = -1;
  uint64_t system_calls_ = 0;
  // The rings (mmap'ed from the kernel) and the provided buffers.
  void* sq_ring_ = nullptr;
  size_t sq_ring_size_ = 0;
  void* cq_ring_ = nullptr;
  size_t cq_ring_size_ = 0;
  void* sqes_ = nullptr;
  size_t sqes_size_ = 0;
  void* buffer_ring_ = nullptr;  // struct io_uring_buf_ring, kSlots entries
  uint8_t* buffers_ = nullptr;   // kSlots slots: io_uring_recvmsg_out, name, payload
  size_t buffers_size_ = 0;
  unsigned* sq_head_ = nullptr;
  unsigned* sq_tail_ = nullptr;
  unsigned* sq_flags_ = nullptr;
  unsigned* sq_array_ = nullptr;
  unsigned sq_mask_ = 0;
  unsigned* cq_head_ = nullptr;
  unsigned* cq_tail_ = nullptr;
  unsigned cq_mask_ = 0;
  void* cqes_ = nullptr;
  uint16_t buffer_tail_ = 0;
  // The receive: its generation (the completions' user_data; completions of an older one,
  // cancelled at a change of thread, are skipped), whether it is armed, and by which thread.
  uint64_t generation_ = 0;
  bool armed_ = false;
  pthread_t armed_by_{};        // the thread that armed it
  int held_ = -1;               // the buffer next() handed out, until release()
  struct msghdr template_ {};   // the receive's msghdr: name length, no control, no iovec
};

}  // namespace retcon::detail
