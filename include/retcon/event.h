// retcon: events a session reports to the game through GameCallbacks::on_event.
#pragma once

#include <cstddef>
#include <cstdint>

#include "retcon/types.h"

namespace retcon {

// Numeric values are pinned; the C API uses the same numbers.
enum class EventType : uint32_t {
  synchronizing = 1,        // handshake progress with a peer: count of total round trips
  synchronized = 2,         // handshake with a peer completed
  running = 3,              // every peer is synchronized; the match runs
  connection_interrupted = 4,  // no packets from a peer for the notify delay
  connection_resumed = 5,
  disconnected = 6,         // a player left (timed out or dropped); `frame` is its last frame, agreed by every
                            // peer (the same on every machine; given once the peers agreed)
  timesync = 7,             // advice: wait `frames_ahead` frames to let peers catch up
  desync_detected = 8,      // peers' checksums of a confirmed frame differ
  sync_test_mismatch = 9,   // sync test: re-simulation produced a different state
  // Advancing has been blocked by the prediction window for the notify delay (at once when it
  // is 0): `player` is the remote player awaited, `frame` the frame of theirs awaited. Once per
  // stall episode; the session goes on by itself once the input arrives or the peer is dropped.
  prediction_limit = 10,
  save_failed = 11,         // save_state returned more bytes than the buffer holds
  handshake_rejected = 12,  // a peer's version or session shape differs from ours
  spectator_joined = 13,
  spectator_left = 14,
  // Every remote player is gone (or, before running, none ever synchronized): nobody is left to
  // play with. A session that never ran stays not running; one that ran can go on alone.
  cannot_continue = 15,
  // A remote player's inputs arrive later than the network explains (a lag switch, or a game
  // that froze): `player` names it, `frame` the newest late frame, `count` the worst lateness in
  // frames beyond latency, jitter and outages, `total` this peer's late_inputs events so far.
  // At most one per peer per second; the game decides what to do (warn, kick).
  late_inputs = 20,
  // P2PSession::choose_input_delay: `count` the delay chosen, `total` the delay before (our first
  // local player's), `checksum_local` the median RTT in microseconds it came from, `text_local`
  // every remote player's RTT ("player 1: 84 ms, ...").
  input_delay_chosen = 21,
  // P2PSession::apply_input_delay (or the automatic mode): every local player's input delay
  // changed at `frame` on every machine; `count` the new delay, `total` the old one,
  // `checksum_local` the median RTT (us) and `text_local` the RTTs the deciding machine used,
  // `player` its first player; `checksum_remote` the planned frame (differs from `frame` only
  // when the message arrived late).
  input_delay_applied = 22,
  // Both states of a desync frame (P2PConfig::share_desync_states), after desync_detected:
  // `player` the peer, `frame` the desync frame, `state_remote` the peer's saved state of it
  // (its exact bytes, verified against the checksum it reported), `state_local` ours (null when
  // no longer kept), `text_remote` / `text_local` describe_state of both, `checksum_remote` /
  // `checksum_local` the checksums compared. Once per peer (twice when the two machines first
  // saw the desync at different frames).
  desync_states = 25,
  // Rejoin (P2PConfig::allow_rejoin): a machine asks to take back disconnected `player`'s slot;
  // `frame` the player's agreed last frame, `text_local` the requester's address bytes (as the
  // transport gives them, `text_local_len` long). Answer with P2PSession::answer_rejoin.
  rejoin_requested = 30,
  // `player` comes back: its input is disconnected up to `frame` - 1 and live from `frame` on,
  // the same frame on every machine (the rejoining one included).
  player_rejoining = 31,
  // `player`'s input of `frame` (the same frame as player_rejoining) is confirmed: it plays again.
  player_rejoined = 32,
  // On a rejoining machine (P2PConfig::rejoining): the machine of `player` refused our rejoin
  // (its game answered answer_rejoin(..., false), now or for an earlier request from this
  // address). `cannot_continue` follows: the session gives up and sends nothing more.
  rejoin_refused = 33,
};

// One event. Fields that do not apply to a type are zero / kNullFrame / null.
// Pointers stay valid only during the on_event call.
struct Event {
  EventType type;
  PlayerIndex player;       // the player or peer concerned, -1 if none
  Frame frame;              // the frame concerned
  int32_t count;            // synchronizing: round trips done; timesync: frames to wait
  int32_t total;            // synchronizing: round trips needed
  uint64_t checksum_local;  // desync / sync test: our checksum (sync test: first simulation)
  uint64_t checksum_remote; // desync: the peer's; sync test: the re-simulation's
  const char* text_local;   // describe_state of our state (null when no describer)
  size_t text_local_len;
  const char* text_remote;  // sync test: describe_state of the re-simulated state
  size_t text_remote_len;
  const char* message;      // a short human-readable explanation, never null
  // desync_detected / desync_states (P2PConfig::share_desync_states): the saved states' bytes.
  const uint8_t* state_local;  // ours of `frame` (null when not kept)
  size_t state_local_len;
  const uint8_t* state_remote;  // desync_states: the peer's of `frame`
  size_t state_remote_len;
};

const char* event_type_name(EventType t) noexcept;

}  // namespace retcon
