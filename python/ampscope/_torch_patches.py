"""Class-level wrappers while a capture runs: GradScaler's methods, autocast's enter and
exit, backward and autograd.grad, gradient clipping, activation checkpointing's
recomputation. Each passes straight through where no capture runs (_running.capture);
otherwise it tells the capture what the script did and opens the phase or module scope
its ops belong to."""
from __future__ import annotations

import contextlib
import functools
import math
import threading
import warnings

import torch

from . import _ampscope_capture as _core
from . import _running
from ._class_patches import ClassPatches
from ._recording import PHASE_SCOPES as _PHASE_SCOPES, Quiet as _Quiet

_PHASE_FORWARD = _PHASE_SCOPES["forward"]
_PHASE_FORWARD_NO_GRAD = _PHASE_SCOPES["forward_no_grad"]
_PHASE_OPTIMIZER = _PHASE_SCOPES["optimizer"]
_PHASE_BACKWARD = _PHASE_SCOPES["backward"]
_PHASE_RECOMPUTE = _PHASE_SCOPES["recompute"]
# GradScaler's own ops (the loss's scaling, unscale_'s checks, update's) name it as their
# module; the optimizer's step inside GradScaler.step names none (the empty path).
_LOSS_SCALER = _core.intern_scope("ampscope.module:" + _core.LOSS_SCALER_MODULE)
_NO_MODULE = _core.intern_scope("ampscope.module:")
# Per thread: a stack of the sets of device types whose autocast the script turned off inside
# its region, and has not turned on again inside that (autocast(enabled=True) nested in it).
_autocast_off = threading.local()
_checkpointing = threading.local()  # depth: checkpoint's forward of its function, on this thread
_DTYPE_PRECISION = {torch.float16: "fp16", torch.bfloat16: "bf16"}


class _Patches:
    """Class-level wrappers (GradScaler, autocast, backward, clip_grad_norm_) while a
    capture runs; each passes straight through when none is active."""

    def __init__(self):
        self._originals = []
        self._warning_filter = None
        self._scaler = None

    def install(self):
        # torch.compile's wrapper warns that global module hooks (the capture's) fire for it as
        # well as for the model inside: the capture knows (the wrapper opens no module scope).
        if self._warning_filter is None:
            warnings.filterwarnings("ignore", message=r"Using `torch\.compile\(module\)` when there are global hooks",
                                    category=UserWarning)
            self._warning_filter = warnings.filters[0]
        if self._originals:
            return
        if self._scaler is None:
            # GradScaler's methods, and those a subclass defines instead: FSDP's ShardedGradScaler
            # has its own scale, unscale_ and update (its loss scale, skipped steps and gradient
            # samples were lost: a 12-step FSDP run read as one step).
            self._scaler = ClassPatches(torch.amp.GradScaler, {
                "scale": _wrap_scale, "unscale_": _wrap_unscale, "step": _wrap_step, "update": _wrap_update,
            }, outermost=True)
        self._scaler.install()
        autocast_cls = torch.amp.autocast_mode.autocast
        self._set(autocast_cls, "__enter__", _wrap_autocast_enter(autocast_cls.__enter__))
        self._set(autocast_cls, "__exit__", _wrap_autocast_exit(autocast_cls.__exit__))
        self._set(torch.autograd, "backward", _wrap_backward(torch.autograd.backward))
        self._set(torch.autograd, "grad", _wrap_in_phase(torch.autograd.grad, _PHASE_BACKWARD))
        self._set(torch.nn.utils, "clip_grad_norm_", _wrap_clip(torch.nn.utils.clip_grad_norm_))
        self._set(torch.nn.utils, "clip_grad_value_",
                  _wrap_in_phase(torch.nn.utils.clip_grad_value_, _PHASE_OPTIMIZER))
        # Activation checkpointing's function, run again in the backward: the recompute phase
        # from its first op, a checkpointed function's own ops outside any module included
        # (DenseNet's torch.cat; modules called in the backward open it themselves).
        import torch.utils.checkpoint as checkpoint_module
        checkpoint_cls = checkpoint_module.CheckpointFunction
        self._set(checkpoint_cls, "forward", _wrap_checkpoint_forward(checkpoint_cls.forward))
        self._set(checkpoint_module, "_checkpoint_without_reentrant_generator",
                  _wrap_checkpoint_generator(checkpoint_module._checkpoint_without_reentrant_generator))

    def _set(self, owner, name, value):
        self._originals.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    def uninstall(self):
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals = []
        if self._scaler is not None:
            self._scaler.uninstall()
        if self._warning_filter in warnings.filters:
            warnings.filters.remove(self._warning_filter)
        self._warning_filter = None


_patches = _Patches()


def _scaler_class_name(cls):
    """The scaler's class as the session names it: "torch.amp.GradScaler", a subclass's
    qualified name, and for one defined outside torch the torch class it derives from:
    "train.MyScaler (a torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler)"
    (whether it syncs its inf checks across ranks is that class's)."""
    def qualified(c):
        return "torch.amp.GradScaler" if c is torch.amp.GradScaler else f"{c.__module__}.{c.__qualname__}"
    name = qualified(cls)
    if not cls.__module__.startswith("torch."):
        base = next((c for c in cls.__mro__[1:] if c.__module__.startswith("torch.")), None)
        if base is not None:
            name += f" (a {qualified(base)})"
    return name


def _scaler_on(scaler):
    return _running.capture is not None and scaler.is_enabled()


@contextlib.contextmanager
def _scopes(*scopes):
    """Ops inside these scopes (phases, modules), closed however they end."""
    depth = _core.scope_depth()
    for scope in scopes:
        _core.enter_scope(scope)
    try:
        yield
    finally:
        _core.unwind_scopes(depth)


def _scaler_work(*phase):
    """GradScaler's own ops: its module scope (inside `phase`, if given)."""
    return _scopes(*phase, _LOSS_SCALER)


def _wrap_scale(original):
    def scale(self, outputs, *args, **kwargs):  # a subclass's may take more
        if not _scaler_on(self):
            return original(self, outputs, *args, **kwargs)
        cap = _running.capture
        # The loss's scaling is the backward's seed, in the backward phase as the built-in
        # trainer has it (it was "other" here, wherever the script scaled).
        with _scaler_work(_PHASE_BACKWARD):
            scaled = original(self, outputs, *args, **kwargs)
        cap._note_scaler(self)
        cap._scale_tensor = getattr(self, "_scale", None)  # what this step's backward is scaled by
        if isinstance(outputs, torch.Tensor):
            cap._note_scaled(scaled, outputs)
        return scaled
    return scale


def _wrap_unscale(original):
    def unscale_(self, optimizer, *args, **kwargs):
        if not _scaler_on(self):
            return original(self, optimizer, *args, **kwargs)
        cap = _running.capture
        with _scaler_work(_PHASE_OPTIMIZER):
            result = original(self, optimizer, *args, **kwargs)
        if not cap._in_scaler_step:
            cap._record(optimizer)["unscale_calls"] += 1
        cap._measure_gradients(optimizer, self)
        return result
    return unscale_


def _wrap_step(original):
    def step(self, optimizer, *args, **kwargs):
        if not _scaler_on(self):
            return original(self, optimizer, *args, **kwargs)
        cap = _running.capture
        cap._note_scaler(self)
        cap._record(optimizer)
        cap._in_scaler_step += 1
        try:
            with _scaler_work(_PHASE_OPTIMIZER):
                result = original(self, optimizer, *args, **kwargs)
        finally:
            cap._in_scaler_step -= 1
        cap._on_scaler_step(self, optimizer)
        return result
    return step


def _wrap_update(original):
    def update(self, new_scale=None, *args, **kwargs):
        if not _scaler_on(self):
            return original(self, new_scale, *args, **kwargs)
        cap = _running.capture
        scale, tracker = self._scale, self._growth_tracker
        before = None
        if isinstance(scale, torch.Tensor) and isinstance(tracker, torch.Tensor):
            # update() changes the scale and the tracker in place, and adds every optimizer's
            # found-inf flags into the first one's: a copy on the device, read with the step's
            # values; each optimizer's flags are then its part of the copy.
            flagged = [r for r in cap._records.values() if isinstance(r["found_inf"], list)]
            before = cap._core.copy_scaler_state(scale, tracker, [r["found_inf"] for r in flagged])
            with _Quiet():  # views, no op of the script's
                for k, r in enumerate(flagged):
                    r["found_inf"] = [before[2 + k]]
        with _scaler_work(_PHASE_OPTIMIZER):
            result = original(self, new_scale, *args, **kwargs)
        cap._on_scaler_update(self, before)
        return result
    return update


def _forward_phase():
    """The phase a forward pass opens: without autograd (validation under no_grad or
    inference_mode, a frozen teacher) it is a phase of its own, so its calls are not
    counted as the training forward's."""
    return _PHASE_FORWARD if _training_forward() else _PHASE_FORWARD_NO_GRAD


def _training_forward():
    """A forward with autograd on, or checkpoint(use_reentrant=True)'s, which runs the
    training forward under no_grad (and again with autograd in the backward)."""
    return torch.is_grad_enabled() or getattr(_checkpointing, "depth", 0) > 0


def _wrap_autocast_enter(original):
    def __enter__(self):
        cap = _running.capture
        # Entered as the script asked: enabled, unless --precision turned its AMP off (below).
        script_enabled = self.__dict__.get("_ampscope_script_enabled", getattr(self, "_enabled", True))
        if cap is not None and script_enabled and not torch.compiler.is_compiling():
            if _core.scope_depth() == 0 and not _in_backward():
                cap._stop_at_max_steps()  # the script's region of the step after the last one
            if cap._precision_override:
                cap._override_precision(self)
        # The script turning autocast off inside its region (autocast(enabled=False) around a
        # sensitive part, custom_fwd(cast_inputs=...)): the ops autocast would have decided run
        # in the precision the script gives them, "autocast_off" rather than "unchanged".
        # Turned on again inside such a region, autocast decides there as anywhere else.
        stack = _autocast_off.__dict__.setdefault("stack", [frozenset()])
        changed = None
        if cap is not None and not torch.compiler.is_compiling():
            enabled = getattr(self, "_enabled", True)
            if not enabled and torch.is_autocast_enabled(self.device):
                changed = stack[-1] | {self.device}
            elif enabled and self.device in stack[-1]:
                changed = stack[-1] - {self.device}
            elif (not enabled and not script_enabled and len(cap._stack()) <= 1 and not _in_backward()
                  and self.device not in cap._autocast_disabled):
                # AMP's region switched off (autocast(enabled=args.amp), the flag off): entered by
                # the script or in the model's own call (a forward decorated with it), not inside
                # a layer (Llama's rotary angles guard theirs).
                cap._autocast_disabled.append(self.device)
                cap._core.set_meta("autocast_disabled", ",".join(cap._autocast_disabled))
        result = original(self)
        if changed is not None:
            stack.append(changed)
            _core.set_autocast_turned_off(sorted(changed))
        self.__dict__.setdefault("_ampscope_off", []).append(changed is not None)  # a list, as _ampscope_forward
        # A region entered by the script itself (no module, phase or scaler scope open) is the
        # forward pass, the loss computed on the model's output included, as AMP's documentation
        # has autocast wrap it: its ops outside any module (`F.cross_entropy(model(x), y)`) were
        # "other", like the batch's set-up. Its forward scope is the thread's first, closed on exit.
        opened = False
        if cap is not None and script_enabled and not torch.compiler.is_compiling():
            cap._first_step_begins()
            entered = getattr(self, "_enabled", False)  # as run: --precision fp32 turned it off
            precision = _DTYPE_PRECISION.get(getattr(self, "fast_dtype", None)) if entered else None
            if precision and precision not in cap._autocast:
                cap._autocast.append(precision)
                cap._core.set_meta("precision", cap._precision())
            # Not inside the backward: custom_bwd's region, checkpoint's around its recomputation
            # (on CUDA's autograd thread, where no scope of ours is open).
            if _core.scope_depth() == 0 and not _in_backward():
                opened = True
                _core.enter_scope(_forward_phase())
                cap._tls.forward_regions = getattr(cap._tls, "forward_regions", 0) + 1
        # A list: one autocast object may be entered again while entered (a decorated function's recursion).
        self.__dict__.setdefault("_ampscope_forward", []).append(opened)
        return result
    return __enter__


def _wrap_autocast_exit(original):
    def __exit__(self, *exc):
        off = self.__dict__.get("_ampscope_off")
        stack = getattr(_autocast_off, "stack", None)
        if off and off.pop() and stack and len(stack) > 1:
            stack.pop()
            _core.set_autocast_turned_off(sorted(stack[-1]))
        opened = self.__dict__.get("_ampscope_forward")
        if opened and opened.pop():
            _core.unwind_scopes(0)
            if _running.capture is not None and getattr(_running.capture._tls, "forward_regions", 0) > 0:
                _running.capture._tls.forward_regions -= 1
        return original(self, *exc)
    return __exit__


def _wrap_backward(original):
    def backward(tensors, *args, **kwargs):
        if _running.capture is None:
            return original(tensors, *args, **kwargs)
        _running.capture._note_backward(tensors)
        # The backward pass, also where the script calls it inside its autocast region: the
        # seed gradient and the engine's work on this thread outside autograd's nodes.
        with _scopes(_PHASE_BACKWARD):
            return original(tensors, *args, **kwargs)
    return backward


def _in_backward():
    """Whether autograd's engine is running a backward on this thread (CUDA's run on its own)."""
    return torch._C._current_graph_task_id() != -1


def _recomputed(function):
    """`function` as checkpoint runs it: its run inside the backward is the recompute phase,
    in the module that called checkpoint (its own ops' module in the forward, where a
    backward node's would be taken otherwise)."""
    module_scope = _running.capture._module_scope() if _running.capture is not None else None

    def run(*args, **kwargs):
        if _running.capture is None:
            return function(*args, **kwargs)
        if _in_backward():
            with _scopes(_PHASE_RECOMPUTE, *((module_scope,) if module_scope is not None else ())):
                return function(*args, **kwargs)
        # The training forward, which use_reentrant=True runs under no_grad.
        _checkpointing.depth = getattr(_checkpointing, "depth", 0) + 1
        try:
            return function(*args, **kwargs)
        finally:
            _checkpointing.depth -= 1
    return run


def _wrap_checkpoint_forward(original):
    """use_reentrant=True: CheckpointFunction keeps the function its backward runs again."""
    def forward(ctx, run_function, preserve_rng_state, *args):
        return original(ctx, _recomputed(run_function), preserve_rng_state, *args)
    return staticmethod(forward)


def _wrap_checkpoint_generator(original):
    """use_reentrant=False: the generator keeps the function its saved-tensor hook runs again."""
    def generator(fn, *args, **kwargs):
        return original(_recomputed(fn), *args, **kwargs)
    return generator


def _wrap_in_phase(original, phase):
    """`original` run in `phase` while a capture runs. torch.autograd.grad (a gradient
    penalty's gradients, a double backward) is a backward pass as backward() is, and
    clip_grad_value_ clips as clip_grad_norm_ does, in the optimizer's phase: their ops
    were "other"."""
    @functools.wraps(original)
    def in_phase(*args, **kwargs):
        if _running.capture is None or torch.compiler.is_compiling():
            return original(*args, **kwargs)
        with _scopes(phase):
            return original(*args, **kwargs)
    return in_phase


def _scale_before_unscale(cap):
    """The loss scale the gradients clip_grad_norm_ is about to see are multiplied by, or
    None: where a GradScaler scaled this step's loss and no unscale_ has run since (PyTorch's
    AMP examples call scaler.unscale_(optimizer) first)."""
    scaler = cap._scaler_ref() if cap._scaler_ref is not None else None
    if (scaler is None or not scaler.is_enabled() or cap._scale_tensor is None or cap._in_scaler_step
            or any(r["unscale_calls"] for r in cap._records.values())):
        return None
    return cap._scale_tensor


def _note_clip_before_unscale(cap, max_norm):
    """A step in which the script clipped scaled gradients: counted once, the first kept
    with its max_norm (the session's meta, for the report's warning)."""
    if cap._clipped_scaled:
        return
    cap._clipped_scaled = True
    if cap._clip_before_unscale is None:
        number = isinstance(max_norm, (int, float)) and not isinstance(max_norm, bool)
        cap._clip_before_unscale = {"steps": 0, "first_step": cap._core.step,
                                    "max_norm": float(max_norm) if number and math.isfinite(max_norm) else None}
    cap._clip_before_unscale["steps"] += 1


def _wrap_clip(original):
    def clip_grad_norm_(*args, **kwargs):
        cap = _running.capture
        if cap is None:
            return original(*args, **kwargs)
        # Before scaler.unscale_ the gradients are still multiplied by the loss scale: max_norm
        # applies to the scaled norm, and the norm returned is the scaled one.
        scale = _scale_before_unscale(cap)
        # Clipping is the optimizer's phase, between unscale_ and step, as the built-in trainer
        # has it: its norms and the gradients' scaling read "other".
        with _scopes(_PHASE_OPTIMIZER):
            total = original(*args, **kwargs)
        if cap._grad_norm_source is None:
            cap._grad_norm_source = "clip_grad_norm_"
            cap._core.set_meta("grad_norm_source", "clip_grad_norm_")
        with _Quiet():
            norm = total.detach() if isinstance(total, torch.Tensor) else total
            if scale is not None:
                _note_clip_before_unscale(cap, args[1] if len(args) > 1 else kwargs.get("max_norm"))
                # The gradients' own norm: the scaled one over the scale (on the device: no wait).
                norm = norm / (scale.to(norm.device) if isinstance(norm, torch.Tensor) else scale)
            cap._grad_norm = norm
        return total
    return clip_grad_norm_
