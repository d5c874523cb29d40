"""DistributedDataParallel on the CPU (gloo) with bfloat16 autocast and a GradScaler,
for torchrun:  torchrun --nproc-per-node 2 -m ampscope run --out ddp.ampscope examples/ddp_gloo.py
(or: ampscope run --nproc-per-node 2 --out ddp.ampscope examples/ddp_gloo.py; from the GUI:
ampscope-ui --script examples/ddp_gloo.py --nproc-per-node 2 -- --steps 40)
(each rank writes ddp.rank<R>.ampscope; `ampscope summary ddp.rank0.ampscope ddp.rank1.ampscope`
compares them)."""
import argparse

import torch
import torch.distributed as dist
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
loss_fn = nn.CrossEntropyLoss()
for step in range(args.steps):
    inputs, target = torch.randn(16, 32), torch.randint(0, 10, (16,))
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = loss_fn(model(inputs), target)
    scaler.scale(loss).backward()  # DDP all-reduces the (scaled) gradients during backward
    scaler.step(optimizer)
    scaler.update()
print(f"rank {rank}: final loss {loss.item():.4f}, scale {scaler.get_scale():g}")
dist.destroy_process_group()
