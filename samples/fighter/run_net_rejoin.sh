#!/usr/bin/env bash
# A 2-process fighter match over loopback UDP in which one process is killed (SIGKILL, as a
# crash) mid-match and started again with --rejoin on a new port: it takes its old player slot
# back from a state the other machine sends, and both final reports must agree.
#   run_net_rejoin.sh BIN_DIR [--kill 0|1] [--kill-at SECONDS] [--seconds N] [--profile NAME] [other fighter_net flags...]
# Both players run with --allow-rejoin and bind port 0 (B is told A's port, A is told B's through
# a file). Once the victim's status lines show frame 60 x SECONDS (default 3 s) it is killed;
# once the survivor prints that its player disconnected (the agreed cut), it is started again
# with --rejoin, told the survivor's address. No fixed port, no fixed sleep: each step waits for a
# line a process printed, with a timeout. NET_RUN: the command that runs fighter_net
# (net_script_lib.sh), e.g. a Windows one under Wine.
# Exit status 0 when the survivor and the restarted process succeeded, report the same checksum
# of the last frame and name the same frame the player was live again from; 1 otherwise.
set -uo pipefail
here=$(dirname "$0")
# shellcheck source=samples/fighter/net_script_lib.sh
. "$here/net_script_lib.sh"
fighter_net_command "$1" || { echo "run_net_rejoin: no ${fighter_net[0]}" >&2; exit 2; }
shift
victim=1
kill_at=3
while [ $# -gt 0 ]; do
  case "$1" in
    --kill) victim="$2"; shift 2 ;;
    --kill-at) kill_at="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ "$victim" = 0 ] || [ "$victim" = 1 ] || { echo "run_net_rejoin: --kill 0 or 1" >&2; exit 2; }
survivor=$((1 - victim))
tmp=$(mktemp -d)
cleanup() {
  kill_running_jobs
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "run_net_rejoin: $1" >&2
  for f in p0 p1 again; do [ -f "$tmp/$f.out" ] && { echo "---- $f ----" >&2; cat "$tmp/$f.out" >&2; }; done
  exit 1
}

# The survivor shows a live progress line (stderr).
progress=(--progress)
[ "$victim" = 0 ] && progress0=() || progress0=("${progress[@]}")
[ "$victim" = 1 ] && progress1=() || progress1=("${progress[@]}")
"${fighter_net[@]}" --player 0 --local-port 0 --remote "file:$tmp/p1.addr" --allow-rejoin --status-lines "${progress0[@]}" "$@" \
  >"$tmp/p0.out" &
pid[0]=$!
port[0]=$(listening_port "$tmp/p0.out" "${pid[0]}") || fail "player 0 did not report its port"
"${fighter_net[@]}" --player 1 --local-port 0 --remote "127.0.0.1:${port[0]}" --allow-rejoin --status-lines "${progress1[@]}" "$@" \
  >"$tmp/p1.out" &
pid[1]=$!
port[1]=$(listening_port "$tmp/p1.out" "${pid[1]}") || fail "player 1 did not report its port"
write_address "$tmp/p1.addr" "127.0.0.1:${port[1]}"

wait_for_frame "$tmp/p$victim.out" $((kill_at * 60)) "${pid[$victim]}" 60 || fail "the match did not reach ${kill_at} s"
kill_process_tree "${pid[$victim]}"  # the program itself, also when NET_RUN wraps it
{ wait "${pid[$victim]}"; } 2>/dev/null
echo -e "\n[player $victim killed (SIGKILL) at its frame $(sed -n 's/^status [0-9.]* s: frame \([0-9]*\),.*/\1/p' "$tmp/p$victim.out" | tail -n 1)]" >&2
wait_for_line "$tmp/p$survivor.out" "^event [0-9.]* s: player $victim disconnected" "${pid[$survivor]}" 60 ||
  fail "player $survivor was not told that player $victim disconnected"
echo -e "\n[player $victim disconnected on player $survivor's machine: starting it again with --rejoin]" >&2

"${fighter_net[@]}" --player "$victim" --local-port 0 --remote "127.0.0.1:${port[$survivor]}" --rejoin --status-lines "$@" \
  >"$tmp/again.out" 2>"$tmp/again.err" &
pid_again=$!

wait "${pid[$survivor]}"; status_s=$?
wait "$pid_again"; status_r=$?

echo "==== player $victim, killed ===="
grep -v '^status ' "$tmp/p$victim.out"
echo "==== player $survivor (stays) ===="
grep -v '^status ' "$tmp/p$survivor.out"
echo "==== player $victim, started again with --rejoin ===="
grep -v '^status ' "$tmp/again.out"
[ -s "$tmp/again.err" ] && cat "$tmp/again.err" >&2
sum_s=$(final_checksum "$tmp/p$survivor.out")
sum_r=$(final_checksum "$tmp/again.out")
live_s=$(sed -n "s/^rejoin: player $victim live again from frame \([0-9]*\) (confirmed)$/\1/p" "$tmp/p$survivor.out")
live_r=$(sed -n "s/^rejoin: player $victim live again from frame \([0-9]*\) (confirmed)$/\1/p" "$tmp/again.out")
echo "==== result ===="
if [ "$status_s" -ne 0 ] || [ "$status_r" -ne 0 ]; then
  echo "FAILED: exit status player $survivor=$status_s, player $victim (rejoined)=$status_r"
  exit 1
fi
if [ -z "$live_s" ] || [ "$live_s" != "$live_r" ]; then
  echo "FAILED: the live frame of the rejoin: player $survivor says '$live_s', player $victim says '$live_r'"
  exit 1
fi
if [ -z "$sum_s" ] || [ "$sum_s" != "$sum_r" ]; then
  echo "DESYNC: player $survivor has '$sum_s', player $victim (rejoined) has '$sum_r'"
  exit 1
fi
echo "OK: player $victim rejoined (live again from frame $live_s on both) and both agree on frame ${sum_s% *}: checksum ${sum_s#* }"
