#include "retcon/session.h"

namespace retcon {

const char* validate_session_config(const SessionConfig& c) noexcept {
  if (c.num_players < 1 || c.num_players > uint32_t(kMaxPlayers)) return "num_players must be 1..8";
  if (c.input_size < 1 || c.input_size > kMaxInputSize) return "input_size must be 1..128 bytes";
  if (c.max_prediction < 0 || c.max_prediction > kMaxPredictionFrames) return "max_prediction must be 0..64";
  if (c.max_state_size < 1 || c.max_state_size > kMaxStateSize) return "max_state_size must be 1 byte..256 MiB";
  if (uint32_t(c.save_mode) > uint32_t(SaveMode::sparse)) return "save_mode is not a SaveMode value";
  if (!c.callbacks.save_state) return "callbacks.save_state is required";
  if (!c.callbacks.load_state) return "callbacks.load_state is required";
  if (!c.callbacks.advance_frame) return "callbacks.advance_frame is required";
  if (c.logger.log && uint32_t(c.logger.min_level) > uint32_t(LogLevel::error)) return "logger.min_level is not a LogLevel";
  return nullptr;
}

}  // namespace retcon
