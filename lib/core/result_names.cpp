#include "retcon/event.h"
#include "retcon/result.h"

namespace retcon {

const char* result_name(Result r) noexcept {
  switch (r) {
    case Result::ok: return "ok";
    case Result::invalid_argument: return "invalid_argument";
    case Result::invalid_player: return "invalid_player";
    case Result::invalid_input_size: return "invalid_input_size";
    case Result::wrong_state: return "wrong_state";
    case Result::prediction_limit: return "prediction_limit";
    case Result::save_failed: return "save_failed";
    case Result::input_already_added: return "input_already_added";
    case Result::missing_local_input: return "missing_local_input";
    case Result::input_out_of_window: return "input_out_of_window";
    case Result::out_of_memory: return "out_of_memory";
    case Result::not_synchronized: return "not_synchronized";
    case Result::too_many_players: return "too_many_players";
    case Result::transport_error: return "transport_error";
    case Result::bad_packet: return "bad_packet";
    case Result::player_disconnected: return "player_disconnected";
    case Result::not_found: return "not_found";
    case Result::io_error: return "io_error";
    case Result::corrupt_data: return "corrupt_data";
    case Result::version_mismatch: return "version_mismatch";
    case Result::internal_error: return "internal_error";
    case Result::unsupported: return "unsupported";
  }
  return "unknown_result";
}

const char* event_type_name(EventType t) noexcept {
  switch (t) {
    case EventType::synchronizing: return "synchronizing";
    case EventType::synchronized: return "synchronized";
    case EventType::running: return "running";
    case EventType::connection_interrupted: return "connection_interrupted";
    case EventType::connection_resumed: return "connection_resumed";
    case EventType::disconnected: return "disconnected";
    case EventType::timesync: return "timesync";
    case EventType::desync_detected: return "desync_detected";
    case EventType::sync_test_mismatch: return "sync_test_mismatch";
    case EventType::prediction_limit: return "prediction_limit";
    case EventType::save_failed: return "save_failed";
    case EventType::handshake_rejected: return "handshake_rejected";
    case EventType::spectator_joined: return "spectator_joined";
    case EventType::spectator_left: return "spectator_left";
    case EventType::late_inputs: return "late_inputs";
    case EventType::input_delay_chosen: return "input_delay_chosen";
    case EventType::input_delay_applied: return "input_delay_applied";
    case EventType::desync_states: return "desync_states";
    case EventType::rejoin_requested: return "rejoin_requested";
    case EventType::player_rejoining: return "player_rejoining";
    case EventType::player_rejoined: return "player_rejoined";
    case EventType::rejoin_refused: return "rejoin_refused";
    case EventType::cannot_continue: return "cannot_continue";
  }
  return "unknown_event";
}

}  // namespace retcon
