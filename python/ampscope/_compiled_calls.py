"""Calls of functions torch.compile returned, made at the top level of the script's loop.

A compiled *module* is a module: the capture's module hooks see its call, which begins
a step and opens the forward phase as any model call does. A compiled *function* is no
module, and the model it calls is inlined in its graph, so no hook fires:
`@torch.compile def forward_loss(x, y): return loss_fn(model(x), y)`, a compiled train
step, a compiled optimizer step (`@torch.compile def opt_step(): opt.step()`, PyTorch's
recipe). Without a GradScaler a step ends where the next one begins (its model call,
its autocast region), so a loop whose forward ran only in such a function was one step,
all its losses summed, and its compiled region's time was in the phase "other".

While a capture runs, torch.compile hands back such a function wrapped (_compiled.py):
a call at the top level (no model call, autocast region or backward open) ends the
step before it where one ended (an optimizer stepped) and begins the next, as a model
call does. Its phase is the one phase its graphs ran in at its last call with autograd
in the same mode: the forward for a forward-and-loss function, the optimizer's for a
compiled optimizer step (its graph is compiled inside optimizer.step()). Whether a call
runs the forward is known only once it ran, so its first call (mostly compiling, which
is in no phase) stays "other", as does a call that ran graphs of several phases (a
whole compiled train step: its forward, backward and optimizer graphs under one region).
"""
from __future__ import annotations

import functools
import threading

import torch

from . import _ampscope_capture as _core
from ._recording import PHASE_SCOPES


def _all_pytorch_code(module) -> bool:
    """Whether `module.compile()` compiles nothing of `module`: it compiles the module's
    _call_impl, which dynamo skips as PyTorch's own code, as any frame of a torch file, and
    compiles from the first frame of code outside PyTorch the call reaches. A module whose
    forward and whose submodules' forwards are all PyTorch's (nn.Linear, nn.Sequential of
    them, nn.TransformerEncoderLayer, nn.MultiheadAttention) reaches none, and runs eagerly.
    (torch.compile(module) wraps such a module's call in a frame of its own: it compiles.)"""
    try:
        from torch._dynamo import config, trace_rules
        if getattr(config, "wrap_top_frame", False):  # dynamo then wraps the top frame as for a wrapper
            return False
        return all(trace_rules.check(sub.forward) for sub in module.modules())
    except Exception:  # a dynamo without these: no claim
        return False


class CompiledCalls:
    """The top-level calls of compiled functions for one capture."""

    def __init__(self, capture):
        self._capture = capture
        self._tls = threading.local()  # .seen: phases run inside the call under way (None: none)

    def wrap(self, compiled, owner=None):
        """`compiled` (a function torch.compile returned) as the script gets it. Its attributes
        (dynamo's _torchdynamo_orig_callable, _torchdynamo_inline) are copied, so dynamo
        inlines the function where compiled code calls it, and never traces this wrapper.
        `owner`: the module compiled in place (`block.compile()` compiles its _call_impl): its
        calls are module calls (their hooks run, CompiledGraphs.install_hooks), not top-level
        calls of a compiled function; the first says whether dynamo compiled anything in it."""
        calls = self
        phases = {}  # torch.is_grad_enabled() -> the one phase its last such call ran in, or None
        judged = []  # an owner's first call under the capture was judged (compiled anything or not)

        @functools.wraps(compiled)
        def call(*args, **kwargs):
            # The wrapper outlives its capture (a function compiled in one capture, called after it).
            if not calls._capture.running:
                return compiled(*args, **kwargs)
            if owner is not None:  # a module compiled in place: its hooks run as an eager module's
                if judged:
                    return compiled(*args, **kwargs)
                judged.append(True)
                return calls._first_module_call(owner, compiled, args, kwargs)
            if calls.in_call() or not calls._capture._top_level():
                return compiled(*args, **kwargs)
            return calls._call(compiled, phases, args, kwargs)
        return call

    def _first_module_call(self, owner, compiled, args, kwargs):
        """The first call of a module compiled in place: where dynamo compiled nothing in it
        (no compile began, no graph ran) and the module's code is all PyTorch's, it ran
        eagerly, and the session says so (CompiledGraphs.ran_eagerly)."""
        graphs = self._capture._compiled
        before = graphs.activity
        output = compiled(*args, **kwargs)
        if graphs.activity == before and _all_pytorch_code(owner):
            graphs.ran_eagerly(self._capture._module_path(id(owner)) or type(owner).__name__,
                               type(owner).__name__)
        return output

    def in_call(self) -> bool:
        """A top-level call of a compiled function is under way on this thread."""
        return getattr(self._tls, "seen", None) is not None

    def note_phase(self, phase: str) -> None:
        """A compiled graph ran, a backward began or an optimizer stepped, in `phase`."""
        seen = getattr(self._tls, "seen", None)
        if seen is not None:
            seen.add(phase)

    def _call(self, compiled, phases, args, kwargs):
        grad = torch.is_grad_enabled()
        phase = phases.get(grad)
        self._capture._compiled_call_begins(id(phases), args, runs_forward=phase == "forward")
        self._tls.seen = set()
        depth = _core.scope_depth()
        if phase is not None:
            _core.enter_scope(PHASE_SCOPES[phase])
        try:
            return compiled(*args, **kwargs)
        finally:
            # Not exit_scope(): a step that ends inside the call (GradScaler.update() in a
            # compiled train step) has unwound the scopes already.
            _core.unwind_scopes(depth)
            seen, self._tls.seen = self._tls.seen, None
            if "optimizer" in seen:
                # The graph of the code around optimizer.step() (dynamo breaks the graph at the
                # step's hooks) runs without autograd too: the optimizer step's, no validation.
                seen.discard("forward_no_grad")
            if seen:
                phases[grad] = next(iter(seen)) if len(seen) == 1 else None
