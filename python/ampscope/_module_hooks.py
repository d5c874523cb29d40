"""The capture's global module hooks, a mixin of Capture: models mapped to module paths
as they are first called, a module scope around each call, a step's beginning at a
model's outermost call and its batch, precision readiness's layer inputs, range
samples' module outputs, and what backward checks watch."""
from __future__ import annotations

import sys
import weakref

import torch

from . import _ampscope_capture as _core
from . import _sharding
from ._graph_nodes import _dtype_name
from ._models import (_hf_conv1d, _leading_batch, _main_global_name, _main_model_holding, _main_models,
                      _other_models_in_main, _output_tensor, _watched, _weight_parametrization,
                      _without_compile_wrappers)
from ._torch_patches import _PHASE_RECOMPUTE, _forward_phase, _in_backward, _training_forward

# The layers whose GEMM operands precision readiness measures (subclasses too: a
# The layers whose GEMM operands precision readiness measures (subclasses too: a
# LoRA or quantized Linear still multiplies its input by .weight).
_GEMM_LAYERS = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
_PARAMETRIZATION_LIST = torch.nn.utils.parametrize.ParametrizationList


class ModuleHooks:
    """Capture's module hooks (Capture derives from this): the state they read and write
    (_paths, _path_names, _param_names, _tls, _core, ...) is Capture's, set in _init_state."""

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
            self._note_gemm_weights(sub, path)
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

    def _note_gemm_weights(self, module, path):
        """A module's GEMM weights, under the layer names readiness gives them: where compiled
        code shows no layer input, these are the layers (not every 2-D "*.weight": position
        embeddings are none; a head tied to the token embedding is "lm_head", not "wte")."""
        if isinstance(module, _GEMM_LAYERS) or _hf_conv1d(module):
            weight = getattr(module, "weight", None) if _weight_parametrization(module) is None else None
            if isinstance(weight, torch.Tensor):
                self._core.gemm_weight(path, weight)
        elif isinstance(module, torch.nn.MultiheadAttention):  # its out_proj is a Linear of its own
            for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight"):
                weight = getattr(module, name, None)
                if isinstance(weight, torch.Tensor):
                    self._core.gemm_weight(f"{path}.{name.removesuffix('_weight')}", weight)

    def _map_unseen_models(self):
        """Where the script's models were never called under a hook (a compiled function inlines
        them in its graph), those the script holds are mapped as a model call maps them (their
        parameters' names, the model line, the device). Looked for once."""
        if not self._roots and not self._models_searched:
            self._models_searched = True
            for model in _main_models():
                self._add_root(model)

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
