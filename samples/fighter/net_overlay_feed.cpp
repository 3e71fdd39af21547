#include "net_overlay_feed.h"

namespace fighter {

void feed_net_overlay(const FighterPeer& peer, const PeerTick& t, NetOverlay* overlay) {
  NetOverlay& o = *overlay;
  if (t.rollback_frames) o.rollbacks += 1;
  o.frames_resimulated += t.rollback_frames;
  o.push_rollback_depth(int32_t(t.rollback_frames));
  o.ping_ms = int32_t(peer.ping_us() / 1000);
  o.frame_advantage = peer.frame_advantage();
  o.input_delay = peer.input_delay();
  const bool recent = peer.late_player() >= 0 && peer.game().state().frame - peer.late_at() < kLateWarningFrames;
  o.late_player = recent ? peer.late_player() : -1;
  o.late_frames = recent ? peer.late_frames() : 0;
}

}  // namespace fighter
