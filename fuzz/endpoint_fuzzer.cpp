// Fuzz target 2: one protocol Endpoint (lib/net/endpoint.h) under attack.
//
// Endpoint A is the target. Its peer B is a real Endpoint, so the fuzzer can reach every state
// (a handshake needs the peer to echo random challenges it could never guess). Each input byte
// picks an operation: poll either side, deliver a datagram either side sent (in any order, kept
// for a duplicate or not), deliver a mutated copy, raw bytes, or a message forged with B's real
// nonce and fuzzed fields to A (sealed as an insider would: the connection's checksum key, or the
// match key's AEAD, so it reaches the message handlers), step the clock, queue inputs, pop inputs/events/checksums, set
// connect statuses, disconnect, and drive each side's reliable channel (messages on two streams,
// blobs; lib/net/reliable_channel.h) through its endpoint. After every operation the invariants
// below must hold:
//   - stats add up: datagrams_received / bytes_received equal what was handed in, drops never
//     exceed receptions, the send queue length is last_sent - last_acked and within its bound;
//   - frames move only forward; inputs pop in order, each once; acks never exceed what the
//     acknowledging side received;
//   - integrity: while A has only seen B's genuine datagrams, every input A pops equals the one
//     B queued for that frame, and every channel message and blob it receives is the next one B
//     sent, whole; B only ever sees A's genuine datagrams, so it must always hold.
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "fuzz_input.h"
#include "net/datagram_auth.h"
#include "net/endpoint.h"
#include "net/reliable_channel.h"

using namespace retcon;
using namespace retcon::detail;
using retcon::fuzz::FuzzInput;

namespace {

constexpr size_t kMaxHeld = 64;          // datagrams in flight per direction
constexpr Frame kMaxFrames = 4096;       // inputs queued per side
constexpr int kMaxOperations = 4000;

struct Capture final : Transport {
  std::deque<std::vector<uint8_t>> held;
  bool fail_sends = false;
  Result send(const PeerAddress&, const uint8_t* data, size_t length) override {
    FUZZ_CHECK(data != nullptr && length >= kMinHeaderSize && length <= kMaxDatagramSize);
    if (fail_sends) return Result::transport_error;
    if (held.size() == kMaxHeld) held.pop_front();  // lost on the way
    held.emplace_back(data, data + length);
    return Result::ok;
  }
  bool receive(PeerAddress*, uint8_t*, size_t, size_t*) override { return false; }
};

constexpr size_t kMaxFuzzBlob = 8 * 1024;

// A side's reliable channel, fed by its endpoint and sending through it.
struct FuzzChannel final : ChannelSink, ChannelOutput {
  ReliableChannel channel;
  Endpoint* endpoint = nullptr;
  Transport* transport = nullptr;
  PeerAddress to;
  // One byte more than the channel's max_blob_size: channel_op (case 1) also offers a blob of
  // kMaxFuzzBlob + 1 bytes, which send_blob must refuse (invalid_argument).
  std::vector<uint8_t> out_blob = std::vector<uint8_t>(kMaxFuzzBlob + 1);
  std::vector<uint8_t> in_blob = std::vector<uint8_t>(kMaxFuzzBlob);
  uint32_t messages_sent = 0, messages_received = 0, blobs_sent = 0;
  void on_channel(MessageType type, const uint8_t* body, size_t size, uint64_t now_us) override {
    FUZZ_CHECK(body != nullptr && size > 0 && size <= kMaxDatagramSize);
    channel.on_datagram(type, body, size, now_us);
  }
  bool send(MessageType type, const uint8_t* body, size_t size) override {
    const Result r = endpoint->send_channel(type, body, size, *transport, to);
    FUZZ_CHECK(r == Result::ok || r == Result::transport_error || r == Result::wrong_state);
    return r == Result::ok;
  }
};

// Message i: its index in the first 4 bytes, then a pattern; blob k: a pattern of k.
uint8_t message_byte(uint32_t index, size_t i) { return uint8_t(index * 7 + i * 13); }
uint8_t blob_byte(uint32_t tag, size_t i) { return uint8_t(tag * 31 + i * 5 + (i >> 8)); }

struct Side {
  Endpoint endpoint;
  Capture out;
  FuzzChannel channel;
  uint64_t handed = 0, handed_bytes = 0;
  std::vector<uint8_t> sent;  // blobs queued, frame by frame
  Frame popped = kNullFrame;
  Frame last_received = kNullFrame, last_acked = kNullFrame;
  ConnectStatus remote[kMaxPlayers];
  bool was_disconnected = false;
  int synchronized_events = 0;
  uint16_t send_blob = 0, receive_blob = 0;
  uint32_t max_queue = 0;

  void deliver(const uint8_t* data, size_t length, uint64_t now) {
    ++handed;
    handed_bytes += length;
    endpoint.on_datagram(data, length, now);
  }
};

void check(const Side& s, const Side& peer, bool integrity, uint32_t num_players) {
  const EndpointStats st = s.endpoint.stats();
  FUZZ_CHECK(st.datagrams_received == s.handed);
  FUZZ_CHECK(st.bytes_received == s.handed_bytes);
  uint64_t dropped = 0;
  for (uint64_t d : st.dropped) dropped += d;
  FUZZ_CHECK(dropped <= st.datagrams_received);
  FUZZ_CHECK(st.send_failures <= st.datagrams_sent);
  const Endpoint& e = s.endpoint;
  FUZZ_CHECK(e.last_acked_frame() <= e.last_sent_frame());
  FUZZ_CHECK(e.last_acked_frame() >= s.last_acked && e.last_received_frame() >= s.last_received);
  FUZZ_CHECK(st.send_queue_length == uint32_t(e.last_sent_frame() - e.last_acked_frame()));
  FUZZ_CHECK(st.send_queue_length <= s.max_queue);
  if (s.send_blob != 0) FUZZ_CHECK(e.last_sent_frame() == Frame(s.sent.size() / s.send_blob) - 1);
  FUZZ_CHECK(s.popped <= e.last_received_frame());
  if (e.last_received_frame() >= 0) FUZZ_CHECK(e.received_input(e.last_received_frame()) != nullptr);
  FUZZ_CHECK(e.received_input(e.last_received_frame() + 1) == nullptr);
  FUZZ_CHECK(e.received_input(-1) == nullptr);
  // Acknowledgements come from the peer's own datagrams: never beyond what it received.
  if (integrity) {
    FUZZ_CHECK(e.last_acked_frame() <= peer.endpoint.last_received_frame());
    FUZZ_CHECK(e.last_received_frame() <= peer.endpoint.last_sent_frame());
  }
  for (uint32_t p = 0; p < num_players; ++p) {
    const ConnectStatus& now = e.remote_connect_status(PlayerIndex(p));
    // Connected: the last frame only grows. Disconnected: it is the agreed cut, which only
    // moves earlier; and a disconnect is never undone.
    FUZZ_CHECK(now.disconnected || !s.remote[p].disconnected);
    if (!now.disconnected) FUZZ_CHECK(now.last_frame >= s.remote[p].last_frame);
    else if (s.remote[p].disconnected) FUZZ_CHECK(now.last_frame <= s.remote[p].last_frame);
  }
  if (s.was_disconnected) FUZZ_CHECK(e.state() == EndpointState::disconnected);
  FUZZ_CHECK(s.synchronized_events <= 1);
  FUZZ_CHECK(endpoint_state_name(e.state()) != nullptr);
}

void remember(Side& s, uint32_t num_players) {
  s.last_received = s.endpoint.last_received_frame();
  s.last_acked = s.endpoint.last_acked_frame();
  // Bounded by the array as well: GCC 12 at -O3 cannot see that num_players <= kMaxPlayers.
  for (uint32_t p = 0; p < num_players && p < kMaxPlayers; ++p)
    s.remote[p] = s.endpoint.remote_connect_status(PlayerIndex(p));
  s.was_disconnected = s.endpoint.state() == EndpointState::disconnected;
}

void pop_inputs(Side& s, const Side& peer, bool integrity, FuzzInput& in) {
  const int want = 1 + in.u8() % 8;
  for (int i = 0; i < want; ++i) {
    Frame frame;
    const uint8_t* blob;
    if (!s.endpoint.pop_input(&frame, &blob)) return;
    FUZZ_CHECK(frame == s.popped + 1);
    s.popped = frame;
    // Frames beyond (next pop + receive window) are refused, so the next one is always held.
    FUZZ_CHECK(s.receive_blob != 0 && blob != nullptr);
    if (integrity && size_t(frame + 1) * s.receive_blob <= peer.sent.size())
      FUZZ_CHECK(std::memcmp(blob, peer.sent.data() + size_t(frame) * s.receive_blob, s.receive_blob) == 0);
  }
}

void pop_events(Side& s) {
  EndpointEvent ev;
  while (s.endpoint.pop_event(&ev)) {
    if (ev.type == EndpointEventType::synchronized) ++s.synchronized_events;
    if (ev.type == EndpointEventType::synchronizing) FUZZ_CHECK(ev.count >= 0 && ev.count <= ev.total);
  }
  Frame frame;
  uint64_t sum;
  while (s.endpoint.pop_checksum(&frame, &sum)) FUZZ_CHECK(frame >= 0);
}

void queue_input(Side& s, FuzzInput& in) {
  if (s.send_blob == 0) {
    uint8_t dummy = 0;
    const Result r = s.endpoint.send_input(s.endpoint.last_sent_frame() + 1, &dummy);
    FUZZ_CHECK(r == (s.endpoint.state() == EndpointState::disconnected ? Result::wrong_state : Result::invalid_argument));
    return;
  }
  const Frame next = s.endpoint.last_sent_frame() + 1;
  uint8_t blob[kMaxBlobSize];
  // Mostly the previous input with a byte changed (how pads behave), sometimes all new bytes.
  if (next > 0 && !in.flag()) {
    std::memcpy(blob, s.sent.data() + size_t(next - 1) * s.send_blob, s.send_blob);
    blob[in.range(0, s.send_blob - 1u)] ^= in.u8();
  } else {
    in.bytes(blob, s.send_blob);
  }
  if (s.endpoint.state() == EndpointState::disconnected) {
    FUZZ_CHECK(s.endpoint.send_input(next, blob) == Result::wrong_state);
    return;
  }
  switch (in.u8() % 8) {
    case 0: FUZZ_CHECK(s.endpoint.send_input(next + 1, blob) == Result::invalid_argument); return;
    case 1:
      if (next > 0) FUZZ_CHECK(s.endpoint.send_input(next - 1, blob) == Result::invalid_argument);
      return;
    case 2: FUZZ_CHECK(s.endpoint.send_input(next, nullptr) == Result::invalid_argument); return;
    default: break;
  }
  if (next >= kMaxFrames) return;
  const Result r = s.endpoint.send_input(next, blob);
  FUZZ_CHECK(r == Result::ok || r == Result::input_out_of_window);
  if (r == Result::input_out_of_window) {
    FUZZ_CHECK(uint32_t(next - (s.endpoint.last_acked_frame() < 0 ? 0 : s.endpoint.last_acked_frame())) + 1 > s.max_queue / 2);
    return;
  }
  s.sent.insert(s.sent.end(), blob, blob + s.send_blob);
}

// The match key of keyed runs (fixed: the fuzzer explores the protocol, not the key).
const uint8_t kMatchKey[kMatchKeySize] = {0x72, 0x65, 0x74, 0x63, 0x6f, 0x6e, 0x20, 0x66,
                                          0x75, 0x7a, 0x7a, 0x20, 0x6d, 0x61, 0x74, 0x63,
                                          0x68, 0x20, 0x6b, 0x65, 0x79, 0x20, 0x30, 0x31,
                                          0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39};

// A message with B's nonce and fuzzed fields, sealed as B would seal it (an insider knows
// every secret): passes the nonce check and the checksum or AEAD, so it reaches handle().
// `*sequence` is the full sequence it carries (a data message holds its low 16 bits).
std::vector<uint8_t> forge(FuzzInput& in, uint32_t nonce, uint32_t near_sequence, uint32_t* sequence) {
  std::vector<uint8_t> d(kHandshakeHeaderSize);
  d[0] = kMagic0;
  d[1] = kMagic1;
  d[2] = in.u8() < 250 ? kProtocolVersion : in.u8();
  d[3] = uint8_t(1 + in.u8() % 12);  // up to channel_ack, and one unknown type
  const uint32_t seq = in.flag() ? near_sequence + in.u8() : in.u32();
  *sequence = seq;
  const bool handshake = is_handshake(MessageType(d[3]));
  const size_t header = handshake ? kHandshakeHeaderSize : kDataHeaderSize;
  if (handshake) {
    for (int i = 0; i < 4; ++i) d[4 + i] = uint8_t(nonce >> (8 * i));
    for (int i = 0; i < 4; ++i) d[8 + i] = uint8_t(seq >> (8 * i));
  } else {
    for (int i = 0; i < 2; ++i) d[4 + i] = uint8_t(seq >> (8 * i));
  }
  const size_t body = in.u8() < 200 ? in.range(0, 48) : in.range(0, kMaxDatagramSize);
  d.resize(header + body);
  in.bytes(d.data() + header, body);
  return d;
}

// What B's datagram tells an insider: its nonce (handshakes) and its latest full sequence.
void learn_from(const std::vector<uint8_t>& d, uint32_t* nonce, uint32_t* sequence) {
  if (d.size() < kMinHeaderSize) return;
  if (is_handshake(MessageType(d[3]))) {
    std::memcpy(nonce, d.data() + 4, 4);
    std::memcpy(sequence, d.data() + 8, 4);
  } else {
    uint16_t low = 0;
    std::memcpy(&low, d.data() + 4, 2);
    *sequence = widen_sequence(low, *sequence);
  }
}

void channel_op(Side& s, Side& peer, bool integrity, FuzzInput& in, uint64_t now) {
  FuzzChannel& c = s.channel;
  switch (in.u8() % 6) {
    case 0: {  // a message on one of two streams (or a bad one)
      uint8_t m[kMaxChannelMessage + 1] = {};
      const uint8_t pick = in.u8();
      const size_t size = pick < 8 ? (pick & 1 ? kMaxChannelMessage + 1 : 0)
                                   : pick < 32 ? in.range(4, kMaxChannelMessage) : in.range(4, 40);
      for (size_t i = 0; i < size; ++i) m[i] = message_byte(c.messages_sent, i);
      for (size_t i = 0; i < 4 && i < size; ++i) m[i] = uint8_t(c.messages_sent >> (8 * i));
      const ChannelStream stream = in.flag() ? ChannelStream::decisions : ChannelStream::state_transfer;
      const uint32_t free_before = c.channel.messages_free();
      const Result r = c.channel.send_message(stream, m, size);
      if (size == 0 || size > kMaxChannelMessage) {
        FUZZ_CHECK(r == Result::invalid_argument);
      } else {
        FUZZ_CHECK(r == (free_before == 0 ? Result::input_out_of_window : Result::ok));
        if (r == Result::ok) ++c.messages_sent;
      }
      break;
    }
    case 1: {  // a blob (one at a time)
      const size_t size = in.range(0, uint32_t(kMaxFuzzBlob + 1));
      if (c.channel.sending_blob()) {
        FUZZ_CHECK(c.channel.send_blob(1, 0, c.out_blob.data(), 1) == Result::wrong_state);
        break;
      }
      const uint32_t tag = ++c.blobs_sent;
      for (size_t i = 0; i < size; ++i) c.out_blob[i] = blob_byte(tag, i);
      const Result r = c.channel.send_blob(tag, Frame(in.range(0, 1000)) - 1, c.out_blob.data(), size);
      FUZZ_CHECK(r == (size == 0 || size > kMaxFuzzBlob ? Result::invalid_argument : Result::ok));
      break;
    }
    case 2:
    case 3: c.channel.poll(now, s.endpoint.ping_us(), c); break;
    case 4: {  // take what arrived
      ChannelStream stream;
      uint8_t m[kMaxChannelMessage];
      size_t size = 0;
      while (c.channel.pop_message(&stream, m, &size)) {
        FUZZ_CHECK(size >= 1 && size <= kMaxChannelMessage);
        if (!integrity) continue;
        FUZZ_CHECK(size >= 4);
        uint32_t index = 0;
        for (size_t i = 0; i < 4; ++i) index |= uint32_t(m[i]) << (8 * i);
        FUZZ_CHECK(index == c.messages_received && index < peer.channel.messages_sent);
        for (size_t i = 4; i < size; ++i) FUZZ_CHECK(m[i] == message_byte(index, i));
        ++c.messages_received;
      }
      ChannelEvent ev;
      while (c.channel.pop_event(&ev)) {
        if (ev.type != ChannelEventType::blob_received) continue;
        uint32_t tag = 0;
        const uint8_t* data = nullptr;
        size_t got = 0;
        FUZZ_CHECK(c.channel.received_blob(&tag, nullptr, &data, &got));
        FUZZ_CHECK(got >= 1 && got <= kMaxFuzzBlob && data == c.in_blob.data());
        if (integrity) {
          FUZZ_CHECK(tag >= 1 && tag <= peer.channel.blobs_sent);
          for (size_t i = 0; i < got; ++i) FUZZ_CHECK(data[i] == blob_byte(tag, i));
        }
        c.channel.release_blob();
      }
      break;
    }
    default:
      switch (in.u8() % 4) {
        case 0: c.channel.cancel_blob(); break;
        case 1: c.channel.set_receive_buffer(c.in_blob.data(), in.range(0, uint32_t(kMaxFuzzBlob))); break;
        case 2: c.channel.set_receive_buffer(c.in_blob.data(), kMaxFuzzBlob); break;
        default: (void)c.channel.blob_chunks_acked(); break;
      }
      break;
  }
  if (integrity) FUZZ_CHECK(c.channel.stats().messages_received <= peer.channel.messages_sent);
  FUZZ_CHECK(c.channel.messages_unacknowledged() <= kChannelMessageWindow);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  // The connection's shape. A owns players a_mask, B owns b_mask; each sends its players' inputs.
  const uint32_t players = in.range(1, kMaxPlayers);
  static const uint32_t kInputSizes[] = {1, 2, 2, 4, 8, 3, 16, kMaxInputSize};
  const uint32_t input_size = in.pick(kInputSizes);
  const uint32_t a_players = in.range(0, players);
  const uint32_t b_players = players - a_players;
  const uint32_t frame_rate = in.flag() ? 60 : in.range(1, 65535);

  EndpointConfig ca;
  ca.shape = SessionShape{players, input_size, frame_rate};
  ca.players_owned = uint16_t((1u << a_players) - 1);
  ca.send_blob_size = uint16_t(a_players * input_size);
  ca.receive_blob_size = uint16_t(b_players * input_size);
  ca.sync_round_trips = int32_t(in.range(1, 4));
  static const uint64_t kTimeouts[] = {0, 5000000, 1000000, 300000};
  ca.disconnect_timeout_us = in.pick(kTimeouts);
  ca.notify_delay_us = ca.disconnect_timeout_us / 2;
  ca.handshake_retry_us = in.range(1, 4) * 50000u;
  ca.keepalive_interval_us = in.range(1, 4) * 50000u;
  ca.quality_interval_us = in.range(1, 4) * 50000u;
  ca.resend_interval_us = in.range(1, 4) * 20000u;
  ca.send_queue_frames = in.range(2, 8);
  ca.max_send_queue_frames = ca.send_queue_frames << in.range(0, 4);
  ca.receive_window_frames = in.range(2, 40);
  ca.rng_seed = in.u64() | 1;  // never 0: that would draw OS entropy, and runs must repeat
  const uint8_t mode = in.u8();
  // A third of the runs with the match key (none in builds without libsodium: Windows).
  ca.has_match_key = mode < 96 && match_keys_supported();
  std::memcpy(ca.match_key, kMatchKey, kMatchKeySize);
  ca.allow_aes256gcm = (mode & 1) != 0;

  EndpointConfig cb = ca;
  cb.players_owned = uint16_t(((1u << players) - 1) & ~uint32_t(ca.players_owned));
  cb.send_blob_size = ca.receive_blob_size;
  cb.receive_blob_size = ca.send_blob_size;
  cb.rng_seed = ~ca.rng_seed | 2;
  cb.allow_aes256gcm = (mode & 2) != 0;
  cb.receive_window_frames = in.range(2, 40);
  const uint8_t mismatch = in.u8();
  if (mismatch == 0xff) cb.shape.input_size = input_size == 1 ? 2 : 1;  // rejected handshake
  if (mismatch == 0xfe)  // B sends blobs of another size than A expects (still a valid config)
    cb.send_blob_size = uint16_t(cb.send_blob_size < kMaxBlobSize ? cb.send_blob_size + 1 : cb.send_blob_size - 1);

  auto a_storage = std::make_unique<Side>();
  auto b_storage = std::make_unique<Side>();
  Side& a = *a_storage;
  Side& b = *b_storage;
  FUZZ_CHECK(a.endpoint.init(ca) == Result::ok);
  FUZZ_CHECK(b.endpoint.init(cb) == Result::ok);
  for (Side* side : {&a, &b}) {
    ChannelConfig cc;
    cc.max_blob_size = kMaxFuzzBlob;
    cc.bytes_per_second = 64 * 1024;
    FUZZ_CHECK(side->channel.channel.init(cc) == Result::ok);
    side->channel.endpoint = &side->endpoint;
    side->channel.transport = &side->out;
    side->channel.to = make_memory_address(1);
    side->channel.channel.set_receive_buffer(side->channel.in_blob.data(), kMaxFuzzBlob);
    side->endpoint.set_channel_sink(&side->channel);
  }
  a.send_blob = ca.send_blob_size;
  a.receive_blob = ca.receive_blob_size;
  a.max_queue = ca.max_send_queue_frames;
  b.send_blob = cb.send_blob_size;
  b.receive_blob = cb.receive_blob_size;
  b.max_queue = cb.max_send_queue_frames;

  uint64_t now = 1000000;
  FUZZ_CHECK(a.endpoint.start(now) == Result::ok);
  FUZZ_CHECK(a.endpoint.start(now) == Result::wrong_state);
  FUZZ_CHECK(b.endpoint.start(now) == Result::ok);
  const PeerAddress to = make_memory_address(1);
  // Seals forgeries in B's direction, exactly as B does.
  auto insider = std::make_unique<DatagramAuth>();
  FUZZ_CHECK(insider->configure(cb.has_match_key ? cb.match_key : nullptr, cb.allow_aes256gcm));
  insider->bind(b.endpoint.local_nonce(), a.endpoint.local_nonce(),
                ca.has_match_key && ca.allow_aes256gcm && aes256gcm_available());
  Xoshiro256 insider_rng(ca.rng_seed);
  bool a_integrity = true;    // false once A was handed anything but B's genuine datagrams
  uint32_t b_nonce = 0, b_sequence = 0;

  for (int op = 0; op < kMaxOperations && !in.empty(); ++op) {
    const uint8_t code = in.u8();
    switch (code % 16) {
      case 0: {
        a.out.fail_sends = code >= 0xf0;
        const Result r = a.endpoint.poll(now, a.out, to);
        FUZZ_CHECK(r == Result::ok || r == Result::transport_error || r == Result::internal_error);
        break;
      }
      case 1: {
        const Result r = b.endpoint.poll(now, b.out, to);
        FUZZ_CHECK(r == Result::ok || r == Result::internal_error);
        break;
      }
      case 2:
      case 3:
      case 4: {  // B -> A or A -> B, genuine: pick one in flight, deliver it (or a duplicate)
        Side& from = code % 16 == 3 ? a : b;
        Side& dest = code % 16 == 3 ? b : a;
        if (from.out.held.empty()) break;
        const size_t index = in.u8() % from.out.held.size();
        const std::vector<uint8_t> d = from.out.held[index];
        if (&from == &b) learn_from(d, &b_nonce, &b_sequence);
        if (code % 16 != 4) from.out.held.erase(from.out.held.begin() + long(index));
        dest.deliver(d.data(), d.size(), now);
        break;
      }
      case 5: {  // B -> A with a few bytes changed
        if (b.out.held.empty()) break;
        std::vector<uint8_t> d = b.out.held[in.u8() % b.out.held.size()];
        const int flips = 1 + in.u8() % 4;
        for (int k = 0; k < flips; ++k) d[in.range(0, uint32_t(d.size() - 1))] ^= uint8_t(1 + in.u8() % 255);
        if (in.u8() < 32) d.resize(in.range(0, uint32_t(d.size())));
        a_integrity = false;
        a.deliver(d.data(), d.size(), now);
        break;
      }
      case 6: {  // raw bytes, any length up to past the size limit
        const size_t length = in.u8() < 250 ? in.range(0, 64) : in.range(0, kMaxDatagramSize + 40);
        std::vector<uint8_t> d(length);
        in.bytes(d.data(), length);
        a_integrity = false;
        a.deliver(d.data(), d.size(), now);
        break;
      }
      case 7: {  // forged with B's nonce
        if (!b.out.held.empty()) learn_from(b.out.held.back(), &b_nonce, &b_sequence);
        uint32_t sequence = 0;
        std::vector<uint8_t> d = forge(in, b_nonce, b_sequence, &sequence);
        const size_t plain = d.size();
        seal_datagram(d.data(), plain, 0, sequence);  // a handshake's checksum (key 0); resealed below
        d.resize(kMaxDatagramSize);
        const size_t sealed = in.u8() < 240 ? insider->seal(d.data(), plain, d.size(), insider_rng, sequence) : 0;
        d.resize(sealed != 0 ? sealed : plain);
        a_integrity = false;
        a.deliver(d.data(), d.size(), now);
        break;
      }
      case 8: {
        static const uint64_t kSteps[] = {0, 1, 1000, 16667, 16667, 50000, 200000, 800000, 2000000, 6000000};
        now += in.pick(kSteps);
        break;
      }
      case 9: queue_input(a, in); break;
      case 10: queue_input(b, in); break;
      case 11: pop_inputs(a, b, a_integrity, in); break;
      case 12: pop_inputs(b, a, true, in); break;
      case 13:
        pop_events(a);
        pop_events(b);
        break;
      case 14: {
        Side& s = code & 0x80 ? b : a;
        switch (in.u8() % 4) {
          case 0: {
            ConnectStatus status[kMaxPlayers];
            for (auto& st : status) st = ConnectStatus{in.flag(), Frame(in.range(0, 200)) - 1};
            s.endpoint.set_local_connect_status(status, players);
            break;
          }
          case 1: s.endpoint.set_local_frame(Frame(in.u32()), int32_t(in.u32())); break;
          case 2: {
            const Frame f = Frame(in.u32());
            const Result r = s.endpoint.send_checksum(f, in.u64());
            FUZZ_CHECK((f >= 0) == (r == Result::ok));
            break;
          }
          default: (void)s.endpoint.estimated_remote_frame(now + in.u32()); break;
        }
        break;
      }
      case 15:
        if (code >= 0xf0) (code & 1 ? b : a).endpoint.send_disconnect();
        else if (code & 0x40) channel_op(b, a, true, in, now);
        else channel_op(a, b, a_integrity, in, now);
        break;
    }
    check(a, b, a_integrity, players);
    check(b, a, true, players);
    remember(a, players);
    remember(b, players);
  }
  return 0;
}
