"""Time inside torch.compile'd code: each kernel inductor generated, with the graph
ops it fused, timed by the C++ op observer.

Compiled code runs fused kernels, not the graph's ops, so the ops _compiled.py reads
have no time of their own. Inductor can say both what ran and what it fused:
- `config.cpp.enable_kernel_profile` makes every generated C++ kernel open a
  RecordFunction (scope FUNCTION) named `graph_<id>_<kernel>`, which the op observer
  records as an op: its time, and on a GPU the kernels it launched. Extern kernels
  (mm, addmm, bmm, convolutions) run as ATen ops and are recorded anyway.
- `config.trace.provenance_tracking_level = 1` makes inductor map each kernel to the
  post-grad graph nodes it fused (CompiledFxGraph.inductor_provenance_mapping_str,
  kept in inductor's FX graph cache), and write a `[Provenance debug handles]`
  comment before each call in the generated code, in call order. All but one kind:
  a "mix order reduction" kernel (a GPU LayerNorm backward, torch 2.11's
  codegen/simd.py) gets no handle, only the "Topologically Sorted Source Nodes"
  comment every call has; its nodes are read from there (on an H200 these kernels
  were 5.8 % of a compiled GPT-2's GPU time, unattributed without it).
Post-grad nodes keep the names of the AOTAutograd graph _compiled.py reads, so a
kernel's fused ops get the dtypes, module paths and autocast categories read there.

Both settings are on only while a capture runs; the user's values come back after.
enable_kernel_profile is part of inductor's FX graph cache key: the first capture of
a model compiles it again (later captures hit the cache, as runs without ampscope keep
theirs). The provenance level is not in the key, so an entry compiled with kernel
profiling but without provenance (TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 set by
hand) gives kernels with time but no fused ops.

Inductor fills the provenance mapping only for graphs compiled inside its
compile_fx call; AOTAutograd compiles the backward lazily, after it, where the mapping
comes back empty. compiling() therefore runs a backward compile inside inductor's own
reset_provenance_globals(), with the graph id it tests set, as the forward's is.

Each compiled graph's call runs inside an op of ours, `ampscope::compiled_graph::<n>`
(capture_module.cpp: a FUNCTION-scope RecordFunction, so it is a recorded op), whose
direct children are the graph's kernel and extern calls in order: the C++ side
(profiler/analysis/compiled_kernels.h) times each child by (graph, name, ordinal) and
the graph call itself, and joins them with the calls listed here.
"""
from __future__ import annotations

import contextlib
import json
import re
import threading

from . import _ampscope_capture as _core

MARKER_PREFIX = "ampscope::compiled_graph::"
# `torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_x_0_("graph_0_cpp_fused_x_0", nullptr);`
_RECORD_NAME = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\("([^"]+)"')
_HANDLE = re.compile(r"#\s*\[Provenance debug handles\]\s*(\S+)")
_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_MIX_ORDER = re.compile(r"#\s*Call mix order reduction kernel")
_SOURCE_NODES = re.compile(r"#\s*Topologically Sorted Source Nodes:\s*\[([^\]]*)\]")
_TRITON_RUN = re.compile(r"^\s*(triton_\w+)\.run\(")
# `buf9 = workspace_0[0 * 512 * 768 : (0 + 1) * 512 * 768].view(512, 768).sum(dim=0)`:
# the wrapper finishes a mix order reduction's column sums in ATen.
_WORKSPACE_SUM = re.compile(r"^\s*\w+\s*=\s*workspace_\d+\[.*\]\.view\(.*\)\.sum\(")


def _extern_op(kernel: str) -> str:
    """The ATen op an extern call records: "extern_kernels.addmm" -> "aten::addmm",
    "torch.ops.mkldnn._linear_pointwise.default" -> "mkldnn::_linear_pointwise"."""
    if kernel.startswith("extern_kernels."):
        return "aten::" + kernel.removeprefix("extern_kernels.")
    parts = kernel.removeprefix("torch.ops.").split(".")
    if len(parts) >= 2:
        return f"{parts[0]}::{parts[1]}"
    return kernel


class KernelProfiling:
    """Inductor's kernel profiling and provenance, on for one capture."""

    def __init__(self):
        self._saved = None
        self._local = threading.local()  # the CompiledFxGraphs a compile on this thread produced

    def enable(self):
        """Turns both settings on and watches CompiledFxGraph.post_compile, which runs
        after every inductor compile, cache hit or not."""
        if self._saved is not None:
            return
        try:  # dynamo, which calls this, imports inductor's config with any backend
            import torch._inductor.config as config
            from torch._inductor.output_code import CompiledFxGraph
        except ImportError:
            return

        self._saved = (config.cpp.enable_kernel_profile, config.trace.provenance_tracking_level,
                       CompiledFxGraph.__dict__["post_compile"])
        config.cpp.enable_kernel_profile = True
        if config.trace.provenance_tracking_level == 0:
            config.trace.provenance_tracking_level = 1
        original = self._saved[2]
        local = self._local

        def post_compile(graph, *args, **kwargs):
            outputs = getattr(local, "outputs", None)
            if outputs is not None:
                outputs.append(graph)
            return original(graph, *args, **kwargs)
        CompiledFxGraph.post_compile = post_compile

    def disable(self):
        if self._saved is None:
            return
        import torch._inductor.config as config
        from torch._inductor.output_code import CompiledFxGraph

        config.cpp.enable_kernel_profile, config.trace.provenance_tracking_level, post_compile = self._saved
        CompiledFxGraph.post_compile = post_compile
        self._saved = None

    @contextlib.contextmanager
    def compiling(self, backward: bool):
        """Around one AOTAutograd graph's compile: yields the list the inductor
        outputs of the compile land in (empty for other backends)."""
        outputs: list = []
        previous = getattr(self._local, "outputs", None)
        self._local.outputs = outputs
        try:
            if backward and self._saved is not None:
                import torch._inductor.debug as debug
                with debug.reset_provenance_globals():
                    debug._pre_grad_graph_id = -1  # truthy: dump_inductor_provenance_info maps kernels
                    yield outputs
            else:
                yield outputs
        finally:
            self._local.outputs = previous


def kernel_calls(output) -> list[dict]:
    """The calls one CompiledFxGraph makes, in order: {kernel, kind, nodes}, where
    kernel is the name its RecordFunction or ATen op is recorded under and nodes the
    post-grad graph nodes inductor says it computes."""
    source = getattr(output, "source_code", None) or ""
    try:
        mapping = json.loads(getattr(output, "inductor_provenance_mapping_str", None) or "{}")
    except ValueError:
        mapping = {}
    fused_nodes = mapping.get("cppCodeToPost", {}) if isinstance(mapping, dict) else {}
    records = {_GRAPH_PREFIX.sub("", name): name for name in _RECORD_NAME.findall(source)}
    calls = []
    mix_order = None  # inside a mix order reduction's call: the nodes its comment lists, once read
    finishing = None  # the nodes of the kernel whose workspace the sums being read finish
    for line in source.splitlines():
        if _MIX_ORDER.search(line):
            mix_order = []
            continue
        if _WORKSPACE_SUM.match(line) and calls and (calls[-1]["kind"] == "fused" or finishing):
            # The sums that finish a mix order reduction's workspace: aten::sum ops of
            # the graph's call, one per line, in order, computing part of that kernel's
            # nodes (on an H200, 2 % of a CUDA-graph GPT-2's backward GPU time).
            finishing = finishing or calls[-1]["nodes"]
            calls.append(dict(kernel="aten::sum", kind="extern", nodes=list(finishing)))
            continue
        finishing = None
        if mix_order is not None and _HANDLE.search(line):
            mix_order = None  # an inductor that gives these kernels a handle: its mapping, as for any call
        if mix_order is not None:
            nodes = _SOURCE_NODES.search(line)
            if nodes:
                mix_order = [n.strip() for n in nodes.group(1).split(",") if n.strip()]
            run = _TRITON_RUN.match(line)
            if run:
                calls.append(dict(kernel=run.group(1), kind="fused", nodes=mix_order))
                mix_order = None
            continue
        handle = _HANDLE.search(line)
        if not handle:
            continue
        kernel = handle.group(1).rsplit(":", 1)[0]
        nodes = list(fused_nodes.get(handle.group(1), []))
        if kernel in records:
            calls.append(dict(kernel=records[kernel], kind="fused", nodes=nodes))
        elif _is_extern(kernel):
            calls.append(dict(kernel=_extern_op(kernel), kind="extern", nodes=nodes))
        else:
            # A kernel inductor generated that opens no RecordFunction: a Triton kernel
            # on a GPU (triton_poi_fused_mm_0), named as CUPTI will see it launched.
            calls.append(dict(kernel=kernel, kind="fused", nodes=nodes))
    return calls


def _is_extern(kernel: str) -> bool:
    """Whether a provenance handle's kernel is an ATen op the wrapper calls
    (extern_kernels.mm, torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default)."""
    return kernel.startswith(("extern_kernels.", "torch.ops."))


def graph_scope(compiled, number: int):
    """`compiled` run inside the op `ampscope::compiled_graph::<number>`, keeping its
    boxed calling convention."""
    scope = _core.intern_scope(f"{MARKER_PREFIX}{number}")
    boxed = getattr(compiled, "_boxed_call", False)

    def run(*args):
        depth = _core.scope_depth()
        _core.enter_op_scope(scope)
        try:
            return compiled(*args)
        finally:
            _core.unwind_scopes(depth)
    run._boxed_call = boxed
    return run
