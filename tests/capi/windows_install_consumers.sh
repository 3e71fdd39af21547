#!/bin/sh
# Windows build test: the installed package, as README "Windows" tells a game with its own build
# to use it (the Linux twin is install_consumers.sh):
#  1. `cmake --install` into a temporary prefix: retcon.dll, the import and static libraries,
#     the headers, the CMake package, the .pc files, and libsodium.a (when the build has match
#     keys: no Windows machine has Debian's build of it);
#  2. CMake find_package(retcon) with the same toolchain file: C on retcon::retcon (the DLL) and
#     retcon::retcon_static, C++ on retcon::retcon_cpp (tests/capi/consumers);
#  3. plain C with the compiler and `pkg-config --cflags --libs retcon-static`;
# and every program runs under Wine.
#   windows_install_consumers.sh BUILD_DIR CONSUMERS_DIR TOOLCHAIN_FILE CC RUNNER
set -eu
build=$1
consumers=$2
toolchain=$3
cc=$4
runner=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retcon-windows-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; exit 1; }
test -f "$prefix/bin/retcon.dll"
test -f "$prefix/include/retcon.h"

generator=
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
echo "== find_package(retcon) in a MinGW build"
# shellcheck disable=SC2086
cmake -S "$consumers" -B "$tmp/cmake" $generator -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
  -Dretcon_DIR="$prefix/lib/cmake/retcon" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/cmake" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
cp "$prefix/bin/retcon.dll" "$tmp/cmake/"  # the game ships it next to its .exe
for program in consumer_c_shared consumer_c_static consumer_cpp; do
  "$runner" "$tmp/cmake/$program.exe"
done

echo "== pkg-config retcon-static"
flags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --cflags --libs retcon-static)
echo "pkg-config --cflags --libs retcon-static: $flags"
# shellcheck disable=SC2086  # flags are words
"$cc" -std=c99 "$consumers/consumer.c" -o "$tmp/pc_static.exe" $flags -static
"$runner" "$tmp/pc_static.exe"
echo "OK: the installed Windows package builds and runs its consumers (C: DLL, static, pkg-config; C++)"
