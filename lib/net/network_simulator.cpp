// retcon: NetworkSimulator. Each direction decides a datagram's fate when it enters the link
// (blackout, loss, bandwidth backlog, delay, duplicate), then holds it in a DelayLine until due.
//
// Under a flood the simulator stays bounded: it reads at most `receive_budget` datagrams from
// the inner transport per poll (a poll ends when receive() returns false), leaving the rest
// waiting in the inner transport for the next one, and holds at most `capacity` datagrams per
// direction (beyond that a datagram is a counted drop). Once the inner transport has said
// "nothing more" in a poll it is not asked again until the next one, so its own budgets (a
// UdpTransport's datagram and time budgets) hold through the simulator too.
//
// The time budget ends a poll that has run `receive_time_budget_us` of wall-clock time, the
// caller's work on each datagram included. The clock is read at the first datagram of a poll
// and then every 32 datagrams read or handed out, never per datagram; a poll of fewer than 32
// never looks at it, so ordinary traffic stays the same for the same seed, and only a flood's
// run can depend on how fast the machine is. Time spent reading ends the reading, not the poll:
// what is due still goes out, up to the next look at the clock. Where reads are slow (Winsock
// under Wine: one system call each) a flood used to spend every poll's time reading, and
// nothing ever came out of the simulator again.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "net/delay_line.h"
#include "net/random.h"
#include "retcon/transport.h"

namespace retcon {

namespace {

// Large enough for any UDP datagram the inner transport could hand us.
constexpr size_t kScratchSize = 65536;
// Datagrams (read or handed out) between two looks at the clock.
constexpr size_t kClockStride = 32;

bool in_blackout(const LinkProfile& p, uint64_t now) noexcept {
  for (const BlackoutWindow& w : p.blackouts) {
    if (now >= w.start_us && now < w.end_us) return true;
  }
  if (p.blackout_period_us != 0 && p.blackout_duration_us != 0 && now >= p.blackout_offset_us) {
    return (now - p.blackout_offset_us) % p.blackout_period_us < p.blackout_duration_us;
  }
  return false;
}

struct Direction {
  LinkProfile profile;
  SimulatorStats stats;
  uint64_t link_free_at = 0;  // when the bandwidth-capped link finishes its backlog
  detail::DelayLine line;

  // Decides the fate of one datagram entering the link at `now` and holds its copies.
  void admit(detail::Xoshiro256& rng, uint64_t now, const PeerAddress& address,
             const uint8_t* data, size_t length) {
    ++stats.sent;
    if (in_blackout(profile, now)) {
      ++stats.dropped_blackout;
      return;
    }
    if (rng.chance(profile.loss)) {
      ++stats.dropped_loss;
      return;
    }
    uint64_t departs = now;
    if (profile.bandwidth_bytes_per_s != 0) {
      const uint64_t start = std::max(now, link_free_at);
      if (start - now > profile.max_queue_delay_us) {
        ++stats.dropped_bandwidth;
        return;
      }
      const uint64_t transmit = uint64_t(length) * 1000000u / profile.bandwidth_bytes_per_s;
      link_free_at = start + transmit;
      departs = link_free_at;
    }
    const int copies = rng.chance(profile.duplicate) ? 2 : 1;
    if (copies == 2) ++stats.duplicated;
    for (int c = 0; c < copies; ++c) {
      uint64_t due = departs + profile.latency_us + rng.up_to(profile.jitter_us);
      if (rng.chance(profile.reorder)) due += profile.reorder_delay_us;
      if (!line.push(due, address, data, length)) ++stats.dropped_capacity;
    }
  }
};

}  // namespace

struct NetworkSimulator::Impl {
  Impl(Transport& t, uint64_t seed) : inner(t), rng(seed), scratch(kScratchSize) {}
  Transport& inner;
  detail::Xoshiro256 rng;
  uint64_t now = 0;
  Direction out;
  Direction in;
  std::vector<uint8_t> scratch;
  SimulatorLimits limits;
  size_t read_this_poll = 0;  // datagrams taken from the inner transport since the last poll ended
  size_t steps_this_poll = 0;  // datagrams read plus datagrams handed out in this poll
  bool inner_empty = false;    // the inner transport said "nothing more" in this poll
  bool reading_timed_out = false;  // this poll's time ran out while reading (counted once)
  std::chrono::steady_clock::time_point poll_started;

  // Counts one datagram read or handed out; false once this poll has used up its time.
  bool step() {
    if (limits.receive_time_budget_us == 0) return true;
    if (steps_this_poll++ == 0) {
      poll_started = std::chrono::steady_clock::now();
      return true;
    }
    if (steps_this_poll % kClockStride != 0) return true;
    const auto spent = std::chrono::steady_clock::now() - poll_started;
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(spent).count()) <
           limits.receive_time_budget_us;
  }
  void end_poll() {
    read_this_poll = 0;
    steps_this_poll = 0;
    inner_empty = false;
    reading_timed_out = false;
  }
  bool stop_for_time() {
    if (!reading_timed_out) ++in.stats.time_budget_stops;
    end_poll();
    return false;
  }

  void flush_outgoing() {
    for (long slot = out.line.front_due(now); slot >= 0; slot = out.line.front_due(now)) {
      // A failing inner send is the inner transport's loss; the datagram left the simulator.
      (void)inner.send(out.line.address(slot), out.line.data(slot), out.line.length(slot));
      ++out.stats.delivered;
      out.line.pop_front();
    }
  }
};

NetworkSimulator::NetworkSimulator(Transport& inner, uint64_t seed)
    : impl_(std::make_unique<Impl>(inner, seed)) {}
NetworkSimulator::~NetworkSimulator() = default;

void NetworkSimulator::set_outgoing(const LinkProfile& profile) { impl_->out.profile = profile; }
void NetworkSimulator::set_incoming(const LinkProfile& profile) { impl_->in.profile = profile; }

void NetworkSimulator::set_limits(const SimulatorLimits& limits) {
  SimulatorLimits l = limits;
  if (l.receive_budget == 0) l.receive_budget = 1;
  if (l.capacity == 0) l.capacity = 1;
  impl_->limits = l;
  impl_->out.line.set_capacity(l.capacity);
  impl_->in.line.set_capacity(l.capacity);
}

const SimulatorLimits& NetworkSimulator::limits() const noexcept { return impl_->limits; }

size_t NetworkSimulator::buffer_bytes() const noexcept {
  return impl_->out.line.buffer_bytes() + impl_->in.line.buffer_bytes() + impl_->scratch.size();
}

void NetworkSimulator::set_time(uint64_t now_us) {
  if (now_us > impl_->now) impl_->now = now_us;
  impl_->end_poll();  // a new tick: a fresh receive budget
  impl_->flush_outgoing();
}

uint64_t NetworkSimulator::time() const noexcept { return impl_->now; }

Result NetworkSimulator::send(const PeerAddress& to, const uint8_t* data, size_t length) {
  if (data == nullptr && length != 0) return Result::invalid_argument;
  impl_->out.admit(impl_->rng, impl_->now, to, data, length);
  impl_->flush_outgoing();  // zero-latency links deliver at once
  return Result::ok;
}

void NetworkSimulator::flush() { impl_->inner.flush(); }

bool NetworkSimulator::receive(PeerAddress* from, uint8_t* buffer, size_t capacity,
                               size_t* length) {
  Impl& s = *impl_;
  PeerAddress address;
  size_t got = 0;
  // Take what the inner transport holds, up to this poll's budgets; the rest waits there.
  while (!s.inner_empty && s.read_this_poll < s.limits.receive_budget) {
    if (!s.inner.receive(&address, s.scratch.data(), s.scratch.size(), &got)) {
      s.inner_empty = true;
      break;
    }
    ++s.read_this_poll;
    s.in.admit(s.rng, s.now, address, s.scratch.data(), got);
    if (s.read_this_poll == s.limits.receive_budget) ++s.in.stats.budget_exhausted;
    if (!s.step()) {  // no more reading in this poll; what is due still goes out
      ++s.in.stats.time_budget_stops;
      s.reading_timed_out = true;
      s.inner_empty = true;
      break;
    }
  }
  for (long slot = s.in.line.front_due(s.now); slot >= 0; slot = s.in.line.front_due(s.now)) {
    const size_t n = s.in.line.length(slot);
    if (n > capacity) {  // the Transport contract: too long for the buffer = dropped
      s.in.line.pop_front();
      continue;
    }
    if (!s.step()) return s.stop_for_time();  // this one waits in the line for the next poll
    if (from) *from = s.in.line.address(slot);
    if (n != 0) std::memcpy(buffer, s.in.line.data(slot), n);
    *length = n;
    ++s.in.stats.delivered;
    s.in.line.pop_front();
    return true;
  }
  s.end_poll();  // nothing due: this poll is over, the next one has a fresh budget
  return false;
}

const SimulatorStats& NetworkSimulator::outgoing_stats() const noexcept { return impl_->out.stats; }
const SimulatorStats& NetworkSimulator::incoming_stats() const noexcept { return impl_->in.stats; }
size_t NetworkSimulator::in_flight() const noexcept {
  return impl_->out.line.size() + impl_->in.line.size();
}

}  // namespace retcon
