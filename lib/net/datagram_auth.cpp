// retcon: see datagram_auth.h; the layout is in docs/PROTOCOL.md ("Authentication").
#include "net/datagram_auth.h"

#ifndef RETCON_WITH_SODIUM  // set by lib/CMakeLists.txt when libsodium is linked
#define RETCON_WITH_SODIUM 0
#endif

#if RETCON_WITH_SODIUM
#include <sodium.h>
#endif

#include <cstring>
#if !RETCON_WITH_SODIUM
#include <random>
#endif

namespace retcon::detail {

namespace {

// Without libsodium (RETCON_WITH_SODIUM off: the Windows build) only the keyless mode exists:
// match_keys_supported() is false, the endpoint refuses a match key with Result::unsupported,
// and the keyed code below is not compiled.
#if RETCON_WITH_SODIUM
static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == kHandshakeNonceSize);
static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == kAuthTagSize);
static_assert(crypto_aead_chacha20poly1305_ietf_ABYTES == kAuthTagSize);
static_assert(crypto_aead_aes256gcm_ABYTES == kAuthTagSize);
static_assert(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12);
static_assert(crypto_aead_aes256gcm_NPUBBYTES == 12);
static_assert(crypto_generichash_KEYBYTES_MAX >= kMatchKeySize);
static_assert(sizeof(crypto_aead_aes256gcm_state) <= DatagramAuth::kAesStateSize);

crypto_aead_aes256gcm_state* aes_state(uint8_t* storage) noexcept {
  return reinterpret_cast<crypto_aead_aes256gcm_state*>(storage);
}

bool sodium_ready() noexcept { return sodium_init() >= 0; }  // idempotent, thread-safe

void wipe_bytes(uint8_t* bytes, size_t size) noexcept { sodium_memzero(bytes, size); }
#else
bool sodium_ready() noexcept { return true; }

void wipe_bytes(uint8_t* bytes, size_t size) noexcept {  // volatile: not optimised away
  volatile uint8_t* p = bytes;
  for (size_t i = 0; i < size; ++i) p[i] = 0;
}
#endif

#if RETCON_WITH_SODIUM
void put_u32(uint8_t* at, uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) at[i] = uint8_t(v >> (8 * i));
}

// BLAKE2b keyed with the match key over a label and the direction's nonces.
void derive(uint8_t out[32], const uint8_t* match_key, const char* label, uint8_t algorithm,
            uint32_t sender_nonce, uint32_t receiver_nonce) noexcept {
  uint8_t message[32] = {};
  const size_t length = std::strlen(label);  // labels are short literals
  std::memcpy(message, label, length);
  message[length] = algorithm;
  put_u32(message + length + 1, sender_nonce);
  put_u32(message + length + 5, receiver_nonce);
  crypto_generichash(out, 32, message, length + 9, match_key, kMatchKeySize);
}

// The data messages' AEAD nonce: the sender's full sequence number (the header holds its low 16
// bits) as a 64-bit little-endian counter, then zeros. The per-direction key is fresh for every
// connection, and a sequence is never reused within one, so (key, nonce) never repeats.
void sequence_nonce(uint8_t nonce[12], uint32_t sequence) noexcept {
  std::memset(nonce, 0, 12);
  put_u32(nonce, sequence);
}
#endif

}  // namespace

// Both 32-bit nonces, mixed: unpredictable to anyone who has seen neither.
uint64_t connection_checksum_key(uint32_t sender_nonce, uint32_t receiver_nonce) noexcept {
  uint64_t state = (uint64_t(sender_nonce) << 32) | receiver_nonce;
  return splitmix64(state);
}

const char* aead_algorithm_name(AeadAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case AeadAlgorithm::none: return "none";
    case AeadAlgorithm::chacha20poly1305_ietf: return "chacha20poly1305_ietf";
    case AeadAlgorithm::aes256gcm: return "aes256gcm";
  }
  return "unknown";
}

bool match_keys_supported() noexcept { return RETCON_WITH_SODIUM != 0; }

#if RETCON_WITH_SODIUM
bool aes256gcm_available() noexcept {
  return sodium_ready() && crypto_aead_aes256gcm_is_available() == 1;
}

uint64_t os_entropy_u64() noexcept {
  uint64_t value = 0;
  if (sodium_ready()) randombytes_buf(&value, sizeof value);
  return value;
}
#else
bool aes256gcm_available() noexcept { return false; }

// std::random_device is the OS generator on the platforms built this way (MinGW: rand_s).
uint64_t os_entropy_u64() noexcept {
  try {
    std::random_device device;
    return (uint64_t(device()) << 32) ^ uint64_t(device());
  } catch (...) {  // no entropy source: 0, as with libsodium failing to start
    return 0;
  }
}
#endif

DatagramAuth::~DatagramAuth() { wipe(); }

void DatagramAuth::wipe() noexcept {
  wipe_bytes(match_key_, sizeof match_key_);
  wipe_bytes(handshake_key_, sizeof handshake_key_);
  wipe_bytes(send_key_, sizeof send_key_);
  wipe_bytes(receive_key_, sizeof receive_key_);
  wipe_bytes(aes_send_, sizeof aes_send_);
  wipe_bytes(aes_receive_, sizeof aes_receive_);
}

bool DatagramAuth::configure(const uint8_t* match_key, bool allow_aes) noexcept {
  if (!sodium_ready()) return false;
  if (match_key != nullptr && !match_keys_supported()) return false;
  wipe();
  keyed_ = match_key != nullptr;
  offer_aes_ = keyed_ && allow_aes && aes256gcm_available();
  bound_ = false;
  algorithm_ = AeadAlgorithm::none;
  send_checksum_key_ = receive_checksum_key_ = 0;
#if RETCON_WITH_SODIUM
  if (keyed_) {
    std::memcpy(match_key_, match_key, kMatchKeySize);
    derive(handshake_key_, match_key_, "retcon/3 handshake", 0, 0, 0);
  }
#endif
  return true;
}

void DatagramAuth::bind(uint32_t local_nonce, uint32_t remote_nonce,
                        bool peer_offers_aes256gcm) noexcept {
  bound_ = true;
  send_checksum_key_ = connection_checksum_key(local_nonce, remote_nonce);
  receive_checksum_key_ = connection_checksum_key(remote_nonce, local_nonce);
  if (!keyed_) return;
#if !RETCON_WITH_SODIUM
  (void)peer_offers_aes256gcm;  // never keyed without libsodium
#else
  algorithm_ = offer_aes_ && peer_offers_aes256gcm ? AeadAlgorithm::aes256gcm
                                                   : AeadAlgorithm::chacha20poly1305_ietf;
  derive(send_key_, match_key_, "retcon/3 data", uint8_t(algorithm_), local_nonce, remote_nonce);
  derive(receive_key_, match_key_, "retcon/3 data", uint8_t(algorithm_), remote_nonce,
         local_nonce);
  if (algorithm_ == AeadAlgorithm::aes256gcm) {  // expand the AES keys once, not per datagram
    crypto_aead_aes256gcm_beforenm(aes_state(aes_send_), send_key_);
    crypto_aead_aes256gcm_beforenm(aes_state(aes_receive_), receive_key_);
  }
#endif
}

size_t DatagramAuth::seal(uint8_t* data, size_t size, size_t capacity, Xoshiro256& rng,
                          uint32_t sequence) noexcept {
  if (data == nullptr || size < kMinHeaderSize) return 0;
  if (capacity > kMaxDatagramSize) capacity = kMaxDatagramSize;
  const MessageType type = static_cast<MessageType>(data[3]);
  const bool handshake = is_handshake(type);
  if (size < header_size(type)) return 0;
  if (!handshake && !bound_) return 0;  // nobody to address it to yet
  if (!keyed_) {
    if (size > capacity) return 0;
    if (!handshake) seal_data_datagram(data, size, send_checksum_key_, sequence);
    return size;
  }
#if !RETCON_WITH_SODIUM
  (void)rng;
  return 0;  // unreachable: configure() refuses keys without libsodium
#else
  const size_t public_size = public_header_size(type);
  const size_t body = size - header_size(type);
  uint8_t* at = data + public_size;
  if (handshake) {
    if (size + kSealedHandshakeOverhead > capacity) return 0;
    std::memmove(at + kHandshakeNonceSize, data + kHandshakeHeaderSize, body);
    for (size_t i = 0; i < kHandshakeNonceSize; i += 8) {
      const uint64_t r = rng.next();
      std::memcpy(at + i, &r, 8);
    }
    uint8_t* text = at + kHandshakeNonceSize;
    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(text, text + body, nullptr, text, body,
                                                        data, public_size, nullptr, at,
                                                        handshake_key_);
    return size + kSealedHandshakeOverhead;
  }
  if (size + kSealedOverhead > capacity) return 0;
  std::memmove(at, data + kDataHeaderSize, body);
  uint8_t nonce[12];
  sequence_nonce(nonce, sequence);
  if (algorithm_ == AeadAlgorithm::aes256gcm) {
    crypto_aead_aes256gcm_encrypt_detached_afternm(at, at + body, nullptr, at, body, data,
                                                   public_size, nullptr, nonce,
                                                   aes_state(aes_send_));
  } else {
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(at, at + body, nullptr, at, body, data,
                                                       public_size, nullptr, nonce,
                                                       send_key_);
  }
  return size + kSealedOverhead;
#endif
}

DecodeError DatagramAuth::open(const uint8_t* data, size_t size, Message* out,
                               uint32_t sequence_base) noexcept {
  if (out == nullptr) return DecodeError::malformed;
  Header header;
  const DecodeError head = decode_public_header(data, size, &header);
  *out = Message{};
  out->header = header;
  if (head != DecodeError::ok) return head;
  return open(data, size, header, out, sequence_base);
}

DecodeError DatagramAuth::open(const uint8_t* data, size_t size, const Header& header, Message* out,
                               uint32_t sequence_base, const InputsSeek& seek) noexcept {
  if (out == nullptr) return DecodeError::malformed;
  const bool handshake = is_handshake(header.type);
  if (!keyed_) {
    Integrity integrity;
    integrity.connection_key = bound_ ? receive_checksum_key_ : 0;
    integrity.sequence_base = sequence_base;
    integrity.seek = seek;
    return decode_message_body(data, size, header, out, integrity);
  }
  out->header = header;
#if !RETCON_WITH_SODIUM
  (void)handshake;
  (void)sequence_base;
  (void)seek;
  return DecodeError::bad_checksum;  // unreachable: configure() refuses keys without libsodium
#else
  const size_t public_size = public_header_size(header.type);
  const size_t overhead = handshake ? public_size + kHandshakeNonceSize + kAuthTagSize
                                    : public_size + kAuthTagSize;
  if (size < overhead) return DecodeError::truncated;
  if (!handshake && !bound_) return DecodeError::bad_checksum;  // no key to check it with yet
  const size_t body = size - overhead;
  const uint8_t* text = data + overhead - kAuthTagSize;
  const uint8_t* tag = text + body;
  const size_t plain_header = header_size(header.type);
  uint8_t* plain_body = plain_ + plain_header;
  int failed;
  if (handshake) {
    failed = crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
        plain_body, nullptr, text, body, tag, data, public_size,
        data + public_size, handshake_key_);
  } else {
    uint8_t nonce[12];
    sequence_nonce(nonce, widen_sequence(uint16_t(header.sequence), sequence_base));
    failed = algorithm_ == AeadAlgorithm::aes256gcm
                 ? crypto_aead_aes256gcm_decrypt_detached_afternm(
                       plain_body, nullptr, text, body, tag, data, public_size, nonce,
                       aes_state(aes_receive_))
                 : crypto_aead_chacha20poly1305_ietf_decrypt_detached(
                       plain_body, nullptr, text, body, tag, data, public_size, nonce,
                       receive_key_);
  }
  if (failed != 0) return DecodeError::bad_checksum;  // garbled, forged, or another key
  std::memcpy(plain_, data, public_size);
  put_u32(plain_ + public_size, 0);
  Integrity integrity;
  integrity.authenticated = true;
  integrity.sequence_base = sequence_base;
  integrity.seek = seek;
  return decode_message_body(plain_, plain_header + body, header, out, integrity);
#endif
}

}  // namespace retcon::detail
