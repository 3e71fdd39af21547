// Sync test session at check distance d (1 and 7), against the raw work it does per frame (see
// lib/session/sync_test_session.cpp): save the live state into its ring slot and hash it, load the
// state of d frames ago, step d frames, save the result into a second buffer and hash it, then step
// the live frame. The baseline does exactly those copies, hashes and steps, in a ring of the same
// d + 2 slots (max_prediction = d, so the session keeps no more) and one extra buffer.
#include <xxhash.h>

#include "bench_game.h"
#include "bench_registry.h"

namespace retcon::bench {
namespace {

std::unique_ptr<Session> make_sync_test(BenchGame& game, int32_t distance) {
  SyncTestConfig config;
  config.session = bench_config(game, distance);
  config.check_distance = distance;
  std::unique_ptr<Session> session;
  if (create_sync_test_session(config, &session) != Result::ok) return nullptr;
  return session;
}

bool session_frame(Session& session, Frame f) {
  const uint32_t a = local_input(f);
  const uint32_t b = remote_input(f);
  const Result r0 = session.add_local_input(0, &a, sizeof a);
  const Result r1 = session.add_local_input(1, &b, sizeof b);
  const Result r2 = session.advance_frame();
  return r0 == Result::ok && r1 == Result::ok && r2 == Result::ok;
}

class RawSyncTest {
 public:
  RawSyncTest(BenchGame& game, int32_t distance)
      : game_(game), distance_(distance), ring_(uint32_t(distance) + 2, game.size()), resim_(game.size()) {}

  // Returns false on a checksum mismatch (never, with this deterministic game).
  bool frame(Frame f) noexcept {
    const size_t size = game_.size();
    uint8_t* first = ring_.slot(f);
    game_.copy_out(first);
    const uint64_t expected = XXH3_64bits(first, size);
    bool same = true;
    const Frame distance = f < distance_ ? f : distance_;
    if (distance > 0) {
      game_.copy_in(ring_.slot(f - distance), size);
      for (Frame g = f - distance; g < f; ++g) game_.step(local_input(g), remote_input(g));
      game_.copy_out(resim_.data());
      same = XXH3_64bits(resim_.data(), size) == expected;
    }
    game_.step(local_input(f), remote_input(f));
    return same;
  }

 private:
  BenchGame& game_;
  int32_t distance_;
  RawRing ring_;
  AlignedBytes resim_;
};

template <int32_t Distance>
void sync_test_session(benchmark::State& state, size_t size) {
  BenchGame game(size);
  std::unique_ptr<Session> session = make_sync_test(game, Distance);
  if (!session) return state.SkipWithError("create_sync_test_session failed");
  bool ok = true;
  Frame f = 0;
  for (; f < 2 * Distance + 4; ++f) ok &= session_frame(*session, f);  // ring full, full distance
  run_timed(state, 1, [&] {
    ok &= session_frame(*session, f);
    ++f;
  });
  if (!ok) state.SkipWithError("a session call failed");
}

template <int32_t Distance>
void sync_test_raw(benchmark::State& state, size_t size) {
  BenchGame game(size);
  RawSyncTest raw(game, Distance);
  bool ok = true;
  Frame f = 0;
  for (; f < 2 * Distance + 4; ++f) ok &= raw.frame(f);
  run_timed(state, 1, [&] {
    ok &= raw.frame(f);
    ++f;
    benchmark::ClobberMemory();
  });
  if (!ok) state.SkipWithError("checksum mismatch");
}

// Same frames through the session and raw: same final state, and the session's counters show
// exactly 2 saves, 2 checksums, 1 load and d re-simulated steps per frame (fewer in the first d).
void check_sync_test(size_t size, int32_t distance) {
  constexpr Frame kFrames = 40;
  BenchGame lib(size), raw_game(size);
  RawSyncTest raw(raw_game, distance);
  std::unique_ptr<Session> session = make_sync_test(lib, distance);
  bool ok = session != nullptr;
  uint64_t loads = 0, resimulated = 0;
  for (Frame f = 0; ok && f < kFrames; ++f) {
    ok &= session_frame(*session, f);
    ok &= raw.frame(f);
    const Frame d = f < distance ? f : distance;
    loads += d > 0;
    resimulated += uint64_t(d);
  }
  const SessionStats s = ok ? session->stats() : SessionStats{};
  const uint64_t saves = uint64_t(kFrames) + loads;  // the live save, plus the re-simulated one
  ok = ok && std::memcmp(lib.state(), raw_game.state(), size) == 0 && s.saves == saves && s.checksums == saves &&
       s.loads == loads && s.frames_resimulated == resimulated && s.frames_advanced == uint64_t(kFrames);
  add_work_check({"sync test d=" + std::to_string(distance) + " " + size_name(size), ok,
                  "same final state; saves " + std::to_string(s.saves) + "/" + std::to_string(saves) +
                      ", checksums " + std::to_string(s.checksums) + "/" + std::to_string(saves) + ", loads " +
                      std::to_string(s.loads) + "/" + std::to_string(loads) + ", re-simulated " +
                      std::to_string(s.frames_resimulated) + "/" + std::to_string(resimulated)});
}

template <int32_t Distance>
void register_distance() {
  for (size_t size : {kSmallState, kLargeState}) {
    check_sync_test(size, Distance);
    std::string suffix = "d";  // built step by step: GCC 12 warns falsely (-Wrestrict) on a + chain
    suffix += std::to_string(Distance);
    suffix += "/";
    suffix += size_name(size);
    add_benchmark("sync_test_session/" + suffix, sync_test_session<Distance>, size);
    add_benchmark("sync_test_raw/" + suffix, sync_test_raw<Distance>, size);
    Comparison row;
    row.label = "sync test d=" + std::to_string(Distance) + ", " + size_name(size);
    row.measured = "sync_test_session/" + suffix;
    row.baseline = "sync_test_raw/" + suffix;
    if (size == kLargeState) {
      row.kind = TargetKind::max_ratio;
      row.target = 1.15;
    }
    add_comparison(row);
  }
}

}  // namespace

void register_sync_test_benchmarks() {
  register_distance<1>();
  register_distance<7>();
}

}  // namespace retcon::bench
