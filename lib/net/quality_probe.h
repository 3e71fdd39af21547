// The round-trip measurement behind quality reports (protocol 7). A report carries a one-byte
// id instead of our clock; we remember when each of the last few went out. The peer answers with
// the id and how long it held the report before its reply went out (a reply waits for an inputs
// datagram to ride on, up to a few frames), so the round trip is the time since the report went
// out minus that hold: the network's, not the peer's batching.
#pragma once

#include <cstdint>

#include "net/wire.h"

namespace retcon::detail {

class QualityProbe {
 public:
  void reset() noexcept {
    next_id_ = 0;
    for (Sent& s : sent_) s = Sent{};
    reply_due_ = false;
  }

  // --- our reports. The id of the report going out now (remembered with its time).
  uint8_t report_sent(uint64_t now_us) noexcept {
    const uint8_t id = next_id_++;
    sent_[id % kKept] = Sent{now_us, id, true};
    return id;
  }
  // A reply to one of our reports: the round trip in `*rtt_us`. False (a bogus reply) for an id
  // we did not send among the last kKept reports, a duplicate answer, or a hold longer than the
  // time since the report went out.
  bool on_reply(const QualityReply& reply, uint64_t now_us, uint64_t* rtt_us) noexcept {
    Sent& s = sent_[reply.id % kKept];
    if (!s.valid || s.id != reply.id || now_us < s.at_us || now_us - s.at_us < reply.hold_us) return false;
    *rtt_us = now_us - s.at_us - reply.hold_us;
    s.valid = false;  // one sample per report
    return true;
  }

  // --- the peer's reports: the newest one arrived is answered (an older one unanswered is
  // superseded: its sample would be older).
  void on_report(uint8_t id, uint64_t now_us) noexcept {
    reply_due_ = true;
    reply_id_ = id;
    report_arrived_us_ = now_us;
  }
  bool reply_due() const noexcept { return reply_due_; }
  uint64_t reply_due_since() const noexcept { return report_arrived_us_; }
  // The reply going out now; no reply is due afterwards.
  QualityReply take_reply(uint64_t now_us) noexcept {
    reply_due_ = false;
    uint64_t hold = now_us > report_arrived_us_ ? now_us - report_arrived_us_ : 0;
    if (hold > kMaxReplyHoldUs) hold = kMaxReplyHoldUs;
    return QualityReply{reply_id_, uint32_t(hold)};
  }

 private:
  // Reports go out every 500 ms: 8 of them cover round trips of up to 4 s.
  static constexpr unsigned kKept = 8;
  struct Sent {
    uint64_t at_us = 0;
    uint8_t id = 0;
    bool valid = false;
  };
  Sent sent_[kKept];
  uint8_t next_id_ = 0;
  bool reply_due_ = false;
  uint8_t reply_id_ = 0;
  uint64_t report_arrived_us_ = 0;
};

}  // namespace retcon::detail
