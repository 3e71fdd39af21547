// Tests only: a process-wide switch for the P2P session's send passes (send_due), read when a
// session is created. On, every P2P session created from then on takes the full path
// (send_due_full): the urgency worked out and told to every endpoint, every endpoint polled
// through its plain calls, as before the passes asked the endpoints for the urgency only where
// they read it; send_local_inputs tells an idle poll by its walk over the peers, never by
// the mark send_ready_inputs leaves (idle_ready_, forgotten by every full pass, which follows
// each send_local_inputs); and send_ready_inputs asks every peer's holds even while none may
// apply (holds_may_apply).
// The passes that skip must send exactly what that path sends, datagram by datagram
// (tests/session/send_pass_test.cpp).
// Games never call it; it is not part of the public API.
#pragma once

namespace retcon::detail {

void set_full_send_passes_for_tests(bool on) noexcept;

}  // namespace retcon::detail
