"""Sessions: local, sync test, peer-to-peer and spectator, one Session class for all."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _capi as c
from ._capi import NULL_FRAME, fn
from ._game import GameBridge
from .errors import InputOutOfWindow, NotSynchronized, PredictionLimit, check, error_for

SAVE_AUTOMATIC, SAVE_EVERY_FRAME, SAVE_SPARSE = 0, 1, 2
LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR = 0, 1, 2, 3
INPUT_CONFIRMED, INPUT_PREDICTED, INPUT_DISCONNECTED = 0, 1, 2
SESSION_LOCAL, SESSION_SYNC_TEST, SESSION_P2P, SESSION_SPECTATOR = 1, 2, 3, 4
PEER_IDLE, PEER_SYNCHRONIZING, PEER_RUNNING, PEER_INTERRUPTED, PEER_DISCONNECTED = 0, 1, 2, 3, 4

Predictor = Callable[[int, int, Optional[bytes]], bytes]
LogFunction = Callable[[int, str], None]


@dataclass(frozen=True)
class SessionStats:
    current_frame: int
    confirmed_frame: int
    max_rollback_depth: int
    frames_advanced: int
    frames_resimulated: int
    rollbacks: int
    saves: int
    loads: int
    checksums: int
    frames_stalled: int
    rollback_depth_histogram: Dict[int, int] = field(default_factory=dict)  # depth -> count, non-zero only
    # The rollback window in use: max_prediction, or (p2p) the smallest max_prediction of the player
    # machines this one completed a handshake with; never raised again in the match. 0: lockstep.
    prediction_window: int = 0


@dataclass(frozen=True)
class PeerStats:
    state: int
    ping_us: int
    jitter_us: int
    send_queue_length: int
    local_frames_ahead: int
    remote_frames_ahead: int
    counters: Dict[str, int]  # bytes_sent, datagrams_received, dropped_*, desync_states_* ...
    # Late-input detection: input frames per frames-late bucket (0, 1-2, 3-4, 5-8, 9-15, 16-31,
    # 32-63, 64+), the worst lateness and the late_inputs events raised for this peer.
    lateness_histogram: List[int]
    lateness_max_frames: int
    late_input_events: int


@dataclass(frozen=True)
class DelayChoice:
    delay: int             # frames the rule gives
    previous: int          # our first local player's delay now
    median_rtt_us: int
    rtt_us: List[int]      # per player: its machine's RTT (0: local or not measured)
    frame: int = -1        # apply_input_delay: the frame it takes effect on every machine


def _peer_stats(s: c.PeerStats) -> PeerStats:
    return PeerStats(s.state, s.ping_us, s.jitter_us, s.send_queue_length, s.local_frames_ahead,
                     s.remote_frames_ahead, {n: getattr(s, n) for n in c.PEER_STAT_COUNTERS + c.DESYNC_STATE_COUNTERS},
                     list(s.lateness_histogram), s.lateness_max_frames, s.late_input_events)


class Session:
    """One retcon session. close() it (or use `with`); the game and transport are held until then.

    Refusals that mean "not now" return False instead of raising, from both add_local_input()
    and advance_frame(): a network session not synchronized yet (not_synchronized) and, for
    advance_frame(), a full prediction window (prediction_limit). Call again next tick. Every other result raises the
    retcon.Error subclass named after it."""

    def __init__(self, bridge: GameBridge, handle: ctypes.c_void_p, input_size: int, keep: Any = None) -> None:
        self._bridge = bridge
        self._handle = handle
        self._input_size = input_size
        self._keep = keep  # a network session borrows its transport: keep it alive

    # -- every kind

    def add_local_input(self, player: int, data: Union[bytes, bytearray, Sequence[int]]) -> bool:
        raw = bytes(data)
        code = fn.session_add_local_input(self._handle, player, raw, len(raw))
        if code == NotSynchronized.code and self._bridge.pending is None:
            return False
        self._call(code, "add_local_input")
        return True

    def advance_frame(self) -> bool:
        """Simulates one frame. False when not now: the prediction window is full, or a network
        session is not synchronized yet (call again next tick)."""
        code = fn.session_advance_frame(self._handle)
        if code in (PredictionLimit.code, NotSynchronized.code) and self._bridge.pending is None:
            return False
        self._call(code, "advance_frame")
        return True

    def poll(self, now_us: int) -> None:
        """Network sessions send and receive here; call it every tick with a monotonic clock."""
        self._call(fn.session_poll(self._handle, now_us), "poll")

    def set_input_delay(self, player: int, frames: int) -> None:
        self._call(fn.session_set_input_delay(self._handle, player, frames), "set_input_delay")

    @property
    def kind(self) -> int:
        out = c.U32()
        self._call(fn.session_get_kind(self._handle, ctypes.byref(out)), "get_kind")
        return out.value

    @property
    def current_frame(self) -> int:
        out = c.I32()
        self._call(fn.session_current_frame(self._handle, ctypes.byref(out)), "current_frame")
        return out.value

    @property
    def confirmed_frame(self) -> int:
        out = c.I32()
        self._call(fn.session_confirmed_frame(self._handle, ctypes.byref(out)), "confirmed_frame")
        return out.value

    def stats(self) -> SessionStats:
        s = c.new(c.SessionStats, fn.session_stats_init)
        self._call(fn.session_get_stats(self._handle, ctypes.byref(s)), "get_stats")
        histogram = {d: n for d, n in enumerate(s.rollback_depth_histogram) if n}
        return SessionStats(s.current_frame, s.confirmed_frame, s.max_rollback_depth, s.frames_advanced,
                            s.frames_resimulated, s.rollbacks, s.saves, s.loads, s.checksums, s.frames_stalled,
                            histogram, s.prediction_window)

    def frame_checksum(self, frame: int) -> int:
        """retcon's checksum of the state `frame` starts from, once confirmed and while held
        (WrongState: not confirmed yet; NotFound: no longer held)."""
        out = c.U64()
        self._call(fn.session_frame_checksum(self._handle, frame, ctypes.byref(out)), "frame_checksum")
        return out.value

    # -- network sessions

    @property
    def dropped_unknown_address(self) -> int:
        """Datagrams from addresses not in this network session, dropped unread (0 otherwise)."""
        out = c.U64()
        self._call(fn.session_dropped_unknown_address(self._handle, ctypes.byref(out)), "dropped_unknown_address")
        return out.value

    @property
    def checksums_compared(self) -> int:
        """Peer checksum reports compared with ours so far (desync detection at work)."""
        out = c.U64()
        self._call(fn.session_checksums_compared(self._handle, ctypes.byref(out)), "checksums_compared")
        return out.value

    @property
    def running(self) -> bool:
        """True once every peer is synchronized (local and sync-test sessions: always)."""
        out = c.U32()
        self._call(fn.session_is_running(self._handle, ctypes.byref(out)), "is_running")
        return bool(out.value)

    @property
    def should_wait(self) -> bool:
        """Time sync, the simple way: True when this tick should not advance (the advice is
        spread over ticks and used up as the game waits). Ask once per tick, after poll()."""
        out = c.U32()
        self._call(fn.session_should_wait(self._handle, ctypes.byref(out)), "should_wait")
        return bool(out.value)

    @property
    def should_catch_up(self) -> bool:
        """After a long stall (a blackout): True right after a frame advanced while frames are owed
        and the window has room: run one more frame in the same tick (at most every other tick)."""
        out = c.U32()
        self._call(fn.session_should_catch_up(self._handle, ctypes.byref(out)), "should_catch_up")
        return bool(out.value)

    @property
    def frames_to_wait(self) -> int:
        """Time-sync advice: frames this machine runs ahead and should wait (0 when none); used up
        as frame times pass without advancing."""
        out = c.I32()
        self._call(fn.session_frames_to_wait(self._handle, ctypes.byref(out)), "frames_to_wait")
        return out.value

    def disconnect_player(self, player: int) -> None:
        self._call(fn.session_disconnect_player(self._handle, player), "disconnect_player")

    def peer_stats(self, player: int) -> PeerStats:
        s = c.new(c.PeerStats, fn.peer_stats_init)
        self._call(fn.session_get_peer_stats(self._handle, player, ctypes.byref(s)), "get_peer_stats")
        return _peer_stats(s)

    def choose_input_delay(self, rtt_percent: int = 50, min_frames: int = 2, max_frames: int = 4) -> DelayChoice:
        """Adaptive input delay: rtt_percent of the median round trip to the peers, in frames,
        clamped to min_frames..max_frames. Reports it (EVENT_INPUT_DELAY_CHOSEN) and changes
        nothing: apply it with set_input_delay between rounds, on every machine at one frame."""
        rule = c.new(c.AdaptiveDelayRule, fn.adaptive_delay_rule_init)
        rule.rtt_percent, rule.min_frames, rule.max_frames = rtt_percent, min_frames, max_frames
        out = c.new(c.DelayChoice, fn.delay_choice_init)
        self._call(fn.session_choose_input_delay(self._handle, ctypes.byref(rule), ctypes.byref(out)),
                   "choose_input_delay")
        return DelayChoice(out.delay, out.previous, out.median_rtt_us, list(out.rtt_us))

    def apply_input_delay(self, rtt_percent: int = 50, min_frames: int = 2, max_frames: int = 4,
                          frame: int = NULL_FRAME) -> DelayChoice:
        """Adaptive delay applied: chooses like choose_input_delay, then every player machine
        sets its local players' delay from `frame` on (NULL_FRAME: earliest_decision_frame);
        each raises EVENT_INPUT_DELAY_APPLIED then. The returned choice's `frame` names it."""
        rule = c.new(c.AdaptiveDelayRule, fn.adaptive_delay_rule_init)
        rule.rtt_percent, rule.min_frames, rule.max_frames = rtt_percent, min_frames, max_frames
        out = c.new(c.DelayChoice, fn.delay_choice_init)
        self._call(fn.session_apply_input_delay(self._handle, ctypes.byref(rule), frame, ctypes.byref(out)),
                   "apply_input_delay")
        return DelayChoice(out.delay, out.previous, out.median_rtt_us, list(out.rtt_us), out.frame)

    def answer_rejoin(self, player: int, accept: bool) -> None:
        """Rejoin (p2p_session(..., allow_rejoin=1)): the game's answer to EVENT_REJOIN_REQUESTED."""
        self._call(fn.session_answer_rejoin(self._handle, player, 1 if accept else 0), "answer_rejoin")

    def between_rounds(self) -> None:
        """Automatic adaptive delay (p2p_session(..., adaptive_delay=1)): a round is over."""
        self._call(fn.session_between_rounds(self._handle), "between_rounds")

    def send_decision(self, data: Union[bytes, bytearray], frame: int) -> bool:
        """Timed decision: `data` (1..MAX_DECISION_SIZE bytes) reaches every machine's and
        spectator's advance_frame (its `decisions` parameter) whenever it simulates `frame`,
        re-simulations included, the same on every machine. False when 16 decisions of this
        machine are in flight (retry a few frames later). A frame before
        earliest_decision_frame raises InputOutOfWindow, whose `earliest` names the first that
        works."""
        raw = bytes(data)
        earliest = c.I32(NULL_FRAME)
        code = fn.session_send_decision(self._handle, raw, len(raw), frame, ctypes.byref(earliest))
        if code == PredictionLimit.code and self._bridge.pending is None:
            return False
        try:
            self._call(code, "send_decision")
        except InputOutOfWindow as e:
            e.earliest = earliest.value  # type: ignore[attr-defined]
            raise
        return True

    @property
    def earliest_decision_frame(self) -> int:
        """The first frame send_decision accepts now (NULL_FRAME for sessions without them)."""
        return int(fn.session_earliest_decision_frame(self._handle))

    def spectator_stats(self, index: int) -> PeerStats:
        s = c.new(c.PeerStats, fn.peer_stats_init)
        self._call(fn.session_get_spectator_stats(self._handle, index, ctypes.byref(s)), "get_spectator_stats")
        return _peer_stats(s)

    # -- recording

    def start_recording(self, checksum_interval: int = 1, state_interval: int = 60, user_data: bytes = b"",
                        frame_rate: int = 60, reserve_frames: int = 0) -> None:
        """Records the session's confirmed inputs and checksums (before the first advance)."""
        rc = c.new(c.RecordingConfig, fn.recording_config_init)
        rc.checksum_interval, rc.state_interval = checksum_interval, state_interval
        rc.frame_rate, rc.reserve_frames = frame_rate, reserve_frames
        data = (ctypes.c_uint8 * max(1, len(user_data))).from_buffer_copy(bytes(user_data).ljust(1, b"\0"))
        rc.user_data = ctypes.cast(data, c.u8p) if user_data else None
        rc.user_data_size = len(user_data)
        self._call(fn.session_start_recording(self._handle, ctypes.byref(rc)), "start_recording")

    def recording(self) -> "Replay":
        """A copy of what was recorded so far."""
        from ._replay import Replay
        handle = ctypes.c_void_p()
        self._call(fn.session_copy_recording(self._handle, ctypes.byref(handle)), "copy_recording")
        return Replay(handle)

    def save_recording(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self._call(fn.session_save_recording(self._handle, os.fsencode(path)), "save_recording")

    # -- lifetime

    def close(self) -> None:
        if self._handle:
            check(fn.session_destroy(self._handle), "destroy")
            self._handle = ctypes.c_void_p()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            fn.session_destroy(self._handle)

    def _call(self, code: int, what: str) -> None:
        self._bridge.take_pending()
        check(code, what)


def _config(bridge: GameBridge, num_players: int, input_size: int, max_state_size: int, max_prediction: int,
            save_mode: int, log_level: int) -> c.SessionConfig:
    config = c.new(c.SessionConfig, fn.session_config_init)
    config.num_players = num_players
    config.input_size = input_size
    config.max_prediction = max_prediction
    config.max_state_size = max_state_size
    config.save_mode = save_mode
    if bridge.predict is not None:
        config.predictor.predict = bridge.predict
    if bridge.log is not None:
        config.logger.log = bridge.log
        config.logger.min_level = log_level
    reason = ctypes.c_char_p()
    code = fn.session_config_validate(ctypes.byref(config), ctypes.byref(bridge.callbacks), ctypes.byref(reason))
    if code != 0:
        raise error_for(code, "config", reason.value.decode() if reason.value else None)
    return config


def _validate(validate: Any, what: str, config: c.SessionConfig, kind_config: ctypes.Structure,
              bridge: GameBridge) -> None:
    reason = ctypes.c_char_p()
    code = validate(ctypes.byref(config), ctypes.byref(kind_config), ctypes.byref(bridge.callbacks),
                    ctypes.byref(reason))
    if code != 0:
        raise error_for(code, what, reason.value.decode() if reason.value else None)


def _set_match_key(config: Any, key: Optional[bytes]) -> None:
    if key is None:
        return
    raw = bytes(key)
    if len(raw) != c.MATCH_KEY_SIZE:
        raise ValueError("match_key must be %d bytes" % c.MATCH_KEY_SIZE)
    config.has_match_key = 1
    ctypes.memmove(config.match_key, raw, len(raw))


def _set_fields(struct: ctypes.Structure, fields: Dict[str, Any]) -> None:
    known = {name for name, _ in struct._fields_}
    for name, value in fields.items():
        if name not in known:
            raise TypeError("unknown option %r" % name)
        setattr(struct, name, value)


def local_session(game: Any, num_players: int, input_size: int, max_state_size: int, *,
                  max_prediction: int = 8, save_mode: int = SAVE_AUTOMATIC, predictor: Optional[Predictor] = None,
                  log: Optional[LogFunction] = None, log_level: int = LOG_INFO) -> Session:
    """All players on this machine: no prediction, no rollback."""
    bridge = GameBridge(game, predictor, log)
    config = _config(bridge, num_players, input_size, max_state_size, max_prediction, save_mode, log_level)
    handle = ctypes.c_void_p()
    code = fn.local_session_create(ctypes.byref(config), ctypes.byref(bridge.callbacks), ctypes.byref(handle))
    bridge.take_pending()
    check(code, "local_session_create")
    return Session(bridge, handle, input_size)


def sync_test_session(game: Any, num_players: int, input_size: int, max_state_size: int, *, check_distance: int = 2,
                      check_interval: int = 1, max_prediction: Optional[int] = None,
                      save_mode: int = SAVE_AUTOMATIC, log: Optional[LogFunction] = None,
                      log_level: int = LOG_INFO) -> Session:
    """Every check_interval frames: roll back check_distance frames, re-simulate and compare
    checksums. check_interval = check_distance re-simulates each frame once (GGPO's way)."""
    bridge = GameBridge(game, None, log)
    config = _config(bridge, num_players, input_size, max_state_size,
                     max(check_distance, max_prediction or 0), save_mode, log_level)
    sync = c.new(c.SyncTestConfig, fn.sync_test_config_init)
    sync.check_distance = check_distance
    sync.check_interval = check_interval
    _validate(fn.sync_test_config_validate, "sync_test_session_create", config, sync, bridge)
    handle = ctypes.c_void_p()
    code = fn.sync_test_session_create(ctypes.byref(config), ctypes.byref(sync), ctypes.byref(bridge.callbacks),
                                       ctypes.byref(handle))
    bridge.take_pending()
    check(code, "sync_test_session_create")
    return Session(bridge, handle, input_size)


LOCAL = "local"


def p2p_session(game: Any, players: Sequence[Union[str, c.PeerAddress]], input_size: int, max_state_size: int,
                transport: "Transport", *, spectators: Sequence[c.PeerAddress] = (),
                match_key: Optional[bytes] = None, max_prediction: int = 8,
                save_mode: int = SAVE_AUTOMATIC, predictor: Optional[Predictor] = None,
                log: Optional[LogFunction] = None, log_level: int = LOG_INFO, **p2p_options: Any) -> Session:
    """A peer-to-peer session. `players`: one entry per player, retcon.LOCAL or the PeerAddress of
    the machine that player is on; `spectators`: machines this one streams to; `match_key`: the
    32 bytes the lobby gave every machine of the match (docs/SECURITY.md: datagrams are then
    authenticated and encrypted), or None. Other keyword arguments set retcon_p2p_config fields by
    name (rng_seed: 0 = fresh OS entropy, desync_interval, frame_rate, notify_delay_us,
    disconnect_timeout_us, sync_round_trips, input_batch_frames, loss_hold_frames, allow_local_only, ...)."""
    bridge = GameBridge(game, predictor, log)
    config = _config(bridge, len(players), input_size, max_state_size, max_prediction, save_mode, log_level)
    p2p = c.new(c.P2PConfig, fn.p2p_config_init)
    for p, where in enumerate(players):
        if isinstance(where, str):
            if where != LOCAL:
                raise ValueError("a player is retcon.LOCAL or a PeerAddress, not %r" % where)
            p2p.player_kinds[p] = 0
        else:
            p2p.player_kinds[p] = 1
            p2p.player_addresses[p] = where
    if len(spectators) > c.MAX_SPECTATORS:
        raise ValueError("at most %d spectators" % c.MAX_SPECTATORS)
    p2p.num_spectators = len(spectators)
    for i, address in enumerate(spectators):
        p2p.spectators[i] = address
    _set_match_key(p2p, match_key)
    _set_fields(p2p, p2p_options)
    _validate(fn.p2p_config_validate, "p2p_session_create", config, p2p, bridge)
    handle = ctypes.c_void_p()
    code = fn.p2p_session_create(ctypes.byref(config), ctypes.byref(p2p), ctypes.byref(bridge.callbacks),
                                 transport._handle, ctypes.byref(handle))
    bridge.take_pending()
    check(code, "p2p_session_create")
    return Session(bridge, handle, input_size, keep=transport)


def spectator_session(game: Any, num_players: int, input_size: int, max_state_size: int, transport: "Transport",
                      host: c.PeerAddress, *, match_key: Optional[bytes] = None,
                      log: Optional[LogFunction] = None, log_level: int = LOG_INFO,
                      **spectator_options: Any) -> Session:
    """Watches a match: `host` is the player machine that streams confirmed inputs to us. Other
    keyword arguments set retcon_spectator_config fields (catchup_threshold, catchup_max_frames...)."""
    bridge = GameBridge(game, None, log)
    config = _config(bridge, num_players, input_size, max_state_size, 8, SAVE_AUTOMATIC, log_level)
    spec = c.new(c.SpectatorConfig, fn.spectator_config_init)
    spec.host = host
    _set_match_key(spec, match_key)
    _set_fields(spec, spectator_options)
    _validate(fn.spectator_config_validate, "spectator_session_create", config, spec, bridge)
    handle = ctypes.c_void_p()
    code = fn.spectator_session_create(ctypes.byref(config), ctypes.byref(spec), ctypes.byref(bridge.callbacks),
                                       transport._handle, ctypes.byref(handle))
    bridge.take_pending()
    check(code, "spectator_session_create")
    return Session(bridge, handle, input_size, keep=transport)


from ._net import Transport  # noqa: E402  (the session functions name it in their hints)
from ._replay import Replay  # noqa: E402,F401
