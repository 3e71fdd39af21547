"""Tests of the retcon Python package against the libretcon of a build (RETCON_LIB) or an install:
every session kind, spectators, the predictor, user transports, the simulator, time sync,
replays, stats, errors, and the game's checksum method."""

from __future__ import annotations

import os
import sys
import tempfile
import unittest
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

import retcon

PLAYERS = 2


class Counter:
    """A tiny deterministic game: an integer folding every input in, plus a byte that differs
    between machines (or runs) and that only a custom checksum ignores."""

    def __init__(self, noisy: bool = False) -> None:
        self.x = 1
        self.frame = 0
        self.noise = 0
        self.noisy = noisy
        self.events: List[retcon.Event] = []

    def save_state(self, frame: int) -> bytes:
        return self.x.to_bytes(8, "little") + self.frame.to_bytes(4, "little") + bytes([self.noise & 255])

    def load_state(self, frame: int, data: bytes) -> None:
        self.x = int.from_bytes(data[:8], "little")
        self.frame = int.from_bytes(data[8:12], "little")

    def advance_frame(self, frame: int, inputs: List[bytes], flags: int) -> None:
        for i, data in enumerate(inputs):
            self.x = (self.x * 1000003 + data[0] * (i + 3) + 1) % (1 << 61)
        self.frame += 1
        if self.noisy and flags & retcon.ADVANCE_RESIMULATING:
            self.noise += 1  # not part of the game: only the saved bytes see it

    def on_event(self, event: retcon.Event) -> None:
        self.events.append(event)

    def take_decisions(self) -> None:
        """From now on the game applies timed decisions (its advance_frame takes `decisions`)."""
        self.decided: Dict[int, List[Tuple[int, bytes]]] = {}
        plain = self.advance_frame

        def advance_frame(frame: int, inputs: List[bytes], flags: int, decisions: List[retcon.Decision]) -> None:
            plain(frame, inputs, flags)
            for d in decisions:
                self.x = (self.x * 7 + len(d.data) + d.sender) % (1 << 61)
            if decisions:
                self.decided[frame] = [(d.sender, d.data) for d in decisions]
        self.advance_frame = advance_frame  # type: ignore[method-assign]

    def describe_state(self, frame: int, data: bytes) -> str:
        return "frame %d x %d" % (int.from_bytes(data[8:12], "little"), int.from_bytes(data[:8], "little"))


class CheckedCounter(Counter):
    def checksum(self, frame: int, data: bytes) -> int:
        return int.from_bytes(data[:12], "little") * 0x9E3779B97F4A7C15 % (1 << 64)  # ignores the noise byte


def steer(player: int, frame: int) -> bytes:
    return bytes([(frame * (player + 3) // 5) & 7])


class Basics(unittest.TestCase):
    def test_version_and_names(self) -> None:
        number, text = retcon.version()
        self.assertEqual(number // 10000, 0)
        self.assertRegex(text, r"^\d+\.\d+\.\d+$")
        self.assertEqual(retcon.result_name(1), "invalid_argument")
        self.assertEqual(retcon.event_type_name(retcon.EVENT_DESYNC_DETECTED), "desync_detected")

    def test_every_error_is_its_own_exception_with_the_result_name(self) -> None:
        for code in range(1, 21):
            e = retcon.error_for(code, "call")
            self.assertIsInstance(e, retcon.Error)
            self.assertIsNot(type(e), retcon.Error)
            self.assertEqual(e.code, code)
            self.assertEqual(e.name, retcon.result_name(code))
            self.assertIn(e.name, str(e))
        with self.assertRaises(retcon.InvalidArgument) as caught:
            retcon.local_session(Counter(), PLAYERS, 1, max_state_size=0)
        self.assertIn("max_state_size", str(caught.exception))
        with retcon.local_session(Counter(), PLAYERS, 1, max_state_size=64) as s:
            with self.assertRaises(retcon.InvalidPlayer):
                s.add_local_input(PLAYERS, b"\0")
            with self.assertRaises(retcon.InvalidInputSize):
                s.add_local_input(0, b"\0\0")
            s.add_local_input(0, b"\0")
            with self.assertRaises(retcon.InputAlreadyAdded):
                s.add_local_input(0, b"\0")
            with self.assertRaises(retcon.MissingLocalInput):
                s.advance_frame()

    def test_a_callback_exception_is_raised_from_the_call(self) -> None:
        class Broken(Counter):
            def advance_frame(self, frame: int, inputs: List[bytes], flags: int) -> None:
                raise KeyError("boom")
        with retcon.local_session(Broken(), PLAYERS, 1, max_state_size=64) as s:
            s.add_local_input(0, b"\0")
            s.add_local_input(1, b"\0")
            with self.assertRaises(KeyError):
                s.advance_frame()


class Layouts(unittest.TestCase):
    def test_every_mirrored_struct_has_the_size_of_the_c_struct(self) -> None:
        # Each *_init sets `size` to the C struct's sizeof: a field added to retcon.h without
        # its Python mirror (bindings/python/src/retcon/_capi.py) fails here.
        from retcon import _capi as c
        pairs = [(c.GameCallbacks, c.fn.game_callbacks_init), (c.SessionConfig, c.fn.session_config_init),
                 (c.SyncTestConfig, c.fn.sync_test_config_init), (c.SessionStats, c.fn.session_stats_init),
                 (c.TransportCallbacks, c.fn.transport_callbacks_init), (c.LinkProfile, c.fn.link_profile_init),
                 (c.P2PConfig, c.fn.p2p_config_init), (c.SpectatorConfig, c.fn.spectator_config_init),
                 (c.PeerStats, c.fn.peer_stats_init), (c.RecordingConfig, c.fn.recording_config_init),
                 (c.ReplayInfo, c.fn.replay_info_init), (c.ReplayRunConfig, c.fn.replay_run_config_init),
                 (c.ReplayReport, c.fn.replay_report_init),
                 (c.AdaptiveDelayRule, c.fn.adaptive_delay_rule_init), (c.DelayChoice, c.fn.delay_choice_init),
                 (c.SimulatorLimits, c.fn.simulator_limits_init), (c.SimulatorStats, c.fn.simulator_stats_init),
                 (c.UdpStats, c.fn.udp_stats_init)]
        for kind, init in pairs:
            value = c.new(kind, init)
            self.assertEqual(value.size, c.ctypes.sizeof(kind), kind.__name__)


class Sessions(unittest.TestCase):
    def run_frames(self, session: retcon.Session, frames: int) -> None:
        for f in range(frames):
            for p in range(PLAYERS):
                self.assertTrue(session.add_local_input(p, steer(p, f)))
            self.assertTrue(session.advance_frame())

    def test_local_and_sync_test_agree(self) -> None:
        local, synced = Counter(), Counter()
        with retcon.local_session(local, PLAYERS, 1, max_state_size=64) as s:
            self.assertEqual(s.kind, retcon.SESSION_LOCAL)
            self.run_frames(s, 200)
            self.assertEqual(s.stats().frames_advanced, 200)
            self.assertEqual(s.frames_to_wait, 0)
        with retcon.sync_test_session(synced, PLAYERS, 1, max_state_size=64, check_distance=5) as s:
            self.assertEqual(s.kind, retcon.SESSION_SYNC_TEST)
            self.run_frames(s, 200)
            stats = s.stats()
            self.assertGreater(stats.rollbacks, 0)
            self.assertGreater(stats.rollback_depth_histogram[5], 150)
        self.assertEqual(local.x, synced.x)

    def test_sync_test_check_interval_checks_every_nth_frame(self) -> None:
        # check_interval = check_distance: every frame is re-simulated once, not check_distance
        # times; the state still ends where a local session's does.
        local, every, sparse = Counter(), Counter(), Counter()
        with retcon.local_session(local, PLAYERS, 1, max_state_size=64) as s:
            self.run_frames(s, 200)
        with retcon.sync_test_session(every, PLAYERS, 1, max_state_size=64, check_distance=4) as s:
            self.run_frames(s, 200)
            dense = s.stats().rollbacks
        with retcon.sync_test_session(sparse, PLAYERS, 1, max_state_size=64, check_distance=4,
                                      check_interval=4) as s:
            self.run_frames(s, 200)
            fewer = s.stats().rollbacks
        self.assertGreater(fewer, 0)
        self.assertLessEqual(fewer * 3, dense)
        self.assertEqual(local.x, every.x)
        self.assertEqual(local.x, sparse.x)
        with self.assertRaises(retcon.InvalidArgument):
            retcon.sync_test_session(Counter(), 2, 1, 64, check_distance=2, check_interval=0)

    def test_the_games_checksum_method_is_used(self) -> None:
        # The noise byte changes in every re-simulation: retcon's own hash sees it, the game's
        # checksum does not.
        plain, checked = Counter(noisy=True), CheckedCounter(noisy=True)
        with retcon.sync_test_session(plain, PLAYERS, 1, max_state_size=64, check_distance=2) as s:
            self.run_frames(s, 30)
        with retcon.sync_test_session(checked, PLAYERS, 1, max_state_size=64, check_distance=2) as s:
            self.run_frames(s, 30)
        self.assertTrue(any(e.type == retcon.EVENT_SYNC_TEST_MISMATCH for e in plain.events))
        self.assertFalse(any(e.type == retcon.EVENT_SYNC_TEST_MISMATCH for e in checked.events))

    def test_predictor_is_called_for_remote_players(self) -> None:
        calls: List[Tuple[int, int, Optional[bytes]]] = []

        def predict(player: int, frame: int, last: Optional[bytes]) -> bytes:
            calls.append((player, frame, last))
            return last or b"\0"
        machines = self.p2p_pair(predictor=predict)
        self.play_pair(machines, 120)
        self.assertTrue(calls)
        self.assertTrue(all(player in (0, 1) for player, _, _ in calls))
        self.close_pair(machines)

    # -- networks

    def p2p_pair(self, predictor: Optional[retcon.Session] = None, spectator: bool = False,
                 transports: str = "memory", key: Optional[bytes] = None,
                 windows: Tuple[int, int] = (8, 8)) -> Dict[str, object]:
        machines: Dict[str, object] = {}
        if transports == "memory":
            network = retcon.MemoryNetwork()
            wires = [network.endpoint() for _ in range(3 if spectator else 2)]
            addresses = [w.address for w in wires]
            machines["network"] = network
        else:  # user transports: Python queues keyed by address
            queues: Dict[bytes, Deque[Tuple[bytes, bytes]]] = {}
            wires = []
            addresses = []
            for i in range(3 if spectator else 2):
                me = bytes([i + 1])
                queues[me] = deque()

                def send(address: bytes, data: bytes, me: bytes = me) -> bool:
                    if address not in queues:
                        return False
                    queues[address].append((me, data))
                    return True

                def receive(me: bytes = me) -> Optional[Tuple[bytes, bytes]]:
                    return queues[me].popleft() if queues[me] else None
                wires.append(retcon.Transport.from_callbacks(send, receive))
                addresses.append(retcon.peer_address(me))
        links = [w.simulated(seed=40 + i, latency_us=20000, jitter_us=4000, loss=0.03) for i, w in enumerate(wires)]
        games = [Counter() for _ in wires]
        sessions = []
        for i in range(2):
            players = [retcon.LOCAL if p == i else addresses[p] for p in range(2)]
            sessions.append(retcon.p2p_session(games[i], players, 1, 64, links[i], rng_seed=11 + i,
                                               spectators=[addresses[2]] if spectator and i == 0 else [],
                                               predictor=predictor, match_key=key, max_prediction=windows[i]))
        if spectator:
            sessions.append(retcon.spectator_session(games[2], 2, 1, 64, links[2], addresses[0], rng_seed=99,
                                                     match_key=key))
        machines.update(wires=wires, links=links, games=games, sessions=sessions)
        return machines

    def play_pair(self, machines: Dict[str, object], frames: int,
                  each_tick: Optional[Callable[[], None]] = None) -> None:
        sessions: List[retcon.Session] = machines["sessions"]  # type: ignore[assignment]
        links: List[retcon.Transport] = machines["links"]  # type: ignore[assignment]
        now = 0
        waited = 0
        for _ in range(frames * 6):
            now += 16667
            if each_tick is not None:
                each_tick()
            for i, s in enumerate(sessions):
                links[i].set_time(now)
                s.poll(now)
                if s.kind == retcon.SESSION_SPECTATOR:
                    s.advance_frame()
                    continue
                if s.running and s.should_wait:  # time sync: skip this tick
                    waited += 1
                    continue
                try:
                    if not s.add_local_input(i, steer(i, s.current_frame)):
                        continue  # not synchronized yet: "not now", not an error
                except retcon.InputAlreadyAdded:
                    pass  # the last tick's advance was refused (prediction window full): retry it
                self.assertGreaterEqual(s.frames_to_wait, 0)
                if s.advance_frame() and s.should_catch_up:  # only after a long stall
                    s.add_local_input(i, steer(i, s.current_frame))
                    s.advance_frame()
            if all(s.confirmed_frame >= frames for s in sessions):
                break
        self.assertTrue(all(s.running for s in sessions))
        self.assertTrue(all(s.confirmed_frame >= frames for s in sessions), [s.confirmed_frame for s in sessions])

    def test_timed_decision_happens_on_the_same_frame_everywhere(self) -> None:
        machines = self.p2p_pair(spectator=True)
        for g in machines["games"]:  # type: ignore[attr-defined]
            g.take_decisions()
        sessions: List[retcon.Session] = machines["sessions"]  # type: ignore[assignment]
        sessions[1].start_recording()
        stamped: List[int] = []

        def decide() -> None:
            host = sessions[0]
            if stamped or not host.running or host.current_frame < 40:
                return
            earliest = host.earliest_decision_frame
            self.assertGreater(earliest, host.current_frame)
            with self.assertRaises(retcon.InputOutOfWindow) as refused:
                host.send_decision(b"too close", host.current_frame)
            self.assertEqual(refused.exception.earliest, earliest)  # type: ignore[attr-defined]
            self.assertTrue(host.send_decision(b"round over", earliest))
            stamped.append(earliest)

        choices: List[Any] = []

        def decide_and_delay() -> None:
            decide()
            if not choices and sessions[1].running and sessions[1].current_frame >= 80:
                choices.append(sessions[1].apply_input_delay())
                with self.assertRaises(retcon.WrongState):
                    sessions[0].between_rounds()  # no automatic mode here
        self.play_pair(machines, 200, decide_and_delay)
        for _ in range(60):  # the spectator catches up
            self.play_tick(machines)
        games: List[Counter] = machines["games"]  # type: ignore[assignment]
        for g in games:  # every machine and the spectator, at that frame, in its last simulation
            self.assertEqual(g.decided, {stamped[0]: [(0, b"round over")]})
        confirmed = min(s.confirmed_frame for s in sessions)
        self.assertGreater(confirmed, stamped[0])
        checksums = {s.frame_checksum(confirmed) for s in sessions}
        self.assertEqual(len(checksums), 1)
        recorded = sessions[1].recording()  # replays keep the decisions, on their frame
        self.assertEqual(recorded.decisions(stamped[0]), [(0, b"round over")])
        self.assertEqual(recorded.decisions(stamped[0] - 1), [])
        recorded.close()
        self.assertEqual(sessions[2].earliest_decision_frame, retcon.NULL_FRAME)
        with self.assertRaises(retcon.Unsupported):
            sessions[2].send_decision(b"x", 500)
        with self.assertRaises(retcon.InvalidArgument):
            sessions[0].send_decision(bytes(retcon.MAX_DECISION_SIZE + 1), 500)
        # Adaptive delay applied at one frame on both machines.
        choice = choices[0]
        self.assertGreaterEqual(choice.frame, 80)
        applied = [[e for e in g.events if e.type == retcon.EVENT_INPUT_DELAY_APPLIED] for g in games[:2]]
        self.assertEqual([len(a) for a in applied], [1, 1])
        self.assertEqual({a[0].frame for a in applied}, {choice.frame})
        self.assertEqual({a[0].count for a in applied}, {choice.delay})
        self.close_pair(machines)

    def play_tick(self, machines: Dict[str, object]) -> None:
        for s in machines["sessions"]:  # type: ignore[attr-defined]
            s.poll(10 ** 9)
            if s.kind == retcon.SESSION_SPECTATOR:
                s.advance_frame()

    def close_pair(self, machines: Dict[str, object]) -> None:
        for s in machines["sessions"]:  # type: ignore[attr-defined]
            s.close()
        for t in machines["links"] + machines["wires"]:  # type: ignore[operator]
            t.close()
        if "network" in machines:
            machines["network"].close()  # type: ignore[attr-defined]

    def test_players_with_different_windows_play_with_the_smaller_one(self) -> None:
        # Each machine plays with the smallest max_prediction of the players it shook hands with;
        # no desync (the sessions compare checksums of confirmed frames every 30 frames).
        machines = self.p2p_pair(windows=(8, 12))
        self.play_pair(machines, 200)
        sessions: List[retcon.Session] = machines["sessions"]  # type: ignore[assignment]
        self.assertEqual([s.stats().prediction_window for s in sessions], [8, 8])
        games: List[Counter] = machines["games"]  # type: ignore[assignment]
        self.assertFalse([e for g in games for e in g.events if e.type == retcon.EVENT_DESYNC_DETECTED])
        self.close_pair(machines)

    def test_a_late_spectator_starts_from_the_hosts_state(self) -> None:
        # State transfer (issue 11): a spectator that comes 4 s into the match loads the host's
        # state and shows the match from there, caught up within seconds.
        network = retcon.MemoryNetwork()
        wires = [network.endpoint() for _ in range(3)]
        addresses = [w.address for w in wires]
        links = [w.simulated(seed=70 + i, latency_us=20000, loss=0.03) for i, w in enumerate(wires)]
        games = [Counter() for _ in wires]
        loads = []
        games[2].load_state = lambda frame, data, g=games[2]: (loads.append(frame), Counter.load_state(g, frame, data))
        sessions = [retcon.p2p_session(games[i], [retcon.LOCAL if p == i else addresses[p] for p in range(2)], 1, 64,
                                       links[i], rng_seed=5 + i, spectators=[addresses[2]] if i == 0 else [],
                                       state_transfer=1)
                    for i in range(2)]
        sessions.append(retcon.spectator_session(games[2], 2, 1, 64, links[2], addresses[0], rng_seed=9,
                                                 state_transfer=1))
        now = 0
        caught_at = None
        for tick in range(900):
            now += 16667
            for i, s in enumerate(sessions):
                if i == 2 and tick < 240:
                    continue  # the spectator is not there yet
                links[i].set_time(now)
                s.poll(now)
                if i == 2:
                    s.advance_frame()
                elif s.current_frame < 700 and s.add_local_input(i, steer(i, s.current_frame)):
                    s.advance_frame()
            if caught_at is None and tick >= 240 and sessions[2].current_frame >= sessions[0].confirmed_frame - 12:
                caught_at = tick
        self.assertTrue(loads, "the spectator loaded the host's state")
        self.assertGreater(loads[0], 150)  # a recent state (about 32 frames + a window old), not frame 0
        self.assertIsNotNone(caught_at)
        self.assertLess((caught_at - 240) / 60, 3.0)
        # Every frame it shows equals the players' (the same state at the same frame).
        # The players stopped at 700; their last frames may wait for a correction (they would
        # re-simulate at their next advance), so compare one a little earlier.
        frame = 690
        self.assertGreaterEqual(sessions[2].confirmed_frame, frame)
        self.assertEqual(sessions[2].frame_checksum(frame), sessions[0].frame_checksum(frame))
        self.assertFalse([e for g in games for e in g.events if e.type == retcon.EVENT_CANNOT_CONTINUE])
        for s in sessions:
            s.close()
        for t in links + wires:
            t.close()
        network.close()

    def test_a_crashed_player_rejoins_from_another_address(self) -> None:
        # Rejoin (issue 11): player 1's machine crashes, the other drops it, and a new session on
        # a new address comes back into the match; both name the same live frame and agree.
        network = retcon.MemoryNetwork()
        wires = [network.endpoint() for _ in range(3)]
        addresses = [w.address for w in wires]
        links = [w.simulated(seed=80 + i, latency_us=20000) for i, w in enumerate(wires)]
        games = [Counter(), Counter(), Counter()]
        options = dict(state_transfer=1, allow_rejoin=1, disconnect_timeout_us=1000000)
        sessions: List[Any] = [retcon.p2p_session(games[i], [retcon.LOCAL if p == i else addresses[p] for p in range(2)],
                                                  1, 64, links[i], rng_seed=5 + i, **options) for i in range(2)]
        now = 0
        machines = [0, 1]  # which session plays player 0 and player 1
        held = [False, False, False]
        answered = 0
        for tick in range(2400):
            now += 16667
            if tick == 200:
                sessions[1].close()  # the crash
            if tick == 300:
                # It starts again on another address and asks to come back.
                sessions.append(retcon.p2p_session(games[2], [addresses[0], retcon.LOCAL], 1, 64, links[2],
                                                   rng_seed=9, rejoining=1, **options))
                machines[1] = 2
            for i in machines:
                if i == 1 and tick >= 200:
                    continue
                if i == 2 and tick < 300:
                    continue
                player = 0 if i == 0 else 1
                links[i].set_time(now)
                s = sessions[i]
                s.poll(now)
                if not s.running or s.current_frame >= 900:
                    continue
                # A refused advance (the window is full while the crash is noticed) keeps its input.
                if held[i] or s.add_local_input(player, steer(player, s.current_frame)):
                    held[i] = not s.advance_frame()
            for e in games[0].events[answered:]:
                if e.type == retcon.EVENT_REJOIN_REQUESTED:
                    sessions[0].answer_rejoin(e.player, True)
            answered = len(games[0].events)
            if tick > 300 and sessions[0].confirmed_frame >= 895 and sessions[2].confirmed_frame >= 895:
                break
        rejoining = [[e.frame for e in g.events if e.type == retcon.EVENT_PLAYER_REJOINING] for g in (games[0], games[2])]
        rejoined = [[e.frame for e in g.events if e.type == retcon.EVENT_PLAYER_REJOINED] for g in (games[0], games[2])]
        self.assertEqual(len(rejoining[0]), 1)
        self.assertEqual(rejoining[0], rejoining[1], "the same live frame on both machines")
        self.assertEqual(rejoined[0], rejoining[0])
        self.assertEqual(rejoined[1], rejoining[0])
        self.assertGreaterEqual(sessions[2].confirmed_frame, 895)
        frame = 890
        self.assertEqual(sessions[2].frame_checksum(frame), sessions[0].frame_checksum(frame))
        self.assertFalse([e for g in games for e in g.events if e.type == retcon.EVENT_DESYNC_DETECTED])
        for i in (0, 2):
            sessions[i].close()
    def test_a_refused_rejoin_is_told_to_the_rejoiner(self) -> None:
        # The other machine's game refuses: the rejoiner hears it (EVENT_REJOIN_REFUSED naming the
        # refusing machine's player, then EVENT_CANNOT_CONTINUE) within a few ticks, not a timeout.
        network = retcon.MemoryNetwork()
        wires = [network.endpoint() for _ in range(3)]
        addresses = [w.address for w in wires]
        links = [w.simulated(seed=90 + i, latency_us=20000) for i, w in enumerate(wires)]
        games = [Counter(), Counter(), Counter()]
        options = dict(state_transfer=1, allow_rejoin=1, disconnect_timeout_us=1000000)
        sessions: List[Any] = [retcon.p2p_session(games[i], [retcon.LOCAL if p == i else addresses[p] for p in range(2)],
                                                  1, 64, links[i], rng_seed=15 + i, **options) for i in range(2)]
        now = 0
        refused_at = told_at = -1
        answered = 0
        held = [False, False]
        for tick in range(900):
            now += 16667
            if tick == 200:
                sessions[1].close()
            if tick == 300:
                sessions.append(retcon.p2p_session(games[2], [addresses[0], retcon.LOCAL], 1, 64, links[2],
                                                   rng_seed=19, rejoining=1, **options))
            for i in (0, 2):
                if i == 2 and tick < 300:
                    continue
                if i == 2 and told_at >= 0:
                    continue  # it gave up
                links[i].set_time(now)
                s = sessions[i]
                s.poll(now)
                if i == 0 and s.running and (held[0] or s.add_local_input(0, steer(0, s.current_frame))):
                    held[0] = not s.advance_frame()
            if tick < 200:
                links[1].set_time(now)
                s = sessions[1]
                s.poll(now)
                if s.running and (held[1] or s.add_local_input(1, steer(1, s.current_frame))):
                    held[1] = not s.advance_frame()
            for e in games[0].events[answered:]:
                if e.type == retcon.EVENT_REJOIN_REQUESTED:
                    sessions[0].answer_rejoin(e.player, False)
                    refused_at = tick
            answered = len(games[0].events)
            if told_at < 0 and any(e.type == retcon.EVENT_CANNOT_CONTINUE for e in games[2].events):
                told_at = tick
                break
        self.assertGreaterEqual(refused_at, 0)
        refusals = [e for e in games[2].events if e.type == retcon.EVENT_REJOIN_REFUSED]
        self.assertEqual(len(refusals), 1)
        self.assertEqual(refusals[0].player, 0)
        self.assertGreaterEqual(told_at, refused_at)
        self.assertLessEqual(told_at - refused_at, 30, "within a few round trips of the refusal")
        self.assertEqual(retcon.event_type_name(retcon.EVENT_REJOIN_REFUSED), "rejoin_refused")
        self.assertFalse(sessions[2].running)
        for i in (0, 2):
            sessions[i].close()

    def test_both_states_on_a_desync(self) -> None:
        # share_desync_states (issue 11): machine 1's game differs from frame 95 on; each machine
        # gets the other's exact saved state of the desync frame, and both descriptions.
        network = retcon.MemoryNetwork()
        wires = [network.endpoint() for _ in range(2)]
        addresses = [w.address for w in wires]
        links = [w.simulated(seed=80 + i, latency_us=30000, loss=0.05) for i, w in enumerate(wires)]
        games = [Counter() for _ in wires]
        saved: List[Dict[int, bytes]] = [{}, {}]
        for i, g in enumerate(games):
            def save_state(frame: int, g: Counter = g, i: int = i) -> bytes:
                data = Counter.save_state(g, frame)
                saved[i][frame] = data  # the last save of a frame is its final state
                return data
            g.save_state = save_state  # type: ignore[method-assign]
        plain = games[1].advance_frame

        def diverging(frame: int, inputs: List[bytes], flags: int) -> None:
            plain(frame, inputs, flags)
            if frame == 95:
                games[1].x ^= 0xDEAD
        games[1].advance_frame = diverging  # type: ignore[method-assign]
        sessions = [retcon.p2p_session(games[i], [retcon.LOCAL if p == i else addresses[p] for p in range(2)], 1, 64,
                                       links[i], rng_seed=15 + i, desync_interval=10, share_desync_states=1)
                    for i in range(2)]
        now = 0
        for _ in range(600):
            now += 16667
            for i, s in enumerate(sessions):
                links[i].set_time(now)
                s.poll(now)
                if s.current_frame < 300 and s.add_local_input(i, steer(i, s.current_frame)):
                    s.advance_frame()
        for i in range(2):
            states = [e for e in games[i].events if e.type == retcon.EVENT_DESYNC_STATES]
            self.assertEqual(len(states), 1, "machine %d" % i)
            e = states[0]
            self.assertEqual(e.name, "desync_states")
            self.assertEqual(e.frame, 100)
            self.assertEqual(e.player, 1 - i)
            self.assertEqual(e.state_remote, saved[1 - i][100])  # the peer's exact bytes
            self.assertEqual(e.state_local, saved[i][100])
            self.assertNotEqual(e.text_local, e.text_remote)
            detected = [e for e in games[i].events if e.type == retcon.EVENT_DESYNC_DETECTED]
            self.assertEqual(detected[0].state_local, saved[i][100])
            counters = sessions[i].peer_stats(1 - i).counters
            self.assertEqual(counters["desync_states_received"], 1)
            for refused in ("desync_states_refused_too_large", "desync_states_refused_mismatch",
                            "desync_states_refused_unsolicited", "desync_notices_expired"):
                self.assertEqual(counters[refused], 0, refused)
        for s in sessions:
            s.close()
        for t in links + wires:
            t.close()
        network.close()

    def test_p2p_with_a_spectator_over_a_simulated_network(self) -> None:
        machines = self.p2p_pair(spectator=True)
        self.play_pair(machines, 150)
        sessions: List[retcon.Session] = machines["sessions"]  # type: ignore[assignment]
        self.assertEqual(sessions[0].kind, retcon.SESSION_P2P)
        self.assertEqual(sessions[2].kind, retcon.SESSION_SPECTATOR)
        peer = sessions[0].peer_stats(1)
        self.assertGreater(peer.ping_us, 30000)
        self.assertGreater(peer.counters["datagrams_sent"], 0)
        self.assertEqual(len(peer.lateness_histogram), 8)
        self.assertGreater(sum(peer.lateness_histogram), 0)  # the peer's input frames were judged
        self.assertLess(peer.lateness_max_frames, 15)  # an honest peer
        self.assertEqual(peer.late_input_events, 0)
        self.assertEqual(peer.counters["desync_states_received"], 0)  # share_desync_states is off
        choice = sessions[0].choose_input_delay()
        self.assertEqual(choice.rtt_us[1], peer.ping_us)  # the one remote machine's RTT
        self.assertEqual(choice.median_rtt_us, peer.ping_us)
        self.assertTrue(2 <= choice.delay <= 4)
        self.assertEqual(choice.delay, sessions[0].choose_input_delay(50, 0, 32).delay if choice.delay < 4 else 4)
        with self.assertRaises(retcon.InvalidArgument):
            sessions[0].choose_input_delay(50, 5, 4)
        with self.assertRaises(retcon.Unsupported):
            sessions[2].choose_input_delay()  # a spectator
        self.assertGreater(sessions[0].spectator_stats(0).counters["datagrams_sent"], 0)
        with self.assertRaises(retcon.NotFound):
            sessions[0].peer_stats(0)  # a local player
        games: List[Counter] = machines["games"]  # type: ignore[assignment]
        self.assertFalse([e for g in games for e in g.events if e.type == retcon.EVENT_DESYNC_DETECTED])
        self.assertGreater(sessions[0].checksums_compared, 0)  # desync detection ran
        confirmed = sessions[0].confirmed_frame
        self.assertEqual(sessions[0].frame_checksum(confirmed), sessions[1].frame_checksum(confirmed))
        with self.assertRaises(retcon.WrongState):
            sessions[0].frame_checksum(sessions[0].current_frame + 5)
        # A transport in use cannot be closed first.
        with self.assertRaises(retcon.WrongState):
            machines["links"][0].close()  # type: ignore[index]
        self.close_pair(machines)

    def test_simulator_blackouts_limits_and_stats(self) -> None:
        machines = self.p2p_pair()
        links: List[retcon.Transport] = machines["links"]  # type: ignore[assignment]
        links[0].set_blackouts([(1000000, 1800000)])  # A's outgoing is silent for 0.8 s
        links[1].set_simulator_limits(receive_budget=1)
        self.assertEqual(links[1].simulator_limits.receive_budget, 1)
        self.assertEqual(links[1].simulator_limits.capacity, 8192)
        links[1].set_links(incoming=retcon.link_profile(duplicate=1.0))  # two a poll: the budget cuts
        self.play_pair(machines, 300)
        out, inc = links[0].simulator_stats()
        self.assertGreater(out["dropped_blackout"], 30)
        self.assertEqual(inc["dropped_blackout"], 0)
        _, b_in = links[1].simulator_stats()
        self.assertGreater(b_in["duplicated"], 50)
        self.assertGreater(b_in["budget_exhausted"], 50)
        self.assertEqual(len(links[0].simulator_in_flight()), 2)
        sessions: List[retcon.Session] = machines["sessions"]  # type: ignore[assignment]
        self.assertGreaterEqual(min(s.confirmed_frame for s in sessions), 300)  # through the blackout
        # The machines compared their states' checksums all along (desync detection) and agree.
        games: List[Counter] = machines["games"]  # type: ignore[assignment]
        self.assertFalse([e for g in games for e in g.events if e.type == retcon.EVENT_DESYNC_DETECTED])
        self.assertGreater(sessions[0].checksums_compared, 5)
        with self.assertRaises(retcon.InvalidArgument):
            links[0].set_blackouts([(5, 5)])  # empty window
        with self.assertRaises(retcon.InvalidArgument):
            links[0].set_blackouts([(1, 2)] * (retcon.SIMULATOR_MAX_BLACKOUTS + 1))
        links[0].set_blackouts([])
        self.assertEqual(sessions[0].dropped_unknown_address, 0)  # only the two machines spoke
        self.assertEqual(machines["network"].dropped_unknown_address, 0)  # type: ignore[attr-defined]
        with self.assertRaises(retcon.InvalidArgument):
            machines["wires"][0].set_blackouts([(1, 2)])  # type: ignore[index]  # not a simulator
        with self.assertRaises(retcon.InvalidArgument):
            links[0].udp_stats()  # not a UDP socket
        self.close_pair(machines)

    def test_udp_receive_budget_and_stats(self) -> None:
        udp = retcon.Transport.udp("127.0.0.1", 0)
        udp.set_receive_budget(datagrams=8, microseconds=1000)
        with self.assertRaises(retcon.InvalidArgument):
            udp.set_receive_budget(datagrams=0)
        stats = udp.udp_stats()
        self.assertEqual(set(stats), {"send_errors", "receive_errors", "receive_budget_stops", "system_calls"})
        self.assertEqual(stats["receive_budget_stops"], 0)
        udp.close()

    def test_udp_receive_paths(self) -> None:
        for asked in ("completion_ring", "batched_calls", "single_calls"):
            udp = retcon.Transport.udp("127.0.0.1", 0, receive_path=asked)
            runs = udp.receive_path
            if sys.platform.startswith("linux"):
                expected = ({"completion_ring", "batched_calls"} if asked == "completion_ring" else {"batched_calls"})
            else:
                expected = {"single_calls"}
            self.assertIn(runs, expected, asked)
            udp.close()
        with self.assertRaises(ValueError):
            retcon.Transport.udp("127.0.0.1", 0, receive_path="carrier_pigeon")

    def test_p2p_refusals_say_why(self) -> None:
        network = retcon.MemoryNetwork()
        wire = network.endpoint()
        with self.assertRaises(retcon.InvalidArgument) as caught:
            retcon.p2p_session(Counter(), [retcon.LOCAL, retcon.LOCAL], 1, 64, wire)  # forgot the remote player
        self.assertIn("no remote player", str(caught.exception))
        alone = retcon.p2p_session(Counter(), [retcon.LOCAL, retcon.LOCAL], 1, 64, wire, allow_local_only=1)
        alone.close()
        with self.assertRaises(retcon.InvalidArgument) as caught:
            retcon.spectator_session(Counter(), 2, 1, 64, wire, retcon.peer_address(b""))
        self.assertIn("host address", str(caught.exception))
        with self.assertRaises(retcon.InvalidArgument) as caught:
            retcon.sync_test_session(Counter(), 2, 1, 64, check_distance=0)
        self.assertIn("check_distance", str(caught.exception))
        wire.close()
        network.close()

    def test_p2p_with_a_match_key(self) -> None:
        machines = self.p2p_pair(spectator=True, key=bytes(range(1, 33)))
        self.play_pair(machines, 100)
        self.close_pair(machines)
        with self.assertRaises(ValueError):
            self.p2p_pair(key=b"short")

    def test_p2p_over_user_transports(self) -> None:
        machines = self.p2p_pair(transports="user")
        self.play_pair(machines, 120)
        self.close_pair(machines)


class Replays(unittest.TestCase):
    def record(self, frames: int = 300, **options: int) -> retcon.Replay:
        game = Counter()
        with retcon.local_session(game, PLAYERS, 1, max_state_size=64) as s:
            s.start_recording(user_data=b"seed=1", **options)
            for f in range(frames):
                for p in range(PLAYERS):
                    s.add_local_input(p, steer(p, f))
                s.advance_frame()
            with self.assertRaises(retcon.WrongState):
                s.start_recording()
            return s.recording()

    def test_record_save_load_play(self) -> None:
        replay = self.record()
        info = replay.info
        self.assertEqual((info.num_players, info.input_size, info.frame_count), (2, 1, 300))
        self.assertEqual(info.user_data, b"seed=1")
        self.assertEqual(info.checkpoint_count, 300)
        self.assertEqual(info.stored_states, 5)
        self.assertEqual(replay.inputs(7), [steer(0, 7), steer(1, 7)])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "match.rpl")
            replay.save(path)
            again = retcon.Replay.load(path)
        self.assertEqual(again.to_bytes(), replay.to_bytes())
        self.assertEqual(retcon.Replay.from_bytes(replay.to_bytes()).to_bytes(), replay.to_bytes())
        report = replay.play(Counter(), 64)
        self.assertFalse(report.diverged)
        self.assertEqual(report.checksums_verified, 300)
        with self.assertRaises(retcon.CorruptData) as caught:
            retcon.Replay.from_bytes(replay.to_bytes()[:100])
        self.assertIn("truncated", str(caught.exception))
        with self.assertRaises(retcon.IoError):
            retcon.Replay.load("/nonexistent/match.rpl")

    def test_bisect_and_sync_test_name_a_changed_input(self) -> None:
        replay = self.record()
        replay.set_input(123, 1, b"\x05" if steer(1, 123) != b"\x05" else b"\x06")
        seen: List[Tuple[int, int]] = []
        game = Counter()
        report = replay.bisect(game, 64, progress=lambda done, total: seen.append((done, total)))
        self.assertEqual(report.first_bad, 124)
        self.assertTrue(report.exact)
        self.assertEqual(report.last_good, 123)
        self.assertEqual(game.frame, 124)  # left in the replayed state
        self.assertIsNotNone(report.replayed_state)
        self.assertEqual(report.reference_frame, 123)  # states every 60: the last good one
        self.assertEqual(seen[-1], (124, 300))
        from_near = replay.bisect(Counter(), 64, from_frame=123)
        self.assertEqual((from_near.start_frame, from_near.first_bad), (120, 124))
        sync = replay.sync_test(Counter(), 64, check_distance=3)
        self.assertTrue(sync.deterministic)
        self.assertEqual(sync.first_bad, 124)

    def test_sync_test_of_a_replay_finds_non_determinism(self) -> None:
        replay = self.record(state_interval=0)
        report = replay.sync_test(Counter(noisy=True), 64, check_distance=2)  # the noise byte: XXH3 sees it
        self.assertFalse(report.deterministic)
        self.assertIsNotNone(report.mismatch_text_first)


if __name__ == "__main__":
    unittest.main()
