#include "core/rollback_driver.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "core/checksum.h"

namespace retcon::detail {

namespace {
constexpr Frame kFrameMax = std::numeric_limits<Frame>::max();
}

Result RollbackDriver::init(const SessionConfig& config, int32_t history, SaveMode save_mode) {
  if (validate_session_config(config) != nullptr) return Result::invalid_argument;
  callbacks_ = config.callbacks;
  predictor_ = config.predictor;
  reporter_.init(config.callbacks, config.logger);
  num_players_ = config.num_players;
  input_size_ = config.input_size;
  small_inputs_ = small_input_size(input_size_);
  max_prediction_ = config.max_prediction;
  window_ = config.max_prediction;
  history_ = std::max(history, config.max_prediction);
  reach_ = history_;
  save_mode_ = save_mode == SaveMode::automatic ? SaveMode::every_frame : save_mode;
  saves_needed_ = save_mode != SaveMode::automatic || history_ > 0;
  saves_every_frame_ = saves_needed_ && save_mode_ != SaveMode::sparse;
  usual_frames_ = saves_every_frame_ && predictor_.predict == nullptr;

  // Remote inputs can run ahead of frame_ by both sides' delays plus the window; rollbacks and
  // sync tests read back up to `history_` frames. Twice both, plus slack, never wraps a needed
  // frame.
  frame_inputs_ = std::make_unique<uint8_t[]>(size_t(num_players_) * input_size_);
  frame_view_ = FrameInputs{nullptr, frame_status_.data(), input_size_, num_players_};
  init_queues();
  zeros_ = std::make_unique<uint8_t[]>(input_size_);
  memory_budget_ = config.memory_budget;
  committed_bytes_ = 0;
  // A rollback loads a frame up to history_ back while frame_ itself is saved: history_ + 2.
  if (saves_needed_) {
    const uint32_t slots = uint32_t(history_ + 2);
    if (Result r = commit_memory(StateRing::bytes_for(slots, config.max_state_size), "the save ring");
        r != Result::ok) {
      return r;
    }
    ring_.init(slots, config.max_state_size);
    reporter_.log(LogLevel::info, "save ring: %u slots of %zu bytes (%llu bytes committed)", slots,
                  config.max_state_size, static_cast<unsigned long long>(committed_bytes_));
  }
  stats_ = SessionStats{};
  stats_.current_frame = 0;
  stats_.confirmed_frame = kNullFrame;
  frame_ = 0;
  start_frame_ = 0;
  first_incorrect_ = kNullFrame;
  last_saved_ = kNullFrame;
  update_absence();
  update_min_delay();
  changed();
  return Result::ok;
}

Result RollbackDriver::start_from(Frame frame, const uint8_t* data, size_t size) noexcept {
  if (frame_ != start_frame_ || stats_.frames_advanced != 0) return Result::wrong_state;
  if (frame < 0 || data == nullptr || size == 0 || size > ring_.capacity() || ring_.size() == 0)
    return Result::invalid_argument;
  for (uint32_t p = 0; p < num_players_; ++p) players_[p].queue.start_at(frame);
  SavedState& slot = ring_.slot_for(frame);
  std::memcpy(slot.data, data, size);
  slot.frame = frame;
  slot.length = size;
  slot.checksum_valid = false;
  // An input taken before stays the one of the (new) current frame.
  for (uint32_t p = 0; p < num_players_; ++p)
    if (players_[p].added_at == frame_) players_[p].added_at = frame;
  frame_ = start_frame_ = frame;
  changed();
  last_saved_ = frame;
  stats_.current_frame = frame;
  stats_.confirmed_frame = frame - 1;
  first_incorrect_ = kNullFrame;
  if (Result r = load(slot); r != Result::ok) return r;
  checkpoints_.offer(slot);  // the ring slot may hand its buffer over: load first
  return Result::ok;
}

Result RollbackDriver::commit_memory(uint64_t bytes, const char* what) noexcept {
  const uint64_t total = committed_bytes_ + bytes;
  if (memory_budget_ != 0 && total > memory_budget_) {
    reporter_.log(LogLevel::error,
                  "out of memory budget: %s needs %llu bytes, %llu in all, beyond memory_budget %llu "
                  "(lower max_state_size or max_prediction, or raise memory_budget)",
                  what, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(total),
                  static_cast<unsigned long long>(memory_budget_));
    return Result::out_of_memory;
  }
  committed_bytes_ = total;
  return Result::ok;
}

Result RollbackDriver::enable_checkpoints(int32_t depth) {
  if (!saves_needed_ || depth <= 0) return Result::ok;
  // Sized by the configured window (a lowered one only makes the checkpoints reach further).
  const int32_t interval = std::max(max_prediction_, 4);
  const uint32_t count = uint32_t((depth + interval - 1) / interval + 2);
  if (Result r = commit_memory(StateRing::bytes_for(count, ring_.capacity()), "the checkpoints");
      r != Result::ok) {
    return r;
  }
  checkpoints_.init(count, interval, ring_.capacity());
  reach_ = std::max(history_, checkpoints_.depth() + 1);
  reporter_.log(LogLevel::info, "checkpoints: %u of %zu bytes (%llu bytes committed in all)", count,
                ring_.capacity(), static_cast<unsigned long long>(committed_bytes_));
  // Inputs must reach as far back as the states do.
  init_queues();
  return Result::ok;
}

Result RollbackDriver::keep_confirmed_inputs(int32_t frames) {
  if (frames < 0) return Result::invalid_argument;
  extra_input_frames_ = frames;
  init_queues();
  return Result::ok;
}

void RollbackDriver::init_queues() {
  const int32_t depth = checkpoints_.enabled() ? checkpoints_.depth() : 0;
  const uint32_t queue_frames =
      std::bit_ceil(uint32_t(2 * history_ + depth + 2 * kMaxInputDelay + 16 + extra_input_frames_));
  // One ring for every player: a frame's inputs side by side, as FrameInputs hands them over.
  const size_t stride = size_t(num_players_) * input_size_;
  input_rows_ = std::make_unique<uint8_t[]>(size_t(queue_frames) * stride);
  input_row_mask_ = queue_frames - 1;
  input_row_bytes_ = stride;
  for (uint32_t p = 0; p < num_players_; ++p)
    players_[p].queue.init_shared(PlayerIndex(p), input_size_, queue_frames, input_rows_.get(), stride,
                                  size_t(p) * input_size_);
  changed();
}

// ---------------------------------------------------------------- inputs

// add_local_input and add_remote_input take the usual input (the next frame, below the window
// bound kept by fits_window, the player connected) in a few tests, with nothing to keep in
// registers across a call; anything else goes to the full path, called last (a tail call).
Result RollbackDriver::add_local_input(PlayerIndex player, const void* input, size_t size) noexcept {
  // A negative player is a huge unsigned one.
  if (uint32_t(player) >= num_players_) return Result::invalid_player;
  Player& p = players_[player];
  // One test for the usual player (local, connected, small inputs); the others and the
  // caller's mistakes take the full path, which tells them apart.
  if (!p.usual_local || input == nullptr || size != input_size_) [[unlikely]]
    return add_local_full(player, input, size);
  // No window check here: the input of the frame about to run is always taken (and sent), or
  // peers in lockstep would wait on each other forever. advance() enforces the window.
  if (p.added_at == frame_) return Result::input_already_added;
  p.added_at = frame_;
  const Frame target = frame_ + p.delay;
  const Frame last = p.queue.last_confirmed();
  // The usual input: the frame right after the previous one (the delay did not change).
  if (last + 1 != target || target >= fits_below_) [[unlikely]]
    return add_local_checked(player, last, target, static_cast<const uint8_t*>(input));
  // The frame is the live one or later (the delay is never negative): nothing to roll back.
  p.queue.add_ahead_small(target, static_cast<const uint8_t*>(input));
  // input_rose() for a connected local player (it never holds the first unknown remote input).
  if (last <= inputs_confirmed_) confirmed_known_ = Known(confirmed_known_ | kLowerBound);
  return Result::ok;
}

Result RollbackDriver::add_local_full(PlayerIndex player, const void* input, size_t size) noexcept {
  Player& p = players_[player];
  if (!p.local) return Result::invalid_player;
  if (input == nullptr) return Result::invalid_argument;
  if (size != input_size_) return Result::invalid_input_size;
  if (p.added_at == frame_) return Result::input_already_added;
  p.added_at = frame_;
  const Frame target = frame_ + p.delay;
  return add_local_checked(player, p.queue.last_confirmed(), target, static_cast<const uint8_t*>(input));
}

Result RollbackDriver::add_local_checked(PlayerIndex player, Frame last, Frame target, const uint8_t* input) noexcept {
  Player& p = players_[player];
  // Delay was lowered: frames up to `last` already have inputs; this sample has no frame.
  if (last >= target) return Result::ok;
  if (!fits_window_exactly(p.queue, target)) return Result::input_out_of_window;
  input_rose(p, last);
  // Delay was raised (or this is the first input): repeat the last input over the gap so
  // every frame has exactly one input.
  while (last + 1 < target) {
    const uint8_t* fill = last == kNullFrame ? zeros_.get() : p.queue.confirmed(last);
    p.queue.add_confirmed(last + 1, fill);
    ++last;
  }
  if (p.queue.add_confirmed(target, input)) note_mispredicted(target);
  return Result::ok;
}

Result RollbackDriver::add_remote_input(PlayerIndex player, Frame frame, const uint8_t* input) noexcept {
  if (uint32_t(player) >= num_players_ || players_[player].local) return Result::invalid_player;  // < 0 too
  if (input == nullptr || frame < 0) return Result::invalid_argument;
  Player& p = players_[player];
  const Frame last = p.queue.last_confirmed();
  if (frame <= last) return Result::ok;  // a duplicate of a confirmed frame
  if (frame != last + 1) return Result::input_out_of_window;
  if (frame >= fits_below_ || p.disconnected || !small_inputs_) [[unlikely]]
    return add_remote_checked(p, last, frame, input);
  // input_rose() for a connected remote player.
  if (last <= inputs_confirmed_) confirmed_known_ = Known(confirmed_known_ | kLowerBound);
  if (last + 1 <= unknown_) unknown_known_ = Known(unknown_known_ | kLowerBound);
  if (p.queue.add_confirmed_small(frame, input)) note_mispredicted(frame);
  return Result::ok;
}

Result RollbackDriver::add_remote_checked(Player& p, Frame last, Frame frame, const uint8_t* input) noexcept {
  if (!fits_window_exactly(p.queue, frame)) return Result::input_out_of_window;
  if (p.disconnected && frame > p.disconnected_after) return Result::ok;
  input_rose(p, last);
  if (p.queue.add_confirmed(frame, input)) note_mispredicted(frame);
  return Result::ok;
}

Result RollbackDriver::set_input_delay(PlayerIndex player, int32_t frames) noexcept {
  if (player < 0 || uint32_t(player) >= num_players_ || !players_[player].local) return Result::invalid_player;
  if (frames < 0 || frames > kMaxInputDelay) return Result::invalid_argument;
  players_[player].delay = frames;
  update_min_delay();
  return Result::ok;
}

Result RollbackDriver::disconnect_player(PlayerIndex player, Frame after, bool agreed) noexcept {
  if (player < 0 || uint32_t(player) >= num_players_) return Result::invalid_player;
  Player& p = players_[player];
  if (p.disconnected && after >= p.disconnected_after) {
    if (agreed) p.cut_agreed = true;
    changed();
    return Result::ok;
  }
  const int32_t reach = std::max(history_, checkpoints_.enabled() ? checkpoints_.depth() : 0);
  // A cut before a transferred state's frame is part of that state: nothing before it runs here.
  const bool before_start = after + 1 <= start_frame_ && start_frame_ > 0;
  if (after < kNullFrame || (!before_start && after + 1 < frame_ && after + 1 < frame_ - reach))
    return Result::input_out_of_window;
  p.disconnected = true;
  p.disconnected_after = after;
  p.cut_agreed = agreed;
  changed();
  update_absence();
  // Frames after `after` were simulated with other inputs than the zeros they get now.
  note_mispredicted(before_start ? start_frame_ : after + 1);
  return Result::ok;
}

Result RollbackDriver::rejoin_player(PlayerIndex player, Frame at) noexcept {
  if (player < 0 || uint32_t(player) >= num_players_) return Result::invalid_player;
  Player& p = players_[player];
  const Frame from = p.disconnected ? p.disconnected_after + 1 : start_frame_;
  if (at < from || at <= confirmed_frame() || (p.disconnected && !p.cut_agreed)) return Result::wrong_state;
  if (!p.queue.fits(at, oldest_needed())) return Result::input_out_of_window;
  p.gap_from = from;
  p.gap_until = at;
  p.disconnected = false;
  p.cut_agreed = false;
  p.disconnected_after = kNullFrame;
  // Every frame before `at` counts as confirmed (absent): the next real input is the one of `at`.
  p.queue.start_at(at);
  changed();
  update_absence();
  note_mispredicted(at);
  return Result::ok;
}

// ---------------------------------------------------------------- queries

void RollbackDriver::compute_horizons() const noexcept {
  if (two_connected_) [[likely]] return pair_horizons();
  Frame confirmed = kFrameMax;
  Frame unknown = kFrameMax;  // first frame with an unknown remote input (local ones are never predicted)
  if (!any_cut_) {
    // Nobody disconnected (the usual match): every player counts with its newest input, and
    // the kept lists hold them apart (awaited_: the local players, other_queues_: the remote
    // ones), so neither walk asks who is local.
    Frame remote = kFrameMax;
    for (uint32_t k = 0; k < others_count_; ++k) remote = std::min(remote, other_queues_[k]->last_confirmed());
    Frame local = kFrameMax;
    for (uint32_t k = 0; k < awaited_count_; ++k) local = std::min(local, awaited_[k]->last_confirmed());
    confirmed = std::min(remote, local);
    if (remote != kFrameMax) unknown = remote + 1;  // (a newest input is never kFrameMax)
  } else {
    for (uint32_t i = 0; i < num_players_; ++i) {
      const Player& p = players_[i];
      const Frame last = p.queue.last_confirmed();
      if (p.disconnected && last >= p.disconnected_after) {
        // Known forever after, unless the cut may still move.
        if (!p.cut_agreed) {
          confirmed = std::min(confirmed, p.disconnected_after);
          if (!p.local) unknown = std::min(unknown, p.disconnected_after + 1);
        }
        continue;
      }
      confirmed = std::min(confirmed, last);
      if (!p.local) unknown = std::min(unknown, last + 1);
    }
  }
  inputs_confirmed_ = confirmed;
  // window_full() compares it with the window in use, not the configured one: a lowered window
  // holds the simulation closer to the confirmed frame (the bound a late disconnect cut relies on).
  unknown_ = unknown;
  room_below_ = room_below(unknown);
  confirmed_known_ = unknown_known_ = kExact;
}

// compute_horizons for two players, neither disconnected: each one's newest input, without
// the loop (a two-player match asks after every poll that took inputs).
void RollbackDriver::pair_horizons() const noexcept {
  const Player& a = players_[0];
  const Player& b = players_[1];
  const Frame first = a.queue.last_confirmed(), second = b.queue.last_confirmed();
  inputs_confirmed_ = std::min(first, second);
  const Frame unknown = std::min(a.local ? kFrameMax : first + 1, b.local ? kFrameMax : second + 1);
  unknown_ = unknown;
  room_below_ = room_below(unknown);
  confirmed_known_ = unknown_known_ = kExact;
}

bool RollbackDriver::window_full_at_bound() const noexcept {
  if (unknown_known_ != kExact) compute_horizons();  // a lower bound without room, or unknown
  return full_at(unknown_);
}

void RollbackDriver::update_absence() noexcept {
  plain_from_ = 0;
  plain_to_ = kFrameMax;
  any_cut_ = false;
  awaited_count_ = 0;
  others_count_ = 0;
  for (uint32_t i = 0; i < num_players_; ++i) {
    const Player& p = players_[i];
    if (p.gap_until > p.gap_from) plain_from_ = std::max(plain_from_, p.gap_until);
    if (p.disconnected) plain_to_ = std::min(plain_to_, p.disconnected_after);
    any_cut_ = any_cut_ || p.disconnected;
    if (p.local && !p.disconnected) {
      awaited_[awaited_count_++] = &p.queue;
      frame_status_[i] = InputStatus::confirmed;  // for good: see plain_inputs()
    } else {
      other_queues_[others_count_] = &players_[i].queue;
      others_[others_count_++] = uint8_t(i);
    }
  }
  two_connected_ = num_players_ == 2 && !any_cut_;
  const bool kept = usual_frames_ && (awaited_count_ == 1 || awaited_count_ == 2);
  usual_awaited_[0] = kept ? awaited_[0] : nullptr;
  usual_awaited_[1] = kept ? awaited_[awaited_count_ - 1] : nullptr;
  for (uint32_t i = 0; i < kMaxPlayers; ++i) {
    Player& p = players_[i];
    p.usual_local = i < num_players_ && p.local && !p.disconnected && small_inputs_;
    const bool usual_remote = i < num_players_ && !p.local && !p.disconnected && small_inputs_;
    const bool paired_with_local = two_connected_ && i < 2 && players_[i ^ 1].local;
    p.usual_remote = !usual_remote ? kNotUsualRemote : paired_with_local ? kPairedWithLocal : kUsualRemote;
  }
}

void RollbackDriver::update_min_delay() noexcept {
  int32_t delay = INT32_MAX;
  for (uint32_t i = 0; i < num_players_; ++i)
    if (players_[i].local) delay = std::min(delay, players_[i].delay);
  min_local_delay_ = delay;
}

// ---------------------------------------------------------------- primitives

Result RollbackDriver::save_failed(SavedState& out, Frame frame, size_t used) noexcept {
  out.frame = kNullFrame;  // the buffer may hold a partial write
  Event e = Reporter::make(EventType::save_failed, "save_state needed more than max_state_size bytes");
  e.frame = frame;
  e.count = used > size_t(INT32_MAX) ? INT32_MAX : int32_t(used);
  reporter_.emit(e);
  reporter_.log(LogLevel::error, "save of frame %d needs %zu bytes, max_state_size is %zu", frame, used,
                ring_.capacity());
  return Result::save_failed;
}

Result RollbackDriver::load(Frame frame) noexcept {
  const SavedState* s = saved(frame);
  if (s == nullptr) {
    reporter_.log(LogLevel::error, "no saved state for frame %d (current %d)", frame, frame_);
    return Result::internal_error;
  }
  return load(*s);
}

Result RollbackDriver::load(const SavedState& state) noexcept {
  callbacks_.load_state(callbacks_.user, state.frame, state.data, state.length);
  ++stats_.loads;
  return Result::ok;
}

template <bool kCustomPredictor>
__attribute__((always_inline)) inline void RollbackDriver::mark_others(Frame frame, uint32_t others,
                                                                       uint8_t* row) noexcept {
  for (uint32_t k = 0; k < others; ++k) {
    const uint32_t i = others_[k];
    InputQueue& q = players_[i].queue;
    if (frame <= q.last_confirmed()) {
      frame_status_[i] = InputStatus::confirmed;
    } else {
      frame_status_[i] = InputStatus::predicted;
      if constexpr (kCustomPredictor) {
        q.predict(frame, predictor_);
      } else {
        q.predict_in_row(frame, row);  // carry forward, inline
      }
    }
  }
}

__attribute__((always_inline)) inline const uint8_t* RollbackDriver::plain_inputs(Frame frame) noexcept {
  // Usually nobody is absent at `frame`: every input is the queues' (real or predicted), and
  // their shared ring holds them side by side (a prediction is written into its slot), so the
  // frame's row is the game's input as it is.
  // Only the other players' statuses are written: a connected local player's input is
  // confirmed at every frame simulated (advance() and the sync test step the live frame after
  // check_local_inputs(), and re-run only frames before it), so its entry keeps the confirmed
  // status update_absence() gave it (the frames with someone absent have statuses of their own).
  // The game's own predictor (a call) out of line: the usual loop then calls nothing and keeps
  // its values in scratch registers, which spares its callers saving more of theirs.
  const uint32_t others = others_count_;
  if (others != 0 && predictor_.predict != nullptr) [[unlikely]] return custom_plain_inputs(frame);
  uint8_t* const row = frame_row(frame);
  mark_others<false>(frame, others, row);
  return row;
}

__attribute__((always_inline)) inline Frame RollbackDriver::predict_others(Frame target, Frame end) noexcept {
  Frame until = end;
  for (uint32_t k = 0; k < others_count_; ++k) {
    const uint32_t i = others_[k];
    InputQueue& q = *other_queues_[k];
    const Frame last = q.last_confirmed();
    // A player with no input confirmed since its predictions were last written holds them
    // still (usually most of the others when several play): nothing to write.
    const bool write = !q.carried();
    if (target <= last) {
      frame_status_[i] = InputStatus::confirmed;
      until = std::min(until, last + 1);  // last < end - 1 when it bounds: no overflow
      if (write) q.predict_after_confirmed(end);
    } else {
      frame_status_[i] = InputStatus::predicted;
      if (write) q.predict_forward(target, end);
    }
  }
  return until;
}

__attribute__((always_inline)) inline Frame RollbackDriver::mark_others_from(Frame frame, Frame end) noexcept {
  Frame until = end;
  for (uint32_t k = 0; k < others_count_; ++k) {
    const uint32_t i = others_[k];
    const Frame last = other_queues_[k]->last_confirmed();
    if (frame <= last) {
      frame_status_[i] = InputStatus::confirmed;
      until = std::min(until, last + 1);  // last < end - 1 when it bounds: no overflow
    } else {
      frame_status_[i] = InputStatus::predicted;
    }
  }
  return until;
}

__attribute__((always_inline)) inline Result RollbackDriver::resimulate_usual(Frame target) noexcept {
  const Frame end = frame_;
  Frame until = predict_others(target, end);
  frame_view_.bytes = frame_row(target);
  callbacks_.advance_frame(callbacks_.user, target, &frame_view_, kAdvanceResimulating);
  Result outcome = Result::ok;
  for (Frame f = target + 1; f < end; ++f) {
    // A failed save is reported, but re-simulation goes on so the live state stays whole.
    if (Result r = save_slot(f); r != Result::ok) outcome = r;
    if (f == until) until = mark_others_from(f, end);
    frame_view_.bytes = frame_row(f);
    callbacks_.advance_frame(callbacks_.user, f, &frame_view_, kAdvanceResimulating);
  }
  return outcome;
}

const uint8_t* RollbackDriver::custom_plain_inputs(Frame frame) noexcept {
  uint8_t* const row = frame_row(frame);
  mark_others<true>(frame, others_count_, row);
  return row;
}

void RollbackDriver::step_absent(Frame frame, uint32_t flags) noexcept {
  uint8_t* dst = frame_inputs_.get();
  for (uint32_t i = 0; i < num_players_; ++i, dst += input_size_) {
    const uint8_t* src;
    if (!absent(PlayerIndex(i), frame)) {
      src = players_[i].queue.input_for(frame, predictor_, &absent_status_[i]);
    } else {
      src = zeros_.get();
      absent_status_[i] = InputStatus::disconnected;
    }
    copy_input(dst, src, input_size_);
  }
  frame_view_.status = absent_status_.data();
  run_frame(frame, frame_inputs_.get(), flags);
  frame_view_.status = frame_status_.data();  // the plain frames' statuses, untouched here
}

__attribute__((always_inline)) inline void RollbackDriver::run_frame(Frame frame, const uint8_t* bytes,
                                                                     uint32_t flags) noexcept {
  frame_view_.bytes = bytes;  // its status points at frame_status_ from init() on
  if (*decisions_queued_ != 0) [[unlikely]] {
    frame_view_.decision_count = decisions_.for_frame(decisions_.user, frame, &frame_view_.decisions);
    callbacks_.advance_frame(callbacks_.user, frame, &frame_view_, flags);
    // Only this branch sets them: the usual frame's view has none without a store.
    frame_view_.decisions = nullptr;
    frame_view_.decision_count = 0;
    return;
  }
  callbacks_.advance_frame(callbacks_.user, frame, &frame_view_, flags);
}

__attribute__((always_inline)) inline void RollbackDriver::step_frame(Frame frame, uint32_t flags) noexcept {
  if (frame >= plain_from_ && frame <= plain_to_) [[likely]]
    run_frame(frame, plain_inputs(frame), flags);
  else
    step_absent(frame, flags);
}

__attribute__((always_inline)) inline void RollbackDriver::step_live(Frame frame) noexcept {
  if (frame < plain_from_ || frame > plain_to_) [[unlikely]] return step_absent(frame, kAdvanceNone);
  uint8_t* const row = frame_row(frame);
  if (const uint32_t others = others_count_; others != 0) {
    if (input_size_ == 4) {  // a pad: the prediction's copy without the size's switch
      predict_live<4>(frame, others, row);
    } else {
      predict_live<0>(frame, others, row);
    }
  }
  run_frame(frame, row, kAdvanceNone);
}

template <uint32_t kSize>
__attribute__((always_inline)) inline void RollbackDriver::predict_live(Frame frame, uint32_t others,
                                                                        uint8_t* row) noexcept {
  uint32_t k = 0;
  do {  // others >= 1
    InputQueue& q = *other_queues_[k];
    const uint32_t i = others_[k];
    if (frame <= q.last_confirmed()) {
      frame_status_[i] = InputStatus::confirmed;
    } else {
      frame_status_[i] = InputStatus::predicted;
      q.predict_live<kSize>(frame, row);
    }
  } while (++k < others);
}

// A sync test's frames (every player local): with nobody else and nobody absent, the frame's
// row and the game's call, nothing to mark (the local players' statuses stay confirmed, see
// plain_inputs); anything else takes step_frame out of line (step_other).
void RollbackDriver::step(Frame frame, uint32_t flags) noexcept {
  if (others_count_ != 0 || frame < plain_from_ || frame > plain_to_) [[unlikely]]
    return step_other(frame, flags);
  run_frame(frame, frame_row(frame), flags);
}

void RollbackDriver::step_other(Frame frame, uint32_t flags) noexcept { step_frame(frame, flags); }

void RollbackDriver::simulate(Frame from, Frame to, uint32_t flags) noexcept {
  if (others_count_ != 0 || from < plain_from_ || to - 1 > plain_to_) [[unlikely]] {
    for (Frame f = from; f < to; ++f) step_other(f, flags);
    return;
  }
  for (Frame f = from; f < to; ++f) run_frame(f, frame_row(f), flags);
}

uint64_t RollbackDriver::checksum(SavedState& state) noexcept {
  if (!state.checksum_valid) {
    state.checksum = state_checksum(callbacks_, state.frame, state.data, state.length);
    state.checksum_valid = true;
    ++stats_.checksums;
  }
  return state.checksum;
}

Result RollbackDriver::checksum_of(Frame frame, uint64_t* out) noexcept {
  if (probe_interval_ > 0 && frame >= 0 && frame % probe_interval_ == 0) {
    const Probe& p = probes_[uint32_t(frame / probe_interval_) % kProbes];
    if (p.frame == frame) {
      *out = p.sum;
      return Result::ok;
    }
  }
  SavedState* s = saved(frame);
  if (s == nullptr) return Result::not_found;
  *out = checksum(*s);
  return Result::ok;
}

Result RollbackDriver::set_checksum_interval(int32_t interval) {
  if (save_mode_ != SaveMode::sparse || !saves_needed_ || interval <= 0) return Result::ok;
  if (Result r = commit_memory(ring_.capacity(), "the checksum probe"); r != Result::ok) return r;
  probe_buffer_ = std::make_unique<uint8_t[]>(ring_.capacity());
  probe_state_.data = probe_buffer_.get();
  probe_interval_ = interval;
  probes_.fill(Probe{});
  return Result::ok;
}

void RollbackDriver::probe(Frame frame) noexcept {
  if (probe_interval_ <= 0 || frame % probe_interval_ != 0) return;
  Probe& p = probes_[uint32_t(frame / probe_interval_) % kProbes];
  p.frame = kNullFrame;
  // Every simulation of the frame overwrites the entry, so the last one (with the final
  // inputs, once the frame is final) is what peers compare.
  if (save_into(probe_state_, frame) != Result::ok) return;
  p.sum = checksum(probe_state_);
  p.frame = frame;
  if (probe_observer_.saved) probe_observer_.saved(probe_observer_.user, probe_state_);
}

// ---------------------------------------------------------------- the frame

bool RollbackDriver::should_save(Frame frame) const noexcept {
  if (!saves_needed_) return false;
  if (save_mode_ != SaveMode::sparse) return true;
  // Sparse: only a state no rollback can go behind, i.e. every input before it is confirmed.
  return confirmed_frame() >= frame - 1;
}

Result RollbackDriver::rollback() noexcept {
  const bool sparse = save_mode_ == SaveMode::sparse;
  // Sparse saving keeps only final states: re-simulate from the newest, which is never after
  // the first wrong frame (a final state has no unconfirmed input before it).
  Frame target = sparse ? last_saved_ : first_incorrect_;
  if (target == kNullFrame || target >= frame_) return Result::internal_error;
  const SavedState* from = saved(target);
  if (sparse && target > first_incorrect_) from = nullptr;  // a cut before the last final save
  if (from == nullptr) {
    // Further back than the ring reaches (a disconnect cut agreed late): start from a checkpoint.
    from = checkpoints_.at_or_before(first_incorrect_);
    if (from == nullptr) {
      reporter_.log(LogLevel::error, "cannot roll back to frame %d: no saved state that old", first_incorrect_);
      return Result::internal_error;
    }
    target = from->frame;
  }
  checkpoints_.invalidate_after(target);
  if (Result r = load(*from); r != Result::ok) return r;
  // A cut moved before the newest sparse save: that save no longer holds a final state.
  if (sparse) last_saved_ = target;

  const Frame newest_final = sparse ? confirmed_frame() + 1 : kNullFrame;  // read when sparse only
  const bool probing = probe_interval_ > 0;
  Result outcome = Result::ok;
  if (!sparse && !probing && target >= plain_from_ && frame_ - 1 <= plain_to_) [[likely]] {
    // The usual rollback: every frame saved (`target` itself was just loaded: its state is
    // saved already), nobody absent in the frames re-run.
    if (*decisions_queued_ == 0 && predictor_.predict == nullptr) [[likely]] {
      // No decisions queued (none can arrive while the game's callbacks run: the session
      // refuses calls from inside them) and the carry-forward prediction: asked once here,
      // not for every frame re-run.
      return finish_rollback(target, resimulate_usual(target));
    }
    run_frame(target, plain_inputs(target), kAdvanceResimulating);
    for (Frame f = target + 1; f < frame_; ++f) {
      if (Result r = save_slot(f); r != Result::ok) outcome = r;
      run_frame(f, plain_inputs(f), kAdvanceResimulating);
    }
    return finish_rollback(target, outcome);
  }
  // `target` itself was just loaded: its state is saved already.
  if (probing) probe(target);
  step_frame(target, kAdvanceResimulating);
  for (Frame f = target + 1; f < frame_; ++f) {
    if (!sparse || f == newest_final) {
      // A failed save is reported, but re-simulation goes on so the live state stays whole.
      if (Result r = save_frame(f); r != Result::ok) outcome = r;
    }
    if (probing) probe(f);
    step_frame(f, kAdvanceResimulating);
  }
  return finish_rollback(target, outcome);
}

Result RollbackDriver::finish_rollback(Frame target, Result outcome) noexcept {
  const uint32_t depth = uint32_t(frame_ - target);
  stats_.frames_resimulated += depth;
  ++stats_.rollbacks;
  ++stats_.rollback_depth_histogram[std::min<uint32_t>(depth, kMaxPredictionFrames)];
  stats_.max_rollback_depth = std::max(stats_.max_rollback_depth, depth);
  first_incorrect_ = kNullFrame;
  return outcome;
}

__attribute__((always_inline)) inline Result RollbackDriver::advance_usual() noexcept {
  // The usual frame: every frame saved (no sparse saving to move up, no probes), the
  // carry-forward prediction.
  if (first_incorrect_ != kNullFrame) {
    if (Result r = rollback(); r != Result::ok) return r;
  }
  if (window_full()) {
    ++stats_.frames_stalled;
    return Result::prediction_limit;
  }
  // The game's callbacks cannot move frame_ (the sessions refuse calls from inside them): kept
  // across the save.
  const Frame frame = frame_;
  if (Result r = save_slot(frame); r != Result::ok) return r;
  step_live(frame);
  finish_frame();
  return Result::ok;
}

Result RollbackDriver::advance() noexcept {
  // One or two local players and the usual frame: one load tells both, two compares their
  // inputs of frame_ (check_local_inputs()).
  const InputQueue* const first = usual_awaited_[0];
  if (first == nullptr) [[unlikely]] return advance_checked();
  if (first->last_confirmed() < frame_ || usual_awaited_[1]->last_confirmed() < frame_)
    return Result::missing_local_input;
  return advance_usual();
}

Result RollbackDriver::advance_checked() noexcept {
  if (Result r = check_local_inputs(); r != Result::ok) return r;
  if (!usual_frames_) [[unlikely]] return advance_other();
  return advance_usual();
}

Result RollbackDriver::advance_other() noexcept {
  if (first_incorrect_ != kNullFrame) {
    if (Result r = rollback(); r != Result::ok) return r;
  } else if (save_mode_ == SaveMode::sparse && saves_needed_ && last_saved_ != kNullFrame &&
             frame_ - last_saved_ > std::max(window_, 1) && confirmed_frame() + 1 > last_saved_) {
    // Sparse saving with no misprediction for a while: move the saved state up to the newest
    // final frame, so a later rollback never re-simulates more than about two windows (the
    // window in use: a lowered one keeps rollbacks as short as it keeps the predictions).
    first_incorrect_ = frame_ - 1;
    if (Result r = rollback(); r != Result::ok) return r;
  }
  if (window_full()) {
    ++stats_.frames_stalled;
    return Result::prediction_limit;
  }
  if (saves_every_frame_) {
    if (Result r = save_slot(frame_); r != Result::ok) return r;
  } else if (save_mode_ == SaveMode::sparse) {
    if (should_save(frame_)) {
      if (Result r = save_frame(frame_); r != Result::ok) return r;
    }
    if (probe_interval_ > 0) probe(frame_);  // probes run under sparse saving only
  }
  step_frame(frame_, kAdvanceNone);
  finish_frame();
  return Result::ok;
}

}  // namespace retcon::detail
