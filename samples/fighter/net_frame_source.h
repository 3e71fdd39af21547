// Fighter over the network: the window's FrameSource for a networked match. A FighterPeer over
// a UDP socket (wrapped in a NetworkSimulator when a profile is given), the local player's input
// from the window, the overlay fed with ping, frame advantage and rollbacks.
#pragma once

#include <chrono>
#include <memory>

#include "fighter_peer.h"
#include "frame_source.h"
#include "retcon/transport.h"

namespace fighter {

class NetFrameSource final : public FrameSource {
 public:
  // `udp` is open and `peer` known (see open_udp_peer). `link` null: no simulated conditions.
  NetFrameSource(std::unique_ptr<retcon::UdpTransport> udp, const retcon::PeerAddress& peer, int local_player,
                 uint32_t game_seed, const retcon::LinkProfile* link);
  bool ok() const { return ok_; }

  void set_local_input(int player, uint16_t bits) override;
  int tick() override;
  const FighterState& state() const override { return peer_.game().state(); }
  const FighterEffects& effects() const override { return effects_; }
  NetOverlay overlay() const override { return overlay_; }

  const FighterPeer& peer() const { return peer_; }

 private:
  uint64_t now_us() const;

  std::unique_ptr<retcon::UdpTransport> udp_;
  std::unique_ptr<retcon::NetworkSimulator> sim_;
  FighterPeer peer_;
  int local_player_;
  bool ok_ = false;
  FighterEffects effects_{};
  NetOverlay overlay_{};
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace fighter
