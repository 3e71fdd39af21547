// fighter_net: one machine of a 2-player fighter match between two processes over real UDP,
// with bots, paced in real time at 60 fps. The UDP socket is wrapped in retcon's
// NetworkSimulator so a loopback match feels like a long-distance one (default: transatlantic,
// ~100 ms RTT, jitter, 5% loss each way). Ends by itself after --seconds and prints a report whose
// `checksum` line every process of the match must agree on (run_net_pair.sh compares them).
//
//   fighter_net --player 0 --local-port 0 --remote file:B.addr   # prints "listening on HOST:PORT"
//   fighter_net --player 1 --local-port 0 --remote 127.0.0.1:PORT # then: echo HOST:PORT > B.addr
//
// The peer is always the configured address: datagrams from anyone else are dropped by the
// session. --remote file:PATH waits for PATH to name it, so both sides can bind port 0 and
// nothing depends on a fixed port (run_net_pair.sh does exactly this). The connection nonces
// come from fresh OS entropy on every run.
//
// A late spectator (run_net_spectate.sh): `--spectate HOST:PORT|file:PATH` watches the match of
// the player machine there, which was started with `--spectator ADDR` naming this process's
// address (it binds first and prints it). It starts from a state that machine sends (state
// transfer), catches up, and prints the same checksum line as the players.
// Rejoin (run_net_rejoin.sh): players started with `--allow-rejoin` play on when the other one
// drops; a process started again with `--rejoin` (same --player and --remote, any port) takes
// its old slot back from a transferred state. Each such event is printed as an `event` line
// when it happens.
// Exit status: 0 this machine confirmed the last frame and no desync was reported, 1 otherwise,
// 2 bad usage or no socket.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fighter_peer.h"
#include "net_connect.h"
#include "net_profiles.h"
#include "utf8_args.h"

#if defined(_WIN32)
#include <windows.h>
#include <timeapi.h>  // timeBeginPeriod (winmm)
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int player = 0;
  std::string bind = "127.0.0.1";
  uint16_t local_port = 0;
  std::string remote;             // "host:port" or "any"
  int seconds = 20;
  uint32_t seed = 1;
  std::string profile = "transatlantic";
  bool simulate = true;
  bool progress = false;
  const char* replay = nullptr;
  int max_prediction = 8;
  int diverge_at = -1;            // testing: this machine's game differs from that frame on
  std::string spectate;           // a spectator of the player machine at this address
  std::vector<std::string> spectators;  // players: spectators' addresses (HOST:PORT)
  bool allow_rejoin = false;
  bool rejoin = false;
  bool status_lines = false;      // a `status` line every second (for scripts)
  int disconnect_timeout_ms = 5000;
};

void usage() {
  std::fprintf(stderr,
               "usage: fighter_net --player 0|1 --remote HOST:PORT|file:PATH [--local-port P] [--bind HOST]\n"
               "                   [--seconds N] [--seed S] [--profile NAME | --no-sim] [--progress]\n"
               "                   [--replay FILE] [--max-prediction F] [--diverge-at F]\n"
               "                   [--spectator HOST:PORT]... [--allow-rejoin] [--rejoin]\n"
               "                   [--disconnect-timeout MS] [--status-lines]\n"
               "       fighter_net --spectate HOST:PORT|file:PATH [--local-port P] [--seconds N] [--seed S] ...\n");
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--progress") == 0) { o->progress = true; continue; }
    if (std::strcmp(a, "--no-sim") == 0) { o->simulate = false; continue; }
    if (std::strcmp(a, "--allow-rejoin") == 0) { o->allow_rejoin = true; continue; }
    if (std::strcmp(a, "--rejoin") == 0) { o->rejoin = true; continue; }
    if (std::strcmp(a, "--status-lines") == 0) { o->status_lines = true; continue; }
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (std::strcmp(a, "--player") == 0) o->player = std::atoi(v);
    else if (std::strcmp(a, "--bind") == 0) o->bind = v;
    else if (std::strcmp(a, "--local-port") == 0) o->local_port = uint16_t(std::atoi(v));
    else if (std::strcmp(a, "--remote") == 0) o->remote = v;
    else if (std::strcmp(a, "--seconds") == 0) o->seconds = std::atoi(v);
    else if (std::strcmp(a, "--seed") == 0) o->seed = uint32_t(std::strtoul(v, nullptr, 0));
    else if (std::strcmp(a, "--profile") == 0) o->profile = v;
    else if (std::strcmp(a, "--replay") == 0) o->replay = v;
    else if (std::strcmp(a, "--max-prediction") == 0) o->max_prediction = std::atoi(v);
    else if (std::strcmp(a, "--diverge-at") == 0) o->diverge_at = std::atoi(v);
    else if (std::strcmp(a, "--spectate") == 0) o->spectate = v;
    else if (std::strcmp(a, "--spectator") == 0) o->spectators.push_back(v);
    else if (std::strcmp(a, "--disconnect-timeout") == 0) o->disconnect_timeout_ms = std::atoi(v);
    else return false;
  }
  if (!o->spectate.empty()) {  // a spectator: the host is its only peer
    if (!o->remote.empty() || o->rejoin || o->allow_rejoin || !o->spectators.empty()) return false;
    o->remote = o->spectate;
    o->player = -1;
  }
  return (o->player == 0 || o->player == 1 || o->player == -1) && !o->remote.empty() && o->seconds > 0 &&
         o->disconnect_timeout_ms > 0 && o->spectators.size() <= size_t(retcon::kMaxSpectators) &&
         fighter::find_net_profile(o->profile.c_str()) != nullptr;
}

uint64_t micros_since(Clock::time_point start) {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
}

Clock::time_point g_start;

// FighterPeer's connection events, as they happen: "event 4.21 s: player 1 disconnected ...".
void print_event(void*, const char* line) {
  std::printf("event %.2f s: %s\n", double(micros_since(g_start)) / 1e6, line);
  std::fflush(stdout);
}

// Every machine this one streams to (remote players still in, spectators) acknowledged all of it.
bool everyone_acknowledged(fighter::FighterPeer& peer, int local_player) {
  retcon::PeerStats s{};
  for (int p = 0; p < 2 && !peer.spectator(); ++p) {
    if (p == local_player || peer.session().peer_stats(p, &s) != retcon::Result::ok) continue;
    if (s.state != 4 && s.send_queue_length != 0) return false;  // 4: disconnected
  }
  for (uint32_t k = 0; peer.session().spectator_stats(k, &s) == retcon::Result::ok; ++k)
    if (s.state != 4 && s.send_queue_length != 0) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options opt;
  if (!parse(argc, argv, &opt)) {
    usage();
    return 2;
  }
#if defined(_WIN32)
  // Windows sleeps in 15.6 ms steps unless asked for 1 ms: the 2 ms receive loop below would
  // otherwise hold datagrams for most of a frame and inflate the measured ping.
  timeBeginPeriod(1);
#endif
  const Clock::time_point start = Clock::now();
  g_start = start;
  std::unique_ptr<retcon::UdpTransport> udp;
  retcon::PeerAddress remote;
  // A spectator waits longer for its host's address: a launcher may give it once the match runs.
  const uint64_t wait_us = opt.player < 0 ? 120000000 : 30000000;
  if (!fighter::open_udp_peer(opt.bind, opt.local_port, opt.remote, wait_us, &udp, &remote)) return 2;
  char remote_text[64];
  retcon::format_ip_address(remote, remote_text, sizeof remote_text);
  std::printf("%s %s\n", opt.player < 0 ? "host" : "peer", remote_text);
  std::vector<retcon::PeerAddress> spectators;
  for (const std::string& text : opt.spectators) {
    retcon::PeerAddress a;
    if (!fighter::parse_peer_address(text, &a)) {
      std::fprintf(stderr, "bad spectator address '%s' (want HOST:PORT)\n", text.c_str());
      return 2;
    }
    spectators.push_back(a);
  }

  std::random_device entropy;
  retcon::NetworkSimulator sim(*udp, (uint64_t(entropy()) << 32) ^ entropy());
  const retcon::LinkProfile link = fighter::to_link(*fighter::find_net_profile(opt.profile.c_str()));
  if (opt.simulate) sim.set_outgoing(link);
  retcon::SimulatorLimits limits;  // over real UDP: a flood must not hold the game thread
  limits.receive_time_budget_us = 2000;
  sim.set_limits(limits);
  char link_text[256];
  fighter::describe_link(opt.simulate ? link : retcon::LinkProfile{}, link_text, sizeof link_text);
  std::printf("network %s (%s)\n", opt.simulate ? opt.profile.c_str() : "as is", link_text);
  std::fflush(stdout);

  fighter::PeerSetup setup;
  setup.players = 2;
  setup.local_player = opt.player;
  setup.game_seed = opt.seed;
  setup.bot_seed = opt.seed * 7919u + uint32_t(opt.player);
  setup.transport = &sim;
  if (opt.player >= 0) setup.addresses[1 - opt.player] = remote;
  else setup.host = remote;
  setup.spectators = spectators;
  setup.rng_seed = (uint64_t(entropy()) << 32) ^ entropy();
  setup.max_prediction = opt.max_prediction;
  setup.decided_round_end = true;  // rounds end by the deciding machine's timed decision
  setup.adaptive_delay = true;     // the delay chosen at the start and before each round
  setup.share_desync_states = true;  // on a desync, both states: the report names the fields
  setup.diverge_at = opt.diverge_at;
  setup.disconnect_timeout_us = uint64_t(opt.disconnect_timeout_ms) * 1000;
  // States for late spectators and rejoiners; a late spectator asks for one.
  setup.state_transfer = !spectators.empty() || opt.allow_rejoin || opt.rejoin || opt.player < 0;
  setup.allow_rejoin = opt.allow_rejoin || opt.rejoin;  // once back, it lets the other one back too
  setup.rejoining = opt.rejoin;
  setup.note = print_event;
  const retcon::Frame last = retcon::Frame(opt.seconds) * 60;
  setup.checksum_frame = last;  // a spectator or rejoiner has no recorded checkpoint of it
  fighter::FighterPeer peer;
  if (retcon::Result r = peer.start(setup); r != retcon::Result::ok) {
    std::fprintf(stderr, "fighter_net: cannot start the session: %s\n", retcon::result_name(r));
    return 2;
  }

  const uint64_t tick_us = 16667;
  const uint64_t give_up_us = uint64_t(opt.seconds) * 2000000 + 30000000;
  uint64_t rollbacks = 0, resimulated = 0, max_depth = 0, ping_sum = 0, ping_n = 0;
  uint64_t confirmed_at = 0, running_at = 0, acked_at = 0;
  bool done = false;
  uint64_t next = 0, next_status_us = 0;
  // Without rejoin a dropped peer ends the match; with it this machine plays on (the other may
  // come back).
  const bool play_on_alone = setup.allow_rejoin;
  for (uint64_t ticks = 0; !done; ++ticks) {
    const uint64_t now = micros_since(start);
    if (now > give_up_us) break;
    sim.set_time(now);
    const fighter::PeerTick t = peer.tick(now, last);
    if (t.rollback_frames) {
      ++rollbacks;
      resimulated += t.rollback_frames;
      if (t.rollback_frames > max_depth) max_depth = t.rollback_frames;
    }
    if (peer.running()) {
      if (running_at == 0) running_at = now;
      ping_sum += peer.ping_us();
      ++ping_n;
    }
    uint64_t final_checksum = 0;
    if (confirmed_at == 0 && peer.confirmed_checksum(last, &final_checksum)) confirmed_at = now;
    if (confirmed_at != 0) {
      // Stay until the peer (and every spectator) acknowledged our inputs (it can then confirm
      // the last frame too), then half a second more so our acknowledgements reach it; at most
      // 3 s (6 s with spectators: they are a stream behind). A spectator stays until it has run
      // all its host sends (the players stop after the same frames), so the host sees every
      // frame acknowledged.
      const bool acked = peer.spectator() ? peer.past_last(last) : everyone_acknowledged(peer, opt.player);
      if (acked_at == 0 && acked) acked_at = now;
      const uint64_t linger_us = spectators.empty() ? 3000000 : 6000000;
      done = (acked_at != 0 && now - acked_at > 500000) || now - confirmed_at > linger_us ||
             (peer.disconnects() > 0 && !play_on_alone);
    }
    if (peer.disconnects() > 0 && confirmed_at == 0 && !play_on_alone) break;
    if (opt.status_lines && peer.running() && now >= next_status_us) {
      std::printf("status %.2f s: frame %d, confirmed %d\n", double(now) / 1e6, peer.session().current_frame(),
                  peer.session().confirmed_frame());
      std::fflush(stdout);
      next_status_us = now + 1000000;
    }
    if (opt.progress && ticks % 15 == 0) {
      const retcon::Frame f = peer.running() ? peer.session().current_frame() : 0;
      std::fprintf(stderr, "\r[%s%d] frame %5d/%d  ping %3" PRIu64 " ms  advantage %+3d  rollbacks %5" PRIu64
                   "  stalls %4" PRIu64 "  %s ", opt.player < 0 ? "spectator " : "p", opt.player < 0 ? 0 : opt.player, f, last, peer.ping_us() / 1000, peer.frame_advantage(),
                   rollbacks, peer.stalls(), peer.running() ? "running" : "connecting");
      std::fflush(stderr);
    }
    next += tick_us;
    // Until the next frame, receive (and acknowledge) every 2 ms: a datagram then waits at most
    // 2 ms here instead of a whole frame, which keeps the measured ping close to the network's.
    for (uint64_t after = micros_since(start); next > after; after = micros_since(start)) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min<uint64_t>(next - after, 2000)));
      const uint64_t t_now = micros_since(start);
      sim.set_time(t_now);
      peer.poll(t_now);
    }
    const uint64_t after = micros_since(start);
    if (after > next + 250000) next = after;  // far behind (stopped in a debugger?): do not race
  }
  if (opt.progress) std::fprintf(stderr, "\n");

  const double seconds = double(micros_since(start) - running_at) / 1e6;
  uint64_t checksum = 0;
  const bool confirmed = peer.confirmed_checksum(last, &checksum);
  if (opt.player < 0) std::printf("fighter_net report (spectator)\n");
  else std::printf("fighter_net report (player %d%s)\n", opt.player, opt.rejoin ? ", rejoined" : "");
  if (peer.started_at() > 0) std::printf("started from frame %d (a transferred state)\n", peer.started_at());
  if (peer.rejoined_at() != retcon::kNullFrame)
    std::printf("rejoin: player %d live again from frame %d (%s)\n", opt.rejoin ? opt.player : 1 - opt.player,
                peer.rejoined_at(), peer.rejoin_confirmed() ? "confirmed" : "not confirmed");
  if (!spectators.empty()) std::printf("spectators joined %u of %zu\n", peer.spectators_joined(), spectators.size());
  std::printf("frames %d (confirmed %d), max prediction %d\n", peer.running() ? peer.session().current_frame() : 0,
              peer.running() ? peer.session().confirmed_frame() : -1, opt.max_prediction);
  std::printf("rollbacks %" PRIu64 " (mean depth %.2f, max depth %" PRIu64 "), stalls %" PRIu64 "\n", rollbacks,
              rollbacks ? double(resimulated) / double(rollbacks) : 0.0, max_depth, peer.stalls());
  std::printf("ping %.0f ms (mean), interruptions %" PRIu64 ", disconnects %" PRIu64 "\n",
              ping_n ? double(ping_sum) / double(ping_n) / 1000.0 : 0.0, peer.interruptions(), peer.disconnects());
  std::printf("bytes/s sent %.0f, received %.0f (%.1f s running); simulator dropped %" PRIu64 " of %" PRIu64 " sent\n",
              seconds > 0 ? double(peer.bytes_sent()) / seconds : 0.0,
              seconds > 0 ? double(peer.bytes_received()) / seconds : 0.0, seconds,
              sim.outgoing_stats().dropped_loss + sim.outgoing_stats().dropped_blackout, sim.outgoing_stats().sent);
  std::printf("desyncs %" PRIu64 "\n", peer.desyncs());
  if (!peer.desync_diff().empty())
    std::printf("desync at frame %d, fields (ours vs the peer's):\n%s", peer.desync_diff_frame(),
                peer.desync_diff().c_str());
  // Datagrams from any address but the configured peer's: dropped, never taken as the peer.
  std::printf("datagrams from strangers dropped %" PRIu64 "\n", peer.session().dropped_unknown_address());
  if (opt.replay && peer.started_at() > 0) {
    std::printf("replay %s: not written (this machine did not run the match from frame 0)\n", opt.replay);
  } else if (opt.replay) {
    const retcon::Result r = peer.recorder().write_file(opt.replay);
    std::printf("replay %s: %s\n", opt.replay, retcon::result_name(r));
  }
  if (confirmed) std::printf("checksum frame %d %016" PRIx64 "\n", last, checksum);
  else std::printf("checksum frame %d not confirmed\n", last);
  std::fflush(stdout);
  return confirmed && peer.desyncs() == 0 && peer.errors() == 0 ? 0 : 1;
}
