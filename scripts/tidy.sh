#!/usr/bin/env bash
# clang-tidy (Debian's clang-tidy-14, the checks in .clang-tidy) over ampscope's
# sources, from build/default/compile_commands.json (run scripts/dev.sh build first).
# Exits 1 when any check reports. Default: the code without LibTorch (profiler core,
# report, ui models), a few minutes on two cores; pass directories for others
# (engine/ and profiler/capture/ take ~20 s a file: LibTorch's headers).
#   scripts/tidy.sh                      # the default set
#   scripts/tidy.sh engine profiler/capture
set -euo pipefail
cd "$(dirname "$0")/.."
build=${AMPSCOPE_BUILD_DIR:-build/default}
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[[ -n "$tidy" ]] || { echo "tidy.sh: clang-tidy is not installed (apt-get install clang-tidy)" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] || { echo "tidy.sh: no $build/compile_commands.json; run scripts/dev.sh build first" >&2; exit 2; }
dirs=("$@")
[[ ${#dirs[@]} -gt 0 ]] || dirs=(profiler profiler/analysis profiler/store profiler/export profiler/report ui/models)
files=()
for d in "${dirs[@]}"; do
  for f in "$d"/*.cpp; do [[ -f "$f" ]] && files+=("$f"); done
done
log=$(mktemp)
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
# GCC's precompiled LibTorch header (a .gch) is unreadable to clang: the compile
# commands go to clang-tidy without it (every source includes what it uses).
sed -E 's# -Winvalid-pch -include [^ ]*/cmake_pch\.hxx##g' "$build/compile_commands.json" >"$db/compile_commands.json"
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 "$tidy" -p "$db" --quiet >"$log" 2>/dev/null || true
if grep -E "(warning|error):" "$log"; then
  echo "tidy.sh: $(grep -cE '(warning|error):' "$log") findings in ${#files[@]} files" >&2
  exit 1
fi
echo "tidy.sh: ${#files[@]} files clean"
