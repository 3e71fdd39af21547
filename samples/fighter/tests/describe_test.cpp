// Fighter: the readable dump of a state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_inputs.h"

namespace fighter::test {
namespace {

std::string describe(const FighterState& s) {
  std::string out;
  const retcon::TextSink sink{&out, [](void* ctx, const char* t, size_t n) {
                                static_cast<std::string*>(ctx)->append(t, n);
                              }};
  fighter_describe(s, sink);
  return out;
}

TEST(Describe, ShowsFrameRoundAndEveryPlayer) {
  FighterState s;
  fighter_init(s, 3, 1);
  skip_intro(s);
  step(s, {kInputLight, kInputLeft, 0});  // p1 faces left (nearest: p0)
  const std::string text = describe(s);
  EXPECT_NE(text.find("frame 61"), std::string::npos) << text;
  EXPECT_NE(text.find("round 1"), std::string::npos) << text;
  EXPECT_NE(text.find("phase fight"), std::string::npos) << text;
  EXPECT_NE(text.find("p0 pos ("), std::string::npos) << text;
  EXPECT_NE(text.find("p2 pos ("), std::string::npos) << text;
  EXPECT_EQ(text.find("p3 pos"), std::string::npos) << text;
  EXPECT_NE(text.find("move light frame 0"), std::string::npos) << text;
  EXPECT_NE(text.find("move walk"), std::string::npos) << text;
  EXPECT_NE(text.find("health 1000/1000"), std::string::npos) << text;
  EXPECT_NE(text.find("vel (-3.00, 0.00)"), std::string::npos) << text;
}

TEST(Describe, AdapterDescribesASavedBuffer) {
  FighterGame game(2, 1);
  std::vector<uint8_t> buf(FighterGame::state_size());
  game.save_state(0, buf.data(), buf.size());
  std::string out;
  const retcon::TextSink sink{&out, [](void* ctx, const char* t, size_t n) {
                                static_cast<std::string*>(ctx)->append(t, n);
                              }};
  game.describe_state(0, buf.data(), buf.size(), sink);
  EXPECT_EQ(out, describe(game.state()));
  out.clear();
  game.describe_state(0, buf.data(), 3, sink);
  EXPECT_NE(out.find("not a fighter state"), std::string::npos);
}

TEST(Describe, NegativeFixedPointIsReadable) {
  FighterState s;
  fighter_init(s, 2, 1);
  s.p[0].vx = -(3 * kFixOne + kFixOne / 2);
  EXPECT_NE(describe(s).find("vel (-3.50, 0.00)"), std::string::npos) << describe(s);
}

}  // namespace
}  // namespace fighter::test
