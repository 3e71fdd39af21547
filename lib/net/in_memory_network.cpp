// retcon: an in-process datagram network for tests and local play.
#include <cstring>

#include "retcon/transport.h"

namespace retcon {

namespace {
// Enough slots for a few frames of traffic between a handful of peers before the first growth.
constexpr size_t kInitialSlots = 64;
// A slot's buffer starts at one Ethernet MTU, so datagrams of varying sizes up to it never
// make a slot grow again after its first use.
constexpr size_t kSlotBytes = 1500;
}  // namespace

InMemoryTransport::InMemoryTransport(InMemoryNetwork* network, uint32_t id)
    : network_(network), id_(id), ring_(kInitialSlots) {
  for (Datagram& slot : ring_) slot.bytes.resize(kSlotBytes);
}

Result InMemoryTransport::send(const PeerAddress& to, const uint8_t* data, size_t length) {
  if (data == nullptr && length != 0) return Result::invalid_argument;
  InMemoryTransport* target = network_->find(to);
  if (target == nullptr) {
    ++network_->dropped_unknown_address_;
    return Result::ok;
  }
  target->enqueue(address(), data, length);
  return Result::ok;
}

void InMemoryTransport::enqueue(const PeerAddress& from, const uint8_t* data, size_t length) {
  if (count_ == ring_.size()) {
    // Grow once to the peak backlog; slots move with their buffers, keeping queue order.
    std::vector<Datagram> bigger(ring_.size() * 2);
    for (size_t i = count_; i < bigger.size(); ++i) bigger[i].bytes.resize(kSlotBytes);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    ring_ = std::move(bigger);
    head_ = 0;
  }
  Datagram& slot = ring_[(head_ + count_) % ring_.size()];
  if (slot.bytes.size() < length) slot.bytes.resize(length > kSlotBytes ? length : kSlotBytes);
  if (length != 0) std::memcpy(slot.bytes.data(), data, length);
  slot.length = length;
  slot.from = from;
  ++count_;
}

bool InMemoryTransport::receive(PeerAddress* from, uint8_t* buffer, size_t capacity,
                                size_t* length) {
  while (count_ != 0) {
    Datagram& slot = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
    if (slot.length > capacity) continue;  // the contract: too long for the buffer = dropped
    if (from) *from = slot.from;
    if (slot.length != 0) std::memcpy(buffer, slot.bytes.data(), slot.length);
    *length = slot.length;
    return true;
  }
  return false;
}

InMemoryNetwork::~InMemoryNetwork() = default;

InMemoryTransport* InMemoryNetwork::add_endpoint() {
  const auto id = static_cast<uint32_t>(endpoints_.size() + 1);
  endpoints_.push_back(std::unique_ptr<InMemoryTransport>(new InMemoryTransport(this, id)));
  return endpoints_.back().get();
}

InMemoryTransport* InMemoryNetwork::find(const PeerAddress& address) noexcept {
  if (address.size != 5 || address.bytes[0] != 'M') return nullptr;
  uint32_t id = 0;
  for (int i = 0; i < 4; ++i) id |= uint32_t{address.bytes[1 + i]} << (8 * i);
  if (id == 0 || id > endpoints_.size()) return nullptr;
  return endpoints_[id - 1].get();
}

}  // namespace retcon
