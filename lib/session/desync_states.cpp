// Both states on a desync: see desync_states.h.
#include "session/desync_states.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "session/driver_session.h"

namespace retcon::detail {

namespace {
// Frames a peer's checksum report may come after ours (its window, both input delays' share of
// the link, jitter): the kept slots cover that many frames of checksums, at least two.
constexpr int32_t kReportLagFrames = 48;
constexpr uint32_t kMaxKeptStates = 16;
}  // namespace

Result DesyncStates::init(RollbackDriver& driver, size_t cap, int32_t interval, Peer* peers, uint32_t player_peers) {
  cap_ = 0;
  if (cap == 0 || interval <= 0 || player_peers == 0) return Result::ok;  // nothing to exchange
  // Sized once, by the configured window: a peer's window in use is never larger.
  const int32_t lag = kReportLagFrames + 2 * driver.max_prediction();
  slot_count_ = std::clamp<uint32_t>(uint32_t((lag + interval - 1) / interval) + 2, 2, kMaxKeptStates);
  const uint64_t bytes = uint64_t(cap) * (slot_count_ + player_peers);
  if (Result r = driver.commit_memory(bytes, "the desync states"); r != Result::ok) return r;
  slots_memory_.reset(new (std::nothrow) uint8_t[cap * slot_count_]);
  slots_.reset(new (std::nothrow) Slot[slot_count_]);
  receive_memory_.reset(new (std::nothrow) uint8_t[cap * player_peers]);
  if (!slots_memory_ || !slots_ || !receive_memory_) return Result::out_of_memory;
  for (uint32_t i = 0; i < slot_count_; ++i) slots_[i].state.data = slots_memory_.get() + cap * i;
  cap_ = cap;
  peers_ = peers;
  player_peers_ = player_peers;
  for (uint32_t i = 0; i < player_peers; ++i) peers[i].channel.set_receive_buffer(receive_memory_.get() + cap * i, cap);
  return Result::ok;
}

int32_t DesyncStates::index_of(Frame frame) const noexcept {
  for (uint32_t i = 0; i < slot_count_; ++i)
    if (slots_[i].state.frame == frame) return int32_t(i);
  return -1;
}

DesyncStates::Slot* DesyncStates::find(Frame frame) noexcept {
  const int32_t i = index_of(frame);
  return i < 0 ? nullptr : &slots_[i];
}

void DesyncStates::stage(Frame frame, const uint8_t* data, size_t size) noexcept {
  if (!enabled() || data == nullptr) return;
  Slot* slot = find(frame);
  // Recorded: final, its checksum taken from these bytes (sparse saving re-simulates final frames
  // when it moves its save up: same inputs, the state the checksum was taken of stays).
  if (slot != nullptr && (slot->pins > 0 || slot->recorded)) return;
  if (slot == nullptr) {
    // A free slot, else the oldest unpinned one: a peer's report of it had the most time to come.
    for (uint32_t i = 0; i < slot_count_; ++i) {
      Slot& s = slots_[i];
      if (s.pins > 0) continue;
      if (s.state.frame == kNullFrame) {
        slot = &s;
        break;
      }
      if (slot == nullptr || s.age < slot->age) slot = &s;
    }
    if (slot == nullptr) return;  // every slot pinned
  }
  if (size > cap_) {
    // Larger than we send: kept as "no state", so that nothing older is mistaken for it.
    slot->state.frame = kNullFrame;
    slot->recorded = false;
    return;
  }
  std::memcpy(slot->state.data, data, size);
  slot->state.length = size;
  slot->state.frame = frame;
  slot->state.checksum_valid = false;
  slot->recorded = false;
  slot->age = ++clock_;
}

void DesyncStates::record(Frame frame, uint64_t sum, uint64_t digest) noexcept {
  Slot* slot = enabled() ? find(frame) : nullptr;
  if (slot == nullptr || slot->pins > 0) return;
  slot->recorded = true;
  slot->sum = sum;
  slot->digest = digest;
}

void DesyncStates::forget_after(Frame after) noexcept {
  for (uint32_t i = 0; enabled() && i < slot_count_; ++i) {
    Slot& s = slots_[i];
    if (s.pins == 0 && s.state.frame > after) {
      s.state.frame = kNullFrame;
      s.recorded = false;
    }
  }
}

const SavedState* DesyncStates::kept(Frame frame) const noexcept {
  if (!enabled()) return nullptr;
  const int32_t i = index_of(frame);
  return i >= 0 && slots_[i].recorded ? &slots_[i].state : nullptr;
}

void DesyncStates::queue_send(Exchange& x, Frame frame) noexcept {
  if (x.out_count == kPerPeer) return;
  for (uint32_t k = 0; k < x.out_count; ++k)
    if (x.out_frame[k] == frame) return;
  const int32_t i = index_of(frame);
  if (i < 0 || !slots_[i].recorded) return;  // not kept (any more): nothing to send
  x.out_frame[x.out_count] = frame;
  x.out_slot[x.out_count++] = i;
  pin(i);
}

void DesyncStates::on_mismatch(uint32_t peer, Frame frame, uint64_t remote_sum) noexcept {
  if (!enabled() || peer >= player_peers_) return;
  Exchange& x = exchanges_[peer];
  if (x.gone || x.report_count == kPerPeer) return;
  x.report_frame[x.report_count] = frame;
  x.report_sum[x.report_count++] = remote_sum;  // a notice of that frame must agree with it
  // The first desync says it all (a desynced match differs at every later frame too).
  if (x.report_count == 1) queue_send(x, frame);
}

void DesyncStates::on_message(uint32_t peer, const uint8_t* body, size_t size) noexcept {
  if (!enabled() || peer >= player_peers_) return;
  Exchange& x = exchanges_[peer];
  DesyncStateNotice n;
  const bool decoded = decode_desync_notice(body, size, &n);
  bool valid = decoded && !x.gone && x.notice_count < kPerPeer && n.size <= cap_;
  for (uint32_t k = 0; valid && k < x.notice_count; ++k) valid = x.notices[k].frame != n.frame;
  if (!valid) {
    ++refused_;
    // A state larger than we take is counted once, when the channel refuses its blob.
    if (!decoded || n.size <= cap_) ++counts_[peer].unsolicited;
    return;
  }
  const uint32_t k = x.notice_count++;
  x.notices[k] = n;
  x.notice_done[k] = false;
  x.notice_at[k] = now_us_;
  x.notice_slot[k] = index_of(n.frame);
  pin(x.notice_slot[k]);
  // The peer saw a desync at a frame we have not (its report did not reach us, or came later):
  // ours of that frame goes to it too, if our checksum of it really differs.
  const int32_t mine = x.notice_slot[k];
  if (mine >= 0 && slots_[mine].recorded && slots_[mine].sum != n.sum) queue_send(x, n.frame);
}

void DesyncStates::on_channel_event(uint32_t peer, const ChannelEvent& e) noexcept {
  if (!enabled() || peer >= player_peers_ || e.tag != kDesyncStateTag) return;
  Exchange& x = exchanges_[peer];
  switch (e.type) {
    case ChannelEventType::blob_received:
      x.blob_in = true;
      x.blob_in_at = now_us_;
      break;
    case ChannelEventType::blob_sent:
    case ChannelEventType::blob_refused:  // the peer takes no states (off, or ours is too large)
      if (x.sending) {
        x.sending = false;
        x.notice_sent = false;
        unpin(x.out_slot[x.out_next++]);
      }
      break;
    case ChannelEventType::blob_aborted: break;  // the peer went away: forget() follows
    case ChannelEventType::incoming_refused:     // larger than our cap: not a byte stored
      ++counts_[peer].too_large;
      break;
  }
}

void DesyncStates::forget(uint32_t peer) noexcept {
  Exchange& x = exchanges_[peer];
  for (int32_t& slot : x.out_slot) unpin(slot);
  for (int32_t& slot : x.notice_slot) unpin(slot);
  x.sending = false;
  x.blob_in = false;
  x.gone = true;
}

void DesyncStates::reconnect(uint32_t peer) noexcept {
  if (!enabled() || peer >= player_peers_) return;
  forget(peer);
  exchanges_[peer] = Exchange{};
  peers_[peer].channel.set_receive_buffer(receive_memory_.get() + cap_ * peer, cap_);
}

void DesyncStates::try_send(uint32_t peer, RollbackDriver& driver) noexcept {
  Exchange& x = exchanges_[peer];
  Peer& p = peers_[peer];
  if (x.out_next >= x.out_count || x.sending || !p.endpoint.running()) return;
  const Slot& slot = slots_[x.out_slot[x.out_next]];
  if (!x.notice_sent) {
    DesyncStateNotice n;
    n.frame = slot.state.frame;
    n.size = uint32_t(slot.state.length);
    n.sum = slot.sum;
    n.digest = slot.digest;
    uint8_t body[kDesyncNoticeSize];
    const size_t size = encode_desync_notice(n, body);
    if (p.channel.send_message(ChannelStream::desync_states, body, size) != Result::ok) return;  // next poll
    x.notice_sent = true;
  }
  // One blob at a time each way: wait while another transfer uses the channel.
  if (p.channel.sending_blob()) return;
  if (p.channel.send_blob(kDesyncStateTag, slot.state.frame, slot.state.data, slot.state.length) != Result::ok) {
    driver.reporter().log(LogLevel::warning, "desync state of frame %d (%zu bytes) cannot be sent", slot.state.frame,
                          slot.state.length);
    x.notice_sent = false;
    unpin(x.out_slot[x.out_next++]);
    return;
  }
  x.sending = true;
}

void DesyncStates::emit(uint32_t peer, const DesyncStateNotice& n, int32_t mine, const uint8_t* data, size_t size,
                        RollbackDriver& driver) noexcept {
  const GameCallbacks& cb = driver.callbacks();
  Event e = Reporter::make(EventType::desync_states,
                           "both states of a desync frame: ours (`state_local`) and the peer's (`state_remote`)");
  e.player = peers_[peer].players[0];
  e.frame = n.frame;
  e.checksum_remote = n.sum;
  e.state_remote = data;
  e.state_remote_len = size;
  const SavedState remote{const_cast<uint8_t*>(data), size, n.frame, false, 0};
  if (describe_saved_state(cb, remote, &text_remote_)) {
    e.text_remote = text_remote_.c_str();
    e.text_remote_len = text_remote_.size();
  }
  const Slot* slot = mine >= 0 ? &slots_[mine] : nullptr;
  if (slot != nullptr && slot->recorded && slot->state.frame == n.frame) {
    e.checksum_local = slot->sum;
    e.state_local = slot->state.data;
    e.state_local_len = slot->state.length;
    if (describe_saved_state(cb, slot->state, &text_local_)) {
      e.text_local = text_local_.c_str();
      e.text_local_len = text_local_.size();
    }
  }
  driver.reporter().emit(e);
}

void DesyncStates::try_finish(uint32_t peer, RollbackDriver& driver) noexcept {
  Exchange& x = exchanges_[peer];
  Peer& p = peers_[peer];
  if (!x.blob_in) return;
  uint32_t tag = 0;
  Frame frame = kNullFrame;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (!p.channel.received_blob(&tag, &frame, &data, &size) || tag != kDesyncStateTag) {
    x.blob_in = false;
    return;
  }
  int32_t k = -1;
  for (uint32_t i = 0; i < x.notice_count; ++i)
    if (!x.notice_done[i] && x.notices[i].frame == frame) k = int32_t(i);
  // Its notice may be on its way (a blob may overtake it), for a while; one larger than we take
  // has none (such a notice is refused), though the channel took it (a buffer lent for a rejoin).
  if (k < 0 && x.notice_count < kPerPeer && !x.gone && size <= cap_ &&
      now_us_ - x.blob_in_at < kDesyncNoticeTimeoutUs)
    return;
  x.blob_in = false;
  bool genuine = k >= 0;
  if (genuine) {
    const DesyncStateNotice& n = x.notices[k];
    x.notice_done[k] = true;
    // The bytes must be the state the peer compared: the checksum it announces, and the one it
    // reported in the checksum exchange when that reached us.
    genuine = size == n.size && desync_sum(state_checksum(driver.callbacks(), frame, data, size), n.digest) == n.sum;
    for (uint32_t r = 0; r < x.report_count; ++r)
      if (x.report_frame[r] == frame && x.report_sum[r] != n.sum) genuine = false;
  }
  // A state whose checksum is our own of that frame is no desync (a forged notice in our name
  // made the peer answer it): nothing to diff, not handed to the game.
  const int32_t mine = k >= 0 ? x.notice_slot[k] : -1;
  const bool same_as_ours = genuine && mine >= 0 && slots_[mine].recorded && slots_[mine].state.frame == frame &&
                            slots_[mine].sum == x.notices[k].sum;
  if (same_as_ours) {
    ++refused_;
    ++counts_[peer].unsolicited;
    driver.reporter().log(LogLevel::warning, "player %d: its desync state of frame %d equals ours: dropped",
                          int(p.players[0]), frame);
  } else if (genuine) {
    ++received_;
    ++counts_[peer].received;
    emit(peer, x.notices[k], x.notice_slot[k], data, size, driver);
  } else {
    ++refused_;
    ++(k >= 0 ? counts_[peer].mismatch : counts_[peer].unsolicited);
    driver.reporter().log(LogLevel::warning,
                          k >= 0 ? "player %d: its desync state of frame %d does not match the checksum it reported: dropped"
                                 : "player %d: its desync state of frame %d came without a notice: dropped",
                          int(p.players[0]), frame);
  }
  p.channel.release_blob();
  if (k >= 0) unpin(x.notice_slot[k]);
}

void DesyncStates::poll(RollbackDriver& driver, uint64_t now_us) noexcept {
  if (!enabled()) return;
  now_us_ = now_us;
  for (uint32_t i = 0; i < player_peers_; ++i) {
    if (peers_[i].dropped) {
      if (!exchanges_[i].gone) forget(i);
      continue;
    }
    try_send(i, driver);
    try_finish(i, driver);
    expire(i, driver);
  }
}

// A peer's notices whose state has not started arriving for kDesyncNoticeTimeoutUs are
// forgotten (their slots unpinned, their places free for a real one): one that announces and
// never sends cannot hold our slots, or its own exchange, for good. While a blob comes in on
// that channel (ours, or another transfer it waits behind), they wait.
void DesyncStates::expire(uint32_t peer, RollbackDriver& driver) noexcept {
  Exchange& x = exchanges_[peer];
  const bool arriving = peers_[peer].channel.receiving_blob();
  for (uint32_t k = 0; k < x.notice_count;) {
    if (x.notice_done[k]) {
      ++k;
      continue;
    }
    if (arriving) x.notice_at[k] = now_us_;
    if (now_us_ - x.notice_at[k] < kDesyncNoticeTimeoutUs) {
      ++k;
      continue;
    }
    driver.reporter().log(LogLevel::warning, "player %d: its desync state of frame %d never came: forgotten",
                          int(peers_[peer].players[0]), x.notices[k].frame);
    ++refused_;
    ++counts_[peer].notices_expired;
    unpin(x.notice_slot[k]);
    for (uint32_t j = k; j + 1 < x.notice_count; ++j) {
      x.notices[j] = x.notices[j + 1];
      x.notice_slot[j] = x.notice_slot[j + 1];
      x.notice_done[j] = x.notice_done[j + 1];
      x.notice_at[j] = x.notice_at[j + 1];
    }
    --x.notice_count;
    x.notice_slot[x.notice_count] = -1;
  }
}

}  // namespace retcon::detail
