// Both states on a desync: every desync state a machine takes or refuses is counted per peer
// (PeerStats::desync_states_*, desync_notices_expired), by reason, so a game (or its overlay)
// sees that a peer's state was turned away and why, not only a log line. Each test makes one
// refusal happen and checks that it, and nothing else, was counted.
#include <gtest/gtest.h>

#include "session/desync_states.h"
#include "support/channel_insider.h"
#include "support/match_harness.h"

namespace retcon::test {
namespace {

constexpr Frame kDivergeAt = 95;

MatchOptions exchange_match() {
  MatchOptions o;
  o.machines = 2;
  o.frames = 400;
  o.desync_interval = 10;
  o.link.latency_us = 40000;
  o.link.jitter_us = 10000;
  o.link.loss = 0.05;
  o.share_desync_states = true;
  return o;
}

struct Counted {
  uint64_t received = 0, too_large = 0, mismatch = 0, unsolicited = 0, expired = 0;
  bool operator==(const Counted&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Counted& c) {
  return os << "{received " << c.received << ", too_large " << c.too_large << ", mismatch " << c.mismatch
            << ", unsolicited " << c.unsolicited << ", expired " << c.expired << "}";
}

// What machine `m` counted of the machine of player `player`.
Counted counted(Match& match, uint32_t m, PlayerIndex player) {
  PeerStats s{};
  EXPECT_EQ(match.machine(m).session->peer_stats(player, &s), Result::ok);
  return {s.desync_states_received, s.desync_states_refused_too_large, s.desync_states_refused_mismatch,
          s.desync_states_refused_unsolicited, s.desync_notices_expired};
}

void run_and_settle(Match& match) {
  match.run(6000);
  for (int t = 0; t < 240; ++t) match.tick();
}

TEST(DesyncStateRefusals, AStateTakenIsCountedAsReceived) {
  Match match(exchange_match());
  ASSERT_TRUE(match.build());
  match.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(match);
  for (uint32_t m = 0; m < 2; ++m) {
    const size_t events = match.machine(m).game.desync_states.size();
    ASSERT_GE(events, 1u);  // two when lost checksum reports made each side see another frame first
    EXPECT_EQ(counted(match, m, PlayerIndex(1 - m)), (Counted{events, 0, 0, 0, 0}));
  }
}

// Machine 1 takes at most 200 bytes; machine 0's state (about 470) is refused by its channel
// before a byte is stored. Machine 1 sends nothing above its own cap, so machine 0 refuses nothing.
TEST(DesyncStateRefusals, AStateLargerThanTheCapIsCountedAsTooLarge) {
  MatchOptions o = exchange_match();
  o.state_padding = 400;
  o.desync_state_max_size = {0, 200};
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(match);
  EXPECT_TRUE(match.machine(1).game.desync_states.empty());
  EXPECT_EQ(counted(match, 1, 0), (Counted{0, 1, 0, 0, 0}));
  EXPECT_EQ(counted(match, 0, 1), (Counted{}));
}

// Machine 1 checksums with a function of its own: every checksum differs, each side sends its
// state and each refuses the other's (its bytes do not give the checksum announced).
TEST(DesyncStateRefusals, AStateThatDoesNotMatchItsChecksumIsCountedAsMismatch) {
  MatchOptions o = exchange_match();
  o.checksum_salt = {0, 0x5a17};
  Match match(o);
  ASSERT_TRUE(match.build());
  run_and_settle(match);
  EXPECT_EQ(counted(match, 0, 1), (Counted{0, 0, 1, 0, 0}));
  EXPECT_EQ(counted(match, 1, 0), (Counted{0, 0, 1, 0, 0}));
}

// An insider forges, in machine 1's name, three notices of one frame (the second and third
// repeat a frame already noticed: unsolicited) and a desync-state blob with no notice at all
// (unsolicited once it waited 10 s for one); the first notice's state never comes (expired).
// Machine 0 answers the forged notice with its real state of frame 100 (its checksum differs from
// the forged one), which machine 1 refuses: it equals its own (no desync, nothing to diff). On
// the code before, machine 1 handed the game a desync_states event although nothing desynced.
TEST(DesyncStateRefusals, ForgedNoticesAndAStateWithoutANoticeAreCounted) {
  MatchOptions o = exchange_match();
  o.link.loss = 0.0;
  o.frames = 1400;  // over 20 s: both waits of 10 s run out
  Match match(o);
  ASSERT_TRUE(match.build());
  Insider insider(match);
  int notices = 0;
  bool blob = false;
  for (int t = 0; t < 8000; ++t) {
    insider.tap_all();
    if (match.machine(0).session->confirmed_frame() >= 120 && notices < 3) {
      detail::DesyncStateNotice n;
      n.frame = 100;
      n.size = 64;
      n.sum = 0x1234;
      uint8_t body[detail::kDesyncNoticeSize];
      const size_t size = detail::encode_desync_notice(n, body);
      if (insider.forge(1, 0, uint8_t(detail::ChannelStream::desync_states), body, size)) ++notices;
    } else if (notices == 3 && !blob) {
      uint8_t state[64] = {1, 2, 3};
      blob = insider.forge_blob(1, 0, 0x7a5e0001, detail::kDesyncStateTag, 110, state, sizeof state);
    }
    match.tick();
    if (match.machine(0).session->confirmed_frame() >= o.frames && match.machine(1).session->confirmed_frame() >= o.frames)
      break;
  }
  ASSERT_EQ(notices, 3);
  ASSERT_TRUE(blob);
  EXPECT_EQ(match.errors(), 0u);
  EXPECT_EQ(match.count_events(0, EventType::desync_detected), 0u);
  EXPECT_TRUE(match.machine(0).game.desync_states.empty());
  EXPECT_EQ(counted(match, 0, 1), (Counted{0, 0, 0, 3, 1})) << "two repeated notices and a state without one";
  EXPECT_TRUE(match.machine(1).game.desync_states.empty()) << "machine 0's answer equals machine 1's own state";
  EXPECT_EQ(counted(match, 1, 0), (Counted{0, 0, 0, 1, 0}));
  EXPECT_GE(match.machine(0).session->confirmed_frame(), o.frames) << "the match went on";
}

// Spectators and sessions without share_desync_states count nothing.
TEST(DesyncStateRefusals, OffCountsNothing) {
  MatchOptions o = exchange_match();
  o.share_desync_states = false;
  o.state_padding = 400;
  Match match(o);
  ASSERT_TRUE(match.build());
  match.machine(1).game.diverge_at = kDivergeAt;
  run_and_settle(match);
  EXPECT_EQ(counted(match, 0, 1), (Counted{}));
  EXPECT_EQ(counted(match, 1, 0), (Counted{}));
}

}  // namespace
}  // namespace retcon::test
