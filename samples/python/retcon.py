"""retcon: a small ctypes binding of the retcon C API (libretcon.so), standard library only.

The library is found through the RETCON_LIB environment variable (a path to libretcon.so), or
else in a build directory next to this repository (build*/capi/libretcon.so), or else by the
system loader ("libretcon.so.0").

    import retcon

    class Game:
        def save_state(self, frame): return bytes(...)          # the whole state
        def load_state(self, frame, data): ...                  # restore it
        def advance_frame(self, frame, inputs, flags): ...      # inputs: list of bytes
        # optional: on_event(self, event_dict), describe_state(self, frame, data) -> str

    with retcon.sync_test_session(Game(), num_players=2, input_size=1,
                                  max_state_size=64) as session:
        session.add_local_input(0, b"\\x01")
        session.add_local_input(1, b"\\x00")
        session.advance_frame()
        print(session.stats())

Failures raise retcon.Error with the C result code and its name. An exception raised by a game
callback is kept and re-raised from the session call that ran the callback.
"""

import ctypes
import glob
import os

# ---------------------------------------------------------------------------------------------
# Loading the library.


def _find_library():
    path = os.environ.get("RETCON_LIB")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for candidate in sorted(glob.glob(os.path.join(root, "build*", "capi", "libretcon.so"))):
        return candidate
    return "libretcon.so.0"


_lib = ctypes.CDLL(_find_library())

# ---------------------------------------------------------------------------------------------
# Constants (retcon.h).

OK = 0
PREDICTION_LIMIT = 5
SAVE_FAILED = 6
INTERNAL_ERROR = 20

SAVE_AUTOMATIC, SAVE_EVERY_FRAME, SAVE_SPARSE = 0, 1, 2
LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERROR = 0, 1, 2, 3
INPUT_CONFIRMED, INPUT_PREDICTED, INPUT_DISCONNECTED = 0, 1, 2
ADVANCE_RESIMULATING = 1
EVENT_SYNC_TEST_MISMATCH = 9
EVENT_SAVE_FAILED = 11
MAX_PREDICTION_FRAMES = 64
MAX_PLAYERS = 8
MAX_SPECTATORS = 32
PLAYER_LOCAL, PLAYER_REMOTE = 0, 1
EVENT_TIMESYNC = 7
EVENT_DESYNC_DETECTED = 8

# ---------------------------------------------------------------------------------------------
# Structs and callback types, field for field as in retcon.h.

_u8p = ctypes.POINTER(ctypes.c_uint8)


class FrameInputs(ctypes.Structure):
    _fields_ = [("bytes", _u8p), ("status", _u8p),
                ("input_size", ctypes.c_uint32), ("player_count", ctypes.c_uint32)]


_TextWrite = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)


class TextSink(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("write", _TextWrite)]


class Event(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("player", ctypes.c_int32), ("frame", ctypes.c_int32),
                ("count", ctypes.c_int32), ("total", ctypes.c_int32),
                ("checksum_local", ctypes.c_uint64), ("checksum_remote", ctypes.c_uint64),
                ("text_local", ctypes.c_void_p), ("text_local_len", ctypes.c_size_t),
                ("text_remote", ctypes.c_void_p), ("text_remote_len", ctypes.c_size_t),
                ("message", ctypes.c_char_p)]


_SaveState = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int32, _u8p, ctypes.c_size_t)
_LoadState = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, _u8p, ctypes.c_size_t)
_AdvanceFrame = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(FrameInputs),
                                 ctypes.c_uint32)
_OnEvent = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Event))
_DescribeState = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, _u8p, ctypes.c_size_t,
                                  ctypes.POINTER(TextSink))
_Checksum = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int32, _u8p, ctypes.c_size_t)
_Predict = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, _u8p, _u8p,
                            ctypes.c_size_t)
_Log = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p)


class GameCallbacks(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("user", ctypes.c_void_p),
                ("save_state", _SaveState), ("load_state", _LoadState),
                ("advance_frame", _AdvanceFrame), ("on_event", _OnEvent),
                ("describe_state", _DescribeState), ("checksum", _Checksum)]


class Predictor(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("predict", _Predict)]


class Logger(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("log", _Log), ("min_level", ctypes.c_uint32)]


class SessionConfig(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("num_players", ctypes.c_uint32),
                ("input_size", ctypes.c_uint32), ("max_prediction", ctypes.c_int32),
                ("save_mode", ctypes.c_uint32), ("max_state_size", ctypes.c_uint64),
                ("predictor", Predictor), ("logger", Logger)]


class SyncTestConfig(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("check_distance", ctypes.c_int32)]


class SessionStats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("current_frame", ctypes.c_int32),
                ("confirmed_frame", ctypes.c_int32), ("max_rollback_depth", ctypes.c_uint32),
                ("frames_advanced", ctypes.c_uint64), ("frames_resimulated", ctypes.c_uint64),
                ("rollbacks", ctypes.c_uint64), ("saves", ctypes.c_uint64), ("loads", ctypes.c_uint64),
                ("checksums", ctypes.c_uint64), ("frames_stalled", ctypes.c_uint64),
                ("rollback_depth_histogram", ctypes.c_uint64 * (MAX_PREDICTION_FRAMES + 1))]


class PeerAddress(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("bytes", ctypes.c_uint8 * 32)]

    def __eq__(self, other):
        return bytes(self.bytes[:self.size]) == bytes(other.bytes[:other.size]) and self.size == other.size

    def __repr__(self):
        return "PeerAddress(%s)" % bytes(self.bytes[:self.size]).hex()


class LinkProfile(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("latency_us", ctypes.c_uint64), ("jitter_us", ctypes.c_uint64),
                ("loss", ctypes.c_double), ("duplicate", ctypes.c_double), ("reorder", ctypes.c_double),
                ("reorder_delay_us", ctypes.c_uint64), ("bandwidth_bytes_per_s", ctypes.c_uint64),
                ("max_queue_delay_us", ctypes.c_uint64), ("blackout_period_us", ctypes.c_uint64),
                ("blackout_duration_us", ctypes.c_uint64), ("blackout_offset_us", ctypes.c_uint64)]


class P2PConfig(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("frame_rate", ctypes.c_uint32),
                ("notify_delay_us", ctypes.c_uint64), ("disconnect_timeout_us", ctypes.c_uint64),
                ("rng_seed", ctypes.c_uint64), ("sync_round_trips", ctypes.c_int32),
                ("desync_interval", ctypes.c_int32), ("player_kinds", ctypes.c_uint32 * MAX_PLAYERS),
                ("player_addresses", PeerAddress * MAX_PLAYERS), ("num_spectators", ctypes.c_uint32),
                ("spectators", PeerAddress * MAX_SPECTATORS), ("input_batch_frames", ctypes.c_uint32),
                ("loss_hold_frames", ctypes.c_uint32), ("has_match_key", ctypes.c_uint32),
                ("match_key", ctypes.c_uint8 * 32), ("allow_local_only", ctypes.c_uint32),
                ("handshake_timeout_us", ctypes.c_uint64)]


_U64 = ctypes.c_uint64


class PeerStats(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("state", ctypes.c_uint32), ("ping_us", _U64), ("jitter_us", _U64),
                ("send_queue_length", ctypes.c_uint32), ("local_frames_ahead", ctypes.c_int32),
                ("remote_frames_ahead", ctypes.c_int32)] + [
        (name, _U64) for name in (
            "bytes_sent", "datagrams_sent", "bytes_received", "datagrams_received", "dropped_truncated",
            "dropped_oversized", "dropped_bad_magic", "dropped_bad_version", "dropped_unknown_type",
            "dropped_malformed", "dropped_bad_nonce", "dropped_replayed", "dropped_out_of_window",
            "dropped_wrong_state", "send_failures", "dropped_bad_checksum")]


# ---------------------------------------------------------------------------------------------
# Function prototypes.

_result = ctypes.c_int
_session_p = ctypes.c_void_p


def _proto(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_result_name = _proto("retcon_result_name", ctypes.c_char_p, _result)
_event_type_name = _proto("retcon_event_type_name", ctypes.c_char_p, ctypes.c_uint32)
_version = _proto("retcon_version", ctypes.c_uint32)
_version_string = _proto("retcon_version_string", ctypes.c_char_p)
_game_callbacks_init = _proto("retcon_game_callbacks_init", _result, ctypes.POINTER(GameCallbacks))
_session_config_init = _proto("retcon_session_config_init", _result, ctypes.POINTER(SessionConfig))
_session_config_validate = _proto("retcon_session_config_validate", _result, ctypes.POINTER(SessionConfig),
                                  ctypes.POINTER(GameCallbacks), ctypes.POINTER(ctypes.c_char_p))
_sync_test_config_init = _proto("retcon_sync_test_config_init", _result, ctypes.POINTER(SyncTestConfig))
_session_stats_init = _proto("retcon_session_stats_init", _result, ctypes.POINTER(SessionStats))
_local_session_create = _proto("retcon_local_session_create", _result, ctypes.POINTER(SessionConfig),
                               ctypes.POINTER(GameCallbacks), ctypes.POINTER(_session_p))
_sync_test_session_create = _proto("retcon_sync_test_session_create", _result, ctypes.POINTER(SessionConfig),
                                   ctypes.POINTER(SyncTestConfig), ctypes.POINTER(GameCallbacks),
                                   ctypes.POINTER(_session_p))
_session_destroy = _proto("retcon_session_destroy", _result, _session_p)
_session_add_local_input = _proto("retcon_session_add_local_input", _result, _session_p, ctypes.c_int32,
                                  ctypes.c_void_p, ctypes.c_size_t)
_session_advance_frame = _proto("retcon_session_advance_frame", _result, _session_p)
_session_poll = _proto("retcon_session_poll", _result, _session_p, ctypes.c_uint64)
_session_set_input_delay = _proto("retcon_session_set_input_delay", _result, _session_p, ctypes.c_int32,
                                  ctypes.c_int32)
_session_current_frame = _proto("retcon_session_current_frame", _result, _session_p,
                                ctypes.POINTER(ctypes.c_int32))
_session_confirmed_frame = _proto("retcon_session_confirmed_frame", _result, _session_p,
                                  ctypes.POINTER(ctypes.c_int32))
_session_get_stats = _proto("retcon_session_get_stats", _result, _session_p, ctypes.POINTER(SessionStats))

_handle_p = ctypes.c_void_p
_ip_address = _proto("retcon_ip_address", _result, ctypes.c_char_p, ctypes.c_uint16, ctypes.POINTER(PeerAddress))
_udp_transport_open = _proto("retcon_udp_transport_open", _result, ctypes.c_char_p, ctypes.c_uint16,
                             ctypes.POINTER(_handle_p))
_memory_network_create = _proto("retcon_memory_network_create", _result, ctypes.POINTER(_handle_p))
_memory_network_destroy = _proto("retcon_memory_network_destroy", _result, _handle_p)
_memory_network_add_endpoint = _proto("retcon_memory_network_add_endpoint", _result, _handle_p,
                                      ctypes.POINTER(_handle_p))
_link_profile_init = _proto("retcon_link_profile_init", _result, ctypes.POINTER(LinkProfile))
_network_simulator_create = _proto("retcon_network_simulator_create", _result, _handle_p, ctypes.c_uint64,
                                   ctypes.POINTER(_handle_p))
_network_simulator_set_links = _proto("retcon_network_simulator_set_links", _result, _handle_p,
                                      ctypes.POINTER(LinkProfile), ctypes.POINTER(LinkProfile))
_network_simulator_set_time = _proto("retcon_network_simulator_set_time", _result, _handle_p, ctypes.c_uint64)
_transport_address = _proto("retcon_transport_address", _result, _handle_p, ctypes.POINTER(PeerAddress))
_transport_destroy = _proto("retcon_transport_destroy", _result, _handle_p)
_p2p_config_init = _proto("retcon_p2p_config_init", _result, ctypes.POINTER(P2PConfig))
_p2p_session_create = _proto("retcon_p2p_session_create", _result, ctypes.POINTER(SessionConfig),
                             ctypes.POINTER(P2PConfig), ctypes.POINTER(GameCallbacks), _handle_p,
                             ctypes.POINTER(_session_p))
_session_is_running = _proto("retcon_session_is_running", _result, _session_p, ctypes.POINTER(ctypes.c_uint32))
_session_disconnect_player = _proto("retcon_session_disconnect_player", _result, _session_p, ctypes.c_int32)
_peer_stats_init = _proto("retcon_peer_stats_init", _result, ctypes.POINTER(PeerStats))
_session_get_peer_stats = _proto("retcon_session_get_peer_stats", _result, _session_p, ctypes.c_int32,
                                 ctypes.POINTER(PeerStats))

# ---------------------------------------------------------------------------------------------
# The Pythonic layer.


class Error(Exception):
    """A retcon call returned a result other than OK."""

    def __init__(self, code, what="", reason=None):
        self.code = code
        self.name = result_name(code)
        text = "%s: %s (%d)" % (what, self.name, code) if what else "%s (%d)" % (self.name, code)
        if reason:
            text += ": " + reason
        super().__init__(text)


def result_name(code):
    return _result_name(code).decode()


def event_type_name(event_type):
    return _event_type_name(event_type).decode()


def version():
    """(number, string) of the loaded library, e.g. (100, "0.1.0")."""
    return _version(), _version_string().decode()


def _check(code, what):
    if code != OK:
        raise Error(code, what)


def _text(pointer, length):
    return ctypes.string_at(pointer, length).decode("utf-8", "replace") if pointer else None


class Session:
    """One retcon session. Close it (or use `with`) to free it; the game is held until then."""

    def __init__(self, game, num_players, input_size, max_state_size, max_prediction=8,
                 save_mode=SAVE_AUTOMATIC, check_distance=None, log=None, log_level=LOG_INFO,
                 p2p=None, transport=None):
        self._game = game
        self._pending = None  # an exception raised inside a callback, re-raised afterwards
        self._input_size = input_size
        self._handle = _session_p()

        # The CFUNCTYPE objects must outlive the session: keep them on it.
        cb = GameCallbacks()
        _game_callbacks_init(ctypes.byref(cb))
        self._cb_save = _SaveState(self._save_state)
        self._cb_load = _LoadState(self._load_state)
        self._cb_advance = _AdvanceFrame(self._advance_frame)
        cb.save_state, cb.load_state, cb.advance_frame = self._cb_save, self._cb_load, self._cb_advance
        if hasattr(game, "on_event"):
            self._cb_event = _OnEvent(self._on_event)
            cb.on_event = self._cb_event
        if hasattr(game, "describe_state"):
            self._cb_describe = _DescribeState(self._describe_state)
            cb.describe_state = self._cb_describe
        self._callbacks = cb

        config = SessionConfig()
        _session_config_init(ctypes.byref(config))
        config.num_players = num_players
        config.input_size = input_size
        config.max_prediction = max_prediction if check_distance is None else max(max_prediction, check_distance)
        config.max_state_size = max_state_size
        config.save_mode = save_mode
        if log is not None:
            self._cb_log = _Log(lambda user, level, message: log(level, message.decode()))
            config.logger.log = self._cb_log
            config.logger.min_level = log_level

        reason = ctypes.c_char_p()
        code = _session_config_validate(ctypes.byref(config), ctypes.byref(cb), ctypes.byref(reason))
        if code != OK:
            raise Error(code, "config", reason.value.decode() if reason.value else None)
        if p2p is not None:
            self._transport = transport  # borrowed by the session: kept alive (and open) with it
            code = _p2p_session_create(ctypes.byref(config), ctypes.byref(p2p), ctypes.byref(cb),
                                       transport._handle if transport else None, ctypes.byref(self._handle))
        elif check_distance is None:
            code = _local_session_create(ctypes.byref(config), ctypes.byref(cb), ctypes.byref(self._handle))
        else:
            sync = SyncTestConfig()
            _sync_test_config_init(ctypes.byref(sync))
            sync.check_distance = check_distance
            code = _sync_test_session_create(ctypes.byref(config), ctypes.byref(sync), ctypes.byref(cb),
                                             ctypes.byref(self._handle))
        _check(code, "create")

    # -- session calls

    def add_local_input(self, player, data):
        data = bytes(data)
        self._call(_session_add_local_input(self._handle, player, data, len(data)), "add_local_input")

    def advance_frame(self):
        """Simulates one frame. False when the prediction window is full (retry next tick)."""
        code = _session_advance_frame(self._handle)
        if code == PREDICTION_LIMIT and self._pending is None:
            return False
        self._call(code, "advance_frame")
        return True

    def poll(self, now_us):
        self._call(_session_poll(self._handle, now_us), "poll")

    def set_input_delay(self, player, frames):
        self._call(_session_set_input_delay(self._handle, player, frames), "set_input_delay")

    @property
    def current_frame(self):
        frame = ctypes.c_int32()
        self._call(_session_current_frame(self._handle, ctypes.byref(frame)), "current_frame")
        return frame.value

    @property
    def confirmed_frame(self):
        frame = ctypes.c_int32()
        self._call(_session_confirmed_frame(self._handle, ctypes.byref(frame)), "confirmed_frame")
        return frame.value

    def stats(self):
        s = SessionStats()
        _session_stats_init(ctypes.byref(s))
        self._call(_session_get_stats(self._handle, ctypes.byref(s)), "get_stats")
        out = {name: getattr(s, name) for name, _ in SessionStats._fields_[1:-1]}
        histogram = list(s.rollback_depth_histogram)
        out["rollback_depth_histogram"] = {d: n for d, n in enumerate(histogram) if n}
        return out

    @property
    def running(self):
        running = ctypes.c_uint32()
        self._call(_session_is_running(self._handle, ctypes.byref(running)), "is_running")
        return bool(running.value)

    def peer_stats(self, player):
        s = PeerStats()
        _peer_stats_init(ctypes.byref(s))
        self._call(_session_get_peer_stats(self._handle, player, ctypes.byref(s)), "get_peer_stats")
        return {name: getattr(s, name) for name, _ in PeerStats._fields_[1:]}

    def disconnect_player(self, player):
        self._call(_session_disconnect_player(self._handle, player), "disconnect_player")

    def close(self):
        if self._handle:
            _check(_session_destroy(self._handle), "destroy")
            self._handle = _session_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            _session_destroy(self._handle)

    # -- plumbing

    def _call(self, code, what):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            raise pending
        _check(code, what)

    def _guard(self, fn, failed):
        if self._pending is not None:
            return failed
        try:
            return fn()
        except BaseException as e:  # never let an exception unwind through C
            self._pending = e
            return failed

    def _save_state(self, user, frame, buffer, capacity):
        def save():
            data = bytes(self._game.save_state(frame))
            if len(data) <= capacity:
                ctypes.memmove(buffer, data, len(data))
            return len(data)
        # On an exception, claim more than fits: the session stops with save_failed.
        return self._guard(save, capacity + 1)

    def _load_state(self, user, frame, buffer, length):
        self._guard(lambda: self._game.load_state(frame, ctypes.string_at(buffer, length)), None)

    def _advance_frame(self, user, frame, inputs, flags):
        def advance():
            fi = inputs.contents
            raw = ctypes.string_at(fi.bytes, fi.player_count * fi.input_size)
            n = fi.input_size
            self._game.advance_frame(frame, [raw[p * n:(p + 1) * n] for p in range(fi.player_count)], flags)
        self._guard(advance, None)

    def _on_event(self, user, event):
        e = event.contents
        info = {"type": e.type, "name": event_type_name(e.type), "player": e.player, "frame": e.frame,
                "count": e.count, "total": e.total, "checksum_local": e.checksum_local,
                "checksum_remote": e.checksum_remote, "text_local": _text(e.text_local, e.text_local_len),
                "text_remote": _text(e.text_remote, e.text_remote_len),
                "message": e.message.decode() if e.message else ""}
        self._guard(lambda: self._game.on_event(info), None)

    def _describe_state(self, user, frame, buffer, length, sink):
        def describe():
            text = str(self._game.describe_state(frame, ctypes.string_at(buffer, length))).encode()
            sink.contents.write(sink.contents.user, text, len(text))
        self._guard(describe, None)


def local_session(game, num_players, input_size, max_state_size, **options):
    """All players on this machine: no prediction, no rollback."""
    return Session(game, num_players, input_size, max_state_size, **options)


def sync_test_session(game, num_players, input_size, max_state_size, check_distance=2, **options):
    """Rolls back check_distance frames every frame and compares checksums."""
    return Session(game, num_players, input_size, max_state_size, check_distance=check_distance, **options)


# ---------------------------------------------------------------------------------------------
# Networking.


def ip_address(host, port):
    out = PeerAddress()
    _check(_ip_address(host.encode(), port, ctypes.byref(out)), "ip_address")
    return out


class Transport:
    """A transport handle. Close it after every session (and simulator) using it."""

    def __init__(self, handle, keep=None):
        self._handle = handle
        self._keep = keep  # what this transport borrows (its network or inner transport)

    @classmethod
    def udp(cls, host="0.0.0.0", port=0):
        handle = _handle_p()
        _check(_udp_transport_open(host.encode(), port, ctypes.byref(handle)), "udp_transport_open")
        return cls(handle)

    def simulated(self, seed, **link):
        """A network simulator around this transport; `link` sets LinkProfile fields (outgoing)."""
        handle = _handle_p()
        _check(_network_simulator_create(self._handle, seed, ctypes.byref(handle)), "network_simulator_create")
        sim = Transport(handle, keep=self)
        profile = LinkProfile()
        _link_profile_init(ctypes.byref(profile))
        for name, value in link.items():
            setattr(profile, name, value)
        _check(_network_simulator_set_links(handle, ctypes.byref(profile), None), "network_simulator_set_links")
        return sim

    def set_time(self, now_us):
        """Simulators only: advance the clock and deliver what is due."""
        _check(_network_simulator_set_time(self._handle, now_us), "network_simulator_set_time")

    @property
    def address(self):
        out = PeerAddress()
        _check(_transport_address(self._handle, ctypes.byref(out)), "transport_address")
        return out

    def close(self):
        if self._handle:
            _check(_transport_destroy(self._handle), "transport_destroy")
            self._handle = _handle_p()

    def __del__(self):
        if getattr(self, "_handle", None):
            _transport_destroy(self._handle)


class MemoryNetwork:
    """Endpoints that reach each other inside this process."""

    def __init__(self):
        self._handle = _handle_p()
        _check(_memory_network_create(ctypes.byref(self._handle)), "memory_network_create")

    def endpoint(self):
        handle = _handle_p()
        _check(_memory_network_add_endpoint(self._handle, ctypes.byref(handle)), "memory_network_add_endpoint")
        return Transport(handle, keep=self)

    def close(self):
        if self._handle:
            _check(_memory_network_destroy(self._handle), "memory_network_destroy")
            self._handle = _handle_p()

    def __del__(self):
        if getattr(self, "_handle", None):
            _memory_network_destroy(self._handle)


def p2p_session(game, players, input_size, max_state_size, transport, rng_seed=0, desync_interval=30,
                match_key=None, **options):
    """A peer-to-peer session. `players`: one entry per player, "local" or the PeerAddress of
    the machine that player is on. `match_key`: 32 bytes from the lobby (docs/SECURITY.md), or
    None. `rng_seed` 0: fresh OS entropy (what a game wants; tests may fix one)."""
    config = P2PConfig()
    _p2p_config_init(ctypes.byref(config))
    config.rng_seed = rng_seed
    config.desync_interval = desync_interval
    if match_key is not None:
        if len(match_key) != 32:
            raise ValueError("match_key must be 32 bytes")
        config.has_match_key = 1
        config.match_key[:] = list(bytes(match_key))
    for p, where in enumerate(players):
        if isinstance(where, str) and where == "local":
            config.player_kinds[p] = PLAYER_LOCAL
        else:
            config.player_kinds[p] = PLAYER_REMOTE
            config.player_addresses[p] = where
    return Session(game, len(players), input_size, max_state_size, p2p=config, transport=transport, **options)
