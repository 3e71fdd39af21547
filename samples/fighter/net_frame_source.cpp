// Fighter over the network: NetFrameSource (see net_frame_source.h).
#include "net_frame_source.h"

#include <random>

#include "net_overlay_feed.h"

namespace fighter {

NetFrameSource::NetFrameSource(std::unique_ptr<retcon::UdpTransport> udp, const retcon::PeerAddress& peer,
                               int local_player, uint32_t game_seed, const retcon::LinkProfile* link)
    : udp_(std::move(udp)), local_player_(local_player) {
  std::random_device entropy;
  sim_ = std::make_unique<retcon::NetworkSimulator>(*udp_, (uint64_t(entropy()) << 32) ^ entropy());
  if (link) sim_->set_outgoing(*link);
  retcon::SimulatorLimits limits;  // over real UDP: a flood must not hold the game thread
  limits.receive_time_budget_us = 2000;
  sim_->set_limits(limits);
  PeerSetup s;
  s.players = 2;
  s.local_player = local_player;
  s.game_seed = game_seed;
  s.bot_seed = game_seed * 7919u + uint32_t(local_player);
  s.transport = sim_.get();
  s.addresses[1 - local_player] = peer;
  s.rng_seed = (uint64_t(entropy()) << 32) ^ entropy();
  s.checksum_interval = 60;
  s.decided_round_end = true;
  s.adaptive_delay = true;
  ok_ = peer_.start(s) == retcon::Result::ok;
  overlay_.visible = true;
}

uint64_t NetFrameSource::now_us() const {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count());
}

void NetFrameSource::set_local_input(int player, uint16_t bits) {
  if (player == local_player_) peer_.set_manual_input(bits);
}

int NetFrameSource::tick() {
  const uint64_t now = now_us();
  sim_->set_time(now);
  const PeerTick t = peer_.tick(now, retcon::Frame(1) << 30);
  effects_ = t.advanced ? peer_.game().last_effects() : FighterEffects{};
  feed_net_overlay(peer_, t, &overlay_);
  return t.advanced ? 1 : 0;
}

}  // namespace fighter
