#!/bin/sh
# Installs the build into a temporary prefix, then builds and runs consumers against it:
#  1. CMake find_package(retcon): C on retcon::retcon (shared) and retcon::retcon_static, C++
#     on retcon::retcon_cpp;
#  2. plain C with `cc $(pkg-config --cflags --libs retcon)`, and with retcon-static.
# Usage: install_consumers.sh <build dir> <consumers source dir>
set -eu
build=$1
consumers=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retcon-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; exit 1; }
test -f "$prefix/include/retcon.h"
test -f "$prefix/include/retcon/session.h"

echo "== CMake find_package consumer"
generator=
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$consumers" -B "$tmp/cmake-build" $generator -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/cmake-build/consumer_c_shared"
"$tmp/cmake-build/consumer_c_static"
"$tmp/cmake-build/consumer_cpp"

echo "== pkg-config consumer"
pcdir=$(dirname "$(find "$prefix" -name retcon.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
pkg-config --exists retcon
flags=$(pkg-config --cflags --libs retcon)
libdir=$(pkg-config --variable=libdir retcon)
echo "pkg-config --cflags --libs retcon: $flags"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$consumers/consumer.c" -o "$tmp/consumer_pkgconfig" \
  $flags -Wl,-rpath,"$libdir"
"$tmp/consumer_pkgconfig"
# The shared consumer must load the installed library, not the build tree's.
if command -v ldd >/dev/null 2>&1; then
  ldd "$tmp/consumer_pkgconfig" | grep -q "$prefix" || { ldd "$tmp/consumer_pkgconfig" >&2; exit 1; }
fi
# The static C library: no libretcon.so needed at run time.
flags=$(pkg-config --cflags --libs retcon-static)
echo "pkg-config --cflags --libs retcon-static: $flags"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$consumers/consumer.c" -o "$tmp/consumer_pkgconfig_static" $flags
"$tmp/consumer_pkgconfig_static"
if command -v ldd >/dev/null 2>&1 && ldd "$tmp/consumer_pkgconfig_static" | grep -q libretcon; then
  echo "the static consumer loads libretcon.so" >&2
  exit 1
fi
echo "install consumers: ok"
