#!/usr/bin/env bash
# A 2-process fighter match over loopback UDP and a third process, a spectator that joins it
# late (from a state player 0's machine sends: state transfer); compares the three reports.
#   run_net_spectate.sh BIN_DIR [--join-at SECONDS] [--seconds N] [--profile NAME] [other fighter_net flags...]
# Every process binds port 0. The spectator starts first and prints its port; player 0 (A) is
# told it (--spectator), player 1 (B) is told A's port and A is told B's through a file; once A's
# status lines show frame 60 x SECONDS (default 3 s into the match), the spectator is given A's
# address through another file and joins. No fixed port, no fixed sleep: each step waits for a
# line the previous process printed, with a timeout. NET_RUN: the command that runs fighter_net
# (net_script_lib.sh), e.g. a Windows one under Wine.
# Exit status 0 when the three processes succeeded, report the same checksum of the last frame
# and the spectator started from a transferred state (not frame 0); 1 otherwise.
set -uo pipefail
here=$(dirname "$0")
# shellcheck source=samples/fighter/net_script_lib.sh
. "$here/net_script_lib.sh"
fighter_net_command "$1" || { echo "run_net_spectate: no ${fighter_net[0]}" >&2; exit 2; }
shift
join_at=3
if [ "${1:-}" = --join-at ]; then
  join_at="$2"
  shift 2
fi
tmp=$(mktemp -d)
cleanup() {
  kill_running_jobs
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "run_net_spectate: $1" >&2
  for f in a b s; do [ -f "$tmp/$f.out" ] && { echo "---- $f ----" >&2; cat "$tmp/$f.out" >&2; }; done
  exit 1
}

"${fighter_net[@]}" --spectate "file:$tmp/host.addr" --local-port 0 "$@" >"$tmp/s.out" 2>"$tmp/s.err" &
pid_s=$!
port_s=$(listening_port "$tmp/s.out" "$pid_s") || fail "the spectator did not report its port"

"${fighter_net[@]}" --player 0 --local-port 0 --remote "file:$tmp/b.addr" --spectator "127.0.0.1:$port_s" --status-lines \
  --progress "$@" >"$tmp/a.out" &
pid_a=$!
port_a=$(listening_port "$tmp/a.out" "$pid_a") || fail "process A did not report its port"

"${fighter_net[@]}" --player 1 --local-port 0 --remote "127.0.0.1:$port_a" "$@" >"$tmp/b.out" 2>"$tmp/b.err" &
pid_b=$!
port_b=$(listening_port "$tmp/b.out" "$pid_b") || fail "process B did not report its port"
write_address "$tmp/b.addr" "127.0.0.1:$port_b"

wait_for_frame "$tmp/a.out" $((join_at * 60)) "$pid_a" 60 || fail "the match did not reach ${join_at} s"
write_address "$tmp/host.addr" "127.0.0.1:$port_a"
echo "[spectator joins at A's frame $(sed -n 's/^status [0-9.]* s: frame \([0-9]*\),.*/\1/p' "$tmp/a.out" | tail -n 1)]" >&2

wait "$pid_a"; status_a=$?
wait "$pid_b"; status_b=$?
wait "$pid_s"; status_s=$?

echo "==== process A (player 0, streams to the spectator) ===="
grep -v '^status ' "$tmp/a.out"
echo "==== process B (player 1) ===="
cat "$tmp/b.out"
echo "==== process S (spectator, joined ${join_at} s in) ===="
cat "$tmp/s.out"
for f in b s; do [ -s "$tmp/$f.err" ] && cat "$tmp/$f.err" >&2; done
sum_a=$(final_checksum "$tmp/a.out")
sum_b=$(final_checksum "$tmp/b.out")
sum_s=$(final_checksum "$tmp/s.out")
from=$(sed -n 's/^started from frame \([0-9]*\) .*/\1/p' "$tmp/s.out")
echo "==== result ===="
if [ "$status_a" -ne 0 ] || [ "$status_b" -ne 0 ] || [ "$status_s" -ne 0 ]; then
  echo "FAILED: exit status A=$status_a B=$status_b spectator=$status_s"
  exit 1
fi
if [ -z "$sum_a" ] || [ "$sum_a" != "$sum_b" ] || [ "$sum_a" != "$sum_s" ]; then
  echo "DESYNC: A has '$sum_a', B has '$sum_b', the spectator has '$sum_s'"
  exit 1
fi
if [ -z "$from" ]; then
  echo "FAILED: the spectator did not start from a transferred state (it replayed from frame 0)"
  exit 1
fi
echo "OK: both players and the late spectator agree on frame ${sum_a% *}: checksum ${sum_a#* } (the spectator started from frame $from)"
