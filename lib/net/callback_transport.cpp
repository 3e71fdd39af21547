// retcon: a Transport over user-supplied C function pointers (the C API's user transports).
#include "retcon/transport.h"

namespace retcon {

Result CallbackTransport::send(const PeerAddress& to, const uint8_t* data, size_t length) {
  if (cb_.send == nullptr || to.size > PeerAddress::kCapacity) return Result::invalid_argument;
  if (data == nullptr && length != 0) return Result::invalid_argument;
  return cb_.send(cb_.user, to.bytes, to.size, data, length) == 0 ? Result::ok
                                                                  : Result::transport_error;
}

bool CallbackTransport::receive(PeerAddress* from, uint8_t* buffer, size_t capacity,
                                size_t* length) {
  if (cb_.receive == nullptr || buffer == nullptr || length == nullptr) {
    return false;
  }
  PeerAddress address;
  uint32_t addr_len = PeerAddress::kCapacity;
  size_t got = 0;
  const int32_t rc = cb_.receive(cb_.user, address.bytes, &addr_len, buffer, capacity, &got);
  if (rc == 0) return false;
  // User code may misreport sizes; trusting them would let the protocol read past buffers.
  if (rc < 0 || addr_len > PeerAddress::kCapacity || got > capacity) {
    ++receive_errors_;
    return false;
  }
  address.size = addr_len;
  if (from != nullptr) *from = address;
  *length = got;
  return true;
}

}  // namespace retcon
