// Writes the seed corpora: fuzz_make_seeds <fuzz/corpus>. Wire seeds come from the codec's own
// encoder (one datagram of every message type, and the edge cases); the other targets read their
// input as a program, so their seeds are short programs written here operation by operation,
// mirroring how each target reads its bytes (its configuration first, then one byte per
// operation). Seeds only have to be good starting points: libFuzzer mutates from there, and
// `scripts/fuzz --merge` folds what it finds back into the corpus.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "net/wire.h"
#if __has_include("retcon/replay.h")
#include <memory>

#include "retcon/replay.h"
#include "retcon/session.h"
#include "support/test_game.h"
#define RETCON_HAVE_REPLAY 1
#endif

using namespace retcon;
using namespace retcon::detail;
using Bytes = std::vector<uint8_t>;

namespace {

std::filesystem::path g_root;

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  const std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void put(Bytes& b, std::initializer_list<uint8_t> bytes) { b.insert(b.end(), bytes); }
void put_u64(Bytes& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
}
void repeat(Bytes& b, std::initializer_list<uint8_t> bytes, int times) {
  for (int i = 0; i < times; ++i) put(b, bytes);
}

// ---------------------------------------------------------------- wire
Bytes encoded(const Message& m) {
  Bytes out(kMaxDatagramSize);
  out.resize(encode_message(m, out.data(), out.size()));
  return out;
}

Bytes inputs(uint16_t blob_size, uint16_t count, Frame start, uint8_t statuses, uint8_t variety,
             const Riders* riders = nullptr) {
  Bytes out(kMaxDatagramSize);
  ConnectStatus status[kMaxPlayers];
  for (uint8_t i = 0; i < statuses; ++i) status[i] = ConnectStatus{i == 1, Frame(start + i) - 1};
  Header h;
  h.nonce = 0x11223344;
  h.sequence = 7;
  std::vector<uint8_t> zeros(blob_size, 0);
  InputsWriter writer(out.data(), out.size(), h, start, start - 2, blob_size, status, statuses, zeros.data(), riders);
  std::vector<Bytes> blobs(count, Bytes(blob_size, 0));
  for (uint16_t i = 0; i < count; ++i) {
    if (i > 0) blobs[i] = blobs[i - 1];
    if (variety == 0 && i % 4 == 0) blobs[i][0] = uint8_t(blobs[i][0] ^ 1);
    if (variety == 1)
      for (uint16_t k = 0; k < blob_size; ++k) blobs[i][k] = uint8_t(i * 131 + k * 7 + 1);
    if (!writer.append(blobs[i].data())) break;
  }
  out.resize(writer.finish());
  return out;
}

void wire_seeds() {
  Message m;
  m.header.nonce = 0x11223344;
  m.header.sequence = 3;
  m.header.type = MessageType::handshake_request;
  m.handshake = Handshake{0xCAFEBABE, SessionShape{2, 2, 60, 8}, 1, false, 2, 2};
  write("wire", "handshake_request", encoded(m));
  m.header.type = MessageType::handshake_reply;
  m.handshake = Handshake{0xCAFEBABE, SessionShape{8, 256, 65535, 0}, 0xF0, true, 0, 2048};
  write("wire", "handshake_reply_spectator", encoded(m));
  m.handshake = Handshake{0xCAFEBABE, SessionShape{2, 2, 60, 8}, 2, false, 2, 2};
  m.handshake.refused = true;  // a rejoin refused (flag bit 2, a reply's only)
  write("wire", "handshake_reply_refused", encoded(m));
  m.header.type = MessageType::input_ack;
  m.ack_frame = 1234;
  write("wire", "input_ack", encoded(m));
  m.header.type = MessageType::quality_report;
  m.quality = QualityReport{21, 600, -3};
  write("wire", "quality_report", encoded(m));
  m.header.type = MessageType::quality_reply;
  m.reply = QualityReply{21, 1500};
  write("wire", "quality_reply", encoded(m));
  m.header.type = MessageType::keep_alive;
  write("wire", "keep_alive", encoded(m));
  m.header.type = MessageType::disconnect;
  write("wire", "disconnect", encoded(m));
  m.header.type = MessageType::checksum_report;
  m.checksum = ChecksumReport{90, 0x0123456789abcdefull};
  Bytes checksum = encoded(m);
  write("wire", "checksum_report", checksum);
  // Reliable-channel bodies (docs/PROTOCOL.md "Reliable channel bodies"): a message on stream 1
  // and an acknowledgement.
  const uint8_t channel_message[] = {0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01};
  m.header.type = MessageType::channel_data;
  m.channel_body = channel_message;
  m.channel_size = sizeof channel_message;
  write("wire", "channel_message", encoded(m));
  uint8_t channel_ack[49] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0x01};
  m.header.type = MessageType::channel_ack;
  m.channel_body = channel_ack;
  m.channel_size = sizeof channel_ack;
  write("wire", "channel_ack", encoded(m));
  write("wire", "inputs_held_button", inputs(2, 40, 100, 2, 0));
  write("wire", "inputs_first_frame", inputs(4, 1, 0, 0, 0));
  write("wire", "inputs_incompressible", inputs(300, 8, 5, 8, 1));
  write("wire", "inputs_eight_players", inputs(1024, 1, 9, 8, 0));
  // Protocol 7: a report, a reply and checksums riding on the inputs (frames around the start).
  Riders riders;
  riders.has_report = true;
  riders.report = QualityReport{3, 1198, 2};
  riders.has_reply = true;
  riders.reply = QualityReply{200, 16667};
  riders.checksum_count = 3;
  for (uint8_t i = 0; i < 3; ++i) riders.checksums[i] = ChecksumReport{Frame(1140 + 30 * i), 0x1111111111111111ull * (i + 1)};
  write("wire", "inputs_with_riders", inputs(2, 12, 1200, 2, 0, &riders));
  riders.has_reply = false;
  riders.checksum_count = 7;
  for (uint8_t i = 3; i < 7; ++i) riders.checksums[i] = ChecksumReport{Frame(i), ~uint64_t{i}};
  write("wire", "inputs_with_seven_checksums", inputs(4, 3, 5, 8, 1, &riders));
  // A silence note riding (late-input detection), beside the others and alone.
  riders.has_silence = true;
  riders.silence = SilenceNote{812, 17};
  write("wire", "inputs_with_silence_and_checksums", inputs(4, 3, 5, 8, 1, &riders));
  Riders silence_only;
  silence_only.has_silence = true;
  silence_only.silence = SilenceNote{kMaxSilenceGapMs, kMaxSilenceAgoMs};
  write("wire", "inputs_with_silence", inputs(2, 12, 1200, 2, 0, &silence_only));
  Bytes version = checksum;
  version[2] = 2;
  write("wire", "bad_version", version);
  Bytes truncated = inputs(2, 4, 100, 2, 0);
  truncated.resize(truncated.size() - 1);
  write("wire", "truncated_inputs", truncated);
  write("wire", "oversized", Bytes(kMaxDatagramSize + 1, 0x52));
}

// ---------------------------------------------------------------- endpoint
// Config as endpoint_fuzzer.cpp reads it, then operations (code % 16 picks the operation).
// `mode`: < 96 runs with the fixed match key (bit 0: A offers AES-256-GCM, bit 1: B does).
Bytes endpoint_config(uint8_t players, uint8_t input_size_index, uint8_t a_players, uint8_t timeout_index,
                      uint8_t window, uint8_t mode = 0xff) {
  Bytes b;
  put(b, {uint8_t(players - 1), input_size_index, a_players, 1 /* 60 fps */, 1 /* 2 round trips */,
          timeout_index, 0, 0, 0, 0, 2 /* queue 4 */, 2 /* max 16 */, uint8_t(window - 2)});
  put_u64(b, 0x1234567890abcdefull);
  put(b, {mode, uint8_t(window - 2), 0 /* shapes match */});
  return b;
}

void endpoint_handshake(Bytes& b) {
  // poll A, poll B, deliver B->A (oldest), deliver A->B (oldest): a round trip each time.
  repeat(b, {0x00, 0x01, 0x02, 0x00, 0x03, 0x00, 0x08, 0x03}, 6);
}

void endpoint_seeds() {
  Bytes b = endpoint_config(2, 1, 1, 1, 16);
  endpoint_handshake(b);
  // Inputs both ways with time passing, polls, deliveries and pops.
  for (int i = 0; i < 40; ++i)
    put(b, {0x09, 0x00, uint8_t(i), 0x03, 0x0a, 0x01, uint8_t(i * 3), 0x03, 0x00, 0x01, 0x02, 0x00, 0x03, 0x00,
            0x0b, 0x01, 0x0c, 0x01, 0x08, 0x03});
  put(b, {0x0d});
  write("endpoint", "handshake_and_inputs", b);
  // The same with the match key: AES-256-GCM on both sides, then ChaCha20-Poly1305 (A has none).
  for (const uint8_t mode : {uint8_t(0x03), uint8_t(0x02)}) {
    Bytes keyed = endpoint_config(2, 1, 1, 1, 16, mode);
    endpoint_handshake(keyed);
    for (int i = 0; i < 40; ++i)
      put(keyed, {0x09, 0x00, uint8_t(i), 0x03, 0x0a, 0x01, uint8_t(i * 3), 0x03, 0x00, 0x01, 0x02, 0x00, 0x03,
                  0x00, 0x0b, 0x01, 0x0c, 0x01, 0x08, 0x03});
    put(keyed, {0x0d});
    write("endpoint", mode == 0x03 ? "keyed_aes256gcm" : "keyed_chacha20poly1305", keyed);
  }

  Bytes lossy = endpoint_config(4, 2, 2, 2, 6);
  endpoint_handshake(lossy);
  // Inputs queued faster than acknowledged, datagrams delivered out of order and twice.
  for (int i = 0; i < 30; ++i)
    put(lossy, {0x09, 0x01, uint8_t(i), 0x03, 0x00, 0x01, 0x04, uint8_t(i), 0x02, uint8_t(i * 7), 0x03, 0x01,
                0x0b, 0x03, 0x08, 0x02});
  write("endpoint", "reordered_duplicates", lossy);

  Bytes attack = endpoint_config(2, 1, 1, 1, 8);
  endpoint_handshake(attack);
  for (int i = 0; i < 20; ++i) {
    put(attack, {0x07, 0x00, 0x03, 0x01, 0x05, 20});  // forged inputs, sequence near B's
    for (int k = 0; k < 20; ++k) attack.push_back(uint8_t(k * 13 + i));
    put(attack, {0x05, uint8_t(i), 0x01, uint8_t(i + 3), 0x20, 0x06, 0x00, 0x10});
    put(attack, {'R', 'C', 1, uint8_t(1 + i % 9)});
    for (int k = 0; k < 12; ++k) attack.push_back(uint8_t(k));
  }
  write("endpoint", "forged_and_mutated", attack);

  Bytes timeout = endpoint_config(1, 0, 1, 3, 4);
  endpoint_handshake(timeout);
  put(timeout, {0x09, 0x00, 0x01, 0x03, 0x00, 0x08, 0x06, 0x00, 0x08, 0x09, 0x00, 0x0d, 0xff, 0x01, 0x00, 0x0d});
  write("endpoint", "timeout_and_disconnect", timeout);
}

// ---------------------------------------------------------------- p2p
Bytes p2p_config(uint8_t input_size, uint8_t max_prediction, uint8_t mode, uint8_t desync, uint8_t timeout,
                 bool spectator = false, bool three = false, bool keyed = false) {
  Bytes b;
  // 0x20: every machine has the fixed match key. (The round trips are 1 + shape % 3.)
  put(b, {uint8_t(input_size - 1), max_prediction, mode, desync, timeout,
          uint8_t((spectator ? 0x80 : 0) | (three ? 0x40 : 0) | (keyed ? 0x20 : 0))});
  put_u64(b, 42);
  return b;
}

void p2p_seeds() {
  // Steady play (operation 14+: both tick, everything arrives), then the fuzzer has a match.
  Bytes steady = p2p_config(2, 8, 0, 5, 1);
  for (int i = 0; i < 120; ++i) put(steady, {0x0e, uint8_t(i % 5 == 0 ? 10 : 200), uint8_t(i), 200});
  write("p2p", "steady", steady);
  Bytes keyed = p2p_config(2, 8, 0, 5, 1, true, false, true);
  for (int i = 0; i < 120; ++i) put(keyed, {0x0e, uint8_t(i % 5 == 0 ? 10 : 200), uint8_t(i), 200});
  write("p2p", "keyed_spectator", keyed);

  // A spectator of machine 0 follows; one player drops out halfway.
  Bytes spectated = p2p_config(2, 7, 0, 5, 1, true);
  for (int i = 0; i < 80; ++i) {
    put(spectated, {0x0e, uint8_t(i % 6 == 0 ? 10 : 200), uint8_t(i), 200});
    if (i % 3 == 0) put(spectated, {0x00, 200, 0x06, uint8_t(i), 0x0e});
    if (i == 50) put(spectated, {0xfc, 1, 0});
  }
  write("p2p", "spectator", spectated);

  // Each machine on its own schedule, one-sided delivery, drops, duplicates: rollbacks.
  Bytes rollback = p2p_config(1, 6, 0, 3, 1);
  repeat(rollback, {0x0e, 200, 200}, 12);
  for (int i = 0; i < 100; ++i) {
    put(rollback, {0x00, uint8_t(i % 3 == 0 ? 10 : 200), uint8_t(i), 0x40, 200, 0x40, 200});
    if (i % 4 == 0) put(rollback, {0x06, uint8_t(i)});
    if (i % 7 == 0) put(rollback, {0x07, uint8_t(i * 5)});
    if (i % 9 == 0) put(rollback, {0x08, uint8_t(i)});
    if (i % 5 == 0) put(rollback, {0x09});
    put(rollback, {0x0a, 0});
  }
  write("p2p", "rollbacks", rollback);

  // Lockstep with input delay, sparse saving, then a disconnect.
  Bytes lockstep = p2p_config(3, 0, 3, 2, 2);
  put(lockstep, {0x0b, 2, 0x4b, 1});
  repeat(lockstep, {0x0e, 10, 1, 10, 2}, 60);
  put(lockstep, {0xfc, 1, 0});
  repeat(lockstep, {0x0e, 200, 200}, 30);
  write("p2p", "lockstep_delay_disconnect", lockstep);

  // Three players, machines on their own schedules (operation bits 6-7 pick the machine), one
  // machine dropped by another: the others must agree on where its player stops.
  Bytes three = p2p_config(2, 6, 0, 3, 1, true, true);
  repeat(three, {0x0e, 200, 200, 200}, 20);
  for (int i = 0; i < 60; ++i) {
    put(three, {0x00, uint8_t(i % 4 == 0 ? 10 : 200), uint8_t(i), 0x40, 200, 0x80, 200});
    if (i % 3 == 0) put(three, {0x06, uint8_t(i), 0x06, uint8_t(i + 1)});
    if (i % 2 == 0) put(three, {0x09});
    if (i == 40) put(three, {0xfc, 1, 1});  // machine 1 drops machine 0 + 1 + 1 = 2
    put(three, {0x0a, 0, 0x0d});
  }
  repeat(three, {0x0e, 200, 200, 200}, 30);
  write("p2p", "three_players_disconnect", three);

  // Silence: the clock jumps until the peer times out.
  Bytes silence = p2p_config(2, 8, 2, 4, 2);
  repeat(silence, {0x0e, 200, 200}, 40);
  repeat(silence, {0x00, 200, 0x0a, 6, 0x40, 200}, 20);
  write("p2p", "timeout", silence);
}

// ---------------------------------------------------------------- capi
void capi_seeds() {
  // create(slot 0): 2 flags, num_players, input size, prediction, save mode, state size, size,
  // logger, min level, predictor, missing, on_event, describe, checksum, cb size, validate, kind.
  auto create = [](Bytes& b, uint8_t slot, uint8_t players, uint8_t input_index, uint8_t prediction,
                   uint8_t mode, uint8_t state_index, uint8_t kind, uint8_t distance) {
    put(b, {uint8_t(slot << 4), 200, 200, 0, uint8_t(players), 0, input_index, 0, uint8_t(prediction + 1), 0,
            uint8_t(mode + 1), state_index, 200, 200, 0, 200, 0, 1, 1, 1, 200, 200, kind});
    if (kind >= 4) put(b, {0, uint8_t(distance + 1), 200, 200});
  };
  Bytes local;
  create(local, 0, 2, 2, 8, 0, 4, 1, 0);
  for (int i = 0; i < 30; ++i) put(local, {0x02, 200, 0, 0, 0x04, 200, 0x08, 200, 200, 200, 200});
  put(local, {0x0b, 200, 0x09, 200, 200, 200, 0x01, 200, 0});
  write("capi", "local_session", local);

  Bytes sync;
  create(sync, 1, 3, 1, 8, 1, 5, 5, 3);
  for (int i = 0; i < 10; ++i) put(sync, {0x1b, 200, 0x17, 200, 1, 3, 0x14, 200, 0x16, 200, 1, 2, 3, 4, 5, 6, 7, 8});
  write("capi", "sync_test_session", sync);

  Bytes misuse;
  create(misuse, 2, 9, 7, 70, 3, 0, 2, 0);  // every field out of range
  create(misuse, 3, 1, 6, 0, 2, 7, 6, 0);   // 256-byte inputs, lockstep, state size past the limit
  put(misuse, {0x22, 200, 9, 200, 0x33, 3, 0x24, 2, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0xff, 0xff, 0xff, 0xff});
  write("capi", "misuse", misuse);

  Bytes reenter;
  create(reenter, 0, 1, 0, 4, 0, 3, 5, 2);
  for (int i = 0; i < 5; ++i) put(reenter, {0x02, 200, 0, 0, 0x04, 200, 0, uint8_t(i)});
  write("capi", "reentrant_callbacks", reenter);
}

// ---------------------------------------------------------------- replay_file
#ifdef RETCON_HAVE_REPLAY
// A local session of TestGame recorded. The target reads a control byte before the image: 1
// (odd) makes it recompute the image's file checksum, so mutations of these seeds get past it.
Bytes recorded(uint32_t players, uint32_t input_size, Frame frames, uint32_t interval, bool states) {
  retcon::test::TestGame game;
  ReplayRecorderConfig rc;
  rc.num_players = players;
  rc.input_size = input_size;
  rc.max_state_size = 256;
  rc.checksum_interval = interval;
  rc.store_states = states;
  rc.user_data = {1, 2, 3};
  ReplayRecorder recorder;
  if (recorder.init(rc, bind_game(game)) != Result::ok) return {};
  SessionConfig s;
  s.num_players = players;
  s.input_size = input_size;
  s.max_state_size = 256;
  s.callbacks = recorder.callbacks();
  std::unique_ptr<Session> session;
  if (create_local_session(s, &session) != Result::ok) return {};
  for (Frame f = 0; f < frames; ++f) {
    for (uint32_t p = 0; p < players; ++p) {
      uint8_t in[kMaxInputSize] = {};
      for (uint32_t i = 0; i < input_size; ++i) in[i] = uint8_t((f / (3 + p)) * 7 + i);
      session->add_local_input(PlayerIndex(p), in, input_size);
    }
    session->advance_frame();
    recorder.commit(session->confirmed_frame());
  }
  Bytes out;
  recorder.replay().serialize(&out);
  out.insert(out.begin(), 1);
  return out;
}

void replay_seeds() {
  write("replay_file", "two_players", recorded(2, 2, 40, 10, false));
  write("replay_file", "one_player_states", recorded(1, 4, 12, 3, true));
  write("replay_file", "eight_players_no_checksums", recorded(8, 1, 6, 0, false));
  Bytes damaged = recorded(2, 2, 20, 5, false);
  damaged[0] = 0;  // keep the damage: the checksum must catch it
  damaged[damaged.size() / 2] ^= 0x40;
  write("replay_file", "damaged", damaged);
}
#else
void replay_seeds() {}
#endif

}  // namespace

// ---------------------------------------------------------------- corpus upgrade
// The wire corpus also holds inputs libFuzzer found. After a wire change they would only
// exercise version rejection, so datagrams of older versions are rewritten in place into this
// version's layout and resealed (key 0), so they reach the body decoders again:
//   - versions 1..5 (a 16-byte header on every message): a data message loses its nonce and
//     keeps the low 16 bits of its sequence (version 6's 10-byte data header);
//   - version 6 -> 7: an inputs body loses its blob size and its mask becomes the flags byte
//     (and the mask after it when someone is disconnected); a quality report's clock becomes its
//     id (the clock's low byte), a reply's echo an id and a hold of 0; a checksum report's frame
//     becomes a zigzag varint. A body that does not parse as version 6 is kept as it is.
//   - a handshake of 20 body bytes (before max_prediction joined it within version 7) gains a
//     window of 0 after its frame_rate.
// Files that do not start with the magic are left alone.
Bytes upgrade_body_6_to_7(MessageType type, const Bytes& body) {
  ByteReader r(body.data(), body.size());
  Bytes out(body.size() + 16);
  ByteWriter w(out.data(), out.size());
  auto zigzag = [](int32_t v) { return (uint32_t(v) << 1) ^ uint32_t(v >> 31); };
  switch (type) {
    case MessageType::inputs: {
      uint32_t start = 0, ack = 0, count = 0, blob_size = 0;
      if (!r.varint(&start) || !r.varint(&ack) || !r.varint(&count) || !r.varint(&blob_size)) return body;
      const uint8_t mask = r.u8();
      if (r.failed()) return body;
      w.varint(start);
      w.varint(ack);
      w.varint(count);
      w.u8(mask != 0 ? 0x01 : 0x00);
      if (mask != 0) w.u8(mask);
      w.bytes(body.data() + r.position(), r.remaining());
      break;
    }
    case MessageType::quality_report: {
      if (body.size() != 16) return body;
      const uint64_t time = r.u64();
      const int32_t frame = r.i32(), advantage = r.i32();
      w.u8(uint8_t(time));
      w.varint(zigzag(frame));
      w.varint(zigzag(advantage));
      break;
    }
    case MessageType::quality_reply:
      if (body.size() != 8) return body;
      w.u8(body[0]);
      w.varint(0);
      break;
    case MessageType::checksum_report: {
      if (body.size() != 12) return body;
      const int32_t frame = r.i32();
      w.varint(zigzag(frame));
      w.u64(r.u64());
      break;
    }
    default: return body;
  }
  out.resize(w.size());
  return out;
}

void upgrade_wire_corpus() {
  const std::filesystem::path dir = g_root / "wire";
  if (!std::filesystem::exists(dir)) return;
  int upgraded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename().string().rfind("seed-", 0) == 0) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    Bytes d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    constexpr size_t kOldHeader = 16;
    if (d.size() < kDataHeaderSize || d[0] != kMagic0 || d[1] != kMagic1 || d[2] > kProtocolVersion) continue;
    // Handshake bodies of 20 bytes predate max_prediction (added within version 7): the window
    // byte (0) goes in after frame_rate, at body offset 13.
    constexpr size_t kOldHandshake = 16 + 20;
    const bool old_handshake = is_handshake(MessageType(d[3])) && d.size() == kOldHandshake;
    if (d[2] == kProtocolVersion && !old_handshake) continue;
    if (old_handshake) d.insert(d.begin() + long(16 + 13), uint8_t(0));
    if (d[2] < 6) {
      if (d.size() < kOldHeader) continue;
      if (!is_handshake(MessageType(d[3]))) {
        Bytes v(d.begin(), d.begin() + 4);
        v.push_back(d[8]);  // the sequence's low 16 bits
        v.push_back(d[9]);
        v.insert(v.end(), 4, 0);  // the checksum
        v.insert(v.end(), d.begin() + long(kOldHeader), d.end());
        d = v;
      }
      d[2] = 6;
    }
    if (d[2] == 6) {
      const MessageType type = MessageType(d[3]);
      const size_t header = header_size(type);
      if (d.size() >= header) {
        const Bytes body = upgrade_body_6_to_7(type, Bytes(d.begin() + long(header), d.end()));
        d.resize(header);
        d.insert(d.end(), body.begin(), body.end());
      }
    }
    d[2] = kProtocolVersion;
    seal_datagram(d.data(), d.size());
    std::ofstream out(entry.path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(d.data()), std::streamsize(d.size()));
    ++upgraded;
  }
  std::printf("wire corpus: %d datagrams of older layouts rewritten for version %u\n", upgraded,
              unsigned(kProtocolVersion));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus root, e.g. fuzz/corpus>\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  wire_seeds();
  upgrade_wire_corpus();
  endpoint_seeds();
  p2p_seeds();
  capi_seeds();
  replay_seeds();
  return 0;
}
