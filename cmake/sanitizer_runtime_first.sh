#!/bin/sh
# usage: sanitizer_runtime_first.sh PATCHELF PROGRAM
# Runs after ampscope_libstdcxx_first in sanitizer builds. patchelf's --add-needed puts
# libstdc++ first among the needed libraries, but ASan must be the very first
# ("ASan runtime does not come first in initial library list" and an abort at
# start-up), so the sanitizer runtimes are re-added after it: UBSan's, then ASan's or
# TSan's, which ends up first. The order that results: the sanitizer, libstdc++, the rest.
set -eu
patchelf="$1" program="$2"
needed=$("$patchelf" --print-needed "$program")
for pattern in '^libubsan\.so' '^lib[at]san\.so'; do
  for lib in $(printf '%s\n' "$needed" | grep -E "$pattern" || true); do
    "$patchelf" --remove-needed "$lib" --add-needed "$lib" "$program"
  done
done
