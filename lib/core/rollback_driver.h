// The rollback core shared by every session kind: input queues, the state ring, prediction,
// input delay, the prediction window, and re-simulation after a misprediction.
//
// Frame model: frame_ is the next frame to simulate; the game's live state is the state at the
// start of frame_. A save of frame f is the state before f's inputs are applied, so a rollback
// to f loads slot f and re-runs f, f+1, ... frame_-1.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>

#include "core/checkpoints.h"
#include "core/input_queue.h"
#include "core/reporter.h"
#include "core/state_ring.h"
#include "retcon/result.h"
#include "retcon/session.h"

namespace retcon::detail {

// Where step() finds the timed decisions of a frame (sessions with decisions set one).
struct DecisionSource {
  void* user = nullptr;
  uint32_t (*for_frame)(void* user, Frame frame, const Decision** out) = nullptr;
  // When set, for_frame is asked only while *queued is not 0 (nothing queued: no decision for
  // any frame), saving a call per frame simulated in the usual match.
  const uint32_t* queued = nullptr;
};

class RollbackDriver {
 public:
  RollbackDriver() = default;
  // Not copied or moved: the frame view handed to the game points into the driver.
  RollbackDriver(const RollbackDriver&) = delete;
  RollbackDriver& operator=(const RollbackDriver&) = delete;
  // `history`: how many frames behind frame_ the session may need to load (max prediction, or
  // the sync test's check distance). `save_mode` is already resolved (never automatic).
  Result init(const SessionConfig& config, int32_t history, SaveMode save_mode);
  // Keeps checkpoints reaching at least `depth` frames back (P2P: for disconnect agreement).
  // Call after init().
  // out_of_memory (logged) when they would exceed the memory budget.
  Result enable_checkpoints(int32_t depth);
  // Keeps `frames` more confirmed inputs readable (confirmed_input) behind the confirmed frame
  // than the window needs (P2P hosts: frames not yet streamed to a spectator). Call after
  // enable_checkpoints, before the first input.
  Result keep_confirmed_inputs(int32_t frames);
  // Counts `bytes` more of state memory against config.memory_budget before a session
  // allocates them; out_of_memory (logged, naming `what`) when they would exceed it.
  Result commit_memory(uint64_t bytes, const char* what) noexcept;
  uint64_t committed_bytes() const noexcept { return committed_bytes_; }

  void set_local(PlayerIndex player, bool local) noexcept {
    players_[player].local = local;
    update_absence();  // the list of local players check_local_inputs() walks
    update_min_delay();
    changed();
  }
  bool is_local(PlayerIndex player) const noexcept { return players_[player].local; }
  uint32_t num_players() const noexcept { return num_players_; }
  uint32_t input_size() const noexcept { return input_size_; }

  // ---- inputs ----
  Result add_local_input(PlayerIndex player, const void* input, size_t size) noexcept;
  // A remote player's real input; frames must come in order per player. Older frames are
  // ignored (duplicates). Returns input_out_of_window for a frame beyond the queue.
  Result add_remote_input(PlayerIndex player, Frame frame, const uint8_t* input) noexcept;
  // A run of one remote player's inputs, frames frame..frame+count-1 (`inputs`, `stride` bytes
  // apart), when it is the usual one: each frame the next (frame is last_confirmed + 1), inside
  // the window, the player remote and connected, small inputs; then each is taken as
  // add_remote_input takes it (can_accept holds for each), the tests made once for the run, and
  // the result is count. Anything else: nothing taken, 0 (the caller goes frame by frame).
  // Inline: the session's drain calls it per datagram, and its caller's tests (the frame is the
  // next one, count and inputs from the endpoint) are the same ones, made once.
  uint32_t accept_remote_run(PlayerIndex player, Frame frame, const uint8_t* inputs, size_t stride,
                             uint32_t count) noexcept {
    // No test of frame < 0: frame is last + 1 below, and last is never below kNullFrame.
    if (count == 0 || uint32_t(player) >= num_players_ || inputs == nullptr) return 0;
    Player& p = players_[player];
    const Frame last = p.queue.last_confirmed();
    // Below fits_below_ every frame fits the window (can_accept); add_remote_input's usual path.
    if (!p.usual_remote || frame != last + 1 || int64_t(frame) + count - 1 >= fits_below_) return 0;
    // input_rose() for a connected remote player, once: each frame raises a flag when its
    // predecessor is at most a bound, and the first frame's predecessor is the lowest.
    if (last <= inputs_confirmed_) confirmed_known_ = Known(confirmed_known_ | kLowerBound);
    if (last + 1 <= unknown_) unknown_known_ = Known(unknown_known_ | kLowerBound);
    if (input_size_ == 4) {  // a pad's input: its size known once for the run
      for (uint32_t i = 0; i < count; ++i, inputs += stride)
        if (p.queue.add_confirmed_pad(frame + Frame(i), inputs)) note_mispredicted(frame + Frame(i));
      return count;
    }
    for (uint32_t i = 0; i < count; ++i, inputs += stride)
      if (p.queue.add_confirmed_small(frame + Frame(i), inputs)) note_mispredicted(frame + Frame(i));
    return count;
  }
  // The session's drain of a peer in one call: every input of a remote player from its next
  // frame (last_confirmed(player) + 1) to `last`, `inputs` `stride` bytes apart, taken as
  // add_remote_input would take them one by one when it would take them all (the player remote,
  // connected, small inputs, `last` new and inside the window): true. Anything else: nothing
  // taken, false (the caller goes frame by frame). `player` is one of the players.
  // One window test and one horizons update for the run, whatever its length: with two
  // connected players, the other local (kPairedWithLocal), the horizons are made exact here
  // (pair_horizons' answer from the two newest inputs, one of them `last`), so the confirmed
  // frame the session asks next costs no recomputation; else the lower-bound flags of input_rose.
  bool take_remote_run(PlayerIndex player, Frame last, const uint8_t* inputs, size_t stride) noexcept {
    Player& p = players_[player];
    const Frame before = p.queue.last_confirmed();
    const uint8_t kind = p.usual_remote;
    if (kind == kNotUsualRemote || last >= fits_below_ || last <= before) return false;
    if (kind == kPairedWithLocal) {
      // pair_horizons' answer: the other player, local, never holds the first unknown input.
      // fits_below_ is at most kFrameMax - kMaxPredictionFrames, so room_below's sum needs no
      // saturation here: last + 1 + window_ stays a Frame.
      inputs_confirmed_ = std::min(last, awaited_[0]->last_confirmed());
      unknown_ = last + 1;
      room_below_ = last + 1 + window_;
      confirmed_known_ = unknown_known_ = kExact;
    } else {
      // input_rose() for a connected remote player, once: the run's first predecessor is its lowest.
      if (before <= inputs_confirmed_) confirmed_known_ = Known(confirmed_known_ | kLowerBound);
      if (before + 1 <= unknown_) unknown_known_ = Known(unknown_known_ | kLowerBound);
    }
    Frame frame = before + 1;
    if (input_size_ == 4) {  // a pad's input: its size known once for the run
      p.queue.add_confirmed_pads(frame, last, inputs, stride, [this](Frame f) { note_mispredicted(f); });
      return true;
    }
    for (; frame <= last; ++frame, inputs += stride)
      if (p.queue.add_confirmed_small(frame, inputs)) note_mispredicted(frame);
    return true;
  }
  Result set_input_delay(PlayerIndex player, int32_t frames) noexcept;
  int32_t input_delay(PlayerIndex player) const noexcept { return players_[player].delay; }
  // The smallest input delay of the local players (INT32_MAX with none): a P2P session's send
  // pass asks every frame, one load instead of a walk over its local players.
  int32_t min_local_delay() const noexcept { return min_local_delay_; }
  // From `after`+1 on, the player's input is zeros with status disconnected. Rolls back if
  // frames after it were already simulated with other inputs. Called again with an earlier
  // frame, it moves the cut earlier (peers agree on the earliest frame any of them reports).
  // A cut that is not `agreed` yet is provisional: frames after it are simulated with the
  // disconnected input but stay unconfirmed (they bound the prediction window and are neither
  // checksummed nor streamed) until agree_disconnect(), so a cut that other peers lower later
  // never has to reach back further than the window.
  Result disconnect_player(PlayerIndex player, Frame after, bool agreed = true) noexcept;
  void agree_disconnect(PlayerIndex player) noexcept {
    players_[player].cut_agreed = true;
    changed();
  }
  bool is_disconnected(PlayerIndex player, Frame* after = nullptr) const noexcept {
    if (after) *after = players_[player].disconnected_after;
    return players_[player].disconnected;
  }
  bool cut_agreed(PlayerIndex player) const noexcept { return players_[player].cut_agreed; }
  // Rejoin: a disconnected player (cut agreed) plays again from `at` on: frames after its cut
  // and before `at` stay disconnected (zeros, status disconnected, also when re-simulated), and
  // its input queue takes confirmed inputs from `at`. A player not disconnected (the rejoining
  // machine's own player after start_from) is absent from the start frame to `at`. Rolls back
  // to `at` if it already ran. wrong_state when `at` is not after the cut or is confirmed here.
  Result rejoin_player(PlayerIndex player, Frame at) noexcept;
  // The input of `frame` is the disconnected one (after a cut, or inside a rejoin's gap).
  bool absent(PlayerIndex player, Frame frame) const noexcept {
    const Player& p = players_[player];
    return (p.disconnected && frame > p.disconnected_after) || (frame >= p.gap_from && frame < p.gap_until);
  }
  void set_decision_source(const DecisionSource& source) noexcept {
    decisions_ = source;
    decisions_queued_ = source.for_frame == nullptr ? &kDecisionsNever : source.queued ? source.queued : &kDecisionsAlways;
  }
  // Something `frame` was simulated with changed (a timed decision arrived for it): the next
  // advance rolls back to it. No-op for frames not simulated yet.
  void mark_incorrect(Frame frame) noexcept { note_mispredicted(frame); }
  // Desync detection under sparse saving, which keeps too few states to checksum the frames
  // peers compare: every `interval`-th frame is hashed (from a save into a scratch buffer) each
  // time it is simulated, so checksum_of() knows it once it is final. No-op in other modes.
  // out_of_memory (logged) when the probe buffer would exceed the memory budget.
  Result set_checksum_interval(int32_t interval);
  // Under sparse saving, the state each checksum probe saved is handed to `observer` (the
  // session keeps copies for desync reports). True when probes run (sparse saving).
  struct ProbeObserver {
    void* user = nullptr;
    void (*saved)(void* user, const SavedState& state) = nullptr;
  };
  void set_probe_observer(const ProbeObserver& observer) noexcept { probe_observer_ = observer; }
  bool probes_checksums() const noexcept { return probe_interval_ > 0; }
  // True when add_remote_input(player, frame) would be stored now (next in order, in window).
  bool can_accept(PlayerIndex player, Frame frame) const noexcept {
    return frame == players_[player].queue.last_confirmed() + 1 && fits_window(players_[player].queue, frame);
  }

  // ---- state transfer: the match goes on from another machine's saved state of `frame`
  // (a late spectator). Only before the first frame ran: copies the state into the ring (and
  // checkpoints), loads it into the game (load_state) and makes `frame` the next to simulate,
  // with every input before it counted as confirmed. wrong_state after a frame ran;
  // invalid_argument for a negative frame, no data, or more than max_state_size bytes.
  Result start_from(Frame frame, const uint8_t* data, size_t size) noexcept;
  Frame start_frame() const noexcept { return start_frame_; }

  // ---- the normal frame: rollback if needed, window check, save, simulate ----
  Result advance() noexcept;

  // ---- primitives (the sync test composes its own frame from these) ----
  Result check_local_inputs() const noexcept {
    for (uint32_t k = 0; k < awaited_count_; ++k)
      if (awaited_[k]->last_confirmed() < frame_) return Result::missing_local_input;
    return Result::ok;
  }
  // The simulation is `window_` frames past the oldest unknown remote input: advance() refuses.
  bool window_full() const noexcept {
    // Below room_below_ (the first unknown input, or a lower bound of it, plus the window) there
    // is room: one compare, no rescan.
    if (frame_ < room_below_) [[likely]] return false;
    return window_full_at_bound();
  }
  Result save(Frame frame) noexcept { return save_frame(frame); }  // live state -> ring slot of `frame`
  // live state -> caller's buffer
  Result save_into(SavedState& out, Frame frame) noexcept {
    const size_t capacity = ring_.capacity();
    const size_t used = callbacks_.save_state(callbacks_.user, frame, out.data, capacity);
    out.checksum_valid = false;
    if (used > capacity) [[unlikely]] return save_failed(out, frame, used);
    out.frame = frame;
    out.length = used;
    ++stats_.saves;
    return Result::ok;
  }
  Result load(Frame frame) noexcept;                 // ring slot of `frame` -> live state
  Result load(const SavedState& state) noexcept;     // any saved state -> live state
  void step(Frame frame, uint32_t flags) noexcept;   // simulate one frame with its best inputs
  void simulate(Frame from, Frame to, uint32_t flags) noexcept;  // step() each of [from, to)
  // frame_++ after the live frame was stepped. The horizons hold no frame_ (applied when
  // asked) and add_local_input compares added_at with frame_: nothing else to reset.
  void finish_frame() noexcept {
    ++frame_;
    ++stats_.frames_advanced;
  }
  uint64_t checksum(SavedState& state) noexcept;     // computed once, then cached
  // The saved state of `frame` in the ring or the checkpoints, or null.
  SavedState* saved(Frame frame) noexcept {
    SavedState* s = ring_.size() ? ring_.find(frame) : nullptr;
    return s ? s : checkpoints_.find(frame);
  }
  Result checksum_of(Frame frame, uint64_t* out) noexcept;

  // ---- queries ----
  Frame frame() const noexcept { return frame_; }
  // Newest frame whose inputs are all confirmed (kNullFrame before any).
  Frame confirmed_frame() const noexcept { return confirmed_frame_inline(); }
  // The same, always inline: for a caller where GCC would otherwise call it out of line around
  // saved registers (the P2P session's urgency, know_basis, in its send passes: p2p 2 64 -4.5).
#if defined(__GNUC__)
  __attribute__((always_inline))
#endif
  Frame confirmed_frame_inline() const noexcept {
    if (confirmed_known_ != kExact) compute_horizons();
    return confirmed_from(inputs_confirmed_);
  }
  Frame last_confirmed(PlayerIndex player) const noexcept { return players_[player].queue.last_confirmed(); }
  const uint8_t* confirmed_input(PlayerIndex player, Frame frame) const noexcept {
    return players_[player].queue.confirmed(frame);
  }
  Frame first_incorrect() const noexcept { return first_incorrect_; }
  StateRing& ring() noexcept { return ring_; }
  const Reporter& reporter() const noexcept { return reporter_; }
  const GameCallbacks& callbacks() const noexcept { return callbacks_; }
  const SessionStats& stats() const noexcept { return stats_; }
  SessionStats& mutable_stats() noexcept { return stats_; }
  // The configured window (SessionConfig::max_prediction): what the ring, the checkpoints and
  // the input queues are sized for, and so how far back this machine can ever roll back.
  int32_t max_prediction() const noexcept { return max_prediction_; }
  // The window in use: how many frames past the oldest unknown remote input advance() may
  // simulate. Starts at max_prediction(); a P2P session lowers it to the smallest window of the
  // player machines it plays with (docs/NETWORKING.md, "How late a cut can come"). Any value
  // 0..max_prediction() (invalid_argument otherwise; 0: lockstep); memory stays sized by
  // max_prediction(), so frames already simulated past a lowered window stay within reach: the
  // next advances are refused (prediction_limit) until the confirmed frame catches up.
  Result set_prediction_window(int32_t frames) noexcept {
    if (frames < 0 || frames > max_prediction_) return Result::invalid_argument;
    window_ = frames;
    if (unknown_known_ != kUnknown) room_below_ = room_below(unknown_);  // the bound it answers by
    return Result::ok;
  }
  int32_t prediction_window() const noexcept { return window_; }

 private:
  // Player::usual_remote's values.
  static constexpr uint8_t kNotUsualRemote = 0, kUsualRemote = 1, kPairedWithLocal = 2;
  // 128 bytes (two cache lines) rather than 96: players_[i] is a shift away, not a multiply.
  struct alignas(64) Player {
    InputQueue queue;
    bool local = false;
    Frame added_at = kNullFrame;  // the frame_ its last local input was taken at (one per frame)
    int32_t delay = 0;
    Frame disconnected_after = kNullFrame;  // valid when disconnected
    bool disconnected = false;
    bool cut_agreed = false;  // see disconnect_player()
    // A rejoin's gap (rejoin_player): frames [gap_from, gap_until) are disconnected.
    Frame gap_from = 0, gap_until = 0;
    // local, not disconnected, and the inputs a size add_confirmed_small takes: add_local_input
    // asks this one byte instead of the three (kept by update_absence()).
    bool usual_local = false;
    // Remote, not disconnected, and small inputs: accept_remote_run's and take_remote_run's one
    // byte for the three (kNotUsualRemote otherwise); kPairedWithLocal when besides the other
    // player is the only one, local, and neither is cut (two_connected_): take_remote_run then
    // makes the horizons exact from the two newest inputs, the other's being awaited_[0]'s.
    uint8_t usual_remote = kNotUsualRemote;
  };
  struct Probe {
    Frame frame = kNullFrame;
    uint64_t sum = 0;
  };
  static constexpr uint32_t kProbes = 64;
  void probe(Frame frame) noexcept;
  // step() and save(), inlined into advance() and rollback()'s loop.
  void step_frame(Frame frame, uint32_t flags) noexcept;
  // step_frame's parts: the frame's inputs (statuses in frame_status_, the row returned) when
  // nobody is absent at `frame` (inline), the game's call, and the whole step when someone is
  // absent (out of line; its statuses in absent_status_).
  const uint8_t* plain_inputs(Frame frame) noexcept;
  // advance()'s live frame (`frame`: frame_) when usual_frames_: step_frame(frame,
  // kAdvanceNone) with the others' statuses and predictions written by predict_live (its input
  // size a constant for a pad's 4 bytes, 0: any), their queues reached through other_queues_.
  void step_live(Frame frame) noexcept;
  template <uint32_t kSize>
  void predict_live(Frame frame, uint32_t others, uint8_t* row) noexcept;  // others: others_count_
  const uint8_t* custom_plain_inputs(Frame frame) noexcept;  // with the game's predictor
  // The walk over the other players of plain_inputs and custom_plain_inputs: each
  // one's status at `frame`, confirmed or predicted (the prediction written into its slot, by
  // the game's predictor_ when kCustomPredictor).
  // Inline; with the carry-forward (not kCustomPredictor) the loop calls nothing. A template
  // rather than a Predictor argument: GCC kept an empty one passed by reference on the stack and
  // tested it per player (the prediction's byte stores may alias it), +9 per p2p peer-frame.
  template <bool kCustomPredictor>
  // others: others_count_; row: frame_row(frame), where the carry-forward writes.
  void mark_others(Frame frame, uint32_t others, uint8_t* row) noexcept;
  // Every player's input of `frame`, side by side (the queues' shared ring).
  uint8_t* frame_row(Frame frame) const noexcept {
    return input_rows_.get() + size_t(uint32_t(frame) & input_row_mask_) * input_row_bytes_;
  }
  // The usual rollback's re-run of [target, frame_) (`target` loaded; each later frame saved
  // before it runs), without the decision and predictor tests, which rollback() asks once: each
  // frame's row and the game's call, the other players' predictions written before the loop
  // (predict_others) and their statuses only where one changes (mark_others_from): the frames
  // re-run share them between the players' newest confirmed frames (usually the first frame
  // re-run has every input confirmed, the rest predict the same players). The first failed
  // save's result (the re-run goes on), or ok.
  Result resimulate_usual(Frame target) noexcept;
  // The other players' predictions of [target, end) and their statuses at `target`
  // (mark_others_from's, and what it returns).
  Frame predict_others(Frame target, Frame end) noexcept;
  // The others' statuses at `frame` (as mark_others writes them); returns the first frame
  // after it (at most `end`) whose statuses differ: the one after an other's newest confirmed.
  Frame mark_others_from(Frame frame, Frame end) noexcept;
  void run_frame(Frame frame, const uint8_t* bytes, uint32_t flags) noexcept;
  void step_absent(Frame frame, uint32_t flags) noexcept;
  void step_other(Frame frame, uint32_t flags) noexcept;  // step()'s frames with someone else (out of line)
  Result save_frame(Frame frame) noexcept {
    if (Result r = save_slot(frame); r != Result::ok) return r;
    if (frame > last_saved_) last_saved_ = frame;
    return Result::ok;
  }
  // save_frame without last_saved_, which only sparse saving reads.
  Result save_slot(Frame frame) noexcept {
    SavedState& slot = ring_.slot_for(frame);
    if (Result r = save_into(slot, frame); r != Result::ok) return r;
    checkpoints_.offer(slot);
    return Result::ok;
  }
  // The full paths of add_local_input / add_remote_input (see there).
  // (By index, not Player&: the usual path then keeps no pointer for the call it rarely makes.)
  Result add_local_full(PlayerIndex player, const void* input, size_t size) noexcept;
  Result add_local_checked(PlayerIndex player, Frame last, Frame target, const uint8_t* input) noexcept;
  Result add_remote_checked(Player& p, Frame last, Frame frame, const uint8_t* input) noexcept;
  // save_into's error path (reported), out of the way of the usual save.
  [[gnu::cold, gnu::noinline]] Result save_failed(SavedState& out, Frame frame, size_t used) noexcept;

  Result rollback() noexcept;
  Result advance_other() noexcept;  // advance() when not usual_frames_ (out of line)
  // advance() without usual_awaited_: check_local_inputs(), then the usual frame or
  // advance_other() (out of line).
  Result advance_checked() noexcept;
  Result advance_usual() noexcept;  // the usual frame, after check_local_inputs() (inline)
  Result finish_rollback(Frame target, Result outcome) noexcept;  // its counts
  void init_queues();
  // The horizons (confirmed_frame(), window_full()) are asked several times per frame (every
  // input added, every send pass). What they take from the players (the lowest confirmed input,
  // the first unknown remote one) does not depend on the frame, so it is kept until a player's
  // status changes (every such change calls changed(): then it is unknown) or an input reaches
  // a player that held one of them (input_rose(): then the kept value is a lower bound, which
  // answers "does it fit" and "is there room" when the answer is yes); the frame is applied when
  // asked.
  enum Known : uint8_t { kExact = 0, kLowerBound = 1, kUnknown = 3 };  // |= kLowerBound keeps kUnknown
  void changed() noexcept {
    confirmed_known_ = unknown_known_ = kUnknown;
    room_below_ = kNoRoomKnown;
    fits_below_ = kNullFrame;  // the oldest needed frame may have gone down
  }
  // `p`'s newest confirmed input rose from `last`: the minimums move only if it held one.
  void input_rose(const Player& p, Frame last) noexcept {
    if (p.disconnected) [[unlikely]] {
      changed();  // its cut, not its input, may count
      return;
    }
    if (last <= inputs_confirmed_) confirmed_known_ = Known(confirmed_known_ | kLowerBound);
    if (!p.local && last + 1 <= unknown_) unknown_known_ = Known(unknown_known_ | kLowerBound);
  }
  // Inputs may be confirmed ahead of the simulation (delay); a frame counts once simulated.
  Frame confirmed_from(Frame inputs_confirmed) const noexcept { return std::min(inputs_confirmed, frame_ - 1); }
  // frame_ - unknown + 1 > window_ (the window's frames from the first unknown input all run),
  // which with window_ >= 0 also says unknown <= frame_: one difference (frame_ >= 0 and
  // window_ <= max_prediction: it cannot overflow).
  bool full_at(Frame unknown) const noexcept { return unknown <= frame_ - window_; }
  // The frame from which full_at(unknown) holds: frames before it have room (unknown + window_,
  // kFrameMax for no unknown input, where it saturates).
  Frame room_below(Frame unknown) const noexcept {
    return Frame(std::min<int64_t>(int64_t(unknown) + window_, std::numeric_limits<Frame>::max()));
  }
  // window_full() from frame_ >= room_below_: full if unknown_ is exact, else rescanned.
  bool window_full_at_bound() const noexcept;
  void compute_horizons() const noexcept;
  void pair_horizons() const noexcept;  // compute_horizons when two_connected_
  // The frames step() may take every input from the queues without asking absent() per player:
  // after every rejoin gap, up to the earliest disconnect cut (kept by update_absence(), with
  // the other lists that change with a player's status).
  void update_absence() noexcept;
  // Keeps min_local_delay_ (every change of a delay or of who is local calls it).
  void update_min_delay() noexcept;
  bool should_save(Frame frame) const noexcept;
  // Inline: asked for every input added (and by the session before each remote one).
  Frame oldest_needed() const noexcept { return oldest_needed_from(confirmed_frame()); }
  // Whether `frame` fits the queue's window (every queue has the same capacity). The oldest
  // needed frame only rises until changed() (the confirmed frame and frame_ only rise; sparse
  // saving, whose last save can go down, does not keep it), so the bound it gave when last
  // computed stays good: what is below it fits, without recomputing after every input.
  bool fits_window(const InputQueue& queue, Frame frame) const noexcept {
    return frame < fits_below_ || fits_window_exactly(queue, frame);
  }
  bool fits_window_exactly(const InputQueue& queue, Frame frame) const noexcept {
    const Frame oldest = oldest_needed();
    // A Frame, capped: the usual inputs' test is then one 32-bit compare (a frame at the cap
    // takes this exact path, which is right). Capped a window short of the largest frame:
    // take_remote_run adds the window to a frame below it without a saturating sum.
    constexpr int64_t kCap = std::numeric_limits<Frame>::max() - kMaxPredictionFrames;
    if (save_mode_ != SaveMode::sparse)
      fits_below_ = Frame(std::min<int64_t>(int64_t(oldest) + queue.capacity(), kCap));
    return queue.fits(frame, oldest);
  }
  Frame oldest_needed_from(Frame confirmed) const noexcept {
    Frame oldest = std::min(confirmed + 1, frame_ - reach_);
    if (save_mode_ == SaveMode::sparse && last_saved_ != kNullFrame) oldest = std::min(oldest, last_saved_);
    return std::max<Frame>(oldest, 0);
  }
  void note_mispredicted(Frame frame) noexcept {
    if (frame < frame_ && (first_incorrect_ == kNullFrame || frame < first_incorrect_))
      first_incorrect_ = frame;
  }

  GameCallbacks callbacks_{};
  Predictor predictor_{};
  DecisionSource decisions_{};
  // step() asks decisions_ while this is not 0: its `queued`, or always (a source without one),
  // or never (no source).
  static constexpr uint32_t kDecisionsNever = 0, kDecisionsAlways = 1;
  const uint32_t* decisions_queued_ = &kDecisionsNever;
  Reporter reporter_;
  StateRing ring_;
  Checkpoints checkpoints_;
  std::array<Player, kMaxPlayers> players_{};
  // Every player's inputs, a row of num_players_ * input_size_ bytes per frame (the queues'
  // shared ring), input_row_mask_ + 1 rows.
  std::unique_ptr<uint8_t[]> input_rows_;
  uint32_t input_row_mask_ = 0;
  size_t input_row_bytes_ = 0;
  // What step() hands the game: the sizes are filled at init.
  FrameInputs frame_view_{nullptr, nullptr, 0, 0};
  std::unique_ptr<uint8_t[]> frame_inputs_;  // scratch: a frame's inputs when someone is absent
  std::unique_ptr<uint8_t[]> zeros_;
  std::array<InputStatus, kMaxPlayers> frame_status_{};   // the frames nobody is absent at
  std::array<InputStatus, kMaxPlayers> absent_status_{};  // the others (step_absent)
  SessionStats stats_{};
  uint32_t num_players_ = 0;
  uint32_t input_size_ = 0;
  bool small_inputs_ = false;  // small_input_size(input_size_): the inputs' fast paths apply
  int32_t max_prediction_ = 0;
  int32_t window_ = 0;  // set_prediction_window: <= max_prediction_
  int32_t history_ = 0;
  // How far behind frame_ states may be loaded: history_, or past the oldest checkpoint.
  int32_t reach_ = 0;
  int32_t extra_input_frames_ = 0;
  SaveMode save_mode_ = SaveMode::every_frame;
  bool saves_needed_ = true;
  bool saves_every_frame_ = true;  // saves_needed_ and not sparse
  // saves_every_frame_ and the carry-forward prediction: advance()'s one test for its usual
  // frame (save, step_live).
  bool usual_frames_ = true;
  // When usual_frames_ and one or two local players are awaited: their queues (the one twice),
  // else nulls. advance()'s one load for both its usual frame and check_local_inputs() (kept by
  // update_absence()).
  std::array<const InputQueue*, 2> usual_awaited_{};
  Frame frame_ = 0;
  Frame start_frame_ = 0;  // the first frame simulated here (start_from)
  Frame first_incorrect_ = kNullFrame;
  Frame last_saved_ = kNullFrame;
  // See changed(): the players' lowest confirmed input (a cut that may still move counts as
  // its frame) and first unknown remote input (kFrameMax: none), without frame_ applied.
  mutable Frame inputs_confirmed_ = kNullFrame;
  mutable Frame unknown_ = kNullFrame;
  mutable Known confirmed_known_ = kUnknown, unknown_known_ = kUnknown;
  // room_below(unknown_) while unknown_known_ is not kUnknown (exact or a lower bound: frames
  // before it have room either way), else kNoRoomKnown (window_full() asks the long way).
  static constexpr Frame kNoRoomKnown = std::numeric_limits<Frame>::min();
  mutable Frame room_below_ = kNoRoomKnown;
  mutable Frame fits_below_ = kNullFrame;  // see fits_window()
  // The queues of the local players not disconnected, whose input every frame needs (kept by
  // update_absence()).
  std::array<const InputQueue*, kMaxPlayers> awaited_{};
  uint32_t awaited_count_ = 0;
  // The other players (remote, or cut), whose statuses plain_inputs() writes per frame.
  std::array<uint8_t, kMaxPlayers> others_{};
  std::array<InputQueue*, kMaxPlayers> other_queues_{};  // &players_[others_[k]].queue
  uint32_t others_count_ = 0;
  int32_t min_local_delay_ = INT32_MAX;  // see min_local_delay()
  Frame plain_from_ = 0, plain_to_ = 0;  // see update_absence()
  bool any_cut_ = false;                  // a player is disconnected (update_absence())
  bool two_connected_ = false;            // two players, neither disconnected (update_absence())
  uint64_t memory_budget_ = 0;
  uint64_t committed_bytes_ = 0;
  int32_t probe_interval_ = 0;
  SavedState probe_state_;
  std::unique_ptr<uint8_t[]> probe_buffer_;
  std::array<Probe, kProbes> probes_{};
  ProbeObserver probe_observer_{};
};

}  // namespace retcon::detail
