// Both states on a desync (P2PConfig::share_desync_states): a game that desyncs at a known frame
// gets, on every machine, the other machine's exact saved state of the desync frame, under loss,
// in every save mode; the cap holds; it is off by default; a peer whose state does not match the
// checksum it reported has it dropped, and the match goes on.
#include <algorithm>

#include <gtest/gtest.h>

#include "session/desync_states.h"
#include "support/channel_insider.h"
#include "support/match_harness.h"
#include "support/rejoin_checks.h"

namespace retcon::test {
namespace {

// Machine `diverging` differs from frame 95 on (its state at the start of 96); the first
// checksummed frame after it is 100 (interval 10).
constexpr Frame kDivergeAt = 95;
constexpr Frame kDesyncFrame = 100;

MatchOptions lossy_match(uint32_t machines) {
  MatchOptions o;
  o.machines = machines;
  o.frames = 400;
  o.desync_interval = 10;
  o.link.latency_us = 40000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.1;
  o.link.duplicate = 0.02;
  o.link.reorder = 0.02;
  o.share_desync_states = true;
  return o;
}

const TestGame::DesyncStatesSeen* states_from(const Machine& m, PlayerIndex player) {
  for (const auto& s : m.game.desync_states)
    if (s.player == player) return &s;
  return nullptr;
}

void run_and_settle(Match& match) {
  match.run(6000);
  for (int t = 0; t < 240; ++t) match.tick();  // the states are on their way
}

// Every machine of a pair that disagrees holds the other's exact bytes of the desync frame.
void expect_exchanged(Match& match, uint32_t a, uint32_t b, const char* what, Frame frame = kDesyncFrame) {
  for (const auto& [me, other] : {std::pair{a, b}, std::pair{b, a}}) {
    const TestGame::DesyncStatesSeen* s = states_from(match.machine(me), PlayerIndex(other));
    ASSERT_NE(s, nullptr) << what << ": machine " << me << " got no state from machine " << other;
    EXPECT_EQ(s->frame, frame) << what;
    EXPECT_EQ(s->remote, match.machine(other).game.captured) << what << ": machine " << me << " has machine "
                                                               << other << "'s exact state";
    ASSERT_TRUE(s->has_local) << what;
    EXPECT_EQ(s->local, match.machine(me).game.captured) << what << ": and its own";
    EXPECT_NE(s->local, s->remote) << what;
    EXPECT_FALSE(s->text_local.empty()) << what << ": both described";
    EXPECT_FALSE(s->text_remote.empty()) << what;
    EXPECT_NE(s->text_local, s->text_remote) << what;
    EXPECT_GE(match.machine(me).game.desync_detected_with_state, 1u) << what << ": desync_detected carries our bytes";
  }
}

TEST(DesyncStates, TwoPlayersUnderLossGetEachOthersExactStateInEverySaveMode) {
  for (const SaveMode mode : {SaveMode::automatic, SaveMode::sparse, SaveMode::every_frame}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      MatchOptions o = lossy_match(2);
      o.save_mode = mode;
      o.seed = seed;
      Match match(o);
      ASSERT_TRUE(match.build());
      for (uint32_t m = 0; m < 2; ++m) match.machine(m).game.capture_frame = kDesyncFrame;
      match.machine(1).game.diverge_at = kDivergeAt;
      run_and_settle(match);
      EXPECT_EQ(match.errors(), 0u);
      const std::string what = "mode " + std::to_string(int(mode)) + " seed " + std::to_string(seed);
      expect_exchanged(match, 0, 1, what.c_str());
      for (uint32_t m = 0; m < 2; ++m) {
        EXPECT_EQ(match.machine(m).game.desync_states.size(), 1u) << what << ": once per peer";
      }
    }
  }
}

TEST(DesyncStates, ThreePlayersUnderLossEachGetsTheStateOfEveryMachineItDisagreesWith) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    MatchOptions o = lossy_match(3);
    o.seed = seed;
    Match match(o);
    ASSERT_TRUE(match.build());
    for (uint32_t m = 0; m < 3; ++m) match.machine(m).game.capture_frame = kDesyncFrame;
    match.machine(2).game.diverge_at = kDivergeAt;
    run_and_settle(match);
    EXPECT_EQ(match.errors(), 0u);
    const std::string what = "seed " + std::to_string(seed);
    expect_exchanged(match, 0, 2, what.c_str());
    expect_exchanged(match, 1, 2, what.c_str());
    EXPECT_EQ(states_from(match.machine(0), 1), nullptr) << what << ": machines that agree exchange nothing";
    EXPECT_EQ(states_from(match.machine(1), 0), nullptr) << what;
  }
}

TEST(DesyncStates, OffByDefault) {
  MatchOptions o = lossy_match(2);
  o.share_desync_states = false;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(match);
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_GE(match.count_events(m, EventType::desync_detected), 1u);
    EXPECT_EQ(match.count_events(m, EventType::desync_states), 0u);
    EXPECT_EQ(match.machine(m).game.desync_detected_with_state, 0u);
  }
  P2PConfig defaults;
  EXPECT_FALSE(defaults.share_desync_states);
}

// A state above a machine's cap is neither sent by it nor taken by it; the match goes on.
TEST(DesyncStates, CapRespected) {
  MatchOptions o = lossy_match(2);
  o.state_padding = 400;                 // states of about 470 bytes
  o.desync_state_max_size = {0, 200};    // machine 1 takes and sends at most 200
  Match match(o);
  ASSERT_TRUE(match.build());
  for (uint32_t m = 0; m < 2; ++m) match.machine(m).game.capture_frame = kDesyncFrame;
  match.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(match);
  EXPECT_EQ(match.errors(), 0u);
  ASSERT_GT(match.machine(0).game.captured.size(), 200u);
  EXPECT_TRUE(match.machine(1).game.desync_states.empty()) << "machine 0's state is larger than machine 1 takes";
  EXPECT_TRUE(match.machine(0).game.desync_states.empty()) << "machine 1 sends no state above its cap";
  EXPECT_EQ(match.machine(1).game.desync_detected_with_state, 0u) << "nothing above the cap is kept";
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_GE(match.machine(m).session->current_frame(), o.frames) << "the match went on";
    EXPECT_GE(match.count_events(m, EventType::desync_detected), 1u);
  }

  // Within the cap: delivered.
  MatchOptions big = o;
  big.desync_state_max_size = {0, 256 + 400};
  Match fits(big);
  ASSERT_TRUE(fits.build());
  for (uint32_t m = 0; m < 2; ++m) fits.machine(m).game.capture_frame = kDesyncFrame;
  fits.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(fits);
  expect_exchanged(fits, 0, 1, "within the cap");
}

// Machine 1 reports checksums its bytes do not give (a liar, or a peer that forges its state):
// neither side takes the other's state (each check fails), nobody crashes, the match goes on.
TEST(DesyncStates, AStateThatDoesNotMatchItsChecksumIsDroppedAndTheMatchGoesOn) {
  MatchOptions o = lossy_match(2);
  o.checksum_salt = {0, 0x5a17};
  Match match(o);
  ASSERT_TRUE(match.build());
  run_and_settle(match);
  EXPECT_EQ(match.errors(), 0u);
  for (uint32_t m = 0; m < 2; ++m) {
    EXPECT_GE(match.count_events(m, EventType::desync_detected), 1u) << "every checksum differs";
    EXPECT_TRUE(match.machine(m).game.desync_states.empty()) << "machine " << m << " took a state that does not match";
    EXPECT_GE(match.machine(m).session->confirmed_frame(), o.frames) << "the match went on";
  }
  // The states agree (only the checksum function differs): nothing else went wrong.
  for (Frame f = 0; f <= o.frames; ++f)
    ASSERT_EQ(match.machine(0).hashes[size_t(f)], match.machine(1).hashes[size_t(f)]) << f;
}

// Notices of desync states that never come (a peer that announces and never sends, or an insider
// forging them in its name) pinned the slots of the frames they name for good. Here machines 2
// and 3 "announce" (forged) the four frames machine 0 keeps (interval 60: four slots), early in
// the match; on the old code no later state could be kept, so when machines 0 and 1 really
// desync at frame 1020, neither got the other's state. The notices are forgotten after
// kDesyncNoticeTimeoutUs: the real states still arrive.
TEST(DesyncStates, NoticesWhoseStateNeverComesAreForgottenAndTheRealExchangeHappens) {
  MatchOptions o = lossy_match(4);
  o.link.loss = 0.0;
  o.link.duplicate = o.link.reorder = 0.0;
  o.desync_interval = 60;
  o.frames = 1300;
  constexpr Frame kLater = 1020;  // the desync: about 13 s after the forgeries
  Match match(o);
  ASSERT_TRUE(match.build());
  for (uint32_t m = 0; m < 4; ++m) match.machine(m).game.capture_frame = kLater;
  match.machine(1).game.diverge_at = kLater - 5;
  Insider insider(match);
  int forged = 0;
  for (int t = 0; t < 6000; ++t) {
    insider.tap_all();
    const Frame confirmed = match.machine(0).session->confirmed_frame();
    if (forged == 0 && confirmed >= 270 && confirmed % 60 == 30) {
      const Frame newest = confirmed / 60 * 60;
      for (int k = 0; k < 4; ++k) {
        detail::DesyncStateNotice n;
        n.frame = newest - 60 * k;
        n.size = 100;
        n.sum = 0x1234;
        uint8_t body[detail::kDesyncNoticeSize];
        const size_t size = detail::encode_desync_notice(n, body);
        if (insider.forge(k < 2 ? 2 : 3, 0, uint8_t(detail::ChannelStream::desync_states), body, size)) ++forged;
      }
    }
    match.tick();
    bool done = true;
    for (uint32_t m = 0; m < 4; ++m) done = done && match.machine(m).session->confirmed_frame() >= o.frames;
    if (done) break;
  }
  for (int t = 0; t < 240; ++t) {
    insider.tap_all();
    match.tick();
  }
  ASSERT_EQ(forged, 4);
  expect_exchanged(match, 0, 1, "after forged notices", kLater);
}

// A machine that left and rejoined (session/rejoin.h) exchanges desync states again: on the old
// code the exchange with it had ended for good when it left, so a desync after its return gave
// neither machine the other's state.
TEST(DesyncStates, AMachineThatRejoinedExchangesStatesAgain) {
  MatchOptions o = lossy_match(2);
  o.link.loss = 0.03;
  o.frames = 1300;
  o.allow_rejoin = true;
  o.state_transfer = true;
  o.disconnect_timeout_us = 1000000;
  Match match(o);
  ASSERT_TRUE(match.build());
  crash_and_restart(match, 1, 150, 0);
  std::vector<size_t> answered;
  const Frame live = accept_until_seen(match, answered, 0, 1, &Seen::rejoined, 2000);
  ASSERT_NE(live, kNullFrame) << "it came back";
  const Frame desync = (live / 10 + 12) * 10;
  ASSERT_LT(desync + 100, o.frames);
  for (uint32_t m = 0; m < 2; ++m) match.machine(m).game.capture_frame = desync;
  match.machine(1).game.diverge_at = desync - 5;
  run_and_settle(match);
  expect_exchanged(match, 0, 1, "after a rejoin", desync);
}

TEST(DesyncStates, ConfigChecks) {
  TestGame game;
  P2PConfig c;
  c.session.callbacks = bind_game(game);
  c.session.num_players = 2;
  c.session.input_size = 2;
  c.session.max_state_size = 256;
  c.players[1].kind = PlayerKind::remote;
  retcon::make_ip_address("127.0.0.1", 7000, &c.players[1].address);
  c.share_desync_states = true;
  const char* why = validate_p2p_config(c);
  EXPECT_EQ(why, nullptr) << why;
  c.desync_state_max_size = 257;
  EXPECT_NE(validate_p2p_config(c), nullptr) << "above max_state_size";
  c.desync_state_max_size = 0;
  c.desync_interval = 0;
  EXPECT_NE(validate_p2p_config(c), nullptr) << "without desync detection there is no desync";
}

// The captured save of `frame` on `m` (TestGame::capture_every), or null.
const std::vector<uint8_t>* capture_of(const Machine& m, Frame frame) {
  const TestGame& g = m.game;
  if (g.capture_every <= 0 || frame % g.capture_every != 0) return nullptr;
  const size_t k = size_t(frame / g.capture_every);
  return k < g.captures.size() && !g.captures[k].empty() ? &g.captures[k] : nullptr;
}

// Matches of 4 to 8 machines (2 players on some, spectators on some, every save mode, 10-20%
// loss, large states paced slowly on some): `differs(a, b)` says which machines' states differ.
// Every machine gets, from each machine it disagrees with, that machine's exact bytes of a frame
// both compared (the first frame whose checksums differed; lost checksum reports may make that
// 110 rather than 100, and a pair may exchange two frames when each side saw a different one
// first), with its own bytes beside them; machines that agree exchange nothing.
template <typename Differs>
void expect_every_disagreeing_pair_exchanges(Match& match, uint32_t n, Differs differs, const std::string& what) {
  for (uint32_t me = 0; me < n; ++me) {
    for (uint32_t other = 0; other < n; ++other) {
      if (me == other) continue;
      const TestGame::DesyncStatesSeen* s = states_from(match.machine(me), PlayerIndex(other));
      if (!differs(me, other)) {
        EXPECT_EQ(s, nullptr) << what << ": machines " << me << " and " << other << " agree and exchange nothing";
        continue;
      }
      ASSERT_NE(s, nullptr) << what << ": machine " << me << " got no state from machine " << other;
      // What `other` compared: its final save of the frame when its game is deterministic; else
      // the copy it kept when it took the checksum (its later re-simulations of the frame differ),
      // which is what it shows as its own in its event for `me` of the same frame.
      const std::vector<uint8_t>* theirs = nullptr;
      if (match.machine(other).game.nondeterministic_from < 0) {
        theirs = capture_of(match.machine(other), s->frame);
      } else {
        for (const auto& back : match.machine(other).game.desync_states)
          if (back.player == PlayerIndex(me) && back.frame == s->frame) theirs = &back.local;
      }
      ASSERT_NE(theirs, nullptr) << what << ": frame " << s->frame;
      EXPECT_EQ(s->remote, *theirs) << what << ": machine " << me << " has machine " << other << "'s exact state";
      ASSERT_TRUE(s->has_local) << what;
      if (match.machine(me).game.nondeterministic_from < 0) {
        const std::vector<uint8_t>* mine = capture_of(match.machine(me), s->frame);
        ASSERT_NE(mine, nullptr) << what;
        EXPECT_EQ(s->local, *mine) << what << ": and its own";
      }
      EXPECT_NE(s->local, s->remote) << what;
    }
  }
}

MatchOptions many_machines(uint32_t n, uint64_t seed) {
  MatchOptions o = lossy_match(n);
  o.seed = seed;
  o.save_mode = SaveMode(seed % 3);
  o.random_inputs = true;
  o.desync_interval = seed % 2 ? 10 : 30;
  if (seed % 2 == 0) {  // two players on some machines
    o.owner.clear();
    for (uint32_t p = 0; p < std::min(8u, n + 2); ++p) o.owner.push_back(p % n);
  }
  o.spectators = seed % 3 == 0 ? 2 : 0;
  if (seed % 4 == 3) {  // large states, slowly: transfers overlap
    o.state_padding = 20000;
    o.transfer_bytes_per_second = 64 << 10;
    o.link.loss = 0.2;
  }
  return o;
}

// One machine's game is non-deterministic (re-simulated frames differ): it gets every other
// machine's state, each of them gets its, and the others exchange nothing among themselves.
TEST(DesyncStates, FourToEightMachinesWithOneNonDeterministicGameEveryPairWithItExchanges) {
  for (const uint32_t n : {4u, 5u, 8u}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const uint32_t bad = uint32_t(seed * 3) % n;
      MatchOptions o = many_machines(n, seed);
      Match match(o);
      ASSERT_TRUE(match.build());
      for (uint32_t m = 0; m < n; ++m) match.machine(m).game.capture_every = o.desync_interval;
      match.machine(bad).game.nondeterministic_from = kDivergeAt;
      run_and_settle(match);
      EXPECT_EQ(match.errors(), 0u);
      const std::string what = std::to_string(n) + " machines, seed " + std::to_string(seed) + ", machine " +
                               std::to_string(bad) + " non-deterministic";
      expect_every_disagreeing_pair_exchanges(
          match, n, [bad](uint32_t a, uint32_t b) { return a == bad || b == bad; }, what);
    }
  }
}

// Two groups whose games differ (the first half diverges at frame 95), and machine 0
// non-deterministic besides: every machine disagrees with several, each pair across the groups
// and every pair with machine 0 exchanges (in an 8-machine match, 38 states delivered).
TEST(DesyncStates, EightMachinesInTwoGroupsEveryPairThatDisagreesExchanges) {
  for (const uint32_t n : {4u, 8u}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      MatchOptions o = many_machines(n, seed);
      Match match(o);
      ASSERT_TRUE(match.build());
      for (uint32_t m = 0; m < n; ++m) {
        match.machine(m).game.capture_every = o.desync_interval;
        if (m < n / 2) match.machine(m).game.diverge_at = kDivergeAt;
      }
      match.machine(0).game.nondeterministic_from = kDivergeAt;
      run_and_settle(match);
      EXPECT_EQ(match.errors(), 0u);
      const std::string what = std::to_string(n) + " machines in two groups, seed " + std::to_string(seed);
      expect_every_disagreeing_pair_exchanges(
          match, n, [n](uint32_t a, uint32_t b) { return a == 0 || b == 0 || (a < n / 2) != (b < n / 2); }, what);
    }
  }
}

}  // namespace
}  // namespace retcon::test
