// retcon: the datagram protection layer between the codec (wire.h) and the endpoint.
//
// Without a match key it keys the plain layout's checksum with the connection's secret (both
// sides' random nonces), so that a blind attacker who spoofs a peer's address must guess 64
// random bits per forged datagram. It is not authentication: anyone who sees the traffic can
// forge it (docs/SECURITY.md).
//
// With a 32-byte match key every datagram is authenticated and encrypted with a libsodium
// AEAD. The public header (magic, version, type, then nonce and sequence for a handshake, the
// 16-bit sequence for a data message) travels in the clear as associated data; the body is
// encrypted; a 16-byte tag follows.
//  - handshake messages: XChaCha20-Poly1305 under a key derived from the match key, with a
//    random 24-byte nonce sent after the header (the peer's nonce is not known yet);
//  - every other message: per-direction keys derived from the match key and both connection
//    nonces, AES-256-GCM when both machines have it (advertised in the authenticated
//    handshake) else ChaCha20-Poly1305 IETF, nonce = the sender's full sequence number (widened
//    by the receiver from the header's 16 bits), which never repeats within a connection.
// Preallocated; nothing allocates per datagram. docs/PROTOCOL.md has the byte layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "net/random.h"
#include "net/wire.h"

namespace retcon::detail {

inline constexpr size_t kMatchKeySize = 32;
inline constexpr size_t kAuthTagSize = 16;
inline constexpr size_t kHandshakeNonceSize = 24;
// Bytes a sealed datagram has beyond its plain form (which holds a 4-byte checksum instead).
inline constexpr size_t kSealedOverhead = kAuthTagSize - 4;
inline constexpr size_t kSealedHandshakeOverhead = kSealedOverhead + kHandshakeNonceSize;

enum class AeadAlgorithm : uint8_t { none, chacha20poly1305_ietf, aes256gcm };
const char* aead_algorithm_name(AeadAlgorithm algorithm) noexcept;

// False when retcon was built without libsodium (RETCON_WITH_SODIUM off, as on Windows):
// then only the keyless mode exists and a match key is refused with Result::unsupported.
bool match_keys_supported() noexcept;

// True when this machine can run libsodium's AES-256-GCM (AES-NI and PCLMUL).
bool aes256gcm_available() noexcept;

// 64 bits from the operating system's entropy (libsodium's randombytes).
uint64_t os_entropy_u64() noexcept;

// Without a key: the checksum key of datagrams from `sender_nonce` to `receiver_nonce` once the
// handshake verified both (see datagram_checksum). Tests use it to craft datagrams.
uint64_t connection_checksum_key(uint32_t sender_nonce, uint32_t receiver_nonce) noexcept;

class DatagramAuth {
 public:
  DatagramAuth() = default;
  ~DatagramAuth();
  DatagramAuth(const DatagramAuth&) = delete;
  DatagramAuth& operator=(const DatagramAuth&) = delete;

  // A new connection. `match_key` is kMatchKeySize bytes, or null for none. `allow_aes`
  // false never offers AES-256-GCM (tests use it to check both sides agree). False when
  // libsodium cannot start (no key mode then).
  bool configure(const uint8_t* match_key, bool allow_aes) noexcept;
  bool keyed() const noexcept { return keyed_; }
  // What our handshake advertises.
  bool offers_aes256gcm() const noexcept { return offer_aes_; }

  // The peer is verified: derive the per-direction state from both nonces. The algorithm is
  // AES-256-GCM iff both sides offer it, so both sides pick the same one.
  void bind(uint32_t local_nonce, uint32_t remote_nonce, bool peer_offers_aes256gcm) noexcept;
  bool bound() const noexcept { return bound_; }
  AeadAlgorithm algorithm() const noexcept { return bound_ && keyed_ ? algorithm_ : AeadAlgorithm::none; }

  // The most a plain datagram of `type` may hold so that its sealed form fits kMaxDatagramSize.
  // Inline: every inputs datagram asks.
  size_t plain_capacity(MessageType type) const noexcept {
    if (!keyed_) return kMaxDatagramSize;
    return kMaxDatagramSize - (is_handshake(type) ? kSealedHandshakeOverhead : kSealedOverhead);
  }

  // Protects a plain datagram (wire layout, checksum field included) in place in `data`, which
  // has room for `capacity` bytes. Returns the size to send, 0 if it does not fit or a
  // non-handshake message is sealed before bind(). `rng` draws handshake nonces; `sequence` is
  // a data message's full sequence number (its header holds the low 16 bits).
  size_t seal(uint8_t* data, size_t size, size_t capacity, Xoshiro256& rng,
              uint32_t sequence) noexcept;
  // seal() for a data message (not a handshake) of kDataHeaderSize to kMaxDatagramSize bytes, in
  // a buffer of kMaxDatagramSize, once bound (the caller knows all three: the endpoint's inputs
  // datagrams). Inline: without a key it only writes the checksum, and every inputs datagram
  // takes it.
  size_t seal_bound_data(uint8_t* data, size_t size, Xoshiro256& rng, uint32_t sequence) noexcept {
    if (!keyed_) {
      const uint32_t sum = data_datagram_checksum(data, size, send_checksum_key_, sequence);
      for (size_t i = 0; i < 4; ++i) data[kDataPublicHeaderSize + i] = static_cast<uint8_t>(sum >> (8 * i));
      return size;
    }
    return seal(data, size, kMaxDatagramSize, rng, sequence);
  }

  // Verifies (with a key: decrypts) a datagram, then decodes it. Non-handshake messages need
  // bind() first (the caller checks the connection is bound); their sequence is widened against
  // `sequence_base`, the highest sequence accepted from the peer (see widen_sequence).
  // With a key, `out->inputs.payload` points into this object until the next open().
  DecodeError open(const uint8_t* data, size_t size, Message* out,
                   uint32_t sequence_base = 0) noexcept;
  // The same for bytes whose public header the caller already read (decode_public_header
  // returned ok with `header`): the header is not read again, and only `out->header` and the
  // body its type names are written (decode_message_body).
  // `seek`: see InputsSeek (an inputs datagram's receiver).
  DecodeError open(const uint8_t* data, size_t size, const Header& header, Message* out,
                   uint32_t sequence_base = 0, const InputsSeek& seek = {}) noexcept;
  // The same for an inputs datagram without a key (keyed() false): the receiver's usual datagram,
  // its sequence already widened (`sequence`). Only `out` is written (decode_inputs_body).
  DecodeError open_plain_inputs(const uint8_t* data, size_t size, uint32_t sequence, const InputsSeek& seek,
                                InputsBody* out) const noexcept {
    return decode_inputs_body(data, size, sequence, plain_receive_key(), seek, out);
  }
  // The key of our direction's checksum without a match key (0 before bind()): what
  // seal_bound_data seals with, for a sender that takes the checksum inline (net/data_checksum.h).
  uint64_t plain_send_key() const noexcept { return send_checksum_key_; }
  // The key open_plain_inputs checks the peer's datagrams with (0 before bind(): configure()
  // sets it so, and only bind() sets it otherwise, so no test of bound_ is needed).
  uint64_t plain_receive_key() const noexcept { return receive_checksum_key_; }

 private:
  void wipe() noexcept;

 public:
  static constexpr size_t kAesStateSize = 512;  // room for crypto_aead_aes256gcm_state

 private:

  bool keyed_ = false;
  bool offer_aes_ = false;
  bool bound_ = false;
  AeadAlgorithm algorithm_ = AeadAlgorithm::none;
  uint64_t send_checksum_key_ = 0;     // no key: our direction's checksum key
  uint64_t receive_checksum_key_ = 0;  // no key: the peer's
  uint8_t match_key_[kMatchKeySize] = {};
  uint8_t handshake_key_[32] = {};
  uint8_t send_key_[32] = {};
  uint8_t receive_key_[32] = {};
  // The expanded AES keys (crypto_aead_aes256gcm_state), computed once per connection.
  alignas(16) uint8_t aes_send_[kAesStateSize] = {};
  alignas(16) uint8_t aes_receive_[kAesStateSize] = {};
  // Where an opened datagram is decrypted to. Only a build with libsodium opens any (the field
  // stays in every build: the class's layout must not depend on a define that is private to the
  // library's own sources).
  [[maybe_unused]] uint8_t plain_[kMaxDatagramSize + kHandshakeHeaderSize] = {};
};

}  // namespace retcon::detail
