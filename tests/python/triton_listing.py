"""Lists the calls of a real GPU wrapper as ampscope's capture does (kernel_calls in
python/ampscope/_compiled_kernels.py) and prints them as JSON, one {kernel, kind,
nodes} per call. For tests/python_capture/test_python_compiled_kernels.cpp.

The wrapper (tests/fixtures/h200-gpt2-backward-wrapper.py.txt) is inductor's own
code from an H200, compiled with provenance tracking off; this adds what tracking
writes, as torch/_inductor/codegen/wrapper.py does: before each call a
`# [Provenance debug handles] <kernel>:<n>` comment, and a mapping from that handle
to the nodes the call computes, here the nodes of the call's own
"Topologically Sorted Source Nodes" comment. Except, as inductor (torch 2.11,
codegen/simd.py), after "# Call mix order reduction kernel": that call gets no handle.

    python triton_listing.py WRAPPER
"""
import json
import re
import sys

from ampscope._compiled_kernels import kernel_calls

CALL = re.compile(r"^(\s*)(?:\w+ = )?(triton_\w+(?=\.run\()|extern_kernels\.\w+(?=\()|torch\.ops\.[\w.]+(?=\())")
SOURCES = re.compile(r"# Topologically Sorted Source Nodes: \[([^\]]*)\]")

lines, mapping, nodes, handle, mix_order = [], {}, [], 0, False
for line in open(sys.argv[1]).read().splitlines():
    mix_order = mix_order or "# Call mix order reduction kernel" in line
    found = SOURCES.search(line)
    if found:
        nodes = [n.strip() for n in found.group(1).split(",")]
    call = CALL.match(line)
    if call and mix_order:
        mix_order = False
    elif call:
        handle += 1
        key = f"{call.group(2)}:{handle}"
        lines.append(f"{call.group(1)}# [Provenance debug handles] {key}")
        mapping[key] = nodes
    lines.append(line)


class Output:  # the two attributes kernel_calls reads from inductor's CompiledFxGraph
    source_code = "\n".join(lines)
    inductor_provenance_mapping_str = json.dumps({"cppCodeToPost": mapping})


print(json.dumps(kernel_calls(Output())))
