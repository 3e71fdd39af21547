// fighter_headless: N bot players for F frames on this machine, no window, no network.
// Prints round results and the final checksum. Usage:
//   fighter_headless [--players N] [--frames F] [--seed S] [--scripted] [--every K] [--describe]
//                    [--rollback N]
// --rollback N re-simulates 1..N frames every frame from a saved state (a local sync test) and
// exits with status 1 if any re-simulation differs.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fighter_bot.h"
#include "fighter_game.h"
#include "frame_source.h"
#include "utf8_args.h"

namespace {

struct Options {
  int players = 2;
  long frames = 60 * 60 * 3;
  uint32_t seed = 1;
  bool scripted = false;
  long every = 0;        // print the checksum every K frames
  bool describe = false; // dump the final state
  int rollback = 0;      // local sync test depth
};

void usage() {
  std::fprintf(stderr,
               "usage: fighter_headless [--players 2..4] [--frames F] [--seed S] [--scripted]\n"
               "                        [--every K] [--describe] [--rollback N]\n");
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool has_value = i + 1 < argc;
    if (std::strcmp(a, "--players") == 0 && has_value) {
      o->players = std::atoi(argv[++i]);
    } else if (std::strcmp(a, "--frames") == 0 && has_value) {
      o->frames = std::atol(argv[++i]);
    } else if (std::strcmp(a, "--seed") == 0 && has_value) {
      o->seed = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 0));
    } else if (std::strcmp(a, "--every") == 0 && has_value) {
      o->every = std::atol(argv[++i]);
    } else if (std::strcmp(a, "--rollback") == 0 && has_value) {
      o->rollback = std::atoi(argv[++i]);
    } else if (std::strcmp(a, "--scripted") == 0) {
      o->scripted = true;
    } else if (std::strcmp(a, "--describe") == 0) {
      o->describe = true;
    } else {
      return false;
    }
  }
  return o->players >= fighter::kMinPlayers && o->players <= fighter::kMaxPlayers &&
         o->frames >= 0;
}

void print_winner(int32_t w) {
  if (w == fighter::kDraw) std::printf("draw");
  else if (w == fighter::kNoWinner) std::printf("-");
  else std::printf("p%d", static_cast<int>(w));
}

void print_stdout(void*, const char* text, size_t length) { std::fwrite(text, 1, length, stdout); }

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options opt;
  if (!parse(argc, argv, &opt)) {
    usage();
    return 2;
  }
  fighter::LocalFrameSource source(opt.players, opt.seed, opt.rollback);
  std::vector<fighter::FighterBot> bots;
  std::vector<fighter::ScriptedInputs> scripts;
  for (int p = 0; p < opt.players; ++p) {
    bots.emplace_back(opt.seed * 7919u + static_cast<uint32_t>(p), p);
    scripts.emplace_back(p);
  }
  int32_t last_rounds = 0;
  int32_t last_match = 0;
  for (long f = 0; f < opt.frames; ++f) {
    const fighter::FighterState& s = source.state();
    for (int p = 0; p < opt.players; ++p) {
      const uint16_t bits = opt.scripted ? scripts[static_cast<size_t>(p)].at(s.frame)
                                         : bots[static_cast<size_t>(p)].next_input(s);
      source.set_local_input(p, bits);
    }
    source.tick();
    const fighter::FighterState& after = source.state();
    if (after.match != last_match) {
      last_match = after.match;
      last_rounds = 0;
    }
    if (after.rounds_played != last_rounds) {
      last_rounds = after.rounds_played;
      std::printf("frame %d match %d round %d winner ", static_cast<int>(after.frame),
                  static_cast<int>(after.match), static_cast<int>(after.rounds_played));
      print_winner(after.round_winner);
      std::printf("%s", after.round_timer <= 0 ? " (time)" : "");
      if (after.match_winner != fighter::kNoWinner) {
        std::printf("  match winner ");
        print_winner(after.match_winner);
      }
      std::printf("\n");
    }
    if (opt.every > 0 && (f + 1) % opt.every == 0) {
      std::printf("frame %d checksum %016" PRIx64 "\n", static_cast<int>(after.frame),
                  fighter::fighter_checksum(after));
    }
  }

  const fighter::FighterState& s = source.state();
  std::printf("players %d frames %d seed %u\n", opt.players, static_cast<int>(s.frame), opt.seed);
  for (int p = 0; p < opt.players; ++p) {
    std::printf("p%d health %d round wins %d match wins %d\n", p, static_cast<int>(s.p[p].health),
                static_cast<int>(s.p[p].round_wins), static_cast<int>(s.p[p].match_wins));
  }
  const fighter::FighterGameCounters& c = source.game().counters();
  std::printf("effects %" PRIu64 " (hits %" PRIu64 ", blocks %" PRIu64 ", knock-outs %" PRIu64
              ")\n", c.effects_played, c.effects_by_type[fighter::kEffectHit],
              c.effects_by_type[fighter::kEffectBlock], c.effects_by_type[fighter::kEffectKnockOut]);
  if (opt.describe) fighter::fighter_describe(s, retcon::TextSink{nullptr, print_stdout});
  if (opt.rollback > 0) {
    std::printf("rollbacks %" PRIu64 " frames resimulated %" PRIu64 " mismatches %" PRIu64 "\n",
                source.overlay().rollbacks, c.frames_resimulated, source.mismatches());
  }
  std::printf("checksum %016" PRIx64 "\n", fighter::fighter_checksum(s));
  return source.mismatches() == 0 ? 0 : 1;
}
