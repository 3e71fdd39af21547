#!/bin/sh
# Fails unless the shared library exports exactly the retcon_ functions retcon.h declares:
# no symbol without the retcon_ prefix (the C++ core, libstdc++ instantiations and libxxhash
# stay hidden), and every RETCON_API function present.
# Usage: check_exports.sh <libretcon.so> <retcon.h>
#        check_exports.sh <retcon.dll> <retcon.h> [<import library>]   (Windows build: the DLL's
#        export table read with $OBJDUMP -p, and the import library's __imp_ symbols with $NM)
set -eu
lib=$1
header=$2
case "$lib" in
  *.dll)
    exported=$(${OBJDUMP:-x86_64-w64-mingw32-objdump} -p "$lib" |
      awk '/\[Ordinal\/Name Pointer\] Table/ { table = 1; next } table && NF == 0 { table = 0 } table { print $NF }' |
      sort -u)
    if [ -n "${3:-}" ]; then
      imported=$(${NM:-x86_64-w64-mingw32-nm} "$3" | sed -n 's/^.* I __imp_//p' | sort -u)
      if [ "$imported" != "$exported" ]; then
        echo "the import library $3 does not import exactly what $lib exports:" >&2
        for name in $exported; do printf '%s\n' "$imported" | grep -qx "$name" || echo "  not imported: $name" >&2; done
        for name in $imported; do printf '%s\n' "$exported" | grep -qx "$name" || echo "  not exported: $name" >&2; done
        exit 1
      fi
    fi
    ;;
  *) exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | sort -u) ;;
esac
if [ -z "$exported" ]; then
  echo "no exported symbols in $lib" >&2
  exit 1
fi
status=0
leaked=$(printf '%s\n' "$exported" | grep -v '^retcon_' || true)
if [ -n "$leaked" ]; then
  echo "exported symbols without the retcon_ prefix:" >&2
  printf '  %s\n' $leaked >&2
  status=1
fi
declared=$(grep -o '^RETCON_API[^(]*(' "$header" | sed 's/($//; s/.*[ *]//' | sort -u)
for name in $declared; do
  if ! printf '%s\n' "$exported" | grep -qx "$name"; then
    echo "declared in retcon.h but not exported: $name" >&2
    status=1
  fi
done
for name in $exported; do
  if ! printf '%s\n' "$declared" | grep -qx "$name"; then
    echo "exported but not declared in retcon.h: $name" >&2
    status=1
  fi
done
count=$(printf '%s\n' "$exported" | wc -l)
[ "$status" -eq 0 ] && echo "$count symbols exported, all retcon_ and all declared in retcon.h"
exit "$status"
