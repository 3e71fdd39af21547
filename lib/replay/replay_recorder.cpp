// ReplayRecorder: a GameCallbacks decorator. advance_frame keeps the inputs of the latest
// simulation of each frame in a ring (a rollback overwrites them); commit() moves confirmed
// frames to the replay. See include/retcon/replay.h for why that is enough.
#include <algorithm>
#include <cstring>
#include <new>

#include "core/checksum.h"
#include "retcon/replay.h"

namespace retcon {

struct ReplayRecorder::Impl {
  struct Slot {
    Frame frame = kNullFrame;
    bool has_checksum = false;
    uint64_t checksum = 0;
    size_t state_offset = 0;  // into states (one state per slot, when storing states)
    size_t state_length = 0;
  };

  ReplayRecorder* owner = nullptr;
  GameCallbacks game{};
  ReplayRecorderConfig config;
  std::vector<Slot> slots;
  std::vector<uint8_t> inputs;   // ring_frames * players * input_size
  std::vector<InputStatus> status;  // ring_frames * players
  std::vector<uint8_t> states;   // ring_frames * max_state_size when storing states
  // Per slot: the decisions of its latest simulation (count, then kMaxRecordedDecisionsPerFrame
  // records of sender, size and bytes).
  struct RecordedDecision {
    PlayerIndex sender = 0;
    uint32_t size = 0;
    uint8_t bytes[kMaxDecisionSize] = {};
  };
  std::vector<uint32_t> decision_count;        // ring_frames
  std::vector<RecordedDecision> decisions;     // ring_frames * kMaxRecordedDecisionsPerFrame
  std::unique_ptr<uint8_t[]> scratch;
  Frame newest = kNullFrame;     // newest frame simulated

  size_t input_bytes() const { return size_t(config.num_players) * config.input_size; }

  void on_advance(Frame frame, const FrameInputs* in, uint32_t flags) {
    if (frame >= 0 && in != nullptr && in->player_count == config.num_players && in->input_size == config.input_size) {
      const uint32_t ring = config.ring_frames;
      Slot& slot = slots[size_t(frame) % ring];
      if (slot.frame != kNullFrame && slot.frame < frame && slot.frame > owner->replay_.frame_count() - 1) {
        // An unconfirmed frame is being overwritten: the ring is too small for this session.
        owner->error_ = Result::internal_error;
      }
      slot.frame = frame;
      const size_t index = size_t(frame) % ring;
      std::memcpy(inputs.data() + index * input_bytes(), in->bytes, input_bytes());
      for (uint32_t p = 0; p < config.num_players; ++p) {
        // A predicted input still here once the frame is confirmed was predicted right.
        const InputStatus s = in->status ? in->status[p] : InputStatus::confirmed;
        status[index * config.num_players + p] = s == InputStatus::disconnected ? s : InputStatus::confirmed;
      }
      if (in->decision_count > kMaxRecordedDecisionsPerFrame) owner->error_ = Result::internal_error;
      const uint32_t n = std::min(in->decision_count, kMaxRecordedDecisionsPerFrame);
      decision_count[index] = n;
      for (uint32_t k = 0; k < n; ++k) {
        RecordedDecision& d = decisions[index * kMaxRecordedDecisionsPerFrame + k];
        d.sender = in->decisions[k].sender;
        d.size = std::min(in->decisions[k].size, kMaxDecisionSize);
        std::memcpy(d.bytes, in->decisions[k].bytes, d.size);
      }
      slot.has_checksum = config.checksum_interval != 0 && frame % Frame(config.checksum_interval) == 0;
      if (slot.has_checksum) take_checksum(slot, frame);
      if (frame > newest) newest = frame;
      if (frame < owner->replay_.frame_count()) {
        // An already committed frame runs again: peers cut a dropped player earlier than we had
        // confirmed. The replay takes the revised inputs, as the session did.
        owner->replay_.revise_frame(frame, inputs.data() + index * input_bytes(), status.data() + index * config.num_players);
        if (slot.has_checksum)
          owner->replay_.revise_checkpoint(frame, slot.checksum, slot.state_length ? states.data() + slot.state_offset : nullptr,
                                           slot.state_length);
      }
    }
    game.advance_frame(game.user, frame, in, flags);
  }

  // The state this frame starts from is the game's live state right now: save it and hash it.
  void take_checksum(Slot& slot, Frame frame) {
    const size_t n = game.save_state(game.user, frame, scratch.get(), config.max_state_size);
    if (n > config.max_state_size) {
      owner->error_ = Result::save_failed;
      slot.has_checksum = false;
      return;
    }
    slot.checksum = detail::state_checksum(game, frame, scratch.get(), n);
    slot.state_length = 0;
    if (config.store_states && frame % Frame(config.state_interval) == 0) {
      slot.state_offset = (size_t(frame) % config.ring_frames) * config.max_state_size;
      slot.state_length = n;
      std::memcpy(states.data() + slot.state_offset, scratch.get(), n);
    }
  }
};

ReplayRecorder::ReplayRecorder() = default;
ReplayRecorder::~ReplayRecorder() = default;

Result ReplayRecorder::init(const ReplayRecorderConfig& config, const GameCallbacks& game) {
  if (!game.complete() || config.num_players < 1 || config.num_players > uint32_t(kMaxPlayers) ||
      config.input_size < 1 || config.input_size > kMaxInputSize || config.frame_rate < 1 ||
      config.frame_rate > 65535 || config.ring_frames < 2 || config.state_interval < 1 ||
      (config.checksum_interval != 0 && (config.max_state_size < 1 || config.max_state_size > kMaxStateSize)))
    return Result::invalid_argument;
  try {
    auto impl = std::make_unique<Impl>();
    impl->owner = this;
    impl->game = game;
    impl->config = config;
    impl->slots.assign(config.ring_frames, Impl::Slot{});
    impl->inputs.assign(size_t(config.ring_frames) * impl->input_bytes(), 0);
    impl->status.assign(size_t(config.ring_frames) * config.num_players, InputStatus::confirmed);
    impl->decision_count.assign(config.ring_frames, 0);
    impl->decisions.assign(size_t(config.ring_frames) * kMaxRecordedDecisionsPerFrame, Impl::RecordedDecision{});
    if (config.checksum_interval != 0) {
      impl->scratch = std::make_unique<uint8_t[]>(config.max_state_size);
      if (config.store_states) impl->states.assign(size_t(config.ring_frames) * config.max_state_size, 0);
    }
    ReplayHeader h;
    h.num_players = config.num_players;
    h.input_size = config.input_size;
    h.frame_rate = config.frame_rate;
    h.checksum_interval = config.checksum_interval;
    h.flags = (game.checksum ? kReplayGameChecksum : 0u) |
              (config.store_states && config.checksum_interval != 0 ? kReplayStoresStates : 0u);
    replay_ = Replay(h);
    replay_.set_user_data(config.user_data);
    if (config.reserve_frames != 0) {
      const size_t frames = config.reserve_frames;
      const size_t checkpoints = config.checksum_interval ? frames / config.checksum_interval + 1 : 0;
      replay_.reserve_frames(frames);
      replay_.reserve_checkpoints(checkpoints, config.store_states ? checkpoints * config.max_state_size : 0);
    }
    impl_ = std::move(impl);
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  }
  error_ = Result::ok;
  return Result::ok;
}

GameCallbacks ReplayRecorder::callbacks() const noexcept {
  GameCallbacks cb = impl_ ? impl_->game : GameCallbacks{};
  if (!impl_) return cb;
  cb.user = impl_.get();
  const GameCallbacks& g = impl_->game;
  cb.save_state = [](void* u, Frame f, uint8_t* b, size_t c) -> size_t {
    const GameCallbacks& game = static_cast<Impl*>(u)->game;
    return game.save_state(game.user, f, b, c);
  };
  cb.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
    const GameCallbacks& game = static_cast<Impl*>(u)->game;
    game.load_state(game.user, f, b, n);
  };
  cb.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
    static_cast<Impl*>(u)->on_advance(f, in, flags);
  };
  if (g.on_event) {
    cb.on_event = [](void* u, const Event* e) {
      const GameCallbacks& game = static_cast<Impl*>(u)->game;
      game.on_event(game.user, e);
    };
  }
  if (g.describe_state) {
    cb.describe_state = [](void* u, Frame f, const uint8_t* b, size_t n, const TextSink* s) {
      const GameCallbacks& game = static_cast<Impl*>(u)->game;
      game.describe_state(game.user, f, b, n, s);
    };
  }
  if (g.checksum) {
    cb.checksum = [](void* u, Frame f, const uint8_t* b, size_t n) -> uint64_t {
      const GameCallbacks& game = static_cast<Impl*>(u)->game;
      return game.checksum(game.user, f, b, n);
    };
  }
  return cb;
}

void ReplayRecorder::commit(Frame confirmed) {
  if (!impl_) return;
  Impl& m = *impl_;
  // Only frames simulated at least once can be committed.
  if (confirmed > m.newest) confirmed = m.newest;
  try {
    for (Frame f = replay_.frame_count(); f <= confirmed; ++f) {
      const size_t index = size_t(f) % m.config.ring_frames;
      const Impl::Slot& slot = m.slots[index];
      if (slot.frame != f) {  // pushed out before it was confirmed
        error_ = Result::internal_error;
        return;
      }
      replay_.append_frame(m.inputs.data() + index * m.input_bytes(), m.status.data() + index * m.config.num_players);
      for (uint32_t k = 0; k < m.decision_count[index]; ++k) {
        const Impl::RecordedDecision& d = m.decisions[index * kMaxRecordedDecisionsPerFrame + k];
        replay_.append_decision(f, d.sender, d.bytes, d.size);
      }
      if (slot.has_checksum) {
        replay_.append_checkpoint(f, slot.checksum, slot.state_length ? m.states.data() + slot.state_offset : nullptr,
                                  slot.state_length);
      }
    }
  } catch (const std::bad_alloc&) {
    error_ = Result::out_of_memory;
  }
}

}  // namespace retcon
