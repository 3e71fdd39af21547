// Replays: recording from every session kind, the file round trip, playback verification, and
// that damaged files are refused with a message instead of read out of bounds.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "retcon/p2p.h"
#include "core/checksum.h"
#include "retcon/replay.h"
#include "retcon/session.h"
#include "support/test_game.h"

namespace retcon {
namespace {

using test::TestGame;

constexpr size_t kStateCap = 256;
constexpr uint32_t kInputSize = 2;

uint8_t input_byte(uint32_t p, Frame f, uint32_t i) {
  const uint64_t hold = uint64_t(f) / (3 + (p + i) % 5);
  return uint8_t((hold * 2654435761u + p * 40503u + i * 977u) >> 7);
}

ReplayRecorderConfig recorder_config(uint32_t players, uint32_t interval, bool states = false) {
  ReplayRecorderConfig c;
  c.num_players = players;
  c.input_size = kInputSize;
  c.max_state_size = kStateCap;
  c.checksum_interval = interval;
  c.store_states = states;
  c.user_data = {1, 2, 3};
  return c;
}

// Records `frames` frames of a local session with every player local.
Replay record_local(uint32_t players, Frame frames, uint32_t interval, bool states = false) {
  TestGame game;
  ReplayRecorder rec;
  EXPECT_EQ(rec.init(recorder_config(players, interval, states), bind_game(game)), Result::ok);
  SessionConfig s;
  s.num_players = players;
  s.input_size = kInputSize;
  s.max_state_size = kStateCap;
  s.callbacks = rec.callbacks();
  std::unique_ptr<Session> session;
  EXPECT_EQ(create_local_session(s, &session), Result::ok);
  for (Frame f = 0; f < frames; ++f) {
    for (uint32_t p = 0; p < players; ++p) {
      uint8_t in[kInputSize] = {input_byte(p, f, 0), input_byte(p, f, 1)};
      EXPECT_EQ(session->add_local_input(PlayerIndex(p), in, kInputSize), Result::ok);
    }
    EXPECT_EQ(session->advance_frame(), Result::ok);
    rec.commit(session->confirmed_frame());
  }
  EXPECT_EQ(rec.error(), Result::ok);
  return rec.replay();
}

std::vector<uint8_t> image_of(const Replay& r) {
  std::vector<uint8_t> out;
  EXPECT_EQ(r.serialize(&out), Result::ok);
  return out;
}

ReplayVerdict play(const Replay& r, TestGame& game, bool stop = true) {
  ReplayPlayer player;
  EXPECT_EQ(player.init(r, bind_game(game), kStateCap), Result::ok);
  return player.run(stop);
}

TEST(Replay, LocalSessionRoundTrip) {
  const Replay rec = record_local(3, 300, 10);
  EXPECT_EQ(rec.frame_count(), 300);
  EXPECT_EQ(rec.checkpoints().size(), 30u);
  const std::vector<uint8_t> image = image_of(rec);
  Replay back;
  std::string error;
  ASSERT_EQ(Replay::parse(image.data(), image.size(), &back, &error), Result::ok) << error;
  EXPECT_EQ(back.frame_count(), 300);
  EXPECT_EQ(back.user_data(), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(back.header().num_players, 3u);
  EXPECT_EQ(image_of(back), image);  // parse then serialize is the identity

  TestGame game;
  const ReplayVerdict v = play(back, game);
  EXPECT_FALSE(v.diverged());
  EXPECT_EQ(v.frames_played, 300);
  EXPECT_EQ(v.checkpoints_verified, 30u);
  EXPECT_EQ(game.state.frame, 300);
}

TEST(Replay, SyncTestSessionRecordsEachFrameOnce) {
  TestGame game;
  ReplayRecorder rec;
  ASSERT_EQ(rec.init(recorder_config(2, 1), bind_game(game)), Result::ok);
  SyncTestConfig c;
  c.session.num_players = 2;
  c.session.input_size = kInputSize;
  c.session.max_state_size = kStateCap;
  c.session.callbacks = rec.callbacks();
  c.check_distance = 5;
  std::unique_ptr<Session> session;
  ASSERT_EQ(create_sync_test_session(c, &session), Result::ok);
  for (Frame f = 0; f < 200; ++f) {
    for (uint32_t p = 0; p < 2; ++p) {
      uint8_t in[kInputSize] = {input_byte(p, f, 0), input_byte(p, f, 1)};
      session->add_local_input(PlayerIndex(p), in, kInputSize);
    }
    ASSERT_EQ(session->advance_frame(), Result::ok);
    rec.commit(session->confirmed_frame());
  }
  EXPECT_EQ(rec.error(), Result::ok);
  EXPECT_GE(rec.recorded_frames(), 199);
  TestGame replayed;
  const ReplayVerdict v = play(rec.replay(), replayed);
  EXPECT_FALSE(v.diverged());
  EXPECT_EQ(v.checkpoints_verified, uint32_t(rec.recorded_frames()));
}

// A P2P match over a lossy, jittery in-memory network with every machine recording.
struct MatchSetup {
  uint32_t machines = 2;
  int32_t max_prediction = 8;
  SaveMode save_mode = SaveMode::automatic;
  Frame frames = 400;
  Frame leave_at = -1;  // the last machine stops (crashes) at this frame
  Frame decide_at = -1;  // machines 0 and 1 each send a timed decision at this frame
};

void PrintTo(const MatchSetup& m, std::ostream* os) {
  *os << m.machines << " machines, max prediction " << m.max_prediction << ", save mode " << uint32_t(m.save_mode)
      << ", " << m.frames << " frames" << (m.leave_at >= 0 ? ", one leaves" : "");
}

struct RecordedMachine {
  TestGame game;
  ReplayRecorder rec;
  InMemoryTransport* wire = nullptr;
  std::unique_ptr<NetworkSimulator> sim;
  std::unique_ptr<P2PSession> session;
  bool stopped = false;
};

// `net` must outlive the machines: declare it first.
void run_recorded_match(const MatchSetup& setup, InMemoryNetwork& net, std::vector<std::unique_ptr<RecordedMachine>>* out) {
  auto& ms = *out;
  LinkProfile link;
  link.latency_us = 40000;
  link.jitter_us = 15000;
  link.loss = 0.05;
  for (uint32_t m = 0; m < setup.machines; ++m) {
    auto x = std::make_unique<RecordedMachine>();
    x->wire = net.add_endpoint();
    x->sim = std::make_unique<NetworkSimulator>(*x->wire, 11 + m);
    x->sim->set_outgoing(link);
    ms.push_back(std::move(x));
  }
  for (uint32_t m = 0; m < setup.machines; ++m) {
    RecordedMachine& me = *ms[m];
    ASSERT_EQ(me.rec.init(recorder_config(setup.machines, 5), bind_game(me.game)), Result::ok);
    P2PConfig c;
    c.session.num_players = setup.machines;
    c.session.input_size = kInputSize;
    c.session.max_state_size = kStateCap;
    c.session.max_prediction = setup.max_prediction;
    c.session.save_mode = setup.save_mode;
    c.session.callbacks = me.rec.callbacks();
    c.network.transport = me.sim.get();
    c.network.rng_seed = 100 + m;
    c.network.disconnect_timeout_us = 1000000;
    c.network.notify_delay_us = 300000;
    for (uint32_t p = 0; p < setup.machines; ++p) {
      c.players[p].kind = p == m ? PlayerKind::local : PlayerKind::remote;
      c.players[p].address = ms[p]->wire->address();
    }
    ASSERT_EQ(create_p2p_session(c, &me.session), Result::ok);
  }
  uint64_t now = 0;
  bool done = false;
  for (int t = 0; t < 8000 && !done; ++t) {
    now += 16667;
    done = true;
    for (uint32_t m = 0; m < setup.machines; ++m) {
      RecordedMachine& me = *ms[m];
      if (me.stopped) continue;
      me.sim->set_time(now);
      me.session->poll(now);
      if (me.session->running() && me.session->current_frame() < setup.frames + 30) {
        const Frame f = me.session->current_frame();
        if (m + 1 == setup.machines && f == setup.leave_at) {
          me.stopped = true;
          continue;
        }
        if (f == setup.decide_at && m < 2) {
          const uint8_t decision[3] = {uint8_t('D'), uint8_t(m), uint8_t(f)};
          EXPECT_EQ(me.session->send_decision(decision, sizeof decision, me.session->earliest_decision_frame() + Frame(m),
                                              nullptr),
                    Result::ok);
        }
        uint8_t in[kInputSize] = {input_byte(m, f, 0), input_byte(m, f, 1)};
        me.session->add_local_input(PlayerIndex(m), in, kInputSize);
        me.session->advance_frame();
        me.rec.commit(me.session->confirmed_frame());
      }
      if (me.rec.recorded_frames() < setup.frames) done = false;
    }
  }
  ASSERT_TRUE(done);
}

class ReplayOfMatch : public ::testing::TestWithParam<MatchSetup> {};

// Every machine records the same replay (same confirmed inputs, same checksums), whatever the
// session settings; and each replay plays back clean.
TEST_P(ReplayOfMatch, EveryPeerRecordsTheSameReplay) {
  const MatchSetup setup = GetParam();
  // Regression (3 machines, one leaves): when the leaver's last datagram to one survivor was
  // lost, the survivors held different last frames of it; the agreed cut is the earlier one, and
  // the other survivor had already committed the later frames with the leaver's real inputs.
  // The recorder now revises committed frames that the session re-simulates.
  InMemoryNetwork net;
  std::vector<std::unique_ptr<RecordedMachine>> ms;
  run_recorded_match(setup, net, &ms);
  if (HasFatalFailure()) return;
  if (setup.max_prediction > 0) {
    ASSERT_GT(ms[0]->session->stats().rollbacks, 0u) << "the link should cause rollbacks";
  }
  std::vector<RecordedMachine*> live;
  for (auto& m : ms) {
    ASSERT_EQ(m->rec.error(), Result::ok);
    if (!m->stopped) live.push_back(m.get());
  }
  const Replay& first = live[0]->rec.replay();
  for (RecordedMachine* other : live) {
    const Replay& r = other->rec.replay();
    const Frame common = std::min(first.frame_count(), r.frame_count());
    for (Frame f = 0; f < common; ++f) {
      const FrameInputs a = first.inputs(f), b = r.inputs(f);
      ASSERT_EQ(std::memcmp(a.bytes, b.bytes, setup.machines * kInputSize), 0) << "frame " << f;
      ASSERT_EQ(std::memcmp(a.status, b.status, setup.machines), 0) << "frame " << f;
      const ReplayCheckpoint* ca = first.checkpoint(f);
      const ReplayCheckpoint* cb = r.checkpoint(f);
      ASSERT_EQ(ca == nullptr, cb == nullptr);
      if (ca) {
        ASSERT_EQ(ca->checksum, cb->checksum) << "frame " << f;
      }
    }
  }
  if (setup.leave_at >= 0) {  // the leaver's frames after the agreed cut are zeros, disconnected
    const FrameInputs last = first.inputs(first.frame_count() - 1);
    EXPECT_EQ(last.status[setup.machines - 1], InputStatus::disconnected);
    EXPECT_EQ(last.status[0], InputStatus::confirmed);
  }
  for (RecordedMachine* m : live) {
    TestGame replayed;
    const ReplayVerdict v = play(m->rec.replay(), replayed);
    EXPECT_FALSE(v.diverged()) << "first bad " << v.first_bad;
    EXPECT_GE(v.checkpoints_verified, uint32_t(setup.frames / 5));
  }
}

INSTANTIATE_TEST_SUITE_P(Settings, ReplayOfMatch,
                         ::testing::Values(MatchSetup{}, MatchSetup{2, 8, SaveMode::sparse, 400, -1},
                                           MatchSetup{2, 0, SaveMode::automatic, 300, -1},
                                           MatchSetup{3, 6, SaveMode::every_frame, 400, -1},
                                           MatchSetup{3, 8, SaveMode::automatic, 500, 200}),
                         [](const ::testing::TestParamInfo<MatchSetup>& param) {
                           const MatchSetup& m = param.param;
                           return std::to_string(m.machines) + "machines_prediction" + std::to_string(m.max_prediction) +
                                  "_savemode" + std::to_string(uint32_t(m.save_mode)) +
                                  (m.leave_at >= 0 ? "_disconnect" : "");
                         });

TEST(Replay, DivergenceNamesTheFirstBadCheckpoint) {
  const Replay rec = record_local(2, 200, 10, true);
  TestGame game;
  game.diverge_at = 57;  // changes the state after frame 57: frame 58 starts from a wrong state
  ReplayPlayer player;
  ASSERT_EQ(player.init(rec, bind_game(game), kStateCap), Result::ok);
  const ReplayVerdict& v = player.run();
  ASSERT_TRUE(v.diverged());
  EXPECT_EQ(v.last_good, 50);
  EXPECT_EQ(v.first_bad, 60);
  EXPECT_NE(v.expected, v.actual);
  EXPECT_EQ(player.frame(), 61);  // stopped after simulating the checkpoint frame
  ASSERT_NE(player.last_state(), nullptr);
  const ReplayCheckpoint* c = rec.checkpoint(60);
  ASSERT_NE(c, nullptr);
  ASSERT_GT(c->state_length, 0u);  // the recorded state, to describe next to the live one
}

TEST(Replay, FileRoundTripAndMissingFile) {
  const Replay rec = record_local(2, 50, 7);
  const std::string path = ::testing::TempDir() + "retcon_replay_test.rpl";
  ASSERT_EQ(rec.write_file(path.c_str()), Result::ok);
  Replay back;
  std::string error;
  ASSERT_EQ(Replay::read_file(path.c_str(), &back, &error), Result::ok) << error;
  EXPECT_EQ(image_of(back), image_of(rec));
  std::remove(path.c_str());
  EXPECT_EQ(Replay::read_file(path.c_str(), &back, &error), Result::io_error);
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

// File names are UTF-8 on every platform: on Windows a name outside the ANSI code page (a
// player's name in their folder) must still open.
TEST(Replay, FileNamesAreUtf8) {
  const Replay rec = record_local(2, 50, 7);
  const std::filesystem::path file =
      std::filesystem::path(::testing::TempDir()) /
      std::filesystem::path(u8"retcon_Zo\u00eb M\u00fcller_\u30ea\u30d7\u30ec\u30a4.rpl");
  const std::u8string name = file.u8string();
  const std::string path(name.begin(), name.end());
  ASSERT_EQ(rec.write_file(path.c_str()), Result::ok);
  EXPECT_TRUE(std::filesystem::exists(file));  // under its real name, not a mangled one
  Replay back;
  std::string error;
  ASSERT_EQ(Replay::read_file(path.c_str(), &back, &error), Result::ok) << error;
  EXPECT_EQ(image_of(back), image_of(rec));
  std::filesystem::remove(file);
  EXPECT_EQ(Replay::read_file(path.c_str(), &back, &error), Result::io_error);
}

TEST(Replay, EveryTruncationIsRefusedWithAMessage) {
  const std::vector<uint8_t> image = image_of(record_local(2, 12, 4, true));
  for (size_t n = 0; n < image.size(); ++n) {
    // A copy of exactly n bytes, so reading past it is caught by ASan.
    std::vector<uint8_t> cut(image.begin(), image.begin() + ptrdiff_t(n));
    Replay r;
    std::string error;
    ASSERT_EQ(Replay::parse(cut.data(), cut.size(), &r, &error), Result::corrupt_data) << "length " << n;
    ASSERT_FALSE(error.empty()) << "length " << n;
  }
  // And a byte too many.
  std::vector<uint8_t> longer = image;
  longer.push_back(0);
  Replay r;
  std::string error;
  EXPECT_EQ(Replay::parse(longer.data(), longer.size(), &r, &error), Result::corrupt_data);
}

TEST(Replay, EveryFlippedByteIsRefused) {
  const std::vector<uint8_t> image = image_of(record_local(2, 12, 4, true));
  for (size_t i = 0; i < image.size(); ++i) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
      std::vector<uint8_t> bad = image;
      bad[i] ^= mask;
      Replay r;
      std::string error;
      const Result res = Replay::parse(bad.data(), bad.size(), &r, &error);
      ASSERT_TRUE(res == Result::corrupt_data || res == Result::version_mismatch)
          << "byte " << i << " mask " << int(mask) << ": " << result_name(res);
      ASSERT_FALSE(error.empty());
    }
  }
}

TEST(Replay, NewerVersionIsAVersionMismatch) {
  std::vector<uint8_t> image = image_of(record_local(2, 5, 0));
  image[8] = 2;
  Replay r;
  std::string error;
  EXPECT_EQ(Replay::parse(image.data(), image.size(), &r, &error), Result::version_mismatch);
  EXPECT_NE(error.find("newer"), std::string::npos) << error;
}

TEST(Replay, MessagesSayWhatIsWrong) {
  std::vector<uint8_t> image = image_of(record_local(2, 5, 0));
  Replay r;
  std::string error;
  EXPECT_EQ(Replay::parse(image.data(), 20, &r, &error), Result::corrupt_data);
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  image[0] = 'X';
  EXPECT_EQ(Replay::parse(image.data(), image.size(), &r, &error), Result::corrupt_data);
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  EXPECT_EQ(Replay::parse(nullptr, 0, &r, &error), Result::corrupt_data);
}

TEST(Replay, PlayerNeedsTheGameChecksumWhenTheRecordingUsedIt) {
  struct Summed : TestGame {
    uint64_t checksum(Frame, const uint8_t*, size_t) { return hash(); }
  };
  Summed game;
  ReplayRecorder rec;
  ASSERT_EQ(rec.init(recorder_config(2, 1), bind_game(game)), Result::ok);
  EXPECT_NE(rec.replay().header().flags & kReplayGameChecksum, 0u);
  TestGame plain;
  ReplayPlayer player;
  EXPECT_EQ(player.init(rec.replay(), bind_game(plain), kStateCap), Result::invalid_argument);
}

TEST(Replay, RecorderRejectsBadConfig) {
  TestGame game;
  ReplayRecorder rec;
  ReplayRecorderConfig c = recorder_config(2, 10);
  c.max_state_size = 0;
  EXPECT_EQ(rec.init(c, bind_game(game)), Result::invalid_argument);
  c = recorder_config(9, 10);
  EXPECT_EQ(rec.init(c, bind_game(game)), Result::invalid_argument);
  EXPECT_EQ(rec.init(recorder_config(2, 10), GameCallbacks{}), Result::invalid_argument);
}

}  // namespace
}  // namespace retcon

namespace retcon {
namespace {

// Rewrites the trailing file checksum after a test edits an image on purpose.
void reseal(std::vector<uint8_t>* image) {
  const uint64_t sum = detail::xxh3_64(image->data(), image->size() - 8);
  for (int i = 0; i < 8; ++i) (*image)[image->size() - 8 + size_t(i)] = uint8_t(sum >> (8 * i));
}

// Regressions found by the replay_file fuzzer: the reader accepted what the format forbids, so
// two different files parsed to the same replay.
TEST(Replay, ReservedHeaderBytesMustBeZero) {
  for (size_t offset : {size_t(13), size_t(18), size_t(19)}) {
    std::vector<uint8_t> image = image_of(record_local(2, 5, 0));
    image[offset] = 1;
    reseal(&image);
    Replay r;
    std::string error;
    EXPECT_EQ(Replay::parse(image.data(), image.size(), &r, &error), Result::corrupt_data) << offset;
    EXPECT_NE(error.find("reserved"), std::string::npos) << error;
  }
}

TEST(Replay, PredictedInputStatusIsRefused) {
  ReplayHeader h;
  h.num_players = 1;
  h.input_size = 1;
  h.frame_rate = 60;
  Replay replay(h);
  const uint8_t input = 7;
  const InputStatus predicted = InputStatus::predicted;
  replay.append_frame(&input, &predicted);
  std::vector<uint8_t> image;
  ASSERT_EQ(replay.serialize(&image), Result::ok);
  Replay r;
  std::string error;
  EXPECT_EQ(Replay::parse(image.data(), image.size(), &r, &error), Result::corrupt_data);
  EXPECT_NE(error.find("status"), std::string::npos) << error;
}

// Timed decisions are recorded on the frame they were applied, the same on every machine, and a
// replay plays them back: through the player, through the sync test, and after a file round trip.
TEST(Replay, TimedDecisionsAreRecordedAndPlayedBack) {
  MatchSetup setup;
  setup.machines = 3;
  setup.decide_at = 100;
  InMemoryNetwork net;
  std::vector<std::unique_ptr<RecordedMachine>> ms;
  run_recorded_match(setup, net, &ms);
  if (HasFatalFailure()) return;
  const Replay& first = ms[0]->rec.replay();
  ASSERT_EQ(first.decisions().size(), 2u);
  EXPECT_NE(first.header().flags & kReplayDecisions, 0u);
  for (auto& m : ms) {
    ASSERT_EQ(m->rec.error(), Result::ok);
    const Replay& r = m->rec.replay();
    ASSERT_EQ(r.decisions().size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(r.decisions()[k].frame, first.decisions()[k].frame);
      EXPECT_EQ(r.decisions()[k].sender, first.decisions()[k].sender);
    }
    const FrameInputs at = r.inputs(r.decisions()[0].frame);
    ASSERT_GE(at.decision_count, 1u);
    EXPECT_EQ(at.decisions[0].bytes[0], uint8_t('D'));
    TestGame replayed;
    const ReplayVerdict v = play(r, replayed);
    EXPECT_FALSE(v.diverged()) << "first bad " << v.first_bad;
  }
  // Without its decisions the same inputs give other states: the replay really carries them.
  std::vector<uint8_t> image;
  ASSERT_EQ(first.serialize(&image), Result::ok);
  Replay back;
  std::string error;
  ASSERT_EQ(Replay::parse(image.data(), image.size(), &back, &error), Result::ok) << error;
  ASSERT_EQ(back.decisions().size(), 2u);
  TestGame replayed;
  EXPECT_FALSE(play(back, replayed).diverged());
  TestGame checked;
  ReplaySyncTestResult st;
  ASSERT_EQ(sync_test_replay(back, bind_game(checked), kStateCap, 3, nullptr, &st), Result::ok);
  EXPECT_TRUE(st.deterministic());
  EXPECT_TRUE(st.matches_recording()) << "first bad " << st.first_bad;
  Replay stripped(first.header());
  for (Frame f = 0; f < first.frame_count(); ++f) {
    const FrameInputs in = first.inputs(f);
    stripped.append_frame(in.bytes, in.status);
  }
  for (const ReplayCheckpoint& c : first.checkpoints()) stripped.append_checkpoint(c.frame, c.checksum, nullptr, 0);
  TestGame without;
  EXPECT_TRUE(play(stripped, without).diverged());
  // A damaged decision record is refused, naming it.
  std::vector<uint8_t> bad = image;
  const size_t trailer = 8, record = 4 + 1 + 1 + 3;
  bad[bad.size() - trailer - record + 4] = 9;  // the last decision's sender: no such player
  const uint64_t sum = detail::xxh3_64(bad.data(), bad.size() - trailer);
  std::memcpy(bad.data() + bad.size() - trailer, &sum, trailer);
  EXPECT_EQ(Replay::parse(bad.data(), bad.size(), &back, &error), Result::corrupt_data);
  EXPECT_NE(error.find("decision"), std::string::npos) << error;
}

}  // namespace
}  // namespace retcon
