// retcon: PeerAddress helpers shared by every transport.
#include <cstring>

#include "retcon/transport.h"

namespace retcon {

bool PeerAddress::from_bytes(const uint8_t* data, size_t length, PeerAddress* out) noexcept {
  if (out == nullptr) return false;
  *out = PeerAddress{};
  if (length > kCapacity || (data == nullptr && length != 0)) return false;
  out->size = static_cast<uint32_t>(length);
  if (length != 0) std::memcpy(out->bytes, data, length);
  return true;
}

bool operator==(const PeerAddress& a, const PeerAddress& b) noexcept {
  // A corrupt size (above capacity) must not make us read past the array.
  if (a.size != b.size || a.size > PeerAddress::kCapacity) return false;
  return std::memcmp(a.bytes, b.bytes, a.size) == 0;
}

uint64_t hash_peer_address(const PeerAddress& address) noexcept {
  uint64_t h = 0xCBF29CE484222325ull;
  const uint32_t n = address.size > PeerAddress::kCapacity ? PeerAddress::kCapacity : address.size;
  h = (h ^ n) * 0x100000001B3ull;
  for (uint32_t i = 0; i < n; ++i) h = (h ^ address.bytes[i]) * 0x100000001B3ull;
  return h;
}

PeerAddress make_memory_address(uint32_t id) noexcept {
  // A leading tag byte keeps in-memory ids from ever equalling an IP encoding (family 4 or 6).
  PeerAddress a;
  a.size = 5;
  a.bytes[0] = 'M';
  for (int i = 0; i < 4; ++i) a.bytes[1 + i] = static_cast<uint8_t>(id >> (8 * i));
  return a;
}

}  // namespace retcon
