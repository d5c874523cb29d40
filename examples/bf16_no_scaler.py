"""bfloat16 autocast without a GradScaler: bfloat16 has float32's exponent range, so
gradients do not underflow the way float16's do and no loss scaling is needed."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

for step in range(args.steps):
    inputs, target = torch.randn(16, 32, device=device), torch.randint(0, 10, (16,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        output = model(inputs)
        loss = loss_fn(output, target)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
