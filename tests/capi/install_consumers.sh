#!/bin/sh
# Installs the build into a temporary prefix, then builds and runs consumers against it:
#  1. the shared C library where libxxhash's and libsodium's pkg-config modules (and any prefix
#     but ours) are not visible: CMake find_package(retcon) on retcon::retcon, and `pkg-config retcon`; the
#     installed libretcon.so carries no debug information (unless a Debug build or
#     RETCON_INSTALL_STRIP=OFF);
#  2. CMake find_package(retcon): C on retcon::retcon and retcon::retcon_static, C++ on
#     retcon::retcon_cpp;
#  3. plain C with `cc $(pkg-config --cflags --libs retcon)`, and with retcon-static;
#  4. the Python package (bindings/python) pip-installed into a venv of Debian's python3
#     (--no-build-isolation, no network), finding the installed libretcon through pkg-config.
# Usage: install_consumers.sh <build dir> <consumers source dir> [<repository root>]
set -eu
build=$1
consumers=$2
root=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/retcon-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; exit 1; }
test -f "$prefix/include/retcon.h"
test -f "$prefix/include/retcon/session.h"
pcdir=$(dirname "$(find "$prefix" -name retcon.pc | head -n 1)")
shared=$(find "$prefix" -name 'libretcon.so.*.*' | head -n 1)

echo "== installed shared library: $shared ($(wc -c <"$shared") bytes)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
strip_opt=$(sed -n 's/^RETCON_INSTALL_STRIP:[A-Z]*=//p' "$build/CMakeCache.txt")
if [ "$build_type" != "Debug" ] && [ "$strip_opt" != "OFF" ] && command -v readelf >/dev/null 2>&1; then
  if readelf -S "$shared" | grep -q '\.debug_info'; then
    echo "the installed $shared still has debug information" >&2
    exit 1
  fi
fi

generator=
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"

echo "== shared C library without libxxhash's and libsodium's development files visible"
mkdir -p "$tmp/no-pc"
# shellcheck disable=SC2086
env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tmp/no-pc" CMAKE_PREFIX_PATH= \
  cmake -S "$consumers" -B "$tmp/cmake-shared" $generator -DCMAKE_PREFIX_PATH="$prefix" \
  -DCONSUMER_SHARED_ONLY=ON -DCMAKE_BUILD_TYPE=Release >"$tmp/configure-shared.log" 2>&1 ||
  { cat "$tmp/configure-shared.log" >&2; exit 1; }
env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tmp/no-pc" cmake --build "$tmp/cmake-shared" >"$tmp/build-shared.log" 2>&1 ||
  { cat "$tmp/build-shared.log" >&2; exit 1; }
"$tmp/cmake-shared/consumer_c_shared"
for dep in libxxhash libsodium; do
  if env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tmp/no-pc" pkg-config --exists $dep; then
    echo "$dep is still visible to pkg-config" >&2
    exit 1
  fi
done
flags=$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$pcdir" pkg-config --cflags --libs retcon) ||
  { echo "pkg-config retcon needs more than retcon.pc" >&2; exit 1; }
echo "pkg-config --cflags --libs retcon (libxxhash.pc and libsodium.pc hidden): $flags"
case "$flags" in *xxhash*|*sodium*|*retcon_cpp*) echo "retcon.pc names the static dependencies" >&2; exit 1 ;; esac
libdir=$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$pcdir" pkg-config --variable=libdir retcon)
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -Wpedantic -Werror "$consumers/consumer.c" -o "$tmp/consumer_pkgconfig" \
  $flags -Wl,-rpath,"$libdir"
"$tmp/consumer_pkgconfig"
# The shared consumer must load the installed library, not the build tree's.
if command -v ldd >/dev/null 2>&1; then
  ldd "$tmp/consumer_pkgconfig" | grep -q "$prefix" || { ldd "$tmp/consumer_pkgconfig" >&2; exit 1; }
fi

echo "== CMake find_package consumers (shared, static, C++)"
# shellcheck disable=SC2086
cmake -S "$consumers" -B "$tmp/cmake-build" $generator -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/cmake-build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
"$tmp/cmake-build/consumer_c_shared"
"$tmp/cmake-build/consumer_c_static"
"$tmp/cmake-build/consumer_cpp"

echo "== pkg-config static consumer"
export PKG_CONFIG_PATH="$pcdir"
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

python=/usr/bin/python3
if [ -n "$root" ] && [ -x "$python" ] && "$python" -c "import venv, ensurepip, setuptools" 2>/dev/null; then
  echo "== Python package pip-installed into a venv of $python"
  "$python" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 || { cat "$tmp/venv.log" >&2; exit 1; }
  # A copy: pip builds in place, and the source tree must stay clean.
  cp -r "$root/bindings/python" "$tmp/python-src"
  "$tmp/venv/bin/python" -m pip install --no-build-isolation --no-index --no-deps --disable-pip-version-check \
    "$tmp/python-src" >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; exit 1; }
  (cd "$tmp" && env -u RETCON_LIB -u PYTHONPATH PKG_CONFIG_PATH="$pcdir" \
    "$tmp/venv/bin/python" "$consumers/consumer.py" "$prefix")
else
  echo "== Python consumer skipped (no Debian python3 with venv and setuptools)"
fi
echo "install consumers: ok"
