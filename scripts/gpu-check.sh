#!/usr/bin/env bash
# Everything a GPU machine can tell us, in one call of about 9 minutes (a loan is short):
#   bash scripts/gpu-check.sh            from the repository's root, on a machine with a CUDA GPU,
#                                        torch (CUDA build) in python3 and a C++ toolchain
# Debian packages the machine lacks may be given as .deb files in .gpu-deps/ (unpacked, not
# installed). It builds into $B (default /tmp/ampbuild: Release, no GUI), then runs, the most
# important first, each bounded so a slow step cannot eat the rest:
#   1. the GPU tests (ctest -L gpu) and the bindings checks (programs and the Python module);
#   2. `python -m ampscope run` on examples/hf_gpt2_fp16.py and torchvision_resnet50_bf16.py beside
#      the bare script and torch.profiler (bench/python_script_overhead.py), and each session checked
#      (scripts/check_gpu_session.py: Tensor Cores on every forward GEMM/conv, unattributed < 2 %,
#      one optimizer_steps row per step);
#   3. the built-in GPT bf16 session: train / profile / profile --every 10 (capture overhead);
#   4. fp32 vs bf16 with MFU beside the eager PyTorch peer (bench/pytorch_eager_step.py);
#   5. the whole ctest suite with the time left (one intra-op thread a test: see below).
# Logs, summaries and sessions land in $OUT/gpu-check.tgz (or /tmp/out). BUDGET (seconds, default
# 540) bounds it all.
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s); BUDGET=${BUDGET:-540}
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
src=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-/tmp/ampbuild}; L=/tmp/gpu-check; mkdir -p $L; OUTDIR=${OUT:-/tmp/out}; mkdir -p "$OUTDIR"
save() { tar -czf "$OUTDIR/gpu-check.tgz" -C /tmp gpu-check 2>/dev/null; }
nproc_=$(nproc)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || el "nvidia-smi failed: is there a GPU?"
git -C "$src" log -1 --format='commit %h %s' 2>/dev/null | tee $L/commit.txt

# Build. Debian packages shipped as .deb files in .gpu-deps/ are unpacked under /tmp/gpu-deps.
extra_prefix=""
if ls "$src"/.gpu-deps/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/gpu-deps; for f in "$src"/.gpu-deps/*.deb; do dpkg -x "$f" /tmp/gpu-deps; done
  export PATH=/tmp/gpu-deps/usr/bin:$PATH; extra_prefix=";/tmp/gpu-deps/usr"
fi
if [ ! -f $B/build.ninja ]; then
  TP=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  cmake -S "$src" -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DAMPSCOPE_BUILD_GUI=OFF -DAMPSCOPE_BUILD_BENCHMARKS=OFF \
    -DCMAKE_PREFIX_PATH="$TP$extra_prefix" -DAMPSCOPE_PYTHON="$(command -v python3)" -DTORCH_CUDA_ARCH_LIST=9.0 \
    ${CMAKE_EXTRA:-} > $L/configure.log 2>&1 || { tail -30 $L/configure.log; save; exit 1; }
fi
cmake --build $B -j"$nproc_" > $L/build.log 2>&1 || { grep -E "error|FAILED" $L/build.log | head -20; save; exit 1; }
grep -q "protobuf not found" $L/configure.log 2>/dev/null && el "note: no protobuf here: TensorBoard export not built"
el "built ($(grep -c 'warning:' $L/build.log) compiler warnings)"
A=$B/app/cli/ampscope; export PYTHONPATH=$B/python
# One intra-op thread per test process: ctest runs many at once, and LibTorch's default of one
# thread per core made 12 parallel tests spin 190 threads on 16 cores (issue 26: 158 tests in 285 s).
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# 1. GPU tests and bindings.
(cd $B && timeout 200 ctest -L gpu -j4 --timeout 150 > $L/ctest-gpu.log 2>&1); el "ctest -L gpu rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Skipped" $L/ctest-gpu.log | head -8
bash "$src/tests/build/check_bindings.sh" $A --help > $L/bindings.log 2>&1; el "bindings (programs) rc=$? $(tail -n1 $L/bindings.log)"
python3 "$src/tests/build/check_python_module_bindings.py" "$(ls $B/python/ampscope/_ampscope_capture*.so)" \
  "$(command -v patchelf)" > $L/bindings-python.log 2>&1; el "bindings (Python module) rc=$?"; cat $L/bindings-python.log
save

# 2. The user's own scripts under `ampscope run`, beside bare and torch.profiler.
for ex in hf_gpt2_fp16 torchvision_resnet50_bf16; do
  [ "$(left)" -gt 300 ] || { el "skipped $ex: time"; continue; }
  unset OMP_NUM_THREADS MKL_NUM_THREADS
  timeout 200 python3 "$src/bench/python_script_overhead.py" --repeats 2 --out-dir $L "$src/examples/$ex.py" \
    --steps 30 > $L/$ex.overhead.txt 2>&1; el "$ex overhead rc=$?"; cat $L/$ex.overhead.txt
  export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
  s=$L/$ex.repeat1.ampscope
  [ -f "$s" ] && { $A summary "$s" > $L/$ex.summary.txt 2>&1; python3 "$src/scripts/check_gpu_session.py" "$s"; }
  save
done

# 3. The built-in GPT: capture overhead (two alternating repeats).
S="--model gpt --precision bf16 --device cuda --layers 12 --width 768 --heads 12 --seq-len 1024 --batch-size 8 --fused --seed 1"
unset OMP_NUM_THREADS MKL_NUM_THREADS
$A profile $S --steps 30 --out $L/p.ampscope --force > $L/profile.log 2>&1; el "profile rc=$?"
$A summary $L/p.ampscope > $L/summary.txt 2>&1; python3 "$src/scripts/check_gpu_session.py" $L/p.ampscope
med() { python3 -c "
import json,sys,statistics
r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
print(round(statistics.median(x['step_time_ms'] for x in r if x['step']>10),3))" "$1"; }
for rep in 1 2; do
  [ "$(left)" -gt 200 ] || break
  $A train $S --steps 40 --metrics $L/off$rep.jsonl > /dev/null 2>&1
  $A profile $S --steps 40 --metrics $L/on$rep.jsonl --out /tmp/on.ampscope --force > /dev/null 2>&1
  $A profile $S --steps 40 --every 10 --metrics $L/ev$rep.jsonl --out /tmp/ev.ampscope --force > /dev/null 2>&1
  off=$(med $L/off$rep.jsonl); on=$(med $L/on$rep.jsonl); ev=$(med $L/ev$rep.jsonl)
  el "overhead rep $rep: train $off ms; profile $on ms (x$(python3 -c "print(round($on/$off,3))")); --every 10 $ev ms (x$(python3 -c "print(round($ev/$off,3))"))"
done; save

# 4. fp32 vs bf16 with MFU, beside eager PyTorch.
if [ "$(left)" -gt 150 ]; then
  $A compare ${S/--precision bf16 /} --precisions fp32,bf16 --steps 30 --warmup 10 --repeats 1 --out $L/c.ampscope --force > $L/compare.txt 2>&1
  el "compare rc=$?"; grep -E "^(fp32|bf16) " $L/compare.txt
  timeout 90 python3 "$src/bench/pytorch_eager_step.py" cuda 3 --models gpt --precisions fp32,bf16 --fused \
    --layers 12 --width 768 --heads 12 --seq-len 1024 --batch 8 2>&1 | tail -2
fi; save

# 5. The whole suite in the time left.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
if [ "$(left)" -gt 40 ]; then
  t=$(date +%s)
  (cd $B && timeout $(( $(left) - 15 )) ctest -j"$nproc_" --timeout 240 > $L/ctest.log 2>&1); el "ctest rc=$? in $(( $(date +%s) - t )) s"
  grep -E "tests passed|tests failed|Total Test time" $L/ctest.log; grep -E "\*\*\*Failed|SEGFAULT|Timeout" $L/ctest.log | head -12
fi
save; el done
