// The spectator's side of state transfer: see snapshot_client.h.
#include "session/snapshot_client.h"

#include <new>
#include <cstdio>

#include "session/state_transfer.h"

namespace retcon::detail {

Result SnapshotClient::init(RollbackDriver& driver, bool enabled, size_t max_state_size, Peer& host) {
  phase_ = Phase::off;
  if (!enabled) return Result::ok;
  if (Result r = driver.commit_memory(max_state_size, "the state-transfer buffer"); r != Result::ok) return r;
  buffer_.reset(new (std::nothrow) uint8_t[max_state_size]);
  if (!buffer_) return Result::out_of_memory;
  capacity_ = max_state_size;
  host.channel.set_receive_buffer(buffer_.get(), capacity_);
  host.endpoint.pause_receive();
  phase_ = Phase::asking;
  return Result::ok;
}

void SnapshotClient::ask(Peer& host) noexcept {
  TransferMessage m;
  m.kind = TransferKind::request;
  m.purpose = TransferPurpose::spectate;
  uint8_t body[kMaxTransferMessage];
  const size_t n = encode_transfer(m, body);
  if (host.channel.send_message(ChannelStream::state_transfer, body, n) != Result::ok) return;  // next poll
  asked_ = true;
  ++requests_;
}

void SnapshotClient::poll(RollbackDriver& driver, Peer& host, uint64_t now_us) noexcept {
  if (phase_ == Phase::asking && !asked_) ask(host);
  if (phase_ == Phase::asking && asked_) {
    if (delivered_at_ == 0 && host.channel.messages_unacknowledged() == 0) delivered_at_ = now_us;
    if (delivered_at_ != 0 && now_us - delivered_at_ >= kSilentHostUs) {
      // The host got the request and said nothing: it does not know stream 1 (a retcon before
      // state transfer). It streams the match from frame 0, never acknowledged by us.
      phase_ = Phase::from_start;
      frame_ = 0;
      host.endpoint.restart_incoming_at(0);
      driver.reporter().log(LogLevel::info, "the host does not answer state requests: watching from frame 0");
    }
  }
  ChannelEvent e;
  while (host.channel.pop_event(&e)) {
    if (e.type == ChannelEventType::blob_received) {
      // The state may overtake the offer (they travel separately): it then waits in the
      // channel until the offer comes.
      take_state(driver, host);
    } else if (e.type == ChannelEventType::blob_aborted && phase_ == Phase::awaiting) {
      // It stopped arriving (the host went away, or nothing came for the channel's stall
      // timeout). Asking again would mix the host's old and new input streams: given up.
      driver.reporter().log(LogLevel::error, "the host's state of frame %d stopped arriving", frame_);
      phase_ = Phase::failed;
      failure_news_ = true;
    }
  }
}

void SnapshotClient::on_message(RollbackDriver& driver, Peer& host, const uint8_t* body, size_t size) noexcept {
  TransferMessage m;
  const bool answering = (phase_ == Phase::asking && asked_) || phase_ == Phase::accepted;
  if (!decode_transfer(body, size, &m) || m.kind == TransferKind::request || !answering ||
      (m.kind == TransferKind::accepted && phase_ != Phase::asking)) {
    ++malformed_;
    return;
  }
  if (m.kind == TransferKind::accepted) {
    phase_ = Phase::accepted;
    return;
  }
  if (m.kind == TransferKind::declined) {
    phase_ = Phase::from_start;
    frame_ = 0;
    host.endpoint.restart_incoming_at(0);
    driver.reporter().log(LogLevel::info, m.reason == DeclineReason::not_enabled
                                              ? "the host has no state transfer: watching from frame 0"
                                              : "the match has not begun: watching from frame 0");
    return;
  }
  if (m.size > capacity_) {
    phase_ = Phase::failed;
    failure_news_ = true;
    driver.reporter().log(LogLevel::error, "the host's state has %u bytes, more than max_state_size (%zu)", m.size,
                          capacity_);
    return;
  }
  phase_ = Phase::awaiting;
  frame_ = m.frame;
  // The host's stream now starts at the state's frame: its inputs are buffered meanwhile.
  host.endpoint.restart_incoming_at(m.frame);
  take_state(driver, host);  // it may have arrived first
}

// Loads the received state once it is the one offered; any other blob is dropped. False while
// none is held, or it came before the offer (it waits for it).
bool SnapshotClient::take_state(RollbackDriver& driver, Peer& host) noexcept {
  uint32_t tag = 0;
  Frame frame = kNullFrame;
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (!host.channel.received_blob(&tag, &frame, &data, &size)) return false;
  if (tag == uint32_t(TransferPurpose::spectate) && (phase_ == Phase::asking || phase_ == Phase::accepted))
    return false;  // before its offer
  if (phase_ == Phase::awaiting && tag == uint32_t(TransferPurpose::spectate) && frame == frame_ &&
      driver.start_from(frame, data, size) == Result::ok) {
    phase_ = Phase::loaded;
    driver.reporter().log(LogLevel::info, "state of frame %d (%zu bytes) loaded from the host", frame, size);
  } else {
    ++malformed_;  // not the state we were offered
  }
  host.channel.release_blob();
  return true;
}

}  // namespace retcon::detail
