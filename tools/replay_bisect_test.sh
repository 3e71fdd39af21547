#!/usr/bin/env bash
# ctest helper: record a match of a game module, corrupt one recorded input, and check that
# `bisect` names the exact frame (checksums every frame, states only every 60 frames), re-running
# from the nearest stored state when given --from, and that `synctest` does not call the
# corrupted replay clean.   replay_bisect_test.sh RETCON_REPLAY MODULE DIR XOR FRAME
set -u
tool="$1"; module="$2"; dir="$3"; xor="$4"; frame="$5"
# REPLAY_RUNNER: a launcher for the tool (the Windows build runs retcon_replay.exe under Wine).
# shellcheck disable=SC2206
tool=(${REPLAY_RUNNER:-} "$tool")
mkdir -p "$dir"
fail=0
expect() {  # WHAT EXPECTED_STATUS REGEX COMMAND...
  what="$1"; want="$2"; regex="$3"; shift 3
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -Ezq -e "$regex" <<<"$out"; then
    echo "FAILED ($what): status $status (want $want), no /$regex/ in:"; echo "$out"; fail=1
  else
    echo "ok: $what"
  fi
}
next=$((frame + 1))
nearest=$((frame / 60 * 60))
expect "record" 0 "150[0-9] checksums, 26 stored states" \
  "${tool[@]}" --game "$module" record "$dir/orig.rpl" --mode p2p --profile broadband --frames 1500 --seed 5
expect "the recording plays back clean" 0 "result: OK" "${tool[@]}" --game "$module" play "$dir/orig.rpl"
expect "corrupt frame $frame" 0 "wrote" \
  "${tool[@]}" corrupt "$dir/orig.rpl" "$dir/bad.rpl" --frame "$frame" --player 1 --xor "$xor"
expect "bisect names frame $next (from the start)" 1 "from frame 0 .*result: first divergent frame $next: .* frame $frame \\(inputs" \
  "${tool[@]}" --game "$module" bisect "$dir/bad.rpl"
expect "bisect re-runs from the stored state at $nearest" 1 \
  "ran $((next - nearest)) frames from frame $nearest.*result: first divergent frame $next" \
  "${tool[@]}" --game "$module" bisect "$dir/bad.rpl" --from "$frame"
expect "bisect shows the last matching and the replayed state" 1 "--- last matching frame $frame ---.*--- replayed frame $next ---" \
  "${tool[@]}" --game "$module" bisect "$dir/bad.rpl" --full
expect "synctest checks the recording, not only determinism" 1 "DIFFERS FROM THE RECORDING at frame $next" \
  "${tool[@]}" --game "$module" synctest "$dir/bad.rpl" --distance 3
if "${tool[@]}" --game "$module" synctest "$dir/bad.rpl" --distance 3 2>&1 | grep -q DETERMINISTIC; then
  echo "FAILED: synctest calls a corrupted replay DETERMINISTIC"; fail=1
fi
[ $fail -eq 0 ] && echo "bisect test: OK"
exit $fail
