// Tests only: a process-wide switch for the P2P session's polls, read when a session is created.
// On, every P2P session created from then on takes poll_unusual on every poll (the general poll:
// every routine behind its own test), never the usual poll's shortcut (usual_poll_). The usual
// poll must do exactly what that path does, datagram by datagram and event by event
// (tests/session/usual_poll_test.cpp).
// Games never call it; it is not part of the public API.
#pragma once

#include "retcon/p2p.h"

namespace retcon::detail {

void set_general_polls_for_tests(bool on) noexcept;
// False when `session` (a P2P session) keeps its usual-poll byte set while its state is not the
// usual poll's: the byte may lag towards "not usual" (until the next general poll), never the
// other way.
bool usual_poll_holds_for_tests(const P2PSession& session) noexcept;
// The byte itself: true when `session`'s next poll may be the usual one.
bool usual_poll_for_tests(const P2PSession& session) noexcept;

}  // namespace retcon::detail
