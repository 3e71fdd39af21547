// A real UDP match over loopback: two P2P sessions in one process, each on its own socket bound
// to port 0. Time is still virtual; loopback datagrams are ready as soon as they are sent.
#include <memory>

#include <gtest/gtest.h>

#include "retcon/p2p.h"
#include "support/test_game.h"
#include "support/two_machines.h"

namespace retcon::test {
namespace {

// Two sessions, each on its own socket bound to port 0 of `host`, play 300 confirmed frames and
// agree on every frame's state.
void play_over_loopback(const char* host) {
  std::unique_ptr<UdpTransport> sock[2];
  ASSERT_EQ(UdpTransport::open(host, 0, &sock[0]), Result::ok) << host;
  ASSERT_EQ(UdpTransport::open(host, 0, &sock[1]), Result::ok) << host;
  PeerAddress addr[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(make_ip_address(host, sock[i]->local_port(), &addr[i]), Result::ok);

  TestGame game[2];
  std::vector<uint64_t> hashes[2];
  std::unique_ptr<P2PSession> s[2];
  for (int m = 0; m < 2; ++m) {
    hashes[m].assign(400, 0);
    game[m].start_hashes = &hashes[m];
    const P2PConfig c = two_player_config(uint32_t(m), game[m], sock[m].get(), addr, 100 + m);
    ASSERT_EQ(create_p2p_session(c, &s[m]), Result::ok);
  }
  uint64_t now = 0;
  for (int tick = 0; tick < 5000 && (s[0]->confirmed_frame() < 300 || s[1]->confirmed_frame() < 300); ++tick) {
    now += 16667;
    for (int m = 0; m < 2; ++m) {
      s[m]->poll(now);
      if (!s[m]->running() || s[m]->current_frame() > 320) continue;
      const uint8_t in[2] = {uint8_t(s[m]->current_frame() / 7 + m), uint8_t(m)};
      s[m]->add_local_input(m, in, 2);
      s[m]->advance_frame();
    }
  }
  ASSERT_GE(s[0]->confirmed_frame(), 300);
  ASSERT_GE(s[1]->confirmed_frame(), 300);
  for (Frame f = 0; f <= 300; ++f) ASSERT_EQ(hashes[0][size_t(f)], hashes[1][size_t(f)]) << f;
  PeerStats st{};
  ASSERT_EQ(s[0]->peer_stats(1, &st), Result::ok);
  EXPECT_GT(st.datagrams_received, 100u);
  EXPECT_EQ(st.dropped_bad_nonce + st.dropped_malformed + st.dropped_truncated, 0u);
}

TEST(P2PUdp, TwoSessionsOverLoopbackStayInSync) { play_over_loopback("127.0.0.1"); }
// IPv6 too (the Windows build runs it under Wine, on Winsock's IPv6 sockets). It does not skip
// without IPv6: the CI machines have an IPv6 loopback, and a match there must work.
TEST(P2PUdp, TwoSessionsOverIPv6LoopbackStayInSync) { play_over_loopback("::1"); }

TEST(P2PUdp, HandshakeWithMismatchedShapeGivesAnEventAndNoSession) {
  std::unique_ptr<UdpTransport> sock[2];
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sock[0]), Result::ok);
  ASSERT_EQ(UdpTransport::open("127.0.0.1", 0, &sock[1]), Result::ok);
  PeerAddress addr[2];
  for (int i = 0; i < 2; ++i) ASSERT_EQ(make_ip_address("127.0.0.1", sock[i]->local_port(), &addr[i]), Result::ok);
  TestGame game[2];
  game[0].events.reserve(256);
  game[1].events.reserve(256);
  std::unique_ptr<P2PSession> s[2];
  for (int m = 0; m < 2; ++m) {
    // The two builds disagree on the input size.
    const P2PConfig c = two_player_config(uint32_t(m), game[m], sock[m].get(), addr, 0, m == 0 ? 2 : 4);
    ASSERT_EQ(create_p2p_session(c, &s[m]), Result::ok);
  }
  uint64_t now = 0;
  for (int tick = 0; tick < 600; ++tick) {
    now += 16667;
    for (int m = 0; m < 2; ++m) s[m]->poll(now);
  }
  for (int m = 0; m < 2; ++m) {
    EXPECT_FALSE(s[m]->running()) << m;
    bool rejected = false;
    for (const Event& e : game[m].events) rejected |= e.type == EventType::handshake_rejected;
    EXPECT_TRUE(rejected) << "machine " << m << " was told why";
    EXPECT_EQ(game[m].advances, 0u);
  }
}

}  // namespace
}  // namespace retcon::test
