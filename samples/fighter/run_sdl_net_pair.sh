#!/usr/bin/env bash
# ctest helper: the window's --net mode against a fighter_net process over loopback UDP, both on
# port 0 (each is told the other's address: the window through a file it waits for). Needs
# xvfb-run.
#   run_sdl_net_pair.sh XVFB_RUN BIN_DIR SCREENSHOT
set -uo pipefail
xvfb="$1"; bin="$2"; shot="$3"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Under ASan, libdbus (loaded by SDL's video init) leaks a little at exit: not ours to fix.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$xvfb" -a -s "-screen 0 1280x800x24" "$bin/fighter_sdl" --net --player 0 --remote "file:$tmp/b.addr" --auto \
  --frames 480 --scale 1 --profile transatlantic --screenshot "$shot" >"$tmp/a.out" 2>&1 &
pid_a=$!
port=""
for _ in $(seq 1 300); do
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/a.out")
  [ -n "$port" ] && break
  kill -0 "$pid_a" 2>/dev/null || break
  sleep 0.05
done
[ -n "$port" ] || { echo "the window did not report its port"; cat "$tmp/a.out"; kill "$pid_a" 2>/dev/null; exit 1; }
"$bin/fighter_net" --player 1 --remote "127.0.0.1:$port" --seconds 3 >"$tmp/b.out" 2>&1 &
pid_b=$!
port_b=""
for _ in $(seq 1 300); do
  port_b=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/b.out")
  [ -n "$port_b" ] && break
  kill -0 "$pid_b" 2>/dev/null || break
  sleep 0.05
done
echo "127.0.0.1:${port_b:-0}" >"$tmp/b.addr.part" && mv "$tmp/b.addr.part" "$tmp/b.addr"
wait "$pid_b"; status_b=$?
wait "$pid_a"; status_a=$?
cat "$tmp/a.out" "$tmp/b.out"
if [ $status_a -eq 0 ] && [ $status_b -eq 0 ] && grep -q "desyncs 0" "$tmp/a.out"; then
  echo "window and fighter_net played a networked match"
  exit 0
fi
echo "FAILED: window $status_a, fighter_net $status_b"
exit 1
