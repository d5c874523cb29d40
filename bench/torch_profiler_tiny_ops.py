"""Python's torch.profiler on the tiny ops of bench_profiler_overhead's
profiling/cpu/tiny-ops/per_op, measured the same way: blocks of 2,000
element-wise ops on 4-element tensors, the calling thread's CPU time, blocks
with and without torch.profiler.profile(activities=[CPU], record_shapes=True)
taking turns, medians. What Python adds per op is the same in both blocks, so
the difference is the profiler's per-op cost as a Python training loop pays it.

    ~/.cache/ampscope/torch-2.11.0/bin/python bench/torch_profiler_tiny_ops.py [--blocks 30]
"""
import argparse
import statistics
import time

import torch

ROUNDS = 500  # 4 ops a round


def tiny_ops(a, b):
    c = a
    for _ in range(ROUNDS):
        c = torch.add(c, b)
        c = torch.mul(c, a)
        c = torch.sub(c, b)
        c = torch.relu(c)
    return c


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    a, b = torch.ones(4), torch.full((4,), 0.5)
    tiny_ops(a, b)
    ops = 4 * ROUNDS
    off, on, finish = [], [], []
    activities = [torch.profiler.ProfilerActivity.CPU]
    for _ in range(args.blocks):
        t0 = time.thread_time_ns()
        tiny_ops(a, b)
        off.append((time.thread_time_ns() - t0) / ops)
        prof = torch.profiler.profile(activities=activities, record_shapes=True)
        prof.__enter__()
        t1 = time.thread_time_ns()
        tiny_ops(a, b)
        t2 = time.thread_time_ns()
        prof.__exit__(None, None, None)
        prof.events()  # what a user reads: the events are built here
        on.append((t2 - t1) / ops)
        finish.append((time.thread_time_ns() - t2) / ops)
    off_ns, on_ns = statistics.median(off), statistics.median(on)
    print(f"python off: {off_ns:.0f} ns/op; torch.profiler(record_shapes): {on_ns:.0f} ns/op "
          f"(+{on_ns - off_ns:.0f} ns/op); finishing (exit + events): {statistics.median(finish):.0f} ns/op")


if __name__ == "__main__":
    main()
