#pragma once
// The scales of precision readiness's simulated formats, one scaling group at a time,
// from the group's amax: plain float arithmetic that g++ and nvcc compile alike. The
// CPU's pass (profiler/capture/quantization_pass_cpu.cpp) runs them; the ATen path of
// profiler/capture/quantization_sim.cpp computes the same numbers as tensor ops, the
// reference the tests hold these to bit for bit (the same IEEE divides, multiplies
// and casts, in the same order, and the libm's log2 where the ATen op takes one).
//
// C++17 (the CUDA sources' standard).
#include <cmath>

#include "profiler/cuda/quantization_element_math.h"

namespace ampscope::profiler {

inline constexpr double kAmaxEps = 1e-12;  // torchao's guard against a zero amax (float8_utils.EPS)
inline constexpr float kE8M0Bias = 127;    // E8M0: a power-of-two scale's biased exponent

// A group's factors for quantize_element (quantization_element_math.h).
struct GroupScale {
  float quantize = 1;
  float dequantize = 1;
};

// torchao float8 (tensorwise and rowwise): scale = max / clamp(amax, 1e-12) in float64,
// then float32, optionally rounded down to a power of two; quantized as x * scale,
// dequantized as fp8 / scale.
AMPSCOPE_HOST_DEVICE inline float fp8_scale(float amax, double format_max, bool power_of_two) {
  const double amax_d = amax > kAmaxEps ? static_cast<double>(amax) : kAmaxEps;
  const float scale = static_cast<float>(format_max / amax_d);
  return power_of_two ? exp2f(floorf(log2f(scale))) : scale;
}

// MX (torchao to_mx, the RCEIL rule): the block's E8M0 exponent ceil(log2(amax / max)),
// clamped to [-127, 127]; quantized times 2^-exponent (times 1 at the biased exponent 0,
// as torchao), dequantized times 2^exponent.
AMPSCOPE_HOST_DEVICE inline GroupScale mx_scale(float block_amax, float format_max) {
  float exponent = ceilf(log2f(block_amax / format_max));
  exponent = exponent < -kE8M0Bias ? -kE8M0Bias : exponent > kE8M0Bias ? kE8M0Bias : exponent;
  const float biased = exponent + kE8M0Bias;
  GroupScale s;
  s.quantize = biased == 0 ? 1.0f : exp2f(kE8M0Bias - biased);
  s.dequantize = exp2f(biased - kE8M0Bias);
  return s;
}

// NVFP4 with a per-tensor scale (torchao nvfp4_quantize, per_tensor_amax_to_scale): the
// tensor's scale amax / (448 * 6) (an all-zero tensor takes amax 1); a 16-block's scale
// its amax / 6 over the tensor's, in e4m3's normal range, cast to e4m3.
AMPSCOPE_HOST_DEVICE inline float nvfp4_tensor_scale(float tensor_amax, float e4m3_max, float e2m1_max) {
  return (tensor_amax > 0 ? tensor_amax : 1.0f) / static_cast<float>(static_cast<double>(e4m3_max) * e2m1_max);
}

AMPSCOPE_HOST_DEVICE inline GroupScale nvfp4_scale(float block_amax, float tensor_scale, float e2m1_max,
                                                   float e4m3_max) {
  constexpr float kE4m3MinNormal = 0.015625f;  // 2^-6
  const RoundingGrid e4m3{3, -6};
  float block = (block_amax / e2m1_max) / tensor_scale;
  block = block < kE4m3MinNormal ? kE4m3MinNormal : block > e4m3_max ? e4m3_max : block;
  block = round_to_grid(block, e4m3);
  GroupScale s;
  s.quantize = (1.0f / tensor_scale) / block;
  s.dequantize = tensor_scale * block;
  return s;
}

}  // namespace ampscope::profiler
