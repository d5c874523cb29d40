"""FSDP2 (fully_shard) with an fp16 MixedPrecisionPolicy and FSDP's ShardedGradScaler, for GPUs
without bf16 (V100, T4): the forward and backward compute in fp16 from the sharded fp32
parameters, with no autocast, and the loss is scaled so that small fp16 gradients survive.
Each rank holds only its shard of every gradient, so ShardedGradScaler all-reduces its inf/NaN
check: every rank skips the same steps and keeps the same scale (torch.amp.GradScaler checks
each rank's shard alone: try --scaler plain, and `ampscope summary` of the ranks' files).
On GPUs with NCCL, else on the CPU with gloo, for torchrun:
  ampscope run --nproc-per-node 2 --out fsdp16.ampscope examples/fsdp2_fp16.py
(each rank writes fsdp16.rank<R>.ampscope). A high --init-scale makes the first steps overflow.
"""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--width", type=int, default=64)
parser.add_argument("--layers", type=int, default=2)
parser.add_argument("--init-scale", type=float, default=2.0**16)
parser.add_argument("--growth-interval", type=int, default=2000)
parser.add_argument("--scaler", choices=["sharded", "plain"], default="sharded")
args = parser.parse_args()

cuda = torch.cuda.is_available()
dist.init_process_group("nccl" if cuda else "gloo")
rank = dist.get_rank()
device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(device)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


torch.manual_seed(0)  # one model on every rank: fully_shard keeps each rank's shard of it
model = nn.Sequential(nn.Linear(32, args.width), *[Block(args.width) for _ in range(args.layers)],
                      nn.Linear(args.width, 10)).to(device)
policy = MixedPrecisionPolicy(param_dtype=torch.float16, reduce_dtype=torch.float32)
for block in model[1:-1]:
    fully_shard(block, mp_policy=policy)
fully_shard(model, mp_policy=policy)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler_cls = ShardedGradScaler if args.scaler == "sharded" else torch.amp.GradScaler
scaler = scaler_cls(device.type, init_scale=args.init_scale, growth_interval=args.growth_interval)

torch.manual_seed(1 + rank)  # each rank its own batches
for step in range(args.steps):
    inputs = torch.randn(16, 32, device=device)
    target = torch.randint(0, 10, (16,), device=device)
    loss = nn.functional.cross_entropy(model(inputs).float(), target)  # the model's output is fp16
    scaler.scale(loss).backward()  # FSDP reduce-scatters the gradients in fp32 into each rank's shard
    scaler.step(optimizer)  # unscale_ checks for inf/NaN (all ranks, with ShardedGradScaler); skips if found
    scaler.update()
    optimizer.zero_grad()
print(f"rank {rank}: final loss {loss.item():.4f}, scale {scaler.get_scale():g}")
dist.destroy_process_group()
