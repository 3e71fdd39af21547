"""ctypes mirrors of capi/retcon.h: structs field for field, callback types, prototypes.

Structs the library fills with a *_init function are allocated with spare room after them
(see `new`): a newer libretcon may have appended fields (the ABI grows only at the end of
size-tagged structs), which its init then sets to their defaults without writing past our memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from typing import Any, Callable, Optional, Type, TypeVar

# The library ABI these mirrors describe: before 1.0 the minor version counts as major (0.2
# changed retcon_frame_inputs), so the SONAME is libretcon.so.0.2 and only 0.2.x is loaded.
ABI_VERSION = (0, 2)
SONAME = "libretcon.so.%d.%d" % ABI_VERSION

MAX_PLAYERS = 8
MAX_SPECTATORS = 32
MAX_INPUT_SIZE = 128
MAX_PREDICTION_FRAMES = 64
MAX_INPUT_DELAY = 32
NULL_FRAME = -1
MAX_DECISION_SIZE = 240
PEER_ADDRESS_CAPACITY = 32
MATCH_KEY_SIZE = 32
SIMULATOR_MAX_BLACKOUTS = 1024
LINK_OUTGOING, LINK_INCOMING = 1, 2

# ------------------------------------------------------------------------------------ loading


def _candidates() -> list:
    out = []
    env = os.environ.get("RETCON_LIB")
    if env:
        out.append(env)
    pkg_config = shutil.which("pkg-config")
    if pkg_config:
        try:
            libdir = subprocess.run([pkg_config, "--variable=libdir", "retcon"], capture_output=True, text=True,
                                    timeout=10, check=False).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            out.append(os.path.join(libdir, SONAME))
            out.append(os.path.join(libdir, "libretcon.so"))
    # Inside a retcon source tree (not pip-installed): a build directory next to it.
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
    if os.path.isfile(os.path.join(root, "capi", "retcon.h")):
        for build in sorted(os.listdir(root)):
            candidate = os.path.join(root, build, "capi", "libretcon.so")
            if build.startswith("build") and os.path.isfile(candidate):
                out.append(candidate)
    found = ctypes.util.find_library("retcon")
    if found:
        out.append(found)
    out.append(SONAME)
    return out


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            loaded = ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        try:
            number = int(loaded.retcon_version())
        except AttributeError:
            errors.append("%s: not libretcon (no retcon_version)" % path)
            continue
        if (number // 10000, number // 100 % 100) != ABI_VERSION:
            errors.append("%s: libretcon %d.%d.%d, this package needs %d.%d.x" %
                          ((path, number // 10000, number // 100 % 100, number % 100) + ABI_VERSION))
            continue
        return loaded
    raise ImportError("retcon: cannot load libretcon (set RETCON_LIB to its path, or put its prefix's "
                      "lib/pkgconfig on PKG_CONFIG_PATH): " + "; ".join(errors))


lib = _load()

# ------------------------------------------------------------------------------------ structs

u8p = ctypes.POINTER(ctypes.c_uint8)
U32, I32, U64, SZ = ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_size_t

T = TypeVar("T", bound=ctypes.Structure)


def new(kind: Type[T], init: Optional[Callable[..., int]] = None) -> T:
    """A zeroed struct with 1 KiB of spare room after it, filled by its *_init function."""
    buffer = ctypes.create_string_buffer(ctypes.sizeof(kind) + 1024)
    value = kind.from_buffer(buffer)
    if init is not None:
        code = init(ctypes.byref(value))
        if code != 0:
            raise RuntimeError("retcon: %s failed (%d)" % (getattr(init, "__name__", "init"), code))
    return value


class Decision(ctypes.Structure):
    _fields_ = [("bytes", u8p), ("size", U32), ("sender", I32)]


class FrameInputs(ctypes.Structure):
    _fields_ = [("bytes", u8p), ("status", u8p), ("input_size", U32), ("player_count", U32),
                ("decisions", ctypes.POINTER(Decision)), ("decision_count", U32)]


TextWrite = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, SZ)


class TextSink(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("write", TextWrite)]


class Event(ctypes.Structure):
    _fields_ = [("type", U32), ("player", I32), ("frame", I32), ("count", I32), ("total", I32),
                ("checksum_local", U64), ("checksum_remote", U64),
                ("text_local", ctypes.c_void_p), ("text_local_len", SZ),
                ("text_remote", ctypes.c_void_p), ("text_remote_len", SZ),
                ("message", ctypes.c_char_p),
                ("state_local", ctypes.c_void_p), ("state_local_len", SZ),
                ("state_remote", ctypes.c_void_p), ("state_remote_len", SZ)]


SaveState = ctypes.CFUNCTYPE(SZ, ctypes.c_void_p, I32, u8p, SZ)
LoadState = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I32, u8p, SZ)
AdvanceFrame = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I32, ctypes.POINTER(FrameInputs), U32)
OnEvent = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Event))
DescribeState = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I32, u8p, SZ, ctypes.POINTER(TextSink))
Checksum = ctypes.CFUNCTYPE(U64, ctypes.c_void_p, I32, u8p, SZ)
Predict = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I32, I32, u8p, u8p, SZ)
Log = ctypes.CFUNCTYPE(None, ctypes.c_void_p, U32, ctypes.c_char_p)
Progress = ctypes.CFUNCTYPE(None, ctypes.c_void_p, I32, I32)


class GameCallbacks(ctypes.Structure):
    _fields_ = [("size", U32), ("user", ctypes.c_void_p), ("save_state", SaveState), ("load_state", LoadState),
                ("advance_frame", AdvanceFrame), ("on_event", OnEvent), ("describe_state", DescribeState),
                ("checksum", Checksum)]


class Predictor(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("predict", Predict)]


class Logger(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("log", Log), ("min_level", U32)]


class SessionConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("num_players", U32), ("input_size", U32), ("max_prediction", I32),
                ("save_mode", U32), ("max_state_size", U64), ("predictor", Predictor), ("logger", Logger),
                ("memory_budget", U64)]


class SyncTestConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("check_distance", I32), ("check_interval", I32)]


class SessionStats(ctypes.Structure):
    _fields_ = [("size", U32), ("current_frame", I32), ("confirmed_frame", I32), ("max_rollback_depth", U32),
                ("frames_advanced", U64), ("frames_resimulated", U64), ("rollbacks", U64), ("saves", U64),
                ("loads", U64), ("checksums", U64), ("frames_stalled", U64),
                ("rollback_depth_histogram", U64 * (MAX_PREDICTION_FRAMES + 1)), ("committed_bytes", U64),
                ("prediction_window", I32)]


class PeerAddress(ctypes.Structure):
    _fields_ = [("size", U32), ("bytes", ctypes.c_uint8 * PEER_ADDRESS_CAPACITY)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PeerAddress) and self.size == other.size and \
            bytes(self.bytes[:self.size]) == bytes(other.bytes[:other.size])

    def __hash__(self) -> int:
        return hash(bytes(self.bytes[:self.size]))

    def __repr__(self) -> str:
        return "PeerAddress(%s)" % bytes(self.bytes[:self.size]).hex()


TransportSend = ctypes.CFUNCTYPE(I32, ctypes.c_void_p, u8p, U32, u8p, SZ)
TransportReceive = ctypes.CFUNCTYPE(I32, ctypes.c_void_p, u8p, ctypes.POINTER(U32), u8p, SZ, ctypes.POINTER(SZ))


class TransportCallbacks(ctypes.Structure):
    _fields_ = [("size", U32), ("user", ctypes.c_void_p), ("send", TransportSend), ("receive", TransportReceive)]


class LinkProfile(ctypes.Structure):
    _fields_ = [("size", U32), ("latency_us", U64), ("jitter_us", U64), ("loss", ctypes.c_double),
                ("duplicate", ctypes.c_double), ("reorder", ctypes.c_double), ("reorder_delay_us", U64),
                ("bandwidth_bytes_per_s", U64), ("max_queue_delay_us", U64), ("blackout_period_us", U64),
                ("blackout_duration_us", U64), ("blackout_offset_us", U64)]


class BlackoutWindow(ctypes.Structure):
    _fields_ = [("start_us", U64), ("end_us", U64)]


class SimulatorLimits(ctypes.Structure):
    _fields_ = [("size", U32), ("receive_budget", U32), ("capacity", U32), ("receive_time_budget_us", U64)]


SIMULATOR_STAT_COUNTERS = ("sent", "delivered", "dropped_loss", "dropped_blackout", "dropped_bandwidth",
                           "duplicated", "dropped_capacity", "budget_exhausted", "time_budget_stops")


class SimulatorStats(ctypes.Structure):
    _fields_ = [("size", U32), ("reserved", U32)] + [(n, U64) for n in SIMULATOR_STAT_COUNTERS]


# retcon_udp_receive_path, by name (Transport.udp(receive_path=...)).
UDP_RECEIVE_PATHS = ("completion_ring", "batched_calls", "single_calls")
UDP_STAT_COUNTERS = ("send_errors", "receive_errors", "receive_budget_stops", "system_calls")


class UdpStats(ctypes.Structure):
    _fields_ = [("size", U32), ("reserved", U32)] + [(n, U64) for n in UDP_STAT_COUNTERS]


class P2PConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("frame_rate", U32), ("notify_delay_us", U64), ("disconnect_timeout_us", U64),
                ("rng_seed", U64), ("sync_round_trips", I32), ("desync_interval", I32),
                ("player_kinds", U32 * MAX_PLAYERS), ("player_addresses", PeerAddress * MAX_PLAYERS),
                ("num_spectators", U32), ("spectators", PeerAddress * MAX_SPECTATORS),
                ("input_batch_frames", U32), ("loss_hold_frames", U32),
                ("has_match_key", U32), ("match_key", ctypes.c_uint8 * MATCH_KEY_SIZE), ("allow_local_only", U32),
                ("late_input_threshold", I32),
                ("handshake_timeout_us", U64), ("state_transfer", U32), ("transfer_bytes_per_second", U64),
                ("adaptive_delay", U32), ("adaptive_delay_rtt_percent", U32), ("adaptive_delay_min_frames", I32),
                ("adaptive_delay_max_frames", I32), ("allow_rejoin", U32), ("rejoining", U32),
                ("share_desync_states", U32), ("desync_state_max_size", U64)]


class SpectatorConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("frame_rate", U32), ("notify_delay_us", U64), ("disconnect_timeout_us", U64),
                ("rng_seed", U64), ("sync_round_trips", I32), ("catchup_threshold", I32),
                ("catchup_max_frames", I32), ("host", PeerAddress),
                ("has_match_key", U32), ("match_key", ctypes.c_uint8 * MATCH_KEY_SIZE),
                ("handshake_timeout_us", U64), ("state_transfer", U32), ("transfer_bytes_per_second", U64)]


PEER_STAT_COUNTERS = (
    "bytes_sent", "datagrams_sent", "bytes_received", "datagrams_received", "dropped_truncated",
    "dropped_oversized", "dropped_bad_magic", "dropped_bad_version", "dropped_unknown_type",
    "dropped_malformed", "dropped_bad_nonce", "dropped_replayed", "dropped_out_of_window",
    "dropped_wrong_state", "send_failures", "dropped_bad_checksum")


# Both states on a desync: the peer's states taken and refused (PeerStats.counters too).
DESYNC_STATE_COUNTERS = (
    "desync_states_received", "desync_states_refused_too_large", "desync_states_refused_mismatch",
    "desync_states_refused_unsolicited", "desync_notices_expired")


LATENESS_BUCKETS = 8  # frames late beyond the network: 0, 1-2, 3-4, 5-8, 9-15, 16-31, 32-63, 64+


class PeerStats(ctypes.Structure):
    _fields_ = [("size", U32), ("state", U32), ("ping_us", U64), ("jitter_us", U64), ("send_queue_length", U32),
                ("local_frames_ahead", I32), ("remote_frames_ahead", I32)] + [(n, U64) for n in PEER_STAT_COUNTERS] + \
        [("lateness_histogram", U64 * LATENESS_BUCKETS), ("lateness_max_frames", I32), ("late_input_events", U32)] + \
        [(n, U64) for n in DESYNC_STATE_COUNTERS]


class AdaptiveDelayRule(ctypes.Structure):
    _fields_ = [("size", U32), ("rtt_percent", U32), ("min_frames", I32), ("max_frames", I32)]


class DelayChoice(ctypes.Structure):
    _fields_ = [("size", U32), ("delay", I32), ("previous", I32), ("peers", U32), ("median_rtt_us", U64),
                ("rtt_us", U64 * MAX_PLAYERS), ("frame", I32)]


class RecordingConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("frame_rate", U32), ("checksum_interval", U32), ("state_interval", U32),
                ("reserve_frames", U32), ("user_data", u8p), ("user_data_size", SZ)]


class ReplayInfo(ctypes.Structure):
    _fields_ = [("size", U32), ("num_players", U32), ("input_size", U32), ("frame_rate", U32),
                ("checksum_interval", U32), ("flags", U32), ("frame_count", I32), ("checkpoint_count", U32),
                ("stored_states", U32), ("user_data", u8p), ("user_data_size", SZ)]


class ReplayCheckpoint(ctypes.Structure):
    _fields_ = [("frame", I32), ("checksum", U64), ("state", u8p), ("state_length", SZ)]


class ReplayRunConfig(ctypes.Structure):
    _fields_ = [("size", U32), ("max_state_size", U64), ("check_distance", I32), ("from_frame", I32),
                ("progress_user", ctypes.c_void_p), ("progress", Progress)]


class ReplayReport(ctypes.Structure):
    _fields_ = [("size", U32), ("start_frame", I32), ("frames_played", I32), ("checksums_verified", U32),
                ("last_good", I32), ("first_bad", I32), ("exact", U32), ("expected", U64), ("actual", U64),
                ("replayed_state", u8p), ("replayed_state_length", SZ),
                ("reference_state", u8p), ("reference_state_length", SZ), ("reference_frame", I32),
                ("reference_is_recorded", U32), ("check_distance", I32), ("mismatch_frame", I32),
                ("mismatch_first", U64), ("mismatch_resimulated", U64),
                ("mismatch_text_first", ctypes.c_void_p), ("mismatch_text_first_len", SZ),
                ("mismatch_text_resimulated", ctypes.c_void_p), ("mismatch_text_resimulated_len", SZ),
                ("rollbacks", U64), ("frames_resimulated", U64)]


# ------------------------------------------------------------------------------------ prototypes

R = ctypes.c_int  # retcon_result
H = ctypes.c_void_p  # any opaque handle


def _p(kind: Any) -> Any:
    return ctypes.POINTER(kind)


_PROTOTYPES = {
    "retcon_result_name": (ctypes.c_char_p, [R]),
    "retcon_event_type_name": (ctypes.c_char_p, [U32]),
    "retcon_version": (U32, []),
    "retcon_version_string": (ctypes.c_char_p, []),
    "retcon_game_callbacks_init": (R, [_p(GameCallbacks)]),
    "retcon_session_config_init": (R, [_p(SessionConfig)]),
    "retcon_session_config_validate": (R, [_p(SessionConfig), _p(GameCallbacks), _p(ctypes.c_char_p)]),
    "retcon_sync_test_config_init": (R, [_p(SyncTestConfig)]),
    "retcon_local_session_create": (R, [_p(SessionConfig), _p(GameCallbacks), _p(H)]),
    "retcon_sync_test_session_create": (R, [_p(SessionConfig), _p(SyncTestConfig), _p(GameCallbacks), _p(H)]),
    "retcon_session_destroy": (R, [H]),
    "retcon_session_get_kind": (R, [H, _p(U32)]),
    "retcon_session_add_local_input": (R, [H, I32, ctypes.c_void_p, SZ]),
    "retcon_session_advance_frame": (R, [H]),
    "retcon_session_poll": (R, [H, U64]),
    "retcon_session_set_input_delay": (R, [H, I32, I32]),
    "retcon_session_current_frame": (R, [H, _p(I32)]),
    "retcon_session_confirmed_frame": (R, [H, _p(I32)]),
    "retcon_session_stats_init": (R, [_p(SessionStats)]),
    "retcon_session_get_stats": (R, [H, _p(SessionStats)]),
    "retcon_ip_address": (R, [ctypes.c_char_p, ctypes.c_uint16, _p(PeerAddress)]),
    "retcon_udp_transport_open": (R, [ctypes.c_char_p, ctypes.c_uint16, _p(H)]),
    "retcon_udp_transport_open_with_receive_path": (R, [ctypes.c_char_p, ctypes.c_uint16, U32, _p(H)]),
    "retcon_udp_transport_receive_path": (R, [H, _p(U32)]),
    "retcon_transport_callbacks_init": (R, [_p(TransportCallbacks)]),
    "retcon_callback_transport_create": (R, [_p(TransportCallbacks), _p(H)]),
    "retcon_memory_network_create": (R, [_p(H)]),
    "retcon_memory_network_destroy": (R, [H]),
    "retcon_memory_network_add_endpoint": (R, [H, _p(H)]),
    "retcon_link_profile_init": (R, [_p(LinkProfile)]),
    "retcon_network_simulator_create": (R, [H, U64, _p(H)]),
    "retcon_network_simulator_set_links": (R, [H, _p(LinkProfile), _p(LinkProfile)]),
    "retcon_network_simulator_set_time": (R, [H, U64]),
    "retcon_network_simulator_set_blackouts": (R, [H, U32, _p(BlackoutWindow), U32]),
    "retcon_simulator_limits_init": (R, [_p(SimulatorLimits)]),
    "retcon_network_simulator_set_limits": (R, [H, _p(SimulatorLimits)]),
    "retcon_network_simulator_get_limits": (R, [H, _p(SimulatorLimits)]),
    "retcon_simulator_stats_init": (R, [_p(SimulatorStats)]),
    "retcon_network_simulator_get_stats": (R, [H, _p(SimulatorStats), _p(SimulatorStats)]),
    "retcon_network_simulator_in_flight": (R, [H, _p(U64), _p(U64)]),
    "retcon_udp_transport_set_receive_budget": (R, [H, U32]),
    "retcon_udp_transport_set_receive_time_budget": (R, [H, U64]),
    "retcon_session_dropped_unknown_address": (R, [H, _p(U64)]),
    "retcon_memory_network_dropped_unknown_address": (R, [H, _p(U64)]),
    "retcon_udp_stats_init": (R, [_p(UdpStats)]),
    "retcon_udp_transport_get_stats": (R, [H, _p(UdpStats)]),
    "retcon_transport_address": (R, [H, _p(PeerAddress)]),
    "retcon_transport_destroy": (R, [H]),
    "retcon_p2p_config_init": (R, [_p(P2PConfig)]),
    "retcon_p2p_session_create": (R, [_p(SessionConfig), _p(P2PConfig), _p(GameCallbacks), H, _p(H)]),
    "retcon_spectator_config_init": (R, [_p(SpectatorConfig)]),
    "retcon_spectator_session_create": (R, [_p(SessionConfig), _p(SpectatorConfig), _p(GameCallbacks), H, _p(H)]),
    "retcon_session_is_running": (R, [H, _p(U32)]),
    "retcon_session_frames_to_wait": (R, [H, _p(I32)]),
    "retcon_session_should_wait": (R, [H, _p(U32)]),
    "retcon_session_should_catch_up": (R, [H, _p(U32)]),
    "retcon_session_disconnect_player": (R, [H, I32]),
    "retcon_session_send_decision": (R, [H, ctypes.c_char_p, SZ, I32, _p(I32)]),
    "retcon_session_apply_input_delay": (R, [H, _p(AdaptiveDelayRule), I32, _p(DelayChoice)]),
    "retcon_session_between_rounds": (R, [H]),
    "retcon_session_answer_rejoin": (R, [H, I32, U32]),
    "retcon_session_earliest_decision_frame": (I32, [H]),
    "retcon_adaptive_delay_rule_init": (R, [_p(AdaptiveDelayRule)]),
    "retcon_delay_choice_init": (R, [_p(DelayChoice)]),
    "retcon_session_choose_input_delay": (R, [H, _p(AdaptiveDelayRule), _p(DelayChoice)]),
    "retcon_peer_stats_init": (R, [_p(PeerStats)]),
    "retcon_session_get_peer_stats": (R, [H, I32, _p(PeerStats)]),
    "retcon_session_get_spectator_stats": (R, [H, U32, _p(PeerStats)]),
    "retcon_sync_test_config_validate": (R, [_p(SessionConfig), _p(SyncTestConfig), _p(GameCallbacks),
                                             _p(ctypes.c_char_p)]),
    "retcon_p2p_config_validate": (R, [_p(SessionConfig), _p(P2PConfig), _p(GameCallbacks), _p(ctypes.c_char_p)]),
    "retcon_spectator_config_validate": (R, [_p(SessionConfig), _p(SpectatorConfig), _p(GameCallbacks),
                                             _p(ctypes.c_char_p)]),
    "retcon_session_frame_checksum": (R, [H, I32, _p(U64)]),
    "retcon_session_checksums_compared": (R, [H, _p(U64)]),
    "retcon_recording_config_init": (R, [_p(RecordingConfig)]),
    "retcon_session_start_recording": (R, [H, _p(RecordingConfig)]),
    "retcon_session_copy_recording": (R, [H, _p(H)]),
    "retcon_session_save_recording": (R, [H, ctypes.c_char_p]),
    "retcon_replay_load": (R, [ctypes.c_void_p, SZ, _p(H), ctypes.c_char_p, SZ]),
    "retcon_replay_load_file": (R, [ctypes.c_char_p, _p(H), ctypes.c_char_p, SZ]),
    "retcon_replay_serialize": (R, [H, ctypes.c_void_p, SZ, _p(SZ)]),
    "retcon_replay_save_file": (R, [H, ctypes.c_char_p]),
    "retcon_replay_destroy": (R, [H]),
    "retcon_replay_info_init": (R, [_p(ReplayInfo)]),
    "retcon_replay_get_info": (R, [H, _p(ReplayInfo)]),
    "retcon_replay_get_inputs": (R, [H, I32, _p(FrameInputs)]),
    "retcon_replay_set_input": (R, [H, I32, I32, ctypes.c_void_p, SZ]),
    "retcon_replay_get_checkpoint": (R, [H, U32, _p(ReplayCheckpoint)]),
    "retcon_replay_run_config_init": (R, [_p(ReplayRunConfig)]),
    "retcon_replay_report_init": (R, [_p(ReplayReport)]),
    "retcon_replay_play": (R, [H, _p(GameCallbacks), _p(ReplayRunConfig), _p(ReplayReport)]),
    "retcon_replay_bisect": (R, [H, _p(GameCallbacks), _p(ReplayRunConfig), _p(ReplayReport)]),
    "retcon_replay_sync_test": (R, [H, _p(GameCallbacks), _p(ReplayRunConfig), _p(ReplayReport)]),
}


class _Functions:
    """The library's functions with their prototypes; a function this libretcon lacks raises
    AttributeError only when used (an older library, or a feature not built)."""

    def __getattr__(self, name: str) -> Any:
        fn = getattr(lib, "retcon_" + name)
        restype, argtypes = _PROTOTYPES["retcon_" + name]
        fn.restype = restype
        fn.argtypes = argtypes
        setattr(self, name, fn)
        return fn


fn = _Functions()
