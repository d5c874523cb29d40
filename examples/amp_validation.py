"""Training with float16 autocast and GradScaler, and validation under autocast too:
once with torch.no_grad() and once with torch.inference_mode() (no backward, no
optimizer: autocast still decides the forward ops' precision)."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--validate-every", type=int, default=4)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler(device)
loss_fn = nn.CrossEntropyLoss()
val_inputs, val_target = torch.randn(64, 32, device=device), torch.randint(0, 10, (64,), device=device)


def validate(mode):
    model.eval()
    with mode():
        with torch.autocast(device_type=device, dtype=torch.float16):
            val_loss = loss_fn(model(val_inputs), val_target)
    model.train()
    return val_loss.item()


for step in range(args.steps):
    inputs, target = torch.randn(16, 32, device=device), torch.randint(0, 10, (16,), device=device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = loss_fn(model(inputs), target)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    if (step + 1) % args.validate_every == 0:
        print(f"step {step + 1}: validation loss {validate(torch.no_grad):.4f} (no_grad), "
              f"{validate(torch.inference_mode):.4f} (inference_mode)")
