"""A torch.compile'd MLP trained under bfloat16 autocast. Compiled code runs fused
kernels, not the ops written here, yet autocast decided each op's precision while
dynamo and AOTAutograd traced it: `ampscope run` reads those decisions from the
compiled graphs (forward and backward) and lists graph breaks and recompilations.

--graph-break prints a statistic inside forward (a .item(): dynamo splits the graph
there); --vary-batch makes the last batch smaller, which with dynamic=False compiles
the model again for the new shape."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--backend", default="inductor")
parser.add_argument("--graph-break", action="store_true")
parser.add_argument("--vary-batch", action="store_true")
args = parser.parse_args()


class MLP(nn.Module):
    def __init__(self, graph_break: bool):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU())
        self.head = nn.Linear(64, 10)
        self.graph_break = graph_break

    def forward(self, x):
        h = self.layers(x)
        if self.graph_break:
            print(f"mean activation {h.float().mean().item():.4f}")
        return self.head(h)


device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = MLP(args.graph_break).to(device)
compiled = torch.compile(model, backend=args.backend, dynamic=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()

for step in range(args.steps):
    batch = 8 if args.vary_batch and step == args.steps - 1 else 16
    inputs, target = torch.randn(batch, 32, device=device), torch.randint(0, 10, (batch,), device=device)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device, dtype=torch.bfloat16):
        loss = loss_fn(compiled(inputs), target)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.4f}")
