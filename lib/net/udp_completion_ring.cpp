// UdpCompletionRing: raw io_uring system calls (no liburing), the kernel's own header only.
// See udp_completion_ring.h for why and when.
// Without io_uring the class keeps its one layout (its members are never used here, which
// clang's unused-private-field warning would flag: every member function is defined below).
#if defined(__clang__) && !defined(RETCON_HAVE_IO_URING)
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif
#include "net/udp_completion_ring.h"

#if defined(RETCON_HAVE_IO_URING)
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace retcon::detail {

#if defined(RETCON_HAVE_IO_URING)
namespace {

constexpr unsigned kSqEntries = 4;
constexpr unsigned kCqEntries = 4 * UdpCompletionRing::kSlots;  // a completion per slot, and room
constexpr uint16_t kBufferGroup = 0;
// The sender's address: room for IPv6 (what asio's endpoints hold). A longer name is cut.
constexpr socklen_t kNameSize = sizeof(sockaddr_in6);
constexpr size_t kPayloadOffset = sizeof(io_uring_recvmsg_out) + kNameSize;
constexpr size_t kSlotBytes = (kPayloadOffset + UdpCompletionRing::kPayloadSize + 63) / 64 * 64;
static_assert((UdpCompletionRing::kSlots & (UdpCompletionRing::kSlots - 1)) == 0, "ring size");

int sys_setup(unsigned entries, io_uring_params* p) {
  return int(::syscall(__NR_io_uring_setup, entries, p));
}
int sys_enter(int fd, unsigned submit, unsigned wait, unsigned flags) {
  return int(::syscall(__NR_io_uring_enter, fd, submit, wait, flags, nullptr, size_t{0}));
}
int sys_register(int fd, unsigned op, void* arg, unsigned count) {
  return int(::syscall(__NR_io_uring_register, fd, op, arg, count));
}
void* map(size_t size, int fd, off_t offset) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, offset);
  return p == MAP_FAILED ? nullptr : p;
}
void* map_anonymous(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
template <class T>
T* at(void* base, unsigned offset) {
  return reinterpret_cast<T*>(static_cast<uint8_t*>(base) + offset);
}

}  // namespace

UdpCompletionRing::~UdpCompletionRing() { close(); }

bool UdpCompletionRing::open(int fd) noexcept {
  io_uring_params p{};
  p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_CQSIZE;
  p.cq_entries = kCqEntries;
  ring_fd_ = sys_setup(kSqEntries, &p);  // refused (ENOSYS, EPERM) or too old a kernel (EINVAL)
  if (ring_fd_ < 0) {
    ring_fd_ = -1;
    return false;
  }
  socket_fd_ = fd;
  sq_ring_size_ = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  cq_ring_size_ = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
  const bool single = (p.features & IORING_FEAT_SINGLE_MMAP) != 0;
  if (single) sq_ring_size_ = cq_ring_size_ = sq_ring_size_ > cq_ring_size_ ? sq_ring_size_ : cq_ring_size_;
  sq_ring_ = map(sq_ring_size_, ring_fd_, IORING_OFF_SQ_RING);
  if (sq_ring_ != nullptr) cq_ring_ = single ? sq_ring_ : map(cq_ring_size_, ring_fd_, IORING_OFF_CQ_RING);
  sqes_size_ = p.sq_entries * sizeof(io_uring_sqe);
  sqes_ = map(sqes_size_, ring_fd_, IORING_OFF_SQES);
  buffers_size_ = kSlots * sizeof(io_uring_buf) + kSlots * kSlotBytes;
  buffer_ring_ = map_anonymous(buffers_size_);  // page-aligned, as the kernel wants the ring
  if (sq_ring_ == nullptr || cq_ring_ == nullptr || sqes_ == nullptr || buffer_ring_ == nullptr) {
    close();
    return false;
  }
  buffers_ = static_cast<uint8_t*>(buffer_ring_) + kSlots * sizeof(io_uring_buf);
  sq_head_ = at<unsigned>(sq_ring_, p.sq_off.head);
  sq_tail_ = at<unsigned>(sq_ring_, p.sq_off.tail);
  sq_mask_ = *at<unsigned>(sq_ring_, p.sq_off.ring_mask);
  sq_flags_ = at<unsigned>(sq_ring_, p.sq_off.flags);
  sq_array_ = at<unsigned>(sq_ring_, p.sq_off.array);
  cq_head_ = at<unsigned>(cq_ring_, p.cq_off.head);
  cq_tail_ = at<unsigned>(cq_ring_, p.cq_off.tail);
  cq_mask_ = *at<unsigned>(cq_ring_, p.cq_off.ring_mask);
  cqes_ = at<void>(cq_ring_, p.cq_off.cqes);

  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(buffer_ring_);
  reg.ring_entries = kSlots;
  reg.bgid = kBufferGroup;
  for (unsigned i = 0; i < kSlots; ++i) {
    held_ = int(i);
    release();
  }
  if (sys_register(ring_fd_, IORING_REGISTER_PBUF_RING, &reg, 1) != 0) {  // before 5.19
    close();
    return false;
  }
  template_.msg_namelen = kNameSize;
  // The first arm says whether this kernel has multishot recvmsg (6.0): an older one fails the
  // request at once (EINVAL); the socket is empty, so a working one posts nothing yet.
  if (!arm()) {
    close();
    return false;
  }
  const unsigned head = *cq_head_;
  if (head != __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE)) {
    const auto* cqe = static_cast<const io_uring_cqe*>(cqes_) + (head & cq_mask_);
    if (cqe->res < 0 && (cqe->flags & IORING_CQE_F_MORE) == 0) {
      close();
      return false;
    }
  }
  system_calls_ = 0;  // open's setup is not a poll's cost
  return true;
}

bool UdpCompletionRing::enter(unsigned submit, unsigned wait) noexcept {
  ++system_calls_;
  // GETEVENTS also runs the task work that posts what the kernel has flagged.
  int r;
  do {
    r = sys_enter(ring_fd_, submit, wait, IORING_ENTER_GETEVENTS);
  } while (r < 0 && errno == EINTR);
  return r >= 0;
}

bool UdpCompletionRing::arm() noexcept {
  if (armed_) {
    // Another thread polls now: the old receive's completions would be posted by the thread
    // that armed it, whenever that one enters the kernel. Cancel it (synchronously) and arm
    // anew from this thread.
    io_uring_sync_cancel_reg cancel{};
    cancel.addr = generation_;
    cancel.fd = -1;
    cancel.timeout.tv_sec = -1;
    cancel.timeout.tv_nsec = -1;
    ++system_calls_;
    (void)sys_register(ring_fd_, IORING_REGISTER_SYNC_CANCEL, &cancel, 1);
    armed_ = false;
  }
  const unsigned tail = *sq_tail_;
  const unsigned index = tail & sq_mask_;
  io_uring_sqe* sqe = static_cast<io_uring_sqe*>(sqes_) + index;
  std::memset(sqe, 0, sizeof *sqe);
  sqe->opcode = IORING_OP_RECVMSG;
  sqe->fd = socket_fd_;
  sqe->addr = reinterpret_cast<uint64_t>(&template_);
  sqe->len = 1;
  sqe->flags = IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufferGroup;
  sqe->ioprio = IORING_RECV_MULTISHOT;
  sqe->user_data = ++generation_;
  sq_array_[index] = index;
  __atomic_store_n(sq_tail_, tail + 1, __ATOMIC_RELEASE);
  // Submitted inline: what is already waiting in the socket is posted before this returns.
  if (!enter(1, 0)) {
    __atomic_store_n(sq_tail_, tail, __ATOMIC_RELEASE);  // not consumed: take it back
    return false;
  }
  armed_ = true;
  armed_by_ = pthread_self();
  return true;
}

bool UdpCompletionRing::next(Datagram* out, uint64_t* errors) noexcept {
  if (held_ >= 0) release();
  if (!pthread_equal(pthread_self(), armed_by_) && !arm()) return false;
  bool entered = false;
  for (int step = 0; step < 8; ++step) {
    const unsigned head = *cq_head_;
    if (head != __atomic_load_n(cq_tail_, __ATOMIC_ACQUIRE)) {
      const auto* cqe = static_cast<const io_uring_cqe*>(cqes_) + (head & cq_mask_);
      const uint64_t user_data = cqe->user_data;
      const int32_t res = cqe->res;
      const uint32_t flags = cqe->flags;
      __atomic_store_n(cq_head_, head + 1, __ATOMIC_RELEASE);
      // A receive cancelled at a change of thread may have posted datagrams before its end:
      // they are handed out like the others; only its end is no news.
      const bool current = user_data == generation_;
      if (current && (flags & IORING_CQE_F_MORE) == 0) armed_ = false;  // ended: re-armed below
      if (res >= 0 && (flags & IORING_CQE_F_BUFFER) != 0) {
        const unsigned id = flags >> IORING_CQE_BUFFER_SHIFT;
        if (id >= kSlots) continue;  // never from a sane kernel: skip, do not trust
        uint8_t* slot = buffers_ + size_t(id) * kSlotBytes;
        io_uring_recvmsg_out header;
        std::memcpy(&header, slot, sizeof header);
        held_ = int(id);
        out->data = slot + kPayloadOffset;
        out->length = size_t(res) > kPayloadOffset ? size_t(res) - kPayloadOffset : 0;
        out->name = reinterpret_cast<const sockaddr*>(slot + sizeof header);
        out->name_length = header.namelen < kNameSize ? socklen_t(header.namelen) : kNameSize;
        return true;
      }
      // ENOBUFS: a flood filled every slot before this poll (the rest waits in the socket,
      // the re-arm reads it). Anything else (an ICMP report with IP_RECVERR, ...) is counted.
      if (!current) continue;
      if (res < 0 && res != -ENOBUFS && res != -ECANCELED && res != -EINTR && res != -EAGAIN) ++*errors;
      continue;
    }
    if (!armed_) {
      if (!arm()) return false;
      continue;
    }
    // Nothing posted. The kernel says when it holds completions it has not posted yet (an
    // arrival since this thread last left the kernel): have them posted now, once.
    const unsigned sq_flags = __atomic_load_n(sq_flags_, __ATOMIC_ACQUIRE);
    if (!entered && (sq_flags & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)) != 0) {
      entered = true;
      if (!enter(0, 0)) return false;
      continue;
    }
    return false;
  }
  return false;
}

void UdpCompletionRing::release() noexcept {
  if (held_ < 0) return;
  // Not io_uring_buf_ring::bufs: in C++ its flexible array sits behind an empty struct of size
  // 1, i.e. 8 bytes off. The entries start at the ring; the tail overlays the first one's resv.
  io_uring_buf& b = static_cast<io_uring_buf*>(buffer_ring_)[buffer_tail_ & (kSlots - 1)];
  b.addr = reinterpret_cast<uint64_t>(buffers_ + size_t(held_) * kSlotBytes);
  b.len = uint32_t(kSlotBytes);
  b.bid = uint16_t(held_);  // never b.resv: the first entry's resv is the ring's tail
  ++buffer_tail_;
  __atomic_store_n(&static_cast<io_uring_buf*>(buffer_ring_)->resv, buffer_tail_, __ATOMIC_RELEASE);
  held_ = -1;
}

void UdpCompletionRing::close() noexcept {
  if (ring_fd_ >= 0 && armed_) {
    // Cancel the receive before its buffers go: the ring's own teardown runs later, async.
    io_uring_sync_cancel_reg cancel{};
    cancel.addr = generation_;
    cancel.fd = -1;
    cancel.timeout.tv_sec = -1;
    cancel.timeout.tv_nsec = -1;
    (void)sys_register(ring_fd_, IORING_REGISTER_SYNC_CANCEL, &cancel, 1);
    armed_ = false;
  }
  if (ring_fd_ >= 0) ::close(ring_fd_);
  ring_fd_ = -1;
  if (sqes_ != nullptr) ::munmap(sqes_, sqes_size_);
  if (cq_ring_ != nullptr && cq_ring_ != sq_ring_) ::munmap(cq_ring_, cq_ring_size_);
  if (sq_ring_ != nullptr) ::munmap(sq_ring_, sq_ring_size_);
  if (buffer_ring_ != nullptr) ::munmap(buffer_ring_, buffers_size_);
  sqes_ = cq_ring_ = sq_ring_ = buffer_ring_ = nullptr;
  buffers_ = nullptr;
  held_ = -1;
}

#else  // no io_uring in this build: the transport keeps its receive calls

UdpCompletionRing::~UdpCompletionRing() = default;
bool UdpCompletionRing::open(int) noexcept { return false; }
bool UdpCompletionRing::next(Datagram*, uint64_t*) noexcept { return false; }
void UdpCompletionRing::release() noexcept {}
bool UdpCompletionRing::arm() noexcept { return false; }
bool UdpCompletionRing::enter(unsigned, unsigned) noexcept { return false; }
void UdpCompletionRing::close() noexcept {}

#endif

}  // namespace retcon::detail
