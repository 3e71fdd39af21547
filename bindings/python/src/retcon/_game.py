"""The bridge between a Python game object and retcon_game_callbacks. Exceptions never unwind
through C: a callback's exception is kept and re-raised from the retcon call that ran it."""

from __future__ import annotations

import ctypes
import inspect
from dataclasses import dataclass
from typing import Any, Callable, List, NamedTuple, Optional, Protocol, Sequence

from . import _capi as c
from ._capi import fn

ADVANCE_RESIMULATING = 1


@dataclass(frozen=True)
class Event:
    """One session event (retcon_event). Fields that do not apply are -1, 0 or None."""
    type: int
    name: str
    player: int
    frame: int
    count: int
    total: int
    checksum_local: int
    checksum_remote: int
    text_local: Optional[str]
    text_remote: Optional[str]
    message: str
    # EVENT_DESYNC_DETECTED / EVENT_DESYNC_STATES (share_desync_states=1): the saved states' bytes,
    # ours and (EVENT_DESYNC_STATES) the peer's of `frame`; None when not there.
    state_local: Optional[bytes] = None
    state_remote: Optional[bytes] = None


class Game(Protocol):
    """What a game supplies. Optional methods: on_event(event: Event), describe_state(frame, data)
    -> str, checksum(frame, data) -> int (else retcon hashes the saved bytes with XXH3-64)."""

    def save_state(self, frame: int) -> bytes: ...

    def load_state(self, frame: int, data: bytes) -> None: ...

    def advance_frame(self, frame: int, inputs: List[bytes], flags: int) -> None: ...
    # A game that takes timed decisions declares a 4th parameter named `decisions`: a list of
    # Decision(sender, data), the frame's decisions in the order every machine applies them.


def _text(pointer: Optional[int], length: int) -> Optional[str]:
    return ctypes.string_at(pointer, length).decode("utf-8", "replace") if pointer else None


def event_type_name(event_type: int) -> str:
    return fn.event_type_name(event_type).decode()


def _bytes(pointer: Optional[int], length: int) -> Optional[bytes]:
    return ctypes.string_at(pointer, length) if pointer else None


def event_of(e: c.Event) -> Event:
    return Event(e.type, event_type_name(e.type), e.player, e.frame, e.count, e.total, e.checksum_local,
                 e.checksum_remote, _text(e.text_local, e.text_local_len), _text(e.text_remote, e.text_remote_len),
                 e.message.decode("utf-8", "replace") if e.message else "",
                 _bytes(e.state_local, e.state_local_len), _bytes(e.state_remote, e.state_remote_len))


class Decision(NamedTuple):
    """A timed decision (Session.send_decision) of the frame being simulated."""
    sender: int   # the first player of the machine that sent it
    data: bytes


def _takes_decisions(game: Any) -> bool:
    try:
        return "decisions" in inspect.signature(game.advance_frame).parameters
    except (TypeError, ValueError):
        return False


class GameBridge:
    """Builds the C callbacks of `game`. Keep it alive as long as retcon may call them."""

    def __init__(self, game: Any, predictor: Optional[Callable[[int, int, Optional[bytes]], bytes]] = None,
                 log: Optional[Callable[[int, str], None]] = None) -> None:
        self.game = game
        self.pending: Optional[BaseException] = None
        cb = c.new(c.GameCallbacks, fn.game_callbacks_init)
        self._save = c.SaveState(self._save_state)
        self._load = c.LoadState(self._load_state)
        self._advance = c.AdvanceFrame(self._advance_frame)
        self._wants_decisions: Optional[bool] = None  # looked up at the first frame
        cb.save_state, cb.load_state, cb.advance_frame = self._save, self._load, self._advance
        if hasattr(game, "on_event"):
            self._event = c.OnEvent(self._on_event)
            cb.on_event = self._event
        if hasattr(game, "describe_state"):
            self._describe = c.DescribeState(self._describe_state)
            cb.describe_state = self._describe
        if hasattr(game, "checksum"):
            self._checksum = c.Checksum(self._checksum_state)
            cb.checksum = self._checksum
        self.callbacks = cb
        self._predictor = predictor
        self.predict = c.Predict(self._predict) if predictor is not None else None
        self._log_fn = log
        self.log = c.Log(self._log) if log is not None else None

    def take_pending(self) -> None:
        """Re-raises the exception a callback raised, if any."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            raise pending

    def _guard(self, body: Callable[[], Any], failed: Any) -> Any:
        if self.pending is not None:
            return failed
        try:
            return body()
        except BaseException as e:  # never let an exception unwind through C
            self.pending = e
            return failed

    def _save_state(self, user: Any, frame: int, buffer: Any, capacity: int) -> int:
        def save() -> int:
            data = bytes(self.game.save_state(frame))
            if len(data) <= capacity:
                ctypes.memmove(buffer, data, len(data))
            return len(data)
        # On an exception claim more than fits: the session stops the frame with save_failed.
        return int(self._guard(save, capacity + 1))

    def _load_state(self, user: Any, frame: int, buffer: Any, length: int) -> None:
        self._guard(lambda: self.game.load_state(frame, ctypes.string_at(buffer, length)), None)

    def _advance_frame(self, user: Any, frame: int, inputs: Any, flags: int) -> None:
        def advance() -> None:
            fi = inputs.contents
            n = fi.input_size
            raw = ctypes.string_at(fi.bytes, fi.player_count * n)
            inputs_list = [raw[p * n:(p + 1) * n] for p in range(fi.player_count)]
            if self._wants_decisions is None:
                self._wants_decisions = _takes_decisions(self.game)
            if self._wants_decisions:
                decisions = [Decision(fi.decisions[k].sender, ctypes.string_at(fi.decisions[k].bytes, fi.decisions[k].size))
                             for k in range(fi.decision_count)]
                self.game.advance_frame(frame, inputs_list, flags, decisions)
            else:
                self.game.advance_frame(frame, inputs_list, flags)
        self._guard(advance, None)

    def _on_event(self, user: Any, event: Any) -> None:
        self._guard(lambda: self.game.on_event(event_of(event.contents)), None)

    def _describe_state(self, user: Any, frame: int, buffer: Any, length: int, sink: Any) -> None:
        def describe() -> None:
            text = str(self.game.describe_state(frame, ctypes.string_at(buffer, length))).encode()
            sink.contents.write(sink.contents.user, text, len(text))
        self._guard(describe, None)

    def _checksum_state(self, user: Any, frame: int, buffer: Any, length: int) -> int:
        return int(self._guard(lambda: int(self.game.checksum(frame, ctypes.string_at(buffer, length)))
                               & 0xFFFFFFFFFFFFFFFF, 0))

    def _predict(self, user: Any, player: int, frame: int, last: Any, out: Any, size: int) -> None:
        def predict() -> None:
            assert self._predictor is not None
            guess = bytes(self._predictor(player, frame, ctypes.string_at(last, size) if last else None))
            ctypes.memmove(out, guess[:size].ljust(size, b"\0"), size)
        self._guard(predict, None)

    def _log(self, user: Any, level: int, message: bytes) -> None:
        assert self._log_fn is not None
        self._guard(lambda: self._log_fn(level, message.decode("utf-8", "replace")), None)  # type: ignore[misc]


def describe_with(game: Any, frame: int, data: Optional[bytes]) -> Optional[str]:
    if data is None or not hasattr(game, "describe_state"):
        return None
    return str(game.describe_state(frame, data))


def split_inputs(raw: bytes, size: int, players: int) -> List[bytes]:
    return [raw[p * size:(p + 1) * size] for p in range(players)]


def as_bytes(data: Sequence[int]) -> bytes:
    return bytes(data)
