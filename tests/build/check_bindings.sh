#!/usr/bin/env bash
# Fails when a program binds a std::filesystem symbol to a LibTorch library.
#
# The torch wheel's libtorch.so and libtorch_cpu.so export their own unversioned
# copy of std::filesystem (linked in from a static libstdc++ part when the wheel
# was built). The dynamic linker binds each reference to the first library in
# the program's lookup order that defines the symbol; when LibTorch comes before
# libstdc++ (seen on Ubuntu 24.04 with g++ 13 and CMake 4), remove_all & co. run
# LibTorch's copy, half of which jumps to address 0. This checks the bindings the
# loader actually makes, all of them at start-up (LD_BIND_NOW), for each program.
#
# usage: check_bindings.sh PROGRAM [ARG]... -- PROGRAM [ARG]... -- ...
set -u
status=0
checked=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run_one() {
  local prog="$1"; shift
  rm -f "$out"/trace.*
  LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$out/trace" QT_QPA_PLATFORM=offscreen \
    "$prog" "$@" >/dev/null 2>&1 </dev/null
  if ! ls "$out"/trace.* >/dev/null 2>&1; then
    echo "FAIL $prog: the dynamic linker wrote no binding trace"; status=1; return
  fi
  # Only symbols libstdc++ itself exports count: inline ones (path::~path) are
  # instantiated in every library that uses them, LibTorch's included, harmlessly.
  local libstdcxx
  libstdcxx=$(ldd "$prog" 2>/dev/null | awk '/libstdc\+\+\.so/ {print $3; exit}')
  if [ -z "$libstdcxx" ]; then echo "FAIL $prog: ldd finds no libstdc++"; status=1; return; fi
  nm -D --defined-only "$libstdcxx" | awk '{print $NF}' | sed 's/@.*//' | grep 'St10filesystem' | sort -u >"$out/own"
  # Lines look like: binding file A [0] to B [0]: normal symbol `SYM' [GLIBCXX_3.4.26]
  local bad
  bad=$(grep -h "binding file" "$out"/trace.* | grep -E "symbol \`_ZN?K?St10filesystem" |
        grep -E " to [^ ]*/(libtorch[^/ ]*|libc10[^/ ]*)\.so" |
        while IFS= read -r line; do
          sym=${line#*symbol \`}; sym=${sym%%\'*}
          grep -qxF "$sym" "$out/own" && echo "$line"
        done | head -5)
  local total
  total=$(grep -h "binding file" "$out"/trace.* | grep -cE "symbol \`_ZN?K?St10filesystem")
  if [ "$total" -eq 0 ]; then
    echo "FAIL $(basename "$prog"): no std::filesystem binding in the trace: the check saw nothing"
    status=1
  elif [ -n "$bad" ]; then
    echo "FAIL $(basename "$prog"): std::filesystem bound into LibTorch:"
    echo "$bad" | sed 's/^[ 0-9:]*/  /'
    status=1
  else
    echo "ok   $(basename "$prog"): $total std::filesystem bindings, none into LibTorch"
  fi
  checked=$((checked + 1))
}
args=()
for a in "$@" --; do
  if [ "$a" = "--" ]; then
    [ ${#args[@]} -gt 0 ] && run_one "${args[@]}"
    args=()
  else
    args+=("$a")
  fi
done
[ "$checked" -gt 0 ] || { echo "FAIL: no program checked"; exit 1; }
exit $status
