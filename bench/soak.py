#!/usr/bin/env python3
"""Soak run of `ampscope profile` (issue 14): many CPU steps of the built-in MLP with
the profiler sampling every Nth step, watching the process's resident memory and the
session file's size as the run goes.

    nice -n 19 python3 bench/soak.py --cli build/default/app/cli/ampscope \
        --steps 100000 --every 100 --csv /tmp/soak.csv

At every progress line (`--log-every` steps) it samples VmRSS and VmHWM from
/proc/PID/status and the session's size (the file plus its -wal), writes one CSV row,
and at the end prints a summary: RSS at 10 %, 50 % and 100 % of the run, the slope of
RSS after warm-up (MiB per 10k steps, least squares over the samples past the first
10 %), and the session's bytes per recorded (sampled) step early and late (linearity).
Standard library only.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

STEP_LINE = re.compile(r"^step (\d+)/(\d+)\s")


def proc_status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        pass
    return None


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def slope(xs, ys):
    """Least-squares slope of ys over xs."""
    n = len(xs)
    if n < 2:
        return float("nan")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


def recorded_steps(step, window_start, every):
    """Steps recorded up to and including `step`: window_start, +every, ... (window to the end)."""
    return 0 if step < window_start else (step - window_start) // every + 1


def at_fraction(rows, fraction, total):
    """The first sample at or past fraction of the run."""
    for r in rows:
        if r["step"] >= fraction * total:
            return r
    return rows[-1]


def summarize(rows, total, every):
    """RSS at 10/50/100 % of `total` steps, its slope after warm-up, session growth per recorded step."""
    mib = lambda kib: kib / 1024.0
    print(f"{recorded_steps(rows[-1]['step'], 1, every)} recorded steps, {len(rows)} samples, "
          f"last sample at step {rows[-1]['step']} of {total}")
    for frac in (0.1, 0.5, 1.0):
        r = at_fraction(rows, frac, total)
        print(f"RSS at {int(frac * 100):3d} % (step {r['step']}): {mib(r['rss_kib']):.1f} MiB "
              f"(peak so far {mib(r['hwm_kib']):.1f} MiB)")
    late = [r for r in rows if r["step"] >= 0.1 * total]
    rss_slope = slope([r["step"] for r in late], [mib(r["rss_kib"]) for r in late]) * 10_000
    print(f"RSS slope after warm-up (steps >= 10 %): {rss_slope:+.3f} MiB per 10k steps")
    # The session writer's SQLite page cache keeps the pages it wrote, up to its cap:
    # RSS growth that matches the session's growth is that cache filling.
    a, b = late[0], late[-1]
    print(f"from step {a['step']} to {b['step']}: RSS {mib(b['rss_kib'] - a['rss_kib']):+.1f} MiB, "
          f"session (file + -wal) {(b['session_bytes'] + b['wal_bytes'] - a['session_bytes'] - a['wal_bytes']) / 2**20:+.1f} MiB")

    # Session growth per recorded step, early and late. SQLite appends to the -wal and
    # moves it into the file at each checkpoint, then reuses the -wal from its start
    # without shrinking it: past the first checkpoint the -wal's size is constant and
    # the file grows in checkpoint-sized steps. So: the file's growth over the samples
    # after the -wal reached its size, split in two halves by step.
    wal_max = max(r["wal_bytes"] for r in rows)
    steady = [r for r in rows if r["wal_bytes"] >= 0.99 * wal_max]
    if len(steady) < 4:
        print("session growth: too few samples after the first checkpoint")
        print()
        return
    mid = steady[len(steady) // 2]["step"]

    def per_recorded(seg):
        return slope([r["recorded_steps"] for r in seg], [r["session_bytes"] for r in seg])

    early = per_recorded([r for r in steady if r["step"] <= mid])
    later = per_recorded([r for r in steady if r["step"] >= mid])
    print(f"session growth per recorded step (file, after the first checkpoint): {early:,.0f} B "
          f"(steps {steady[0]['step']}-{mid}), {later:,.0f} B (steps {mid}-{steady[-1]['step']}), "
          f"late/early {later / early:.3f}")


def read_csv(path):
    with open(path) as f:
        return [{k: (float(v) if k == "elapsed_s" else int(v)) for k, v in r.items()} for r in csv.DictReader(f)]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default="build/default/app/cli/ampscope")
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--every", type=int, default=100, help="profiler records every Nth step (ops and gradients)")
    p.add_argument("--precision", default="bf16")
    p.add_argument("--log-every", type=int, default=1000, help="sample interval in steps (a progress line each)")
    p.add_argument("--out", help="session file (default: a temporary directory, removed at the end)")
    p.add_argument("--csv", required=True, help="samples: elapsed_s, step, recorded_steps, rss/hwm KiB, sizes")
    p.add_argument("--summarize", action="store_true", help="only summarise an existing --csv (a cut-off run too)")
    p.add_argument("extra", nargs="*", help="more `ampscope profile` flags (after --)")
    a = p.parse_args()
    if a.summarize:
        summarize(read_csv(a.csv), a.steps, a.every)
        return 0

    tmp = None
    out = a.out
    if not out:
        tmp = tempfile.TemporaryDirectory(prefix="ampscope-soak-")
        out = os.path.join(tmp.name, "soak.ampscope")
    cmd = [a.cli, "profile", "--model", "mlp", "--device", "cpu", "--precision", a.precision,
           "--steps", str(a.steps), "--every", str(a.every), "--grad-every", str(a.every),
           "--log-every", str(a.log_every), "--out", out, "--force", *a.extra]
    print("command:", " ".join(cmd), flush=True)
    with open("/proc/loadavg") as f:
        print("load average at start:", f.read().strip(), flush=True)

    rows = []
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    tail = []
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["elapsed_s", "step", "recorded_steps", "rss_kib", "hwm_kib", "session_bytes", "wal_bytes"])
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-20:]
            m = STEP_LINE.match(line)
            if not m:
                continue
            step = int(m.group(1))
            row = {
                "elapsed_s": round(time.monotonic() - start, 2),
                "step": step,
                "recorded_steps": recorded_steps(step, 1, a.every),
                "rss_kib": proc_status_kib(proc.pid, "VmRSS"),
                "hwm_kib": proc_status_kib(proc.pid, "VmHWM"),
                "session_bytes": file_size(out),
                "wal_bytes": file_size(out + "-wal"),
            }
            if row["rss_kib"] is None:
                continue
            rows.append(row)
            w.writerow(list(row.values()))
            f.flush()
    code = proc.wait()
    elapsed = time.monotonic() - start
    final_size = file_size(out)
    with open("/proc/loadavg") as f:
        print("load average at end:", f.read().strip())
    print("\n".join(tail[-4:]))
    if code != 0 or not rows:
        print(f"ampscope exited {code} after {len(rows)} samples", file=sys.stderr)
        return 1

    print(f"\n{a.steps} steps in {elapsed:.0f} s ({1e3 * elapsed / a.steps:.2f} ms per step, all included)")
    summarize(rows, a.steps, a.every)
    print(f"final session (closed, WAL checkpointed): {final_size:,} B = "
          f"{final_size / recorded_steps(a.steps, 1, a.every):,.0f} B per recorded step, "
          f"{final_size / a.steps:,.0f} B per step")
    if tmp:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
