"""Where a non-finite gradient started in backward (issue #30), for a Python loop.

On the steps it checks, the capture's global module hooks (Capture._module_pre and
_module_post) hand each module's input and output tensors that require grad to
BackwardWatch, which puts one tensor hook on each, and one on each of the module's own
parameters for that step (removed at its end). As autograd produces a tensor's
gradient, its hook reduces it on its own device to one probe (no host sync); at the
step's end the probes are tested and read in one transfer, and the origin is found by the same
rule as for the built-in engine (profiler/analysis/backward_origin.h,
locate_backward_inf): the first non-finite gradient in backward order, named by the
module whose own backward produced it (its input gradient), the parameter whose
gradient it was (a sum over the batch, where fp16 overflows first), or the module at
whose output it arrived non-finite (from the loss, or code between modules).

Which steps: those whose gradient ranges are sampled (--grad-every), every step after
one GradScaler skipped (a run of skips is caught from its second step on), and every
step after the scale grew (the overflow that follows GradScaler's probe of a larger
scale, the usual skip of a healthy run, is caught at once).
Checking costs a hook per module tensor and parameter and one reduction per gradient;
the other steps pay one attribute test per module call (docs/performance.md has the figures).

Why tensor hooks and not nn.Module full backward hooks: those route module inputs and
outputs through a BackwardHookFunction whose outputs are views, and scripts that
modify one in place (nn.ReLU(inplace=True), `out += identity` in torchvision's
ResNet) then fail. A tensor hook leaves the tensor as it is.
"""
from __future__ import annotations

import weakref

import torch

from ._recording import Quiet


# A use's side, as capture_module.cpp's backward_check reads it (name index * 3 + side).
_OUTPUT, _INPUT, _PARAMETER = 0, 1, 2


def finite_probe(grad):
    """One reduction of `grad`, inf/NaN exactly when an element of it is: a sum, accumulated
    in fp32 so that fp16's largest values cannot overflow it (only a sum of finite values
    beyond fp32's ~3.4e38 could). A quarter of what isfinite().all() costs on small tensors."""
    if grad.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return grad.sum(dtype=torch.float32)
    return grad.sum().abs().to(torch.float32)  # float64, complex: rare


def _tensors(value):
    """The tensors of a module's arguments or output: a tensor, or one level of
    tuple/list/dict (HF ModelOutput is a dict)."""
    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, (tuple, list)):
        return tuple(v for v in value if isinstance(v, torch.Tensor))
    if isinstance(value, dict):
        return tuple(v for v in value.values() if isinstance(v, torch.Tensor))
    return ()


class BackwardWatch:
    def __init__(self, core):
        self._core = core
        self._module_index = {}  # module name -> its index (the core keeps the names, sent once)
        self.armed = False
        self._reset()

    def _reset(self):
        for handle in getattr(self, "_parameter_hooks", {}).values():
            handle.remove()  # a parameter's hook is for its checked step only
        self._parameter_hooks = {}  # id(parameter) -> its hook's handle
        self._watched = {}  # id(tensor) -> (weakref, uses: [name index * 3 + side])
        self._results = []  # (uses, on-device probe), in the order autograd produced the gradients

    def _index(self, name: str) -> int:
        index = self._module_index.get(name)
        if index is None:
            index = self._module_index[name] = len(self._module_index)
            self._core.backward_module(name)
        return index

    def arm(self, armed: bool) -> None:
        """Checks the step about to begin (or not); forgets the one before."""
        self.armed = armed
        self._reset()

    def watch(self, name: str, value, is_input: bool) -> None:
        """Module `name` takes `value` as input (or gives it as output): hook its tensors."""
        if not torch.is_grad_enabled():
            return
        index = None
        for t in _tensors(value):
            if not t.requires_grad:
                continue
            if index is None:
                index = self._index(name)
            entry = self._watched.get(id(t))
            if entry is None or entry[0]() is not t:
                entry = (weakref.ref(t), [])
                self._watched[id(t)] = entry
                t.register_hook(self._hook(entry[1]))
            entry[1].append(index * 3 + (_INPUT if is_input else _OUTPUT))

    def watch_parameters(self, module, name_of) -> None:
        """Module `module` is called: a hook on each of its own parameters' gradients, for this
        step (a weight's gradient sums over the batch, and can overflow fp16 where no module's
        input or output gradient does). `name_of(module, parameter, local name)` names one."""
        if not torch.is_grad_enabled():
            return
        for local, p in module.named_parameters(recurse=False):
            if not p.requires_grad or id(p) in self._parameter_hooks:
                continue
            uses = [self._index(name_of(module, p, local)) * 3 + _PARAMETER]
            self._parameter_hooks[id(p)] = p.register_hook(self._hook(uses))

    def _hook(self, uses):
        results = self._results  # a later step's list is another one: late gradients go nowhere

        def check(grad):
            if grad is not None and not grad.is_sparse:
                with Quiet():
                    results.append((uses, finite_probe(grad), grad.dtype))
        return check

    def finish(self, step: int, skipped: bool) -> None:
        """At the step's end: its probes tested and read at once, and the check to the session."""
        results = self._results
        self._reset()
        if not self.armed or not results:
            return
        with Quiet():
            flags = [None] * len(results)
            by_device = {}
            for i, (_, flag, _) in enumerate(results):
                by_device.setdefault(flag.device, []).append(i)
            for positions in by_device.values():  # one transfer per device
                values = torch.isfinite(torch.stack([results[i][1] for i in positions])).tolist()
                for i, finite in zip(positions, values):
                    flags[i] = bool(finite)
        # Flat lists: what crosses into C++ per gradient is a few integers.
        use_counts, uses_flat = [], []
        for uses, _, _ in results:
            use_counts.append(len(uses))
            uses_flat.extend(uses)
        # The first non-finite gradient's dtype ("float16"): an fp16 one arriving at an output
        # was made by fp16 arithmetic or a cast into fp16 on the way.
        first = next((results[i][2] for i, finite in enumerate(flags) if not finite), None)
        dtype = str(first).removeprefix("torch.") if first is not None else ""
        self._core.backward_check(step, skipped, flags, use_counts, uses_flat, dtype)
