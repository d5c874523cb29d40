#!/usr/bin/env bash
# Configures ampscope with CMake 4 as the GPU machine does (Ubuntu 24.04, CMake 4
# from PyPI, no GUI) and fails on any warning meant for the project's developers
# (-Werror=dev) or on anything deprecated (-Werror=deprecated); then builds the
# targets whose generated files depend on CMake's version (the TensorBoard
# library's protoc output: CMake 4.4 moved protobuf_generate's, and the build broke
# on the GPU machine while this script only configured). Such warnings
# come and go with CMake's versions (CMake 4.3 deprecated FindSQLite3's
# SQLite::SQLite3), and CI's own build uses Debian's CMake 3.25, which never
# shows them. The CMake 4 is the one scripts/dev.sh setup installs from PyPI
# into the torch environment (scripts/deps.env).
#
# usage: check_cmake4_configure.sh PYTHON SOURCE_DIR SCRATCH_DIR CMAKE_PREFIX_PATH
# Exits 77 (ctest: skipped) when PYTHON's environment has no CMake 4.
set -u
python="$1" src="$2" scratch="$3" prefix="$4"
cmake4="$(dirname "$python")/cmake"
version=$("$cmake4" --version 2>/dev/null | sed -n 's/^cmake version \([0-9]*\)\..*/\1/p')
if [ "${version:-0}" -lt 4 ]; then
  echo "SKIP: no CMake 4 beside $python (scripts/dev.sh setup installs it)"
  exit 77
fi
rm -rf "$scratch"
log="$scratch.log"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if "$cmake4" -S "$src" -B "$scratch" "${generator[@]}" -Werror=dev -Werror=deprecated \
     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAMPSCOPE_BUILD_GUI=OFF -DAMPSCOPE_BUILD_BENCHMARKS=OFF \
     -DCMAKE_PREFIX_PATH="$prefix" -DAMPSCOPE_PYTHON="$python" >"$log" 2>&1; then
  built=""
  if grep -q "ampscope_profiler_tensorboard" "$scratch/build.ninja" "$scratch/Makefile" 2>/dev/null &&
     ! grep -q "protobuf not found" "$log"; then
    # The library's own objects (protoc's output among them), not the libraries it links:
    # compiling those shows nothing CMake's version changes, and costs CI minutes.
    objects=()
    if [ -f "$scratch/build.ninja" ]; then
      mapfile -t objects < <(ninja -C "$scratch" -t targets all |
        grep -o '^profiler/CMakeFiles/ampscope_profiler_tensorboard\.dir/[^:]*\.o')
    fi
    [ ${#objects[@]} -gt 0 ] || objects=(ampscope_profiler_tensorboard)
    if ! "$cmake4" --build "$scratch" --target "${objects[@]}" >"$log" 2>&1; then
      echo "FAIL: $("$cmake4" --version | head -1) configures ampscope but does not build the TensorBoard library ($log):"
      grep -E -B2 -A4 "error|FAILED" "$log" | head -30
      exit 1
    fi
    built=" and compiles the TensorBoard library (${#objects[@]} objects, protoc's output included)"
  else
    echo "note: no protobuf here, so the TensorBoard library was not built"
  fi
  echo "PASS: $("$cmake4" --version | head -1) configures ampscope without a developer or deprecation warning$built"
  rm -rf "$scratch" "$log"
  exit 0
fi
echo "FAIL: $("$cmake4" --version | head -1) does not configure ampscope cleanly ($log):"
# The errors first (the warnings LibTorch's own config prints are not ours),
# each distinct place once.
grep -E -A6 "^CMake (Error|Deprecation Error)" "$log" | awk '/^CMake/ { if (seen[$0]++) skip = 1; else skip = 0 } !skip' | head -40
grep -qE "^CMake (Error|Deprecation Error)" "$log" || tail -30 "$log"
exit 1
