// The host's side of state transfer: see snapshot_server.h.
#include "session/snapshot_server.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "session/state_transfer.h"

namespace retcon::detail {

namespace {
// How far behind the newest streamed frame a state may be: its inputs since must still be in
// the driver's queues (they reach back past the checkpoints, at least 32 frames).
constexpr Frame kSearchFrames = 32;

bool send_transfer(Peer& peer, const TransferMessage& m) noexcept {
  uint8_t body[kMaxTransferMessage];
  const size_t n = encode_transfer(m, body);
  return peer.channel.send_message(ChannelStream::state_transfer, body, n) == Result::ok;
}
}  // namespace

Result SnapshotServer::init(RollbackDriver& driver, bool enabled, size_t max_state_size) {
  enabled_ = enabled;
  if (!enabled) return Result::ok;
  if (Result r = driver.commit_memory(max_state_size, "the state-transfer buffer"); r != Result::ok) return r;
  buffer_.reset(new (std::nothrow) uint8_t[max_state_size]);
  if (!buffer_) return Result::out_of_memory;
  return Result::ok;
}

void SnapshotServer::on_message(uint32_t index, Peer& peer, const uint8_t* body, size_t size,
                                Frame next_streamed) noexcept {
  TransferMessage m;
  if (index >= kMaxSpectators || !decode_transfer(body, size, &m) || m.kind != TransferKind::request) {
    ++malformed_;
    return;
  }
  if (!enabled_) {
    TransferMessage no;
    no.kind = TransferKind::declined;
    no.reason = DeclineReason::not_enabled;
    send_transfer(peer, no);  // the window of 32 messages cannot be full of ours: we send few
    return;
  }
  // Asked again (its last state stopped arriving): start over with a fresh state.
  if (sending_[index]) {
    peer.channel.cancel_blob();
    sending_[index] = false;
  }
  // Said now, or as soon as the channel has room (the spectator waits for it before the offer).
  accept_owed_[index] = !send_accepted(peer);
  wanted_[index] = true;
  // Nothing goes to it until it is served; what was queued (from frame 0) is dropped.
  peer.endpoint.restart_outgoing_at(next_streamed);
}

void SnapshotServer::on_channel_events(uint32_t index, Peer& peer) noexcept {
  ChannelEvent e;
  while (peer.channel.pop_event(&e)) {
    if (index >= kMaxSpectators) continue;
    if (e.type == ChannelEventType::blob_sent || e.type == ChannelEventType::blob_refused) sending_[index] = false;
  }
}

bool SnapshotServer::send_accepted(Peer& peer) noexcept {
  TransferMessage yes;
  yes.kind = TransferKind::accepted;
  return send_transfer(peer, yes);
}

bool SnapshotServer::busy() const noexcept {
  for (bool s : sending_)
    if (s) return true;
  return false;
}

void SnapshotServer::serve(RollbackDriver& driver, Peer* spectators, uint32_t count, Frame last_streamed, bool stable,
                           Frame everywhere, Frame oldest, Frame* next_to_stream) noexcept {
  bool any = false;
  for (uint32_t i = 0; i < count && i < kMaxSpectators; ++i) {
    if (spectators[i].dropped) wanted_[i] = sending_[i] = accept_owed_[i] = false;  // its channel let the blob go
    if (accept_owed_[i]) accept_owed_[i] = !send_accepted(spectators[i]);
    any = any || wanted_[i];
  }
  if (!any || !stable || busy()) return;
  if (last_streamed == kNullFrame) {
    // The match has not confirmed a frame yet: the spectator can play it from the start.
    for (uint32_t i = 0; i < count && i < kMaxSpectators; ++i) {
      if (!wanted_[i] || accept_owed_[i] || !spectators[i].endpoint.running()) continue;
      TransferMessage no;
      no.kind = TransferKind::declined;
      no.reason = DeclineReason::not_started;
      if (!send_transfer(spectators[i], no)) continue;
      spectators[i].endpoint.restart_outgoing_at(0);
      next_to_stream[i] = 0;
      wanted_[i] = false;
    }
    return;
  }
  // The newest state that is final: saved before its frame ran (so at most frame() - 1), every
  // input before it streamed and held by every player machine (a peer that lost a player earlier
  // would cut it before), and no correction pending at or before it.
  Frame top = std::min({last_streamed + 1, driver.frame() - 1, everywhere + 1});
  if (driver.first_incorrect() != kNullFrame) top = std::min(top, driver.first_incorrect());
  const SavedState* state = nullptr;
  for (Frame f = top; f >= oldest && f > top - kSearchFrames && state == nullptr; --f) {
    const SavedState* s = driver.saved(f);
    if (s && s->frame == f && s->length > 0) state = s;
  }
  if (state == nullptr) return;  // none at hand: the next frames save one
  std::memcpy(buffer_.get(), state->data, state->length);
  size_ = state->length;
  frame_ = state->frame;
  for (uint32_t i = 0; i < count && i < kMaxSpectators; ++i) {
    Peer& peer = spectators[i];
    if (!wanted_[i] || accept_owed_[i] || !peer.endpoint.running() || peer.channel.sending_blob() ||
        peer.channel.messages_free() == 0)
      continue;
    TransferMessage offer;
    offer.kind = TransferKind::offer;
    offer.frame = frame_;
    offer.size = uint32_t(size_);
    if (!send_transfer(peer, offer)) continue;
    // Its input stream restarts at the state's frame; the session streams the frames since as
    // to any spectator, each once the spectator holds that frame's decisions.
    peer.endpoint.restart_outgoing_at(frame_);
    next_to_stream[i] = frame_;
    if (peer.channel.send_blob(uint32_t(TransferPurpose::spectate), frame_, buffer_.get(), size_) != Result::ok) {
      // Larger than the channel takes (cannot happen: both are max_state_size): it is told by
      // the offer's size and gives up.
      wanted_[i] = false;
      continue;
    }
    wanted_[i] = false;
    sending_[i] = true;
    ++states_sent_;
  }
}

}  // namespace retcon::detail
