#!/usr/bin/env sh
# Windows build test: every program and DLL of the build imports only Windows' own DLLs and
# retcon.dll, never a compiler runtime (libstdc++-6.dll, libgcc_s_seh-1.dll,
# libwinpthread-1.dll), which a game would have to ship and which LoadLibrary does not find
# next to a game module (error 126: the replay tool could not load the fighter module).
#   check_windows_imports.sh OBJDUMP BUILD_DIR
set -eu
objdump="$1"
build="$2"
files=$(find "$build/bin" "$build/samples" "$build/tools" -maxdepth 2 \( -name '*.exe' -o -name '*.dll' \) | sort)
[ -n "$files" ] || { echo "no programs or DLLs under $build"; exit 1; }
count=0
bad=0
for f in $files; do
  count=$((count + 1))
  runtimes=$("$objdump" -p "$f" | sed -n 's/^[[:space:]]*DLL Name: //p' | grep -i -E '^lib(stdc\+\+|gcc|winpthread)' || true)
  if [ -n "$runtimes" ]; then
    echo "FAIL: $f imports $(echo "$runtimes" | tr '\n' ' ')"
    bad=1
  fi
done
case "$files" in *retcon.dll*) ;; *) echo "FAIL: no retcon.dll in $build/bin"; bad=1 ;; esac
case "$files" in *libretcon_game_fighter.dll*) ;; *) echo "FAIL: no fighter game module"; bad=1 ;; esac
[ "$bad" -eq 0 ] && echo "OK: $count programs and DLLs import no compiler runtime"
exit "$bad"
