"""Replays: load, save, inspect, edit, play back, bisect and sync-test (docs/REPLAY_FORMAT.md)."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Union

from . import _capi as c
from ._capi import fn
from ._game import Decision, GameBridge, split_inputs
from .errors import check, error_for

REPLAY_GAME_CHECKSUM = 1
REPLAY_STORES_STATES = 2


@dataclass(frozen=True)
class ReplayInfo:
    num_players: int
    input_size: int
    frame_rate: int
    checksum_interval: int
    flags: int
    frame_count: int
    checkpoint_count: int
    stored_states: int
    user_data: bytes


@dataclass(frozen=True)
class Checkpoint:
    frame: int
    checksum: int
    state: Optional[bytes]


@dataclass(frozen=True)
class ReplayReport:
    """What a run found; frames are -1 when they do not apply."""
    start_frame: int
    frames_played: int
    checksums_verified: int
    last_good: int
    first_bad: int            # the first frame whose state differs from the recording
    exact: bool
    expected: int
    actual: int
    replayed_state: Optional[bytes]   # bisect
    reference_state: Optional[bytes]  # bisect: recorded state of first_bad, else the last good one
    reference_frame: int
    reference_is_recorded: bool
    check_distance: int               # sync test
    mismatch_frame: int               # sync test: first frame whose re-simulation differed
    mismatch_first: int
    mismatch_resimulated: int
    mismatch_text_first: Optional[str]
    mismatch_text_resimulated: Optional[str]
    rollbacks: int
    frames_resimulated: int

    @property
    def diverged(self) -> bool:
        return self.first_bad != -1

    @property
    def deterministic(self) -> bool:
        return self.mismatch_frame == -1


def _bytes(pointer: Any, length: int) -> Optional[bytes]:
    return ctypes.string_at(pointer, length) if pointer else None


def _text(pointer: Any, length: int) -> Optional[str]:
    return ctypes.string_at(pointer, length).decode("utf-8", "replace") if pointer else None


class Replay:
    """A recorded match. Replay.load(path) / Replay.from_bytes(data), or Session.recording()."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self._handle = handle

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Replay":
        handle = ctypes.c_void_p()
        error = ctypes.create_string_buffer(256)
        code = fn.replay_load_file(os.fsencode(path), ctypes.byref(handle), error, len(error))
        if code != 0:
            raise error_for(code, "replay_load_file", error.value.decode("utf-8", "replace") or None)
        return cls(handle)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Replay":
        handle = ctypes.c_void_p()
        error = ctypes.create_string_buffer(256)
        raw = bytes(data)
        code = fn.replay_load(raw, len(raw), ctypes.byref(handle), error, len(error))
        if code != 0:
            raise error_for(code, "replay_load", error.value.decode("utf-8", "replace") or None)
        return cls(handle)

    def to_bytes(self) -> bytes:
        size = c.SZ()
        check(fn.replay_serialize(self._handle, None, 0, ctypes.byref(size)), "replay_serialize")
        buffer = ctypes.create_string_buffer(size.value)
        check(fn.replay_serialize(self._handle, buffer, size.value, ctypes.byref(size)), "replay_serialize")
        return buffer.raw[:size.value]

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        check(fn.replay_save_file(self._handle, os.fsencode(path)), "replay_save_file")

    @property
    def info(self) -> ReplayInfo:
        i = c.new(c.ReplayInfo, fn.replay_info_init)
        check(fn.replay_get_info(self._handle, ctypes.byref(i)), "replay_get_info")
        return ReplayInfo(i.num_players, i.input_size, i.frame_rate, i.checksum_interval, i.flags, i.frame_count,
                          i.checkpoint_count, i.stored_states, _bytes(i.user_data, i.user_data_size) or b"")

    def __len__(self) -> int:
        return self.info.frame_count

    def inputs(self, frame: int) -> List[bytes]:
        """Every player's input of `frame`."""
        fi = c.FrameInputs()
        check(fn.replay_get_inputs(self._handle, frame, ctypes.byref(fi)), "replay_get_inputs")
        return split_inputs(ctypes.string_at(fi.bytes, fi.player_count * fi.input_size), fi.input_size,
                            fi.player_count)

    def decisions(self, frame: int) -> List[Decision]:
        """The timed decisions recorded for `frame`, in the order advance_frame got them."""
        fi = c.FrameInputs()
        check(fn.replay_get_inputs(self._handle, frame, ctypes.byref(fi)), "replay_get_inputs")
        return [Decision(fi.decisions[k].sender, ctypes.string_at(fi.decisions[k].bytes, fi.decisions[k].size))
                for k in range(fi.decision_count)]

    def set_input(self, frame: int, player: int, data: bytes) -> None:
        raw = bytes(data)
        check(fn.replay_set_input(self._handle, frame, player, raw, len(raw)), "replay_set_input")

    def checkpoints(self) -> List[Checkpoint]:
        out = []
        for index in range(self.info.checkpoint_count):
            cp = c.ReplayCheckpoint()
            check(fn.replay_get_checkpoint(self._handle, index, ctypes.byref(cp)), "replay_get_checkpoint")
            out.append(Checkpoint(cp.frame, cp.checksum, _bytes(cp.state, cp.state_length)))
        return out

    # -- runs (the game must be in the replay's starting state, rebuilt from info.user_data)

    def play(self, game: Any, max_state_size: int, progress: Optional[Callable[[int, int], None]] = None) -> ReplayReport:
        """Every frame at full speed, comparing each recorded checksum (first_bad: the first that differs)."""
        return self._run(fn.replay_play, "replay_play", game, max_state_size, progress)

    def bisect(self, game: Any, max_state_size: int, from_frame: int = 0,
               progress: Optional[Callable[[int, int], None]] = None) -> ReplayReport:
        """The first frame whose state differs from the recording, re-running from the stored state
        nearest before from_frame; the game is left in that replayed state."""
        return self._run(fn.replay_bisect, "replay_bisect", game, max_state_size, progress, from_frame=from_frame)

    def sync_test(self, game: Any, max_state_size: int, check_distance: int = 2,
                  progress: Optional[Callable[[int, int], None]] = None) -> ReplayReport:
        """The recorded inputs through a sync test (determinism) and the recorded checksums."""
        return self._run(fn.replay_sync_test, "replay_sync_test", game, max_state_size, progress,
                         check_distance=check_distance)

    def _run(self, run: Any, what: str, game: Any, max_state_size: int,
             progress: Optional[Callable[[int, int], None]], **fields: Any) -> ReplayReport:
        bridge = GameBridge(game)
        config = c.new(c.ReplayRunConfig, fn.replay_run_config_init)
        config.max_state_size = max_state_size
        for name, value in fields.items():
            setattr(config, name, value)
        keep = None
        if progress is not None:
            keep = c.Progress(lambda user, done, total: bridge._guard(lambda: progress(done, total), None))
            config.progress = keep
        r = c.new(c.ReplayReport, fn.replay_report_init)
        code = run(self._handle, ctypes.byref(bridge.callbacks), ctypes.byref(config), ctypes.byref(r))
        del keep
        bridge.take_pending()
        check(code, what)
        return ReplayReport(r.start_frame, r.frames_played, r.checksums_verified, r.last_good, r.first_bad,
                            bool(r.exact), r.expected, r.actual, _bytes(r.replayed_state, r.replayed_state_length),
                            _bytes(r.reference_state, r.reference_state_length), r.reference_frame,
                            bool(r.reference_is_recorded), r.check_distance, r.mismatch_frame, r.mismatch_first,
                            r.mismatch_resimulated, _text(r.mismatch_text_first, r.mismatch_text_first_len),
                            _text(r.mismatch_text_resimulated, r.mismatch_text_resimulated_len), r.rollbacks,
                            r.frames_resimulated)

    def close(self) -> None:
        if self._handle:
            check(fn.replay_destroy(self._handle), "replay_destroy")
            self._handle = ctypes.c_void_p()

    def __enter__(self) -> "Replay":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            fn.replay_destroy(self._handle)
