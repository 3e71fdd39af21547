#include "session/decision_exchange.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/report_throttle.h"
#include "net/byte_io.h"

namespace retcon::detail {

size_t encode_decision(uint8_t* out, size_t capacity, PlayerIndex sender, Frame frame, const uint8_t* bytes,
                       size_t size) noexcept {
  ByteWriter w(out, capacity);
  w.u8(kDecisionKind);
  w.u8(uint8_t(sender));
  w.i32(frame);
  w.bytes(bytes, size);
  return w.overflowed() ? 0 : w.size();
}

bool decode_decision(const uint8_t* body, size_t size, PlayerIndex* sender, Frame* frame, const uint8_t** bytes,
                     size_t* length) noexcept {
  if (size <= kDecisionHeaderSize || size > kDecisionHeaderSize + kMaxDecisionSize) return false;
  ByteReader r(body, size);
  if (r.u8() != kDecisionKind) return false;
  *sender = PlayerIndex(r.u8());
  *frame = r.i32();
  *bytes = body + kDecisionHeaderSize;
  *length = size - kDecisionHeaderSize;
  return !r.failed() && *sender < kMaxPlayers && *frame >= 0;
}

Result DecisionExchange::init(RollbackDriver& driver, int32_t retention, uint32_t per_sender) {
  driver_ = &driver;
  retention_ = retention;
  if (Result r = queue_.init(per_sender); r != Result::ok) return r;
  queue_.set_filter(DecisionQueue::Filter{this, &DecisionExchange::applies});
  driver.set_decision_source(DecisionSource{&queue_, [](void* q, Frame f, const Decision** out) {
                                              return static_cast<DecisionQueue*>(q)->for_frame(f, out);
                                            },
                                            queue_.queued()});
  return Result::ok;
}

bool DecisionExchange::applies(void* self, PlayerIndex sender, Frame frame) {
  const RollbackDriver& d = *static_cast<DecisionExchange*>(self)->driver_;
  if (uint32_t(sender) >= d.num_players()) return false;
  // Not after its cut, nor inside a rejoin's gap: its old machine's decisions for the frames it
  // was away apply nowhere (the rejoining machine never has them).
  return !d.absent(sender, frame);
}

Frame DecisionExchange::earliest_frame(uint64_t rtt_us, uint64_t jitter_us, uint64_t frame_us) const noexcept {
  // The next frame whose local input is not taken yet: its input has not left.
  Frame next = driver_->frame();
  for (uint32_t p = 0; p < driver_->num_players(); ++p)
    if (driver_->is_local(PlayerIndex(p))) next = std::max(next, driver_->last_confirmed(PlayerIndex(p)) + 1);
  const uint64_t margin_us = rtt_us + 2 * jitter_us + frame_us;
  return next + Frame(frame_us ? (margin_us + frame_us - 1) / frame_us : 0);
}

Result DecisionExchange::send(PlayerIndex me, Frame frame, const uint8_t* bytes, size_t size, Peer* peers,
                              uint32_t player_peers, Frame earliest_frame) noexcept {
  if (bytes == nullptr || size == 0 || size > kMaxDecisionSize) return Result::invalid_argument;
  if (frame < earliest_frame || frame > driver_->frame() + kMaxDecisionLead) return Result::input_out_of_window;
  Own* slot = nullptr;
  for (Own& o : own_)
    if (!o.active) {
      slot = &o;
      break;
    }
  if (slot == nullptr) return Result::prediction_limit;
  for (uint32_t i = 0; i < player_peers; ++i)
    if (!peers[i].dropped && peers[i].channel.messages_free() == 0) return Result::prediction_limit;
  if (Result r = queue_.insert(me, frame, bytes, size); r != Result::ok) return Result::prediction_limit;
  uint8_t body[kMaxChannelMessage];
  const size_t n = encode_decision(body, sizeof body, me, frame, bytes, size);
  *slot = Own{};
  slot->active = true;
  ++own_active_;
  slot->frame = frame;
  for (uint32_t i = 0; i < player_peers && i < uint32_t(kMaxPlayers); ++i) {
    Peer& peer = peers[i];
    if (peer.dropped) continue;
    slot->seq[i] = peer.channel.next_message_seq();
    slot->sent_to[i] = peer.channel.send_message(ChannelStream::decisions, body, n) == Result::ok;
  }
  ++stats_.sent;
  return Result::ok;
}

bool DecisionExchange::resend_own(uint32_t i, Peer& peer, PlayerIndex me) noexcept {
  if (i >= uint32_t(kMaxPlayers)) return false;
  for (Own& o : own_) o.sent_to[i] = false;
  bool all = true;
  for (uint32_t k = 0; k < queue_.size(); ++k) {
    const DecisionQueue::Entry& e = queue_.at(k);
    if (e.sender != me) continue;
    uint8_t body[kMaxChannelMessage];
    const size_t n = encode_decision(body, sizeof body, me, e.frame, e.bytes, e.size);
    const uint32_t seq = peer.channel.next_message_seq();
    if (peer.channel.send_message(ChannelStream::decisions, body, n) != Result::ok) {
      all = false;
      continue;
    }
    for (Own& o : own_)
      if (o.active && o.frame == e.frame) {
        o.sent_to[i] = true;
        o.seq[i] = seq;  // the last of that frame: acknowledged through it, all of them are
      }
  }
  return all;
}

Frame DecisionExchange::hold_from_active(const Peer* peers, uint32_t player_peers, uint32_t i) const noexcept {
  if (i >= player_peers || i >= uint32_t(kMaxPlayers)) return INT32_MAX;
  const Peer& peer = peers[i];
  if (peer.dropped || own_active_ == 0) return INT32_MAX;
  Frame hold = INT32_MAX;
  for (const Own& o : own_)
    if (o.active && o.frame < hold && o.sent_to[i] && !peer.channel.acknowledged_through(o.seq[i])) hold = o.frame;
  return hold;
}

void DecisionExchange::on_message(const Peer& peer, bool from_host, const uint8_t* body, size_t size,
                                  Frame known) noexcept {
  PlayerIndex sender;
  Frame frame;
  const uint8_t* bytes;
  size_t length;
  if (!decode_decision(body, size, &sender, &frame, &bytes, &length) || uint32_t(sender) >= driver_->num_players()) {
    ++stats_.dropped;
    return;
  }
  if (!from_host) {
    bool owns = false;
    for (uint32_t k = 0; k < peer.player_count; ++k) owns = owns || peer.players[k] == sender;
    if (!owns) {
      ++stats_.dropped;
      return;
    }
  }
  if (decision_frame_too_far(frame, known)) {
    ++stats_.dropped;
    count_too_far(sender, frame, known, 1);
    return;
  }
  // A frame already final here cannot take it. An honest sender never does that (it holds its
  // input of the frame until we acknowledged), except one cut before the frame, whose decision
  // applies nowhere anyway; queued, it is still numbered like on the other machines.
  const bool final_here = frame <= driver_->confirmed_frame() || frame < queue_.retired_before();
  if (final_here || queue_.insert(sender, frame, bytes, length) != Result::ok) {
    ++stats_.dropped;
    return;
  }
  ++stats_.received;
  driver_->mark_incorrect(frame);  // simulated already without it: roll back to it
}

void DecisionExchange::drop_too_far(Frame known) noexcept {
  if (known == kNullFrame) return;
  const int64_t last = int64_t(known < 0 ? 0 : known) + kMaxReceivedDecisionLead;
  if (queue_.size() == 0 || queue_.at(queue_.size() - 1).frame <= last) return;  // sorted by frame
  const DecisionQueue::Entry& first = queue_.at(queue_.size() - 1);
  const PlayerIndex sender = first.sender;
  const Frame frame = first.frame;
  const uint32_t n = queue_.drop_after(Frame(last));
  stats_.dropped += n;
  count_too_far(sender, frame, known, n);
}

// Counted, and told on the first drop and then on every power of two (a peer that keeps
// sending them cannot flood the log).
void DecisionExchange::count_too_far(PlayerIndex sender, Frame frame, Frame known, uint64_t n) noexcept {
  const uint64_t before = stats_.too_far;
  stats_.too_far += n;
  if (!detail::reached_power_of_two(before, stats_.too_far)) return;
  driver_->reporter().log(LogLevel::warning,
                          "decision of player %d for frame %d refused: more than %d frames past frame %d, the "
                          "newest known of the match (%llu refused so far)",
                          int(sender), frame, int(kMaxReceivedDecisionLead), known < 0 ? 0 : known,
                          static_cast<unsigned long long>(stats_.too_far));
}

void DecisionExchange::forward(Peer* spectators, uint32_t count) noexcept {
  for (uint32_t i = 0; i < count && i < uint32_t(kMaxSpectators); ++i) {
    Peer& s = spectators[i];
    Forward& fw = forward_[i];
    if (s.dropped) continue;
    while (fw.count > 0 && s.channel.acknowledged_through(fw.sent[fw.head].seq)) {
      fw.head = (fw.head + 1) % kChannelMessageWindow;
      --fw.count;
    }
    const uint32_t bit = 1u << i;
    for (uint32_t k = 0; k < queue_.size(); ++k) {
      DecisionQueue::Entry& e = queue_.at(k);
      // A decision that does not apply now never will (cuts only move earlier).
      if ((e.forwarded & bit) != 0 || !queue_.applies(e)) continue;
      // A few messages of the window stay free for the state transfer's answers (a spectator
      // that has not come yet acknowledges nothing, and its "accepted" must still go out).
      if (fw.count == kChannelMessageWindow || s.channel.messages_free() <= kReservedForTransfer) break;
      uint8_t body[kMaxChannelMessage];
      const size_t size = encode_decision(body, sizeof body, e.sender, e.frame, e.bytes, e.size);
      const uint32_t seq = s.channel.next_message_seq();
      if (s.channel.send_message(ChannelStream::decisions, body, size) != Result::ok) break;
      e.forwarded |= bit;
      fw.sent[(fw.head + fw.count) % kChannelMessageWindow] = Forward::Sent{e.frame, seq};
      ++fw.count;
      ++stats_.forwarded;
    }
  }
}

bool DecisionExchange::ready_to_stream(uint32_t i, const Peer& spectator, Frame f) const noexcept {
  if (spectator.dropped || i >= uint32_t(kMaxSpectators)) return true;
  const Forward& fw = forward_[i];
  for (uint32_t k = 0; k < fw.count; ++k) {
    const Forward::Sent& sent = fw.sent[(fw.head + k) % kChannelMessageWindow];
    if (sent.frame <= f && !spectator.channel.acknowledged_through(sent.seq)) return false;
  }
  for (uint32_t k = 0; k < queue_.size(); ++k) {
    const DecisionQueue::Entry& e = queue_.at(k);
    if (e.frame > f) break;
    if ((e.forwarded & (1u << i)) == 0 && queue_.applies(e)) return false;
  }
  return true;
}

void DecisionExchange::forget_own_before(Frame confirmed) noexcept {
  // Own decisions stay in flight until every receiver retired them too: a receiver's confirmed
  // frame trails ours by at most its window and input delay (its window in use is at most our
  // configured one, see P2PSessionImpl::lower_window).
  const Frame gone = confirmed - retention_ - driver_->max_prediction() - kMaxInputDelay;
  for (uint32_t k = 0; k < kMaxDecisionsInFlight && own_active_ != 0; ++k) {
    Own& o = own_[k];
    if (o.active && o.frame < gone) {
      o.active = false;
      --own_active_;
    }
  }
}

}  // namespace retcon::detail
