// Fighter: round timer, knock-outs, round wins, match end, next round and next match.
#include <gtest/gtest.h>

#include "fighter_moves.h"
#include "test_inputs.h"

namespace fighter::test {
namespace {

void run(FighterState& s, int frames, FighterEffects* fx = nullptr) {
  for (int i = 0; i < frames; ++i) step(s, {0, 0, 0, 0}, 0, fx);
}

// p0 knocks p1 out with a jab (p1 on 1 health).
void knock_out_p1(FighterState& s) {
  skip_intro(s);
  s.p[0].x = px(300);
  s.p[1].x = px(360);
  s.p[1].health = 1;
  step(s, {kInputLight, 0, 0, 0});
  run(s, move_data(kMoveLight).startup);
  ASSERT_EQ(s.p[1].health, 0);
}

TEST(Rounds, KnockOutEndsTheRoundAndTheNextStartsFresh) {
  FighterState s;
  fighter_init(s, 2, 1);
  EXPECT_EQ(s.phase, kPhaseIntro);
  const int32_t start_x0 = s.p[0].x;
  knock_out_p1(s);
  EXPECT_EQ(s.p[1].move, kMoveKnockedOut);
  EXPECT_EQ(s.phase, kPhaseRoundOver);
  EXPECT_EQ(s.round_winner, 0);
  EXPECT_EQ(s.p[0].round_wins, 1);
  EXPECT_EQ(s.rounds_played, 1);
  EXPECT_EQ(s.round_results[0], 0);
  EXPECT_EQ(s.match_winner, kNoWinner);

  run(s, kRoundOverFrames);
  EXPECT_EQ(s.phase, kPhaseIntro);
  EXPECT_EQ(s.round, 2);
  EXPECT_EQ(s.round_timer, kRoundFrames);
  EXPECT_EQ(s.p[1].health, kMaxHealth);
  EXPECT_EQ(s.p[1].move, kMoveIdle);
  EXPECT_EQ(s.p[0].x, start_x0);
  EXPECT_EQ(s.p[0].round_wins, 1) << "round wins carry over within the match";
  run(s, kIntroFrames);
  EXPECT_EQ(s.phase, kPhaseFight);
}

TEST(Rounds, TwoRoundWinsEndTheMatchThenANewMatchStarts) {
  FighterState s;
  fighter_init(s, 2, 1);
  FighterEffects fx;
  knock_out_p1(s);
  run(s, kRoundOverFrames);
  knock_out_p1(s);
  EXPECT_EQ(s.match_winner, 0);
  EXPECT_EQ(s.p[0].match_wins, 1);
  run(s, kRoundOverFrames, &fx);
  EXPECT_EQ(s.phase, kPhaseMatchOver);
  bool saw_match_end = false;
  for (int i = 0; i < fx.count; ++i) saw_match_end |= fx.items[i].type == kEffectMatchEnd;
  EXPECT_TRUE(saw_match_end);
  run(s, kMatchOverFrames);
  EXPECT_EQ(s.match, 1);
  EXPECT_EQ(s.round, 1);
  EXPECT_EQ(s.phase, kPhaseIntro);
  EXPECT_EQ(s.p[0].round_wins, 0);
  EXPECT_EQ(s.p[0].match_wins, 1);
  EXPECT_EQ(s.rounds_played, 0);
  EXPECT_EQ(s.match_winner, kNoWinner);
}

TEST(Rounds, TimerRunsOutAndMostHealthWins) {
  FighterState s;
  fighter_init(s, 2, 1);
  skip_intro(s);
  run(s, 100);
  EXPECT_EQ(s.round_timer, kRoundFrames - 100);
  s.round_timer = 1;
  s.p[1].health = 400;
  FighterEffects fx;
  run(s, 1, &fx);
  EXPECT_EQ(s.phase, kPhaseRoundOver);
  EXPECT_EQ(s.round_winner, 0);
  ASSERT_GE(fx.count, 1);
  EXPECT_EQ(fx.items[fx.count - 1].type, kEffectRoundEnd);
  EXPECT_EQ(fx.items[fx.count - 1].other, 1) << "time over";
}

TEST(Rounds, EqualHealthAtTimeOverIsADraw) {
  FighterState s;
  fighter_init(s, 2, 1);
  skip_intro(s);
  s.round_timer = 1;
  run(s, 1);
  EXPECT_EQ(s.round_winner, kDraw);
  EXPECT_EQ(s.p[0].round_wins + s.p[1].round_wins, 0);
  EXPECT_EQ(s.round_results[0], kDraw);
}

TEST(Rounds, FullTimerRoundEndsByItself) {
  FighterState s;
  fighter_init(s, 2, 1);
  run(s, kIntroFrames + kRoundFrames);
  EXPECT_EQ(s.phase, kPhaseRoundOver);
  EXPECT_EQ(s.round_winner, kDraw);
}

TEST(Rounds, LastFighterStandingWinsAFourPlayerRound) {
  FighterState s;
  fighter_init(s, 4, 1);
  skip_intro(s);
  s.p[0].health = 0;
  s.p[1].health = 0;
  run(s, 1);
  EXPECT_EQ(s.phase, kPhaseFight) << "two still standing";
  s.p[3].health = 0;
  run(s, 1);
  EXPECT_EQ(s.phase, kPhaseRoundOver);
  EXPECT_EQ(s.round_winner, 2);
}

TEST(Rounds, EndlessDrawsStillEndTheMatch) {
  FighterState s;
  fighter_init(s, 2, 1);
  for (int r = 0; r < kMaxRoundsPerMatch; ++r) {
    skip_intro(s);
    s.round_timer = 1;
    run(s, 1);
    ASSERT_EQ(s.round_winner, kDraw);
    run(s, kRoundOverFrames);
  }
  EXPECT_EQ(s.phase, kPhaseMatchOver);
  EXPECT_EQ(s.match_winner, kDraw);
}

}  // namespace
}  // namespace fighter::test
