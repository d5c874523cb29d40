"""Each thread's share of a CPU, second by second, from the samples scripts/gpu-check.sh
takes of /proc/PID/task/*/{comm,stat} (lines "time tid name ticks"; ticks: utime + stime).

    python3 scripts/thread_cpu.py threads.log

Prints one line a second: each thread name's CPU share in it (100 % = one core; threads
of one name summed), so the profiler's threads (amp-worker, amp-writer, amp-cupti) can be
read beside amp-train.
"""
import collections
import os
import sys


def main():
    tick = os.sysconf("SC_CLK_TCK")
    by_time = collections.defaultdict(dict)  # time -> {tid: (name, ticks)}
    for line in open(sys.argv[1]):
        parts = line.split()
        if len(parts) != 4 or not parts[3].isdigit():
            continue
        by_time[float(parts[0])][parts[1]] = (parts[2], int(parts[3]))
    times = sorted(by_time)
    if len(times) < 2:
        print("too few samples")
        return 0
    names = sorted({name for t in times for name, _ in by_time[t].values()})
    print("second  " + "  ".join(f"{n:>11}" for n in names))
    start, last = times[0], times[0]
    for t in times[1:]:
        if t - last < 1.0 and t != times[-1]:
            continue
        share = collections.Counter()
        for tid, (name, ticks) in by_time[t].items():
            before = by_time[last].get(tid)
            share[name] += ticks - (before[1] if before else 0)  # a thread born in between: all of it
        print(f"{t - start:6.1f}  " + "  ".join(f"{100.0 * share[n] / tick / (t - last):10.0f}%" for n in names))
        last = t
    return 0


if __name__ == "__main__":
    sys.exit(main())
