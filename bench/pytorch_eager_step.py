"""The architectures of bench_step_time.cpp in Python PyTorch eager, as a peer.

Same sizes, optimizer (AdamW, lr 1e-3, multi-tensor foreach=True as ampscope's
default, or fused=True with --fused), attention (--attention sdpa|math), memory
format (--channels-last), autocast dtype and loss scaler, data drawn from an
in-memory set by random indices as ampscope's synthetic sources do. Prints one line per case: "<model> <precision> <median step ms>".
With --torch-profiler, the peer of `ampscope profile`: blocks of 10 steps bare and 10 under
torch.profiler.profile(record_shapes=True) (CPU activities, and CUDA's on cuda) take turns
in one process; prints "<model> <precision> <bare ms> <profiled ms> <ratio>" (medians).
With --inference, the peer of `ampscope compare --inference`: the model in eval mode, each
batch's forward under torch.inference_mode() and the autocast, timed from the input on the
device to the output (device synchronised on CUDA); prints the median ms per batch.
Usage: pytorch_eager_step.py [cpu|cuda] [seconds per case]
       [--models gpt,convnet] [--precisions fp32,tf32,fp16,bf16]
       [--attention sdpa|math] [--fused] [--channels-last] [--inference]
       [--layers N --width N --heads N --seq-len N --batch N]  (one model's sizes,
       as `ampscope compare` takes them; scripts/compare_bench.sh passes them)
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from reference_models import GPT, MLP, ConvNet  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("device", nargs="?", default="cpu")
parser.add_argument("seconds", nargs="?", type=float, default=2.0)
parser.add_argument("--models", default="mlp,convnet,gpt")
parser.add_argument("--precisions", default="fp32,bf16,fp16")
parser.add_argument("--attention", choices=("sdpa", "math"), default="sdpa")
parser.add_argument("--fused", action="store_true")
parser.add_argument("--channels-last", action="store_true")
parser.add_argument("--inference", action="store_true")
parser.add_argument("--torch-profiler", action="store_true")
for size in ("layers", "width", "heads", "seq-len", "batch"):
    parser.add_argument("--" + size, type=int)
args = parser.parse_args()
device, seconds = args.device, args.seconds


def case(model_name):
    n = 8192
    if model_name == "mlp":
        layers, width, batch = args.layers or 4, args.width or 512, args.batch or 256
        return MLP(32, width, layers, 10), torch.randn(n, 32), torch.randint(0, 10, (n,)), batch
    if model_name == "convnet":
        layers, width, batch = args.layers or 2, args.width or 32, args.batch or 64
        return ConvNet(3, width, layers, 10), torch.randn(n, 3, 16, 16), torch.randint(0, 10, (n,)), batch
    layers, width, heads = args.layers or 2, args.width or 128, args.heads or 4
    seq_len, batch = args.seq_len or 64, args.batch or 16
    tokens = torch.randint(0, 64, (n, seq_len + 1))
    return GPT(64, width, layers, heads, seq_len, args.attention), tokens[:, :-1], tokens[:, 1:], batch


def median_step_ms(model_name, precision):
    torch.manual_seed(1)
    model, inputs, targets, batch = case(model_name)
    model.to(device).train()
    channels_last = args.channels_last and model_name == "convnet"
    if channels_last:
        model.to(memory_format=torch.channels_last)
    # Explicit: torch.optim's default on the CPU is the per-parameter loop, foreach on CUDA.
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0,
                            foreach=not args.fused, fused=args.fused or None)
    # tf32: fp32 with TF32 matmuls and convolutions, as ampscope's --tf32 sets per run.
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = torch.amp.GradScaler(device, enabled=precision == "fp16")
    gen = torch.Generator().manual_seed(2)
    times = []

    def step():
        idx = torch.randint(0, inputs.shape[0], (batch,), generator=gen)
        x, y = inputs[idx].to(device, non_blocking=True), targets[idx].to(device, non_blocking=True)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
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

    def timed_step():
        t0 = time.perf_counter()
        step()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(5):
        step()
    deadline = time.perf_counter() + seconds
    if args.torch_profiler:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        profiled = []
        while time.perf_counter() < deadline or len(profiled) < 20:
            times += [timed_step() for _ in range(10)]
            with torch.profiler.profile(activities=activities, record_shapes=True):
                step()  # the profiler's first step warms it up
                profiled += [timed_step() for _ in range(10)]
        return statistics.median(times), statistics.median(profiled)
    while time.perf_counter() < deadline or len(times) < 10:
        times.append(timed_step())
    return statistics.median(times)


def median_inference_ms(model_name, precision):
    torch.manual_seed(1)
    model, inputs, _, batch = case(model_name)
    model.to(device).eval()
    channels_last = args.channels_last and model_name == "convnet"
    if channels_last:
        model.to(memory_format=torch.channels_last)
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, as ampscope keeps it
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    gen = torch.Generator().manual_seed(2)

    def batch_ms():
        idx = torch.randint(0, inputs.shape[0], (batch,), generator=gen)
        x = inputs[idx].to(device)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.inference_mode(), torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None):
            model(x)
        if device == "cuda":
            torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(5):
        batch_ms()
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 10:
        times.append(batch_ms())
    return statistics.median(times)


for model_name in args.models.split(","):
    for precision in args.precisions.split(","):
        if args.torch_profiler:
            bare, profiled = median_step_ms(model_name, precision)
            print(f"{model_name} {precision} {bare:.4f} {profiled:.4f} {profiled / bare:.3f}", flush=True)
            continue
        ms = median_inference_ms(model_name, precision) if args.inference else median_step_ms(model_name, precision)
        print(f"{model_name} {precision} {ms:.4f}", flush=True)
