"""Gradient accumulation with AMP (PyTorch's AMP examples): each micro-batch's loss
is divided by the number of micro-batches; scaler.step and scaler.update run once
per effective batch, so the scale is the same for all its micro-batches."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=8, help="optimizer steps")
parser.add_argument("--accumulate", type=int, default=4, help="micro-batches per optimizer step")
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device)
loss_fn = nn.CrossEntropyLoss()

for i in range(args.steps * args.accumulate):
    inputs, target = torch.randn(8, 32, device=device), torch.randint(0, 10, (8,), device=device)
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = loss_fn(model(inputs), target) / args.accumulate
    scaler.scale(loss).backward()
    if (i + 1) % args.accumulate == 0:
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
print(f"final micro-batch loss {loss.item():.4f}")
