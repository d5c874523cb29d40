"""What capture costs a launch-bound step, as a user runs it (issue #27):
`ampscope train` against `ampscope profile` (every step) and `ampscope profile
--every 10`, on the CPU MLP of the issue (64 layers of width 32, batch 16, bf16;
about 8,000 ops a step), each in its own process, taking turns (train, profile,
profile --every 10, train, ...) so a shared machine's load moves all alike.
Medians of each run's step times after the first 10 steps (--metrics), then the
median over repeats. For `--every 10` it also gives its recorded and unrecorded
steps apart, and the gradient-sampled steps (every 10th: activation ranges run
inside those steps; the gradient ranges run after the timed part, see
bench_profiler_overhead's gradient_sample for them).

    python3 bench/capture_overhead_cli.py --ampscope build/default/app/cli/ampscope [--repeats 3] [--steps 60]
        [--baseline OLD_AMPSCOPE]

--baseline: another build's ampscope (before a change); its `profile` and
`profile --every 10` join the same rotation, as ratios to this build's `train`.
docs/performance.md's figures were taken with OMP_NUM_THREADS=1.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

MODEL = ["--model", "mlp", "--layers", "64", "--width", "32", "--batch-size", "16", "--precision", "bf16",
         "--device", "cpu", "--seed", "1"]
MODES = {
    "train": ["train"],
    "profile": ["profile"],
    "profile --every 10": ["profile", "--every", "10"],
}


def run(ampscope, mode, steps, tmp):
    metrics = os.path.join(tmp, "m.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)  # each run's own (ampscope refuses to overwrite one without --force)
    args = [ampscope] + MODES[mode] + MODEL + ["--steps", str(steps), "--metrics", metrics]
    if mode != "train":
        args += ["--out", os.path.join(tmp, "s.ampscope"), "--force"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(metrics) as f:
        return {r["step"]: r["step_time_ms"] for r in map(json.loads, f)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ampscope", default="build/default/app/cli/ampscope")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--baseline", help="another build's ampscope, measured in the same rotation")
    args = parser.parse_args()
    runs = [(mode, args.ampscope, mode) for mode in MODES]
    if args.baseline:
        runs += [(mode, args.baseline, "baseline " + mode) for mode in MODES if mode != "train"]
    medians = {label: [] for _, _, label in runs}
    every10 = {"recorded": [], "unrecorded": [], "gradient": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            for mode, ampscope, label in runs:
                times = run(ampscope, mode, args.steps, tmp)
                measured = {s: t for s, t in times.items() if s > 10}
                medians[label].append(statistics.median(measured.values()))
                if label != mode:
                    continue
                if mode == "profile --every 10":
                    # Recorded: steps 1, 11, 21, ...; gradient samples: 10, 20, ... (--grad-every 10).
                    for s, t in measured.items():
                        kind = "recorded" if s % 10 == 1 else "gradient" if s % 10 == 0 else "unrecorded"
                        every10[kind].append(t)
    base = statistics.median(medians["train"])
    for mode, values in medians.items():
        m = statistics.median(values)
        print(f"{mode:<29} median step {m:8.3f} ms  ({', '.join(f'{v:.3f}' for v in values)})  {m / base:.3f}x train")
    for kind, values in every10.items():
        if values:
            m = statistics.median(values)
            print(f"  --every 10, {kind:<10} steps: median {m:8.3f} ms  {m / base:.3f}x train")


if __name__ == "__main__":
    main()
