// The C API of replays: recording a session (a retcon::ReplayRecorder between the session and
// the game, through the callback bridge), the replay handle, and running a replay through a
// game's C callbacks (play, bisect, sync test).
#include <cstring>
#include <string>
#include <vector>

#include "handles.h"
#include "retcon/replay.h"

struct retcon_replay {
  static constexpr uint32_t kMagic = 0x52434e52;  // "RCNR"
  uint32_t magic = kMagic;
  retcon::Replay replay;
  // What the last run's report points at.
  std::vector<uint8_t> replayed_state, reference_state;
  std::string text_first, text_resimulated;
  // Set while play, bisect or sync test runs the game's callbacks on this replay: destroying or
  // revising it from inside them (or running it again) is refused with WRONG_STATE.
  bool running = false;

  retcon_replay() = default;
  retcon_replay(const retcon_replay&) = delete;
  retcon_replay& operator=(const retcon_replay&) = delete;
  ~retcon_replay() { magic = 0; }
};

using namespace retcon::capi;

namespace {

bool is_replay(const retcon_replay* r) noexcept { return r != nullptr && r->magic == retcon_replay::kMagic; }

// Marks a replay as running the game's callbacks for the duration of a run.
class RunScope {
 public:
  explicit RunScope(retcon_replay& r) noexcept : r_(r) { r_.running = true; }
  ~RunScope() { r_.running = false; }
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  retcon_replay& r_;
};

void copy_error(const std::string& message, char* error, size_t capacity) noexcept {
  if (error == nullptr || capacity == 0) return;
  const size_t n = message.size() < capacity - 1 ? message.size() : capacity - 1;
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

retcon_result make_replay(retcon::Replay&& r, retcon_replay** out) {
  std::unique_ptr<retcon_replay> h(new retcon_replay);
  h->replay = std::move(r);
  *out = h.release();
  return RETCON_RESULT_OK;
}

// The recording of a session, or its failure.
retcon_result recording_of(const retcon_session* session, const retcon::Replay** out) noexcept {
  if (!is_session(session)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (!session->recorder) return RETCON_RESULT_NOT_FOUND;
  if (session->recorder->error() != retcon::Result::ok) return to_c(session->recorder->error());
  *out = &session->recorder->replay();
  return RETCON_RESULT_OK;
}

// Checks a run's arguments; fills the bridge that turns the C callbacks into C++ ones.
retcon_result check_run(const retcon_replay* replay, const retcon_game_callbacks* callbacks,
                        const retcon_replay_run_config* config, const retcon_replay_report* report,
                        CallbackBridge* bridge) noexcept {
  if (!is_replay(replay) || callbacks == nullptr || config == nullptr || report == nullptr)
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (!known_size(callbacks->size, sizeof(retcon_game_callbacks)) ||
      !known_size(config->size, sizeof(retcon_replay_run_config)) ||
      !known_size(report->size, sizeof(retcon_replay_report)))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (!callbacks->save_state || !callbacks->load_state || !callbacks->advance_frame) return RETCON_RESULT_INVALID_ARGUMENT;
  if (config->max_state_size < 1 || config->max_state_size > RETCON_MAX_STATE_SIZE) return RETCON_RESULT_INVALID_ARGUMENT;
  if ((replay->replay.header().flags & retcon::kReplayGameChecksum) != 0 && callbacks->checksum == nullptr)
    return RETCON_RESULT_INVALID_ARGUMENT;  // the recording was hashed by the game's function
  if (replay->running) return RETCON_RESULT_WRONG_STATE;  // from inside a run's own callbacks
  bridge->init(*callbacks, retcon_logger{});
  return RETCON_RESULT_OK;
}

retcon::ReplayProgress progress_of(const retcon_replay_run_config& c) noexcept {
  retcon::ReplayProgress p;
  if (c.progress) {
    p.user = const_cast<retcon_replay_run_config*>(&c);
    p.report = [](void* u, retcon::Frame done, retcon::Frame total) {
      const retcon_replay_run_config& cfg = *static_cast<const retcon_replay_run_config*>(u);
      cfg.progress(cfg.progress_user, done, total);
    };
  }
  return p;
}

void clear_report(retcon_replay_report* r) noexcept {
  *r = retcon_replay_report{};
  r->size = sizeof(retcon_replay_report);
  r->last_good = r->first_bad = r->reference_frame = r->mismatch_frame = RETCON_NULL_FRAME;
}

}  // namespace

extern "C" {

retcon_result retcon_recording_config_init(retcon_recording_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *config = retcon_recording_config{};
  config->size = sizeof(retcon_recording_config);
  config->frame_rate = 60;
  config->checksum_interval = 1;
  config->state_interval = 60;
  return RETCON_RESULT_OK;
}

retcon_result retcon_session_start_recording(retcon_session* session, const retcon_recording_config* config) {
  if (retcon_result r = check_mutable(session); r != RETCON_RESULT_OK) return r;
  if (config == nullptr || !known_size(config->size, sizeof(retcon_recording_config))) return RETCON_RESULT_INVALID_ARGUMENT;
  if (config->frame_rate < 1 || config->frame_rate > 65535 || config->user_data_size > 65535 ||
      (config->user_data_size != 0 && config->user_data == nullptr))
    return RETCON_RESULT_INVALID_ARGUMENT;
  if (session->recorder || session->impl->current_frame() != 0) return RETCON_RESULT_WRONG_STATE;
  return guarded([&] {
    retcon::ReplayRecorderConfig rc;
    rc.num_players = session->num_players;
    rc.input_size = session->input_size;
    rc.frame_rate = config->frame_rate;
    rc.max_state_size = session->max_state_size;
    rc.checksum_interval = config->checksum_interval;
    rc.store_states = config->state_interval != 0 && config->checksum_interval != 0;
    rc.state_interval = config->state_interval != 0 ? config->state_interval : 1;
    rc.reserve_frames = config->reserve_frames;
    if (config->user_data_size != 0) rc.user_data.assign(config->user_data, config->user_data + config->user_data_size);
    auto recorder = std::make_unique<retcon::ReplayRecorder>();
    if (retcon::Result r = recorder->init(rc, session->bridge.game_callbacks_direct()); r != retcon::Result::ok)
      return to_c(r);
    session->bridge.intercept_advance(recorder->callbacks());
    session->recorder = std::move(recorder);
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_session_copy_recording(const retcon_session* session, retcon_replay** out) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  const retcon::Replay* r = nullptr;
  if (retcon_result res = recording_of(session, &r); res != RETCON_RESULT_OK) return res;
  return guarded([&] { return make_replay(retcon::Replay(*r), out); });
}

retcon_result retcon_session_save_recording(const retcon_session* session, const char* path) {
  if (path == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::Replay* r = nullptr;
  if (retcon_result res = recording_of(session, &r); res != RETCON_RESULT_OK) return res;
  return guarded([&] { return to_c(r->write_file(path)); });
}

retcon_result retcon_replay_load(const void* data, size_t size, retcon_replay** out, char* error, size_t error_capacity) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (data == nullptr && size != 0) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    retcon::Replay r;
    std::string message;
    const uint8_t empty = 0;
    const retcon::Result res =
        retcon::Replay::parse(data ? static_cast<const uint8_t*>(data) : &empty, size, &r, &message);
    copy_error(message, error, error_capacity);
    if (res != retcon::Result::ok) return to_c(res);
    return make_replay(std::move(r), out);
  });
}

retcon_result retcon_replay_load_file(const char* path, retcon_replay** out, char* error, size_t error_capacity) {
  if (out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *out = nullptr;
  if (path == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    retcon::Replay r;
    std::string message;
    const retcon::Result res = retcon::Replay::read_file(path, &r, &message);
    copy_error(message, error, error_capacity);
    if (res != retcon::Result::ok) return to_c(res);
    return make_replay(std::move(r), out);
  });
}

retcon_result retcon_replay_serialize(const retcon_replay* replay, void* buffer, size_t capacity, size_t* length) {
  if (!is_replay(replay) || length == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    std::vector<uint8_t> image;
    if (retcon::Result r = replay->replay.serialize(&image); r != retcon::Result::ok) return to_c(r);
    *length = image.size();
    if (buffer == nullptr) return RETCON_RESULT_OK;
    if (capacity < image.size()) return RETCON_RESULT_INVALID_ARGUMENT;
    std::memcpy(buffer, image.data(), image.size());
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_replay_save_file(const retcon_replay* replay, const char* path) {
  if (!is_replay(replay) || path == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] { return to_c(replay->replay.write_file(path)); });
}

retcon_result retcon_replay_destroy(retcon_replay* replay) {
  if (replay == nullptr) return RETCON_RESULT_OK;
  if (!is_replay(replay)) return RETCON_RESULT_INVALID_ARGUMENT;
  if (replay->running) return RETCON_RESULT_WRONG_STATE;
  delete replay;
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_info_init(retcon_replay_info* info) {
  if (info == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *info = retcon_replay_info{};
  info->size = sizeof(retcon_replay_info);
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_get_info(const retcon_replay* replay, retcon_replay_info* info) {
  if (!is_replay(replay) || info == nullptr || !known_size(info->size, sizeof(retcon_replay_info)))
    return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::Replay& r = replay->replay;
  const retcon::ReplayHeader& h = r.header();
  info->num_players = h.num_players;
  info->input_size = h.input_size;
  info->frame_rate = h.frame_rate;
  info->checksum_interval = h.checksum_interval;
  info->flags = h.flags;
  info->frame_count = r.frame_count();
  info->checkpoint_count = uint32_t(r.checkpoints().size());
  info->stored_states = 0;
  for (const retcon::ReplayCheckpoint& c : r.checkpoints()) info->stored_states += c.state_length != 0 ? 1u : 0u;
  info->user_data = r.user_data().empty() ? nullptr : r.user_data().data();
  info->user_data_size = r.user_data().size();
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_get_inputs(const retcon_replay* replay, int32_t frame, retcon_frame_inputs* out) {
  if (!is_replay(replay) || out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  if (frame < 0 || frame >= replay->replay.frame_count()) return RETCON_RESULT_NOT_FOUND;
  const retcon::FrameInputs in = replay->replay.inputs(frame);
  out->bytes = in.bytes;
  out->status = reinterpret_cast<const uint8_t*>(in.status);
  out->input_size = in.input_size;
  out->player_count = in.player_count;
  out->decisions = reinterpret_cast<const retcon_decision*>(in.decisions);
  out->decision_count = in.decision_count;
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_set_input(retcon_replay* replay, int32_t frame, int32_t player, const void* input,
                                      size_t size) {
  if (!is_replay(replay) || input == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  if (replay->running) return RETCON_RESULT_WRONG_STATE;
  retcon::Replay& r = replay->replay;
  if (frame < 0 || frame >= r.frame_count()) return RETCON_RESULT_NOT_FOUND;
  if (player < 0 || uint32_t(player) >= r.header().num_players) return RETCON_RESULT_INVALID_PLAYER;
  if (size != r.header().input_size) return RETCON_RESULT_INVALID_INPUT_SIZE;
  uint8_t row[RETCON_MAX_PLAYERS * RETCON_MAX_INPUT_SIZE];
  retcon::InputStatus status[RETCON_MAX_PLAYERS];
  const retcon::FrameInputs in = r.inputs(frame);
  std::memcpy(row, in.bytes, size_t(in.player_count) * in.input_size);
  std::memcpy(status, in.status, in.player_count * sizeof(retcon::InputStatus));
  std::memcpy(row + size_t(player) * size, input, size);
  r.revise_frame(frame, row, status);
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_get_checkpoint(const retcon_replay* replay, uint32_t index, retcon_replay_checkpoint* out) {
  if (!is_replay(replay) || out == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  const retcon::Replay& r = replay->replay;
  if (index >= r.checkpoints().size()) return RETCON_RESULT_NOT_FOUND;
  const retcon::ReplayCheckpoint& c = r.checkpoints()[index];
  out->frame = c.frame;
  out->checksum = c.checksum;
  out->state = c.state_length ? r.states().data() + c.state_offset : nullptr;
  out->state_length = c.state_length;
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_run_config_init(retcon_replay_run_config* config) {
  if (config == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  *config = retcon_replay_run_config{};
  config->size = sizeof(retcon_replay_run_config);
  config->check_distance = 2;
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_report_init(retcon_replay_report* report) {
  if (report == nullptr) return RETCON_RESULT_INVALID_ARGUMENT;
  clear_report(report);
  return RETCON_RESULT_OK;
}

retcon_result retcon_replay_play(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                 const retcon_replay_run_config* config, retcon_replay_report* report) {
  CallbackBridge bridge;
  if (retcon_result r = check_run(replay, callbacks, config, report, &bridge); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    RunScope running(*replay);
    clear_report(report);
    retcon::ReplayPlayer player;
    const retcon::Result r = player.init(replay->replay, bridge.game_callbacks(), size_t(config->max_state_size));
    if (r != retcon::Result::ok) return to_c(r);
    const retcon::Frame total = replay->replay.frame_count();
    retcon::Result step = retcon::Result::ok;
    while ((step = player.step()) == retcon::Result::ok) {
      if (config->progress && player.frame() % 256 == 0) config->progress(config->progress_user, player.frame(), total);
    }
    if (step == retcon::Result::save_failed) return RETCON_RESULT_SAVE_FAILED;
    if (config->progress) config->progress(config->progress_user, player.frame(), total);
    const retcon::ReplayVerdict& v = player.verdict();
    report->frames_played = v.frames_played;
    report->checksums_verified = v.checkpoints_verified;
    report->last_good = v.last_good;
    report->first_bad = v.first_bad;
    report->expected = v.expected;
    report->actual = v.actual;
    report->exact = v.diverged() && (v.first_bad == 0 || v.last_good == v.first_bad - 1) ? 1u : 0u;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_replay_bisect(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                   const retcon_replay_run_config* config, retcon_replay_report* report) {
  CallbackBridge bridge;
  if (retcon_result r = check_run(replay, callbacks, config, report, &bridge); r != RETCON_RESULT_OK) return r;
  return guarded([&] {
    RunScope running(*replay);
    clear_report(report);
    retcon::ReplayBisectResult b;
    const retcon::ReplayProgress progress = progress_of(*config);
    const retcon::Result r = retcon::bisect_replay(replay->replay, bridge.game_callbacks(), size_t(config->max_state_size),
                                                   config->from_frame, &progress, &b);
    if (r != retcon::Result::ok) return to_c(r);
    replay->replayed_state = std::move(b.replayed_state);
    replay->reference_state = std::move(b.reference_state);
    report->start_frame = b.start_frame;
    report->frames_played = b.frames_played;
    report->checksums_verified = b.checksums_verified;
    report->last_good = b.last_good;
    report->first_bad = b.first_bad;
    report->exact = b.exact ? 1u : 0u;
    report->expected = b.expected;
    report->actual = b.actual;
    if (!replay->replayed_state.empty()) {
      report->replayed_state = replay->replayed_state.data();
      report->replayed_state_length = replay->replayed_state.size();
    }
    if (!replay->reference_state.empty()) {
      report->reference_state = replay->reference_state.data();
      report->reference_state_length = replay->reference_state.size();
    }
    report->reference_frame = b.reference_frame;
    report->reference_is_recorded = b.reference_is_recorded ? 1u : 0u;
    return RETCON_RESULT_OK;
  });
}

retcon_result retcon_replay_sync_test(retcon_replay* replay, const retcon_game_callbacks* callbacks,
                                      const retcon_replay_run_config* config, retcon_replay_report* report) {
  CallbackBridge bridge;
  if (retcon_result r = check_run(replay, callbacks, config, report, &bridge); r != RETCON_RESULT_OK) return r;
  if (config->check_distance < 1 || config->check_distance > RETCON_MAX_PREDICTION_FRAMES)
    return RETCON_RESULT_INVALID_ARGUMENT;
  return guarded([&] {
    RunScope running(*replay);
    clear_report(report);
    retcon::ReplaySyncTestResult t;
    const retcon::ReplayProgress progress = progress_of(*config);
    const retcon::Result r = retcon::sync_test_replay(replay->replay, bridge.game_callbacks(),
                                                      size_t(config->max_state_size), config->check_distance, &progress, &t);
    if (r != retcon::Result::ok) return to_c(r);
    replay->text_first = std::move(t.mismatch_text_first);
    replay->text_resimulated = std::move(t.mismatch_text_resimulated);
    report->frames_played = t.frames;
    report->checksums_verified = t.checksums_verified;
    report->first_bad = t.first_bad;
    report->expected = t.expected;
    report->actual = t.actual;
    report->check_distance = t.check_distance;
    report->mismatch_frame = t.mismatch_frame;
    report->mismatch_first = t.mismatch_first;
    report->mismatch_resimulated = t.mismatch_resimulated;
    if (!replay->text_first.empty()) {
      report->mismatch_text_first = replay->text_first.c_str();
      report->mismatch_text_first_len = replay->text_first.size();
    }
    if (!replay->text_resimulated.empty()) {
      report->mismatch_text_resimulated = replay->text_resimulated.c_str();
      report->mismatch_text_resimulated_len = replay->text_resimulated.size();
    }
    report->rollbacks = t.rollbacks;
    report->frames_resimulated = t.frames_resimulated;
    return RETCON_RESULT_OK;
  });
}

}  // extern "C"
