#!/usr/bin/env python3
"""Cuts tests/fixtures/h200-gpt2-cudagraphs-records.tsv out of a session file of
`ampscope run examples/hf_gpt2_fp16.py --compile reduce-overhead` on a GPU.

Keeps, for the first N steps, what CompiledKernelTimes reads: each compiled graph's
op (`ampscope::compiled_graph::<n>`), its direct children that launched a kernel or
that inductor's listing names (extern calls), each kernel launched inside them (the
launching op re-parented to the child it ran under: the join only asks which child),
and the listing's fused and extern rows. Ops that launched nothing and are not listed
(buffer allocations) only move the ordinals of their own names and are left out, and
so are the `aten::zero_` calls inductor's autotuning makes in a graph's first call
(thousands of cache-clearing fills; the first call's GPU time is less by theirs).

Lines, tab-separated: `name <id> <text>`; `op <id> <parent> <step> <phase> <start>
<duration> <name>`; `kernel <op> <start> <duration> <tensor cores 0/1> <kind> <name id>`;
`listed <graph> <phase> <kind> <ordinal> <name>`. Times in ns from the first op kept;
ops and kernels in start order.
Usage: make_cuda_graph_fixture.py SESSION.ampscope OUT.tsv [STEPS]"""
import sqlite3
import sys

session, out_path = sys.argv[1], sys.argv[2]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 4
db = sqlite3.connect(f"file:{session}?mode=ro", uri=True)
marker = "ampscope::compiled_graph::"
ops = db.execute("SELECT id, parent_id, step, phase, start_ns, end_ns, name FROM ops WHERE step <= ? ORDER BY start_ns",
                 (steps,)).fetchall()
by_id = {o[0]: o for o in ops}
listed = db.execute("SELECT graph, phase, kind, ordinal, kernel FROM compiled_kernels "
                    "WHERE kind IN ('fused', 'extern') ORDER BY rowid").fetchall()
extern_names = {row[4] for row in listed if row[2] == "extern"}


def child_of(op_id):
    """(graph op id, the direct child op id or None) for an op inside a graph's call."""
    path = []
    while op_id in by_id:
        op = by_id[op_id]
        if op[6].startswith(marker):
            return op_id, (path[-1] if path else None)
        path.append(op_id)
        op_id = op[1]
    return None, None


kernels = db.execute("SELECT k.op_id, k.start_ns, k.end_ns, k.tensor_core_by_name, k.kind, n.name FROM kernels k "
                     "JOIN kernel_names n ON n.id = k.name_id WHERE k.step <= ? ORDER BY k.start_ns",
                     (steps,)).fetchall()
kept_ops, kept_kernels = set(), []
for op_id, start, end, tc, kind, name in kernels:
    graph, child = child_of(op_id)
    if graph is None or (child is not None and by_id[child][6] == "aten::zero_"):
        continue
    kept_ops.add(graph)
    if child is not None:
        kept_ops.add(child)
    kept_kernels.append((child or graph, start, end, tc, kind, name))
for op in ops:
    graph, child = child_of(op[0])
    if graph is not None and (child is None or (child == op[0] and op[6] in extern_names)):
        kept_ops.add(op[0])
origin = min(by_id[i][4] for i in kept_ops)
names = {}
with open(out_path, "w") as f:
    f.write(f"# Cut from a session of examples/hf_gpt2_fp16.py --compile reduce-overhead on an H200 by\n"
            f"# scripts/make_cuda_graph_fixture.py (steps 1-{steps}); see tests/fixtures/README.md.\n")
    for op in ops:
        if op[0] in kept_ops:
            parent = op[1] if op[1] in kept_ops else 0
            f.write("op\t" + "\t".join(str(v) for v in (op[0], parent, op[2], op[3], op[4] - origin, op[5] - op[4],
                                                        op[6])) + "\n")
    for op_id, start, end, tc, kind, name in kept_kernels:
        if name not in names:
            names[name] = len(names)
            f.write(f"name\t{names[name]}\t{name}\n")
        f.write(f"kernel\t{op_id}\t{start - origin}\t{end - start}\t{tc}\t{kind}\t{names[name]}\n")
    for row in listed:
        f.write("listed\t" + "\t".join(str(v) for v in row) + "\n")
