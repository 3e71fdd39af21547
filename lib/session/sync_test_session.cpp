// Sync test: every `check_interval` frames, roll back check_distance frames, re-simulate, and
// compare the re-simulated state with the first simulation's. Any difference means the game's
// save, load or advance is not deterministic.
//
// Cost per checked frame: one save of the live frame (into the ring, where it is also the
// rollback source of a later check when distance == interval), one load, `distance` steps, one
// save of the re-simulated state and one comparison: the bytes (memcmp) under the default
// checksum, the game's checksum of both when it supplies one. Frames between checks are only
// stepped, and saved when a later check loads them. Intermediate frames are not saved or
// hashed again; only on a mismatch does a second, frame-by-frame pass find the first frame
// that differs (with check_interval 1; otherwise the checked frame is reported).
#include <cstring>
#include <new>
#include <string>

#include "core/report_throttle.h"
#include "session/driver_session.h"

namespace retcon {
namespace detail {
namespace {

class SyncTestSession final : public DriverSession {
 public:
  Result init(const SyncTestConfig& config) {
    if (validate_sync_test_config(config) != nullptr) return Result::invalid_argument;
    distance_ = config.check_distance;
    interval_ = config.check_interval;
    if (Result r = driver_.init(config.session, distance_, SaveMode::every_frame); r != Result::ok) return r;
    for (uint32_t p = 0; p < config.session.num_players; ++p) driver_.set_local(PlayerIndex(p), true);
    const size_t capacity = driver_.ring().capacity();
    if (Result r = driver_.commit_memory(2 * uint64_t(capacity), "the sync test's buffers"); r != Result::ok)
      return r;
    // Written by a save before every read: not zero-filled.
    resim_memory_ = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    diag_memory_ = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    resim_.data = resim_memory_.get();
    diag_.data = diag_memory_.get();
    text_first_.reserve(4096);
    text_second_.reserve(4096);
    return Result::ok;
  }

  Result advance_frame() override {
    return guarded_call(guard_, [&] { return advance_checked(); });
  }

 private:
  Result advance_checked() {
    if (Result r = driver_.check_local_inputs(); r != Result::ok) return r;
    const Frame frame = driver_.frame();
    const bool check = frame > 0 && frame % interval_ == 0;
    // Saved when checked, or when a later check rolls back to it (frame 0 for the early ones).
    const bool source = frame == 0 || (frame + distance_) % interval_ == 0;
    if (check || source) {
      if (Result r = driver_.save(frame); r != Result::ok) return r;
    }
    if (check) {
      const Frame distance = frame < distance_ ? frame : distance_;
      if (Result r = resimulate(frame - distance, frame); r != Result::ok) return r;
      if (Result r = driver_.save_into(resim_, frame); r != Result::ok) return r;
      count_rollback(uint32_t(distance));
      if (!same_state(*driver_.ring().find(frame), resim_)) {
        report_mismatch(frame, frame - distance);
        // Go on from the first simulation's state, so later frames are compared against it.
        if (Result r = driver_.load(frame); r != Result::ok) return r;
      }
    }
    driver_.step(frame, kAdvanceNone);
    driver_.finish_frame();
    return Result::ok;
  }

 private:
  // The game's checksum decides when it supplies one (its saved bytes may hold noise);
  // otherwise equal bytes, compared directly rather than hashed twice.
  bool same_state(SavedState& first, SavedState& second) {
    if (driver_.callbacks().checksum != nullptr)
      return driver_.checksum(first) == driver_.checksum(second);
    return first.length == second.length &&
           std::memcmp(first.data, second.data, first.length) == 0;
  }

  Result resimulate(Frame from, Frame to) {
    if (Result r = driver_.load(from); r != Result::ok) return r;
    driver_.simulate(from, to, kAdvanceResimulating);
    return Result::ok;
  }

  void count_rollback(uint32_t depth) {
    SessionStats& s = driver_.mutable_stats();
    ++s.rollbacks;
    s.frames_resimulated += depth;
    ++s.rollback_depth_histogram[depth < kMaxPredictionFrames ? depth : kMaxPredictionFrames];
    if (depth > s.max_rollback_depth) s.max_rollback_depth = depth;
  }

  // Re-runs from `from` saving every frame to find the first whose state differs from the first
  // simulation, then reports it with both states described. If this third run happens to agree
  // (flaky non-determinism), the state that differed at `frame` is reported instead.
  void report_mismatch(Frame frame, Frame from) {
    const ReportThrottle::Action action = mismatches_.next();
    if (action == ReportThrottle::Action::silent) return;
    if (action == ReportThrottle::Action::summary) {
      Event e = Reporter::make(EventType::sync_test_mismatch,
                               "re-simulations go on differing (summary: `total` mismatches so far, the "
                               "first was reported in full)");
      e.frame = frame;
      e.count = int32_t(frame - from);
      e.total = int32_t(mismatches_.total() > INT32_MAX ? INT32_MAX : mismatches_.total());
      driver_.reporter().log(LogLevel::error, "sync test: %llu mismatches so far (latest at frame %d)",
                             static_cast<unsigned long long>(mismatches_.total()), frame);
      driver_.reporter().emit(e);
      return;
    }
    Frame bad = frame;
    SavedState* second = &resim_;
    if (resimulate_until_difference(from, frame, &bad)) second = &diag_;
    SavedState* first = driver_.ring().find(bad);
    if (first == nullptr) return;  // cannot happen: the ring keeps distance + 2 frames

    Event e = Reporter::make(EventType::sync_test_mismatch,
                             "re-simulation produced a different state: save, load or advance of "
                             "the frame before `frame` is not deterministic");
    e.frame = bad;
    e.count = int32_t(frame - from);
    e.total = 1;
    e.checksum_local = driver_.checksum(*first);
    e.checksum_remote = driver_.checksum(*second);
    describe_saved_state(driver_.callbacks(), *first, &text_first_);
    describe_saved_state(driver_.callbacks(), *second, &text_second_);
    if (driver_.callbacks().describe_state) {
      e.text_local = text_first_.c_str();
      e.text_local_len = text_first_.size();
      e.text_remote = text_second_.c_str();
      e.text_remote_len = text_second_.size();
    }
    driver_.reporter().log(LogLevel::error, "sync test: frame %d differs (checksum %016llx vs %016llx)", bad,
                           static_cast<unsigned long long>(e.checksum_local),
                           static_cast<unsigned long long>(e.checksum_remote));
    driver_.reporter().emit(e);
  }

  bool resimulate_until_difference(Frame from, Frame to, Frame* bad) {
    if (driver_.load(from) != Result::ok) return false;
    for (Frame f = from; f < to; ++f) {
      driver_.step(f, kAdvanceResimulating);
      if (driver_.save_into(diag_, f + 1) != Result::ok) return false;
      SavedState* first = driver_.ring().find(f + 1);
      if (first != nullptr && driver_.checksum(*first) != driver_.checksum(diag_)) {
        *bad = f + 1;
        return true;
      }
    }
    return false;
  }

  int32_t distance_ = 1;
  ReportThrottle mismatches_{60};  // the first mismatch in full, then a summary every 60 more
  int32_t interval_ = 1;
  std::unique_ptr<uint8_t[]> resim_memory_, diag_memory_;
  SavedState resim_, diag_;
  std::string text_first_, text_second_;
};

}  // namespace
}  // namespace detail

Result create_sync_test_session(const SyncTestConfig& config, std::unique_ptr<Session>* out) {
  return detail::create_session<detail::SyncTestSession>(config.session, config, out);
}

}  // namespace retcon
