// Instructions per datagram of the match-key protection, for callgrind (timings on a shared
// machine vary; instruction counts do not):
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null build/bench/retcon_aead_instructions aes 40 0
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null build/bench/retcon_aead_instructions aes 40 1000
// (difference of "Collected" / 1000 = one seal by the sender + one open by the receiver).
// Arguments: chacha | aes, the plain datagram size (16..1188), the number of datagrams.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "net/datagram_auth.h"

using namespace retcon::detail;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s chacha|aes PLAIN_SIZE COUNT\n", argv[0]);
    return 2;
  }
  const bool aes = std::strcmp(argv[1], "aes") == 0;
  const size_t plain = size_t(std::atoi(argv[2]));
  const int count = std::atoi(argv[3]);
  if (plain < kDataHeaderSize || plain > kMaxDatagramSize - kSealedOverhead || count < 0) return 2;
  uint8_t key[kMatchKeySize];
  for (size_t i = 0; i < sizeof key; ++i) key[i] = uint8_t(i + 1);
  DatagramAuth sender, receiver;
  if (!sender.configure(key, aes) || !receiver.configure(key, aes)) return 1;
  sender.bind(1, 2, receiver.offers_aes256gcm());
  receiver.bind(2, 1, sender.offers_aes256gcm());
  Xoshiro256 rng(1);
  uint8_t datagram[kMaxDatagramSize];
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    std::memset(datagram, 0, plain);
    datagram[0] = kMagic0;
    datagram[1] = kMagic1;
    datagram[2] = kProtocolVersion;
    datagram[3] = uint8_t(MessageType::keep_alive);
    const uint32_t sequence = uint32_t(i);
    std::memcpy(datagram + 4, &sequence, 2);  // a data header holds the low 16 bits
    const size_t sealed = sender.seal(datagram, plain, sizeof datagram, rng, sequence);
    Message m;
    if (sealed == 0 || receiver.open(datagram, sealed, &m, sequence) == DecodeError::bad_checksum) ++failed;
  }
  std::printf("%s, %zu-byte plain datagrams: %d sealed and opened, %d failed\n",
              aead_algorithm_name(sender.algorithm()), plain, count, failed);
  return failed == 0 ? 0 : 1;
}
