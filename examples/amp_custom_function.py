"""A custom autograd.Function under autocast (PyTorch's AMP examples):
custom_fwd(cast_inputs=torch.float32) runs its forward in float32 whatever autocast
would do (its float16 inputs are cast to float32 and autocast is off inside), and
custom_bwd runs the backward with the forward's autocast state. --compile [BACKEND] runs the
model under torch.compile (dynamo traces the Function into the graph)."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
parser.add_argument("--compile", nargs="?", const="inductor", metavar="BACKEND", help="torch.compile the model")
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)


class Float32MM(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type=device, cast_inputs=torch.float32)
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a.mm(b)

    @staticmethod
    @torch.amp.custom_bwd(device_type=device)
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad.mm(b.t()), a.t().mm(grad)


class Float32Projection(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_in, d_out) / d_in**0.5)

    def forward(self, x):
        return Float32MM.apply(x, self.weight)


model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), Float32Projection(64, 8)).to(device)
forward = torch.compile(model, backend=args.compile) if args.compile else model
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler(device)
loss_fn = nn.CrossEntropyLoss()

for step in range(args.steps):
    inputs, target = torch.randn(16, 32, device=device), torch.randint(0, 8, (16,), device=device)
    optimizer.zero_grad()
    with torch.autocast(device_type=device, dtype=torch.float16):
        output = forward(inputs)
        assert output.dtype == torch.float32  # the custom function ran in float32
        loss = loss_fn(output, target)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
print(f"final loss {loss.item():.4f}")
