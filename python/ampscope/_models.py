"""What the capture reads off the script's models and its __main__: the names watch() gave,
module paths without torch.compile's wrapper, a model call's batch, transformers' Conv1D,
the tensor a module's output carries, a parametrized weight, and the models the script holds."""
from __future__ import annotations

import sys
import weakref

import torch


_watched: "weakref.WeakKeyDictionary[torch.nn.Module, str]" = weakref.WeakKeyDictionary()


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
