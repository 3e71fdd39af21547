// retcon: conversion between PeerAddress and asio UDP endpoints (UdpTransport's encoding:
// family byte 4 or 6, big-endian port, address bytes, IPv6 scope id little-endian).
#pragma once

#include <asio/ip/udp.hpp>

#include "retcon/transport.h"

namespace retcon::detail {

PeerAddress to_peer_address(const asio::ip::udp::endpoint& endpoint) noexcept;
// False when `address` is not an IP encoding.
bool to_udp_endpoint(const PeerAddress& address, asio::ip::udp::endpoint* out) noexcept;

}  // namespace retcon::detail
