"""Reference peer: runs torch.amp.GradScaler on a scripted gradient pattern.

Usage: gradscaler_reference.py PATTERN INIT GROWTH BACKOFF INTERVAL
PATTERN is a comma-separated list of ok|inf|nan, one per step. Prints one line
per step: "<scale used by the step> <stepped 0|1> <scale after update>".
"""
import sys

import torch

pattern = sys.argv[1].split(",")
init, growth, backoff, interval = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
param = torch.nn.Parameter(torch.ones(4))
opt = torch.optim.SGD([param], lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=init, growth_factor=growth,
                              backoff_factor=backoff, growth_interval=interval)
for kind in pattern:
    opt.zero_grad()
    loss = (param * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum()
    if kind == "inf":
        loss = loss * float("inf")
    elif kind == "nan":
        loss = loss * float("nan")
    scale_used = scaler.get_scale()
    scaler.scale(loss).backward()
    before = param.detach().clone()
    scaler.step(opt)
    stepped = int(not torch.equal(before, param.detach()))
    scaler.update()
    print(f"{scale_used!r} {stepped} {scaler.get_scale()!r}")
