"""The architectures of bench_step_time.cpp in Python PyTorch eager, as a peer.

Same sizes, optimizer (AdamW, lr 1e-3), autocast dtype and loss scaler, data
drawn from an in-memory set by random indices as ampscope's synthetic sources
do. Prints one line per case: "<model> <precision> <median step ms>".
Usage: pytorch_eager_step.py [cpu|cuda] [seconds per case]
"""
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from reference_models import GPT, MLP, ConvNet  # noqa: E402

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0


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
