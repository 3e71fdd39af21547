// fighter_sdl: the game in a window. Up to 2 players on the keyboard, the rest bots.
//   P1: A/D move, W jump, S crouch, F light, G heavy, H block
//   P2: arrows move/jump/crouch, J light, K heavy, L block
// Usage: fighter_sdl [--players 2..4] [--seed S] [--scale K] [--rollback N]
//                    [--auto] [--frames N] [--screenshot FILE.bmp]
//        fighter_sdl --net --player 0|1 --remote HOST:PORT|file:PATH [--local-port P] [--bind HOST]
//                    [--profile NAME | --no-sim] [--seed S] [--auto] ...
// --net: a 2-player match against another process (fighter_sdl --net or fighter_net) over UDP,
// through the same FighterPeer code as fighter_net; the keyboard (P1 keys) plays the local
// player, the overlay shows ping, frame advantage and rollbacks. Default profile: none.
// --auto: every player is a bot and frames run as fast as they draw; --frames N: exit after N
// frames; --screenshot: save the last frame as a BMP; --rollback N: roll back up to N frames
// every frame (a local self-test that fills the network overlay).
//
// The window talks only to a FrameSource: LocalFrameSource today, a retcon session later.
#include <SDL.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "bitmap_font.h"
#include "fighter_bot.h"
#include "fighter_render.h"
#include "frame_source.h"
#include "net_connect.h"
#include "net_frame_source.h"
#include "net_profiles.h"
#include "utf8_args.h"

namespace {

using fighter::FrameSource;

struct Options {
  int players = 2;
  uint32_t seed = 1;
  int scale = 2;
  int rollback = 0;
  bool autoplay = false;
  long frames = -1;  // -1: until the window closes
  const char* screenshot = nullptr;
  bool net = false;
  int net_player = 0;
  const char* remote = nullptr;  // required with --net: the configured peer, never a guess
  const char* bind = "127.0.0.1";
  uint16_t local_port = 0;
  const char* profile = nullptr;  // null: no simulated conditions
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const bool v = i + 1 < argc;
    if (std::strcmp(a, "--players") == 0 && v) o->players = std::atoi(argv[++i]);
    else if (std::strcmp(a, "--seed") == 0 && v) o->seed = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 0));
    else if (std::strcmp(a, "--scale") == 0 && v) o->scale = std::atoi(argv[++i]);
    else if (std::strcmp(a, "--rollback") == 0 && v) o->rollback = std::atoi(argv[++i]);
    else if (std::strcmp(a, "--frames") == 0 && v) o->frames = std::atol(argv[++i]);
    else if (std::strcmp(a, "--screenshot") == 0 && v) o->screenshot = argv[++i];
    else if (std::strcmp(a, "--auto") == 0) o->autoplay = true;
    else if (std::strcmp(a, "--net") == 0) o->net = true;
    else if (std::strcmp(a, "--no-sim") == 0) o->profile = nullptr;
    else if (std::strcmp(a, "--player") == 0 && v) o->net_player = std::atoi(argv[++i]);
    else if (std::strcmp(a, "--remote") == 0 && v) o->remote = argv[++i];
    else if (std::strcmp(a, "--bind") == 0 && v) o->bind = argv[++i];
    else if (std::strcmp(a, "--local-port") == 0 && v) o->local_port = static_cast<uint16_t>(std::atoi(argv[++i]));
    else if (std::strcmp(a, "--profile") == 0 && v) o->profile = argv[++i];
    else return false;
  }
  if (o->net) o->players = 2;
  if (o->net && (o->net_player < 0 || o->net_player > 1 || o->remote == nullptr)) return false;
  if (o->profile != nullptr && fighter::find_net_profile(o->profile) == nullptr) return false;
  return o->players >= fighter::kMinPlayers && o->players <= fighter::kMaxPlayers &&
         o->scale >= 1 && o->scale <= 4;
}

// Keyboard state of local slot 0 or 1 as the game's input bits.
uint16_t keyboard_input(const Uint8* keys, int slot) {
  struct Keys {
    SDL_Scancode left, right, up, down, light, heavy, block;
  };
  static constexpr Keys kLayouts[2] = {
      {SDL_SCANCODE_A, SDL_SCANCODE_D, SDL_SCANCODE_W, SDL_SCANCODE_S, SDL_SCANCODE_F,
       SDL_SCANCODE_G, SDL_SCANCODE_H},
      {SDL_SCANCODE_LEFT, SDL_SCANCODE_RIGHT, SDL_SCANCODE_UP, SDL_SCANCODE_DOWN, SDL_SCANCODE_J,
       SDL_SCANCODE_K, SDL_SCANCODE_L},
  };
  const Keys& k = kLayouts[slot];
  uint16_t bits = 0;
  if (keys[k.left]) bits |= fighter::kInputLeft;
  if (keys[k.right]) bits |= fighter::kInputRight;
  if (keys[k.up]) bits |= fighter::kInputUp;
  if (keys[k.down]) bits |= fighter::kInputDown;
  if (keys[k.light]) bits |= fighter::kInputLight;
  if (keys[k.heavy]) bits |= fighter::kInputHeavy;
  if (keys[k.block]) bits |= fighter::kInputBlock;
  return bits;
}

bool save_screenshot(SDL_Renderer* renderer, const char* path) {
  int w = 0, h = 0;
  if (SDL_GetRendererOutputSize(renderer, &w, &h) != 0) return false;
  SDL_Surface* shot = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
  if (shot == nullptr) return false;
  bool ok = SDL_RenderReadPixels(renderer, nullptr, SDL_PIXELFORMAT_ARGB8888, shot->pixels,
                                 shot->pitch) == 0 &&
            SDL_SaveBMP(shot, path) == 0;
  SDL_FreeSurface(shot);
  return ok;
}

// One window session: reads local inputs, drives the frame source, draws what it returns.
class FighterApp {
 public:
  FighterApp(SDL_Renderer* renderer, FrameSource& source, const Options& opt)
      : renderer_(renderer), draw_(renderer), source_(source), opt_(opt) {
    for (int p = 0; p < opt.players; ++p) bots_.emplace_back(opt.seed * 7919u + static_cast<uint32_t>(p), p);
  }

  // Returns false when the window was closed.
  bool frame(bool last) {
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
      if (e.type == SDL_QUIT) return false;
      if (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE) return false;
    }
    const Uint8* keys = SDL_GetKeyboardState(nullptr);
    const int humans = opt_.autoplay ? 0 : 2;
    for (int p = 0; p < opt_.players; ++p) {
      if (opt_.net && p != opt_.net_player) continue;  // the remote player is not ours
      const bool human = opt_.net ? humans > 0 : p < humans;
      const uint16_t bits = human ? keyboard_input(keys, opt_.net ? 0 : p)
                                  : bots_[static_cast<size_t>(p)].next_input(source_.state());
      source_.set_local_input(p, bits);
    }
    if (source_.tick() > 0) draw_.add_effects(source_.effects());
    draw_.draw(source_.state(), source_.overlay());
    if (last && opt_.screenshot != nullptr) {
      if (save_screenshot(renderer_, opt_.screenshot)) {
        std::printf("screenshot %s\n", opt_.screenshot);
      } else {
        std::fprintf(stderr, "screenshot failed: %s\n", SDL_GetError());
      }
    }
    SDL_RenderPresent(renderer_);
    return true;
  }

 private:
  SDL_Renderer* renderer_;
  fighter::FighterRenderer draw_;
  FrameSource& source_;
  Options opt_;
  std::vector<fighter::FighterBot> bots_;
};

}  // namespace

int main(int argc, char** argv) {
  retcon::cli::use_utf8_arguments(&argc, &argv);  // file names as typed, on Windows too
  Options opt;
  if (!parse(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: fighter_sdl [--players 2..4] [--seed S] [--scale 1..4] [--rollback N]\n"
                 "                   [--auto] [--frames N] [--screenshot FILE.bmp]\n"
                 "       fighter_sdl --net --player 0|1 --remote HOST:PORT|file:PATH [--local-port P]\n"
                 "                   [--bind HOST] [--profile NAME | --no-sim] [...]\n");
    return 2;
  }
  // Networked: find the peer before opening the window.
  std::unique_ptr<FrameSource> source_owner;
  fighter::NetFrameSource* net_source = nullptr;
  fighter::LocalFrameSource* local_source = nullptr;
  if (opt.net) {
    std::unique_ptr<retcon::UdpTransport> udp;
    retcon::PeerAddress peer;
    if (!fighter::open_udp_peer(opt.bind, opt.local_port, opt.remote, 60000000, &udp, &peer)) return 1;
    retcon::LinkProfile link;
    if (opt.profile) link = fighter::to_link(*fighter::find_net_profile(opt.profile));
    auto net = std::make_unique<fighter::NetFrameSource>(std::move(udp), peer, opt.net_player, opt.seed,
                                                         opt.profile ? &link : nullptr);
    if (!net->ok()) {
      std::fprintf(stderr, "cannot start the network session\n");
      return 1;
    }
    net_source = net.get();
    source_owner = std::move(net);
  } else {
    auto local = std::make_unique<fighter::LocalFrameSource>(opt.players, opt.seed, opt.rollback);
    local_source = local.get();
    source_owner = std::move(local);
  }
  FrameSource& source = *source_owner;

  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    std::fprintf(stderr, "SDL_Init: %s\n", SDL_GetError());
    return 1;
  }
  SDL_Window* window = SDL_CreateWindow("retcon fighter", SDL_WINDOWPOS_CENTERED,
                                        SDL_WINDOWPOS_CENTERED,
                                        fighter::FighterRenderer::kWidth * opt.scale,
                                        fighter::FighterRenderer::kHeight * opt.scale, 0);
  if (window == nullptr) {
    std::fprintf(stderr, "SDL_CreateWindow: %s\n", SDL_GetError());
    SDL_Quit();
    return 1;
  }
  // Interactive play paces itself with vsync; --auto runs unpaced.
  const Uint32 flags = opt.autoplay ? 0u : static_cast<Uint32>(SDL_RENDERER_PRESENTVSYNC);
  SDL_Renderer* renderer = SDL_CreateRenderer(window, -1, flags);
  if (renderer == nullptr) renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE);
  if (renderer == nullptr) {
    std::fprintf(stderr, "SDL_CreateRenderer: %s\n", SDL_GetError());
    SDL_DestroyWindow(window);
    SDL_Quit();
    return 1;
  }
  SDL_RenderSetLogicalSize(renderer, fighter::FighterRenderer::kWidth,
                           fighter::FighterRenderer::kHeight);

  FighterApp app(renderer, source, opt);
  const Uint64 freq = SDL_GetPerformanceFrequency();
  Uint64 next = SDL_GetPerformanceCounter();
  for (long f = 0; opt.frames < 0 || f < opt.frames; ++f) {
    if (!app.frame(opt.frames >= 0 && f + 1 == opt.frames)) break;
    if (!opt.autoplay || opt.net) {  // 60 Hz even without vsync; a network match is real time
      next += freq / 60;
      const Uint64 now = SDL_GetPerformanceCounter();
      if (next > now) SDL_Delay(static_cast<Uint32>((next - now) * 1000 / freq));
      else next = now;
    }
  }
  bool clean = true;
  if (local_source) {
    std::printf("frames %d checksum %016" PRIx64 " rollback mismatches %" PRIu64 "\n",
                static_cast<int>(source.state().frame), fighter::fighter_checksum(source.state()),
                local_source->mismatches());
    clean = local_source->mismatches() == 0;
  } else {
    const fighter::FighterPeer& peer = net_source->peer();
    std::printf("frames %d ping %d ms rollbacks %" PRIu64 " desyncs %" PRIu64 "\n",
                static_cast<int>(source.state().frame), source.overlay().ping_ms, source.overlay().rollbacks,
                peer.desyncs());
    clean = peer.desyncs() == 0;
  }
  SDL_DestroyRenderer(renderer);
  SDL_DestroyWindow(window);
  SDL_Quit();
  return clean ? 0 : 1;
}
