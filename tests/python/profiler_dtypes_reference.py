"""Reference peer: which input dtypes PyTorch's own profiler (record_shapes=True)
reports for the ops of ampscope's GPT architecture under CPU autocast.

Usage: profiler_dtypes_reference.py bf16|fp16
Prints JSON {op name: sorted list of input-dtype lists} for forward ops,
tensor arguments only, in PyTorch profiler's spellings ("float", "c10::BFloat16").
"""
import json
import math
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[sys.argv[1]]
TENSOR_TYPES = {"float", "c10::Half", "c10::BFloat16", "long int", "int", "bool", "double"}
# Not aten::mul: `tensor * number` is mul.Tensor with a wrapped number from
# Python but mul.Scalar from C++, so the two record different arguments.
OPS = {"aten::linear", "aten::matmul", "aten::softmax", "aten::layer_norm", "aten::gelu",
       "aten::cross_entropy_loss", "aten::embedding", "aten::masked_fill", "aten::add"}


class Attention(nn.Module):
    def __init__(self, width, heads, seq_len):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.register_buffer("mask", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (p.view(b, t, self.heads, c // self.heads).transpose(1, 2) for p in self.qkv(x).split(c, 2))
        att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        att = torch.softmax(att.masked_fill(self.mask[:t, :t], float("-inf")), -1)
        return self.proj(torch.matmul(att, v).transpose(1, 2).reshape(b, t, c))


class GPT(nn.Module):
    def __init__(self, vocab=16, width=32, layers=1, heads=4, seq_len=8):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(vocab, width), nn.Embedding(seq_len, width)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            blk = nn.Module()
            blk.ln1, blk.attn, blk.ln2 = nn.LayerNorm(width), Attention(width, heads, seq_len), nn.LayerNorm(width)
            blk.fc, blk.proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.blocks.append(blk)
        self.ln_f = nn.LayerNorm(width)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1]))
        for b in self.blocks:
            x = x + b.attn(b.ln1(x))
            x = x + b.proj(F.gelu(b.fc(b.ln2(x))))
        return F.linear(self.ln_f(x), self.tok_emb.weight)


model = GPT()
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
