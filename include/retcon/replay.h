// retcon: replays. Record the confirmed inputs (and periodic state checksums) of any session,
// write them to a small versioned file (docs/REPLAY_FORMAT.md), and play a file back through
// the game's callbacks at full speed, verifying the recorded checksums.
//
// Recording needs no access to the session's internals. ReplayRecorder decorates the game's
// GameCallbacks: give recorder.callbacks() to the session instead of the game's own. Its
// advance_frame remembers the inputs (and, on checksum frames, the checksum of the state the
// frame starts from) of the latest simulation of each frame in a small ring, then calls the
// game. With rollback a frame can be simulated several times; only the last simulation counts.
// After every advance_frame() the game calls recorder.commit(session->confirmed_frame()): frames
// up to the confirmed frame can no longer change (every correction has been re-simulated by
// then), so they move from the ring to the replay. Call commit right after advance_frame and
// before the next poll(): a poll can confirm inputs whose rollback only the next
// advance_frame() performs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "retcon/callbacks.h"
#include "retcon/result.h"
#include "retcon/types.h"

namespace retcon {

inline constexpr uint16_t kReplayVersion = 1;

// Bits of ReplayHeader::flags.
enum ReplayFlags : uint32_t {
  // Checksums came from the game's GameCallbacks::checksum (else XXH3-64 of the saved bytes).
  kReplayGameChecksum = 1u << 0,
  // Every checksum record also holds the saved state, so a divergence can show both states.
  kReplayStoresStates = 1u << 1,
  // The file holds timed decisions (P2PSession::send_decision), after the checkpoints.
  kReplayDecisions = 1u << 2,
};
inline constexpr uint32_t kReplayKnownFlags = kReplayGameChecksum | kReplayStoresStates | kReplayDecisions;
// A recorder keeps at most this many decisions per frame (more: error() is internal_error).
inline constexpr uint32_t kMaxRecordedDecisionsPerFrame = 8;

struct ReplayHeader {
  uint32_t num_players = 0;        // 1..kMaxPlayers
  uint32_t input_size = 0;         // 1..kMaxInputSize
  uint32_t frame_rate = 60;
  uint32_t checksum_interval = 0;  // a checksum every this many frames (0: none)
  uint32_t flags = 0;              // ReplayFlags
};

// The checksum of the state frame `frame` starts from (after frames 0..frame-1).
struct ReplayCheckpoint {
  Frame frame = 0;
  uint64_t checksum = 0;
  size_t state_offset = 0;  // into Replay::states(), when kReplayStoresStates
  size_t state_length = 0;
};

// A timed decision of a recorded frame; its bytes are Replay::decision_bytes()[offset, offset + size).
struct ReplayDecision {
  Frame frame = 0;
  PlayerIndex sender = 0;
  size_t offset = 0;
  uint32_t size = 0;
};

// A replay in memory: what a file holds.
class Replay {
 public:
  Replay() = default;
  explicit Replay(const ReplayHeader& header) : header_(header) {}

  const ReplayHeader& header() const noexcept { return header_; }
  // Game-defined bytes that recreate the starting state (e.g. a seed and the player count).
  const std::vector<uint8_t>& user_data() const noexcept { return user_data_; }
  void set_user_data(std::vector<uint8_t> data) { user_data_ = std::move(data); }

  Frame frame_count() const noexcept { return Frame(header_.num_players ? status_.size() / header_.num_players : 0); }
  // Inputs of `frame` (0 <= frame < frame_count()), with its timed decisions; pointers stay
  // valid until the replay changes or inputs() is called again.
  FrameInputs inputs(Frame frame) const noexcept;
  // Timed decisions, in the order they were applied (by frame).
  const std::vector<ReplayDecision>& decisions() const noexcept { return decisions_; }
  const std::vector<uint8_t>& decision_bytes() const noexcept { return decision_bytes_; }
  const std::vector<ReplayCheckpoint>& checkpoints() const noexcept { return checkpoints_; }
  // The checkpoint of `frame`, or null.
  const ReplayCheckpoint* checkpoint(Frame frame) const noexcept;
  const std::vector<uint8_t>& states() const noexcept { return states_; }

  // Appending (the recorder does this). Frames are appended in order from 0.
  void append_frame(const uint8_t* inputs, const InputStatus* status);
  void append_checkpoint(Frame frame, uint64_t checksum, const uint8_t* state, size_t length);
  // A decision of `frame` (frames in nondecreasing order; sets kReplayDecisions).
  void append_decision(Frame frame, PlayerIndex sender, const uint8_t* bytes, size_t size);
  // A committed frame simulated again with other inputs: only when peers agree on a dropped
  // player's last frame that is earlier than this machine had confirmed (see replay_recorder).
  void revise_frame(Frame frame, const uint8_t* inputs, const InputStatus* status) noexcept;
  void revise_checkpoint(Frame frame, uint64_t checksum, const uint8_t* state, size_t length) noexcept;
  void reserve_frames(size_t frames);
  void reserve_checkpoints(size_t checkpoints, size_t state_bytes);

  // The file image (docs/REPLAY_FORMAT.md).
  Result serialize(std::vector<uint8_t>* out) const;
  Result write_file(const char* path) const;

  // Parse a file image. Every length is checked: a truncated or corrupt image gives
  // Result::corrupt_data (version_mismatch for a newer version) and a message naming what is
  // wrong; it never reads out of bounds. `error` may be null.
  static Result parse(const uint8_t* data, size_t size, Replay* out, std::string* error);
  static Result read_file(const char* path, Replay* out, std::string* error);

 private:
  size_t input_bytes() const noexcept { return size_t(header_.num_players) * header_.input_size; }

  ReplayHeader header_;
  std::vector<uint8_t> user_data_;
  std::vector<uint8_t> inputs_;       // per frame: players * input_size bytes
  std::vector<InputStatus> status_;   // per frame: players statuses
  std::vector<ReplayCheckpoint> checkpoints_;
  std::vector<uint8_t> states_;
  std::vector<ReplayDecision> decisions_;
  std::vector<uint8_t> decision_bytes_;
  mutable std::vector<Decision> decision_views_;  // sized to the most decisions of one frame
};

struct ReplayRecorderConfig {
  uint32_t num_players = 2;
  uint32_t input_size = 4;
  uint32_t frame_rate = 60;
  size_t max_state_size = 0;       // as the session's: the recorder saves states to hash them
  uint32_t checksum_interval = 10; // 0: no checksums
  bool store_states = false;       // keep the saved state with each checksum (kReplayStoresStates)
  // With store_states: keep the state only on checksum frames that are a multiple of this
  // (1: every checksum frame). Dense checksums with sparse states (e.g. 1 and 60) let
  // bisect_replay() name the exact first differing frame while re-running only from the
  // nearest stored state, for a file ~60 times smaller than states on every frame.
  uint32_t state_interval = 1;
  // Frames the recorder can hold between simulated and confirmed: at least max_prediction + 2
  // (the spectator's catch-up and input delay add to it). A frame pushed out of the ring before
  // it was confirmed makes error() return Result::internal_error.
  uint32_t ring_frames = 2 * kMaxPredictionFrames + kMaxInputDelay + 8;
  std::vector<uint8_t> user_data;
  // Memory reserved up front for this many frames (with their checkpoints and states): a
  // recording no longer than that allocates nothing while the session runs.
  uint32_t reserve_frames = 0;
};

class ReplayRecorder {
 public:
  ReplayRecorder();
  ~ReplayRecorder();
  ReplayRecorder(const ReplayRecorder&) = delete;
  ReplayRecorder& operator=(const ReplayRecorder&) = delete;

  // `game` must be complete. Allocates the ring and the scratch state buffer once.
  Result init(const ReplayRecorderConfig& config, const GameCallbacks& game);
  // The callbacks to give the session: the game's, with advance_frame recorded. The recorder
  // must outlive the session.
  GameCallbacks callbacks() const noexcept;
  // Move every frame up to `confirmed` (session->confirmed_frame()) from the ring to the replay.
  void commit(Frame confirmed);

  // Frames in the replay so far (0..recorded_frames()-1).
  Frame recorded_frames() const noexcept { return replay_.frame_count(); }
  const Replay& replay() const noexcept { return replay_; }
  // ok, or internal_error when a frame left the ring before being confirmed (ring too small),
  // or save_failed when the game's state did not fit max_state_size.
  Result error() const noexcept { return error_; }
  Result write_file(const char* path) const { return replay_.write_file(path); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Replay replay_;
  Result error_ = Result::ok;
};

// The outcome of playing a replay (or part of it).
struct ReplayVerdict {
  Frame frames_played = 0;
  uint32_t checkpoints_verified = 0;   // recorded checksums compared and equal
  Frame last_good = kNullFrame;        // the last checkpoint that matched
  Frame first_bad = kNullFrame;        // the first checkpoint that did not (kNullFrame: none)
  uint64_t expected = 0, actual = 0;   // the first bad checkpoint's checksums
  bool diverged() const noexcept { return first_bad != kNullFrame; }
};

// Plays a replay through a game's callbacks, frame by frame, from the game's current state
// (the game must first be put in the state the recording started from: see user_data()).
// Before simulating a checkpoint frame it saves the live state, hashes it like the recorder did,
// and compares.
class ReplayPlayer {
 public:
  ReplayPlayer();
  ~ReplayPlayer();
  ReplayPlayer(const ReplayPlayer&) = delete;
  ReplayPlayer& operator=(const ReplayPlayer&) = delete;

  // The replay must outlive the player. invalid_argument when the game's callbacks are
  // incomplete or checksums need the game's checksum callback that `game` lacks.
  Result init(const Replay& replay, const GameCallbacks& game, size_t max_state_size);
  // Play one frame (verifying its checkpoint first). wrong_state once every frame was played.
  Result step();
  // Play to the end, or stop at the first checkpoint that differs when `stop_at_divergence`
  // (after simulating that frame; last_state() holds the state the checkpoint compared).
  const ReplayVerdict& run(bool stop_at_divergence = true);

  Frame frame() const noexcept { return frame_; }
  bool done() const noexcept;
  const ReplayVerdict& verdict() const noexcept { return verdict_; }
  // The live state as saved at the last checkpoint compared (for describe_state on divergence).
  const uint8_t* last_state() const noexcept;
  size_t last_state_length() const noexcept { return last_length_; }

 private:
  const Replay* replay_ = nullptr;
  GameCallbacks game_{};
  std::unique_ptr<uint8_t[]> scratch_;
  size_t capacity_ = 0, last_length_ = 0;
  Frame frame_ = 0;
  bool final_checked_ = false;
  ReplayVerdict verdict_;
};

// Progress of a long replay run: called every few hundred frames with the frames done so far
// and the frames to do in total.
struct ReplayProgress {
  void* user = nullptr;
  void (*report)(void* user, Frame done, Frame total) = nullptr;
};

// What bisect_replay() found.
struct ReplayBisectResult {
  Frame start_frame = 0;          // the frame the run started from (a stored state, or 0)
  Frame frames_played = 0;        // frames simulated
  uint32_t checksums_verified = 0;
  Frame last_good = kNullFrame;   // the last checksum frame that matched before first_bad
  Frame first_bad = kNullFrame;   // the first frame whose state differs (kNullFrame: none)
  // True when first_bad is pinned to the frame: last_good == first_bad - 1, i.e. frame
  // first_bad - 1 (its simulation, or its input) made the first differing state. False with
  // sparse checksums: the state differs somewhere in (last_good, first_bad].
  bool exact = false;
  uint64_t expected = 0, actual = 0;  // first_bad's recorded and replayed checksums
  std::vector<uint8_t> replayed_state;   // the state first_bad starts from, as replayed
  // The recorded state of first_bad when the replay stores it; else the last good state
  // (frame reference_frame == last_good), which the recording and the replay share.
  std::vector<uint8_t> reference_state;
  Frame reference_frame = kNullFrame;
  bool reference_is_recorded = false;
  bool diverged() const noexcept { return first_bad != kNullFrame; }
};

// Finds the first frame whose state differs from the recording. Starts from the stored state
// nearest to (at or before) `from_frame` (0: the start; the game is put in that state through
// load_state, so the caller need not rebuild the start for a later frame), plays forward
// comparing every recorded checksum, and stops at the first that differs. On divergence the
// game is left in the replayed state of first_bad. With a checksum every frame the frame is
// exact whatever the state interval. invalid_argument: incomplete callbacks, a bad
// max_state_size, or a replay hashed by the game's checksum callback that `game` lacks.
Result bisect_replay(const Replay& replay, const GameCallbacks& game, size_t max_state_size, Frame from_frame,
                     const ReplayProgress* progress, ReplayBisectResult* out);

// What sync_test_replay() found: determinism (re-simulation) and the recorded checksums.
struct ReplaySyncTestResult {
  Frame frames = 0;                     // frames fed to the sync test
  int32_t check_distance = 0;
  uint64_t rollbacks = 0, frames_resimulated = 0;
  Frame mismatch_frame = kNullFrame;    // the first frame whose re-simulation differed
  uint64_t mismatch_first = 0, mismatch_resimulated = 0;
  std::string mismatch_text_first, mismatch_text_resimulated;  // describe_state, when given
  uint32_t checksums_verified = 0;      // recorded checksums compared and equal
  Frame first_bad = kNullFrame;         // the first frame whose state differs from the recording
  uint64_t expected = 0, actual = 0;
  bool deterministic() const noexcept { return mismatch_frame == kNullFrame; }
  bool matches_recording() const noexcept { return first_bad == kNullFrame; }
};

// Feeds the replay's inputs to a sync-test session (every frame: roll back `check_distance`
// frames, re-simulate, compare) and, on every first simulation of a checksum frame, compares
// the live state with the recording. Stops at the first mismatch of either kind. The game must
// be in the replay's starting state.
Result sync_test_replay(const Replay& replay, const GameCallbacks& game, size_t max_state_size,
                        int32_t check_distance, const ReplayProgress* progress, ReplaySyncTestResult* out);

}  // namespace retcon
