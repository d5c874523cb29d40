"""Checks a session captured on a GPU against what a user must be able to trust
(issue 26's acceptance), straight from the session file (docs/session-format.md):

  - every forward GEMM or convolution row of the op table that ran kernels has
    Tensor Core kernels (a fp16/bf16 matrix multiply that missed them is a finding);
  - GPU time launched by no op is under 2 % of the traced GPU time;
  - for a Python loop, one optimizer_steps row per optimizer per recorded step;
  - for a torch.compile'd loop (issue 28), at least 95 % of the compiled graphs' GPU
    time after each graph's first call in the calls inductor listed (its kernels and
    extern calls: CUDA-graph replays included), the first calls (kernel tuning,
    warmup) reported apart.

    python scripts/check_gpu_session.py SESSION.ampscope [--max-unattributed 0.02] [--min-compiled-listed 0.95]

Prints one line per check and exits 1 when one fails, 0 when all pass.
"""
import argparse
import sqlite3
import sys

GEMM_OR_CONV = ("mm", "addmm", "bmm", "baddbmm", "linear", "matmul", "conv", "attention", "_scaled_dot_product")


def is_gemm_or_conv(name):
    base = name.split("::")[-1]
    return any(base == k or base.startswith(k) or k in base for k in GEMM_OR_CONV)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("session")
    parser.add_argument("--max-unattributed", type=float, default=0.02)
    parser.add_argument("--min-compiled-listed", type=float, default=0.95)
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.session}?mode=ro", uri=True)
    failed = False

    def report(ok, line):
        nonlocal failed
        failed |= not ok
        print(("ok   " if ok else "FAIL ") + line)

    rows = db.execute("SELECT name, module, input_dtypes, kernels, tensor_core_kernels FROM op_stats "
                      "WHERE phase = 'forward' AND kernels > 0").fetchall()
    gemm = [r for r in rows if is_gemm_or_conv(r[0])]
    missed = [r for r in gemm if r[4] == 0 and ("Half" in (r[2] or "") or "BFloat16" in (r[2] or "")
                                                or "float16" in (r[2] or ""))]
    report(bool(gemm) and not missed,
           f"forward GEMM/conv rows with kernels: {len(gemm)}; low-precision ones without Tensor Core kernels: "
           f"{len(missed)}" + "".join(f"\n       {r[0]} {r[1]} {r[2]}" for r in missed[:8]))

    total, unattributed = db.execute(
        "SELECT COALESCE(SUM(end_ns - start_ns), 0), COALESCE(SUM(CASE WHEN op_id = 0 OR op_id IS NULL "
        "THEN end_ns - start_ns ELSE 0 END), 0) FROM kernels").fetchone()
    share = unattributed / total if total else 1.0
    report(total > 0 and share < args.max_unattributed,
           f"GPU time with no op: {unattributed / 1e6:.3f} ms of {total / 1e6:.3f} ms traced ({share:.2%}; "
           f"limit {args.max_unattributed:.0%})")

    kind = (db.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone() or [""])[0]
    if kind == "python":
        steps = db.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
        per_opt = db.execute("SELECT optimizer, COUNT(*) FROM optimizer_steps GROUP BY optimizer").fetchall()
        report(steps > 0 and per_opt and all(n == steps for _, n in per_opt),
               f"steps: {steps}; optimizer_steps rows per optimizer: {dict(per_opt)}")

    # What precision readiness covered (GPT-2's Conv1D layers since session 28: 49 layers, was 1).
    if db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'readiness'").fetchone()[0]:
        layers, sampled = db.execute("SELECT COUNT(DISTINCT layer), COUNT(DISTINCT step) FROM readiness").fetchone()
        print(f"info readiness: {layers} layers measured on {sampled} sampled steps")

    # What the first range sample adds to the user's GPU memory (session 44, a build without
    # ampscope's kernels: GPT-2's peak 12.7 -> 32.6 GiB at it, the ATen ops on whole tensors).
    sampled = db.execute("SELECT MIN(step) FROM gradients").fetchone()[0]
    if sampled and sampled > 1:
        memory = dict(((step, (peak, reserved)) for step, peak, reserved in db.execute(
            "SELECT step, mem_peak_bytes, mem_reserved_bytes FROM steps WHERE step IN (?, ?)", (sampled - 1, sampled))))
        if len(memory) == 2:
            (p0, r0), (p1, r1) = memory[sampled - 1], memory[sampled]
            gib = 1 << 30
            print(f"info memory at the first range sample (step {sampled}): peak {p0 / gib:.2f} -> {p1 / gib:.2f} GiB, "
                  f"reserved {r0 / gib:.2f} -> {r1 / gib:.2f} GiB")

    has_compiled = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'compiled_kernels'").fetchone()[0]
    if has_compiled and db.execute("SELECT COUNT(*) FROM compiled_kernels").fetchone()[0]:
        columns = {c[1] for c in db.execute("PRAGMA table_info(compiled_kernels)")}
        first = "first_call_gpu_ns" if "first_call_gpu_ns" in columns else "0"  # older files: all calls
        graph, graph_first, listed, listed_first, tuning, calls, graphs = db.execute(
            "SELECT SUM(CASE WHEN kind = 'graph' THEN gpu_time_ns ELSE 0 END), "
            f"SUM(CASE WHEN kind = 'graph' THEN {first} ELSE 0 END), "
            "SUM(CASE WHEN kind IN ('fused', 'extern') THEN gpu_time_ns ELSE 0 END), "
            f"SUM(CASE WHEN kind IN ('fused', 'extern') THEN {first} ELSE 0 END), "
            "SUM(CASE WHEN kind = 'tuning' THEN gpu_time_ns ELSE 0 END), "
            "SUM(CASE WHEN kind = 'graph' THEN calls ELSE 0 END), SUM(kind = 'graph') FROM compiled_kernels").fetchone()
        later = (graph or 0) - (graph_first or 0)
        share = ((listed or 0) - (listed_first or 0)) / later if later > 0 else 0.0
        report(calls > graphs and later > 0 and share >= args.min_compiled_listed,
               f"compiled graphs: {graph / 1e6:.3f} ms GPU in {calls} calls of {graphs} graphs; after each graph's "
               f"first call {share:.1%} in listed calls (limit {args.min_compiled_listed:.0%}); first calls "
               f"{(graph_first or 0) / 1e6:.3f} ms, {(listed or 0) / max(graph or 1, 1):.1%} listed over all calls")
        # Over all calls: the listed calls and the first calls' tuning of them (kind 'tuning').
        whole = ((listed or 0) + (tuning or 0)) / max(graph or 1, 1)
        report(whole >= args.min_compiled_listed,
               f"compiled graphs over all calls: {whole:.1%} on graph ops, listed calls and their tuning "
               f"({(tuning or 0) / 1e6:.3f} ms of tuning; limit {args.min_compiled_listed:.0%})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
