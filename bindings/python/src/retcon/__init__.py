"""retcon: rollback netcode (GGPO style) for Python, over libretcon's C API.

    import retcon

    class Game:
        def save_state(self, frame: int) -> bytes: ...            # the whole state
        def load_state(self, frame: int, data: bytes) -> None: ...
        def advance_frame(self, frame: int, inputs: list, flags: int) -> None: ...
        # optional: on_event(event), describe_state(frame, data) -> str, checksum(frame, data) -> int;
        # advance_frame(frame, inputs, flags, decisions) receives timed decisions (send_decision)

    with retcon.sync_test_session(Game(), num_players=2, input_size=1, max_state_size=64) as s:
        s.add_local_input(0, b"\\x01"); s.add_local_input(1, b"\\x00"); s.advance_frame()

Every failing call raises a retcon.Error subclass named after the C result (retcon.InvalidArgument,
retcon.WrongState, ...; `.name` is retcon_result_name). "Not now" is not an error: add_local_input()
and advance_frame() return False before a network session is synchronized, and advance_frame()
at the prediction limit.
An exception raised in a game callback is re-raised from the call that ran it.
"""

from __future__ import annotations

from typing import Tuple

from ._capi import (MAX_DECISION_SIZE, MAX_INPUT_DELAY, MAX_INPUT_SIZE, MAX_PLAYERS, MAX_PREDICTION_FRAMES,
                    MAX_SPECTATORS, NULL_FRAME, SIMULATOR_MAX_BLACKOUTS, LinkProfile, PeerAddress, fn)
from ._game import ADVANCE_RESIMULATING, Decision, Event, Game, event_type_name
from ._net import MemoryNetwork, Transport, ip_address, link_profile, peer_address
from ._replay import REPLAY_GAME_CHECKSUM, REPLAY_STORES_STATES, Checkpoint, Replay, ReplayInfo, ReplayReport
from ._session import (INPUT_CONFIRMED, INPUT_DISCONNECTED, INPUT_PREDICTED, LOCAL, LOG_DEBUG, LOG_ERROR, LOG_INFO,
                       LOG_WARNING, PEER_DISCONNECTED, PEER_IDLE, PEER_INTERRUPTED, PEER_RUNNING, PEER_SYNCHRONIZING,
                       SAVE_AUTOMATIC, SAVE_EVERY_FRAME, SAVE_SPARSE, SESSION_LOCAL, SESSION_P2P, SESSION_SPECTATOR,
                       SESSION_SYNC_TEST, PeerStats, Session, SessionStats, local_session, p2p_session,
                       spectator_session, sync_test_session)
from .errors import (BadPacket, CorruptData, Error, InputAlreadyAdded, InputOutOfWindow, InternalError,
                     InvalidArgument, InvalidInputSize, InvalidPlayer, IoError, MissingLocalInput, NotFound,
                     NotSynchronized, OutOfMemory, PlayerDisconnected, PredictionLimit, SaveFailed, TooManyPlayers,
                     TransportError, Unsupported, VersionMismatch, WrongState, error_for, result_name)

EVENT_SYNCHRONIZING, EVENT_SYNCHRONIZED, EVENT_RUNNING = 1, 2, 3
EVENT_CONNECTION_INTERRUPTED, EVENT_CONNECTION_RESUMED, EVENT_DISCONNECTED = 4, 5, 6
EVENT_TIMESYNC, EVENT_DESYNC_DETECTED, EVENT_SYNC_TEST_MISMATCH = 7, 8, 9
EVENT_PREDICTION_LIMIT, EVENT_SAVE_FAILED, EVENT_HANDSHAKE_REJECTED = 10, 11, 12
EVENT_SPECTATOR_JOINED, EVENT_SPECTATOR_LEFT = 13, 14
EVENT_CANNOT_CONTINUE = 15
EVENT_LATE_INPUTS, EVENT_INPUT_DELAY_CHOSEN, EVENT_INPUT_DELAY_APPLIED = 20, 21, 22
EVENT_REJOIN_REQUESTED, EVENT_PLAYER_REJOINING, EVENT_PLAYER_REJOINED, EVENT_REJOIN_REFUSED = 30, 31, 32, 33
EVENT_DESYNC_STATES = 25

__version__ = "0.2.0"


def version() -> Tuple[int, str]:
    """(number, string) of the loaded libretcon, e.g. (200, "0.2.0")."""
    return int(fn.version()), fn.version_string().decode()


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations", "Tuple")]
