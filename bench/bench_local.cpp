// Local session (SaveMode::every_frame): both players' inputs and one advance_frame per frame,
// against the raw save + step it wraps (raw/save_step, same 2-slot ring).
#include "bench_game.h"
#include "bench_registry.h"

namespace retcon::bench {
namespace {

std::unique_ptr<Session> make_local_session(BenchGame& game) {
  std::unique_ptr<Session> session;
  if (create_local_session(bench_config(game, 0), &session) != Result::ok) return nullptr;
  return session;
}

bool local_frame(Session& session, Frame f) {
  const uint32_t a = local_input(f);
  const uint32_t b = remote_input(f);
  const Result r0 = session.add_local_input(0, &a, sizeof a);
  const Result r1 = session.add_local_input(1, &b, sizeof b);
  const Result r2 = session.advance_frame();
  return r0 == Result::ok && r1 == Result::ok && r2 == Result::ok;
}

void local_session(benchmark::State& state, size_t size) {
  BenchGame game(size);
  std::unique_ptr<Session> session = make_local_session(game);
  if (!session) return state.SkipWithError("create_local_session failed");
  bool ok = true;
  Frame f = 0;
  for (; f < 16; ++f) ok &= local_frame(*session, f);  // past the first, ring-filling frames
  run_timed(state, 1, [&] {
    ok &= local_frame(*session, f);
    ++f;
  });
  if (!ok) state.SkipWithError("a session call failed");
}

// Same frames through the session and raw: the states must match, with one save per frame.
void check_local(size_t size) {
  constexpr Frame kFrames = 40;
  BenchGame lib(size), raw(size);
  RawRing ring(2, size);
  std::unique_ptr<Session> session = make_local_session(lib);
  bool ok = session != nullptr;
  for (Frame f = 0; ok && f < kFrames; ++f) {
    ok &= local_frame(*session, f);
    raw.copy_out(ring.slot(f));
    raw.step(local_input(f), remote_input(f));
  }
  const SessionStats s = ok ? session->stats() : SessionStats{};
  ok = ok && std::memcmp(lib.state(), raw.state(), size) == 0 && s.saves == uint64_t(kFrames) && s.loads == 0 &&
       s.frames_advanced == uint64_t(kFrames) && s.frames_resimulated == 0;
  add_work_check({"local session " + size_name(size), ok,
                  "same final state; 1 save + 1 step per frame, no load (" + std::to_string(s.saves) + " saves in " +
                      std::to_string(kFrames) + " frames)"});
}

}  // namespace

void register_local_benchmarks() {
  for (size_t size : {kSmallState, kLargeState}) {
    check_local(size);
    const std::string name = "local_session/" + size_name(size);
    add_benchmark(name, local_session, size);
    Comparison row;
    row.label = "local session, " + size_name(size);
    row.measured = name;
    row.baseline = "raw/save_step/" + size_name(size);
    if (size == kSmallState) {
      row.kind = TargetKind::max_ns;
      row.target = 60;
    } else {
      row.kind = TargetKind::max_ratio;
      row.target = 1.15;
    }
    add_comparison(row);
  }
}

}  // namespace retcon::bench
