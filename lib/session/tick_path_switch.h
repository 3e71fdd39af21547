// Tests only: a process-wide switch for the P2P session's ticks, read when a session is created.
// On, every P2P session created from then on polls through poll_unusual and advances through
// advance_unusual on every call (the general tick: every routine behind its own test), never
// the usual tick's shortcut (usual_tick_). The usual tick must do exactly what that path does,
// datagram by datagram and event by event (tests/session/usual_tick_test.cpp).
// Games never call it; it is not part of the public API.
#pragma once

#include "retcon/p2p.h"

namespace retcon::detail {

void set_general_ticks_for_tests(bool on) noexcept;
// False when `session` (a P2P session) keeps its usual-tick byte set while its state is not the
// usual tick's: the byte may lag towards "not usual" (until the next general poll), never the
// other way.
bool usual_tick_holds_for_tests(const P2PSession& session) noexcept;
// The byte itself: true when `session`'s next poll or advance may be the usual one.
bool usual_tick_for_tests(const P2PSession& session) noexcept;

}  // namespace retcon::detail
