// Checks of a replay against the game: bisect_replay (the first frame whose state differs from
// the recording, re-run from the nearest stored state) and sync_test_replay (the recorded inputs
// through a sync-test session, verifying the recorded checksums on the way).
#include <algorithm>
#include <cstring>
#include <new>

#include "core/checksum.h"
#include "retcon/replay.h"
#include "retcon/session.h"

namespace retcon {
namespace {

constexpr Frame kProgressStep = 256;

bool uses_game_checksum(const Replay& r) { return (r.header().flags & kReplayGameChecksum) != 0; }

uint64_t hash_like_recorder(const Replay& r, const GameCallbacks& game, Frame f, const uint8_t* data, size_t n) {
  return uses_game_checksum(r) ? game.checksum(game.user, f, data, n) : detail::xxh3_64(data, n);
}

Result check_arguments(const Replay& replay, const GameCallbacks& game, size_t max_state_size) {
  if (!game.complete() || max_state_size < 1 || max_state_size > kMaxStateSize) return Result::invalid_argument;
  if (uses_game_checksum(replay) && game.checksum == nullptr) return Result::invalid_argument;
  if (replay.header().num_players < 1) return Result::invalid_argument;
  return Result::ok;
}

void report(const ReplayProgress* p, Frame done, Frame total) {
  if (p != nullptr && p->report != nullptr) p->report(p->user, done, total);
}

// The last checkpoint at or before `frame` that holds a state, or null.
const ReplayCheckpoint* nearest_stored_state(const Replay& r, Frame frame) {
  const ReplayCheckpoint* best = nullptr;
  for (const ReplayCheckpoint& c : r.checkpoints()) {
    if (c.frame > frame) break;
    if (c.state_length != 0) best = &c;
  }
  return best;
}

}  // namespace

Result bisect_replay(const Replay& replay, const GameCallbacks& game, size_t max_state_size, Frame from_frame,
                     const ReplayProgress* progress, ReplayBisectResult* out) {
  if (out == nullptr) return Result::invalid_argument;
  *out = ReplayBisectResult{};
  if (Result r = check_arguments(replay, game, max_state_size); r != Result::ok) return r;
  try {
    std::vector<uint8_t> current(max_state_size), good(max_state_size);
    size_t good_length = 0;
    Frame f = 0;
    if (from_frame > 0) {
      if (const ReplayCheckpoint* c = nearest_stored_state(replay, from_frame)) {
        f = c->frame;
        game.load_state(game.user, f, replay.states().data() + c->state_offset, c->state_length);
      }
    }
    out->start_frame = f;
    const Frame total = replay.frame_count();
    for (;; ++f) {
      if (const ReplayCheckpoint* c = replay.checkpoint(f)) {
        const size_t n = game.save_state(game.user, f, current.data(), max_state_size);
        if (n > max_state_size) return Result::save_failed;
        const uint64_t sum = hash_like_recorder(replay, game, f, current.data(), n);
        if (sum == c->checksum) {
          ++out->checksums_verified;
          out->last_good = f;
          std::swap(current, good);
          good_length = n;
        } else {
          out->first_bad = f;
          out->expected = c->checksum;
          out->actual = sum;
          out->exact = f == 0 || out->last_good == f - 1;
          out->replayed_state.assign(current.begin(), current.begin() + ptrdiff_t(n));
          if (c->state_length != 0) {
            const uint8_t* s = replay.states().data() + c->state_offset;
            out->reference_state.assign(s, s + c->state_length);
            out->reference_frame = f;
            out->reference_is_recorded = true;
          } else if (out->last_good != kNullFrame) {
            out->reference_state.assign(good.begin(), good.begin() + ptrdiff_t(good_length));
            out->reference_frame = out->last_good;
          }
          break;
        }
      }
      if (f >= total) break;
      const FrameInputs in = replay.inputs(f);
      game.advance_frame(game.user, f, &in, kAdvanceNone);
      ++out->frames_played;
      if ((f + 1) % kProgressStep == 0) report(progress, f + 1, total);
    }
    report(progress, out->diverged() ? out->first_bad : total, total);
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  }
  return Result::ok;
}

namespace {

// The game's callbacks with advance_frame checking the recording first, and the first
// sync-test mismatch kept.
struct SyncTestProbe {
  const Replay* replay = nullptr;
  GameCallbacks game{};
  ReplaySyncTestResult* out = nullptr;
  std::vector<uint8_t> scratch;
  bool save_failed = false;

  void check_recording(Frame f) {
    const ReplayCheckpoint* c = replay->checkpoint(f);
    if (c == nullptr || out->first_bad != kNullFrame) return;
    const size_t n = game.save_state(game.user, f, scratch.data(), scratch.size());
    if (n > scratch.size()) {
      save_failed = true;
      return;
    }
    const uint64_t sum = hash_like_recorder(*replay, game, f, scratch.data(), n);
    if (sum == c->checksum) {
      ++out->checksums_verified;
    } else {
      out->first_bad = f;
      out->expected = c->checksum;
      out->actual = sum;
    }
  }

  GameCallbacks callbacks() {
    GameCallbacks cb = game;
    cb.user = this;
    cb.save_state = [](void* u, Frame f, uint8_t* b, size_t c) -> size_t {
      const GameCallbacks& g = static_cast<SyncTestProbe*>(u)->game;
      return g.save_state(g.user, f, b, c);
    };
    cb.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
      const GameCallbacks& g = static_cast<SyncTestProbe*>(u)->game;
      g.load_state(g.user, f, b, n);
    };
    cb.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
      SyncTestProbe& p = *static_cast<SyncTestProbe*>(u);
      if ((flags & kAdvanceResimulating) == 0) p.check_recording(f);
      // The sync test knows the inputs only: the frame's recorded decisions come from the replay.
      FrameInputs with = *in;
      const FrameInputs recorded = p.replay->inputs(f);
      with.decisions = recorded.decisions;
      with.decision_count = recorded.decision_count;
      p.game.advance_frame(p.game.user, f, &with, flags);
    };
    cb.on_event = [](void* u, const Event* e) {
      SyncTestProbe& p = *static_cast<SyncTestProbe*>(u);
      if (e->type == EventType::sync_test_mismatch && p.out->mismatch_frame == kNullFrame) {
        p.out->mismatch_frame = e->frame;
        p.out->mismatch_first = e->checksum_local;
        p.out->mismatch_resimulated = e->checksum_remote;
        if (e->text_local) p.out->mismatch_text_first.assign(e->text_local, e->text_local_len);
        if (e->text_remote) p.out->mismatch_text_resimulated.assign(e->text_remote, e->text_remote_len);
      }
      if (p.game.on_event) p.game.on_event(p.game.user, e);
    };
    if (game.describe_state) {
      cb.describe_state = [](void* u, Frame f, const uint8_t* b, size_t n, const TextSink* s) {
        const GameCallbacks& g = static_cast<SyncTestProbe*>(u)->game;
        g.describe_state(g.user, f, b, n, s);
      };
    }
    if (game.checksum) {
      cb.checksum = [](void* u, Frame f, const uint8_t* b, size_t n) -> uint64_t {
        const GameCallbacks& g = static_cast<SyncTestProbe*>(u)->game;
        return g.checksum(g.user, f, b, n);
      };
    }
    return cb;
  }
};

}  // namespace

Result sync_test_replay(const Replay& replay, const GameCallbacks& game, size_t max_state_size,
                        int32_t check_distance, const ReplayProgress* progress, ReplaySyncTestResult* out) {
  if (out == nullptr) return Result::invalid_argument;
  *out = ReplaySyncTestResult{};
  if (Result r = check_arguments(replay, game, max_state_size); r != Result::ok) return r;
  if (check_distance < 1 || check_distance > kMaxPredictionFrames) return Result::invalid_argument;
  out->check_distance = check_distance;
  try {
    SyncTestProbe probe;
    probe.replay = &replay;
    probe.game = game;
    probe.out = out;
    probe.scratch.resize(max_state_size);
    SyncTestConfig c;
    c.session.num_players = replay.header().num_players;
    c.session.input_size = replay.header().input_size;
    c.session.max_prediction = check_distance;
    c.session.max_state_size = max_state_size;
    c.session.callbacks = probe.callbacks();
    c.check_distance = check_distance;
    std::unique_ptr<Session> session;
    if (Result r = create_sync_test_session(c, &session); r != Result::ok) return r;
    const Frame total = replay.frame_count();
    for (Frame f = 0; f < total; ++f) {
      const FrameInputs in = replay.inputs(f);
      for (uint32_t p = 0; p < in.player_count; ++p) {
        if (Result r = session->add_local_input(PlayerIndex(p), in.player(PlayerIndex(p)), in.input_size); r != Result::ok)
          return r;
      }
      if (Result r = session->advance_frame(); r != Result::ok) return r;
      out->frames = f + 1;
      if (probe.save_failed) return Result::save_failed;
      if (!out->deterministic() || !out->matches_recording()) break;
      if ((f + 1) % kProgressStep == 0) report(progress, f + 1, total);
    }
    // The final state (a checkpoint may name the frame after the last one).
    if (out->deterministic() && out->matches_recording() && out->frames == total) probe.check_recording(total);
    if (probe.save_failed) return Result::save_failed;
    const SessionStats s = session->stats();
    out->rollbacks = s.rollbacks;
    out->frames_resimulated = s.frames_resimulated;
    report(progress, out->frames, total);
  } catch (const std::bad_alloc&) {
    return Result::out_of_memory;
  }
  return Result::ok;
}

}  // namespace retcon
