"""A Python consumer of an installed retcon: the package was pip-installed into a venv, the
library is found through pkg-config (PKG_CONFIG_PATH names the install's pkgconfig dir).
Usage: consumer.py <install prefix>"""

import sys

import retcon

prefix = sys.argv[1]
assert "site-packages" in retcon.__file__, retcon.__file__


class Game:
    def __init__(self) -> None:
        self.x = 0

    def save_state(self, frame: int) -> bytes:
        return self.x.to_bytes(8, "little")

    def load_state(self, frame: int, data: bytes) -> None:
        self.x = int.from_bytes(data, "little")

    def advance_frame(self, frame: int, inputs: list, flags: int) -> None:
        self.x = (self.x * 31 + inputs[0][0] + 7 * inputs[1][0]) % (1 << 61)


game = Game()
with retcon.sync_test_session(game, num_players=2, input_size=1, max_state_size=8, check_distance=3) as s:
    for f in range(120):
        s.add_local_input(0, bytes([f % 7]))
        s.add_local_input(1, bytes([f % 5]))
        s.advance_frame()
    assert s.stats().rollbacks > 0
with open("/proc/self/maps") as maps:
    loaded = [line.split()[-1] for line in maps if "libretcon" in line]
assert loaded and all(path.startswith(prefix) for path in loaded), loaded
print("python consumer: retcon %s from %s, sync test of 120 frames ok" % (retcon.version()[1], loaded[0]))
