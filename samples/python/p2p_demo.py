#!/usr/bin/env python3
"""Two peers in one Python process, each with its own game and P2P session, over an in-memory
network with simulated latency and loss, driven by a virtual clock (the same run every time).
Both machines must end in the state of a local session given the same inputs.

    python3 samples/python/p2p_demo.py
"""

import os
import sys

try:
    import retcon
except ImportError:  # not pip-installed: the package of this repository (bindings/python)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python", "src"))
    import retcon
from sync_test_demo import PLAYERS, Snake, steer

FRAMES = 240


class Peer(Snake):
    def __init__(self):
        super().__init__()
        self.at_end = None  # the trail after frame FRAMES - 1, as last (re-)simulated

    def advance_frame(self, frame, inputs, flags):
        super().advance_frame(frame, inputs, flags)
        if self.frame == FRAMES:
            self.at_end = self.trail

    def on_event(self, event):
        if event.type == retcon.EVENT_TIMESYNC:
            pass  # advice; session.should_wait says which ticks to skip
        elif event.type == retcon.EVENT_DESYNC_DETECTED:
            self.events.append(event)


def main():
    # The reference: a local session with the same inputs.
    reference = Snake()
    with retcon.local_session(reference, PLAYERS, 1, max_state_size=64) as session:
        for frame in range(FRAMES):
            for p in range(PLAYERS):
                session.add_local_input(p, steer(p, frame))
            session.advance_frame()

    network = retcon.MemoryNetwork()
    wires = [network.endpoint() for _ in range(PLAYERS)]
    links = [wire.simulated(seed=100 + i, latency_us=30000, jitter_us=5000, loss=0.05)
             for i, wire in enumerate(wires)]
    games = [Peer() for _ in range(PLAYERS)]
    sessions = []
    for i in range(PLAYERS):
        players = ["local" if p == i else wires[p].address for p in range(PLAYERS)]
        sessions.append(retcon.p2p_session(games[i], players, 1, 64, links[i]))  # fresh entropy

    # Play on past FRAMES until every machine has confirmed it, and a few ticks more: the last
    # frames were first simulated on predictions, and a late correction is re-simulated by the
    # next advance_frame. (A game never stops there; a demo that compares states must.)
    now = 0
    settle = 10
    for tick in range(10000):
        now += 16667
        for i, (session, game) in enumerate(zip(sessions, games)):
            links[i].set_time(now)
            session.poll(now)
            if not session.running or session.current_frame >= FRAMES + 60:
                continue
            if session.should_wait:  # time sync: this machine runs ahead, skip this tick
                continue
            try:
                session.add_local_input(i, steer(i, session.current_frame))
            except retcon.Error as e:
                if e.name != "input_already_added":  # a frame held back by the prediction window
                    raise
            if session.advance_frame() and session.should_catch_up:  # after a blackout
                session.add_local_input(i, steer(i, session.current_frame))
                session.advance_frame()
        if all(s.confirmed_frame >= FRAMES for s in sessions):
            settle -= 1
            if settle == 0:
                break

    ok = True
    for i, (session, game) in enumerate(zip(sessions, games)):
        peer = session.peer_stats(1 - i)
        stats = session.stats()
        print("machine %d: frame %d, trail at frame %d %016x, ping %d us, %d datagrams sent, %d rollbacks"
              % (i, game.frame, FRAMES, game.at_end or 0, peer.ping_us, peer.counters["datagrams_sent"], stats.rollbacks))
        ok &= game.at_end == reference.trail and not game.events
    print("reference: trail %016x after %d ticks" % (reference.trail, tick + 1))

    for session in sessions:  # sessions first, then what they borrowed
        session.close()
    for transport in links + wires:
        transport.close()
    network.close()
    print("p2p_demo: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
