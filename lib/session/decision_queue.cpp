#include "session/decision_queue.h"

#include <cstring>

#include "core/checksum.h"
#include "net/byte_io.h"

namespace retcon::detail {

Result DecisionQueue::init(uint32_t per_sender) {
  if (per_sender == 0 || per_sender * kMaxPlayers > 65535) return Result::invalid_argument;
  per_sender_cap_ = per_sender;
  capacity_ = per_sender * kMaxPlayers;
  pool_ = std::make_unique<Entry[]>(capacity_);
  order_ = std::make_unique<uint16_t[]>(capacity_);
  free_ = std::make_unique<uint16_t[]>(capacity_);
  views_ = std::make_unique<Decision[]>(capacity_);
  count_ = 0;
  free_count_ = capacity_;
  for (uint32_t i = 0; i < capacity_; ++i) free_[i] = uint16_t(capacity_ - 1 - i);
  for (uint32_t s = 0; s < uint32_t(kMaxPlayers); ++s) per_sender_[s] = next_seq_[s] = 0;
  digest_ = 0;
  retired_before_ = 0;
  return Result::ok;
}

Result DecisionQueue::insert(PlayerIndex sender, Frame frame, const uint8_t* bytes, size_t size) noexcept {
  if (!pool_ || sender < 0 || sender >= kMaxPlayers || bytes == nullptr || size == 0 || size > kMaxDecisionSize ||
      frame < 0)
    return Result::invalid_argument;
  // Numbered even when refused below, so every receiver numbers the sender's stream alike.
  const uint32_t seq = next_seq_[sender]++;
  if (per_sender_[sender] >= per_sender_cap_ || free_count_ == 0) return Result::out_of_memory;
  const uint16_t slot = free_[--free_count_];
  Entry& e = pool_[slot];
  e.frame = frame;
  e.sender = sender;
  e.seq = seq;
  e.size = uint16_t(size);
  e.forwarded = 0;
  std::memcpy(e.bytes, bytes, size);
  // Insertion into the sorted index: after every entry that sorts before or equal.
  uint32_t at = count_;
  while (at > 0) {
    const Entry& prev = pool_[order_[at - 1]];
    const bool before = prev.frame < frame || (prev.frame == frame && (prev.sender < sender ||
                                                                        (prev.sender == sender && prev.seq < seq)));
    if (before) break;
    order_[at] = order_[at - 1];
    --at;
  }
  order_[at] = slot;
  ++count_;
  ++per_sender_[sender];
  return Result::ok;
}

uint32_t DecisionQueue::for_frame_queued(Frame frame, const Decision** out) noexcept {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    const Entry& e = pool_[order_[i]];
    if (e.frame > frame) break;
    if (e.frame < frame || !applies(e)) continue;
    views_[n++] = Decision{e.bytes, e.size, e.sender};
  }
  *out = n ? views_.get() : nullptr;
  return n;
}

uint64_t DecisionQueue::fold(uint64_t digest, const Entry& e) noexcept {
  uint8_t buffer[8 + 4 + 4 + 2 + kMaxDecisionSize];
  ByteWriter w(buffer, sizeof buffer);
  w.u64(digest);
  w.i32(e.frame);
  w.i32(e.sender);
  w.u16(e.size);
  w.bytes(e.bytes, e.size);
  const uint64_t h = xxh3_64(buffer, w.size());
  return h == 0 ? 1 : h;  // 0 means "no decision"
}

uint64_t DecisionQueue::digest_before(Frame frame) const noexcept {
  uint64_t d = digest_;
  for (uint32_t i = 0; i < count_; ++i) {
    const Entry& e = pool_[order_[i]];
    if (e.frame >= frame) break;
    if (applies(e)) d = fold(d, e);
  }
  return d;
}

void DecisionQueue::retire_queued_before(Frame frame) noexcept {
  uint32_t gone = 0;
  while (gone < count_ && pool_[order_[gone]].frame < frame) {
    const Entry& e = pool_[order_[gone]];
    if (applies(e)) digest_ = fold(digest_, e);
    --per_sender_[e.sender];
    free_[free_count_++] = order_[gone];
    ++gone;
  }
  if (gone) {
    for (uint32_t i = gone; i < count_; ++i) order_[i - gone] = order_[i];
    count_ -= gone;
  }
  retired_before_ = frame;
}

void DecisionQueue::forget_after(PlayerIndex sender, Frame after) noexcept {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    const Entry& e = pool_[order_[i]];
    if (e.sender == sender && e.frame > after) {
      --per_sender_[e.sender];
      free_[free_count_++] = order_[i];
      continue;
    }
    order_[kept++] = order_[i];
  }
  count_ = kept;
}

uint32_t DecisionQueue::drop_after(Frame last) noexcept {
  uint32_t n = 0;
  while (count_ > 0 && pool_[order_[count_ - 1]].frame > last) {  // sorted by frame: the last ones
    const uint16_t slot = order_[--count_];
    --per_sender_[pool_[slot].sender];
    free_[free_count_++] = slot;
    ++n;
  }
  return n;
}

void DecisionQueue::restart_at(Frame frame, uint64_t digest) noexcept {
  uint32_t gone = 0;
  while (gone < count_ && pool_[order_[gone]].frame < frame) {
    --per_sender_[pool_[order_[gone]].sender];
    free_[free_count_++] = order_[gone];
    ++gone;
  }
  for (uint32_t i = gone; i < count_; ++i) order_[i - gone] = order_[i];
  count_ -= gone;
  digest_ = digest;
  retired_before_ = frame;
}

}  // namespace retcon::detail
