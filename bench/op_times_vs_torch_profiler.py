"""Per-op times against a peer: ampscope's op table and torch.profiler's on the same
model, measured apart, one intra-op thread each. The engine's CPU MLP (32 -> 3 x 256 ->
10, ReLU, bf16 autocast, AdamW with foreach updates, batch 64) runs under
`ampscope profile`; the same network written in PyTorch runs under
torch.profiler.profile(record_shapes=True). Ops are matched by name and input shapes
(each side's calls summed over modules and phases), and their mean CPU time per call
compared: the signatures with the most time, then the time-weighted median ratio.

    OMP_NUM_THREADS=1 ~/.cache/ampscope/torch-2.11.0/bin/python bench/op_times_vs_torch_profiler.py \\
        --ampscope build/default/app/cli/ampscope [--steps 200] [--repeats 2]

Both sides leave their first 10 steps out (ampscope: --window-start 11). The two tools
cost different amounts per op and time ops by different clocks; agreement within a few
tens of percent on ops of 10 us and more is what to expect, and a row far outside it is
a mislabel worth a look.
"""
import argparse
import collections
import csv
import json
import os
import statistics
import subprocess
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

WARMUP = 10
FLAGS = ["--model", "mlp", "--layers", "3", "--width", "256", "--batch-size", "64", "--precision", "bf16",
         "--optimizer", "adamw", "--device", "cpu", "--grad-every", "0", "--seed", "1"]


def signature(name, shapes):
    return name, json.dumps(shapes, separators=(",", ":"))


def ampscope_means(ampscope, steps, tmp):
    session = os.path.join(tmp, "s.ampscope")
    subprocess.run([ampscope, "profile", *FLAGS, "--steps", str(steps + WARMUP), "--window-start", str(WARMUP + 1),
                    "--quiet", "--force", "--out", session], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([ampscope, "export", session, "--format", "csv", "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    totals = collections.defaultdict(lambda: [0, 0])  # signature -> [ns, calls]
    with open(os.path.join(tmp, "s.ops.csv")) as f:
        for row in csv.DictReader(f):
            key = signature(row["name"], json.loads(row["input_shapes"]))
            totals[key][0] += int(row["cpu_time_ns"])
            totals[key][1] += int(row["calls"])
    return totals


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(32, 256), nn.Linear(256, 256), nn.Linear(256, 256)])
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.head(x)


def torch_profiler_means(steps):
    torch.manual_seed(1)
    model = Mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, foreach=True)
    x, y = torch.randn(64, 32), torch.randint(0, 10, (64,))

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    for _ in range(WARMUP):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            step()
    totals = collections.defaultdict(lambda: [0, 0])
    for avg in prof.key_averages(group_by_input_shape=True):
        shapes = [list(s) if isinstance(s, (list, tuple)) else [] for s in avg.input_shapes]
        key = signature(avg.key, shapes)
        totals[key][0] += int(avg.cpu_time_total * 1000)  # us -> ns, self and children, as ampscope's
        totals[key][1] += avg.count
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ampscope", required=True)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rows", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(1)
    ours, peer = collections.defaultdict(list), collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):  # taking turns, so a shared machine's load moves both alike
            for key, (ns, calls) in ampscope_means(args.ampscope, args.steps, tmp).items():
                ours[key].append((ns, calls))
            for key, (ns, calls) in torch_profiler_means(args.steps).items():
                peer[key].append((ns, calls))

    def mean_us(samples):
        return sum(ns for ns, _ in samples) / max(1, sum(c for _, c in samples)) / 1000

    def calls_per_step(samples):
        return sum(c for _, c in samples) / len(samples) / args.steps

    matched = [k for k in ours if k in peer]
    matched.sort(key=lambda k: -sum(ns for ns, _ in ours[k]))
    print(f"{'op':<28} {'input shapes':<34} {'calls/step':>10} {'ampscope us':>12} {'torch.profiler us':>18} {'ratio':>6}")
    weighted = []
    for key in matched:
        a, p = mean_us(ours[key]), mean_us(peer[key])
        if p <= 0:
            continue
        weighted.append((a / p, sum(ns for ns, _ in ours[key])))
        if len(weighted) <= args.rows:
            calls = f"{calls_per_step(ours[key]):.0f}/{calls_per_step(peer[key]):.0f}"
            print(f"{key[0][:28]:<28} {key[1][:34]:<34} {calls:>10} {a:>12.1f} {p:>18.1f} {a / p:>6.2f}")
    weighted.sort()
    half, run = sum(w for _, w in weighted) / 2, 0
    for ratio, w in weighted:
        run += w
        if run >= half:
            print(f"{len(matched)} signatures in both; time-weighted median ratio ampscope / torch.profiler: {ratio:.2f}")
            break
    print(f"only ampscope: {len(ours) - len(matched)} signatures; only torch.profiler: {len(peer) - len(matched)}")


if __name__ == "__main__":
    main()
