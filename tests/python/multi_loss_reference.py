"""Reference peer: torch.amp.GradScaler on the multi-loss pattern of PyTorch's AMP
examples (two models, two losses, two optimizers, one scaler), with one gradient
element of one model set to inf at chosen steps, as ampscope's --inject-inf does.

Usage: multi_loss_reference.py STEPS INJECT INIT GROWTH BACKOFF INTERVAL
INJECT is a comma-separated list of STEP:a|b (1-based). Prints one line per step:
"<scale used> <A stepped 0|1> <B stepped 0|1> <scale after update>".
"""
import sys

import torch

steps = int(sys.argv[1])
inject = {}
for item in filter(None, sys.argv[2].split(",")):
    step, model = item.split(":")
    inject[int(step)] = 0 if model == "a" else 1
init, growth, backoff, interval = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])

torch.manual_seed(0)
models = [torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)) for _ in range(2)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.01) for m in models]
scaler = torch.amp.GradScaler("cpu", init_scale=init, growth_factor=growth, backoff_factor=backoff,
                              growth_interval=interval)
loss_fn = torch.nn.CrossEntropyLoss()
for step in range(1, steps + 1):
    x = torch.randn(32, 8)
    y = torch.randint(0, 4, (32,))
    for opt in optimizers:
        opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.float16):
        out0, out1 = models[0](x), models[1](x)
        loss0 = loss_fn(2 * out0 + 3 * out1, y)
        loss1 = loss_fn(3 * out0 - 5 * out1, y)
    scaler.scale(loss0).backward(retain_graph=True)
    scaler.scale(loss1).backward()
    if step in inject:
        grad = next(models[inject[step]].parameters()).grad
        grad.view(-1)[0] = float("inf")
    scale_used = scaler.get_scale()
    scaler.unscale_(optimizers[0])
    before = [[p.detach().clone() for p in m.parameters()] for m in models]
    for opt in optimizers:
        scaler.step(opt)
    scaler.update()
    stepped = [int(any(not torch.equal(b, p.detach()) for b, p in zip(before[i], m.parameters())))
               for i, m in enumerate(models)]
    print(f"{scale_used!r} {stepped[0]} {stepped[1]} {scaler.get_scale()!r}")
