"""Gradient clipping with AMP (PyTorch's AMP examples): unscale_ the optimizer's
gradients first, so clip_grad_norm_ sees their true values, then step and update."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--max-norm", type=float, default=1.0)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device)
loss_fn = nn.MSELoss()

for step in range(args.steps):
    inputs, target = torch.randn(16, 32, device=device), torch.randn(16, 4, device=device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = loss_fn(model(inputs), target)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # the gradients are unscaled in place
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.max_norm)
    scaler.step(optimizer)  # knows they were unscaled: does not unscale twice
    scaler.update()
print(f"final loss {loss.item():.4f}, last unclipped norm {norm.item():.4f}")
