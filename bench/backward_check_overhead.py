"""What the backward checks of issue #30 cost a Python training loop per checked step.

The same loop three ways, each in its own process, interleaved (bare, capture,
capture+checks, bare, ...) so machine drift hits all alike:
- bare: no capture;
- capture: ampscope.capture recording no ops (window_start past the end) and no
  gradient statistics (grad_every=0): the capture's hooks and step records only;
- capture+checks: the same with the backward checks armed on every step (in a run
  they are armed on gradient-sampled steps and after skipped ones only): a tensor
  hook per module input/output and an isfinite().all() per gradient, read once per step.

    PYTHONPATH=build/default/python python bench/backward_check_overhead.py [--repeats 3] [--steps 40]

Two models: `mlp` (examples/amp_typical.py's shape: 6 Linear+ReLU of width 256,
batch 64, fp16 autocast with GradScaler) and `blocks` (24 residual blocks of
Linear+LayerNorm+GELU, width 64, batch 16, fp32: many small modules, the worst case
for a per-module cost). Prints the median per-step time of each (steps after the
first 5) and the ratios.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ["bare", "capture", "capture+checks"]


def make_model(kind):
    import torch
    from torch import nn

    torch.manual_seed(0)
    if kind == "mlp":
        layers = [m for _ in range(6) for m in (nn.Linear(256, 256), nn.ReLU())]
        return nn.Sequential(*layers, nn.Linear(256, 10)), torch.randn(64, 256), torch.randint(0, 10, (64,)), True

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.norm, self.act = nn.Linear(64, 64), nn.LayerNorm(64), nn.GELU()

        def forward(self, x):
            return x + self.act(self.norm(self.fc(x)))

    model = nn.Sequential(*[Block() for _ in range(24)], nn.Linear(64, 10))
    return model, torch.randn(16, 64), torch.randint(0, 10, (16,)), False


def child(kind, mode, steps, out_dir):
    import torch
    from torch import nn

    torch.set_num_threads(1)
    model, x, y, fp16 = make_model(kind)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", enabled=fp16)
    times = []

    def loop():
        for _ in range(steps):
            t0 = time.perf_counter()
            optimizer.zero_grad()
            with torch.autocast("cpu", dtype=torch.float16, enabled=fp16):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            times.append(time.perf_counter() - t0)

    if mode == "bare":
        loop()
    else:
        import ampscope
        from ampscope import _running
        with ampscope.capture(os.path.join(out_dir, "bench.ampscope"), overwrite=True, grad_every=0,
                              window_start=10**9):
            if mode == "capture+checks":
                watch = _running.capture._backward  # armed on every step instead of the run's rule
                arm = watch.arm
                watch.arm = lambda armed: arm(True)
                watch.arm(True)
            loop()
    print(statistics.median(times[5:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--models", default="mlp,blocks")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--out-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.steps, args.out_dir)
        return
    with tempfile.TemporaryDirectory() as out_dir:
        for kind in args.models.split(","):
            medians = {m: [] for m in MODES}
            for _ in range(args.repeats):
                for mode in MODES:
                    out = subprocess.run([sys.executable, __file__, "--child", kind, mode, "--steps", str(args.steps),
                                          "--out-dir", out_dir], check=True, capture_output=True, text=True).stdout
                    medians[mode].append(float(out.split()[-1]) * 1e3)
            bare = statistics.median(medians["bare"])
            capture = statistics.median(medians["capture"])
            print(f"\n{kind}: median step ms over {args.repeats} processes")
            print("| mode | median step ms | ratio to bare | ratio to capture | each repeat, ms |")
            print("| --- | ---: | ---: | ---: | --- |")
            for mode in MODES:
                m = statistics.median(medians[mode])
                each = " ".join(f"{v:.2f}" for v in medians[mode])
                print(f"| {mode} | {m:.2f} | {m / bare:.2f} | {m / capture:.2f} | {each} |")


if __name__ == "__main__":
    main()
