"""Overhead of capturing a Python training loop: the same fp16 loop (examples/amp_typical.py's
model, GradScaler) bare, under ampscope.capture (every step recorded; and with no op recorded, as
`ampscope run --compare` times each precision), and under
torch.profiler.profile(record_shapes=True), each in its own process, interleaved
(bare, ampscope, torch.profiler, bare, ...) so machine drift hits all alike.

    PYTHONPATH=build/default/python python bench/python_capture_overhead.py [--repeats 3] [--steps 30]

Prints the median per-step time of each (steps after the first 5) and the ratios to bare.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

# "ampscope, no ops": the capture as `ampscope run --compare` times a precision (hooks on, no op
# recorded, no range sample): what its timed runs carry.
MODES = ["bare", "ampscope", "ampscope, no ops", "torch.profiler"]


def child(mode, steps, width, out_dir):
    import torch
    from torch import nn

    torch.manual_seed(0)
    layers = [nn.Linear(width, width) for _ in range(6)]
    model = nn.Sequential(*[m for l in layers for m in (l, nn.ReLU())], nn.Linear(width, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu")
    x, y = torch.randn(64, width), torch.randint(0, 10, (64,))
    times = []

    def loop():
        for _ in range(steps):
            t0 = time.perf_counter()
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            times.append(time.perf_counter() - t0)

    if mode == "bare":
        loop()
    elif mode == "ampscope":
        import ampscope
        with ampscope.capture(os.path.join(out_dir, "bench.ampscope"), overwrite=True, grad_every=0):
            loop()
    elif mode == "ampscope, no ops":
        import ampscope
        with ampscope.capture(os.path.join(out_dir, "bench.ampscope"), overwrite=True, grad_every=0,
                              readiness_every=0, window_start=steps + 1, trace_gpu=False):
            loop()
    else:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True):
            loop()
    print(statistics.median(times[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--child", choices=MODES)
    parser.add_argument("--out-dir")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.steps, args.width, args.out_dir)
        return
    results = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as out_dir:
        for _ in range(args.repeats):
            for mode in MODES:
                out = subprocess.run([sys.executable, __file__, "--child", mode, "--steps", str(args.steps),
                                      "--width", str(args.width), "--out-dir", out_dir],
                                     check=True, capture_output=True, text=True).stdout
                results[mode].append(float(out.strip().splitlines()[-1]))
    print_table({mode: [t * 1e3 for t in times] for mode, times in results.items()})


def print_table(results_ms, prefix=""):
    """Each mode's median step (ms), its ratio to bare's, and every repeat: the one table
    of the capture-overhead benchmarks (also bench/python_script_overhead.py's)."""
    bare = statistics.median(results_ms["bare"])
    width = max(16, *(len(mode) for mode in results_ms))
    print(f"{prefix}{'mode':<{width}} {'median step ms':>14} {'ratio to bare':>14}  (each repeat, ms)")
    for mode, times in results_ms.items():
        m = statistics.median(times)
        print(f"{prefix}{mode:<{width}} {m:>14.2f} {m / bare:>14.3f}  " + " ".join(f"{t:.2f}" for t in times))


if __name__ == "__main__":
    main()
