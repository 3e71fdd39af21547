// An insider on a test match's connections (support/match_harness.h): it taps every datagram
// and forges verified channel messages in a machine's name (tests of what a session refuses).
#pragma once

#include <cstring>
#include <utility>
#include <vector>

#include "core/checksum.h"
#include "net/datagram_auth.h"
#include "net/reliable_channel.h"
#include "net/wire.h"
#include "support/match_harness.h"

namespace retcon::test {

// An insider on every connection of a match without a key: it taps every datagram (passing it
// on), learns each connection's nonces, datagram sequence numbers and channel message numbers,
// and sends well-formed channel messages verified like the real sender's (the checksum keyed
// with both nonces, the next sequence number: the real datagram of that number becomes a loss).
class Insider {
 public:
  explicit Insider(Match& match) : match_(match) {
    // Machine 0's datagrams reach the others within the tick (it runs first, its simulator
    // delivers at set_time): they are tapped right after its poll, before the others poll.
    match_.before_input = [this](uint32_t m) {
      if (m != 0) return;
      for (uint32_t to = 1; to < match_.size(); ++to) tap(to);
    };
  }
  // At the start of a tick: what waits for every machine.
  void tap_all() {
    for (uint32_t m = 0; m < match_.size(); ++m) tap(m);
  }
  // A channel message on `stream` from `sender` to `to`; false before both directions were seen.
  bool forge(uint32_t sender, uint32_t to, uint8_t stream, const uint8_t* payload, size_t n) {
    Link& l = link_[sender][to];
    if (!l.seen || !link_[to][sender].seen || n > detail::kMaxChannelMessage) return false;
    uint8_t body[1 + 4 + 1 + detail::kMaxChannelMessage];
    body[0] = 1;  // a message
    std::memcpy(body + 1, &l.channel_next, 4);
    body[5] = stream;
    std::memcpy(body + 6, payload, n);
    ++l.channel_next;
    return send_body(sender, to, body, 6 + n);
  }
  // A whole blob of at most one chunk (kChannelChunkSize bytes), tagged `tag`, from `sender` to
  // `to` (transfer `id`, which the real sender is not using); false as forge().
  bool forge_blob(uint32_t sender, uint32_t to, uint32_t id, uint32_t tag, Frame frame, const uint8_t* data, size_t n) {
    if (!link_[sender][to].seen || !link_[to][sender].seen || n == 0 || n > detail::kChannelChunkSize) return false;
    uint8_t body[1 + 4 + 4 + 8 + 4 + 4 + 4 + detail::kChannelChunkSize];
    const uint32_t total = uint32_t(n), index = 0;
    const uint64_t hash = detail::xxh3_64(data, n);
    body[0] = 2;  // a chunk
    std::memcpy(body + 1, &id, 4);
    std::memcpy(body + 5, &total, 4);
    std::memcpy(body + 9, &hash, 8);
    std::memcpy(body + 17, &tag, 4);
    std::memcpy(body + 21, &frame, 4);
    std::memcpy(body + 25, &index, 4);
    std::memcpy(body + 29, data, n);
    return send_body(sender, to, body, 29 + n);
  }

 private:
  // A channel body sealed as `sender`'s next datagram to `to`.
  bool send_body(uint32_t sender, uint32_t to, const uint8_t* body, size_t n) {
    Link& l = link_[sender][to];
    detail::Message m;
    m.header.type = detail::MessageType::channel_data;
    m.header.nonce = l.nonce;
    m.header.sequence = ++l.sequence;
    m.channel_body = body;
    m.channel_size = n;
    uint8_t d[detail::kMaxDatagramSize];
    const size_t size = detail::encode_message(m, d, sizeof d);
    if (size == 0) return false;
    detail::seal_datagram(d, size, detail::connection_checksum_key(l.nonce, link_[to][sender].nonce), m.header.sequence);
    match_.machine(sender).wire->send(match_.machine(to).wire->address(), d, size);
    return true;
  }
  struct Link {
    bool seen = false;
    uint32_t nonce = 0, sequence = 0, channel_next = 0;
  };
  void tap(uint32_t to) {
    InMemoryTransport& wire = *match_.machine(to).wire;
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> waiting;
    PeerAddress from;
    uint8_t buffer[detail::kMaxDatagramSize];
    size_t length = 0;
    while (wire.receive(&from, buffer, sizeof buffer, &length))
      for (uint32_t m = 0; m < match_.size(); ++m)
        if (match_.machine(m).wire->address() == from) waiting.push_back({m, std::vector<uint8_t>(buffer, buffer + length)});
    for (const auto& [sender, bytes] : waiting) {
      Link& l = link_[sender][to];
      const bool handshake = bytes.size() >= 4 && detail::is_handshake(detail::MessageType(bytes[3]));
      if (handshake && bytes.size() >= detail::kHandshakeHeaderSize) {
        // Nonces travel in handshakes only; so does the full sequence.
        uint32_t q = 0;
        std::memcpy(&l.nonce, bytes.data() + 4, 4);
        std::memcpy(&q, bytes.data() + 8, 4);
        l.sequence = std::max(l.sequence, q);
      } else if (!handshake && bytes.size() >= detail::kDataHeaderSize && l.nonce != 0) {
        uint16_t low = 0;
        std::memcpy(&low, bytes.data() + 4, 2);
        const uint32_t q = detail::widen_sequence(low, l.sequence);
        if (!l.seen || q > l.sequence) l.sequence = q;
        l.seen = true;
        // A channel message of the real sender: its number, so ours come after it.
        if (bytes[3] == uint8_t(detail::MessageType::channel_data) && bytes.size() >= detail::kDataHeaderSize + 6 &&
            bytes[detail::kDataHeaderSize] == 1) {
          uint32_t seq = 0;
          std::memcpy(&seq, bytes.data() + detail::kDataHeaderSize + 1, 4);
          if (seq + 1 > l.channel_next) l.channel_next = seq + 1;
        }
      }
      match_.machine(sender).wire->send(wire.address(), bytes.data(), bytes.size());
    }
  }
  Match& match_;
  Link link_[kMaxPlayers + kMaxSpectators][kMaxPlayers + kMaxSpectators];
};

}  // namespace retcon::test
