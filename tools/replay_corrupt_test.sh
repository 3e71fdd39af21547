#!/usr/bin/env bash
# ctest helper: damaged replay files must be refused by retcon_replay with exit status 3 and a
# message, never a crash.   replay_corrupt_test.sh RETCON_REPLAY GOOD_FILE
set -u
tool="$1"; good="$2"
# REPLAY_RUNNER: a launcher for the tool (the Windows build runs retcon_replay.exe under Wine).
# shellcheck disable=SC2206
runner=(${REPLAY_RUNNER:-})
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
size=$(stat -c %s "$good")
fail=0
check() {  # FILE WHAT EXPECTED_TEXT
  out=$("${runner[@]}" "$tool" play "$1" 2>&1); status=$?
  if [ $status -ne 3 ] || ! grep -q "$3" <<<"$out"; then
    echo "NOT REFUSED ($2): status $status: $out"; fail=1
  fi
}
for n in 0 7 8 20 39 40 41 100 $((size / 2)) $((size - 9)) $((size - 8)) $((size - 1)); do
  head -c "$n" "$good" >"$tmp/cut.rpl"
  check "$tmp/cut.rpl" "truncated to $n bytes" "replay: "
done
for offset in 0 9 12 14 20 28 40 60 $((size / 2)) $((size - 1)); do
  cp "$good" "$tmp/flip.rpl"
  printf '\xa5' | dd of="$tmp/flip.rpl" bs=1 seek="$offset" conv=notrunc status=none
  cmp -s "$good" "$tmp/flip.rpl" || check "$tmp/flip.rpl" "byte $offset changed" "replay: "
done
check /nonexistent/file.rpl "missing file" "cannot open"
printf 'hello, not a replay at all, but long enough to hold a header.....' >"$tmp/text.rpl"
check "$tmp/text.rpl" "a text file" "bad magic"
[ $fail -eq 0 ] && echo "corrupt files: all refused"
exit $fail
