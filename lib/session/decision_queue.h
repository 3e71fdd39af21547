// Timed decisions known to this machine, in the order every machine applies them: by frame, then
// sender, then the sender's sending order. Preallocated at init (a fixed pool and a sorted index),
// so inserting, looking up a frame and retiring old entries never allocate.
//
// A decision stays here while its frame may still be simulated again (a rollback) or compared
// (desync detection); retire_before() folds older ones into a running digest, so the digest of
// "every decision before frame f" stays known for the frames peers compare. See
// docs/PROTOCOL.md "Timed decisions" for why every machine ends up with the same entries.
#pragma once

#include <cstdint>
#include <memory>

#include "retcon/result.h"
#include "retcon/types.h"

namespace retcon::detail {

// Per sender, at most this many decisions are kept by a player machine (a sender is limited to
// half as many in flight, so an honest one never reaches it; beyond, they are dropped and
// counted). Spectators, which may trail the match by seconds, keep more.
inline constexpr uint32_t kDecisionsPerSender = 32;
inline constexpr uint32_t kSpectatorDecisionsPerSender = 128;

class DecisionQueue {
 public:
  struct Entry {
    Frame frame = kNullFrame;
    PlayerIndex sender = -1;
    uint32_t seq = 0;  // the sender's sending order, counted by every receiver alike
    uint16_t size = 0;
    uint32_t forwarded = 0;  // bit i: sent on to spectator i (hosts)
    uint8_t bytes[kMaxDecisionSize] = {};
  };
  // Whether a kept decision applies (its sender's machine was not cut before its frame).
  struct Filter {
    void* user = nullptr;
    bool (*applies)(void* user, PlayerIndex sender, Frame frame) = nullptr;
  };

  Result init(uint32_t per_sender = kDecisionsPerSender);
  void set_filter(const Filter& filter) noexcept { filter_ = filter; }

  // Adds a decision of `sender` (0..kMaxPlayers-1) for `frame`, numbered after the sender's
  // previous ones. out_of_memory when the sender already has kDecisionsPerSender kept;
  // invalid_argument for a bad size or sender.
  Result insert(PlayerIndex sender, Frame frame, const uint8_t* bytes, size_t size) noexcept;

  // The decisions that apply at `frame`, as views valid until the next insert or retire.
  uint32_t for_frame(Frame frame, const Decision** out) noexcept {
    // Asked for every frame simulated; almost always nothing is queued.
    if (count_ == 0) {
      *out = nullptr;
      return 0;
    }
    return for_frame_queued(frame, out);
  }
  // Digest of every applying decision before `frame` (0 when there is none): mixed into the
  // checksums peers compare, so the same decisions on the same frames are part of "in sync".
  // Frames at or after the retire point only.
  uint64_t digest_before(Frame frame) const noexcept;
  // Entries before `frame` will never be simulated or compared again: fold and free them.
  void retire_before(Frame frame) noexcept {
    if (frame <= retired_before_) return;
    if (count_ == 0) {  // every frame, nearly always: nothing queued to fold
      retired_before_ = frame;
      return;
    }
    retire_queued_before(frame);
  }
  // A rejoining machine's queue once its state (of `frame`) is loaded: entries before `frame`
  // are inside the state (freed, not folded), and `digest` is the host's digest_before(frame).
  void restart_at(Frame frame, uint64_t digest) noexcept;
  // `sender`'s entries for frames after `after` are freed (not folded): its machine was cut
  // there and comes back on a new connection, so they never apply (a rejoining machine never
  // has them).
  void forget_after(PlayerIndex sender, Frame after) noexcept;
  // Every entry for a frame after `last` is freed (not folded): refused after all (see
  // DecisionExchange::drop_too_far). Returns how many.
  uint32_t drop_after(Frame last) noexcept;

  uint32_t size() const noexcept { return count_; }
  uint32_t kept_of(PlayerIndex sender) const noexcept { return per_sender_[sender]; }
  uint32_t capacity() const noexcept { return capacity_; }
  const Entry& at(uint32_t i) const noexcept { return pool_[order_[i]]; }
  Entry& at(uint32_t i) noexcept { return pool_[order_[i]]; }
  bool applies(const Entry& e) const noexcept { return filter_.applies == nullptr || filter_.applies(filter_.user, e.sender, e.frame); }
  Frame retired_before() const noexcept { return retired_before_; }
  bool any_ever() const noexcept { return digest_ != 0 || count_ != 0; }
  // How many are queued (for_frame answers nothing while it is 0), read by the driver before asking.
  const uint32_t* queued() const noexcept { return &count_; }

 private:
  void retire_queued_before(Frame frame) noexcept;
  uint32_t for_frame_queued(Frame frame, const Decision** out) noexcept;
  static uint64_t fold(uint64_t digest, const Entry& e) noexcept;

  std::unique_ptr<Entry[]> pool_;
  std::unique_ptr<uint16_t[]> order_;  // pool indices, sorted
  std::unique_ptr<uint16_t[]> free_;
  std::unique_ptr<Decision[]> views_;
  uint32_t capacity_ = 0, per_sender_cap_ = 0;
  uint32_t count_ = 0, free_count_ = 0;
  uint32_t per_sender_[kMaxPlayers] = {};
  uint32_t next_seq_[kMaxPlayers] = {};
  uint64_t digest_ = 0;  // of every retired applying decision
  Frame retired_before_ = 0;
  Filter filter_;
};

}  // namespace retcon::detail
