// Fighter over the network: what the overlay shows of one machine's match, from its FighterPeer
// after each tick (the window's NetFrameSource calls it; tests call it on simulated matches).
#pragma once

#include "fighter_peer.h"
#include "net_overlay.h"

namespace fighter {

// A lateness warning stays up this long after the late_inputs event (3 s at 60 fps), so a person
// can read it; a peer flagged again keeps it up.
inline constexpr retcon::Frame kLateWarningFrames = 180;

// Rollbacks, ping, frame advantage, the input delay in use (adaptive: chosen before each round)
// and the lateness warning, after a tick that did `t`.
void feed_net_overlay(const FighterPeer& peer, const PeerTick& t, NetOverlay* overlay);

}  // namespace fighter
