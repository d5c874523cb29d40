"""Reference peer: which input dtypes PyTorch's own profiler (record_shapes=True)
reports for the ops of ampscope's GPT architecture under CPU autocast.

Usage: profiler_dtypes_reference.py bf16|fp16 [sdpa|math]
Prints JSON {op name: sorted list of input-dtype lists} for forward ops,
tensor arguments only, in PyTorch profiler's spellings ("float", "c10::BFloat16").
"""
import json
import sys
import tempfile

import torch
import torch.nn.functional as F

from reference_models import GPT

dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[sys.argv[1]]
TENSOR_TYPES = {"float", "c10::Half", "c10::BFloat16", "long int", "int", "bool", "double"}
# Not aten::mul: `tensor * number` is mul.Tensor with a wrapped number from
# Python but mul.Scalar from C++, so the two record different arguments.
OPS = {"aten::linear", "aten::matmul", "aten::softmax", "aten::layer_norm", "aten::gelu",
       "aten::cross_entropy_loss", "aten::embedding", "aten::masked_fill", "aten::add",
       "aten::scaled_dot_product_attention"}
attention = sys.argv[2] if len(sys.argv) > 2 else "sdpa"


model = GPT(vocab=16, width=32, layers=1, heads=4, seq_len=8, attention=attention)
tokens = torch.randint(0, 16, (4, 9))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
    with torch.autocast("cpu", dtype=dtype):
        out = model(tokens[:, :-1])
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), tokens[:, 1:].reshape(-1))
# The input types are in the exported trace's "Input type" args (FunctionEvent has no field for them).
with tempfile.NamedTemporaryFile(suffix=".json") as trace:
    prof.export_chrome_trace(trace.name)
    events = json.load(open(trace.name))["traceEvents"]
seen = {}
for evt in events:
    if evt.get("cat") == "cpu_op" and evt.get("name") in OPS:
        types = [t for t in evt["args"].get("Input type", []) if t in TENSOR_TYPES]
        seen.setdefault(evt["name"], set()).add(tuple(types))
print(json.dumps({k: sorted(list(v) for v in s) for k, s in seen.items()}))
