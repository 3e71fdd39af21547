// retcon_replay: record, inspect, play back and sync-test replays of the fighter sample.
//
//   retcon_replay record FILE [--mode local|p2p] [--frames N] [--players P] [--seed S]
//                             [--profile NAME] [--checksum-interval K] [--no-states]
//   retcon_replay info FILE
//   retcon_replay play FILE [--perturb FRAME] [--full]
//   retcon_replay synctest FILE [--distance D] [--inject FRAME]
//
// play: runs every frame at full speed through the game's callbacks, verifying the recorded
// checksums. On a divergence it names the first differing frame (exact with a checkpoint every
// frame, otherwise the range since the last matching checkpoint) and prints both states through
// describe_state: the one recorded in the file and the one this build produced (lines that differ
// are marked; --full prints both in whole).
// synctest: feeds the recorded inputs to a sync-test session (roll back D frames every frame and
// compare); the session names the first frame whose re-simulation differs.
// --perturb / --inject change the game on purpose (a changed build / a non-deterministic game), to
// see what the reports look like.
// Exit status: 0 clean, 1 divergence or mismatch, 2 bad usage, 3 the file cannot be read or is corrupt.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fighter_bot.h"
#include "fighter_game.h"
#include "fighter_match.h"
#include "net_profiles.h"
#include "retcon/replay.h"
#include "retcon/session.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string command, file;
  std::string mode = "p2p";
  int frames = 1800;
  int players = 2;
  uint32_t seed = 1;
  std::string profile = "transatlantic";
  uint32_t interval = 1;
  bool states = true;
  int perturb = -1;
  int inject = -1;
  int distance = 7;
  bool full = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: retcon_replay record FILE [--mode local|p2p] [--frames N] [--players 2..4] [--seed S]\n"
               "                                [--profile NAME] [--checksum-interval K] [--no-states]\n"
               "       retcon_replay info FILE\n"
               "       retcon_replay play FILE [--perturb FRAME] [--full]\n"
               "       retcon_replay synctest FILE [--distance D] [--inject FRAME]\n");
}

bool parse(int argc, char** argv, Options* o) {
  if (argc < 3) return false;
  o->command = argv[1];
  o->file = argv[2];
  for (int i = 3; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--no-states") == 0) { o->states = false; continue; }
    if (std::strcmp(a, "--full") == 0) { o->full = true; continue; }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (std::strcmp(a, "--mode") == 0) o->mode = v;
    else if (std::strcmp(a, "--frames") == 0) o->frames = std::atoi(v);
    else if (std::strcmp(a, "--players") == 0) o->players = std::atoi(v);
    else if (std::strcmp(a, "--seed") == 0) o->seed = uint32_t(std::strtoul(v, nullptr, 0));
    else if (std::strcmp(a, "--profile") == 0) o->profile = v;
    else if (std::strcmp(a, "--checksum-interval") == 0) o->interval = uint32_t(std::atoi(v));
    else if (std::strcmp(a, "--perturb") == 0) o->perturb = std::atoi(v);
    else if (std::strcmp(a, "--inject") == 0) o->inject = std::atoi(v);
    else if (std::strcmp(a, "--distance") == 0) o->distance = std::atoi(v);
    else return false;
  }
  return (o->mode == "local" || o->mode == "p2p") && o->frames > 0 && o->players >= 2 && o->players <= 4 &&
         o->distance >= 1 && o->distance <= retcon::kMaxPredictionFrames &&
         fighter::find_net_profile(o->profile.c_str()) != nullptr;
}

// The fighter with two ways to break it on purpose.
struct ToolGame {
  fighter::FighterGame game;
  int perturb_at = -1;  // every simulation of this frame ends with p0 one health point down
  int inject_from = -1; // re-simulated frames from here fold a hidden counter in (non-determinism)
  uint32_t hidden = 0;

  size_t save_state(retcon::Frame f, uint8_t* b, size_t c) { return game.save_state(f, b, c); }
  void load_state(retcon::Frame f, const uint8_t* b, size_t n) { game.load_state(f, b, n); }
  void advance_frame(retcon::Frame f, const retcon::FrameInputs& in, uint32_t flags) {
    game.advance_frame(f, in, flags);
    if (f == perturb_at) game.state().p[0].health -= 1;
    if ((flags & retcon::kAdvanceResimulating) && inject_from >= 0 && f >= inject_from)
      game.state().p[1].x += int32_t(++hidden % 3);
  }
  void describe_state(retcon::Frame f, const uint8_t* b, size_t n, const retcon::TextSink& s) {
    game.describe_state(f, b, n, s);
  }
  uint64_t checksum(retcon::Frame f, const uint8_t* b, size_t n) { return game.checksum(f, b, n); }
  // Sync-test events: the texts live only during the call.
  std::vector<std::string> reports;
  void on_event(const retcon::Event& e) {
    if (e.type != retcon::EventType::sync_test_mismatch || !reports.empty()) return;
    char head[160];
    std::snprintf(head, sizeof head, "first differing frame %d: checksum %016" PRIx64 " first run, %016" PRIx64
                  " re-simulated\n", e.frame, e.checksum_local, e.checksum_remote);
    reports.push_back(head);
    reports.push_back(e.text_local ? std::string(e.text_local, e.text_local_len) : "(no description)");
    reports.push_back(e.text_remote ? std::string(e.text_remote, e.text_remote_len) : "(no description)");
  }
};

std::vector<uint8_t> user_data_of(int players, uint32_t seed) {
  return {uint8_t(players), uint8_t(seed), uint8_t(seed >> 8), uint8_t(seed >> 16), uint8_t(seed >> 24)};
}

bool setup_of(const retcon::Replay& r, int* players, uint32_t* seed) {
  const std::vector<uint8_t>& u = r.user_data();
  if (u.size() != 5 || u[0] < fighter::kMinPlayers || u[0] > fighter::kMaxPlayers || r.header().num_players != u[0] ||
      r.header().input_size != fighter::kInputSize)
    return false;
  *players = u[0];
  *seed = uint32_t(u[1]) | uint32_t(u[2]) << 8 | uint32_t(u[3]) << 16 | uint32_t(u[4]) << 24;
  return true;
}

int load(const Options& o, retcon::Replay* r, int* players, uint32_t* seed) {
  std::string error;
  const retcon::Result res = retcon::Replay::read_file(o.file.c_str(), r, &error);
  if (res != retcon::Result::ok) {
    std::fprintf(stderr, "%s: %s (%s)\n", o.file.c_str(), error.c_str(), retcon::result_name(res));
    return 3;
  }
  if (!setup_of(*r, players, seed)) {
    std::fprintf(stderr, "%s: not a fighter replay (user data or input size do not match)\n", o.file.c_str());
    return 3;
  }
  return 0;
}

std::string describe(ToolGame& g, retcon::Frame f, const uint8_t* data, size_t length) {
  std::string text;
  const retcon::TextSink sink{&text, [](void* ctx, const char* t, size_t n) { static_cast<std::string*>(ctx)->append(t, n); }};
  g.describe_state(f, data, length, sink);
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------- record

int record(const Options& o) {
  const retcon::ReplayRecorder* rec = nullptr;
  std::unique_ptr<retcon::tools::FighterMatch> match;
  retcon::ReplayRecorder local_rec;
  fighter::FighterGame game(o.players, o.seed);
  const auto start = Clock::now();
  if (o.mode == "p2p") {
    retcon::tools::FighterMatchOptions mo;
    mo.players = o.players;
    mo.frames = o.frames;
    mo.seed = o.seed;
    mo.link = fighter::to_link(*fighter::find_net_profile(o.profile.c_str()));
    mo.checksum_interval = o.interval;
    mo.store_states = o.states;
    match = std::make_unique<retcon::tools::FighterMatch>(mo);
    if (match->build() != retcon::Result::ok) return 2;
    while (!match->tick() && match->ticks() < uint64_t(o.frames) * 4 + 3600) {
    }
    rec = &match->peer(0).recorder();
  } else {
    retcon::ReplayRecorderConfig rc;
    rc.num_players = uint32_t(o.players);
    rc.input_size = fighter::kInputSize;
    rc.max_state_size = fighter::FighterGame::state_size();
    rc.checksum_interval = o.interval;
    rc.store_states = o.states;
    rc.user_data = user_data_of(o.players, o.seed);
    if (local_rec.init(rc, retcon::bind_game(game)) != retcon::Result::ok) return 2;
    retcon::SessionConfig s;
    s.num_players = uint32_t(o.players);
    s.input_size = fighter::kInputSize;
    s.max_state_size = fighter::FighterGame::state_size();
    s.callbacks = local_rec.callbacks();
    std::unique_ptr<retcon::Session> session;
    if (retcon::create_local_session(s, &session) != retcon::Result::ok) return 2;
    std::vector<fighter::FighterBot> bots;
    for (int p = 0; p < o.players; ++p) bots.emplace_back(o.seed * 7919u + uint32_t(p), p);
    // One more frame than asked, so frame `frames` is confirmed like in the p2p mode.
    for (int f = 0; f <= o.frames; ++f) {
      for (int p = 0; p < o.players; ++p) {
        uint8_t in[fighter::kInputSize];
        bots[size_t(p)].next_input(game.state(), in);
        session->add_local_input(p, in, sizeof in);
      }
      session->advance_frame();
      local_rec.commit(session->confirmed_frame());
    }
    rec = &local_rec;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (rec->error() != retcon::Result::ok) {
    std::fprintf(stderr, "recording failed: %s\n", retcon::result_name(rec->error()));
    return 1;
  }
  const retcon::Result w = rec->write_file(o.file.c_str());
  if (w != retcon::Result::ok) {
    std::fprintf(stderr, "cannot write %s: %s\n", o.file.c_str(), retcon::result_name(w));
    return 3;
  }
  std::vector<uint8_t> image;
  rec->replay().serialize(&image);
  std::printf("recorded %d frames of a %d-player %s match (seed %u%s%s) in %.2f s: %s, %zu bytes, %zu checkpoints\n",
              rec->recorded_frames(), o.players, o.mode.c_str(), o.seed, o.mode == "p2p" ? ", profile " : "",
              o.mode == "p2p" ? o.profile.c_str() : "", seconds, o.file.c_str(), image.size(),
              rec->replay().checkpoints().size());
  return 0;
}

// ---------------------------------------------------------------------------------- info

int info(const Options& o) {
  retcon::Replay r;
  int players = 0;
  uint32_t seed = 0;
  if (int rc = load(o, &r, &players, &seed); rc != 0) return rc;
  const retcon::ReplayHeader& h = r.header();
  std::printf("%s: retcon replay v%u\n", o.file.c_str(), retcon::kReplayVersion);
  std::printf("  players %u, input size %u, frame rate %u, frames %d (%.1f s)\n", h.num_players, h.input_size,
              h.frame_rate, r.frame_count(), double(r.frame_count()) / h.frame_rate);
  std::printf("  checkpoints %zu (every %u frames), checksums by %s, states %s\n", r.checkpoints().size(),
              h.checksum_interval, (h.flags & retcon::kReplayGameChecksum) ? "the game" : "XXH3-64",
              (h.flags & retcon::kReplayStoresStates) ? "stored" : "not stored");
  std::printf("  fighter: %d players, seed %u\n", players, seed);
  return 0;
}

// ---------------------------------------------------------------------------------- play

int play(const Options& o) {
  retcon::Replay r;
  int players = 0;
  uint32_t seed = 0;
  if (int rc = load(o, &r, &players, &seed); rc != 0) return rc;
  ToolGame g;
  g.game.reset(players, seed);
  g.perturb_at = o.perturb;
  retcon::ReplayPlayer player;
  if (player.init(r, retcon::bind_game(g), fighter::FighterGame::state_size()) != retcon::Result::ok) return 2;
  const auto start = Clock::now();
  const retcon::ReplayVerdict v = player.run(true);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("played %d of %d frames in %.3f s (%.0f frames/s), %u checkpoints verified\n", v.frames_played,
              r.frame_count(), seconds, seconds > 0 ? v.frames_played / seconds : 0.0, v.checkpoints_verified);
  if (!v.diverged()) {
    std::printf("final state checksum %016" PRIx64 "\nresult: OK, every recorded checksum matches\n",
                fighter::fighter_checksum(g.game.state()));
    return 0;
  }
  const retcon::Frame from = v.last_good == retcon::kNullFrame ? 0 : v.last_good;
  if (v.first_bad - from <= 1) {
    std::printf("result: DIVERGED: the first differing state is the one frame %d starts from "
                "(frame %d's simulation differs)\n", v.first_bad, v.first_bad - 1);
  } else {
    std::printf("result: DIVERGED between checkpoints: frame %d matched, frame %d differs (record with "
                "--checksum-interval 1 to pin the exact frame)\n", from, v.first_bad);
  }
  std::printf("checksum at frame %d: recorded %016" PRIx64 ", replayed %016" PRIx64 "\n", v.first_bad, v.expected,
              v.actual);
  const retcon::ReplayCheckpoint* c = r.checkpoint(v.first_bad);
  const std::string replayed = player.last_state() ? describe(g, v.first_bad, player.last_state(), player.last_state_length()) : "";
  if (c == nullptr || c->state_length == 0) {
    std::printf("(the replay holds no states; record without --no-states to compare them)\n--- replayed state ---\n%s",
                replayed.c_str());
    return 1;
  }
  const std::string recorded = describe(g, v.first_bad, r.states().data() + c->state_offset, c->state_length);
  if (o.full) {
    std::printf("--- recorded state ---\n%s--- replayed state ---\n%s", recorded.c_str(), replayed.c_str());
    return 1;
  }
  std::printf("state lines that differ (- recorded, + replayed; --full prints both states):\n");
  const std::vector<std::string> a = lines_of(recorded), b = lines_of(replayed);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string& x = i < a.size() ? a[i] : std::string();
    const std::string& y = i < b.size() ? b[i] : std::string();
    if (x == y) continue;
    std::printf("- %s\n+ %s\n", x.c_str(), y.c_str());
  }
  return 1;
}

// ---------------------------------------------------------------------------------- synctest

int synctest(const Options& o) {
  retcon::Replay r;
  int players = 0;
  uint32_t seed = 0;
  if (int rc = load(o, &r, &players, &seed); rc != 0) return rc;
  ToolGame g;
  g.game.reset(players, seed);
  g.inject_from = o.inject;
  retcon::SyncTestConfig c;
  c.session.num_players = uint32_t(players);
  c.session.input_size = fighter::kInputSize;
  c.session.max_prediction = std::max(o.distance, 8);
  c.session.max_state_size = fighter::FighterGame::state_size();
  c.session.callbacks = retcon::bind_game(g);
  c.check_distance = o.distance;
  std::unique_ptr<retcon::Session> session;
  if (retcon::Result res = retcon::create_sync_test_session(c, &session); res != retcon::Result::ok) {
    std::fprintf(stderr, "cannot create the sync test: %s\n", retcon::result_name(res));
    return 2;
  }
  const auto start = Clock::now();
  for (retcon::Frame f = 0; f < r.frame_count(); ++f) {
    const retcon::FrameInputs in = r.inputs(f);
    for (int p = 0; p < players; ++p) session->add_local_input(p, in.player(p), in.input_size);
    if (retcon::Result res = session->advance_frame(); res != retcon::Result::ok) {
      std::fprintf(stderr, "advance_frame failed at frame %d: %s\n", f, retcon::result_name(res));
      return 1;
    }
    if (!g.reports.empty()) break;  // the first mismatch is the interesting one
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const retcon::SessionStats s = session->stats();
  std::printf("sync test of %s: distance %d, %d frames in %.3f s, %" PRIu64 " rollbacks, %" PRIu64
              " frames re-simulated\n", o.file.c_str(), o.distance, session->current_frame(), seconds, s.rollbacks,
              s.frames_resimulated);
  if (g.reports.empty()) {
    std::printf("result: DETERMINISTIC (every re-simulation matched)\n");
    return 0;
  }
  std::printf("result: NON-DETERMINISTIC, %s--- first simulation ---\n%s--- re-simulation ---\n%s",
              g.reports[0].c_str(), g.reports[1].c_str(), g.reports[2].c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  if (o.command == "record") return record(o);
  if (o.command == "info") return info(o);
  if (o.command == "play") return play(o);
  if (o.command == "synctest") return synctest(o);
  usage();
  return 2;
}
