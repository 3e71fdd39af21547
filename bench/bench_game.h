// The game every benchmark runs, and the raw building blocks of the baselines.
//
// Two players with 4-byte inputs; the state is `size` bytes (64 B or 1 MiB) saved and loaded with
// memcpy; a frame adds both inputs into the first words of the state. The session benchmarks run
// this game through retcon's callbacks; the baselines call the same save/load/step functions
// directly, on buffers of the same size and alignment, in a ring with the same slot count and
// frame-to-slot mapping as retcon's StateRing. So a ratio of session to baseline is the cost of
// retcon itself (input queues, bookkeeping, indirect calls) on top of work the game must do anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "retcon/callbacks.h"
#include "retcon/session.h"
#include "retcon/types.h"

namespace retcon::bench {

inline constexpr size_t kSmallState = 64;
inline constexpr size_t kLargeState = size_t{1} << 20;
inline constexpr uint32_t kPlayers = 2;
inline constexpr uint32_t kInputSize = 4;

// Inputs are functions of the frame so every frame does different arithmetic. The remote player's
// real input changes every frame, so carry-forward prediction is always wrong for it.
inline uint32_t local_input(Frame f) noexcept { return uint32_t(f) * 2654435761u; }
inline uint32_t remote_input(Frame f) noexcept { return uint32_t(f) * 40503u + 7u; }

// 64-byte aligned, zero-initialised (pages touched) bytes, like retcon's StateRing memory.
class AlignedBytes {
 public:
  explicit AlignedBytes(size_t size) : memory_(std::make_unique<uint8_t[]>(size + 64)) {
    data_ = memory_.get() + (64 - reinterpret_cast<uintptr_t>(memory_.get()) % 64) % 64;
  }
  uint8_t* data() const noexcept { return data_; }

 private:
  std::unique_ptr<uint8_t[]> memory_;
  uint8_t* data_;
};

// The live game state and the operations a game supplies.
class BenchGame {
 public:
  explicit BenchGame(size_t size) : bytes_(size), size_(size) {
    // Non-trivial contents, so copies and hashes see real data.
    for (size_t i = 0; i < size_; ++i) bytes_.data()[i] = uint8_t(i * 131u + 17u);
  }

  uint8_t* state() const noexcept { return bytes_.data(); }
  size_t size() const noexcept { return size_; }

  // The raw operations (the baselines call these directly).
  void copy_out(uint8_t* buffer) const noexcept { std::memcpy(buffer, bytes_.data(), size_); }
  void copy_in(const uint8_t* buffer, size_t length) noexcept { std::memcpy(bytes_.data(), buffer, length); }
  void step(uint32_t input0, uint32_t input1) noexcept {
    uint32_t words[3];
    std::memcpy(words, bytes_.data(), sizeof words);
    words[0] += input0;
    words[1] += input1;
    words[2] += 1;
    std::memcpy(bytes_.data(), words, sizeof words);
  }

  // The callbacks retcon calls (through bind_game).
  size_t save_state(Frame, uint8_t* buffer, size_t capacity) noexcept {
    if (size_ <= capacity) copy_out(buffer);
    return size_;
  }
  void load_state(Frame, const uint8_t* buffer, size_t length) noexcept { copy_in(buffer, length); }
  void advance_frame(Frame, const FrameInputs& inputs, uint32_t) noexcept {
    uint32_t a, b;
    std::memcpy(&a, inputs.player(0), sizeof a);
    std::memcpy(&b, inputs.player(1), sizeof b);
    step(a, b);
  }

 private:
  AlignedBytes bytes_;
  size_t size_;
};

// The baselines' ring: `slots` buffers of `size` bytes at a 64-byte stride, slot = frame % slots,
// exactly the layout of retcon::detail::StateRing.
class RawRing {
 public:
  RawRing(uint32_t slots, size_t size)
      : stride_((size + 63) & ~size_t{63}), slots_(slots), bytes_(stride_ * slots) {}
  uint8_t* slot(Frame f) const noexcept { return bytes_.data() + stride_ * (uint32_t(f) % slots_); }

 private:
  size_t stride_;
  uint32_t slots_;
  AlignedBytes bytes_;
};

inline SessionConfig bench_config(BenchGame& game, int32_t max_prediction) {
  SessionConfig config;
  config.num_players = kPlayers;
  config.input_size = kInputSize;
  config.max_prediction = max_prediction;
  config.max_state_size = game.size();
  config.save_mode = SaveMode::every_frame;
  config.callbacks = bind_game(game);
  return config;
}

}  // namespace retcon::bench
