#!/usr/bin/env python3
"""A small Python game run through retcon's C API: a local session, then a sync test (which
rolls back and re-simulates every frame), then a sync test of a game with a determinism bug.
Prints the stats of each; exits non-zero when anything is off.

    python3 samples/python/sync_test_demo.py
"""

import os
import struct
import sys

try:
    import retcon
except ImportError:  # not pip-installed: the package of this repository (bindings/python)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
    import retcon

PLAYERS = 2
FRAMES = 300


class Snake:
    """Each player steers a point on a 64x64 torus; every cell visited feeds a running hash.
    Integer-only, so it is deterministic; the whole state packs into a few bytes."""

    FORMAT = "<iQ" + "hh" * PLAYERS

    def __init__(self, buggy=False):
        self.frame = 0
        self.trail = 1469598103934665603
        self.pos = [(8 + 48 * p, 32) for p in range(PLAYERS)]
        self.buggy = buggy
        self.unsaved = 0  # the bug: state outside save_state that changes the simulation
        self.resimulated = 0
        self.events = []

    # -- the callbacks retcon calls

    def save_state(self, frame):
        assert frame == self.frame, (frame, self.frame)
        flat = [c for xy in self.pos for c in xy]
        return struct.pack(self.FORMAT, self.frame, self.trail, *flat)

    def load_state(self, frame, data):
        values = struct.unpack(self.FORMAT, data)
        self.frame, self.trail = values[0], values[1]
        self.pos = [(values[2 + 2 * p], values[3 + 2 * p]) for p in range(PLAYERS)]
        assert frame == self.frame

    def advance_frame(self, frame, inputs, flags):
        if flags & retcon.ADVANCE_RESIMULATING:
            self.resimulated += 1
            if self.buggy:
                self.unsaved += 1
        for p, data in enumerate(inputs):
            dx, dy = ((1, 0), (0, 1), (-1, 0), (0, -1))[data[0] & 3]
            x, y = self.pos[p]
            x, y = (x + dx) % 64, (y + dy) % 64
            self.pos[p] = (x, y)
            self.trail = ((self.trail ^ (x * 64 + y + p + self.unsaved)) * 1099511628211) % (1 << 64)
        self.frame += 1

    def on_event(self, event):
        self.events.append(event)

    def describe_state(self, frame, data):
        values = struct.unpack(self.FORMAT, data)
        return "frame %d trail %016x positions %s" % (values[0], values[1], values[2:])


def steer(player, frame):
    """Scripted players: turn now and then."""
    return bytes([((frame // (7 + 5 * player)) * (player + 1)) & 3])


def play(session, game):
    for p in range(PLAYERS):
        session.set_input_delay(p, 1)
    for frame in range(FRAMES):
        for p in range(PLAYERS):
            session.add_local_input(p, steer(p, frame))
        session.poll(frame * 16667)
        assert session.advance_frame()
    stats = session.stats()
    print("  frame %d, confirmed %d, advanced %d, re-simulated %d, rollbacks %d, saves %d, loads %d"
          % (session.current_frame, session.confirmed_frame, stats.frames_advanced,
             stats.frames_resimulated, stats.rollbacks, stats.saves, stats.loads))
    if stats.rollback_depth_histogram:
        print("  rollback depths:", stats.rollback_depth_histogram)
    return stats


def main():
    number, text = retcon.version()
    print("retcon %s (%d) through ctypes" % (text, number))
    ok = True

    print("1. local session")
    local = Snake()
    with retcon.local_session(local, PLAYERS, 1, max_state_size=64) as session:
        play(session, local)
    print("  trail %016x" % local.trail)

    print("2. sync test, check distance 4")
    synced = Snake()
    with retcon.sync_test_session(synced, PLAYERS, 1, max_state_size=64, check_distance=4) as session:
        stats = play(session, synced)
    print("  trail %016x, %d mismatch events" % (synced.trail, len(synced.events)))
    ok &= synced.trail == local.trail and not synced.events and stats.rollbacks > 0

    print("3. sync test of a game with a determinism bug")
    buggy = Snake(buggy=True)
    log = []
    with retcon.sync_test_session(buggy, PLAYERS, 1, max_state_size=64, check_distance=4,
                                  log=lambda level, message: log.append(message),
                                  log_level=retcon.LOG_ERROR) as session:
        play(session, buggy)
    mismatches = [e for e in buggy.events if e.type == retcon.EVENT_SYNC_TEST_MISMATCH]
    if mismatches:
        first = mismatches[0]
        print("  %d mismatches; first at frame %d: %s" % (len(mismatches), first.frame, first.message))
        print("    first run: %s" % first.text_local)
        print("    re-run:    %s" % first.text_remote)
        print("  log: %s" % log[0] if log else "  (no log line)")
    ok &= bool(mismatches) and bool(log)

    print("4. errors are exceptions")
    try:
        retcon.local_session(Snake(), PLAYERS, 1, max_state_size=0)
        ok = False
    except retcon.Error as e:
        print("  %s" % e)
        ok &= e.name == "invalid_argument"
    with retcon.local_session(Snake(), PLAYERS, 1, max_state_size=64) as session:
        try:
            session.add_local_input(PLAYERS, b"\x00")
            ok = False
        except retcon.Error as e:
            print("  %s" % e)
            ok &= e.name == "invalid_player"

    print("sync_test_demo: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
