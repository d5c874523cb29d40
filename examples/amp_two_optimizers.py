"""Two models, two losses, two optimizers, one GradScaler (PyTorch's AMP examples).
GradScaler checks each optimizer's gradients on their own: one optimizer's step may
be skipped (an inf/NaN in its gradients) while the other's runs; the scale backs
off if any of them found one. --grad-gain1 multiplies the gradient flowing into
model1 (a tensor hook; the forward is unchanged), so its gradients overflow at
scales where model0's do not."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=16)
parser.add_argument("--init-scale", type=float, default=2.0**16)
parser.add_argument("--growth-interval", type=int, default=2000)
parser.add_argument("--grad-gain1", type=float, default=1.0)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model0 = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
model1 = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer0 = torch.optim.SGD(model0.parameters(), lr=1e-3)
optimizer1 = torch.optim.Adam(model1.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler(device, init_scale=args.init_scale, growth_interval=args.growth_interval)
loss_fn = nn.MSELoss()

for step in range(args.steps):
    inputs, target = torch.randn(16, 16, device=device), torch.randn(16, 4, device=device)
    optimizer0.zero_grad()
    optimizer1.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        output0 = model0(inputs)
        output1 = model1(inputs)
        if args.grad_gain1 != 1.0:
            output1.register_hook(lambda grad: grad * args.grad_gain1)
        loss0 = loss_fn(2 * output0 + 3 * output1, target)
        loss1 = loss_fn(3 * output0 - 5 * output1, target)
    # (retain_graph here is unrelated to amp, it's present because in this
    # example, both backward() calls share some sections of graph.)
    scaler.scale(loss0).backward(retain_graph=True)
    scaler.scale(loss1).backward()
    # You can choose which optimizers receive explicit unscaling, if you
    # want to inspect or modify the gradients of the params they own.
    scaler.unscale_(optimizer0)
    scaler.step(optimizer0)
    scaler.step(optimizer1)
    scaler.update()
print(f"final losses {loss0.item():.4f} {loss1.item():.4f}, scale {scaler.get_scale():g}")
