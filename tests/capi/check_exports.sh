#!/bin/sh
# Fails unless the shared library exports exactly the retcon_ functions retcon.h declares:
# no symbol without the retcon_ prefix (the C++ core, libstdc++ instantiations and libxxhash
# stay hidden), and every RETCON_API function present.
# Usage: check_exports.sh <libretcon.so> <retcon.h>
set -eu
lib=$1
header=$2
exported=$(nm -D --defined-only "$lib" | awk '{ print $NF }' | sed 's/@.*//' | sort -u)
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
