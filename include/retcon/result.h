// retcon: result codes shared by the C++ and C APIs.
#pragma once

#include <cstdint>

namespace retcon {

// Every fallible call returns one of these. The numeric values are pinned: the C API
// (retcon_result) uses the same numbers, so never renumber, only append.
enum class Result : int32_t {
  ok = 0,
  invalid_argument = 1,       // a null pointer, a size out of range, a bad config value
  invalid_player = 2,         // unknown player index or handle
  invalid_input_size = 3,     // input bytes of a size other than the session's
  wrong_state = 4,            // the call is not valid in the session's current state
  prediction_limit = 5,       // advancing would exceed the max-prediction window: wait, then retry
  save_failed = 6,            // the game's save did not fit the configured max state size
  input_already_added = 7,    // local input for this player was already given this frame
  missing_local_input = 8,    // a local player has no input for the frame being simulated
  input_out_of_window = 9,    // an input for a frame too far in the past or future
  out_of_memory = 10,
  not_synchronized = 11,      // peers are still handshaking; inputs cannot be taken yet
  too_many_players = 12,
  transport_error = 13,       // a socket could not be opened, bound or written
  bad_packet = 14,            // a datagram failed validation (counted, never fatal)
  player_disconnected = 15,
  not_found = 16,
  io_error = 17,              // a file could not be read or written
  corrupt_data = 18,          // a replay or other file failed validation
  version_mismatch = 19,
  internal_error = 20,        // a broken invariant; a bug in retcon, reported instead of crashing
  unsupported = 21,           // a feature this build lacks (a match key without libsodium: Windows)
};

// Stable lowercase name for logs and bindings; never null.
const char* result_name(Result r) noexcept;

inline bool succeeded(Result r) noexcept { return r == Result::ok; }

}  // namespace retcon
