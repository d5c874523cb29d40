#!/usr/bin/env bash
# Issue #5's speedup table: `ampscope compare` for the GPT and ConvNet models, and
# the same architectures, sizes and precisions in Python PyTorch eager, in one go
# on one device. Prints the markdown table docs/performance.md takes.
#   scripts/compare_bench.sh [cpu|cuda] [build dir]
# AMPSCOPE_BENCH_INFERENCE=1: `compare --inference` and the eager peer's inference
# (torch.inference_mode + autocast, forward only) instead, with fp16 on the CPU too.
# CPU: the bench_step_time sizes, fp32 and bf16. CUDA: sizes that fill a GPU
# (GPT 12 x 768, T=1024; ConvNet 8 x 256 channels, batch 512), all four precisions.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
device="${1:-cpu}"
build="${2:-$here/build/default}"
source "$here/scripts/deps.env"
python="${AMPSCOPE_BENCH_PYTHON:-$HOME/.cache/ampscope/torch-$TORCH_VERSION/bin/python}"
ampscope="$build/app/cli/ampscope"
out="$(mktemp -d)"
inference="${AMPSCOPE_BENCH_INFERENCE:-0}"

if [[ "$device" == cuda ]]; then
  precisions=fp32,tf32,fp16,bf16
  gpt=(--layers 12 --width 768 --heads 12 --seq-len 1024 --batch 8)
  convnet=(--layers 8 --width 256 --batch 512)
  run=(--steps 60 --warmup 15 --repeats 3)
  eager_seconds=5
else
  precisions=fp32,bf16
  gpt=(--layers 2 --width 128 --heads 4 --seq-len 64 --batch 16)
  convnet=(--layers 2 --width 32 --batch 64)
  run=(--steps 40 --warmup 10 --repeats 3)
  eager_seconds=3
fi
eager_mode=() what=step
if [[ "$inference" == 1 ]]; then
  [[ "$device" == cuda ]] || precisions=fp32,fp16,bf16
  run+=(--inference) eager_mode=(--inference) what=batch
else
  run+=(--profile-steps 3)
fi

for model in gpt convnet; do
  declare -n sizes="$model"
  # ampscope's flags spell the batch --batch-size; the eager peer takes --batch.
  amp_sizes=("${sizes[@]/--batch/--batch-size}")
  "$ampscope" compare --model "$model" --device "$device" --precisions "$precisions" --seed 1 \
    "${amp_sizes[@]}" "${run[@]}" --out "$out/$model.ampscope" >"$out/$model.log"
  "$python" "$here/bench/pytorch_eager_step.py" "$device" "$eager_seconds" --models "$model" \
    --precisions "$precisions" "${sizes[@]}" "${eager_mode[@]}" >"$out/$model.eager"
done

"$python" - "$out" "$precisions" "$what" <<'PY'
import sqlite3, statistics, sys
out, precisions, what = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
print(f"| model | precision | ampscope median {what} (min–max) | speedup vs fp32 (per-repeat range) "
      f"| PyTorch eager {what} | eager speedup | ampscope / eager |")
print("|---|---|---|---|---|---|---|")
for model in ("gpt", "convnet"):
    db = sqlite3.connect(f"file:{out}/{model}.ampscope?mode=ro", uri=True)
    warmup = int(db.execute("SELECT value FROM meta WHERE key='warmup_steps'").fetchone()[0])
    steps = {}
    for variant, repeat, ms in db.execute(
            "SELECT variant, repeat, step_time_ms FROM comparison_steps WHERE step > ?", (warmup,)):
        steps.setdefault(variant, {}).setdefault(repeat, []).append(ms)
    eager = {p: float(ms) for _, p, ms in (line.split() for line in open(f"{out}/{model}.eager"))}
    base = {r: statistics.median(v) for r, v in steps["fp32"].items()}
    for p in precisions:
        if p not in steps:
            print(f"| {model} | {p} | failed (see {out}/{model}.log) | | {eager.get(p, 0):.2f} ms | | |")
            continue
        every = [ms for v in steps[p].values() for ms in v]
        med = statistics.median(every)
        paired = [base[r] / statistics.median(v) for r, v in steps[p].items() if r in base]
        e = eager[p]
        print(f"| {model} | {p} | {med:.2f} ms ({min(every):.2f}–{max(every):.2f}) "
              f"| {statistics.median(paired):.2f}× ({min(paired):.2f}–{max(paired):.2f}) "
              f"| {e:.2f} ms | {eager['fp32'] / e:.2f}× | {med / e:.2f} |")
PY
echo "comparison files and logs: $out"
