// docs/PROTOCOL.md's state-transfer messages (reliable-channel stream 1) are exactly what the
// codec writes, and the codec refuses anything else a peer could send.
#include <gtest/gtest.h>

#include <vector>

#include "session/rejoin.h"
#include "session/state_transfer.h"
#include "support/protocol_doc.h"

namespace retcon::detail {
namespace {

using test::doc_example;

std::vector<uint8_t> encoded(const TransferMessage& m) {
  uint8_t out[kMaxTransferMessage];
  const size_t n = encode_transfer(m, out);
  return std::vector<uint8_t>(out, out + n);
}

TEST(StateTransferDoc, ExamplesMatchTheCodec) {
  TransferMessage request;
  EXPECT_EQ(encoded(request), doc_example("transfer_request"));
  TransferMessage accepted;
  accepted.kind = TransferKind::accepted;
  EXPECT_EQ(encoded(accepted), doc_example("transfer_accepted"));
  TransferMessage offer;
  offer.kind = TransferKind::offer;
  offer.frame = 600;
  offer.size = 4096;
  EXPECT_EQ(encoded(offer), doc_example("transfer_offer"));
  TransferMessage declined;
  declined.kind = TransferKind::declined;
  declined.reason = DeclineReason::not_enabled;
  EXPECT_EQ(encoded(declined), doc_example("transfer_declined"));

  // And each example decodes back to what it says.
  for (const char* name : {"transfer_request", "transfer_accepted", "transfer_offer", "transfer_declined"}) {
    const std::vector<uint8_t> bytes = doc_example(name);
    TransferMessage m;
    ASSERT_TRUE(decode_transfer(bytes.data(), bytes.size(), &m)) << name;
    EXPECT_EQ(encoded(m), bytes) << name;
  }
}

TEST(RejoinDoc, ExamplesMatchTheCodec) {
  uint8_t out[kMaxRejoinMessage];
  EXPECT_EQ(std::vector<uint8_t>(out, out + encode_rejoin_request(out)), doc_example("rejoin_request"));
  EXPECT_EQ(std::vector<uint8_t>(out, out + encode_rejoin_declined(out)), doc_example("rejoin_declined"));
  RejoinOffer o;
  o.state_frame = 600;
  o.size = 4096;
  o.live_at = 700;
  o.num_players = 3;
  o.status[0].last_frame = 699;
  o.status[1].last_frame = 699;
  o.status[2] = ConnectStatus{true, 147};
  o.decisions_digest = 0x0123456789abcdefull;
  o.delay_frame = 320;
  o.delay = 3;
  EXPECT_EQ(std::vector<uint8_t>(out, out + encode_rejoin_offer(o, out)), doc_example("rejoin_offer"));
  RejoinNotice n;
  n.player = 1;
  n.cut = 147;
  n.state_frame = 600;
  n.live_at = 700;
  EXPECT_EQ(std::vector<uint8_t>(out, out + encode_rejoin_notice(n, out)), doc_example("rejoin_notice"));

  const std::vector<uint8_t> offer = doc_example("rejoin_offer");
  RejoinOffer back;
  ASSERT_TRUE(decode_rejoin_offer(offer.data(), offer.size(), 3, &back));
  EXPECT_EQ(back.live_at, 700);
  EXPECT_TRUE(back.status[2].disconnected);
  EXPECT_EQ(back.decisions_digest, 0x0123456789abcdefull);
  EXPECT_EQ(back.delay_frame, 320);
  EXPECT_EQ(back.delay, 3);
  std::vector<uint8_t> slow = offer;
  slow.back() = 33;  // a delay over kMaxInputDelay
  EXPECT_FALSE(decode_rejoin_offer(slow.data(), slow.size(), 3, &back));
  EXPECT_FALSE(decode_rejoin_offer(offer.data(), offer.size(), 2, &back)) << "another match's player count";
  EXPECT_FALSE(decode_rejoin_offer(offer.data(), offer.size() - 1, 3, &back)) << "cut short";
  const std::vector<uint8_t> notice = doc_example("rejoin_notice");
  RejoinNotice nb;
  ASSERT_TRUE(decode_rejoin_notice(notice.data(), notice.size(), 3, &nb));
  EXPECT_EQ(nb.live_at, 700);
  EXPECT_FALSE(decode_rejoin_notice(notice.data(), notice.size(), 1, &nb)) << "no such player";
  std::vector<uint8_t> early = notice;
  early[10] = 0x10;  // live 528, before the state's frame
  early[11] = 0x02;
  EXPECT_FALSE(decode_rejoin_notice(early.data(), early.size(), 3, &nb));
  RejoinKind kind;
  const uint8_t spectate[] = {0x01, 0x01};
  EXPECT_FALSE(rejoin_kind(spectate, 2, &kind)) << "a spectator's request is not a rejoin";
  const uint8_t longer[] = {0x01, 0x02, 0x00};
  EXPECT_FALSE(rejoin_kind(longer, 3, &kind));
}

TEST(StateTransferCodec, RefusesWhatNoPeerOfOursSends) {
  TransferMessage m;
  const std::vector<std::vector<uint8_t>> bad = {
      {},                                           // empty
      {0x01},                                       // no purpose
      {0x05, 0x01},                                 // unknown kind
      {0x01, 0x02},                                 // unknown purpose
      {0x01, 0x01, 0x00},                           // trailing byte
      {0x02, 0x01, 0x58, 0x02, 0x00, 0x00},         // offer cut short
      {0x02, 0x01, 0xff, 0xff, 0xff, 0xff, 0x00, 0x10, 0x00, 0x00},  // negative frame
      {0x02, 0x01, 0x58, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},  // empty state
      {0x03, 0x01},                                 // declined without a reason
      {0x03, 0x01, 0x09},                           // unknown reason
  };
  for (const auto& b : bad) EXPECT_FALSE(decode_transfer(b.data(), b.size(), &m)) << b.size();
}

}  // namespace
}  // namespace retcon::detail
