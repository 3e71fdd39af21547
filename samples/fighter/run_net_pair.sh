#!/usr/bin/env bash
# Runs a 2-process fighter match over loopback UDP and compares the two reports.
#   run_net_pair.sh BIN_DIR [--seconds N] [--profile NAME] [other fighter_net flags...]
# Both bind port 0, so no fixed port is ever needed: B is told A's port, A is told B's (through a
# file it waits for): each accepts only the other, never whoever sends first. A shows a live
# progress line. Exit status 0 when both processes succeeded and report the same checksum of the last frame, 1 otherwise.
# NET_PAIR_A / NET_PAIR_B: the command that runs process A / B instead of BIN_DIR/fighter_net,
# e.g. "build/windows/wine_run build/windows/bin/fighter_net.exe" (a Windows peer under Wine).
set -uo pipefail
bin="$1/fighter_net"
shift
# shellcheck disable=SC2206  # the commands are split into words on purpose
run_a=(${NET_PAIR_A:-$bin})
# shellcheck disable=SC2206
run_b=(${NET_PAIR_B:-$bin})
for run in "${run_a[0]}" "${run_b[0]}"; do
  [ -x "$run" ] || { echo "run_net_pair: no $run" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# NET_PAIR_ADDRESS_FOLDER=NAME: A's address file is in a folder of that name (a test of file names
# outside ASCII); otherwise in the temporary folder itself.
addr="$tmp/b.addr"
if [ -n "${NET_PAIR_ADDRESS_FOLDER:-}" ]; then
  mkdir -p "$tmp/$NET_PAIR_ADDRESS_FOLDER"
  addr="$tmp/$NET_PAIR_ADDRESS_FOLDER/b.addr"
fi

"${run_a[@]}" --player 0 --local-port 0 --remote "file:$addr" --progress "$@" >"$tmp/a.out" &
pid_a=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/a.out")
  [ -n "$port" ] && break
  kill -0 "$pid_a" 2>/dev/null || break
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "run_net_pair: process A did not report its port" >&2
  kill "$pid_a" 2>/dev/null
  cat "$tmp/a.out" >&2
  exit 1
fi
# NET_PAIR_STRANGER=1: before B even starts, a stranger sends A junk datagrams; A must ignore
# them (it accepts only its configured peer) and play B as usual.
if [ "${NET_PAIR_STRANGER:-0}" = 1 ]; then
  for _ in 1 2 3; do printf 'stranger' >"/dev/udp/127.0.0.1/$port"; done
fi
"${run_b[@]}" --player 1 --local-port 0 --remote "127.0.0.1:$port" "$@" >"$tmp/b.out" 2>"$tmp/b.err" &
pid_b=$!
port_b=""
for _ in $(seq 1 200); do
  port_b=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$tmp/b.out")
  [ -n "$port_b" ] && break
  kill -0 "$pid_b" 2>/dev/null || break
  sleep 0.05
done
# Written whole, then renamed: A never reads half a line.
echo "127.0.0.1:${port_b:-0}" >"$addr.part" && mv "$addr.part" "$addr"
wait "$pid_a"; status_a=$?
wait "$pid_b"; status_b=$?

echo "==== process A (player 0) ===="
cat "$tmp/a.out"
echo "==== process B (player 1) ===="
cat "$tmp/b.out"
[ -s "$tmp/b.err" ] && cat "$tmp/b.err" >&2
sum_a=$(sed -n 's/^checksum frame \([0-9]*\) \([0-9a-f]\{16\}\)$/\1 \2/p' "$tmp/a.out")
sum_b=$(sed -n 's/^checksum frame \([0-9]*\) \([0-9a-f]\{16\}\)$/\1 \2/p' "$tmp/b.out")
echo "==== result ===="
if [ "$status_a" -ne 0 ] || [ "$status_b" -ne 0 ]; then
  echo "FAILED: exit status A=$status_a B=$status_b"
  exit 1
fi
if [ -z "$sum_a" ] || [ "$sum_a" != "$sum_b" ]; then
  echo "DESYNC: A has '$sum_a', B has '$sum_b'"
  exit 1
fi
if [ "${NET_PAIR_STRANGER:-0}" = 1 ] && ! grep -q '^datagrams from strangers dropped [1-9]' "$tmp/a.out"; then
  echo "FAILED: A did not see (and drop) the stranger's datagrams"
  exit 1
fi
echo "OK: both peers agree on frame ${sum_a% *}: checksum ${sum_a#* }"
