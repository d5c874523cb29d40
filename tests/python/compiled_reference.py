"""Reference peer for compiled graphs: the dtypes PyTorch itself gives the GEMMs of
examples/compiled_bf16.py, once compiled and once eager, under the same autocast.

Usage: compiled_reference.py EXAMPLE OUT.json [example args...]
Runs EXAMPLE twice with torch.compile replaced:
- "compiled": by torch.compile with an aot_autograd backend whose forward and backward
  compilers record each node's dtypes from node.meta['val'] (what AOTAutograd traced);
- "eager": by the model itself, with a TorchDispatchMode recording every aten op after
  autocast (dispatch modes run below the autocast key, so they see its casts' results).
Writes {"compiled"|"eager": {op name: sorted unique [input dtypes, output dtypes]}}
for aten::addmm, aten::mm, aten::bmm and aten::convolution, in ampscope's spellings ("bfloat16"; "" for an
argument that is no tensor; tensor lists flattened).
"""
import json
import runpy
import sys

import torch
from torch._dynamo.backends.common import aot_autograd
from torch.utils._python_dispatch import TorchDispatchMode

OPS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::convolution"}
example, out_path, example_args = sys.argv[1], sys.argv[2], sys.argv[3:]


def dtype_of(value):
    return str(value.dtype).removeprefix("torch.") if isinstance(value, torch.Tensor) else ""


def describe(args, result):
    inputs = []
    for a in args:
        inputs.extend(dtype_of(x) for x in (a if isinstance(a, (list, tuple)) else [a]))
    results = result if isinstance(result, (list, tuple)) else [result]
    return [inputs, [dtype_of(r) for r in results if isinstance(r, torch.Tensor)]]


def record(seen, name, args, result):
    if name in OPS:
        entry = describe(args, result)
        if entry not in seen.setdefault(name, []):
            seen[name].append(entry)


def run_example(compile_fn):
    original = torch.compile
    torch.compile = compile_fn
    sys.argv = [example] + example_args
    try:
        runpy.run_path(example, run_name="__main__")
    finally:
        torch.compile = original


compiled_seen = {}


def recording_compiler(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            vals = [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in node.args]
            record(compiled_seen, node.target._schema.name, vals, node.meta.get("val"))
    return gm.forward if getattr(gm.forward, "_boxed_call", False) else torch._functorch.aot_autograd.make_boxed_func(gm.forward)


backend = aot_autograd(fw_compiler=recording_compiler, bw_compiler=recording_compiler)
run_example(lambda model, **kwargs: torch._dynamo.optimize(backend)(model))


eager_seen = {}


class Recorder(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        record(eager_seen, func._schema.name, args, result)
        return result


with Recorder():
    run_example(lambda model, **kwargs: model)

with open(out_path, "w") as f:
    json.dump({kind: {k: sorted(v) for k, v in seen.items()}
               for kind, seen in (("compiled", compiled_seen), ("eager", eager_seen))}, f, indent=1)
