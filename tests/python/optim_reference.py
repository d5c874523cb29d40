"""Reference peer: torch.optim's SGD/Adam/AdamW with foreach=True (or fused=True) on a
scripted sequence of gradients, optionally through torch.amp.GradScaler.

Usage: optim_reference.py sgd|adam|adamw foreach|fused plain|scaler
Prints JSON: {"params": [initial values...], "shapes": [...], "steps": [{"lr", "grads"
(a list per parameter, or null for no gradient), "scale" (the loss scale the gradients
were multiplied by), "stepped", "after" (every parameter after the step)}]}.
Gradients are given unscaled; with "scaler" each is multiplied by the current scale,
then GradScaler.unscale_, step and update run, and step 3 has an inf in one gradient (the step is skipped).
Parameter 2 has no gradient in step 1 (except with fused SGD, whose momentum buffers
torch initialises for all parameters at once).
"""
import json
import math
import sys

import torch

kind, impl, mode = sys.argv[1], sys.argv[2], sys.argv[3]
torch.manual_seed(0)
shapes = [(3, 4), (5,), (2, 3, 2), (4, 1, 2, 2)]
params = [torch.nn.Parameter(torch.randn(s)) for s in shapes]
initial = [p.detach().flatten().tolist() for p in params]
flags = {"foreach": True} if impl == "foreach" else {"fused": True}
if kind == "sgd":
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01, **flags)
elif kind == "adam":
    opt = torch.optim.Adam(params, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, **flags)
else:
    opt = torch.optim.AdamW(params, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1, **flags)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_factor=2.0, backoff_factor=0.5,
                              growth_interval=2) if mode == "scaler" else None
skip_missing = kind == "sgd" and impl == "fused"
steps = []
for step in range(6):
    lr = {"sgd": 0.1, "adam": 0.01, "adamw": 0.01}[kind] * (0.5 + 0.5 * math.cos(step / 6 * math.pi))
    for group in opt.param_groups:
        group["lr"] = lr
    grads = []
    for i, p in enumerate(params):
        if i == 2 and step == 1 and not skip_missing:
            grads.append(None)
            continue
        g = torch.randn(p.shape) * (i + 1)
        if scaler is not None and step == 3 and i == 1:
            g[2] = float("inf")
        grads.append(g)
    scale = scaler.get_scale() if scaler is not None else 1.0
    for p, g in zip(params, grads):
        p.grad = None if g is None else g * scale
    before = [p.detach().clone() for p in params]
    if scaler is not None:
        scaler.scale(torch.ones(()))  # GradScaler makes its scale tensor on first use
        scaler.unscale_(opt)  # as ampscope's step does: unscale, (clip,) step, update
        scaler.step(opt)
        scaler.update()
    else:
        opt.step()
    stepped = any(not torch.equal(b, p.detach()) for b, p in zip(before, params))
    steps.append({"lr": lr, "scale": scale, "stepped": stepped,
                  # JSON has no inf: non-finite values are written as strings ("inf").
                  "grads": [None if g is None else [v if math.isfinite(v) else str(v) for v in g.flatten().tolist()]
                            for g in grads],
                  "after": [p.detach().flatten().tolist() for p in params]})
print(json.dumps({"params": initial, "shapes": shapes, "steps": steps}))
