"""What one node of a compiled graph is, read from the metadata dynamo and AOTAutograd
give it (python/ampscope/_compiled.py reads the graphs): its op and dtypes, the script's
call it was traced from, autocast's regions in the graph, and the module paths dynamo's
sources and a compiled block's graph name."""
from __future__ import annotations

import os

import torch

_TORCH_DIR = os.path.dirname(torch.__file__)
_REASON_CHARS = 300  # a reason is kept to its first line, at most this long


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tensor(value):
    return value if isinstance(value, torch.Tensor) else None


def _shape(t) -> list[int]:
    out = []
    for d in t.shape:
        try:
            out.append(int(d))
        except (TypeError, ValueError):  # an unbacked symbolic size: no value to show
            out.append(-1)
    return out


def _val(arg):
    return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None


def _op_name(node) -> str | None:
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
        return None
    return target._schema.name  # "aten::addmm", "prims::convert_element_type"


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else "")[:_REASON_CHARS]


def _source_fn(node) -> str | None:
    stack = node.meta.get("source_fn_stack")
    if not stack:
        return None
    fn = stack[-1][1]
    return fn if isinstance(fn, str) else getattr(fn, "__name__", str(fn))


def _dynamo_call(node) -> str | None:
    """The dynamo graph node (one call in the script's code) an AOTAutograd node was traced from."""
    stack = node.meta.get("source_fn_stack")
    return stack[-1][0] if stack else None


def _in_autograd_function(node) -> bool:
    """Whether dynamo traced the node inside a custom autograd.Function's forward or backward."""
    return any(entry[0] == "autograd.function" for entry in node.meta.get("source_fn_stack") or ())


def _autocast_off_calls(mod) -> dict:
    """Dynamo's calls (its graph's node names, which AOTAutograd's nodes name first in
    source_fn_stack) run where the compiled code turned autocast off for a device whose
    autocast is on around the graph (Llama's rotary angles: autocast(enabled=False) inside
    the model, the script's region around it): node name -> device type. A custom
    autograd.Function's body (custom_fwd's region) is a graph of its own, whose calls are
    keyed by their source_fn_stack names (("autograd.function", "mm")), as AOTAutograd's
    nodes carry them; a key two bodies disagree on is left out."""
    off = _autocast_off_nodes(mod.graph, lambda node: node.name)
    decided: dict[tuple, str | None] = {}

    def names(n):
        return tuple(entry[0] for entry in n.meta.get("source_fn_stack") or ())
    for node in mod.graph.nodes:
        body = getattr(mod, node.target, None) if node.op == "get_attr" else None
        if not isinstance(body, torch.fx.GraphModule):
            continue
        body_off = _autocast_off_nodes(body.graph, names)
        for n in body.graph.nodes:
            if n.op in ("call_function", "call_method") and (key := names(n)):
                device = body_off.get(key)
                decided[key] = device if decided.get(key, device) == device else None
    off.update({key: device for key, device in decided.items() if device is not None})
    return off


def _autocast_may_act(mod) -> bool:
    """Whether autocast was on for some device while dynamo's graph was traced (the script's
    region around it), or the graph turns it on itself (a compiled function holding the
    region): else no cast in it is autocast's. A model trained in bf16 without autocast
    (its parameters bf16, or FSDP's param_dtype) decomposes LayerNorm and GELU with casts
    of their own, which read as autocast's where none ran."""
    for device in ("cuda", "cpu", "xpu", "hpu", "mps"):
        try:
            if torch.is_autocast_enabled(device):
                return True
        except (RuntimeError, ValueError):  # a device type this build does not know
            continue
    enter = getattr(torch.amp.autocast_mode, "_enter_autocast", None)
    graphs = [mod.graph] + [body.graph for node in mod.graph.nodes if node.op == "get_attr"
                            and isinstance(body := getattr(mod, node.target, None), torch.fx.GraphModule)]
    return any(enter is not None and node.target is enter and len(node.args) >= 3 and bool(node.args[2])
               for graph in graphs for node in graph.nodes)


def _under(module: str, root: str | None) -> bool:
    return root is not None and (module == root or module.startswith(root + "."))


def _renamed(module: str, root: str | None, instance: str | None) -> str:
    """A graph node's module path for a call the graph made for `instance`: one graph serves
    every block alike (`for block in layers: block.compile()`, torchtitan's and HF's
    recipe), and names the modules of the block it was traced on (`root`)."""
    if instance is None or instance == root or not _under(module, root):
        return module
    return instance + module[len(root):]


def _autocast_off_nodes(graph, key_of) -> dict:
    """A graph's calls run inside an autocast(enabled=False) region for a device whose
    autocast is on around it: key_of(node) -> device type."""
    enter = getattr(torch.amp.autocast_mode, "_enter_autocast", None)
    leave = getattr(torch.amp.autocast_mode, "_exit_autocast", None)
    off, regions = {}, []  # regions: (enter node, device type, enabled), innermost last
    turned_off = []  # the devices the open regions turn off, as their innermost says
    for node in graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        if enter is not None and node.target is enter and len(node.args) >= 3:
            regions.append((node, node.args[0], bool(node.args[2])))
        elif leave is not None and node.target is leave:
            regions = [r for r in regions if r[0] not in node.args]
        else:
            for device in turned_off:
                off[key_of(node)] = device
            continue
        innermost = {device: enabled for _, device, enabled in regions}
        turned_off = [device for device, enabled in innermost.items()
                      if not enabled and isinstance(device, str) and torch.is_autocast_enabled(device)]
    return off


def _strip_dynamo_source(fqn: str) -> str:
    """"L['self'].layers[0]" -> "layers.0": a module path from dynamo's source text."""
    path = fqn
    if path.startswith(("L[", "G[")):
        end = path.find("]")
        path = path[end + 1:] if end >= 0 else ""
    path = path.replace("[", ".").replace("]", "").replace("'", "").replace('"', "")
    return ".".join(p for p in path.split(".") if p)


def _frame_name(frame) -> str:
    """The function dynamo recompiles: for a compiled module, dynamo's frame around
    its call (a torch file) holds the module (or its bound method) as `fn`."""
    code = frame.f_code
    fn = frame.f_locals.get("fn")
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if code.co_filename.startswith(_TORCH_DIR) and isinstance(owner, torch.nn.Module):
        return f"{type(owner).__name__} (a torch.compile'd module)"
    return f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})"
