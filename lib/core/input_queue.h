// One player's inputs: a ring of confirmed inputs followed by the predictions used for frames
// whose real input has not arrived yet.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "retcon/callbacks.h"
#include "retcon/types.h"

namespace retcon::detail {

// Inputs are a few bytes whose size is known only at run time; a libc memcpy/memcmp call per
// input cost more than the rest of a frame. Common sizes get fixed-size copies the compiler
// inlines.
// GCC, once these are inlined next to a caller's 1-byte input, warns (-Warray-bounds) about the
// 2..16-byte cases that `size` rules out at run time: a false positive, silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
// Four bytes (a pad's buttons and sticks) is tested first: a compare instead of a jump table.
inline void copy_input(uint8_t* dst, const uint8_t* src, size_t size) noexcept {
  if (size == 4) {
    std::memcpy(dst, src, 4);
    return;
  }
  switch (size) {
    case 1: *dst = *src; return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, size); return;
  }
}
inline bool same_input(const uint8_t* a, const uint8_t* b, size_t size) noexcept {
  if (size == 4) return std::memcmp(a, b, 4) == 0;
  switch (size) {
    case 1: return *a == *b;
    case 2: return std::memcmp(a, b, 2) == 0;
    case 4: return std::memcmp(a, b, 4) == 0;
    case 8: return std::memcmp(a, b, 8) == 0;
    default: return std::memcmp(a, b, size) == 0;
  }
}
// The sizes add_confirmed_small() takes.
inline bool small_input_size(size_t size) noexcept { return size == 1 || size == 2 || size == 4 || size == 8; }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

class InputQueue {
 public:
  // Allocates the ring once; `capacity` is rounded up to a power of two.
  void init(PlayerIndex player, uint32_t input_size, uint32_t capacity);
  // Uses a caller's ring of `capacity` (a power of two) rows of `stride` bytes, this queue's
  // input at `offset` in each: the driver keeps every player's input of a frame side by side,
  // so a frame's row is handed to the game as it is (RollbackDriver::step).
  void init_shared(PlayerIndex player, uint32_t input_size, uint32_t capacity, uint8_t* rows, size_t stride,
                   size_t offset);

  uint32_t capacity() const noexcept { return mask_ + 1; }
  Frame last_confirmed() const noexcept { return last_confirmed_; }

  // Stores the real input of `frame`, which must be last_confirmed() + 1 (inputs of one player
  // arrive in order; the protocol guarantees it). Returns true when the prediction already used
  // to simulate `frame` differs from it, i.e. a rollback is needed from `frame`.
  bool add_confirmed(Frame frame, const uint8_t* input) noexcept {
    uint8_t* dst = slot(frame);
    // The slot holds the prediction used to simulate `frame` only if one was made for it.
    const bool mispredicted = frame <= last_predicted_ && !same_input(dst, input, input_size_);
    copy_input(dst, input, input_size_);
    last_confirmed_ = frame;
    last_input_ = dst;
    return mispredicted;
  }

  // add_confirmed for a size small_input_size() takes, with no call to memcmp or memcpy: the
  // driver's usual input path then needs no registers kept across a call.
  bool add_confirmed_small(Frame frame, const uint8_t* input) noexcept {
    // Four bytes (a pad) first: a compare instead of the switch's jump table, as copy_input.
    if (input_size_ == 4) return add_confirmed_pad(frame, input);
    uint8_t* dst = slot(frame);
    uint64_t old = 0, now = 0;
    switch (input_size_) {
      case 8:
        std::memcpy(&old, dst, 8);
        std::memcpy(&now, input, 8);
        std::memcpy(dst, &now, 8);
        break;
      case 2: {
        uint16_t a, b;
        std::memcpy(&a, dst, 2);
        std::memcpy(&b, input, 2);
        std::memcpy(dst, &b, 2);
        old = a, now = b;
        break;
      }
      default:  // 1
        old = *dst;
        now = *dst = *input;
        break;
    }
    last_confirmed_ = frame;
    last_input_ = dst;
    return frame <= last_predicted_ && old != now;
  }

  // add_confirmed_small for a 4-byte input (a pad's), for a caller that knows the size.
  bool add_confirmed_pad(Frame frame, const uint8_t* input) noexcept {
    uint8_t* dst = slot(frame);
    uint32_t a, b;
    std::memcpy(&a, dst, 4);
    std::memcpy(&b, input, 4);
    std::memcpy(dst, &b, 4);
    last_confirmed_ = frame;
    last_input_ = dst;
    return frame <= last_predicted_ && a != b;
  }

  // add_confirmed_pad for each frame of first..last (first is last_confirmed() + 1, last at
  // least first), `inputs` `stride` bytes apart, for a caller that takes a run at once
  // (RollbackDriver::take_remote_run): `mispredicted(frame)` for each frame whose prediction
  // differed from its input. The newest input's fields are stored once, after the run (each
  // store of an input may alias them, so a per-frame store would also reload the others).
  template <class Mispredicted>
  void add_confirmed_pads(Frame first, Frame last, const uint8_t* inputs, size_t stride,
                          Mispredicted&& mispredicted) noexcept {
    Frame frame = first;
    uint8_t* dst;
    for (;;) {
      dst = slot(frame);
      uint32_t a, b;
      std::memcpy(&a, dst, 4);
      std::memcpy(&b, inputs, 4);
      std::memcpy(dst, &b, 4);
      if (a != b && frame <= last_predicted_) [[unlikely]] mispredicted(frame);
      if (frame == last) break;
      ++frame;
      inputs += stride;
    }
    last_confirmed_ = last;
    last_input_ = dst;
  }

  // The input of a frame not simulated yet (a local player's, taken for the live frame or
  // after it) of a size small_input_size() takes, stored as add_confirmed_small stores it,
  // without its comparison with a prediction: only a frame already simulated can need a
  // rollback (RollbackDriver::note_mispredicted). No call to memcpy, as add_confirmed_small.
  // The queue's fields are read and written before the input's bytes are stored (which may
  // alias them): nothing is reloaded after the store, and the caller keeps no pointer for it.
  void add_ahead_small(Frame frame, const uint8_t* input) noexcept {
    uint8_t* dst = slot(frame);
    const uint32_t size = input_size_;
    last_confirmed_ = frame;
    last_input_ = dst;
    if (size == 4) {  // a pad first, as copy_input
      std::memcpy(dst, input, 4);
    } else if (size == 8) {
      std::memcpy(dst, input, 8);
    } else if (size == 2) {
      std::memcpy(dst, input, 2);
    } else {  // 1
      *dst = *input;
    }
  }

  // A queue that starts at `frame` (a transferred state): every frame before it counts as
  // confirmed, with zeros as the last input (a spectator never predicts from it).
  void start_at(Frame frame) noexcept {
    last_confirmed_ = last_predicted_ = frame - 1;
    carried_from_ = kNotCarried;  // frames from `frame` on may run before their slots are written
    last_input_ = zeros_.get();
    if (frame > 0) {
      uint8_t* last = slot(frame - 1);
      std::memset(last, 0, input_size_);
      last_input_ = last;
    }
  }

  // The real input of a confirmed frame (caller checks frame <= last_confirmed()).
  const uint8_t* confirmed(Frame frame) const noexcept { return slot(frame); }

  // The input to simulate `frame` with: the real one if confirmed, otherwise a fresh prediction
  // from the newest confirmed input, remembered so add_confirmed can tell a misprediction.
  // Inline, with the default carry-forward prediction inline too: asked for every player of
  // every frame simulated, re-simulations included.
  const uint8_t* input_for(Frame frame, const Predictor& predictor, InputStatus* status) noexcept {
    if (frame <= last_confirmed_) {
      *status = InputStatus::confirmed;
      return slot(frame);
    }
    *status = InputStatus::predicted;
    return predict(frame, predictor);
  }
  // The prediction for `frame` (after last_confirmed()), written into its slot and returned.
  const uint8_t* predict(Frame frame, const Predictor& predictor) noexcept {
    if (frame > last_predicted_) last_predicted_ = frame;
    if (predictor.predict) return predict_with(frame, predictor);
    uint8_t* dst = slot(frame);
    copy_input(dst, last_input_, input_size_);
    return dst;
  }

  // predict(frame, Predictor{}) into `row`, the frame's row of the shared ring (init_shared),
  // which the caller already holds: the slot is the queue's column in it, without the ring's
  // arithmetic (the driver's live frame writes every predicted player's input this way).
  void predict_in_row(Frame frame, uint8_t* row) noexcept {
    if (frame > last_predicted_) last_predicted_ = frame;
    copy_input(row + column_, last_input_, input_size_);
  }
  // predict_in_row for the driver's live frame, the newest frame simulated so far: no frame
  // after it was predicted (predictions are made for frames as they are simulated, a rollback's
  // up to the live frame's predecessor), so `frame` is the newest prediction without a compare.
  // kSize: the input size when the caller knows it, 0: input_size_.
  template <uint32_t kSize>
  void predict_live(Frame frame, uint8_t* row) noexcept {
    last_predicted_ = frame;
    if constexpr (kSize != 0) {
      std::memcpy(row + column_, last_input_, kSize);
    } else {
      copy_input(row + column_, last_input_, input_size_);
    }
  }

  // The carry-forward prediction (no Predictor) of every frame in [from, to), all after
  // last_confirmed(): what predict(f, Predictor{}) leaves for each f, in one pass (a rollback's
  // re-run writes a player's predictions before its frames run, not one walk per frame). The
  // fields in locals: the prediction's byte stores may alias any of them.
  // predict_forward(last_confirmed() + 1, to): every frame after the last confirmed one is then
  // what carried() promises.
  void predict_after_confirmed(Frame to) noexcept {
    carried_from_ = last_confirmed_;
    predict_forward(last_confirmed_ + 1, to);
  }
  void predict_forward(Frame from, Frame to) noexcept {
    if (from >= to) return;
    if (to - 1 > last_predicted_) last_predicted_ = to - 1;
    uint8_t* const base = base_;
    const size_t row = stride_;
    const uint32_t mask = mask_;
    if (input_size_ == 4) {  // a pad, as copy_input: the value in a register
      uint32_t value;
      std::memcpy(&value, last_input_, 4);
      for (Frame f = from; f < to; ++f) std::memcpy(base + size_t(uint32_t(f) & mask) * row, &value, 4);
      return;
    }
    const uint8_t* const last = last_input_;
    const uint32_t size = input_size_;
    for (Frame f = from; f < to; ++f) copy_input(base + size_t(uint32_t(f) & mask) * row, last, size);
  }

  // True when every frame after last_confirmed() simulated since the last predict_forward from
  // last_confirmed() + 1 has the carry-forward prediction in its slot: no input was confirmed
  // since (which would change last_confirmed()), no rejoin restarted the queue (start_at) and
  // no game predictor wrote a slot. The carry-forward of a frame simulated with nobody absent
  // is written into its slot by predict() or predict_forward(), the same bytes each time while
  // the last input stays, so a rollback's re-run of such frames need not write them again.
  bool carried() const noexcept { return carried_from_ == last_confirmed_; }

  // True when `frame` can be stored without overwriting a frame at or after `oldest_needed`.
  bool fits(Frame frame, Frame oldest_needed) const noexcept {
    return int64_t(frame) - int64_t(oldest_needed) < int64_t(capacity());
  }

 private:
  uint8_t* slot(Frame frame) const noexcept { return base_ + size_t(uint32_t(frame) & mask_) * stride_; }
  // A prediction by the game's predictor (Predictor::predict set).
  const uint8_t* predict_with(Frame frame, const Predictor& predictor) noexcept;

  std::unique_ptr<uint8_t[]> ring_;  // own ring (init), or none (init_shared)
  std::unique_ptr<uint8_t[]> zeros_;  // the "last input" before any was confirmed
  uint8_t* base_ = nullptr;           // this queue's input in the first row
  size_t stride_ = 0;                 // bytes from one frame's row to the next
  size_t column_ = 0;                 // this queue's input in a row (init_shared's offset)
  uint32_t input_size_ = 0;
  uint32_t mask_ = 0;
  PlayerIndex player_ = 0;
  Frame last_confirmed_ = kNullFrame;
  Frame last_predicted_ = kNullFrame;  // newest frame whose slot holds a prediction used so far
  const uint8_t* last_input_ = nullptr;  // slot(last_confirmed_), or zeros_ before any
  // See carried(): last_confirmed_ as of the last predict_forward from the frame after it, or
  // kNotCarried (no frame is ever that number: last_confirmed_ >= kNullFrame).
  static constexpr Frame kNotCarried = kNullFrame - 1;
  Frame carried_from_ = kNotCarried;
};

}  // namespace retcon::detail
