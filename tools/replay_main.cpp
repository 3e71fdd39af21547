// retcon_replay: record, inspect, play back, sync-test and bisect replays of any game that ships
// a game module (retcon.h, "Game modules": a shared library exporting retcon_game_module_v1).
// Everything goes through the C API, as a C, Python or emulator frontend would.
//
//   retcon_replay [--game MODULE] record FILE [--mode local|p2p] [--frames N] [--players P]
//                 [--seed S] [--profile NAME] [--checksum-interval K] [--state-interval K]
//   retcon_replay [--game MODULE] info FILE
//   retcon_replay [--game MODULE] play FILE [--perturb FRAME]
//   retcon_replay [--game MODULE] bisect FILE [--from FRAME] [--perturb FRAME] [--full] [--progress]
//   retcon_replay [--game MODULE] synctest FILE [--distance D] [--inject FRAME]
//   retcon_replay corrupt FILE OUT --frame F [--player P] [--xor BYTE]
//
// MODULE defaults to $RETCON_GAME_MODULE, else the fighter module built with this tool.
// --perturb / --inject change the game on purpose (a changed build / a non-deterministic game)
// by flipping a bit of its saved state; `corrupt` changes one recorded input. Exit status:
// 0 clean, 1 divergence or mismatch, 2 bad usage or module, 3 unreadable or corrupt file.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "net_profiles.h"
#include "retcon.h"
#include "shared_library.h"
#include "utf8_args.h"

#ifndef RETCON_DEFAULT_GAME_MODULE
#define RETCON_DEFAULT_GAME_MODULE ""
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string game, command, file, out;
  std::string mode = "p2p";
  int frames = 1800;
  int players = 2;
  uint64_t seed = 1;
  std::string profile = "transatlantic";
  uint32_t checksum_interval = 1;
  uint32_t state_interval = 60;
  int perturb = -1, inject = -1, from = 0, distance = 7;
  int corrupt_frame = -1, corrupt_player = 0, corrupt_xor = 0xFF;
  bool full = false, progress = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: retcon_replay [--game MODULE] record FILE [--mode local|p2p] [--frames N] [--players P]\n"
               "                     [--seed S] [--profile NAME] [--checksum-interval K] [--state-interval K]\n"
               "       retcon_replay [--game MODULE] info FILE\n"
               "       retcon_replay [--game MODULE] play FILE [--perturb FRAME]\n"
               "       retcon_replay [--game MODULE] bisect FILE [--from FRAME] [--perturb FRAME] [--full] [--progress]\n"
               "       retcon_replay [--game MODULE] synctest FILE [--distance D] [--inject FRAME]\n"
               "       retcon_replay corrupt FILE OUT --frame F [--player P] [--xor BYTE]\n"
               "MODULE: a game module (.so exporting " RETCON_GAME_MODULE_ENTRY_POINT
               "); default $RETCON_GAME_MODULE or the fighter\n");
}

bool parse(int argc, char** argv, Options* o) {
  int i = 1;
  if (std::string env; retcon::cli::utf8_environment_variable("RETCON_GAME_MODULE", &env) && !env.empty()) o->game = env;
  else o->game = RETCON_DEFAULT_GAME_MODULE;
  if (i + 1 < argc && std::strcmp(argv[i], "--game") == 0) {
    o->game = argv[i + 1];
    i += 2;
  }
  if (argc - i < 2) return false;
  o->command = argv[i++];
  o->file = argv[i++];
  if (o->command == "corrupt") {
    if (i >= argc) return false;
    o->out = argv[i++];
  }
  for (; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--no-states") == 0) { o->state_interval = 0; continue; }
    if (std::strcmp(a, "--full") == 0) { o->full = true; continue; }
    if (std::strcmp(a, "--progress") == 0) { o->progress = true; continue; }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (std::strcmp(a, "--mode") == 0) o->mode = v;
    else if (std::strcmp(a, "--frames") == 0) o->frames = std::atoi(v);
    else if (std::strcmp(a, "--players") == 0) o->players = std::atoi(v);
    else if (std::strcmp(a, "--seed") == 0) o->seed = std::strtoull(v, nullptr, 0);
    else if (std::strcmp(a, "--profile") == 0) o->profile = v;
    else if (std::strcmp(a, "--checksum-interval") == 0) o->checksum_interval = uint32_t(std::atoi(v));
    else if (std::strcmp(a, "--state-interval") == 0) o->state_interval = uint32_t(std::atoi(v));
    else if (std::strcmp(a, "--perturb") == 0) o->perturb = std::atoi(v);
    else if (std::strcmp(a, "--inject") == 0) o->inject = std::atoi(v);
    else if (std::strcmp(a, "--from") == 0) o->from = std::atoi(v);
    else if (std::strcmp(a, "--distance") == 0) o->distance = std::atoi(v);
    else if (std::strcmp(a, "--frame") == 0) o->corrupt_frame = std::atoi(v);
    else if (std::strcmp(a, "--player") == 0) o->corrupt_player = std::atoi(v);
    else if (std::strcmp(a, "--xor") == 0) o->corrupt_xor = int(std::strtol(v, nullptr, 0));
    else return false;
  }
  return (o->mode == "local" || o->mode == "p2p") && o->frames > 0 && o->players >= 1 &&
         o->players <= RETCON_MAX_PLAYERS && o->distance >= 1 && o->distance <= RETCON_MAX_PREDICTION_FRAMES &&
         o->from >= 0 && fighter::find_net_profile(o->profile.c_str()) != nullptr &&
         (o->command != "corrupt" || (o->corrupt_frame >= 0 && o->corrupt_xor > 0 && o->corrupt_xor < 256));
}

// ------------------------------------------------------------------------------ the module

struct Module {
  void* handle = nullptr;
  const retcon_game_module* m = nullptr;
  ~Module() {
    if (handle) retcon::tools::close_shared_library(handle);
  }
};

bool load_module(const std::string& path, Module* out) {
  if (path.empty()) {
    std::fprintf(stderr, "no game module: give --game MODULE.so or set RETCON_GAME_MODULE\n");
    return false;
  }
  std::string error;
  out->handle = retcon::tools::open_shared_library(path, &error);
  if (out->handle == nullptr) {
    std::fprintf(stderr, "cannot load game module %s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  void* entry = retcon::tools::find_shared_library_symbol(out->handle, RETCON_GAME_MODULE_ENTRY_POINT);
  if (entry == nullptr) {
    std::fprintf(stderr, "%s does not export %s: not a retcon game module\n", path.c_str(), RETCON_GAME_MODULE_ENTRY_POINT);
    return false;
  }
  retcon_game_module_entry fn;
  static_assert(sizeof fn == sizeof entry);
  std::memcpy(&fn, &entry, sizeof fn);  // object pointer to function pointer, as POSIX allows
  out->m = fn();
  const retcon_game_module* m = out->m;
  if (m == nullptr || m->size != sizeof(retcon_game_module) || m->abi != RETCON_GAME_MODULE_ABI || !m->create ||
      !m->destroy || !m->new_match || m->input_size < 1 || m->input_size > RETCON_MAX_INPUT_SIZE ||
      m->max_state_size < 1 || m->max_state_size > RETCON_MAX_STATE_SIZE || m->min_players < 1 ||
      m->max_players > RETCON_MAX_PLAYERS || m->min_players > m->max_players) {
    std::fprintf(stderr, "%s: the module's description is not valid for this retcon (ABI %d)\n", path.c_str(),
                 RETCON_GAME_MODULE_ABI);
    return false;
  }
  return true;
}

// One instance of the game, plus the tool's ways of breaking it on purpose.
struct Game {
  const retcon_game_module* module = nullptr;
  void* game = nullptr;
  retcon_game_callbacks inner{};  // the module's
  retcon_game_callbacks cb{};     // what the tool hands to retcon
  int perturb_at = -1;            // every simulation of this frame ends with a bit of state flipped
  int inject_from = -1;           // re-simulations from here flip bits (non-determinism)
  uint32_t hidden = 0;
  std::vector<uint8_t> scratch;

  Game() = default;
  Game(const Game&) = delete;
  Game& operator=(const Game&) = delete;
  ~Game() {
    if (game) module->destroy(game);
  }

  bool create(const retcon_game_module* m, const uint8_t* user_data, size_t size, uint32_t players) {
    module = m;
    retcon_game_callbacks_init(&inner);
    game = m->create(user_data, size, players, &inner);
    if (game == nullptr) return false;
    scratch.resize(size_t(m->max_state_size));
    cb = inner;
    cb.user = this;
    cb.save_state = [](void* u, int32_t f, uint8_t* b, size_t c) {
      Game& g = *static_cast<Game*>(u);
      return g.inner.save_state(g.inner.user, f, b, c);
    };
    cb.load_state = [](void* u, int32_t f, const uint8_t* b, size_t n) {
      Game& g = *static_cast<Game*>(u);
      g.inner.load_state(g.inner.user, f, b, n);
    };
    cb.advance_frame = [](void* u, int32_t f, const retcon_frame_inputs* in, uint32_t flags) {
      Game& g = *static_cast<Game*>(u);
      g.inner.advance_frame(g.inner.user, f, in, flags);
      if (f == g.perturb_at) g.flip_state_bit(f + 1, 1);
      if ((flags & RETCON_ADVANCE_RESIMULATING) && g.inject_from >= 0 && f >= g.inject_from)
        g.flip_state_bit(f + 1, uint8_t(1 + ++g.hidden % 3));
    };
    if (inner.on_event) {
      cb.on_event = [](void* u, const retcon_event* e) {
        Game& g = *static_cast<Game*>(u);
        g.inner.on_event(g.inner.user, e);
      };
    }
    return true;
  }

  // Changes the live state the way a changed build would: save, flip, load.
  void flip_state_bit(int32_t frame, uint8_t mask) {
    const size_t n = inner.save_state(inner.user, frame, scratch.data(), scratch.size());
    if (n == 0 || n > scratch.size()) return;
    scratch[(n / 2) & ~size_t(3)] ^= mask;
    inner.load_state(inner.user, frame, scratch.data(), n);
  }

  std::string describe(int32_t frame, const uint8_t* data, size_t length) const {
    if (!inner.describe_state || data == nullptr) return "(no description)\n";
    std::string text;
    const retcon_text_sink sink{&text, [](void* ctx, const char* t, size_t n) { static_cast<std::string*>(ctx)->append(t, n); }};
    inner.describe_state(inner.user, frame, data, length, &sink);
    if (text.empty() || text.back() != '\n') text += '\n';
    return text;
  }
};

// ------------------------------------------------------------------------------ helpers

struct Loaded {
  retcon_replay* replay = nullptr;
  retcon_replay_info info{};
  ~Loaded() { retcon_replay_destroy(replay); }
};

int load_replay(const std::string& file, Loaded* l) {
  char error[256] = "";
  const retcon_result r = retcon_replay_load_file(file.c_str(), &l->replay, error, sizeof error);
  if (r != RETCON_RESULT_OK) {
    std::fprintf(stderr, "%s: %s (%s)\n", file.c_str(), error, retcon_result_name(r));
    return 3;
  }
  retcon_replay_info_init(&l->info);
  retcon_replay_get_info(l->replay, &l->info);
  return 0;
}

// Loads the replay and creates the module's game in its starting state.
int open_game(const Options& o, Module* module, Loaded* l, Game* g) {
  if (int rc = load_replay(o.file, l); rc != 0) return rc;
  if (!load_module(o.game, module)) return 2;
  const retcon_game_module& m = *module->m;
  if (l->info.input_size != m.input_size ||
      !g->create(&m, l->info.user_data, l->info.user_data_size, l->info.num_players)) {
    std::fprintf(stderr, "%s: not a %s replay (user data, player count or input size do not match)\n", o.file.c_str(),
                 m.name);
    return 3;
  }
  return 0;
}

retcon_replay_run_config run_config(const Module& module) {
  retcon_replay_run_config c;
  retcon_replay_run_config_init(&c);
  c.max_state_size = module.m->max_state_size;
  return c;
}

void progress_bar(void* user, int32_t done, int32_t total) {
  (void)user;
  const int width = 40;
  const int filled = total > 0 ? int(int64_t(done) * width / total) : width;
  std::fprintf(stderr, "\r[%.*s%*s] frame %d / %d", filled, "########################################", width - filled, "",
               done, total);
  if (done >= total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Runs one replay operation (play, bisect, sync test) over the loaded replay and times it.
// 0 when it ran (whatever it found); 2 after saying why when it could not run at all.
using ReplayOperation = retcon_result (*)(retcon_replay*, const retcon_game_callbacks*,
                                          const retcon_replay_run_config*, retcon_replay_report*);
int run_timed(const char* what, ReplayOperation operation, const Loaded& l, const Game& g,
              const retcon_replay_run_config& c, retcon_replay_report* r, double* seconds) {
  retcon_replay_report_init(r);
  const auto start = Clock::now();
  const retcon_result res = operation(l.replay, &g.cb, &c, r);
  *seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (res != RETCON_RESULT_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, retcon_result_name(res));
    return 2;
  }
  return 0;
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

void print_diff(const char* a_name, const std::string& a_text, const char* b_name, const std::string& b_text, bool full) {
  if (full) {
    std::printf("--- %s ---\n%s--- %s ---\n%s", a_name, a_text.c_str(), b_name, b_text.c_str());
    return;
  }
  std::printf("state lines that differ (- %s, + %s; --full prints both states):\n", a_name, b_name);
  const std::vector<std::string> a = lines_of(a_text), b = lines_of(b_text);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string& x = i < a.size() ? a[i] : std::string();
    const std::string& y = i < b.size() ? b[i] : std::string();
    if (x != y) std::printf("- %s\n+ %s\n", x.c_str(), y.c_str());
  }
}

std::string hex_inputs(const retcon_replay* replay, int32_t frame) {
  retcon_frame_inputs in;
  if (retcon_replay_get_inputs(replay, frame, &in) != RETCON_RESULT_OK) return "(none)";
  std::string s;
  char b[8];
  for (uint32_t p = 0; p < in.player_count; ++p) {
    if (p) s += " | ";
    for (uint32_t k = 0; k < in.input_size; ++k) {
      std::snprintf(b, sizeof b, "%02x", in.bytes[p * in.input_size + k]);
      s += b;
    }
  }
  return s;
}

// ------------------------------------------------------------------------------ record

struct Machine {
  Game game;
  retcon_transport* wire = nullptr;
  retcon_transport* link = nullptr;
  retcon_session* session = nullptr;
  ~Machine() {
    retcon_session_destroy(session);
    retcon_transport_destroy(link);
    retcon_transport_destroy(wire);
  }
};

#define TRY(call)                                                                                    \
  do {                                                                                               \
    const retcon_result r_ = (call);                                                                 \
    if (r_ != RETCON_RESULT_OK) {                                                                    \
      std::fprintf(stderr, "%s failed: %s\n", #call, retcon_result_name(r_));                        \
      return 2;                                                                                      \
    }                                                                                                \
  } while (0)

int record(const Options& o) {
  Module module;
  if (!load_module(o.game, &module)) return 2;
  const retcon_game_module& m = *module.m;
  if (uint32_t(o.players) < m.min_players || uint32_t(o.players) > m.max_players) {
    std::fprintf(stderr, "%s takes %u..%u players\n", m.name, m.min_players, m.max_players);
    return 2;
  }
  if (!m.bot_input) {
    std::fprintf(stderr, "%s has no bot_input: it cannot record a match on its own\n", m.name);
    return 2;
  }
  std::vector<uint8_t> user_data(256);
  const size_t ud = m.new_match(uint32_t(o.players), o.seed, user_data.data(), user_data.size());
  if (ud > user_data.size()) return 2;
  user_data.resize(ud);
  const int machines = o.mode == "p2p" ? o.players : 1;
  retcon_memory_network* network = nullptr;
  std::vector<Machine> ms(static_cast<size_t>(machines));
  if (o.mode == "p2p") TRY(retcon_memory_network_create(&network));
  retcon_link_profile link;
  retcon_link_profile_init(&link);
  if (o.mode == "p2p") {
    const retcon::LinkProfile l = fighter::to_link(*fighter::find_net_profile(o.profile.c_str()));
    link.latency_us = l.latency_us;
    link.jitter_us = l.jitter_us;
    link.loss = l.loss;
    link.duplicate = l.duplicate;
    link.reorder = l.reorder;
    link.blackout_period_us = l.blackout_period_us;
    link.blackout_duration_us = l.blackout_duration_us;
  }
  retcon_peer_address addresses[RETCON_MAX_PLAYERS];
  for (int i = 0; i < machines; ++i) {
    Machine& mc = ms[size_t(i)];
    if (!mc.game.create(&m, user_data.data(), user_data.size(), uint32_t(o.players))) {
      std::fprintf(stderr, "%s refused its own new match\n", m.name);
      return 2;
    }
    if (o.mode == "p2p") {
      TRY(retcon_memory_network_add_endpoint(network, &mc.wire));
      TRY(retcon_transport_address(mc.wire, &addresses[i]));
      TRY(retcon_network_simulator_create(mc.wire, o.seed * 977u + uint64_t(i), &mc.link));
      TRY(retcon_network_simulator_set_links(mc.link, &link, nullptr));
    }
  }
  for (int i = 0; i < machines; ++i) {
    Machine& mc = ms[size_t(i)];
    retcon_session_config c;
    retcon_session_config_init(&c);
    c.num_players = uint32_t(o.players);
    c.input_size = m.input_size;
    c.max_state_size = m.max_state_size;
    if (o.mode == "p2p") {
      retcon_p2p_config p;
      retcon_p2p_config_init(&p);
      p.rng_seed = o.seed * 131u + uint64_t(i) + 1;
      for (int k = 0; k < o.players; ++k) {
        p.player_kinds[k] = k == i ? RETCON_PLAYER_LOCAL : RETCON_PLAYER_REMOTE;
        p.player_addresses[k] = addresses[k];
      }
      TRY(retcon_p2p_session_create(&c, &p, &mc.game.cb, mc.link, &mc.session));
    } else {
      TRY(retcon_local_session_create(&c, &mc.game.cb, &mc.session));
    }
  }
  retcon_recording_config rc;
  retcon_recording_config_init(&rc);
  rc.frame_rate = m.frame_rate ? m.frame_rate : 60;
  rc.checksum_interval = o.checksum_interval;
  rc.state_interval = o.state_interval;
  rc.reserve_frames = uint32_t(o.frames) + 1;
  rc.user_data = user_data.data();
  rc.user_data_size = user_data.size();
  TRY(retcon_session_start_recording(ms[0].session, &rc));
  const auto start = Clock::now();
  uint64_t now = 0;
  std::vector<uint8_t> input(m.input_size);
  // Play until frame `frames` is confirmed on the recording machine (so frames 0..frames are
  // recorded, like the fighter tools always did).
  for (uint64_t tick = 0; tick < uint64_t(o.frames) * 8 + 3600; ++tick) {
    now += 16667;
    int32_t confirmed = RETCON_NULL_FRAME;
    retcon_session_confirmed_frame(ms[0].session, &confirmed);
    if (confirmed >= o.frames) break;
    for (int i = 0; i < machines; ++i) {
      Machine& mc = ms[size_t(i)];
      if (mc.link) retcon_network_simulator_set_time(mc.link, now);
      retcon_session_poll(mc.session, now);
      uint32_t running = 0;
      retcon_session_is_running(mc.session, &running);
      if (!running) continue;
      int32_t frame = 0;
      retcon_session_current_frame(mc.session, &frame);
      for (int p = 0; p < o.players; ++p) {
        if (o.mode == "p2p" && p != i) continue;
        m.bot_input(mc.game.game, p, frame, input.data(), input.size());
        retcon_session_add_local_input(mc.session, p, input.data(), input.size());
      }
      const retcon_result r = retcon_session_advance_frame(mc.session);
      if (r != RETCON_RESULT_OK && r != RETCON_RESULT_PREDICTION_LIMIT) {
        std::fprintf(stderr, "advance_frame: %s\n", retcon_result_name(r));
        return 1;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  retcon_replay* replay = nullptr;
  const retcon_result cr = retcon_session_copy_recording(ms[0].session, &replay);
  if (cr != RETCON_RESULT_OK) {
    std::fprintf(stderr, "recording failed: %s\n", retcon_result_name(cr));
    return 1;
  }
  const retcon_result w = retcon_replay_save_file(replay, o.file.c_str());
  retcon_replay_info info;
  retcon_replay_info_init(&info);
  retcon_replay_get_info(replay, &info);
  size_t bytes = 0;
  retcon_replay_serialize(replay, nullptr, 0, &bytes);
  retcon_replay_destroy(replay);
  ms.clear();
  retcon_memory_network_destroy(network);
  if (w != RETCON_RESULT_OK) {
    std::fprintf(stderr, "cannot write %s: %s\n", o.file.c_str(), retcon_result_name(w));
    return 3;
  }
  std::printf("recorded %d frames of a %d-player %s %s match (seed %" PRIu64 "%s%s) in %.2f s: %s, %zu bytes, "
              "%u checksums, %u stored states\n",
              info.frame_count, o.players, m.name, o.mode.c_str(), o.seed, o.mode == "p2p" ? ", profile " : "",
              o.mode == "p2p" ? o.profile.c_str() : "", seconds, o.file.c_str(), bytes, info.checkpoint_count,
              info.stored_states);
  return 0;
}

// ------------------------------------------------------------------------------ info

int info(const Options& o) {
  Loaded l;
  if (int rc = load_replay(o.file, &l); rc != 0) return rc;
  const retcon_replay_info& h = l.info;
  std::printf("%s: retcon replay\n", o.file.c_str());
  std::printf("  players %u, input size %u, frame rate %u, frames %d (%.1f s)\n", h.num_players, h.input_size,
              h.frame_rate, h.frame_count, h.frame_rate ? double(h.frame_count) / h.frame_rate : 0.0);
  std::printf("  checksums %u (every %u frames) by %s, stored states %u\n", h.checkpoint_count, h.checksum_interval,
              (h.flags & RETCON_REPLAY_GAME_CHECKSUM) ? "the game" : "XXH3-64", h.stored_states);
  std::printf("  user data %zu bytes:", h.user_data_size);
  for (size_t i = 0; i < h.user_data_size && i < 32; ++i) std::printf(" %02x", h.user_data[i]);
  std::printf("\n");
  Module module;
  Game g;
  if (load_module(o.game, &module)) {
    const bool ok = h.input_size == module.m->input_size &&
                    g.create(module.m, h.user_data, h.user_data_size, h.num_players);
    std::printf("  game: %s (%s)\n", ok ? module.m->name : "not", ok ? "its module accepts this replay" : module.m->name);
  }
  return 0;
}

// ------------------------------------------------------------------------------ play

int play(const Options& o) {
  Module module;
  Loaded l;
  Game g;
  if (int rc = open_game(o, &module, &l, &g); rc != 0) return rc;
  g.perturb_at = o.perturb;
  retcon_replay_run_config c = run_config(module);
  if (o.progress) c.progress = progress_bar;
  retcon_replay_report r;
  double seconds = 0;
  if (int rc = run_timed("play", retcon_replay_play, l, g, c, &r, &seconds); rc != 0) return rc;
  std::printf("played %d of %d frames in %.3f s (%.0f frames/s), %u recorded checksums verified\n", r.frames_played,
              l.info.frame_count, seconds, seconds > 0 ? r.frames_played / seconds : 0.0, r.checksums_verified);
  if (r.first_bad == RETCON_NULL_FRAME) {
    std::printf("result: OK, every recorded checksum matches\n");
    return 0;
  }
  if (r.exact) {
    std::printf("result: DIVERGED: the first differing state is the one frame %d starts from (frame %d's "
                "simulation or input differs)\n", r.first_bad, r.first_bad - 1);
  } else {
    std::printf("result: DIVERGED between checksums: frame %d matched, frame %d differs (record with "
                "--checksum-interval 1 to pin the exact frame)\n", r.last_good, r.first_bad);
  }
  std::printf("checksum at frame %d: recorded %016" PRIx64 ", replayed %016" PRIx64 "\n(`retcon_replay bisect` "
              "shows both states)\n", r.first_bad, r.expected, r.actual);
  return 1;
}

// ------------------------------------------------------------------------------ bisect

int bisect(const Options& o) {
  Module module;
  Loaded l;
  Game g;
  if (int rc = open_game(o, &module, &l, &g); rc != 0) return rc;
  g.perturb_at = o.perturb;
  retcon_replay_run_config c = run_config(module);
  c.from_frame = o.from;
  // A bar on long replays when someone watches (or when asked).
  if (o.progress || (retcon::tools::stderr_is_terminal() && l.info.frame_count >= 3600)) c.progress = progress_bar;
  retcon_replay_report r;
  double seconds = 0;
  if (int rc = run_timed("bisect", retcon_replay_bisect, l, g, c, &r, &seconds); rc != 0) return rc;
  std::printf("bisect of %s (%s): ran %d frames from frame %d in %.3f s, %u recorded checksums verified\n",
              o.file.c_str(), module.m->name, r.frames_played, r.start_frame, seconds, r.checksums_verified);
  if (r.first_bad == RETCON_NULL_FRAME) {
    std::printf("result: OK, every recorded checksum from frame %d on matches\n", r.start_frame);
    return 0;
  }
  if (r.exact) {
    std::printf("result: first divergent frame %d: the state frame %d starts from differs from the recording; "
                "frame %d (inputs %s) produced it\n", r.first_bad, r.first_bad, r.first_bad - 1,
                hex_inputs(l.replay, r.first_bad - 1).c_str());
  } else {
    std::printf("result: diverged between frame %d (matches) and frame %d (differs): the replay has a checksum "
                "every %u frames; record with --checksum-interval 1 for the exact frame\n", r.last_good, r.first_bad,
                l.info.checksum_interval);
  }
  std::printf("checksum at frame %d: recorded %016" PRIx64 ", replayed %016" PRIx64 "\n", r.first_bad, r.expected,
              r.actual);
  const std::string replayed = g.describe(r.first_bad, r.replayed_state, r.replayed_state_length);
  if (r.reference_state == nullptr) {
    std::printf("--- replayed state of frame %d ---\n%s", r.first_bad, replayed.c_str());
    return 1;
  }
  const std::string reference = g.describe(r.reference_frame, r.reference_state, r.reference_state_length);
  char a_name[64], b_name[64];
  if (r.reference_is_recorded) std::snprintf(a_name, sizeof a_name, "recorded frame %d", r.first_bad);
  else std::snprintf(a_name, sizeof a_name, "last matching frame %d", r.reference_frame);
  std::snprintf(b_name, sizeof b_name, "replayed frame %d", r.first_bad);
  print_diff(a_name, reference, b_name, replayed, o.full);
  return 1;
}

// ------------------------------------------------------------------------------ synctest

int synctest(const Options& o) {
  Module module;
  Loaded l;
  Game g;
  if (int rc = open_game(o, &module, &l, &g); rc != 0) return rc;
  g.inject_from = o.inject;
  retcon_replay_run_config c = run_config(module);
  c.check_distance = o.distance;
  if (o.progress) c.progress = progress_bar;
  retcon_replay_report r;
  double seconds = 0;
  if (int rc = run_timed("sync test", retcon_replay_sync_test, l, g, c, &r, &seconds); rc != 0) return rc;
  std::printf("sync test of %s (%s): distance %d, %d frames in %.3f s, %" PRIu64 " rollbacks, %" PRIu64
              " frames re-simulated\n", o.file.c_str(), module.m->name, o.distance, r.frames_played, seconds, r.rollbacks,
              r.frames_resimulated);
  std::printf("checked: every frame re-simulated %d frames back and compared (determinism); %u recorded checksums "
              "compared with the replayed states (the replay itself)\n", o.distance, r.checksums_verified);
  int status = 0;
  if (r.first_bad != RETCON_NULL_FRAME) {
    std::printf("result: DIFFERS FROM THE RECORDING at frame %d (recorded %016" PRIx64 ", replayed %016" PRIx64
                "): the inputs or the game changed since it was recorded; `retcon_replay bisect` shows the states\n",
                r.first_bad, r.expected, r.actual);
    status = 1;
  }
  if (r.mismatch_frame != RETCON_NULL_FRAME) {
    std::printf("result: NON-DETERMINISTIC, first differing frame %d: checksum %016" PRIx64 " first run, %016" PRIx64
                " re-simulated\n--- first simulation ---\n%.*s\n--- re-simulation ---\n%.*s\n", r.mismatch_frame,
                r.mismatch_first, r.mismatch_resimulated, int(r.mismatch_text_first_len),
                r.mismatch_text_first ? r.mismatch_text_first : "(no description)", int(r.mismatch_text_resimulated_len),
                r.mismatch_text_resimulated ? r.mismatch_text_resimulated : "(no description)");
    status = 1;
  }
  if (status == 0) {
    if (r.checksums_verified == 0)
      std::printf("result: DETERMINISTIC (every re-simulation matched); the replay holds no checksums to verify\n");
    else
      std::printf("result: DETERMINISTIC and MATCHES THE RECORDING (every re-simulation matched, every recorded "
                  "checksum matched)\n");
  }
  return status;
}

// ------------------------------------------------------------------------------ corrupt

int corrupt(const Options& o) {
  Loaded l;
  if (int rc = load_replay(o.file, &l); rc != 0) return rc;
  retcon_frame_inputs in;
  if (retcon_replay_get_inputs(l.replay, o.corrupt_frame, &in) != RETCON_RESULT_OK ||
      o.corrupt_player < 0 || uint32_t(o.corrupt_player) >= in.player_count) {
    std::fprintf(stderr, "%s has no frame %d player %d\n", o.file.c_str(), o.corrupt_frame, o.corrupt_player);
    return 2;
  }
  std::vector<uint8_t> input(in.bytes + size_t(o.corrupt_player) * in.input_size,
                             in.bytes + size_t(o.corrupt_player + 1) * in.input_size);
  input[0] ^= uint8_t(o.corrupt_xor);
  TRY(retcon_replay_set_input(l.replay, o.corrupt_frame, o.corrupt_player, input.data(), input.size()));
  if (retcon_result w = retcon_replay_save_file(l.replay, o.out.c_str()); w != RETCON_RESULT_OK) {
    std::fprintf(stderr, "cannot write %s: %s\n", o.out.c_str(), retcon_result_name(w));
    return 3;
  }
  std::printf("wrote %s: frame %d player %d input byte 0 xor 0x%02x (recorded checksums unchanged)\n", o.out.c_str(),
              o.corrupt_frame, o.corrupt_player, o.corrupt_xor);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options o;
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  if (o.command == "record") return record(o);
  if (o.command == "info") return info(o);
  if (o.command == "play" || o.command == "verify") return play(o);
  if (o.command == "bisect") return bisect(o);
  if (o.command == "synctest") return synctest(o);
  if (o.command == "corrupt") return corrupt(o);
  usage();
  return 2;
}
