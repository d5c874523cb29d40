"""lr_scheduler.step() under capture (issue #30): each call, with the optimizer step
it followed and whether GradScaler skipped that step.

Under a GradScaler, a step whose gradients hold inf/NaN skips optimizer.step(); a
scheduler stepped unconditionally advances anyway and its schedule runs ahead of the
optimizer's real updates (accelerate#4242, Lightning#18828). PyTorch warns only when
it happens before the first optimizer step. The session's `scheduler_steps` table
holds every call; profiler/analysis/scheduler_drift.h reads it for the views.

Where calls come from: LRScheduler.step, which every scheduler inherits unless it
defines its own (the legacy _LRScheduler alias is a subclass), and the step of each
subclass that does: ReduceLROnPlateau, SequentialLR, ChainedScheduler,
CosineAnnealingWarmRestarts in torch 2.11, any defined before the capture started,
and any defined while it runs (through __init_subclass__). A call made inside another
(SequentialLR stepping its current scheduler) counts once, as the outer scheduler's;
the step a constructor makes (_initial_step) is not a call.
"""
from __future__ import annotations

import functools
import threading
import weakref

from torch.optim import lr_scheduler as _lr

from ._class_patches import ClassPatches
from ._recording import Quiet, scalar


class SchedulerCalls:
    """One capture's scheduler calls. `capture` numbers the optimizers
    (Capture._optimizer_entry) and holds the core the rows go to."""

    def __init__(self, capture):
        self._capture = capture
        self._schedulers = {}  # id(scheduler) -> (weakref, index, class name)
        self._decided = {}     # id(optimizer) -> (weakref, step): the step it last stepped (or skipped) in
        self._calls = 0

    def optimizer_decided(self, optimizer, step: int) -> None:
        """The optimizer stepped, or GradScaler decided whether it steps, in `step`. Whether
        GradScaler skipped it the core reads from the device, and fills in the call's row
        (profiler/capture/deferred_step_values.h)."""
        self._decided[id(optimizer)] = (weakref.ref(optimizer), step)

    def on_call(self, scheduler) -> None:
        optimizer = getattr(scheduler, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "param_groups"):
            return  # not a scheduler of an optimizer: nothing to compare with
        entry = self._schedulers.get(id(scheduler))
        if entry is None or entry[0]() is not scheduler:
            entry = (weakref.ref(scheduler), len(self._schedulers), type(scheduler).__name__)
            self._schedulers[id(scheduler)] = entry
        _, optimizer_index, _ = self._capture._optimizer_entry(optimizer)
        decided = self._decided.get(id(optimizer))
        step = decided[1] if decided and decided[0]() is optimizer else 0
        with Quiet():
            lr = scalar(optimizer.param_groups[0].get("lr", float("nan"))) if optimizer.param_groups else float("nan")
        row = dict(call=self._calls, scheduler=entry[1], name=entry[2], optimizer=optimizer_index, step=step, lr=lr)
        self._calls += 1
        self._capture._core.scheduler_steps([row])


_on_call = None            # the active capture's SchedulerCalls.on_call; None: pass through
_depth = threading.local()  # scheduler steps running on this thread (nested ones are not calls)


def _is_constructor_step(scheduler) -> bool:
    # torch 2.11 marks the constructor's step with _is_initial (_initial_mode); its
    # _step_count is 0 until the first step of any kind has run.
    return bool(getattr(scheduler, "_is_initial", False)) or getattr(scheduler, "_step_count", 1) == 0


def _wrap(original):
    @functools.wraps(original)
    def step(self, *args, **kwargs):
        on_call = _on_call
        if on_call is None or _is_constructor_step(self):
            return original(self, *args, **kwargs)
        depth = getattr(_depth, "n", 0)
        _depth.n = depth + 1
        try:
            result = original(self, *args, **kwargs)
        finally:
            _depth.n = depth
        if depth == 0:  # recorded after the call: the new learning rate is set
            on_call(self)
        return result
    return step


_plateau = getattr(_lr, "ReduceLROnPlateau", None)  # not an LRScheduler in older torch
_patches = ClassPatches(_lr.LRScheduler, {"step": _wrap}, extra=(_plateau,) if _plateau is not None else ())


def install(on_call) -> None:
    """Wraps the scheduler classes' step; `on_call(scheduler)` sees each call."""
    global _on_call
    _on_call = on_call
    _patches.install()


def uninstall() -> None:
    global _on_call
    _on_call = None
    _patches.uninstall()
