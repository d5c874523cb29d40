"""What inductor itself says it generated, read from a TORCH_TRACE directory (its
structured trace, written on FX graph cache hits and misses alike): per compiled
graph, the RecordFunction names its generated C++ kernels open (kernel profiling),
the calls in order (the `[Provenance debug handles]` comments) and the post-grad
nodes each handle computes (the provenance mapping artifact that follows the code).

usage: compiled_kernels_reference.py TRACE_DIR OUT.json
OUT: [{"records": [...], "calls": [handle, ...], "fused": {handle: [node, ...]}}, ...]"""
import glob
import json
import os
import re
import sys

RECORD = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\("([^"]+)"')
HANDLE = re.compile(r"#\s*\[Provenance debug handles\]\s*(\S+)")


def entries(path):
    """(metadata dict, payload text) per structured-trace record of one log file."""
    meta, payload = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            if meta is not None:
                yield meta, "".join(payload)
            brace = line.find("{")
            meta = json.loads(line[brace:]) if brace >= 0 else {}
            payload = []
    if meta is not None:
        yield meta, "".join(payload)


def main():
    trace_dir, out = sys.argv[1], sys.argv[2]
    graphs = []
    for path in sorted(glob.glob(os.path.join(trace_dir, "*.log"))):
        for meta, payload in entries(path):
            if "inductor_output_code" in meta:
                graphs.append(dict(records=RECORD.findall(payload), calls=HANDLE.findall(payload), fused={}))
            elif meta.get("artifact", {}).get("name") == "inductor_provenance_tracking_node_mappings" and graphs:
                mapping = json.loads(payload or "{}")
                graphs[-1]["fused"] = mapping.get("cppCodeToPost", {})
    with open(out, "w") as f:
        json.dump(graphs, f, indent=1)


if __name__ == "__main__":
    main()
