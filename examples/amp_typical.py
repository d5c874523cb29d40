"""The typical mixed-precision loop (PyTorch's AMP examples): forward and loss under
torch.autocast(float16), scaler.scale(loss).backward(), scaler.step(), scaler.update().

Runs on the CPU too: autocast float16 on the CPU works in torch >= 2.3 (slowly; on
CUDA it is the usual choice). Capture it with:
    ampscope run --out typical.ampscope examples/amp_typical.py
A high --init-scale makes the first steps overflow, so the scale backs off (and
grows again every --growth-interval clean steps): the loss-scale history to look at.
"""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--init-scale", type=float, default=2.0**16)
parser.add_argument("--growth-interval", type=int, default=2000)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        # fc runs in float16 (demoted); x + float16 is promoted to float32; layer_norm stays float32.
        return self.norm(x + torch.relu(self.fc(x)))


class Net(nn.Module):
    def __init__(self, d_in=64, width=64, d_out=8, layers=3):
        super().__init__()
        self.embed = nn.Linear(d_in, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(layers))
        self.head = nn.Linear(width, d_out)

    def forward(self, x):
        x = self.embed(x).float()
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Net().to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device, init_scale=args.init_scale, growth_interval=args.growth_interval)
data = [(torch.randn(32, 64, device=device), torch.randint(0, 8, (32,), device=device)) for _ in range(4)]

for step in range(args.steps):
    inputs, target = data[step % len(data)]
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        output = model(inputs)
        loss = loss_fn(output, target)  # cross_entropy runs in float32 (kept fp32)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
print(f"final loss {loss.item():.4f}, scale {scaler.get_scale():g}")
