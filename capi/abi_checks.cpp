// Compile-time proof that the C API's numbers and layouts equal the C++ API's: result codes,
// enums, limits, the version, and the structs the callback bridge reinterprets.
#include <cstddef>
#include <type_traits>

#include "retcon.h"
#include "retcon/callbacks.h"
#include "retcon/event.h"
#include "retcon/p2p.h"
#include "retcon/result.h"
#include "retcon/session.h"
#include "retcon/transport.h"
#include "retcon/types.h"

namespace {

using namespace retcon;

#define RETCON_SAME_VALUE(c, cpp) static_assert(static_cast<long long>(c) == static_cast<long long>(cpp), #c)

// ---- results: every value, in order
RETCON_SAME_VALUE(RETCON_RESULT_OK, Result::ok);
RETCON_SAME_VALUE(RETCON_RESULT_INVALID_ARGUMENT, Result::invalid_argument);
RETCON_SAME_VALUE(RETCON_RESULT_INVALID_PLAYER, Result::invalid_player);
RETCON_SAME_VALUE(RETCON_RESULT_INVALID_INPUT_SIZE, Result::invalid_input_size);
RETCON_SAME_VALUE(RETCON_RESULT_WRONG_STATE, Result::wrong_state);
RETCON_SAME_VALUE(RETCON_RESULT_PREDICTION_LIMIT, Result::prediction_limit);
RETCON_SAME_VALUE(RETCON_RESULT_SAVE_FAILED, Result::save_failed);
RETCON_SAME_VALUE(RETCON_RESULT_INPUT_ALREADY_ADDED, Result::input_already_added);
RETCON_SAME_VALUE(RETCON_RESULT_MISSING_LOCAL_INPUT, Result::missing_local_input);
RETCON_SAME_VALUE(RETCON_RESULT_INPUT_OUT_OF_WINDOW, Result::input_out_of_window);
RETCON_SAME_VALUE(RETCON_RESULT_OUT_OF_MEMORY, Result::out_of_memory);
RETCON_SAME_VALUE(RETCON_RESULT_NOT_SYNCHRONIZED, Result::not_synchronized);
RETCON_SAME_VALUE(RETCON_RESULT_TOO_MANY_PLAYERS, Result::too_many_players);
RETCON_SAME_VALUE(RETCON_RESULT_TRANSPORT_ERROR, Result::transport_error);
RETCON_SAME_VALUE(RETCON_RESULT_BAD_PACKET, Result::bad_packet);
RETCON_SAME_VALUE(RETCON_RESULT_PLAYER_DISCONNECTED, Result::player_disconnected);
RETCON_SAME_VALUE(RETCON_RESULT_NOT_FOUND, Result::not_found);
RETCON_SAME_VALUE(RETCON_RESULT_IO_ERROR, Result::io_error);
RETCON_SAME_VALUE(RETCON_RESULT_CORRUPT_DATA, Result::corrupt_data);
RETCON_SAME_VALUE(RETCON_RESULT_VERSION_MISMATCH, Result::version_mismatch);
RETCON_SAME_VALUE(RETCON_RESULT_INTERNAL_ERROR, Result::internal_error);
RETCON_SAME_VALUE(RETCON_RESULT_UNSUPPORTED, Result::unsupported);
static_assert(sizeof(retcon_result) == sizeof(Result), "retcon_result is returned as a 32-bit int");

// ---- enums
RETCON_SAME_VALUE(RETCON_SAVE_AUTOMATIC, SaveMode::automatic);
RETCON_SAME_VALUE(RETCON_SAVE_EVERY_FRAME, SaveMode::every_frame);
RETCON_SAME_VALUE(RETCON_SAVE_SPARSE, SaveMode::sparse);
RETCON_SAME_VALUE(RETCON_LOG_DEBUG, LogLevel::debug);
RETCON_SAME_VALUE(RETCON_LOG_INFO, LogLevel::info);
RETCON_SAME_VALUE(RETCON_LOG_WARNING, LogLevel::warning);
RETCON_SAME_VALUE(RETCON_LOG_ERROR, LogLevel::error);
RETCON_SAME_VALUE(RETCON_INPUT_CONFIRMED, InputStatus::confirmed);
RETCON_SAME_VALUE(RETCON_INPUT_PREDICTED, InputStatus::predicted);
RETCON_SAME_VALUE(RETCON_INPUT_DISCONNECTED, InputStatus::disconnected);
RETCON_SAME_VALUE(RETCON_ADVANCE_NONE, kAdvanceNone);
RETCON_SAME_VALUE(RETCON_ADVANCE_RESIMULATING, kAdvanceResimulating);
RETCON_SAME_VALUE(RETCON_EVENT_SYNCHRONIZING, EventType::synchronizing);
RETCON_SAME_VALUE(RETCON_EVENT_SYNCHRONIZED, EventType::synchronized);
RETCON_SAME_VALUE(RETCON_EVENT_RUNNING, EventType::running);
RETCON_SAME_VALUE(RETCON_EVENT_CONNECTION_INTERRUPTED, EventType::connection_interrupted);
RETCON_SAME_VALUE(RETCON_EVENT_CONNECTION_RESUMED, EventType::connection_resumed);
RETCON_SAME_VALUE(RETCON_EVENT_DISCONNECTED, EventType::disconnected);
RETCON_SAME_VALUE(RETCON_EVENT_TIMESYNC, EventType::timesync);
RETCON_SAME_VALUE(RETCON_EVENT_DESYNC_DETECTED, EventType::desync_detected);
RETCON_SAME_VALUE(RETCON_EVENT_SYNC_TEST_MISMATCH, EventType::sync_test_mismatch);
RETCON_SAME_VALUE(RETCON_EVENT_PREDICTION_LIMIT, EventType::prediction_limit);
RETCON_SAME_VALUE(RETCON_EVENT_SAVE_FAILED, EventType::save_failed);
RETCON_SAME_VALUE(RETCON_EVENT_HANDSHAKE_REJECTED, EventType::handshake_rejected);
RETCON_SAME_VALUE(RETCON_EVENT_SPECTATOR_JOINED, EventType::spectator_joined);
RETCON_SAME_VALUE(RETCON_EVENT_SPECTATOR_LEFT, EventType::spectator_left);
RETCON_SAME_VALUE(RETCON_EVENT_LATE_INPUTS, EventType::late_inputs);
RETCON_SAME_VALUE(RETCON_EVENT_INPUT_DELAY_CHOSEN, EventType::input_delay_chosen);
RETCON_SAME_VALUE(RETCON_EVENT_INPUT_DELAY_APPLIED, EventType::input_delay_applied);
RETCON_SAME_VALUE(RETCON_EVENT_REJOIN_REQUESTED, EventType::rejoin_requested);
RETCON_SAME_VALUE(RETCON_EVENT_PLAYER_REJOINING, EventType::player_rejoining);
RETCON_SAME_VALUE(RETCON_EVENT_PLAYER_REJOINED, EventType::player_rejoined);
RETCON_SAME_VALUE(RETCON_EVENT_REJOIN_REFUSED, EventType::rejoin_refused);
RETCON_SAME_VALUE(RETCON_EVENT_DESYNC_STATES, EventType::desync_states);
RETCON_SAME_VALUE(RETCON_EVENT_CANNOT_CONTINUE, EventType::cannot_continue);

// ---- UDP receive paths (retcon_udp_transport_open_with_receive_path casts between them)
RETCON_SAME_VALUE(RETCON_UDP_RECEIVE_COMPLETION_RING, UdpTransport::ReceivePath::completion_ring);
RETCON_SAME_VALUE(RETCON_UDP_RECEIVE_BATCHED_CALLS, UdpTransport::ReceivePath::batched_calls);
RETCON_SAME_VALUE(RETCON_UDP_RECEIVE_SINGLE_CALLS, UdpTransport::ReceivePath::single_calls);

// ---- limits
RETCON_SAME_VALUE(RETCON_MAX_PLAYERS, kMaxPlayers);
RETCON_SAME_VALUE(RETCON_MAX_SPECTATORS, kMaxSpectators);
static_assert(RETCON_MATCH_KEY_SIZE == sizeof(NetworkConfig{}.match_key), "match key size");
RETCON_SAME_VALUE(RETCON_MAX_INPUT_SIZE, kMaxInputSize);
RETCON_SAME_VALUE(RETCON_MAX_PREDICTION_FRAMES, kMaxPredictionFrames);
RETCON_SAME_VALUE(RETCON_MAX_INPUT_DELAY, kMaxInputDelay);
RETCON_SAME_VALUE(RETCON_MAX_STATE_SIZE, kMaxStateSize);
RETCON_SAME_VALUE(RETCON_NULL_FRAME, kNullFrame);

// ---- the version in the header is the project's (CMake passes the project version in)
#if defined(RETCON_PROJECT_VERSION_MAJOR)
static_assert(RETCON_VERSION_MAJOR == RETCON_PROJECT_VERSION_MAJOR, "retcon.h major version != project()");
static_assert(RETCON_VERSION_MINOR == RETCON_PROJECT_VERSION_MINOR, "retcon.h minor version != project()");
static_assert(RETCON_VERSION_PATCH == RETCON_PROJECT_VERSION_PATCH, "retcon.h patch version != project()");
#endif

// ---- layouts of the structs reinterpreted by the callback bridge
#define RETCON_SAME_FIELD(c, cpp, cf, cppf)                                   \
  static_assert(offsetof(c, cf) == offsetof(cpp, cppf), #c "." #cf " offset"); \
  static_assert(sizeof(c::cf) == sizeof(cpp::cppf), #c "." #cf " size")

static_assert(sizeof(retcon_frame_inputs) == sizeof(FrameInputs));
static_assert(alignof(retcon_frame_inputs) == alignof(FrameInputs));
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, bytes, bytes);
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, status, status);
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, input_size, input_size);
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, player_count, player_count);
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, decisions, decisions);
RETCON_SAME_FIELD(retcon_frame_inputs, FrameInputs, decision_count, decision_count);
static_assert(sizeof(retcon_decision) == sizeof(Decision));
RETCON_SAME_FIELD(retcon_decision, Decision, bytes, bytes);
RETCON_SAME_FIELD(retcon_decision, Decision, size, size);
RETCON_SAME_FIELD(retcon_decision, Decision, sender, sender);
RETCON_SAME_VALUE(RETCON_MAX_DECISION_SIZE, kMaxDecisionSize);
static_assert(sizeof(InputStatus) == sizeof(uint8_t));

static_assert(sizeof(retcon_text_sink) == sizeof(TextSink));
static_assert(alignof(retcon_text_sink) == alignof(TextSink));
RETCON_SAME_FIELD(retcon_text_sink, TextSink, user, ctx);
RETCON_SAME_FIELD(retcon_text_sink, TextSink, write, write);

static_assert(sizeof(retcon_event) == sizeof(Event));
static_assert(alignof(retcon_event) == alignof(Event));
RETCON_SAME_FIELD(retcon_event, Event, type, type);
RETCON_SAME_FIELD(retcon_event, Event, player, player);
RETCON_SAME_FIELD(retcon_event, Event, frame, frame);
RETCON_SAME_FIELD(retcon_event, Event, count, count);
RETCON_SAME_FIELD(retcon_event, Event, total, total);
RETCON_SAME_FIELD(retcon_event, Event, checksum_local, checksum_local);
RETCON_SAME_FIELD(retcon_event, Event, checksum_remote, checksum_remote);
RETCON_SAME_FIELD(retcon_event, Event, text_local, text_local);
RETCON_SAME_FIELD(retcon_event, Event, text_local_len, text_local_len);
RETCON_SAME_FIELD(retcon_event, Event, text_remote, text_remote);
RETCON_SAME_FIELD(retcon_event, Event, text_remote_len, text_remote_len);
RETCON_SAME_FIELD(retcon_event, Event, message, message);
RETCON_SAME_FIELD(retcon_event, Event, state_local, state_local);
RETCON_SAME_FIELD(retcon_event, Event, state_local_len, state_local_len);
RETCON_SAME_FIELD(retcon_event, Event, state_remote, state_remote);
RETCON_SAME_FIELD(retcon_event, Event, state_remote_len, state_remote_len);

// The predictor is passed through without a trampoline: its function type must be identical.
static_assert(std::is_same_v<decltype(retcon_predictor::predict), decltype(Predictor::predict)>);

// All of these are trivially copyable, so the reinterpretation copies nothing and owns nothing.
static_assert(std::is_trivially_copyable_v<FrameInputs> && std::is_standard_layout_v<FrameInputs>);
static_assert(std::is_trivially_copyable_v<Event> && std::is_standard_layout_v<Event>);
static_assert(std::is_trivially_copyable_v<TextSink> && std::is_standard_layout_v<TextSink>);

}  // namespace

namespace {
// ---- networking: addresses are copied as bytes; transport callbacks pass through as is
static_assert(sizeof(retcon_peer_address) == sizeof(retcon::PeerAddress));
static_assert(offsetof(retcon_peer_address, size) == offsetof(retcon::PeerAddress, size));
static_assert(offsetof(retcon_peer_address, bytes) == offsetof(retcon::PeerAddress, bytes));
static_assert(RETCON_PEER_ADDRESS_CAPACITY == retcon::PeerAddress::kCapacity);
static_assert(std::is_trivially_copyable_v<retcon::PeerAddress>);
static_assert(std::is_same_v<decltype(retcon_transport_callbacks::send), decltype(retcon::TransportCallbacks::send)>);
static_assert(std::is_same_v<decltype(retcon_transport_callbacks::receive),
                             decltype(retcon::TransportCallbacks::receive)>);
RETCON_SAME_VALUE(RETCON_PLAYER_LOCAL, retcon::PlayerKind::local);
RETCON_SAME_VALUE(RETCON_PLAYER_REMOTE, retcon::PlayerKind::remote);
// retcon_peer_stats copies PeerStats field by field: a new C++ field must be added to the C
// struct (and to copy_stats in retcon_net_c.cpp). Today the C struct's `size` sits where
// PeerStats has padding, so the sizes are equal; a new C++ field breaks this tripwire.
static_assert(sizeof(retcon_peer_stats) == sizeof(retcon::PeerStats),
              "PeerStats changed: update retcon_peer_stats and copy_stats");
}  // namespace

namespace {
// The limit retcon.h states, and fields the C inits fill from the C++ defaults.
static_assert(retcon::kMaxCheckInterval == 3600, "retcon.h documents check_interval 1..3600");
static_assert(sizeof(retcon_session_config::memory_budget) == sizeof(retcon::SessionConfig::memory_budget));
static_assert(sizeof(retcon_sync_test_config::check_interval) == sizeof(retcon::SyncTestConfig::check_interval));
}  // namespace

namespace {
// The same tripwire for retcon_session_stats, copied field by field in retcon_c.cpp.
static_assert(sizeof(retcon_session_stats) == sizeof(retcon::SessionStats),
              "SessionStats changed: update retcon_session_stats and retcon_session_get_stats");
}  // namespace
