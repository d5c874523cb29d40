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
  recompilations (_compiled.py; the hooks below stay out of compiled code);
- lr_scheduler.step() calls against the optimizer steps GradScaler skipped
  (_schedulers.py), and where a non-finite gradient started in backward on the
  steps checked (_backward_origin.py, fed by the module hooks below).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shlex
import sys
import threading
import time
import warnings
import weakref

import torch

from . import _ampscope_capture as _core
from ._backward_origin import BackwardWatch
from ._class_patches import ClassPatches
from ._compiled import CompiledGraphs
from ._compiled_calls import CompiledCalls
from ._graph_nodes import _dtype_name
from ._projections import FunctionalProjections
from ._recording import PHASE_SCOPES as _PHASE_SCOPES, OwnWait as _OwnWait, Quiet as _Quiet, scalar as _scalar
from . import _schedulers
from . import _sharding
from ._scaler_state import ScalerState

__all__ = ["Capture", "CaptureError", "capture", "step", "watch"]


class CaptureError(RuntimeError):
    """A capture that cannot start or is misused; the message is one line."""


_active: "Capture | None" = None
_watched: "weakref.WeakKeyDictionary[torch.nn.Module, str]" = weakref.WeakKeyDictionary()

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
# The layers whose GEMM operands precision readiness measures (subclasses too: a
# LoRA or quantized Linear still multiplies its input by .weight).
_GEMM_LAYERS = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
_PARAMETRIZATION_LIST = torch.nn.utils.parametrize.ParametrizationList


def _without_compile_wrappers(path: str) -> str:
    """A module's (or parameter's) path without torch.compile's wrapper: `layers[0] =
    torch.compile(layer)` holds the layer as "layers.0._orig_mod", which the script, the
    eager run and the model's own code call "layers.0"."""
    return ".".join(part for part in path.split(".") if part != "_orig_mod")


def _leading_batch(values) -> int:
    """The batch of a model call's arguments: the leading dimension of the first tensor
    among them (or in a dict among them, a batch as data loaders give it); 0 for none."""
    for value in values:
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, torch.Tensor)), None)
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            return value.shape[0]
    return 0


def _hf_conv1d(module) -> bool:
    """transformers' Conv1D (GPT-2's attention and MLP layers): a GEMM whose weight is
    [in, out] (x @ W). Known only where the script imported transformers."""
    utils = sys.modules.get("transformers.pytorch_utils")
    conv1d = getattr(utils, "Conv1D", None) if utils is not None else None
    return conv1d is not None and isinstance(module, conv1d)


def _output_tensor(output):
    """The tensor a module's output carries: itself, a tuple's first (an RNN's output, a
    transformers layer's hidden states), a ModelOutput's logits or last hidden state."""
    if isinstance(output, (tuple, list)) and output:
        output = output[0]
    elif isinstance(output, dict):
        output = next((output[k] for k in ("logits", "last_hidden_state") if isinstance(output.get(k), torch.Tensor)), None)
    # A plain tensor only: a subclass (DTensor, a quantized or fake tensor) would run its own
    # dispatch, collectives included, under the statistics' ops.
    return output if type(output) is torch.Tensor else None


def _weight_parametrization(module):
    """The ParametrizationList that computes `module.weight` (weight_norm, spectral_norm,
    orthogonal: torch.nn.utils.parametrize), or None where .weight is a plain tensor."""
    lists = getattr(module, "__dict__", {}).get("_modules", {}).get("parametrizations")
    return lists["weight"] if isinstance(lists, torch.nn.ModuleDict) and "weight" in lists else None


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
    if _active is not None:
        _active._add_root(model, name, explicit=True)
    return model


def step(loss=None) -> None:
    """Ends the current step (for loops whose optimizer steps ampscope cannot see, or
    to give the loss); from then on only these calls end steps."""
    if _active is None:
        raise CaptureError("ampscope.step() was called outside ampscope.capture()")
    _active._explicit_step(loss)


def capture(path: str = "run.ampscope", **options) -> "Capture":
    """`with ampscope.capture("run.ampscope", window_start=1, window_steps=0, every=1,
    grad_every=10, sample_budget=5, readiness_every=5, trace_gpu=True, overwrite=False,
    precision=None, max_steps=0):` records the training inside. precision ("fp32", "tf32",
    "fp16", "bf16") runs the script's AMP regions in it instead of theirs; max_steps > 0 stops
    the script (MaxStepsReached, a SystemExit with status 0) as step max_steps + 1 begins."""
    return Capture(path, **options)


def _main_globals():
    """The script's public globals, (name, value), as they are now."""
    main = sys.modules.get("__main__")
    return [(k, v) for k, v in list(getattr(main, "__dict__", {}).items()) if not k.startswith("_")]


def _main_global_name(obj) -> str | None:
    return next((key for key, value in _main_globals() if value is obj), None)


def _main_model_holding(module):
    """The outermost module among the script's globals that holds `module` as a part (or
    wraps the model that does); None when none does."""
    best, best_size = None, 0
    for _, value in _main_globals():
        if not isinstance(value, torch.nn.Module) or value is module:
            continue
        parts = [id(m) for m in value.modules()]
        if len(parts) > best_size and id(module) in parts:
            best, best_size = value, len(parts)
    return best


def _main_models():
    """The script's global modules with parameters that are part of no other such global:
    its models (a model wrapped by DDP or torch.compile: the wrapper)."""
    models = [value for _, value in _main_globals()
              if isinstance(value, torch.nn.Module) and next(value.parameters(), None) is not None]
    return [m for m in models if not any(o is not m and any(p is m for p in o.modules()) for o in models)]


def _other_models_in_main(model) -> bool:
    """Whether the script's globals hold a module with parameters that is neither part of
    `model` nor a wrapper of it (a second model, a teacher, an EMA copy; not a loss module,
    a submodule, DDP or torch.compile around it)."""
    own = {id(m) for m in model.modules()}
    for _, value in _main_globals():
        if not isinstance(value, torch.nn.Module) or id(value) in own:
            continue
        if any(id(m) in own for m in value.modules()):
            continue  # a wrapper of the model
        if next(value.parameters(), None) is not None:
            return True
    return False


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


class Capture:
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
        global _active
        if _active is not None:
            raise CaptureError(f"ampscope.capture is already recording {_active.path}: captures cannot nest")
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
        _active = self
        for model, name in list(_watched.items()):
            self._add_root(model, name, explicit=True)
        return self

    def stop(self, state="finished", message=""):
        global _active
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
            _active = None
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

    # -- models ---------------------------------------------------------------------------------
    def _add_root(self, module, name=None, explicit=False):
        if name is None and not explicit and module not in _watched and _main_global_name(module) is None:
            # A part of a model the script holds, called on its own (`model.encoder(x)`): the
            # whole model is mapped, so paths read as they would from the model ("encoder.0").
            module = _main_model_holding(module) or module
        inner = module
        # A DistributedDataParallel/DataParallel wrapper: paths are those of the model inside.
        if isinstance(module, (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)):
            inner = module.module
        # So is torch.compile's wrapper (its graphs name modules relative to the model);
        # one exists only once dynamo is loaded, which a plain script never pays for.
        elif (eval_frame := sys.modules.get("torch._dynamo.eval_frame")) and isinstance(module, eval_frame.OptimizedModule):
            inner = module._orig_mod
        if name is None:
            name = _watched.get(module, _watched.get(inner))
        if name is None:
            # The first model keeps its modules' own paths ("layer1.0.conv1"), unless the script
            # holds other models: then each is named, the first as the others will be.
            if self._auto_roots == 0 and not _other_models_in_main(inner):
                name = ""
            else:
                name = _main_global_name(module) or type(inner).__name__
                base, k = name, 1
                while name in self._root_names:
                    k += 1
                    name = f"{base}{k}"
            self._auto_roots += 1
        self._root_names.add(name)
        if module is not inner:
            self._paths[id(module)] = (weakref.ref(module), None)
        self._handles.append(module.register_forward_pre_hook(self._root_call, with_kwargs=True))
        for sub_name, sub in inner.named_modules():
            known = self._paths.get(id(sub))
            if known is not None and known[0]() is sub and not explicit:
                continue  # a submodule of a model already mapped (shared), or mapped by watch()
            # The first model's own code (its paths start at its children) is named by its class,
            # as backward checks name it: "-" read as ops that ran in no module.
            path = ".".join(p for p in (name, _without_compile_wrappers(sub_name)) if p) or type(inner).__name__
            scope = _core.intern_scope("ampscope.module:" + path)
            self._paths[id(sub)] = (weakref.ref(sub), scope)
            self._path_names[id(sub)] = path
            self._scope_paths[scope] = path
            # (A parametrized weight is not read here: reading it runs its parametrization.)
            if (_hf_conv1d(sub) and _weight_parametrization(sub) is None
                    and isinstance(getattr(sub, "weight", None), torch.Tensor)):
                self._core.weight_in_by_out(sub.weight)
        count = 0
        for p_name, p in inner.named_parameters():
            known = self._param_names.get(id(p))
            if known is None or known[0]() is not p or explicit:
                self._param_names[id(p)] = (weakref.ref(p),
                                            ".".join(x for x in (name, _without_compile_wrappers(p_name)) if x))
                count += p.numel()
                # The trained ones: a frozen base (LoRA's bf16 weights) has no master weights to keep.
                if p.requires_grad:
                    dtype = _dtype_name(p.dtype)
                    self._parameter_dtypes[dtype] = self._parameter_dtypes.get(dtype, 0) + p.numel()
                if _sharding.is_sharded(p):
                    self._sharded_parameters += p.numel()
            if not self._device_known:
                self._device_known = True
                device = str(p.device)
                self._core.set_meta("device", device)
                self._core.set_meta("device_name", _core.device_model_name(device))
                if device == "cpu":
                    self._set_cpu_matmul_meta()
                self._core.set_memory_device(device)
        for policy in _sharding.mixed_precision_policies(module):
            same = next((p for p in self._fsdp_policies if {**p, "modules": 0} == {**policy, "modules": 0}), None)
            if same is None:
                self._fsdp_policies.append(policy)
            else:
                same["modules"] += policy["modules"]
        if count:
            self._parameter_count += count
            self._roots.append((name, type(inner).__name__, count))

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

    def _map_unseen_models(self):
        """Where the script's models were never called under a hook (a compiled function inlines
        them in its graph), those the script holds are mapped as a model call maps them (their
        parameters' names, the model line, the device). Looked for once."""
        if not self._roots and not self._models_searched:
            self._models_searched = True
            for model in _main_models():
                self._add_root(model)

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

    def _set_cpu_matmul_meta(self):
        # The same question the C++ engine asks (engine::cpu_matmul_paths): PyTorch's
        # own answer on which kernels multiply bf16/fp16 matrices on this CPU.
        self._core.set_meta("cpu_isa", torch.backends.cpu.get_cpu_capability())
        for dtype in ("bf16", "fp16"):
            query = getattr(torch.ops.mkldnn, f"_is_mkldnn_{dtype}_supported", None)
            try:
                onednn = bool(query()) if query is not None else False
            except RuntimeError:  # a LibTorch built without oneDNN
                onednn = False
            self._core.set_meta(f"cpu_{dtype}_matmul",
                                _core.CPU_MATMUL_ONEDNN if onednn else _core.CPU_MATMUL_FALLBACK)

    def _module_path(self, module_id):
        """The path of a live module known by id (compiled graphs name modules by id())."""
        entry = self._paths.get(module_id)
        if entry is None or entry[0]() is None:
            return None
        return self._path_names.get(module_id)

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

    def _module_pre(self, module, args):
        if torch.compiler.is_compiling():
            return  # dynamo traces global hooks: compiled code gets no scopes (_compiled.py names its modules)
        stack = self._stack()
        pushed = 0
        if not stack and _in_backward():
            # A module called while autograd's engine runs a backward: activation checkpointing
            # recomputing a block (torch.utils.checkpoint, HF's gradient_checkpointing_enable()).
            # Forward code, in a phase of its own: no new step, no samples, not the forward's time.
            _core.enter_scope(_PHASE_RECOMPUTE)
            pushed += 1
        elif not stack and self._compiled_calls.in_call():
            # The graph of a compiled function run as a module (an fx GraphModule: backends
            # "eager" and "aot_eager"), inside the function's call, which began the step: no
            # model of the script's, and no second beginning.
            stack.append((0, None))
            return
        elif not stack and isinstance(module, _PARAMETRIZATION_LIST):
            # A parametrized weight read outside any forward (register_parametrization checks
            # its first value as the model is built; a script logs layer.weight): no model is
            # called. Taken for one, it was a model of its own (named "0", its parameters
            # the model's), and began step 1 while the model was being built.
            stack.append((0, None))
            return
        elif not stack:  # the outermost module call: a model (or a loss module) is called
            self._step_begins()
            entry = self._paths.get(id(module))
            if entry is None or entry[0]() is not module:
                self._add_root(module)
            # Training samples only: a validation pass (no_grad, inference_mode) is not throughput.
            # A model called with keywords only (HF's model(input_ids=..., labels=...)) has its
            # batch counted by its own hook (_root_call: a global hook is handed no keywords),
            # or on its first call at the first module inside it given a tensor (the token
            # embedding's input_ids).
            self._tls.samples_of = None
            if _training_forward():
                if batch := _leading_batch(args):
                    self._samples[id(module)] = self._samples.get(id(module), 0) + batch
                else:
                    self._tls.samples_of = id(module)
            _core.enter_scope(_forward_phase())
            pushed += 1
        elif (root := getattr(self._tls, "samples_of", None)) is not None and (batch := _leading_batch(args)):
            self._tls.samples_of = None
            self._samples[root] = self._samples.get(root, 0) + batch
        entry = self._paths.get(id(module))
        scope = None
        if entry is not None and entry[1] is not None and entry[0]() is module:
            scope = entry[1]
            _core.enter_scope(scope)
            pushed += 1
            if self._readiness and not _in_backward():  # a recomputation's inputs are the forward's again
                if isinstance(module, _GEMM_LAYERS) or _hf_conv1d(module):
                    self._layer_input(module, args)  # a Conv1D's [in, out] weight was noted when mapped
                elif isinstance(module, torch.nn.MultiheadAttention) and _training_forward():
                    self._projections.begin(module)  # its projections' F.linear calls, until _module_post
        stack.append((pushed, scope))
        if self._backward.armed:
            self._backward.watch(self._check_name(module), args, is_input=True)
            self._backward.watch_parameters(module, self._checked_parameter_name)

    def _module_scope(self):
        """The scope of the innermost module running on this thread (None outside any)."""
        return next((scope for _, scope in reversed(self._stack()) if scope is not None), None)

    def _innermost_module_path(self):
        """The path of the innermost module running on this thread (None outside any): the
        module a compiled graph runs for, when one graph serves several blocks alike."""
        return self._scope_paths.get(self._module_scope())

    def _root_call(self, module, args, kwargs):
        """A model's own pre-hook, after the global one, handed its keywords: the batch of a
        model called with keywords only, where no module inside it runs a hook (compiled)."""
        if torch.compiler.is_compiling() or getattr(self._tls, "samples_of", None) != id(module):
            return
        if batch := _leading_batch(kwargs.values()):
            self._tls.samples_of = None
            self._samples[id(module)] = self._samples.get(id(module), 0) + batch

    def _layer_input(self, module, args):
        x = args[0] if args else None
        # A training forward only: a validation pass (no_grad) is not what the GEMMs train on.
        if not (isinstance(x, torch.Tensor) and x.is_floating_point() and _training_forward()):
            return
        path = self._path_names.get(id(module), "")
        parametrization = _weight_parametrization(module)
        if parametrization is not None:
            # Reading .weight here ran its parametrization a second time: spectral_norm's
            # power iteration again, which moved its u and v, and so the user's training.
            # The weight the forward computes is taken as it comes (_module_post).
            self._tls.parametrized_input = (module, parametrization, path, x)
            return
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.Tensor):
            self._core.layer_input(path, x, weight)

    def _projection_input(self, x, weight):
        """An F.linear a MultiheadAttention runs on a readiness step: its input, and the
        parameter its weight is (the q, k and v rows of in_proj_weight are views of it),
        as the layer "<path>.in_proj" (in_proj_weight) or "<path>.out_proj"."""
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()):
            return
        for parameter in (weight, getattr(weight, "_base", None)):
            known = self._param_names.get(id(parameter)) if parameter is not None else None
            if known is not None and known[0]() is parameter:
                break
        else:
            return  # a weight computed in the forward: no parameter to follow to its gradient
        name = known[1]
        layer = name.removesuffix(".weight") if name.endswith(".weight") else name.removesuffix("_weight")
        self._core.layer_input(layer, x, parameter)

    def _parametrized_layer_output(self, module, output):
        """A module's forward returned: the weight of a parametrized layer whose input is
        waiting (_layer_input) is this output where `module` computes it."""
        layer, parametrization, path, x = self._tls.parametrized_input
        if module is parametrization and isinstance(output, torch.Tensor):
            if _hf_conv1d(layer):
                self._core.weight_in_by_out(output)
            self._core.layer_input(path, x, output)
        elif module is not layer:
            return
        self._tls.parametrized_input = None  # taken, or the layer's forward did not compute it (cached)

    def _module_post(self, module, args, output):
        if torch.compiler.is_compiling():
            return
        stack = self._stack()
        if stack:
            for _ in range(stack.pop()[0]):
                _core.exit_scope()
        # Set only on readiness steps: other steps pay no thread-local lookup per module call.
        if self._readiness and getattr(self._tls, "parametrized_input", None) is not None:
            self._parametrized_layer_output(module, output)
        if self._projections.active:
            self._projections.end(module)
        if self._activations and _training_forward() and not _in_backward():
            # A range sample: the output's range against fp16, bf16 and fp8, and the first
            # module whose output overflowed fp16 (a reference held, measured at the step's end).
            tensor = _output_tensor(output)
            path = self._module_path(id(module)) if tensor is not None else None
            if path is not None:
                self._core.module_output(path, tensor)
        if self._backward.armed:
            self._backward.watch(self._check_name(module), output, is_input=False)

    def _checked_parameter_name(self, module, parameter, local):
        """A parameter's name in backward checks: as the gradient tables give it, else its
        module's name and its own."""
        known = self._param_names.get(id(parameter))
        if known is not None and known[0]() is parameter:
            return known[1]
        return f"{self._check_name(module)}.{local}"

    def _check_name(self, module):
        """A module's name in backward checks: its path, a root model's class."""
        return self._module_path(id(module)) or type(module).__name__

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
    return _active is not None and scaler.is_enabled()


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
        cap = _active
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
        cap = _active
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
        cap = _active
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
        cap = _active
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
        cap = _active
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
            if _active is not None and getattr(_active._tls, "forward_regions", 0) > 0:
                _active._tls.forward_regions -= 1
        return original(self, *exc)
    return __exit__


def _wrap_backward(original):
    def backward(tensors, *args, **kwargs):
        if _active is None:
            return original(tensors, *args, **kwargs)
        _active._note_backward(tensors)
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
    module_scope = _active._module_scope() if _active is not None else None

    def run(*args, **kwargs):
        if _active is None:
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
        if _active is None or torch.compiler.is_compiling():
            return original(*args, **kwargs)
        with _scopes(phase):
            return original(*args, **kwargs)
    return in_phase


def _wrap_clip(original):
    def clip_grad_norm_(*args, **kwargs):
        cap = _active
        if cap is None:
            return original(*args, **kwargs)
        # Clipping is the optimizer's phase, between unscale_ and step, as the built-in trainer
        # has it: its norms and the gradients' scaling read "other".
        with _scopes(_PHASE_OPTIMIZER):
            total = original(*args, **kwargs)
        if cap._grad_norm_source is None:
            cap._grad_norm_source = "clip_grad_norm_"
            cap._core.set_meta("grad_norm_source", "clip_grad_norm_")
        with _Quiet():
            cap._grad_norm = total.detach() if isinstance(total, torch.Tensor) else total
        return total
    return clip_grad_norm_
