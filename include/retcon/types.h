// retcon: the small value types every layer shares.
#pragma once

#include <cstddef>
#include <cstdint>

namespace retcon {

// Frame numbers count from 0. A session at 60 fps overflows int32 after ~414 days of play.
using Frame = int32_t;
inline constexpr Frame kNullFrame = -1;

using PlayerIndex = int32_t;

// Hard limits, chosen so every per-frame structure fits a fixed preallocated ring.
inline constexpr int kMaxPlayers = 8;
inline constexpr int kMaxSpectators = 32;
// Inputs are opaque bytes. 128 bytes covers a full keyboard bitmap plus analog axes. The bound
// comes from the protocol: one frame of every player's input (what a spectator receives, or a
// machine with 8 local players sends) must fit one 1200-byte datagram even when the bytes do not
// compress at all: 8 x 128 = 1024 bytes, plus at most 1/128 of run-length overhead and headers.
inline constexpr uint32_t kMaxInputSize = 128;
inline constexpr int kMaxPredictionFrames = 64;
inline constexpr int kMaxInputDelay = 32;
// 256 MiB per saved state: emulator states are a few MiB; the ring holds max_prediction + 2.
inline constexpr size_t kMaxStateSize = size_t{256} << 20;

// Bits of the `flags` argument of advance_frame.
enum AdvanceFlags : uint32_t {
  kAdvanceNone = 0,
  // The frame is being re-simulated after a rollback: mute sounds and effects.
  kAdvanceResimulating = 1u << 0,
};

// Per-player status of the input handed to advance_frame.
enum class InputStatus : uint8_t {
  confirmed = 0,     // the real input of that player for that frame
  predicted = 1,     // a guess; a rollback fixes it if wrong
  disconnected = 2,  // the player left; the input is their last one (or zeros)
};

// Timed decisions (P2PSession::send_decision): at most this many bytes each. A channel message
// holds 256 bytes; the decision's header (kind, sender, frame) takes 6 of them, the rest is spare.
inline constexpr uint32_t kMaxDecisionSize = 240;

// One timed decision, as advance_frame sees it. `bytes` stay valid during the call only.
struct Decision {
  const uint8_t* bytes;
  uint32_t size;
  PlayerIndex sender;  // the first player of the machine that sent it
};

// What advance_frame receives: every player's input for one frame, back to back, and the timed
// decisions of that frame (the same ones, in the same order, on every machine and every time
// the frame is simulated, re-simulations included). Every pointer is valid only during the
// advance_frame callback that receives it (they point into the session's own rings): copy what
// the game keeps.
struct FrameInputs {
  const uint8_t* bytes;        // player_count * input_size bytes; player i at i * input_size
  const InputStatus* status;   // player_count entries
  uint32_t input_size;
  uint32_t player_count;
  const Decision* decisions = nullptr;  // decision_count entries, ordered by sender, then sending order
  uint32_t decision_count = 0;

  const uint8_t* player(PlayerIndex p) const noexcept { return bytes + size_t(p) * input_size; }
};

}  // namespace retcon
