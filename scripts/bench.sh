#!/usr/bin/env bash
# Runs the step-time benchmark and its Python PyTorch eager peer in one go, on
# one device, and prints the table docs/performance.md takes.
#   scripts/bench.sh [cpu|cuda] [build dir]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
device="${1:-cpu}"
build="${2:-$here/build/default}"
source "$here/scripts/deps.env"
python="${AMPSCOPE_BENCH_PYTHON:-$HOME/.cache/ampscope/torch-$TORCH_VERSION/bin/python}"
out="$(mktemp -d)"
AMPSCOPE_BENCH_DEVICE="$device" "$build/bench/bench_step_time" --benchmark_format=json >"$out/cpp.json"
"$python" "$here/bench/pytorch_eager_step.py" "$device" 2 >"$out/py.txt"
"$python" - "$out/cpp.json" "$out/py.txt" "$device" <<'PY'
import json, sys
cpp = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        _, dev, model, prec = b["run_name"].split("/")[:4]
        cpp[(model, prec)] = b["real_time"]
py = {}
for line in open(sys.argv[2]):
    model, prec, ms = line.split()
    py[(model, prec)] = float(ms)
print(f"| model | precision | ampscope step (ms) | PyTorch eager step (ms) | ampscope / eager | vs ampscope fp32 |")
print("|---|---|---|---|---|---|")
for (model, prec), ms in cpp.items():
    p = py.get((model, prec))
    print(f"| {model} | {prec} | {ms:.2f} | {p:.2f} | {ms / p:.2f} | {cpp[(model, 'fp32')] / ms:.2f}x |")
PY
