// Fighter: bots and scripted inputs change like a person's, and deterministically.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "test_inputs.h"

namespace fighter::test {
namespace {

struct InputStats {
  double mean_hold = 0;  // mean length of runs of an unchanged input
  size_t distinct = 0;
  uint32_t seen_bits = 0;
};

InputStats measure(const std::vector<uint16_t>& seq) {
  InputStats st;
  std::set<uint16_t> values;
  size_t runs = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    values.insert(seq[i]);
    st.seen_bits |= seq[i];
    if (i == 0 || seq[i] != seq[i - 1]) ++runs;
  }
  st.mean_hold = runs ? static_cast<double>(seq.size()) / static_cast<double>(runs) : 0;
  st.distinct = values.size();
  return st;
}

std::vector<uint16_t> bot_inputs(int player, uint32_t seed, int frames, int players = 2) {
  FighterGame game(players, 1);
  std::vector<FighterBot> bots;
  for (int p = 0; p < players; ++p) bots.emplace_back(seed + static_cast<uint32_t>(p) * 7, p);
  std::vector<uint16_t> mine;
  for (int f = 0; f < frames; ++f) {
    Inputs in;
    in.players = static_cast<uint32_t>(players);
    for (int p = 0; p < players; ++p) {
      const uint16_t b = bots[static_cast<size_t>(p)].next_input(game.state());
      in.set(p, b);
      if (p == player) mine.push_back(b);
    }
    game.advance_frame(game.state().frame, in.frame(), 0);
  }
  return mine;
}

TEST(Bot, InputsAreHeldForSeveralFramesAndVaried) {
  for (uint32_t seed : {1u, 2u, 99u}) {
    const InputStats st = measure(bot_inputs(0, seed, 5000));
    EXPECT_GT(st.mean_hold, 3.0) << "seed " << seed;
    EXPECT_LT(st.mean_hold, 30.0) << "seed " << seed << ": it should not stand still";
    EXPECT_GE(st.distinct, 6u) << "seed " << seed;
    for (uint16_t bit : {kInputLeft, kInputRight, kInputUp, kInputDown, kInputLight, kInputHeavy,
                         kInputBlock}) {
      EXPECT_NE(st.seen_bits & bit, 0u) << "seed " << seed << " never used bit " << bit;
    }
  }
}

TEST(Bot, AttacksAreShortPresses) {
  const std::vector<uint16_t> seq = bot_inputs(1, 5, 5000);
  int presses = 0;
  int pressed_frames = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    const bool on = (seq[i] & (kInputLight | kInputHeavy)) != 0;
    if (on) ++pressed_frames;
    if (on && (i == 0 || (seq[i - 1] & (kInputLight | kInputHeavy)) == 0)) ++presses;
  }
  ASSERT_GT(presses, 10);
  const double mean = static_cast<double>(pressed_frames) / presses;
  EXPECT_GE(mean, 2.0);
  EXPECT_LE(mean, 6.0);
}

TEST(Bot, SameSeedSameInputs) {
  EXPECT_EQ(bot_inputs(0, 4, 2000), bot_inputs(0, 4, 2000));
  EXPECT_NE(bot_inputs(0, 4, 2000), bot_inputs(0, 5, 2000));
}

TEST(Bot, FightsWinRoundsInFourPlayerGames) {
  const Recording rec = record_bots(4, 2, 31, 20000);
  FighterGame game(4, 2);
  int rounds = 0;
  for (const Inputs& in : rec.inputs) {
    const int32_t before = game.state().rounds_played;
    game.advance_frame(game.state().frame, in.frame(), 0);
    if (game.state().rounds_played != before) ++rounds;
  }
  EXPECT_GT(rounds, 1);
  EXPECT_GT(game.counters().effects_by_type[kEffectKnockOut], 0u);
}

TEST(Scripted, RepeatsWithHoldsAndPresses) {
  const ScriptedInputs s0(0), s1(1);
  std::vector<uint16_t> seq;
  for (int f = 0; f < 3 * ScriptedInputs::period(); ++f) {
    ASSERT_EQ(s0.at(f), s0.at(f + ScriptedInputs::period()));
    seq.push_back(s0.at(f));
  }
  const InputStats st = measure(seq);
  EXPECT_GT(st.mean_hold, 3.0);
  EXPECT_GE(st.distinct, 8u);
  int differ = 0;
  for (int f = 0; f < ScriptedInputs::period(); ++f) differ += s0.at(f) != s1.at(f);
  EXPECT_GT(differ, 0) << "players are out of phase";
}

}  // namespace
}  // namespace fighter::test

namespace fighter::test {
namespace {

// Fraction of frames the bot holds toward / away from its opponent at a given distance.
void toward_away(int32_t gap_px, double* toward, double* away) {
  int t = 0, a = 0;
  const int kTrials = 4000;
  FighterState s;
  fighter_init(s, 2, 1);
  skip_intro(s);
  s.p[0].x = px(100);
  s.p[1].x = px(100 + gap_px);
  FighterBot bot(12, 0);
  for (int i = 0; i < kTrials; ++i) {
    const uint16_t b = bot.next_input(s);  // the state stays put: only the bot's view matters
    t += (b & kInputRight) != 0;
    a += (b & kInputLeft) != 0;
    ++s.frame;
  }
  *toward = static_cast<double>(t) / kTrials;
  *away = static_cast<double>(a) / kTrials;
}

TEST(Bot, ApproachesFromAfarAndBacksOffUpClose) {
  double far_toward, far_away, near_toward, near_away;
  toward_away(400, &far_toward, &far_away);
  toward_away(50, &near_toward, &near_away);
  EXPECT_GT(far_toward, 2 * far_away);
  EXPECT_GT(far_toward, near_toward);
  EXPECT_GT(near_away, far_away);
}

}  // namespace
}  // namespace fighter::test
