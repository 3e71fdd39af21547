"""retcon's results as Python exceptions: one class per retcon_result, all subclasses of Error."""

from __future__ import annotations

from typing import Dict, Optional, Type

from ._capi import fn

OK = 0


class Error(Exception):
    """A retcon call returned a result other than OK. `code` is the retcon_result number,
    `name` its stable name (retcon_result_name), `reason` the library's explanation if any."""

    code: int = -1

    def __init__(self, code: int, what: str = "", reason: Optional[str] = None) -> None:
        self.code = code
        self.name = result_name(code)
        self.what = what
        self.reason = reason
        text = "%s: %s (%d)" % (what, self.name, code) if what else "%s (%d)" % (self.name, code)
        if reason:
            text += ": " + reason
        super().__init__(text)


def _make(name: str, code: int, doc: str) -> Type[Error]:
    cls = type(name, (Error,), {"__doc__": doc, "code": code})
    return cls


InvalidArgument = _make("InvalidArgument", 1, "A null pointer, unknown struct size or bad value (invalid_argument).")
InvalidPlayer = _make("InvalidPlayer", 2, "Unknown player index (invalid_player).")
InvalidInputSize = _make("InvalidInputSize", 3, "Input bytes of another size than the session's (invalid_input_size).")
WrongState = _make("WrongState", 4, "Not valid now, e.g. from inside a callback (wrong_state).")
PredictionLimit = _make("PredictionLimit", 5, "Not advanced: wait for remote inputs (prediction_limit).")
SaveFailed = _make("SaveFailed", 6, "save_state needed more than max_state_size (save_failed).")
InputAlreadyAdded = _make("InputAlreadyAdded", 7, "This player's input was already given this frame.")
MissingLocalInput = _make("MissingLocalInput", 8, "A local player has no input for the next frame.")
InputOutOfWindow = _make("InputOutOfWindow", 9, "input_out_of_window")
OutOfMemory = _make("OutOfMemory", 10, "out_of_memory")
NotSynchronized = _make("NotSynchronized", 11, "The handshake is not complete yet (not_synchronized).")
TooManyPlayers = _make("TooManyPlayers", 12, "too_many_players")
TransportError = _make("TransportError", 13, "A socket could not be opened or used (transport_error).")
BadPacket = _make("BadPacket", 14, "bad_packet")
PlayerDisconnected = _make("PlayerDisconnected", 15, "player_disconnected")
NotFound = _make("NotFound", 16, "not_found")
IoError = _make("IoError", 17, "A file could not be read or written (io_error).")
CorruptData = _make("CorruptData", 18, "A damaged replay file (corrupt_data).")
VersionMismatch = _make("VersionMismatch", 19, "A newer format or protocol (version_mismatch).")
InternalError = _make("InternalError", 20, "A bug in retcon, reported instead of crashing (internal_error).")
Unsupported = _make("Unsupported", 21, "A feature this build lacks: a match key without libsodium (unsupported).")

_BY_CODE: Dict[int, Type[Error]] = {cls.code: cls for cls in (
    InvalidArgument, InvalidPlayer, InvalidInputSize, WrongState, PredictionLimit, SaveFailed, InputAlreadyAdded,
    MissingLocalInput, InputOutOfWindow, OutOfMemory, NotSynchronized, TooManyPlayers, TransportError, BadPacket,
    PlayerDisconnected, NotFound, IoError, CorruptData, VersionMismatch, InternalError, Unsupported)}


def result_name(code: int) -> str:
    """The stable lowercase name of a retcon_result ("ok", "invalid_argument", ...)."""
    return fn.result_name(code).decode()


def error_for(code: int, what: str = "", reason: Optional[str] = None) -> Error:
    """The exception for `code`: its own class when known, else Error."""
    return _BY_CODE.get(code, Error)(code, what, reason)


def check(code: int, what: str, reason: Optional[str] = None) -> None:
    if code != OK:
        raise error_for(code, what, reason)
