"""How fast a loop each capture path keeps whole (issue 32): the built-in loop
(`ampscope profile`) and a Python script (`ampscope run`), each as fast as this
machine runs it, every step's ops asked for (--every 1), one after the other.

    python bench/handoff_rate.py [--steps 2000] [--cli build/default/app/cli/ampscope]

For each path: the steps the session holds (all of them, or the hand-off lost some),
the loop's step rate, the ops recorded and their rate, and where the op sampling
rule fell back (the worker could not keep up with the ops: from then on it recorded
fewer steps' ops; steps, losses and scales are never shed). With no fall-back the
op rate is one the path sustains; with one, the ops recorded up to the first
fall-back, over the time to it, is the most it sustained here.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The acceptance test's loop (tests/python_capture/test_python_fast_loop.cpp), without its record.
SCRIPT = """import sys, torch
from torch import nn
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=20)
for i in range(int(sys.argv[1])):
    x = torch.randn(16, 32)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(x).float().pow(2).mean() * (1e3 if i % 97 == 0 else 1.0)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
"""


def session_figures(path):
    db = sqlite3.connect(path)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    steps = db.execute("SELECT COUNT(*), MIN(end_ns), MAX(end_ns) FROM steps").fetchone()
    ops = db.execute("SELECT COUNT(*) FROM ops").fetchone()[0]
    fallbacks = meta.get("op_sampling_fallbacks", "")
    first_step = int(fallbacks.split(":")[0]) if fallbacks else None
    ops_before = (db.execute("SELECT COUNT(*) FROM ops WHERE step < ?", (first_step,)).fetchone()[0]
                  if first_step else ops)
    end_before = (db.execute("SELECT MAX(end_ns) FROM steps WHERE step < ?", (first_step,)).fetchone()[0]
                  if first_step else steps[2])
    db.close()
    return dict(steps=steps[0], span_s=(steps[2] - steps[1]) / 1e9 if steps[0] > 1 else float("nan"),
                ops=ops, fallbacks=fallbacks or "none",
                dropped=int(meta.get("profiler_dropped_batches", "0")) + int(meta.get("store_dropped_batches", "0")),
                sustained_ops=ops_before, sustained_s=(end_before - steps[1]) / 1e9 if steps[0] > 1 else float("nan"))


def run(cli, args):
    t0 = time.perf_counter()
    r = subprocess.run([cli] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:2])} failed ({r.returncode}): {r.stdout.strip().splitlines()[-1:]}")
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--cli", default=os.path.join(ROOT, "build/default/app/cli/ampscope"))
    o = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "fast.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        paths = {
            "built-in (profile)": ["profile", "--model", "mlp", "--layers", "1", "--width", "32",
                                   "--batch-size", "16", "--device", "cpu", "--precision", "fp16",
                                   "--init-scale", "16777216", "--growth-interval", "20",
                                   "--steps", str(o.steps), "--every", "1", "--out"],
            "python (run)": ["run", "--every", "1", "--out"],
        }
        for name, args in paths.items():
            out = os.path.join(d, name.split()[0] + ".ampscope")
            full = args + [out] + ([script, str(o.steps)] if name.startswith("python") else [])
            run(o.cli, full)
            rows.append((name, session_figures(out)))
    print(f"{'path':<20} {'steps kept':>11} {'steps/s':>8} {'ops':>8} {'ops/s':>8} "
          f"{'ops/s sustained':>15} {'dropped':>7}  fall-backs (step:every:backlog)")
    for name, r in rows:
        sustained = r["sustained_ops"] / r["sustained_s"] if r["sustained_s"] > 0 else float("nan")
        print(f"{name:<20} {r['steps']:>5}/{o.steps:<5} {r['steps'] / r['span_s']:>8.0f} {r['ops']:>8} "
              f"{r['ops'] / r['span_s']:>8.0f} {sustained:>15.0f} {r['dropped']:>7}  {r['fallbacks']}")


if __name__ == "__main__":
    main()
