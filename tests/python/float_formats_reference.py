"""Prints torch.finfo's limits of fp16, bf16 and the fp8 formats, as exact hex floats,
for tests/profiler_core/test_float_formats.cpp: one line per dtype,
`dtype max smallest_normal smallest_subnormal has_inf mantissa_bits`."""
import math

import torch

for name in ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]:
    dtype = getattr(torch, name)
    info = torch.finfo(dtype)
    # finfo has no smallest_subnormal: it is smallest_normal * eps (one step of the
    # last mantissa bit at the lowest exponent); check that a cast keeps it and
    # flushes half of it, so the number is the format's, not a derivation's.
    subnormal = info.smallest_normal * info.eps
    kept = torch.tensor([subnormal, subnormal / 2], dtype=torch.float64).to(dtype).to(torch.float64)
    assert kept[0].item() == subnormal and kept[1].item() == 0.0, name
    has_inf = bool(torch.isinf(torch.tensor([math.inf]).to(dtype).float()).item())
    print(name, info.max.hex(), info.smallest_normal.hex(), subnormal.hex(), int(has_inf),
          int(round(-math.log2(info.eps))))
