// Answers to a rejoin request the session turns down (docs/PROTOCOL.md "Rejoin"): a handshake
// reply to a stranger's request, so the rejoining machine learns at once why it cannot come back
// instead of retrying until its handshake timeout (10 s by default):
//   - its session shape differs: the reply carries ours, and its endpoint rejects it naming the
//     field (handshake_rejected), as a shape-rejected peer's requests are answered in a normal
//     handshake;
//   - our game refused it (answer_rejoin(player, false)): the reply has the `refused` flag.
// Strangers are untrusted, so the reply
//   - echoes the request's challenge: only a machine receiving at the requester's address can read
//     it, and the requester believes a reply only when it echoes its current challenge, so a blind
//     attacker cannot forge a refusal (with a match key the reply is sealed too);
//   - is never larger than the request (same body; the caller checks), so it amplifies nothing;
//   - goes at most once per kGapUs to an address (a rejoiner retries every 200 ms) and at most
//     kPerTick times per tick in all, whatever arrives.
// Fixed-size state, nothing allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/datagram_auth.h"
#include "net/random.h"
#include "net/wire.h"
#include "retcon/transport.h"

namespace retcon::detail {

class StrangerReplies {
 public:
  static constexpr uint64_t kGapUs = 100000;
  static constexpr uint32_t kPerTick = 4;
  static constexpr size_t kAddresses = 16;

  // `seed` 0: from the operating system's entropy (as an endpoint's).
  void init(uint64_t seed) noexcept {
    rng_.reseed(seed != 0 ? seed : os_entropy_u64());
    do nonce_ = rng_.next_u32();
    while (nonce_ == 0);
  }

  // A reply (`hello`, its challenge the request's) to `to`, whose request was `request_length`
  // bytes; false when rate-limited, larger than the request, or not sent.
  bool send(DatagramAuth& auth, Transport& transport, const PeerAddress& to, const Handshake& hello,
            size_t request_length, uint64_t now_us) noexcept {
    if (!take(to, now_us)) return false;
    Message m;
    m.header.type = MessageType::handshake_reply;
    m.header.nonce = nonce_;
    m.header.sequence = sequence_++;
    m.handshake = hello;
    size_t size = encode_message(m, datagram_, auth.plain_capacity(MessageType::handshake_reply));
    if (size == 0) return false;
    size = auth.seal(datagram_, size, sizeof datagram_, rng_, m.header.sequence);
    if (size == 0 || size > request_length) return false;
    ++sent_;
    return transport.send(to, datagram_, size) == Result::ok;
  }

  uint64_t sent() const noexcept { return sent_; }

 private:
  // The rate limits: per address (a small table, the oldest entry replaced) and per tick.
  bool take(const PeerAddress& to, uint64_t now_us) noexcept {
    if (now_us != tick_at_) {
      tick_at_ = now_us;
      tick_left_ = kPerTick;
    }
    if (tick_left_ == 0) return false;
    Entry* slot = &entries_[0];
    for (Entry& e : entries_) {
      if (e.used && e.to == to) {
        slot = &e;
        break;
      }
      if (!e.used || (slot->used && e.at < slot->at)) slot = &e;
    }
    if (slot->used && slot->to == to && now_us < slot->at + kGapUs) return false;
    *slot = Entry{to, now_us, true};
    --tick_left_;
    return true;
  }

  struct Entry {
    PeerAddress to;
    uint64_t at = 0;
    bool used = false;
  };
  Entry entries_[kAddresses] = {};
  uint64_t tick_at_ = UINT64_MAX;
  uint32_t tick_left_ = 0;
  Xoshiro256 rng_{1};
  uint32_t nonce_ = 1;
  uint32_t sequence_ = 0;
  uint64_t sent_ = 0;
  uint8_t datagram_[kMaxDatagramSize] = {};
};

}  // namespace retcon::detail
