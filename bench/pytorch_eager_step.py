"""The architectures of bench_step_time.cpp in Python PyTorch eager, as a peer.

Same sizes, optimizer (AdamW, lr 1e-3), autocast dtype and loss scaler, data
drawn from an in-memory set by random indices as ampscope's synthetic sources
do. Prints one line per case: "<model> <precision> <median step ms>".
Usage: pytorch_eager_step.py [cpu|cuda] [seconds per case]
"""
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0


class MLP(nn.Module):
    def __init__(self, fan_in, width, layers, classes):
        super().__init__()
        dims = [fan_in] + [width] * layers
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.hidden:
            x = F.relu(layer(x))
        return self.head(x)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ConvNet(nn.Module):
    def __init__(self, channels, width, layers, classes):
        super().__init__()
        self.conv = nn.Conv2d(channels, width, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(layers)])
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn(self.conv(x))))
        return self.head(x.mean((2, 3)))


class Attention(nn.Module):
    def __init__(self, width, heads, seq_len):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.register_buffer("mask", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (p.view(b, t, self.heads, c // self.heads).transpose(1, 2) for p in self.qkv(x).split(c, 2))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        att = att.masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))


class GPT(nn.Module):
    def __init__(self, vocab, width, layers, heads, seq_len):
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
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = x + b.attn(b.ln1(x))
            x = x + b.proj(F.gelu(b.fc(b.ln2(x))))
        return self.ln_f(x) @ self.tok_emb.weight.t()


def case(model_name):
    n = 8192
    if model_name == "mlp":
        return MLP(32, 512, 4, 10), torch.randn(n, 32), torch.randint(0, 10, (n,)), 256
    if model_name == "convnet":
        return ConvNet(3, 32, 2, 10), torch.randn(n, 3, 16, 16), torch.randint(0, 10, (n,)), 64
    tokens = torch.randint(0, 64, (n, 65))
    return GPT(64, 128, 2, 4, 64), tokens[:, :-1], tokens[:, 1:], 16


def median_step_ms(model_name, precision):
    torch.manual_seed(1)
    model, inputs, targets, batch = case(model_name)
    model.to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = torch.amp.GradScaler(device, enabled=precision == "fp16")
    gen = torch.Generator().manual_seed(2)
    times = []

    def step():
        idx = torch.randint(0, inputs.shape[0], (batch,), generator=gen)
        x, y = inputs[idx].to(device, non_blocking=True), targets[idx].to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
            out = model(x)
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm([p.grad for p in model.parameters()])))
        scaler.step(opt)
        scaler.update()
        loss.item(), norm.item()
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(5):
        step()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 10:
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


for model_name in ("mlp", "convnet", "gpt"):
    for precision in ("fp32", "bf16", "fp16"):
        print(f"{model_name} {precision} {median_step_ms(model_name, precision):.4f}", flush=True)
