// The C API runs the C++ sessions, not a copy of them: on the same random inputs (players,
// input sizes, delays changing mid-match, save modes, check distances, injected
// non-determinism), a C game driven through retcon.h and the C++ TestGame driven through the
// C++ API go through identical states at every frame, report identical events, results and
// stats; and every state equals a plain lockstep run.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "capi/c_test_game.h"
#include "retcon.h"
#include "retcon/session.h"
#include "support/input_streams.h"
#include "support/test_game.h"

namespace retcon::test {
namespace {

struct Params {
  uint32_t players, input_size;
  int32_t max_prediction, check_distance;
  SaveMode mode;
  bool custom_checksum;
  Frame nondeterministic_from;  // -1: deterministic
  Frame frames;
};

// One event, as either game saw it.
struct SeenEvent {
  uint32_t type;
  Frame frame;
  int32_t count;
  uint64_t local, remote;
  std::string text_local, text_remote;
  bool operator==(const SeenEvent&) const = default;
};

// Session + game behind a common face, so one driver loop feeds all four runs the same calls.
class Run {
 public:
  virtual ~Run() = default;
  virtual Result add_input(PlayerIndex p, const Bytes& in) = 0;
  virtual Result set_delay(PlayerIndex p, int32_t d) = 0;
  virtual Result advance() = 0;
  virtual SessionStats stats() = 0;
  virtual std::vector<SeenEvent> events() = 0;
  virtual int32_t frame_errors() = 0;
  std::vector<uint64_t> hashes;
};

class CRun final : public Run {
 public:
  CRun(const Params& p, bool sync_test) {
    ctg_init(&game_);
    game_.nondeterministic_from = p.nondeterministic_from;
    hashes.assign(size_t(p.frames) + 8, 0);
    game_.start_hashes = hashes.data();
    game_.start_hash_count = hashes.size();
    retcon_session_config c;
    retcon_session_config_init(&c);
    c.num_players = p.players;
    c.input_size = p.input_size;
    c.max_prediction = p.max_prediction;
    c.max_state_size = 256;
    c.save_mode = uint32_t(p.mode);
    retcon_game_callbacks cb;
    retcon_game_callbacks_init(&cb);
    ctg_bind(&game_, &cb, p.custom_checksum);
    retcon_session* s = nullptr;
    if (sync_test) {
      retcon_sync_test_config st;
      retcon_sync_test_config_init(&st);
      st.check_distance = p.check_distance;
      created = retcon_sync_test_session_create(&c, &st, &cb, &s);
    } else {
      created = retcon_local_session_create(&c, &cb, &s);
    }
    session_.reset(s);
  }
  Result add_input(PlayerIndex p, const Bytes& in) override {
    return Result(retcon_session_add_local_input(session_.get(), p, in.data(), in.size()));
  }
  Result set_delay(PlayerIndex p, int32_t d) override {
    return Result(retcon_session_set_input_delay(session_.get(), p, d));
  }
  Result advance() override { return Result(retcon_session_advance_frame(session_.get())); }
  SessionStats stats() override {
    retcon_session_stats c;
    retcon_session_stats_init(&c);
    RC_ASSERT(retcon_session_get_stats(session_.get(), &c) == RETCON_RESULT_OK);
    SessionStats s{};
    s.current_frame = c.current_frame;
    s.confirmed_frame = c.confirmed_frame;
    s.frames_advanced = c.frames_advanced;
    s.frames_resimulated = c.frames_resimulated;
    s.rollbacks = c.rollbacks;
    s.saves = c.saves;
    s.loads = c.loads;
    s.checksums = c.checksums;
    s.frames_stalled = c.frames_stalled;
    s.max_rollback_depth = c.max_rollback_depth;
    std::memcpy(s.rollback_depth_histogram, c.rollback_depth_histogram, sizeof s.rollback_depth_histogram);
    int32_t current = -7, confirmed = -7;
    RC_ASSERT(retcon_session_current_frame(session_.get(), &current) == RETCON_RESULT_OK);
    RC_ASSERT(retcon_session_confirmed_frame(session_.get(), &confirmed) == RETCON_RESULT_OK);
    RC_ASSERT(current == c.current_frame);
    RC_ASSERT(confirmed == c.confirmed_frame);
    return s;
  }
  std::vector<SeenEvent> events() override {
    std::vector<SeenEvent> out;
    for (uint32_t i = 0; i < game_.event_count && i < CTG_MAX_EVENTS; ++i) {
      const ctg_event& e = game_.events[i];
      out.push_back({e.type, e.frame, e.count, e.checksum_local, e.checksum_remote, e.text_local, e.text_remote});
    }
    return out;
  }
  int32_t frame_errors() override { return game_.frame_errors; }
  retcon_result created = RETCON_RESULT_INTERNAL_ERROR;

 private:
  struct Destroy {
    void operator()(retcon_session* s) const { retcon_session_destroy(s); }
  };
  ctg_game game_;
  std::unique_ptr<retcon_session, Destroy> session_;
};

uint64_t cpp_checksum(void*, Frame frame, const uint8_t* buffer, size_t length) {
  return ctg_checksum(nullptr, frame, buffer, length);
}

class CppRun final : public Run {
 public:
  CppRun(const Params& p, bool sync_test) {
    game_.nondeterministic_from = p.nondeterministic_from;
    hashes.assign(size_t(p.frames) + 8, 0);
    game_.start_hashes = &hashes;
    game_.events.reserve(CTG_MAX_EVENTS);
    SessionConfig c;
    c.num_players = p.players;
    c.input_size = p.input_size;
    c.max_prediction = p.max_prediction;
    c.max_state_size = 256;
    c.save_mode = p.mode;
    c.callbacks = bind_game(game_);
    c.callbacks.on_event = [](void* u, const Event* e) {
      // Copy the texts: they live only during the call.
      auto* self = static_cast<CppRun*>(u);
      if (self->events_.size() < CTG_MAX_EVENTS)
        self->events_.push_back({uint32_t(e->type), e->frame, e->count, e->checksum_local, e->checksum_remote,
                                 std::string(e->text_local ? e->text_local : "", e->text_local_len).substr(0, 95),
                                 std::string(e->text_remote ? e->text_remote : "", e->text_remote_len).substr(0, 95)});
    };
    // on_event needs the run, the others the game: every callback gets the run, which forwards
    // the game's to the game.
    forward_ = c.callbacks;
    c.callbacks.user = this;
    c.callbacks.save_state = [](void* u, Frame f, uint8_t* b, size_t n) {
      auto* self = static_cast<CppRun*>(u);
      return self->forward_.save_state(self->forward_.user, f, b, n);
    };
    c.callbacks.load_state = [](void* u, Frame f, const uint8_t* b, size_t n) {
      auto* self = static_cast<CppRun*>(u);
      self->forward_.load_state(self->forward_.user, f, b, n);
    };
    c.callbacks.advance_frame = [](void* u, Frame f, const FrameInputs* in, uint32_t flags) {
      auto* self = static_cast<CppRun*>(u);
      self->forward_.advance_frame(self->forward_.user, f, in, flags);
    };
    c.callbacks.describe_state = [](void* u, Frame f, const uint8_t* b, size_t n, const TextSink* s) {
      auto* self = static_cast<CppRun*>(u);
      self->forward_.describe_state(self->forward_.user, f, b, n, s);
    };
    c.callbacks.checksum = p.custom_checksum ? cpp_checksum : nullptr;
    if (sync_test) {
      SyncTestConfig st;
      st.session = c;
      st.check_distance = p.check_distance;
      created = create_sync_test_session(st, &session_);
    } else {
      created = create_local_session(c, &session_);
    }
  }
  Result add_input(PlayerIndex p, const Bytes& in) override { return session_->add_local_input(p, in.data(), in.size()); }
  Result set_delay(PlayerIndex p, int32_t d) override { return session_->set_input_delay(p, d); }
  Result advance() override { return session_->advance_frame(); }
  SessionStats stats() override { return session_->stats(); }
  std::vector<SeenEvent> events() override { return events_; }
  int32_t frame_errors() override { return game_.frame_errors; }
  Result created = Result::internal_error;

 private:
  TestGame game_;
  GameCallbacks forward_{};
  std::vector<SeenEvent> events_;
  std::unique_ptr<Session> session_;
};

void expect_same_stats(const SessionStats& a, const SessionStats& b) {
  RC_ASSERT(a.current_frame == b.current_frame);
  RC_ASSERT(a.confirmed_frame == b.confirmed_frame);
  RC_ASSERT(a.frames_advanced == b.frames_advanced);
  RC_ASSERT(a.frames_resimulated == b.frames_resimulated);
  RC_ASSERT(a.rollbacks == b.rollbacks);
  RC_ASSERT(a.saves == b.saves);
  RC_ASSERT(a.loads == b.loads);
  RC_ASSERT(a.checksums == b.checksums);
  RC_ASSERT(a.frames_stalled == b.frames_stalled);
  RC_ASSERT(a.max_rollback_depth == b.max_rollback_depth);
  RC_ASSERT(std::memcmp(a.rollback_depth_histogram, b.rollback_depth_histogram, sizeof a.rollback_depth_histogram) == 0);
}

RC_GTEST_PROP(CapiProperty, CApiSessionsMatchCppSessionsAndLockstep, ()) {
  Params p;
  p.players = *rc::gen::inRange(1u, 5u);
  p.input_size = *rc::gen::inRange(1u, 17u);
  p.max_prediction = *rc::gen::inRange(1, 11);
  p.check_distance = *rc::gen::inRange(1, p.max_prediction + 1);
  p.mode = *rc::gen::element(SaveMode::automatic, SaveMode::every_frame, SaveMode::sparse);
  p.custom_checksum = *rc::gen::arbitrary<bool>();
  p.frames = 150;
  const bool inject = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});
  p.nondeterministic_from = inject ? *rc::gen::inRange(0, p.frames) : -1;
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::mt19937_64 rng(seed);

  std::vector<std::vector<Bytes>> streams(p.players);
  for (auto& s : streams) s = player_stream(rng, size_t(p.frames) + 8, p.input_size);

  // c_local / cpp_local, c_sync / cpp_sync: each pair must agree exactly.
  auto c_local = std::make_unique<CRun>(p, false);
  auto cpp_local = std::make_unique<CppRun>(p, false);
  auto c_sync = std::make_unique<CRun>(p, true);
  auto cpp_sync = std::make_unique<CppRun>(p, true);
  RC_ASSERT(c_local->created == RETCON_RESULT_OK);
  RC_ASSERT(cpp_local->created == Result::ok);
  RC_ASSERT(c_sync->created == RETCON_RESULT_OK);
  RC_ASSERT(cpp_sync->created == Result::ok);
  Run* runs[] = {c_local.get(), cpp_local.get(), c_sync.get(), cpp_sync.get()};

  // Every call goes to all four runs; they must answer alike.
  auto all = [&](auto call) {
    const Result r = call(*runs[0]);
    for (size_t i = 1; i < std::size(runs); ++i) RC_ASSERT(call(*runs[i]) == r);
    return r;
  };

  std::vector<LocalInputModel> model(p.players);
  std::vector<int32_t> delay(p.players, 0);
  for (uint32_t pl = 0; pl < p.players; ++pl) {
    delay[pl] = int32_t(rng() % 4);
    RC_ASSERT(all([&](Run& r) { return r.set_delay(PlayerIndex(pl), delay[pl]); }) == Result::ok);
  }
  for (Frame f = 0; f <= p.frames; ++f) {
    if (rng() % 20 == 0) {
      const uint32_t pl = uint32_t(rng() % p.players);
      delay[pl] = int32_t(rng() % 5);
      RC_ASSERT(all([&](Run& r) { return r.set_delay(PlayerIndex(pl), delay[pl]); }) == Result::ok);
    }
    for (uint32_t pl = 0; pl < p.players; ++pl) {
      const Bytes& in = streams[pl][size_t(f)];
      RC_ASSERT(all([&](Run& r) { return r.add_input(PlayerIndex(pl), in); }) == Result::ok);
      model[pl].add(f, delay[pl], in);
    }
    RC_ASSERT(all([](Run& r) { return r.advance(); }) == Result::ok);
  }

  for (Run* run : runs) RC_ASSERT(run->frame_errors() == 0);
  expect_same_stats(c_local->stats(), cpp_local->stats());
  expect_same_stats(c_sync->stats(), cpp_sync->stats());
  RC_ASSERT(c_local->events() == cpp_local->events());
  RC_ASSERT(c_sync->events() == cpp_sync->events());
  RC_ASSERT(c_local->events().empty());
  RC_ASSERT(c_local->hashes == cpp_local->hashes);
  RC_ASSERT(c_sync->hashes == cpp_sync->hashes);

  // Lockstep reference on the same per-frame inputs.
  TestGame ref;
  std::vector<uint8_t> inputs(size_t(p.players) * p.input_size);
  std::vector<InputStatus> status(p.players, InputStatus::confirmed);
  for (Frame f = 0; f <= p.frames; ++f) {
    RC_ASSERT(c_local->hashes[size_t(f)] == ref.hash());
    // The sync test's recorded hash is its last run of the frame: with injected
    // non-determinism, re-simulations from that frame on differ, by design.
    if (p.nondeterministic_from < 0 || f <= p.nondeterministic_from) RC_ASSERT(c_sync->hashes[size_t(f)] == ref.hash());
    for (uint32_t pl = 0; pl < p.players; ++pl) {
      const Bytes& in = model[pl].by_frame[size_t(f)];
      std::copy(in.begin(), in.end(), inputs.begin() + ptrdiff_t(pl * p.input_size));
    }
    const FrameInputs fi{inputs.data(), status.data(), p.input_size, p.players};
    ref.step(fi);
  }

  const std::vector<SeenEvent> mismatches = c_sync->events();
  if (p.nondeterministic_from < 0) {
    RC_ASSERT(mismatches.empty());
  } else {
    RC_ASSERT(!mismatches.empty());
    RC_ASSERT(mismatches[0].type == uint32_t(RETCON_EVENT_SYNC_TEST_MISMATCH));
    RC_ASSERT(mismatches[0].local != mismatches[0].remote);
    RC_ASSERT(mismatches[0].text_local.rfind("frame ", 0) == 0);
  }
  RC_TAG(p.mode == SaveMode::sparse ? "sparse" : "every-frame");
  RC_CLASSIFY(inject, "non-determinism injected");
}

}  // namespace
}  // namespace retcon::test
