"""FSDP's part in a script's precision, and its sharded parameters.

FSDP runs a model in reduced precision without autocast: fully_shard's MixedPrecisionPolicy
(FSDP2) and FullyShardedDataParallel's MixedPrecision (FSDP1) cast the parameters to
param_dtype as they are all-gathered, so the forward and backward compute in bf16/fp16 while
the sharded fp32 parameters stay the optimizer's master weights, and gradients are reduced in
reduce_dtype. A session that only looked for autocast regions read such a run as fp32.

FSDP2's parameters are DTensors: a wrapper that holds no data of its own, whose gradient is a
DTensor too. The statistics read what this rank holds, the local shard of each gradient.
"""
from __future__ import annotations

import sys

import torch

# torch.bfloat16 -> "bf16", as the session's precisions are spelled; None stays None.
_SHORT = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64"}


def _short(dtype) -> str | None:
    return None if dtype is None else _SHORT.get(dtype, str(dtype).removeprefix("torch."))


# Looked up where the script imported them, never imported here: a script without FSDP or
# DTensors does not pay for loading torch.distributed's packages.
def _dtensor_type():
    module = sys.modules.get("torch.distributed.tensor")
    return getattr(module, "DTensor", None)


def local_parameter(p):
    """`p` as the statistics can read it: a DTensor parameter (FSDP2, tensor parallel) as this
    rank's shard, its gradient's shard as .grad; any other tensor as it is."""
    dtensor = _dtensor_type()
    if dtensor is None or not isinstance(p, dtensor):
        return p
    local = p.to_local().detach()
    grad = p.grad
    if grad is not None:
        local.grad = grad.to_local() if isinstance(grad, dtensor) else grad
    return local


def is_sharded(p) -> bool:
    dtensor = _dtensor_type()
    return dtensor is not None and isinstance(p, dtensor)


def _policy_of(module):
    """("fully_shard" or "FullyShardedDataParallel", param, reduce, output dtypes) for a module
    FSDP wraps, else None."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    fsdp_module = getattr(fsdp, "FSDPModule", None)
    if fsdp_module is not None and isinstance(module, fsdp_module):
        try:
            policy = module._get_fsdp_state()._mp_policy
        except AttributeError:  # another torch's internals: the policy is unknown, not absent
            return ("fully_shard", "unknown", "unknown", "unknown")
        return ("fully_shard", _short(policy.param_dtype), _short(policy.reduce_dtype),
                _short(policy.output_dtype))
    fsdp1 = getattr(fsdp, "FullyShardedDataParallel", None)
    if fsdp1 is not None and isinstance(module, fsdp1):
        policy = getattr(module, "mixed_precision", None)
        if policy is None:
            return ("FullyShardedDataParallel", None, None, None)
        return ("FullyShardedDataParallel", _short(policy.param_dtype), _short(policy.reduce_dtype), None)
    return None


def mixed_precision_policies(model) -> list:
    """The FSDP policies in `model` (itself and its submodules), one entry per distinct policy
    with the number of modules wrapped under it, in the order first met."""
    if "torch.distributed.fsdp" not in sys.modules:
        return []
    found = {}
    for module in model.modules():
        policy = _policy_of(module)
        if policy is not None:
            found[policy] = found.get(policy, 0) + 1
    return [{"api": api, "param_dtype": param, "reduce_dtype": reduce, "output_dtype": output, "modules": n}
            for (api, param, reduce, output), n in found.items()]
