"""FSDP2 (fully_shard) with a bf16 MixedPrecisionPolicy: the forward and backward compute in
bf16 without autocast, the fp32 parameters stay sharded across the ranks as the optimizer's
master weights, and gradients are reduced in fp32 (torchtitan's recipe for models too big for
DDP). On GPUs with NCCL, else on the CPU with gloo, for torchrun:
  ampscope run --nproc-per-node 2 --out fsdp.ampscope examples/fsdp2_bf16.py
(each rank writes fsdp.rank<R>.ampscope; `ampscope summary fsdp.rank0.ampscope` says how FSDP
cast the parameters, and its gradient ranges are that rank's shards)."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--width", type=int, default=64)
parser.add_argument("--layers", type=int, default=2)
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
policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for block in model[1:-1]:
    fully_shard(block, mp_policy=policy)
fully_shard(model, mp_policy=policy)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

torch.manual_seed(1 + rank)  # each rank its own batches
for step in range(args.steps):
    inputs = torch.randn(16, 32, device=device)
    target = torch.randint(0, 10, (16,), device=device)
    loss = nn.functional.cross_entropy(model(inputs).float(), target)  # the model's output is bf16
    loss.backward()  # FSDP reduce-scatters the gradients in fp32 into each rank's shard
    optimizer.step()
    optimizer.zero_grad()
print(f"rank {rank}: final loss {loss.item():.4f}")
dist.destroy_process_group()
