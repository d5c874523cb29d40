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


class CompiledCalls:
    """The top-level calls of compiled functions for one capture."""

    def __init__(self, capture):
        self._capture = capture
        self._tls = threading.local()  # .seen: phases run inside the call under way (None: none)

    def wrap(self, compiled, owner=None):
        """`compiled` (a function torch.compile returned) as the script gets it. Its attributes
        (dynamo's _torchdynamo_orig_callable, _torchdynamo_inline) are copied, so dynamo
        inlines the function where compiled code calls it, and never traces this wrapper.
        `owner`: the module whose method was compiled (`block.compile()` compiles its
        _call_impl): a call inside a model's runs in that module's scope, as its hook would open."""
        calls = self
        phases = {}  # torch.is_grad_enabled() -> the one phase its last such call ran in, or None

        @functools.wraps(compiled)
        def call(*args, **kwargs):
            # The wrapper outlives its capture (a function compiled in one capture, called after it).
            if not calls._capture.running:
                return compiled(*args, **kwargs)
            if calls.in_call() or not calls._capture._top_level():
                token = calls._capture._enter_compiled_module(owner) if owner is not None else None
                try:
                    return compiled(*args, **kwargs)
                finally:
                    if token is not None:
                        calls._capture._exit_compiled_module(token)
            return calls._call(compiled, phases, args, kwargs)
        return call

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
