// retcon: the session interface every session kind implements, and their configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "retcon/callbacks.h"
#include "retcon/result.h"
#include "retcon/types.h"

namespace retcon {

enum class SaveMode : uint32_t {
  // Save every frame when a rollback is possible (max_prediction > 0, sync test, and lockstep
  // P2P with desync detection, state transfer or two or more other player machines, where an
  // agreed disconnect cut can lie before frames already simulated); never in a session that
  // cannot roll back (local play, two-machine lockstep without those).
  automatic = 0,
  every_frame = 1,  // save before every simulated frame, even when nothing can roll back
  // Save only frames whose inputs are all confirmed; a rollback then re-simulates from the last
  // confirmed frame, which costs more steps but far fewer saves (for large, slow-to-save states).
  sparse = 2,
};

// Settings shared by every session kind. create() validates them and names the bad one.
struct SessionConfig {
  uint32_t num_players = 2;       // 1..kMaxPlayers
  uint32_t input_size = 4;        // bytes per player per frame, 1..kMaxInputSize
  int32_t max_prediction = 8;     // frames ahead of the last confirmed input; 0 = lockstep
  // Players of a p2p match may differ: each plays with the smallest of its own and those of the
  // players it completed a handshake with (SessionStats::prediction_window); memory is sized by
  // its own.
  size_t max_state_size = 0;      // capacity of each save buffer, 1..kMaxStateSize
  SaveMode save_mode = SaveMode::automatic;
  GameCallbacks callbacks;        // save_state, load_state, advance_frame are required
  Predictor predictor;            // optional; default carry-forward
  Logger logger;                  // optional
  // The most state memory (save ring, checkpoints, sync-test buffers) create may commit. Known
  // at create from max_state_size and the window; beyond it create fails with out_of_memory and
  // logs why, instead of the process being killed later. 0 = no limit.
  uint64_t memory_budget = uint64_t{4} << 30;
};

// Per-session counters. Plain numbers, cheap to copy.
struct SessionStats {
  Frame current_frame;
  Frame confirmed_frame;          // every input up to and including it is confirmed
  uint64_t frames_advanced;       // frames simulated for the first time
  uint64_t frames_resimulated;
  uint64_t rollbacks;
  uint64_t saves;
  uint64_t loads;
  uint64_t checksums;
  uint64_t frames_stalled;        // advance_frame calls refused by the prediction window
  uint32_t max_rollback_depth;
  uint64_t rollback_depth_histogram[kMaxPredictionFrames + 1];  // index = depth in frames
  uint64_t committed_bytes;       // state memory reserved at create (see memory_budget)
  // The rollback window in use: max_prediction, or in a P2P session the smallest max_prediction
  // of the player machines it completed a handshake with (never raised again during the match;
  // docs/NETWORKING.md, "How late a cut can come"). 0: lockstep.
  int32_t prediction_window;
};

class Session {
 public:
  virtual ~Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Give this frame's input of a local player. With input delay d it is applied at frame
  // current_frame() + d. One call per local player per frame: while advance_frame() is refused
  // (prediction_limit) the frame does not change, and further calls for it return
  // input_already_added (harmless: the first input stands). A typical tick:
  //   session->poll(now); session->add_local_input(0, &pad, sizeof pad); session->advance_frame();
  virtual Result add_local_input(PlayerIndex player, const void* input, size_t size) = 0;
  // Simulate one frame (after any rollback the newest inputs require), through the
  // game's callbacks. Result::prediction_limit means: not advanced, call again next tick.
  virtual Result advance_frame() = 0;
  // Change a local player's input delay at any time. Frames are never skipped or doubled:
  // raising it repeats the last input for the new gap; lowering it ignores the local inputs
  // given while the already-queued frames play out.
  virtual Result set_input_delay(PlayerIndex player, int32_t frames) = 0;
  // Network sessions: send and receive, with the current time in microseconds of any
  // monotonic clock the game chooses. Local sessions accept and ignore it.
  virtual Result poll(uint64_t now_us) { (void)now_us; return Result::ok; }

  virtual Frame current_frame() const = 0;
  virtual Frame confirmed_frame() const = 0;
  virtual SessionStats stats() const = 0;
  // retcon's checksum (the game's checksum callback, else XXH3-64 of the saved bytes) of the
  // state `frame` starts from, for a frame whose inputs are all confirmed (frame <=
  // confirmed_frame() + 1) while its saved state is still held. not_found when it is not held
  // (too old, or never saved in this save mode), wrong_state when not confirmed yet or when a
  // correction before it is still to be re-simulated (the next advance_frame does it).
  virtual Result frame_checksum(Frame frame, uint64_t* out) {
    (void)frame;
    (void)out;
    return Result::not_found;
  }

 protected:
  Session() = default;
};

// All players on this machine (couch play). Runs at once; no prediction, no rollback.
Result create_local_session(const SessionConfig& config, std::unique_ptr<Session>* out);

inline constexpr int32_t kMaxCheckInterval = 3600;

struct SyncTestConfig {
  SessionConfig session;
  // Every check_interval frames, roll back this many frames and re-simulate, then compare
  // with the first simulation. 1..session.max_prediction.
  int32_t check_distance = 2;
  // Check every this many frames (1: every frame). An expensive game can sync-test cheaply
  // with check_interval == check_distance: each frame is still re-simulated once, and a
  // checked frame costs two saves, a load and a comparison. 1..kMaxCheckInterval.
  int32_t check_interval = 1;
};

// Sync test: finds non-determinism in the game's save/load/advance. All players local.
Result create_sync_test_session(const SyncTestConfig& config, std::unique_ptr<Session>* out);

// Human-readable reason for the last validation failure of `config`, or null when valid.
const char* validate_session_config(const SessionConfig& config) noexcept;
// The same for a sync test's whole config (session settings included).
const char* validate_sync_test_config(const SyncTestConfig& config) noexcept;

}  // namespace retcon
