"""What capture costs a user's own training script: the script run bare, under
`python -m ampscope run` (every step's ops recorded, the default), and under
torch.profiler.profile(activities=[CPU, CUDA when there is one], record_shapes=True),
each in its own process, interleaved (bare, ampscope, torch.profiler, bare, ...) so
machine drift hits all alike.

The script must print `steady step ms: X` (examples/hf_gpt2_fp16.py and
examples/torchvision_resnet50_bf16.py do: the mean step after its warm-up, with the
device synchronized at both ends only, so neither capture changes what is timed).

    PYTHONPATH=build/default/python python bench/python_script_overhead.py [--repeats 2] \
        [--out-dir DIR] SCRIPT [SCRIPT ARGS...]

Prints each mode's median steady step and its ratio to bare; with --out-dir the
ampscope sessions are kept there (SCRIPT-stem.repeatN.ampscope) for summary/export.
With --split-gpu-trace, a mode "ampscope --no-gpu-trace" runs in the rotation too (CUPTI's
share of the capture's cost). With --baseline DIR, a fourth mode, "ampscope (baseline)", runs the ampscope package
found in DIR (another build's python/ folder, e.g. main's before a change) in the same
rotation, so the two builds are compared in one run.
"""
import argparse
import os
import re
import runpy
import subprocess
import sys
import tempfile

from python_capture_overhead import print_table  # bench/: the same results table

MODES = ["bare", "ampscope", "torch.profiler"]
STEADY = re.compile(r"steady step ms: ([0-9.]+)")


def under_torch_profiler(script, script_args):
    """The script run in this process under torch.profiler, as a user would wrap it."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    sys.argv = [script] + script_args
    with torch.profiler.profile(activities=activities, record_shapes=True):
        runpy.run_path(script, run_name="__main__")


BASELINE = "ampscope (baseline)"
# The op observer and the Python hooks without CUPTI: with --split-gpu-trace, CUPTI's share of
# full capture shows apart from the rest (session 44's H200 ResNet-50: 1.85x of bare, torch.profiler
# 1.30x, while on the CPU ampscope's own cost is 0.13-0.16 us an op).
NO_GPU_TRACE = "ampscope --no-gpu-trace"


def run_mode(mode, script, script_args, session, baseline=None):
    env = None
    if mode == "bare":
        cmd = [sys.executable, script]
    elif mode in ("ampscope", BASELINE, NO_GPU_TRACE):
        cmd = [sys.executable, "-m", "ampscope", "run", "--out", session, "--force", script]
        if mode == NO_GPU_TRACE:
            cmd.insert(-1, "--no-gpu-trace")
        if mode == BASELINE:
            env = dict(os.environ, PYTHONPATH=baseline)
    else:
        cmd = [sys.executable, __file__, "--child-torch-profiler", script]
    run = subprocess.run(cmd + script_args, capture_output=True, text=True, env=env)
    found = STEADY.findall(run.stdout)
    if run.returncode != 0 or not found:
        sys.exit(f"{mode}: exit {run.returncode}, no 'steady step ms' line: {run.stderr.strip()[-600:]}")
    return float(found[-1])


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child-torch-profiler":
        under_torch_profiler(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out-dir", help="keep the ampscope sessions here")
    parser.add_argument("--baseline", metavar="DIR", help="also run the ampscope package in DIR (another build's python/)")
    parser.add_argument("--split-gpu-trace", action="store_true",
                        help=f"also run '{NO_GPU_TRACE}' (its sessions: STEM.repeatN.no-gpu-trace.ampscope)")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    stem = os.path.splitext(os.path.basename(args.script))[0]
    modes = MODES + ([BASELINE] if args.baseline else []) + ([NO_GPU_TRACE] if args.split_gpu_trace else [])
    results = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as scratch:
        out_dir = args.out_dir or scratch
        os.makedirs(out_dir, exist_ok=True)
        for r in range(args.repeats):
            for mode in modes:
                tag = {BASELINE: ".baseline", NO_GPU_TRACE: ".no-gpu-trace"}.get(mode, "")
                session = os.path.join(out_dir, f"{stem}.repeat{r + 1}{tag}.ampscope")
                results[mode].append(run_mode(mode, args.script, args.script_args, session, args.baseline))
    print_table(results, prefix=f"{stem}: ")


if __name__ == "__main__":
    main()
