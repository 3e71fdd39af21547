// docs/PROTOCOL.md's state-transfer messages (reliable-channel stream 1) are exactly what the
// codec writes, and the codec refuses anything else a peer could send.
#include <gtest/gtest.h>

#include <vector>

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
