#!/bin/sh
# Windows build test: a C game consumes retcon the two ways README "Windows" tells it to, with
# the plain MinGW C compiler (no CMake), and each program runs under Wine:
#  1. retcon.dll: retcon.h (dllimport) + the import library libretcon.dll.a; the program imports
#     retcon.dll and finds it next to itself;
#  2. static: -DRETCON_STATIC, libretcon_static.a + libretcon_cpp.a + the C++ runtime and
#     Winsock (and libsodium.a, when the build has match keys); the program imports no
#     retcon.dll.
# The program is tests/capi/header_c99.c (strict C99, runs a sync-test session).
#   windows_c_consumers.sh CC OBJDUMP SOURCE_DIR BUILD_DIR RUNNER [STATIC_EXTRA_LIBS]
set -eu
cc=$1
objdump=$2
src=$3
build=$4
runner=$5
static_extra_libs=${6:-}  # words: library files
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retcon-windows-consumers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
flags="-std=c99 -Wall -Wextra -pedantic-errors -Werror -I $src/capi"
program=$src/tests/capi/header_c99.c

imports() { "$objdump" -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p' | tr 'A-Z' 'a-z'; }

echo "== retcon.dll through its import library"
mkdir "$tmp/dll"
# shellcheck disable=SC2086  # flags are words
"$cc" $flags "$program" -o "$tmp/dll/game.exe" "$build/capi/libretcon.dll.a"
cp "$build/bin/retcon.dll" "$tmp/dll/"
imports "$tmp/dll/game.exe" | grep -qx retcon.dll || { echo "FAIL: game.exe does not import retcon.dll"; exit 1; }
"$runner" "$tmp/dll/game.exe"

echo "== the static C library (RETCON_STATIC)"
mkdir "$tmp/static"
# shellcheck disable=SC2086
"$cc" $flags -DRETCON_STATIC "$program" -o "$tmp/static/game.exe" \
  "$build/capi/libretcon_static.a" "$build/lib/libretcon_cpp.a" $static_extra_libs -static -lstdc++ -lws2_32 -lmswsock
if imports "$tmp/static/game.exe" | grep -qx retcon.dll; then
  echo "FAIL: the static game.exe imports retcon.dll"
  exit 1
fi
"$runner" "$tmp/static/game.exe"
echo "OK: C consumers of retcon.dll and of the static library build and run"
