"""A gradient penalty with AMP (PyTorch's AMP examples): autograd.grad on the *scaled*
loss (so the gradients do not underflow), unscaled by hand before the penalty is
computed, then the penalised loss is scaled and backpropagated as usual."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=12)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device)
loss_fn = nn.MSELoss()

for step in range(args.steps):
    inputs, target = torch.randn(16, 16, device=device), torch.randn(16, 1, device=device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        output = model(inputs)
        loss = loss_fn(output, target)
    # Scales the loss for autograd.grad's backward pass, producing scaled_grad_params.
    scaled_grad_params = torch.autograd.grad(outputs=scaler.scale(loss), inputs=model.parameters(),
                                             create_graph=True)
    # Unscaled by hand: scaler.unscale_ only unscales .grad attributes.
    inv_scale = 1.0 / scaler.get_scale()
    grad_params = [p * inv_scale for p in scaled_grad_params]
    with torch.autocast(device_type=device, dtype=torch.float16):
        grad_norm = 0
        for grad in grad_params:
            grad_norm += grad.pow(2).sum()
        grad_norm = grad_norm.sqrt()
        loss = loss + grad_norm
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
print(f"final loss {loss.item():.4f}")
