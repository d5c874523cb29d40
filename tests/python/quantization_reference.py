"""Reference peer for tests/profiler/test_quantization_readiness.cpp: torchao's own
float8 and mx_formats conversions of crafted and random float32 matrices.

Usage: quantization_reference.py OUT
Writes OUT as text, every float as an exact hex float:
  case NAME ROWS COLS          then one line `x V...` (the input, row-major)
  format KEY                   then `dq V...` (dequantized, row-major),
                               `scales N V...` (dequantization multiplier per scaling group),
                               `sqnr DB` (torchao compute_error; inf when exact)
  skip KEY                     where torchao has no answer (NVFP4 of an all-zero tensor: NaN)
The scaling follows torchao 0.18's recipes: float8 tensorwise (scales as computed),
float8 rowwise (axiswise over the last dim, power-of-two scales), MX e4m3 with
32-blocks (to_mx, RCEIL: torchao's MXFP8 training default) and NVFP4 with a per-tensor scale (per_tensor_amax_to_scale).
A last dimension that is no multiple of the block is padded with zeros for the
block formats (torchao asserts on it), as ampscope does.
"""
import math
import sys

import torch
from torchao.float8.config import ScalingGranularity
from torchao.float8.float8_utils import compute_error, tensor_to_scale, to_fp8_saturated
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.mx_tensor import get_fp_scale, to_dtype, to_mx
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale


def fp8(x, dtype, rowwise):
    if rowwise:
        s = tensor_to_scale(x, dtype, scaling_granularity=ScalingGranularity.AXISWISE, axiswise_dim=-1,
                            round_scales_to_power_of_2=True)
    else:
        s = tensor_to_scale(x, dtype)
    dq = to_fp8_saturated(x.to(torch.float32) * s, dtype).to(torch.float32) / s
    return dq, (1.0 / s).reshape(-1)


def padded(x, block):
    cols = x.shape[1]
    extra = (-cols) % block
    return torch.nn.functional.pad(x, (0, extra)) if extra else x, cols


def mxfp8(x):
    p, cols = padded(x, 32)
    scale_e8m0, data = to_mx(p.contiguous(), torch.float8_e4m3fn, 32, scaling_mode=ScaleCalculationMode.RCEIL)
    dq = to_dtype(data, scale_e8m0, torch.float8_e4m3fn, 32, torch.float32)
    return dq[:, :cols], get_fp_scale(scale_e8m0).reshape(-1)


def nvfp4(x):
    p, cols = padded(x, 16)
    t = NVFP4Tensor.to_nvfp4(p.contiguous(), block_size=16, per_tensor_scale=per_tensor_amax_to_scale(p.abs().max()))
    return t.dequantize(torch.float32)[:, :cols], t.get_hp_scales().reshape(-1)


FORMATS = {
    "fp8_e4m3_tensorwise": lambda x: fp8(x, torch.float8_e4m3fn, False),
    "fp8_e4m3_rowwise": lambda x: fp8(x, torch.float8_e4m3fn, True),
    "fp8_e5m2_tensorwise": lambda x: fp8(x, torch.float8_e5m2, False),
    "fp8_e5m2_rowwise": lambda x: fp8(x, torch.float8_e5m2, True),
    "mxfp8": mxfp8,
    "nvfp4": nvfp4,
}


def cases():
    g = torch.Generator().manual_seed(30)
    yield "normal", torch.randn(64, 256, generator=g)
    yield "tiny_normal", torch.randn(32, 96, generator=g) * 1e-6
    yield "lognormal", torch.exp(3 * torch.randn(32, 128, generator=g)) * torch.randn(32, 128, generator=g).sign()
    x = torch.randn(32, 128, generator=g)
    x.view(-1)[torch.randint(0, x.numel(), (12,), generator=g)] *= 1e4
    yield "sparse_outliers", x
    x = torch.randn(16, 64, generator=g) * 0.02
    x[:, 5] *= 1000.0
    yield "outlier_channel", x
    x = torch.randn(16, 64, generator=g)
    x[3] = 0.0
    x[:, 32:48] = 0.0
    x[7, 10] = 0.0
    yield "zeros", x
    x = torch.randn(8, 128, generator=g) * 1e-3
    x[:, ::32] = 3.0  # one huge value per 32-block
    yield "one_huge_per_block", x
    x = torch.randn(8, 64, generator=g)
    x[2, :32] = torch.randn(32, generator=g) * 1e-39  # float32 subnormals: an MX block exponent at -127
    x[5, 16:32] = 1e-30
    yield "subnormal_blocks", x
    yield "ragged_cols", torch.randn(12, 40, generator=g)
    grid = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -6.0])
    yield "fp4_ties", torch.stack([grid, grid * 2.0 ** -8, grid * 448.0 / 6.0, grid * 0.1])
    yield "all_zero", torch.zeros(4, 32)


def hexes(t):
    return " ".join(float(v).hex() for v in t.reshape(-1).tolist())


with open(sys.argv[1], "w") as out:
    for name, x in cases():
        x = x.to(torch.float32).contiguous()
        out.write(f"case {name} {x.shape[0]} {x.shape[1]}\n")
        out.write(f"x {hexes(x)}\n")
        for key, convert in FORMATS.items():
            if key == "nvfp4" and not torch.any(x != 0):
                out.write(f"skip {key}\n")
                continue
            dq, scales = convert(x)
            sqnr = compute_error(x, dq).item()
            out.write(f"format {key}\n")
            out.write(f"dq {hexes(dq)}\n")
            out.write(f"scales {scales.numel()} {hexes(scales)}\n")
            out.write(f"sqnr {'inf' if math.isinf(sqnr) or math.isnan(sqnr) else float(sqnr).hex()}\n")
