#include "profiler/capture/quantization_sim.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "profiler/float_formats.h"

namespace ampscope::profiler {
namespace {

// torchao's guard against a zero amax (float8_utils.EPS).
constexpr double kAmaxEps = 1e-12;
constexpr double kE8M0Bias = 127;  // E8M0: a power-of-two scale's biased exponent

at::ScalarType fp8_dtype(QuantElement e) {
  return e == QuantElement::e5m2 ? at::kFloat8_e5m2 : at::kFloat8_e4m3fn;
}

at::Tensor saturated_mask(const at::Tensor& scaled, QuantElement e) {
  const QuantElementLimits lim = quant_element_limits(e);
  const at::Tensor a = scaled.abs();
  return lim.saturates_at_bound ? a >= lim.saturation_bound : a > lim.saturation_bound;
}

// Round to nearest even onto e2m1's grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}, for |x| <= 6:
// the grid step is 0.5 below 2, 1 below 4, 2 above; every binade starts at an even
// multiple of its step, so round-half-even on the multiple is the format's rounding.
at::Tensor round_to_e2m1(const at::Tensor& clamped) {
  const at::Tensor a = clamped.abs();
  const at::Tensor step = at::where(a < 2.0, 0.5, at::where(a < 4.0, 1.0, 2.0)).to(a.scalar_type());
  return at::copysign(at::round(a / step) * step, clamped);
}

// Pads the last dimension with zeros to a multiple of `block` and views it as [rows, blocks, block].
at::Tensor as_blocks(const at::Tensor& m, int block) {
  const int64_t cols = m.size(1);
  const int64_t padded = (cols + block - 1) / block * block;
  const at::Tensor p = padded == cols ? m : at::constant_pad_nd(m, {0, padded - cols});
  return p.reshape({m.size(0), padded / block, block});
}

at::Tensor unblock(const at::Tensor& blocked, int64_t cols) {
  return blocked.reshape({blocked.size(0), -1}).narrow(1, 0, cols);
}

// torchao float8: scale = fp8_max / clamp(amax, EPS) in float64, then float32,
// optionally rounded down to a power of two; x * scale clamped to ±max, cast;
// dequantized as fp8 / scale.
SimulatedQuantization fp8_scaled(const at::Tensor& m, const QuantFormatSpec& spec) {
  const QuantElementLimits lim = quant_element_limits(spec.element);
  const at::Tensor amax = spec.scaling == QuantScaling::rowwise ? m.abs().amax({1}, /*keepdim=*/true)
                                                                : m.abs().max().reshape({1, 1});
  at::Tensor scale = (lim.max / amax.to(at::kDouble).clamp_min(kAmaxEps)).to(at::kFloat);
  if (spec.power_of_two_scales) scale = at::exp2(at::floor(at::log2(scale)));
  const at::Tensor scaled = m * scale;
  const at::Tensor cast = scaled.clamp(-lim.max, lim.max).to(fp8_dtype(spec.element)).to(at::kFloat);
  return {cast / scale, scale.reciprocal(), saturated_mask(scaled, spec.element)};
}

// torchao to_mx with the RCEIL rule (NVIDIA's, cuBLAS "Computing scaling and
// conversion factors for FP8 with UE8M0 scales"; the default of torchao's MXFP8
// training recipes): the block's E8M0 exponent is ceil(log2(amax / max)), clamped to
// [-127, 127], so no element goes past max; x times 2^-exponent (times 1 for the
// exponent -127, i.e. biased 0, as torchao), clamped, cast; dequantized times
// 2^exponent. (The OCP spec's FLOOR rule clamps a block's largest values instead.)
SimulatedQuantization mx_scaled(const at::Tensor& m, const QuantFormatSpec& spec) {
  const QuantElementLimits lim = quant_element_limits(spec.element);
  const at::Tensor blocks = as_blocks(m, spec.block_size);
  const at::Tensor descale = blocks.abs().amax({2}, /*keepdim=*/true) / lim.max;
  const at::Tensor biased = at::ceil(at::log2(descale)).clamp(-kE8M0Bias, kE8M0Bias) + kE8M0Bias;
  const at::Tensor multiplier = at::exp2(biased - kE8M0Bias);
  const at::Tensor scaled = blocks * at::where(biased == 0, at::ones_like(biased), at::exp2(kE8M0Bias - biased));
  const at::Tensor cast = scaled.clamp(-lim.max, lim.max).to(fp8_dtype(spec.element)).to(at::kFloat);
  const int64_t cols = m.size(1);
  return {unblock(cast * multiplier, cols), multiplier.squeeze(2), unblock(saturated_mask(scaled, spec.element), cols)};
}

// torchao nvfp4_quantize with a per-tensor scale (per_tensor_amax_to_scale):
// tensor scale = amax / (448 * 6); block scale = block amax / 6 / tensor scale,
// clamped to e4m3's normal range and cast to e4m3; x times (1 / tensor scale) /
// block scale, clamped to ±6, rounded to e2m1; dequantized times tensor scale *
// block scale. An all-zero tensor (torchao: NaN) takes amax 1: zeros.
SimulatedQuantization nvfp4_scaled(const at::Tensor& m, const QuantFormatSpec& spec) {
  const double e2m1_max = quant_element_limits(QuantElement::e2m1).max;
  const double e4m3_max = quant_element_limits(QuantElement::e4m3).max;
  const at::Tensor blocks = as_blocks(m, spec.block_size);
  const at::Tensor amax = m.abs().max();
  const at::Tensor tensor_scale = at::where(amax > 0, amax, at::ones_like(amax)) / (e4m3_max * e2m1_max);
  const at::Tensor block_scale = blocks.abs().amax({2}, /*keepdim=*/true) / e2m1_max;
  // torchao keeps the block scales in e4m3's normal range.
  const double e4m3_min_normal = float_format(FloatFormat::fp8_e4m3fn).min_normal;
  const at::Tensor block_scale_e4m3 =
      (block_scale / tensor_scale).clamp(e4m3_min_normal, e4m3_max).to(at::kFloat8_e4m3fn).to(at::kFloat);
  const at::Tensor scaled = blocks * (tensor_scale.reciprocal() / block_scale_e4m3);
  const at::Tensor multiplier = tensor_scale * block_scale_e4m3;
  const at::Tensor dequantized = round_to_e2m1(scaled.clamp(-e2m1_max, e2m1_max)) * multiplier;
  const int64_t cols = m.size(1);
  return {unblock(dequantized, cols), multiplier.squeeze(2),
          unblock(saturated_mask(scaled, QuantElement::e2m1), cols)};
}

}  // namespace

at::Tensor scaling_matrix(const at::Tensor& t, TensorRole role) {
  at::Tensor m = t.detach();
  if (m.dim() == 0) m = m.reshape({1, 1});
  else if (m.dim() == 1) m = m.reshape({1, -1});
  else if (role == TensorRole::weight) m = m.reshape({m.size(0), -1});
  else m = m.reshape({-1, m.size(-1)});
  return at::nan_to_num(m.to(at::kFloat), 0.0, 0.0, 0.0);
}

SimulatedQuantization simulate_quantization(const at::Tensor& matrix, QuantFormat format) {
  const QuantFormatSpec& spec = quant_format(format);
  switch (spec.scaling) {
    case QuantScaling::tensorwise:
    case QuantScaling::rowwise: return fp8_scaled(matrix, spec);
    case QuantScaling::block:
      return spec.element == QuantElement::e2m1 ? nvfp4_scaled(matrix, spec) : mx_scaled(matrix, spec);
  }
  return {};
}

at::Tensor quantization_sums(const at::Tensor& matrix) {
  // Squares of x / amax: a gradient's 1e-20 squared is below float32's range.
  const at::Tensor amax = matrix.abs().max();
  const at::Tensor inverse = at::where(amax > 0, amax.reciprocal(), at::ones_like(amax));
  const at::Tensor nonzero = matrix != 0;
  const at::Tensor energy = amax.to(at::kDouble).square();
  const at::Tensor signal = (matrix * inverse).square().sum().to(at::kDouble) * energy;
  const at::Tensor nonzero_count = nonzero.sum().to(at::kDouble);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<at::Tensor> rows;
  rows.reserve(kQuantFormatCount);
  for (const QuantFormatSpec& spec : kQuantFormats) {
    const SimulatedQuantization q = simulate_quantization(matrix, spec.format);
    // Groups holding a nonzero element: where a tensorwise or rowwise group is all
    // zeros its amax and hence its multiplier is 0 too (block formats: the amax).
    const at::Tensor group_log2 = at::log2(q.scales.to(at::kDouble));
    at::Tensor live_group;
    if (spec.scaling == QuantScaling::block) {
      live_group = as_blocks(matrix, spec.block_size).abs().amax({2}) > 0;
    } else {
      live_group = (spec.scaling == QuantScaling::rowwise ? matrix.abs().amax({1}, true) : amax.reshape({1, 1})) > 0;
    }
    rows.push_back(at::stack({
        nonzero_count,
        (nonzero & (q.dequantized == 0)).sum().to(at::kDouble),
        q.saturated.sum().to(at::kDouble),
        signal,
        ((matrix - q.dequantized) * inverse).square().sum().to(at::kDouble) * energy,
        at::where(live_group, group_log2, inf).min(),
        at::where(live_group, group_log2, -inf).max(),
    }));
  }
  return at::stack(rows);
}

std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const at::Tensor& host_sums, int64_t elements) {
  const at::Tensor sums = host_sums.to(at::kDouble).contiguous();
  const auto acc = sums.accessor<double, 2>();
  std::array<QuantMetrics, kQuantFormatCount> out{};
  for (int f = 0; f < kQuantFormatCount; ++f) {
    QuantMetrics& m = out[f];
    m.elements = elements;
    m.nonzero = static_cast<int64_t>(acc[f][0]);
    m.flushed = static_cast<int64_t>(acc[f][1]);
    m.saturated = static_cast<int64_t>(acc[f][2]);
    m.signal = acc[f][3];
    m.noise = acc[f][4];
    if (std::isfinite(acc[f][5]) && std::isfinite(acc[f][6])) {
      m.scale_log2_min = acc[f][5];
      m.scale_log2_max = acc[f][6];
    }
  }
  return out;
}

}  // namespace ampscope::profiler
