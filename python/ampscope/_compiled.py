"""torch.compile under capture: the ops of every graph dynamo compiles, as autocast
left them, and the graph breaks and recompilations with dynamo's reasons.

Compiled code runs fused kernels, not the ops the script wrote, so the eager op
observer cannot see what autocast decided there. AOTAutograd can: it traces each
dynamo graph with the script's autocast state into aten forward and backward graphs
whose casts are explicit nodes and whose node.meta['val'] holds every dtype. This
module wraps the compilers AOTAutograd hands each graph to (any backend built on
torch._dynamo.backends.common.aot_autograd: inductor, aot_eager, custom ones), reads
each graph once, and counts the calls of the compiled forward and backward on the
sampled steps. Rows go to the session's op table with `compiled` set (no time of
their own: the compiled region's time stays in the eager rows).

AOTAutograd's own cache would hand back a compiled graph without calling the
compilers, so while a capture runs the compilers are plain functions, which that
cache does not serve (inductor's FX graph cache still does: its lookup is inside
the compiler, after the graph is read here).

Under inductor, each graph's kernels are timed too, with the graph ops each fused
(_compiled_kernels.py): the graph's node names are kept for that.

Compiling runs ops too (dynamo and AOTAutograd trace on fake tensors): the op
observer is off on the compiling thread from dynamo's compile-start callback to its
compile-end callback, and around a backward compiled lazily, so those never appear
among the script's ops.

Categories come from the C++ classifier (_core.classify_op), with three readings the
graph needs: a cast is autocast's when dynamo's op it came from (source_fn_stack)
is not itself a cast the script wrote; a cast that shares its seq_nr with an op of
the graph it feeds or is fed by is a decomposed op's computing precision, no decision
(as the inner steps of an eager op are none); an op fed by autocast's casts made
for its own call (through views such as the t() of a linear) is classified on the
dtypes before those casts, as the eager op autocast decided for (aten::linear) is; and
an op autocast decides, called where the compiled code turned autocast off (dynamo's
graph holds the region as _enter_autocast/_exit_autocast calls), is autocast_off. Backward nodes carry no
module or source; they inherit both from the forward node with the same seq_nr.
"""
from __future__ import annotations

import functools
import inspect
import json
import operator
import sys
import threading

import torch

from . import _ampscope_capture as _core
from ._compiled_kernels import KernelProfiling, graph_scope, kernel_calls
from ._graph_nodes import (_autocast_may_act, _autocast_off_calls, _dtype_name, _dynamo_call, _first_line,
                           _frame_name, _in_autograd_function, _op_name, _renamed, _shape, _source_fn,
                           _strip_dynamo_source, _tensor, _under, _val)

# dynamo-level ops (source_fn_stack) that are themselves a cast the script asked for.
_SCRIPT_CASTS = {"to", "float", "half", "bfloat16", "double", "type", "type_as"}
# Ops between autocast's cast and the op it was made for, that change no dtype.
_VIEWS = {"aten::t", "aten::view", "aten::_unsafe_view", "aten::reshape", "aten::transpose", "aten::permute",
          "aten::expand", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select", "aten::alias"}
_PENDING_KEPT = 4096  # forward calls of a module's graph awaiting their backward


class _Graph:
    """One compiled graph's ops (per signature, with how often the graph holds it)
    and how often it ran on sampled steps."""

    def __init__(self, phase: str, rows: dict, nodes: dict, root: str | None = None, pending: list | None = None):
        self.phase = phase
        self.rows = rows  # signature tuple -> occurrences in the graph
        self.nodes = nodes  # node name -> the op it is (a fused op's description)
        # Calls on sampled steps by the module instance they ran for (None: the one the graph
        # was traced on, `root`, or any where the graph is no module's code).
        self.calls: dict[str | None, int] = {}
        # Of those, the calls in the warm-up step, which the session's op table leaves out
        # (profiler/analysis/warmup_step.h): its graph node rows count the other steps' calls.
        self.warmup_calls: dict[str | None, int] = {}
        self.number = -1  # its place in CompiledGraphs._graphs: its marker op's name
        self.kernel_calls: list[dict] = []  # inductor's calls, in order (_compiled_kernels.kernel_calls)
        # The path of the module whose code the graph is (a compiled module's, `block.compile()`'s),
        # where its nodes name modules under it; None for a compiled function's graph.
        self.root = root
        # The instances of forward calls whose backward has not run yet, newest last: a backward
        # graph's call is for the latest of them (backward runs the blocks in reverse). Shared by
        # a forward graph and its backward graph.
        self.pending = pending if pending is not None else []


class CompiledGraphs:
    """The compiled graphs of one capture; installed and removed with it."""

    def __init__(self, capture):
        self._capture = capture  # the ampscope Capture (module paths, sampled steps)
        self._lock = threading.Lock()
        self._graphs: list[_Graph] = []  # AOTAutograd's forward, backward and inference graphs
        self._dynamo_graphs = 0  # graphs dynamo compiled (one AOTAutograd call each)
        self._breaks: dict[tuple[str, str], int] = {}
        self._recompiles: list[dict] = []
        # Modules compiled in place in which dynamo compiled nothing (_compiled_calls.py): path -> class.
        self._ran_eagerly: dict[str, str] = {}
        self.activity = 0  # compiles begun and graph calls: whether a call ran compiled code
        self._originals = []
        self._pushed = None
        self._active = False   # between install() and uninstall()
        self._hooked = False   # dynamo's hooks are in place
        self._quiet = threading.local()  # the observer's state (and scope depth) before a compile began
        self._compile_scope = _core.intern_scope(_core.COMPILE_OP)
        self._kernels = KernelProfiling()

    # -- hooks ---------------------------------------------------------------------------------
    def install(self):
        """Hooks dynamo now if it is loaded, else at the first torch.compile call:
        importing dynamo takes a second or two, which scripts without it should not pay.
        A function torch.compile returns comes back wrapped (_compiled_calls.py): its
        calls at the top level begin steps, as a model's do."""
        self._active = True
        if "torch._dynamo" in sys.modules:
            self._install_hooks()
        original = torch.compile

        @functools.wraps(original)
        def compile(*args, **kwargs):
            if self._active and not self._hooked:
                self._install_hooks()
            compiled = original(*args, **kwargs)
            # A module's compiled wrapper is a module (the module hooks see its calls); a bare
            # torch.compile(**options) is a decorator, which calls torch.compile again.
            if self._active and inspect.isfunction(compiled) and hasattr(compiled, "_torchdynamo_orig_callable"):
                owner = getattr(args[0], "__self__", None) if args else None
                return self._capture._compiled_calls.wrap(
                    compiled, owner if isinstance(owner, torch.nn.Module) else None)
            return compiled
        self._set(torch, "compile", compile)

    def _install_hooks(self):
        import torch._dynamo.backends.common as common
        import torch._dynamo.convert_frame as convert_frame
        import torch._dynamo.symbolic_convert as symbolic_convert

        self._set(common, "aot_module_simplified", self._wrap_aot(common.aot_module_simplified))
        self._set(convert_frame, "get_and_maybe_log_recompilation_reasons",
                  self._wrap_recompile(convert_frame.get_and_maybe_log_recompilation_reasons))
        translator = symbolic_convert.InstructionTranslatorBase
        self._set(translator, "log_graph_break", self._wrap_graph_break(translator.log_graph_break))
        torch._dynamo.callback_handler.register_start_callback(self._compile_started)
        torch._dynamo.callback_handler.register_end_callback(self._compile_ended)
        self._skip_hook_frames()
        self._kernels.enable()
        self._hooked = True

    def _skip_hook_frames(self):
        """The capture's module hooks run eagerly or inlined in a graph, never compiled as
        frames of their own. `module.compile()` compiles the module's _call_impl, which dynamo
        skips as PyTorch's code, and compiles the first frames outside PyTorch the call
        reaches: the global hooks were such frames, each compiled (a region of its own on
        every block call, and more compile time), and as traced they did nothing (a block's
        scope, its output's range). Skipped with the frames they call (else each function a
        hook calls was compiled in its turn), as top frames only: inside a compiled model's
        graph they are inlined as before, where they do nothing."""
        try:
            from torch._dynamo.eval_frame import set_code_exec_strategy
            from torch._dynamo.types import FrameAction, FrameExecStrategy
        except ImportError:  # a dynamo without them: hooks compiled as frames, as before
            return
        for hook in (self._capture._module_pre, self._capture._module_post, self._capture._root_call):
            set_code_exec_strategy(hook.__func__.__code__, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))

    def uninstall(self):
        self._active = False  # graphs compiled meanwhile keep their counting wrappers: they count no more
        if self._hooked:
            self._hooked = False
            torch._dynamo.callback_handler.remove_start_callback(self._compile_started)
            torch._dynamo.callback_handler.remove_end_callback(self._compile_ended)
            self._kernels.disable()
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals = []

    def _compile_started(self, args=None):
        self.activity += 1
        # CUDA graph trees record a graph under these callbacks too: that is the compiled
        # code running in the user's step (its ops are the step's), not a compile. With
        # recording off there, the recording call's ops were missing from the session.
        if getattr(getattr(args, "callback_trigger", None), "name", "") == "CUDAGRAPH_RECORDING":
            self._quiet.previous = None
            return
        # The compile is one op of ampscope's (its ops are not recorded): a compile inside a
        # compiled region (a graph break's resumed frame, a lazily compiled backward) was
        # that region's time, which the time by category then counted as "unchanged" work.
        self._quiet.depth = _core.scope_depth()
        _core.enter_op_scope(self._compile_scope)
        self._quiet.previous = _core.set_recording_enabled(False)

    def _compile_ended(self, args=None):
        previous = getattr(self._quiet, "previous", True)
        if previous is not None:
            _core.set_recording_enabled(previous)
            _core.unwind_scopes(getattr(self._quiet, "depth", _core.scope_depth()))

    def _set(self, owner, name, value):
        self._originals.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, value)

    def _wrap_aot(self, original):
        graphs = self

        @functools.wraps(original)
        def aot_module_simplified(mod, args, fw_compiler, bw_compiler=None, *rest, **kwargs):
            # One AOTAutograd call per dynamo graph: its forward names the modules and
            # casts its backward nodes inherit (by seq_nr).
            with graphs._lock:
                graphs._dynamo_graphs += 1
            forward_nodes: dict[int, tuple[str, bool, bool, bool]] = {}
            forward = []  # the forward (or inference) graph, once compiled
            off_calls = _autocast_off_calls(mod)  # traced now, under the script's autocast
            autocast_acts = _autocast_may_act(mod)
            # Traced at the first call, inside the module it was made for: the compiled block's scope
            # (opened by its hook, or for `block.compile()` by the wrapper of its compiled call).
            root = graphs._capture._innermost_module_path()

            def read_forward(compiler, inference):
                def compile_forward(gm, example_inputs):
                    # Compiled without autograd: a forward (validation), or a compiled optimizer
                    # step's update, compiled inside optimizer.step().
                    phase = graphs._capture._inference_phase() if inference else "forward"
                    graph = graphs._read(gm, phase, forward_nodes, off_calls, inference, autocast_acts, root=root)
                    forward.append(graph)
                    with graphs._kernels.compiling(backward=False) as outputs:
                        compiled = compiler(gm, example_inputs)
                    return graphs._timed(compiled, graph, outputs)
                return compile_forward

            def compile_backward(gm, example_inputs):
                previous = _core.set_recording_enabled(False)  # lazily, inside the first backward
                try:
                    graph = graphs._read(gm, "backward", forward_nodes, off_calls,  # its recomputed nodes'
                                         autocast_acts=autocast_acts, forward=forward[-1] if forward else None)
                    with graphs._kernels.compiling(backward=True) as outputs:
                        compiled = (bw_compiler or fw_compiler)(gm, example_inputs)
                finally:
                    _core.set_recording_enabled(previous)
                return graphs._counted(graphs._timed(compiled, graph, outputs), graph)

            # The graph of a call without autograd (no_grad, inference_mode): AOTAutograd
            # compiles it with fw_compiler where the backend names no inference compiler.
            if len(rest) < 4:  # not passed by position (after partition_fn, decompositions, ...)
                inference = kwargs.get("inference_compiler") or fw_compiler
                kwargs["inference_compiler"] = read_forward(inference, True)
            compiled = original(mod, args, read_forward(fw_compiler, False), compile_backward, *rest, **kwargs)

            @functools.wraps(compiled)
            def run(*call_args, **call_kwargs):
                graphs.activity += 1
                if forward:
                    graph = forward[-1]
                    instance = graphs._capture._innermost_module_path() if graph.root is not None else None
                    if graph.root is not None and torch.is_grad_enabled():
                        graph.pending.append(instance)
                        if len(graph.pending) > _PENDING_KEPT:  # forwards whose backward never ran
                            del graph.pending[0]
                    graphs._count(graph, instance)
                    graphs._capture._compiled_calls.note_phase(graph.phase)
                return compiled(*call_args, **call_kwargs)
            return run
        return aot_module_simplified

    def _wrap_recompile(self, original):
        graphs = self

        @functools.wraps(original)
        def get_and_maybe_log_recompilation_reasons(cache_entry, frame, *args, **kwargs):
            reasons = original(cache_entry, frame, *args, **kwargs)
            if not kwargs.get("skip_logging", False) and frame is not None:
                with graphs._lock:
                    graphs._recompiles.append(dict(
                        frame=_frame_name(frame),
                        reason=_first_line(reasons[0]) if reasons else "unknown (dynamo found no guard failure)"))
            return reasons
        return get_and_maybe_log_recompilation_reasons

    def _wrap_graph_break(self, original):
        graphs = self

        @functools.wraps(original)
        def log_graph_break(translator, code_options, reason, exc):
            if not getattr(exc, "logged", False):
                stack = getattr(exc, "real_stack", None) or torch._guards.TracingContext.extract_stack()
                where = f"{stack[-1].filename}:{stack[-1].lineno}" if stack else code_options.get("co_filename", "?")
                # gb_type names the break ("Unsupported Tensor.item() call ..."); the
                # reason's first line is often only the bytecode dynamo stopped at.
                key = (where, _first_line(getattr(exc, "gb_type", None) or reason))
                with graphs._lock:
                    graphs._breaks[key] = graphs._breaks.get(key, 0) + 1
            return original(translator, code_options, reason, exc)
        return log_graph_break

    # -- graphs --------------------------------------------------------------------------------
    def _module_path(self, stack: dict | None) -> str:
        if not stack:
            return ""
        key, (fqn, _) = next(reversed(stack.items()))
        try:
            known = self._capture._module_path(int(key))  # dynamo keys modules by id()
        except (TypeError, ValueError):
            known = None
        return known if known is not None else _strip_dynamo_source(fqn)

    def _read(self, gm, phase: str, forward_nodes: dict, off_calls: dict | None = None,
              inference: bool = False, autocast_acts: bool = True, forward: _Graph | None = None,
              root: str | None = None) -> _Graph:
        """The graph's ops by signature. forward_nodes (seq_nr -> (module, autocast
        cast, promoted, a custom autograd.Function's)) is filled from a forward graph and
        read for a backward one (`forward`, whose module instances it shares); off_calls
        (_autocast_off_calls) names the calls run with autocast turned off; autocast_acts
        (_autocast_may_act): whether any cast can be autocast's; root: the module the graph was
        traced for (_Graph.root)."""
        autocast_casts = set()  # forward cast nodes autocast inserted
        rows: dict[tuple, int] = {}
        nodes: dict[str, dict] = {}
        # A decomposed op's nodes share its seq_nr: a cast among them is the op's own
        # computing precision (GELU's or LayerNorm's bf16 -> fp32 -> bf16), which eager
        # kernels do inside; autocast's casts are ops of their own, with their own seq_nr
        # (a copy in another memory format, a view, may come with one: they compute nothing).
        # An op that makes no autograd node (SDPA's mask made additive: a where on a bool
        # mask) takes the number of the node made last, which may be autocast's cast of the
        # query: a cast is an op's inner step only where it feeds or is fed by that op.
        computing = {node for node in gm.graph.nodes
                     if (op := _op_name(node)) is not None and not _core.is_cast_op(op) and op not in _VIEWS
                     and op != "aten::clone" and node.meta.get("seq_nr") is not None}

        def inner_step(cast) -> bool:
            seq_nr = cast.meta.get("seq_nr")
            neighbours = list(cast.users) + [a for a in cast.all_input_nodes]
            # One output of a multi-output op (LayerNorm's var_mean: its mean, cast for the backward).
            neighbours = [n.args[0] if n.op == "call_function" and n.target is operator.getitem and n.args
                          and isinstance(n.args[0], torch.fx.Node) else n for n in neighbours]
            return any(n in computing and n.meta.get("seq_nr") == seq_nr for n in neighbours)
        # seq_nr is autograd's number for each op it records: an inference graph (no_grad) was
        # traced without autograd, its nodes share one number, and every cast would read as
        # an op's inner step. There the op a node was decomposed from (original_aten) tells:
        # autocast's cast comes from a cast (_to_copy), GELU's inner ones from aten::gelu.
        numbered = not inference

        def decomposed_op(node):
            """The eager op a node was decomposed from: autograd's number, or (without one) the op itself."""
            return node.meta.get("seq_nr") if numbered else node.meta.get("original_aten")

        def inner_cast(node) -> bool:
            # A cast of a value its own dynamo-level call computed is a step inside that call
            # (dropout's mask drawn in fp32 and cast to the input's dtype, LayerNorm's mean kept
            # for the backward): autocast casts the arguments of the op it decides, from outside.
            call = _dynamo_call(node)
            if call is not None and any(_dynamo_call(a) == call for a in node.all_input_nodes):
                return True
            # With autocast off everywhere, a cast dynamo recorded from an op other than a cast the
            # script wrote is that op's own computing precision (nested inside it in eager).
            if not autocast_acts and (source := _source_fn(node)) is not None and source not in _SCRIPT_CASTS:
                return True
            if numbered:
                return node.meta.get("seq_nr") is not None and inner_step(node)
            origin = node.meta.get("original_aten")
            return isinstance(origin, torch._ops.OpOverload) and not _core.is_cast_op(origin._schema.name)
        # The decomposed ops that compute in a precision of their own (a cast among their nodes):
        # LayerNorm's bf16 input upcast to fp32 meets its bf16 weight in a multiply, which is the
        # norm's computing precision, not a promotion (eager's native_layer_norm is one op, "unchanged").
        own_precision = {decomposed_op(node) for node in gm.graph.nodes
                         if (op := _op_name(node)) is not None and _core.is_cast_op(op)
                         and not _in_autograd_function(node) and inner_cast(node)}
        own_precision.discard(None)
        root = forward.root if forward is not None else root
        for node in gm.graph.nodes:
            name = _op_name(node)
            if name is None:
                continue
            seq_nr = node.meta.get("seq_nr")
            inputs, shapes = [], []
            for arg in node.args:
                items = arg if isinstance(arg, (list, tuple)) else [arg]
                for item in items:
                    t = _tensor(_val(item))
                    inputs.append(_dtype_name(t.dtype) if t is not None else "")
                    shapes.append(_shape(t) if t is not None else [])
            value = node.meta.get("val")
            values = value if isinstance(value, (list, tuple)) else [value]
            outputs = [_dtype_name(t.dtype) for t in values if isinstance(t, torch.Tensor)]
            is_cast = _core.is_cast_op(name)
            # A custom autograd.Function's body shares its one autograd number: a cast there is
            # its code's (custom_fwd(cast_inputs=...)'s, a .float() in its backward), as in eager,
            # where its forward is a container; not an op's inner step.
            in_function = _in_autograd_function(node)
            if in_function:
                inside_op = False
            else:
                inside_op = is_cast and inner_cast(node)
            backward_of_autocast_cast = backward_of_promotion = turned_off = False
            # A forward node the partitioner put in the backward graph, recomputed rather than
            # saved (a checkpointed block's, or a cheap op min-cut chose): forward code, decided
            # as in the forward, in the recompute phase as eager checkpointing's.
            node_phase = ("recompute" if phase == "backward" and node.meta.get("partitioner_tag") == "is_forward"
                          else phase)
            if node_phase == "backward":
                module, backward_of_autocast_cast, backward_of_promotion, of_function = forward_nodes.get(
                    seq_nr, ("", False, False, False))
                # Autograd's cast of a custom Function's gradient back to its input's dtype.
                inside_op = inside_op and not of_function
                by_autocast = False
                classified_inputs = inputs
                autocast_acted = False  # a backward's mixed dtypes are its ops' own (a norm's fp32 weight)
            else:
                # An op in the compiled module's own forward (F.gelu there) is the module's, as in eager.
                module = self._module_path(node.meta.get("nn_module_stack")) or root or ""
                source = _source_fn(node)
                by_autocast = (autocast_acts and is_cast and not inside_op and not in_function and source is not None
                               and source not in _SCRIPT_CASTS)
                if by_autocast:
                    autocast_casts.add(node)
                # A view of a cast (the t() of a linear's weight) decided nothing itself.
                see_through = not is_cast and name not in _VIEWS
                classified_inputs, autocast_acted = (self._before_autocast_casts(node, autocast_casts, source)
                                                     if see_through else (inputs, False))
                stack = node.meta.get("source_fn_stack")
                off_key = tuple(entry[0] for entry in stack) if in_function else stack[-1][0] if stack else None
                off_device = (off_calls or {}).get(off_key) if off_key else None
                turned_off = off_device is not None and _core.autocast_decides(name, off_device)
            category = _core.classify_op(name, classified_inputs, outputs, by_autocast, backward_of_autocast_cast,
                                         inside_op, backward_of_promotion, autocast_acted, turned_off)
            if category == "promoted" and not is_cast and decomposed_op(node) in own_precision:
                category = "unchanged"
            if node_phase not in ("backward", "recompute") and seq_nr is not None:
                # The op's first node names its module; an autocast cast or a promotion
                # among its nodes decides what its backward's casts are.
                known = forward_nodes.get(seq_nr)
                first = (module, by_autocast) if known is None or by_autocast else known[:2]
                forward_nodes[seq_nr] = (*first, category == "promoted" or (known is not None and known[2]),
                                         in_function or (known is not None and known[3]))
            key = (name, module, node_phase, category, tuple(inputs), tuple(tuple(s) for s in shapes), tuple(outputs))
            rows[key] = rows.get(key, 0) + 1
            nodes[node.name] = dict(node=node.name, name=name, module=module, category=category,
                                    input_dtypes=inputs, output_dtypes=outputs)
        graph = _Graph(phase, rows, nodes, root, forward.pending if forward is not None else None)
        with self._lock:
            graph.number = len(self._graphs)
            self._graphs.append(graph)
        return graph

    @staticmethod
    def _timed(compiled, graph: _Graph, outputs: list):
        """An inductor graph's calls run inside its marker op, so that its kernels are
        timed per graph (_compiled_kernels.py); other backends' graphs run as they are."""
        if not outputs:
            return compiled
        graph.kernel_calls = kernel_calls(outputs[-1])
        return graph_scope(compiled, graph.number)

    @staticmethod
    def _before_autocast_casts(node, autocast_casts: set, call: str | None) -> tuple[list[str], bool]:
        """The node's input dtypes as autocast saw them: through views back to a cast it
        inserted for this node's call (`call`: the op dynamo recorded both from, linear for
        its cast weight and its addmm), that cast's input; and whether any input came through
        such a cast (autocast acted on the op: else a norm's fp32 weight on a bf16 input is
        its own). A cast made for another op (cat's promotion of a bf16 value onto an fp32
        cache, cat itself decomposed away) decided nothing for the clone that follows it."""
        dtypes, through = [], False
        for arg in node.args:
            for item in arg if isinstance(arg, (list, tuple)) else [arg]:
                source = item
                while isinstance(source, torch.fx.Node) and _op_name(source) in _VIEWS and source.args:
                    source = source.args[0]
                if (isinstance(source, torch.fx.Node) and source in autocast_casts and source.args
                        and (call is None or _source_fn(source) in (None, call))):
                    source = source.args[0]
                    through = True
                t = _tensor(_val(source)) if isinstance(source, torch.fx.Node) else _tensor(_val(item))
                dtypes.append(_dtype_name(t.dtype) if t is not None else "")
        return dtypes, through

    def _counted(self, compiled, graph: _Graph):
        graphs = self
        boxed = getattr(compiled, "_boxed_call", False)

        def run(*args):
            graphs._count(graph, graph.pending.pop() if graph.pending else None)
            return compiled(*args)
        run._boxed_call = boxed
        return run

    def _count(self, graph: _Graph, instance: str | None = None):
        if self._active and self._capture._step_is_sampled():
            key = None if instance == graph.root else instance
            warmup = self._capture._core.step == _core.WARMUP_STEP
            with self._lock:
                graph.calls[key] = graph.calls.get(key, 0) + 1
                if warmup:
                    graph.warmup_calls[key] = graph.warmup_calls.get(key, 0) + 1

    def _slots(self) -> list[tuple[_Graph, str | None]]:
        """Each graph once per module instance it ran for (its own first): the session counts
        a signature's calls per slot (compiled_graph_calls). Under the lock."""
        return [(graph, key) for graph in self._graphs
                for key in [None] + [k for k in graph.calls if k is not None]]

    # -- to the session ------------------------------------------------------------------------
    def signature_rows(self) -> list[dict]:
        """Op table rows without calls: one per signature over all graphs, with `graphs`,
        [(graph, occurrences in it)]; the session counts calls = sum over graphs of
        (occurrences x the graph's calls on sampled steps) from compiled_graph_calls."""
        merged: dict[tuple, list] = {}
        with self._lock:
            for slot, (graph, instance) in enumerate(self._slots()):
                for key, occurrences in graph.rows.items():
                    if instance is not None:
                        key = (key[0], _renamed(key[1], graph.root, instance), *key[2:])
                    merged.setdefault(key, []).append((slot, occurrences))
        return [dict(name=name, module=module, phase=phase, category=category, input_dtypes=list(inputs),
                     input_shapes=[list(s) for s in shapes], output_dtypes=list(outputs), graphs=graphs)
                for (name, module, phase, category, inputs, shapes, outputs), graphs in merged.items()]

    def kernel_rows(self) -> list[dict]:
        """Per inductor graph, its calls in order with the graph ops each computes:
        {graph, phase, kind, kernel, ordinal (among the graph's calls of that name), ops}.
        A node inductor made itself (a post-grad pattern's) has only its name."""
        out = []
        with self._lock:
            graphs = [(g, sum(1 for k in g.calls if k is not None)) for g in self._graphs if g.kernel_calls]
        for graph, others in graphs:
            seen: dict[str, int] = {}
            for call in graph.kernel_calls:
                ordinal = seen.get(call["kernel"], 0)
                seen[call["kernel"]] = ordinal + 1
                ops = [graph.nodes.get(n, dict(node=n, name="", module="", category="", input_dtypes=[],
                                               output_dtypes=[])) for n in call["nodes"]]
                if others:  # the graph's kernels ran for every block alike: say so where it names one
                    ops = [{**op, "module": f"{op['module']} (+{others} alike)"}
                           if _under(op["module"], graph.root) else op
                           for op in ops]
                out.append(dict(graph=graph.number, phase=graph.phase, kind=call["kind"], kernel=call["kernel"],
                                ordinal=ordinal, ops=ops))
        return out

    def ran_eagerly(self, path: str, cls: str):
        """A module compiled in place ran without compiled code (its code is all PyTorch's)."""
        with self._lock:
            self._ran_eagerly[path] = cls

    def push(self, core):
        """Hands what changed to the session, at each step's end on the training thread: the
        graphs' op rows and inductor's listing when a graph was compiled, the compile events
        when there were new ones, and otherwise only each graph's calls (a few integers:
        sending every row each step cost a 2-layer GPT-2 5-15 ms a step)."""
        with self._lock:
            slots = self._slots()
            graphs = tuple((id(g), instance) for g, instance in slots)
            listing = tuple((id(g), len(g.kernel_calls), len(g.calls)) for g in self._graphs)
            calls = [g.calls.get(instance, 0) for g, instance in slots]
            warmup_calls = [g.warmup_calls.get(instance, 0) for g, instance in slots]
            events = dict(graphs=self._dynamo_graphs,
                          graph_breaks=[dict(where=w, reason=r, count=c) for (w, r), c in self._breaks.items()],
                          recompiles=list(self._recompiles),
                          ran_eagerly=[dict(module=m, cls=c) for m, c in self._ran_eagerly.items()])
        if not events["graphs"] and not events["graph_breaks"] and not events["ran_eagerly"]:
            return
        pushed = self._pushed or {}
        if pushed.get("graphs") != graphs:
            core.compiled_op_signatures(self.signature_rows())
        if pushed.get("listing") != listing:
            core.compiled_kernels(self.kernel_rows())
        if pushed.get("calls") != calls:
            core.compiled_graph_calls(calls, warmup_calls)
        self._pushed = dict(graphs=graphs, listing=listing, calls=calls, events=events)
        if pushed.get("events") == events:
            return
        core.set_meta("compiled_graphs", str(events["graphs"]))
        core.set_meta("compile_graph_breaks", json.dumps(events["graph_breaks"]))
        core.set_meta("compile_recompiles", json.dumps(events["recompiles"]))
        if events["ran_eagerly"]:
            core.set_meta("compile_ran_eagerly", json.dumps(events["ran_eagerly"]))
