# shellcheck shell=bash
# Shell helpers of the fighter_net launchers (run_net_spectate.sh, run_net_rejoin.sh): waiting
# for a process to print a line, never for a fixed time. Sourced, not run.

# fighter_net_command BIN_DIR: sets the array `fighter_net` to the command that runs fighter_net:
# $NET_RUN when set (split into words, e.g. "build/windows/wine_run .../fighter_net.exe": a
# Windows one under Wine), else BIN_DIR/fighter_net. Status 1 when that program is missing.
fighter_net_command() {
  # shellcheck disable=SC2206  # the command is split into words on purpose
  fighter_net=(${NET_RUN:-$1/fighter_net})
  [ -x "${fighter_net[0]}" ]
}

# kill_process_tree PID: SIGKILL to PID and every process under it, children first (a program
# run through a wrapper such as wine_run: killing the wrapper alone leaves the program playing).
kill_process_tree() {
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_process_tree "$child"; done
  kill -KILL "$1" 2>/dev/null
}

# kill_running_jobs: kill_process_tree on every background job of this shell still running. Not
# on a list of PIDs kept by hand: a process already waited for has left the job table, and its
# PID, free again, may by now be another program's (pid_max is 32768 here: a CI run wraps it),
# e.g. a test running in parallel.
kill_running_jobs() {
  local pid
  for pid in $(jobs -p); do kill_process_tree "$pid"; done
}

# listening_port FILE PID: the port PID reported ("listening on 127.0.0.1:PORT") in FILE, within
# 10 s; empty (status 1) when it did not (it died or was too slow).
listening_port() {
  local file="$1" pid="$2" port=""
  for _ in $(seq 1 200); do
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$file")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$port" ] && echo "$port"
}

# wait_for_frame FILE FRAME PID TIMEOUT_S: until PID's status lines ("status T s: frame F, ...",
# fighter_net --status-lines) in FILE reach FRAME. Status 1 when PID ended or TIMEOUT_S passed.
wait_for_frame() {
  local file="$1" frame="$2" pid="$3" timeout="$4" now
  for _ in $(seq 1 $((timeout * 20))); do
    now=$(sed -n 's/^status [0-9.]* s: frame \([0-9][0-9]*\),.*/\1/p' "$file" | tail -n 1)
    [ -n "$now" ] && [ "$now" -ge "$frame" ] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# wait_for_line FILE REGEX PID TIMEOUT_S: until a line of FILE matches REGEX (grep -E).
wait_for_line() {
  local file="$1" regex="$2" pid="$3" timeout="$4"
  for _ in $(seq 1 $((timeout * 20))); do
    grep -Eq "$regex" "$file" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# write_address FILE ADDRESS: whole, then renamed, so a reader never sees half a line.
write_address() {
  echo "$2" >"$1.part" && mv "$1.part" "$1"
}

# final_checksum FILE: "FRAME CHECKSUM" from a report's checksum line; empty when unconfirmed.
final_checksum() {
  sed -n 's/^checksum frame \([0-9]*\) \([0-9a-f]\{16\}\)$/\1 \2/p' "$1"
}
