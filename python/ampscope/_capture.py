"""The capture of a Python training loop: PyTorch's global hooks find what the
built-in engine knows by construction (step boundaries, the GradScaler's
decisions, module paths, the loss) and hand it to the C++ capture core, which
records ops, kernels and gradient ranges exactly as for `ampscope profile`.

Where things come from:
- ops (forward, backward on autograd's threads, optimizer): the core's global
  RecordFunction callback, for sampled steps only;
- module paths: global module forward pre/post hooks open a scope named
  "ampscope.module:<path>" around each module call; the outermost call of a
  model also opens the forward phase;
- step boundaries: ampscope.step() when the script calls it; otherwise
  GradScaler.update(), or, without a scaler, the first module call after an
  optimizer step (so several optimizers stepping one after another make one step);
- per optimizer: GradScaler.step/unscale_ (found_inf, skipped), the global
  optimizer step hooks (stepped, lr);
- the loss: what the script backpropagates (torch.autograd.backward), unscaled
  when it came from scaler.scale(); a step's loss is the sum of its backward
  calls (accumulated micro-batches, several losses), i.e. the objective whose
  gradient the optimizer used;
- unscaled gradients: after each unscale_ (GradScaler), else at the optimizer's
  step, on the steps --grad-every selects;
- precision readiness, on the first of those steps and one in readiness_every after
  it (the core decides: wants_readiness()): each Linear and ConvNd module's input
  and weight, from the forward pre-hook (MultiheadAttention's projections from its
  F.linear calls: _projections.py), then their weight gradients with the
  unscaled gradients (the core simulates the low-precision formats on them);
- torch.compile'd code: the ops of its AOTAutograd graphs, graph breaks and
  recompilations (_compiled.py; the module hooks stay out of compiled code);
- lr_scheduler.step() calls against the optimizer steps GradScaler skipped
  (_schedulers.py), and where a non-finite gradient started in backward on the
  steps checked (_backward_origin.py, fed by the module hooks).

This file keeps the capture's lifetime and its steps; the module hooks are in
_module_hooks.py (a mixin of Capture), the wrappers of torch's classes and functions
(GradScaler, autocast, backward, clipping, checkpointing) in _torch_patches.py, what
is read off the script's models in _models.py, and the capture running now in _running.py.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import sys
import threading
import time
import weakref

import torch

from . import _ampscope_capture as _core
from . import _running
from ._backward_origin import BackwardWatch
from ._compiled import CompiledGraphs
from ._compiled_calls import CompiledCalls
from ._models import _leading_batch, _watched
from ._module_hooks import ModuleHooks
from ._projections import FunctionalProjections
from ._recording import OwnWait as _OwnWait, Quiet as _Quiet, scalar as _scalar
from . import _schedulers
from . import _sharding
from ._scaler_state import ScalerState
from ._torch_patches import (_DTYPE_PRECISION, _NO_MODULE, _PHASE_OPTIMIZER, _forward_phase, _in_backward, _patches,
                             _scaler_class_name)

__all__ = ["Capture", "CaptureError", "capture", "step", "watch"]


class CaptureError(RuntimeError):
    """A capture that cannot start or is misused; the message is one line."""















def rank_path(path: str) -> str:
    """Under torchrun (WORLD_SIZE > 1) each rank writes FILE.rank<R>.ampscope."""
    world = int(os.environ.get("WORLD_SIZE", "1") or "1")
    if world <= 1:
        return path
    base, ext = os.path.splitext(path)
    return f"{base}.rank{int(os.environ.get('RANK', '0') or '0')}{ext or '.ampscope'}"


def watch(model: torch.nn.Module, name: str = "") -> torch.nn.Module:
    """Names a model for module paths: its submodules' ops carry "<name>.blocks.3.attn"
    ("blocks.3.attn" with the default ""). Models not watched are found by themselves
    when first called: the first gets no prefix, later ones the script's variable name
    for them (or their class name)."""
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"ampscope.watch takes a torch.nn.Module, not {type(model).__name__}")
    _watched[model] = name
    if _running.capture is not None:
        _running.capture._add_root(model, name, explicit=True)
    return model


def step(loss=None) -> None:
    """Ends the current step (for loops whose optimizer steps ampscope cannot see, or
    to give the loss); from then on only these calls end steps."""
    if _running.capture is None:
        raise CaptureError("ampscope.step() was called outside ampscope.capture()")
    _running.capture._explicit_step(loss)


def capture(path: str = "run.ampscope", **options) -> "Capture":
    """`with ampscope.capture("run.ampscope", window_start=1, window_steps=0, every=1,
    grad_every=10, sample_budget=5, readiness_every=5, trace_gpu=True, overwrite=False,
    precision=None, max_steps=0):` records the training inside. precision ("fp32", "tf32",
    "fp16", "bf16") runs the script's AMP regions in it instead of theirs; max_steps > 0 stops
    the script (MaxStepsReached, a SystemExit with status 0) as step max_steps + 1 begins."""
    return Capture(path, **options)












# The sampling options (window_start, window_steps, every, grad_every): defaults, bounds
# and help declared once in C++ (profiler/capture_option_specs.h).
_SAMPLING = {key: (default, least) for key, _flag, default, least, _help in _core.CAPTURE_OPTIONS}


# --precision: the script's AMP regions run in this precision instead of the one they ask
# for ("fp32" and "tf32" turn them off; TF32 is CUDA's fp32 matmul mode, off for "fp32").
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
_PRECISION_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16}


_OTHER_OPTIONS = ("trace_gpu", "overwrite", "description", "precision", "max_steps")


class MaxStepsReached(SystemExit):
    """Raised as step max_steps + 1 would begin: the script stops there, exit status 0."""


class Capture(ModuleHooks):
    def __init__(self, path="run.ampscope", *, trace_gpu=True, overwrite=False, description=None,
                 precision=None, max_steps=0, **sampling):
        unknown = sorted(set(sampling) - set(_SAMPLING))
        if unknown:
            raise CaptureError(f"ampscope.capture: unknown option {unknown[0]!r} (options: "
                               f"{', '.join(list(_SAMPLING) + list(_OTHER_OPTIONS))})")
        if precision not in (None, *PRECISIONS):
            raise CaptureError(f"ampscope.capture: precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 0:
            raise CaptureError(f"ampscope.capture: max_steps must be an integer >= 0, not {max_steps!r}")
        self._precision_override = precision
        self._max_steps = max_steps
        values = {key: sampling.get(key, default) for key, (default, _least) in _SAMPLING.items()}
        for name, value in values.items():
            least = _SAMPLING[name][1]
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise CaptureError(f"ampscope.capture: {name} must be an integer >= {least}, not {value!r}")
        self.path = rank_path(os.fspath(path))
        self._options = dict(path=self.path, overwrite=bool(overwrite), **values, trace_gpu=bool(trace_gpu),
                             description=description or f"python {os.path.basename(sys.argv[0] or 'script')}")
        self._state = "new"
        self._core = None
        # How `ampscope run` ran the script (python, working directory, script or module, its
        # arguments), so the GUI can run it again; None under `import ampscope` in a script.
        self._command = None
        self.steps = 0  # steps recorded so far
        self.final_state = ""

    # -- lifetime -------------------------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, etype, error, tb):
        if etype is None:
            self.stop("finished")
        elif issubclass(etype, KeyboardInterrupt):
            self.stop("stopped", "interrupted (Ctrl-C)")
        elif issubclass(etype, MaxStepsReached):
            self.stop("finished", f"stopped after {self._max_steps} steps (max_steps)")
        elif issubclass(etype, SystemExit):
            code = error.code
            self.stop("finished" if code in (None, 0) else "failed",
                      "" if code in (None, 0) else f"the script exited with status {code}")
        else:
            self.stop("failed", f"{etype.__name__}: {error}".splitlines()[0])
        return False

    def start(self):
        if _running.capture is not None:
            raise CaptureError(f"ampscope.capture is already recording {_running.capture.path}: captures cannot nest")
        if self._state != "new":
            raise CaptureError(f"this ampscope.capture ({self.path}) was already used: make a new one")
        if not self._options["overwrite"] and os.path.exists(self.path) and os.path.getsize(self.path) > 0:
            raise CaptureError(f"{self.path} exists; overwrite it with overwrite=True (ampscope run --force)")
        directory = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(directory):
            raise CaptureError(f"cannot write the session {self.path}: directory {directory} does not exist")
        if not os.access(directory, os.W_OK):
            raise CaptureError(f"cannot write the session {self.path}: directory {directory} is not writable")
        on_cuda = torch.cuda.is_available()
        if self._precision_override == "tf32" and not on_cuda:
            raise CaptureError("precision tf32 needs a CUDA device (TF32 is a Tensor Core format; the CPU has none)")
        device = f"cuda:{torch.cuda.current_device()}" if on_cuda else "cpu"
        self._core = _core.Capture(self._options)
        try:
            self._core.start(device, self._max_steps)  # a run of max_steps samples its last step if none before
        except Exception as e:  # the session file could not be created
            self._state = "failed"
            raise CaptureError(f"cannot write the session {self.path}: {e}".splitlines()[0]) from None
        self._state = "running"
        self._init_state()
        self._core.set_meta("kind", "python")
        self._core.set_meta("argv", " ".join(sys.argv))
        self._core.set_meta("script", sys.argv[0] if sys.argv else "")
        self._core.set_meta("arguments", shlex.join(sys.argv[1:]))
        if self._command:
            self._core.set_meta("script_command", json.dumps(self._command))
        self._tf32_before = None
        if self._precision_override:
            self._core.set_meta("precision_override", self._precision_override)
            if self._precision_override in ("fp32", "tf32"):
                # fp32 is fp32's own matmuls (cuDNN's convolutions default to TF32); tf32 is TF32's.
                self._tf32_before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
                tf32 = self._precision_override == "tf32"
                torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
        if self._max_steps:
            self._core.set_meta("max_steps", str(self._max_steps))  # meta_key::kMaxSteps
        self._install()
        _running.capture = self
        for model, name in list(_watched.items()):
            self._add_root(model, name, explicit=True)
        return self

    def stop(self, state="finished", message=""):
        if self._state != "running":
            return
        try:
            if self._has_activity():
                self._close_step()
            self._core.set_meta("precision", self._precision())
            self._publish_facts()
            self._compiled.push(self._core)
        finally:
            self._uninstall()
            if self._tf32_before is not None:
                torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = self._tf32_before
            _running.capture = None
            self._state = "stopped"
            self.final_state = state
            self._core.finish(state, message)

    @property
    def running(self) -> bool:
        """Started and not yet stopped."""
        return self._state == "running"

    @property
    def gpu_tracing(self) -> str:
        return self._core.gpu_tracing if self._core is not None else ""

    # -- state ----------------------------------------------------------------------------------
    def _init_state(self):
        self._tls = threading.local()
        self._paths = {}         # id(module) -> (weakref, scope id or None)
        self._path_names = {}    # id(module) -> its path, for compiled graphs' modules
        self._scope_paths = {}   # module scope id -> its path: the module a compiled graph ran for
        self._compiled = CompiledGraphs(self)
        self._compiled_calls = CompiledCalls(self)
        self._param_names = {}   # id(parameter) -> (weakref, name)
        self._projections = FunctionalProjections(self._projection_input)
        self._roots = []         # (name, class name, parameters) of models seen
        self._parameter_dtypes = {}  # dtype name -> elements, of the models' trained (requires_grad) parameters
        self._fsdp_policies = []  # _sharding.mixed_precision_policies of the models, merged
        self._sharded_parameters = 0  # elements of the models' DTensor parameters (FSDP2, tensor parallel)
        self._root_names = set()
        self._auto_roots = 0
        self._models_searched = False  # _map_unseen_models
        self._parameter_count = 0
        self._device_known = False
        self._optimizers = {}    # id(optimizer) -> (weakref, index, class name)
        self._autocast = []      # precisions the script's autocast regions asked for
        self._autocast_disabled = []  # devices of regions entered with enabled=False, outside enabled ones
        self._precision_asked = []    # what the script's regions asked for, where --precision set another
        self._scaler_seen = False
        self._scaler_class = None  # the scaler's class: "torch.amp.GradScaler", FSDP's ShardedGradScaler, ...
        self._published = {}     # the facts _publish_facts() last wrote
        self._scaler_ref = None  # weakref to the GradScaler the script scales with (the last seen)
        self._scaler_state = ScalerState()  # its state as the core has read it (_scaler_state.py)
        self._grad_norm_source = None  # "clip_grad_norm_" once the script clips
        self._clip_before_unscale = None  # {"steps", "first_step", "max_norm"} once it clips scaled gradients
        self._explicit = False   # the script calls ampscope.step()
        self._last_close_automatic = False
        self._scaled = {}        # id(scaled loss) -> (weakref, unscaled loss)
        self._in_scaler_step = 0
        self._scheduler_calls = _schedulers.SchedulerCalls(self)
        self._backward = BackwardWatch(self._core)
        self._backward.arm(self._core.wants_gradients())
        self._begin_step_state()
        self._step_t0 = None  # the first step begins at the first model call, not at start-up

    def _first_step_begins(self):
        """The script's first model call or autocast region: step 1 is timed and recorded from
        here. Building the model, moving it to the GPU and the data loader's start are set-up."""
        if self._step_t0 is None:
            self._step_t0 = time.perf_counter_ns()
            self._core.begin_first_step()
            self._readiness = self._core.wants_readiness()  # the core decides it as a step begins
            self._activations = self._core.wants_activations()

    def _begin_step_state(self):
        self._step_t0 = time.perf_counter_ns()
        self._losses = []
        self._records = {}       # id(optimizer) -> per-optimizer record
        self._measured = set()   # optimizers whose gradients were measured this step
        self._grad_norm = None
        self._clipped_scaled = False  # clip_grad_norm_ ran on scaled gradients this step
        self._scale_tensor = None   # GradScaler's scale tensor, once scale() ran this step
        self._scaler_before = None  # [scale, growth tracker] copied before this step's update()
        self._scale_after = None    # GradScaler's scale tensor after this step's update()
        self._samples = {}       # id(model) -> samples (leading dim of its first tensor argument) this step
        self._tls.optimizer_steps = 0  # optimizer.step() calls under way on this thread
        self._close_pending = False
        self._scaled.clear()
        self._readiness = self._core.wants_readiness()  # a readiness step (some range samples): layer inputs too
        self._activations = self._core.wants_activations()  # a range sample: module outputs' ranges too

    def _has_activity(self):
        return bool(self._losses or self._records)

    def _stack(self):
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        return stack


    def _top_level(self):
        """No model call, autocast region, optimizer step or backward open on this thread:
        where the script's loop itself runs."""
        return not self._stack() and _core.scope_depth() == 0 and not _in_backward()

    def _step_begins(self):
        """Where a step's work begins at the top level (a model call, a compiled function's
        call): the step before ends where an optimizer stepped, the script stops past
        max_steps, and step 1 is timed from the first."""
        if self._close_pending:
            self._close_step()
        self._stop_at_max_steps()
        self._first_step_begins()

    def _compiled_call_begins(self, function_key, args, runs_forward):
        """A compiled function called at the top level (_compiled_calls.py): as a model call,
        it ends the step before where an optimizer stepped, and begins the next. Its batch
        counts, as a model's, where its calls run the training forward."""
        self._step_begins()
        self._map_unseen_models()
        if runs_forward and (batch := _leading_batch(args)):
            self._samples[function_key] = self._samples.get(function_key, 0) + batch


    def _inference_phase(self):
        """The phase of a graph AOTAutograd compiles without autograd: a compiled optimizer
        step's inside optimizer.step(), else a forward without autograd (validation)."""
        return "optimizer" if getattr(self._tls, "optimizer_steps", 0) else "forward_no_grad"

    def _stop_at_max_steps(self):
        """As the step after the last one max_steps allows begins (its model call or AMP region):
        the script stops there, as if it had called sys.exit(0)."""
        if self._max_steps and self.steps >= self._max_steps:
            raise MaxStepsReached(0)

    def _override_precision(self, region):
        """--precision: one of the script's AMP regions, entered in the precision --precision names."""
        first = "_ampscope_script_enabled" not in region.__dict__  # a decorator's region is entered again
        region.__dict__["_ampscope_script_enabled"] = True
        asked = _DTYPE_PRECISION.get(getattr(region, "fast_dtype", None)) if first else None
        if asked and asked not in self._precision_asked:
            self._precision_asked.append(asked)
            self._core.set_meta("precision_asked", ", ".join(self._precision_asked))
        if self._precision_override in ("fp32", "tf32"):
            region._enabled = False
        else:
            region.fast_dtype = _PRECISION_DTYPE[self._precision_override]



    def _step_is_sampled(self):
        return self._core.step_is_sampled(self._core.step)

    def _model_description(self):
        script = self._options["description"]
        models = ", ".join(f"{cls}{' ' + repr(name) if name else ''} ({count:,} parameters)"
                           for name, cls, count in self._roots)
        return f"{script}: {models}" if models else script

    def _precision(self):
        return ",".join(self._autocast) if self._autocast else "fp32"

    def _publish_facts(self):
        """The script's model, its parameters and whether it scales its loss, in the session
        as soon as they are known and whenever they change: a window following the session
        while the script runs shows them (written at the end only, a live session read "loss
        scaler none seen" beside its loss-scale plot). Written only when changed."""
        facts = {"model": self._model_description(), "parameter_count": str(self._parameter_count),
                 "parameter_dtypes": ",".join(f"{dtype}:{n}" for dtype, n in sorted(
                     self._parameter_dtypes.items(), key=lambda kv: -kv[1])),
                 "scaler_enabled": "true" if self._scaler_seen else "false"}
        if self._scaler_class:
            facts["scaler_class"] = self._scaler_class
        if self._clip_before_unscale:
            facts["clip_before_unscale"] = json.dumps(self._clip_before_unscale)
        if self._fsdp_policies or self._sharded_parameters:
            facts["sharding"] = json.dumps({"fsdp": self._fsdp_policies,
                                            "sharded_parameters": self._sharded_parameters})
        for key, value in facts.items():
            if self._published.get(key) != value:
                self._core.set_meta(key, value)
                self._published[key] = value

    # -- hooks ----------------------------------------------------------------------------------
    def _install(self):
        from torch.nn.modules import module as nn_module
        from torch.optim import optimizer as optim_module

        self._handles = [
            nn_module.register_module_forward_pre_hook(self._module_pre),
            nn_module.register_module_forward_hook(self._module_post, always_call=True),
            optim_module.register_optimizer_step_pre_hook(self._optimizer_pre),
            optim_module.register_optimizer_step_post_hook(self._optimizer_post),
        ]
        _patches.install()
        _schedulers.install(self._scheduler_calls.on_call)
        self._compiled.install()

    def _uninstall(self):
        for handle in getattr(self, "_handles", []):
            handle.remove()
        self._handles = []
        _patches.uninstall()
        _schedulers.uninstall()
        self._compiled.uninstall()
        self._projections.release()
        if not self._stack():
            _core.unwind_scopes(0)











    def _optimizer_entry(self, optimizer):
        entry = self._optimizers.get(id(optimizer))
        if entry is None or entry[0]() is not optimizer:
            entry = (weakref.ref(optimizer), len(self._optimizers), type(optimizer).__name__)
            self._optimizers[id(optimizer)] = entry
            self._core.set_meta("optimizers", ", ".join(e[2] for e in sorted(self._optimizers.values(),
                                                                              key=lambda e: e[1])))
        return entry

    def _record(self, optimizer):
        record = self._records.get(id(optimizer))
        if record is None:
            _, index, name = self._optimizer_entry(optimizer)
            with _Quiet():
                lr = _scalar(optimizer.param_groups[0].get("lr", math.nan)) if optimizer.param_groups else math.nan
            # found_inf: GradScaler.step()'s flags (tensors) once it ran; False without it.
            record = dict(optimizer=index, name=name, stepped=False, found_inf=False, unscale_calls=0, lr=lr)
            self._records[id(optimizer)] = record
        return record

    def _optimizer_pre(self, optimizer, args, kwargs):
        self._record(optimizer)
        self._tls.optimizer_steps = getattr(self._tls, "optimizer_steps", 0) + 1
        self._compiled_calls.note_phase("optimizer")
        self._measure_gradients(optimizer, None)
        _core.enter_scope(_PHASE_OPTIMIZER)
        _core.enter_scope(_NO_MODULE)

    def _optimizer_post(self, optimizer, args, kwargs):
        _core.exit_scope()
        _core.exit_scope()
        self._tls.optimizer_steps = max(getattr(self._tls, "optimizer_steps", 0) - 1, 0)
        record = self._record(optimizer)
        record["stepped"] = True
        self._scheduler_calls.optimizer_decided(optimizer, self._core.step)
        if not self._explicit and not self._scaler_seen:
            self._close_pending = True

    def _parameter_name(self, p, optimizer, group, index):
        known = self._param_names.get(id(p))
        if known is not None and known[0]() is p:
            return known[1]
        _, opt_index, name = self._optimizer_entry(optimizer)
        return f"{name}{opt_index}.group{group}.{index}"

    def _measure_gradients(self, optimizer, scaler):
        if id(optimizer) in self._measured or not self._core.wants_gradients():
            return
        self._measured.add(id(optimizer))
        # FSDP2's DTensor parameters hold no data of their own: this rank's shards are read.
        parameters = [(self._parameter_name(p, optimizer, g, i), _sharding.local_parameter(p))
                      for g, group in enumerate(optimizer.param_groups)
                      for i, p in enumerate(group["params"])
                      if p.grad is not None and not p.grad.is_sparse]
        if not parameters:
            return
        with _Quiet(), _OwnWait():  # a sample reads back (sampled steps only)
            scale = scaler.get_scale() if scaler is not None else 1.0
            self._core.gradients(parameters, float(scale))

    # -- losses, scaler -------------------------------------------------------------------------
    def _note_scaled(self, scaled, loss):
        with _Quiet():
            self._scaled[id(scaled)] = (weakref.ref(scaled), loss.detach())

    def _note_backward(self, tensors):
        self._compiled_calls.note_phase("backward")
        if self._close_pending and self._top_level():
            # A backward with no model call or autocast region since the optimizer stepped: the
            # next step's forward ran where no hook of the capture's sees it. The step ends
            # here (the forward's ops in the step before) rather than merging two steps.
            self._step_begins()
        tensor = tensors[0] if isinstance(tensors, (list, tuple)) and len(tensors) == 1 else tensors
        if not isinstance(tensor, torch.Tensor) or tensor.numel() != 1:
            return
        scaled = self._scaled.get(id(tensor))
        if scaled is not None and scaled[0]() is tensor:
            self._losses.append(scaled[1])
        elif not self._scaler_seen:
            with _Quiet():
                self._losses.append(tensor.detach())
        # else: backpropagating a tensor derived from a scaled loss: its unscaled value is unknown.

    def _note_scaler(self, scaler):
        self._scaler_seen = True
        self._scaler_ref = weakref.ref(scaler)
        if self._scaler_class is None:
            self._scaler_class = _scaler_class_name(type(scaler))

    def _on_scaler_step(self, scaler, optimizer):
        record = self._record(optimizer)
        self._scaler_ref = weakref.ref(scaler)
        # The flags GradScaler.step() decided by, one per device, read with the step's other
        # values (_scaler_state.py): it skips optimizer.step() (or has the fused optimizer skip
        # on the device) exactly where their sum is > 0.
        state = scaler._per_optimizer_states.get(id(optimizer), {})
        record["found_inf"] = list(state.get("found_inf_per_device", {}).values())
        self._scheduler_calls.optimizer_decided(optimizer, self._core.step)

    def _on_scaler_update(self, scaler, state_before):
        self._scaler_ref = weakref.ref(scaler)
        self._scaler_before = state_before
        self._scale_after = scaler._scale
        if not self._explicit:
            self._close_step()
            self._last_close_automatic = True

    def _explicit_step(self, loss):
        if not self._explicit and self._last_close_automatic and not self._has_activity():
            # The script calls ampscope.step() right after a step ampscope already ended
            # (at scaler.update()): that call belongs to the step just ended, whose loss
            # came from its backward. From here on, only ampscope.step() ends steps.
            self._explicit = True
            return
        self._explicit = True
        if loss is not None:
            self._losses = [loss.detach() if isinstance(loss, torch.Tensor) else torch.tensor(float(loss))]
        self._close_step()

    def _close_step(self):
        if not self._stack():
            _core.unwind_scopes(0)  # scopes a raising optimizer step left open
        self._map_unseen_models()
        records = sorted(self._records.values(), key=lambda r: r["optimizer"])
        # The loss, the clipped gradients' norm and GradScaler's state go to the core as
        # tensors: it reads them when the device has computed them. A read here (.item(),
        # get_scale()) made the host wait for the device at every step, which a loop without
        # a GradScaler, or with a fused optimizer, never does by itself.
        loss_parts = list(self._losses)
        grad_norm = self._grad_norm
        if not isinstance(grad_norm, torch.Tensor):
            grad_norm = _scalar(grad_norm) if grad_norm is not None else math.nan
        scaler = self._scaler_ref() if self._scaler_ref is not None else None
        if self._scaler_before is not None:
            # The scale this step's backward used and the tracker, as update() found them.
            with _Quiet():  # views, no op of the script's
                loss_scale, growth_tracker = self._scaler_before[0], self._scaler_before[1]
        elif self._scale_tensor is not None or scaler is not None:
            # No update() this step (the script raised after its backward, or updates less
            # often): the scale in force, as it stands when the step's values are copied.
            loss_scale = self._scale_tensor if self._scale_tensor is not None else scaler._scale
            growth_tracker = getattr(scaler, "_growth_tracker", None) if scaler is not None else None
            if not isinstance(growth_tracker, torch.Tensor):
                growth_tracker = 0
        else:
            loss_scale, growth_tracker = 1.0, 0
        if not isinstance(loss_scale, torch.Tensor):
            loss_scale = 1.0
        # The host's time between step ends. Where nothing in a step waits for the GPU, the
        # host ends a step when it has queued it; over a run it keeps the device's pace (its
        # launch queue fills, and the core holds at most four steps' values before it waits).
        step_time_ms = (time.perf_counter_ns() - (self._step_t0 or time.perf_counter_ns())) / 1e6
        # Samples: the batch dimension the models were called with (summed over micro-batches;
        # the largest over models, which may share a batch); unknown (NaN) without one.
        samples = max(self._samples.values(), default=0)
        step_number = self._core.step
        checked = self._backward.armed
        record = dict(loss_parts=loss_parts, lr=records[0]["lr"] if records else math.nan, loss_scale=loss_scale,
                      growth_tracker=growth_tracker,
                      loss_scale_after=self._scale_after if self._scale_after is not None else math.nan,
                      optimizers=records, grad_norm=grad_norm, step_time_ms=step_time_ms,
                      samples_per_second=samples * 1e3 / step_time_ms if samples and step_time_ms > 0 else math.nan,
                      # A checked step waited for the device already (its gradients' tests):
                      # its values are read now, and decide the next step's check exactly.
                      wait=checked)
        self._compiled.push(self._core)
        self._publish_facts()
        # A sampled or checked step's read-backs wait for the device by design, as does the
        # last traced step before tracing pauses (--every); the others must not (their values
        # are read later).
        waits = checked or self._core.wants_gradients() or (
            self._core.step_is_sampled(step_number) and not self._core.step_is_sampled(step_number + 1))
        with _OwnWait() if waits else contextlib.nullcontext():
            self._core.end_step(record)
            newest = self._core.newest_stored_step()
            skipped = bool(newest and newest["step"] == step_number and newest["skipped"])
            self._backward.finish(step_number, skipped)
        # The next step is checked when its gradients are sampled, after a step skipped, and
        # after the scale grew (an overflow that follows GradScaler's probe of a larger scale
        # is caught at its first): _scaler_state.py, from what the core has read so far.
        check_next = self._core.wants_gradients()
        if scaler is not None and scaler.is_enabled() and (records or self._scaler_before is not None):
            interval = scaler.get_growth_interval()
            self._scaler_state.note_read(newest, interval)
            check_next = self._scaler_state.check_next(step_number, interval) or check_next
        self._backward.arm(check_next)
        self.steps += 1
        self._last_close_automatic = False
        self._begin_step_state()
        if not self._stack() and getattr(self._tls, "forward_regions", 0):
            # The step ended inside the script's autocast region (at its model call, without a
            # GradScaler): the region goes on in the new step, whose recording has just begun.
            _core.enter_scope(_forward_phase())

