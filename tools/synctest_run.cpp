// retcon_synctest: runs a sync test of the test game with random inputs and prints a report.
// Exit status 0 when every re-simulation matched, 1 when a mismatch was found, 2 on bad usage.
//   retcon_synctest [--frames N] [--distance D] [--players P] [--seed S] [--inject FRAME]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "retcon/session.h"
#include "support/test_game.h"
#include "utf8_args.h"

namespace {

struct Options {
  int frames = 3600;
  int distance = 7;
  int players = 2;
  uint64_t seed = 1;
  int inject = -1;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--frames") o->frames = std::atoi(v);
    else if (a == "--distance") o->distance = std::atoi(v);
    else if (a == "--players") o->players = std::atoi(v);
    else if (a == "--seed") o->seed = std::strtoull(v, nullptr, 10);
    else if (a == "--inject") o->inject = std::atoi(v);
    else return false;
  }
  return o->frames > 0;
}

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options opt;
  if (!parse(argc, argv, &opt)) {
    std::fprintf(stderr, "usage: retcon_synctest [--frames N] [--distance D] [--players P] [--seed S] [--inject FRAME]\n");
    return 2;
  }
  retcon::test::TestGame game;
  game.events.reserve(100000);
  game.nondeterministic_from = opt.inject;
  retcon::SyncTestConfig config;
  config.session.num_players = uint32_t(opt.players);
  config.session.input_size = 4;
  config.session.max_prediction = opt.distance > 8 ? opt.distance : 8;
  config.session.max_state_size = 256;
  config.session.callbacks = retcon::bind_game(game);
  config.check_distance = opt.distance;
  std::unique_ptr<retcon::Session> session;
  if (retcon::Result r = retcon::create_sync_test_session(config, &session); r != retcon::Result::ok) {
    std::fprintf(stderr, "cannot create the sync test session: %s (%s)\n", retcon::result_name(r),
                 retcon::validate_session_config(config.session) ? retcon::validate_session_config(config.session)
                                                                 : "check_distance must be 1..max_prediction");
    return 2;
  }
  std::mt19937_64 rng(opt.seed);
  const auto start = std::chrono::steady_clock::now();
  for (int f = 0; f < opt.frames; ++f) {
    for (int p = 0; p < opt.players; ++p) {
      const uint32_t input = uint32_t(rng());
      session->add_local_input(p, &input, sizeof input);
    }
    if (retcon::Result r = session->advance_frame(); r != retcon::Result::ok) {
      std::fprintf(stderr, "advance_frame failed at frame %d: %s\n", f, retcon::result_name(r));
      return 1;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const retcon::SessionStats s = session->stats();
  size_t mismatches = 0;
  for (const auto& e : game.events) mismatches += e.type == retcon::EventType::sync_test_mismatch;

  std::printf("retcon sync test report\n");
  std::printf("  players %d, check distance %d, frames %d, seed %llu\n", opt.players, opt.distance, opt.frames,
              static_cast<unsigned long long>(opt.seed));
  std::printf("  rollbacks %llu, frames re-simulated %llu, saves %llu, loads %llu, checksums %llu\n",
              static_cast<unsigned long long>(s.rollbacks), static_cast<unsigned long long>(s.frames_resimulated),
              static_cast<unsigned long long>(s.saves), static_cast<unsigned long long>(s.loads),
              static_cast<unsigned long long>(s.checksums));
  std::printf("  time %.3f s (%.0f ns per frame)\n", seconds, seconds * 1e9 / opt.frames);
  std::printf("  final state hash %016llx\n", static_cast<unsigned long long>(game.hash()));
  if (mismatches == 0) {
    std::printf("  result: DETERMINISTIC (no mismatch in %d frames)\n", opt.frames);
    return 0;
  }
  const retcon::Event& e = game.events.front();
  std::printf("  result: NON-DETERMINISTIC, %zu mismatching frames\n", mismatches);
  std::printf("  first differing frame %d (checksum %016llx first run, %016llx re-simulated)\n", e.frame,
              static_cast<unsigned long long>(e.checksum_local), static_cast<unsigned long long>(e.checksum_remote));
  std::printf("  first run:    %s\n", game.first_text_local.c_str());
  std::printf("  re-simulated: %s\n", game.first_text_remote.c_str());
  return 1;
}
