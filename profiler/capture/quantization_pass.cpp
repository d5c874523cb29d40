#include "profiler/capture/quantization_pass.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/quantization_block_sums_cpu.h"
#include "profiler/cuda/quantization_scale_math.h"
#include "profiler/float_formats.h"

namespace ampscope::profiler {
namespace {

// A matrix's rows into the buffer as float32 magnitudes, non-finite values as 0,
// each row padded with zeros: what the ATen path's copy, abs_ and nan_to_num_ make,
// in one loop. On the CPU that path is five view ops and a copy per matrix (some
// microseconds of dispatch each, and a sampled step of a 64-layer MLP holds 195
// matrices), then two more passes over the buffer.
template <typename T>
void rows_to_magnitudes(const T* source, const PlannedMatrix& m, float* out) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / m.padded_cols);
  at::parallel_for(0, m.rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* row = source + r * m.cols;
      float* to = out + r * m.padded_cols;
      for (int64_t c = 0; c < m.cols; ++c) {
        const float magnitude = std::fabs(static_cast<float>(row[c]));
        to[c] = std::isfinite(magnitude) ? magnitude : 0.0f;
      }
      std::fill(to + m.cols, to + m.padded_cols, 0.0f);
    }
  });
}

// The amax of every 16-block of the packed magnitudes.
void half_block_amax(const float* magnitudes, int64_t half_blocks, float* out) {
  at::parallel_for(0, half_blocks, int64_t{1} << 12, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* x = magnitudes + b * 16;
      float m = 0;
      for (int i = 0; i < 16; ++i) m = x[i] > m ? x[i] : m;
      out[b] = m;
    }
  });
}

// The smallest and largest dequantization multiplier of a matrix's live groups.
struct ScaleRange {
  float min = std::numeric_limits<float>::infinity();
  float max = 0;
  void add(bool live, float multiplier) {
    if (!live) return;
    min = std::min(min, multiplier);
    max = std::max(max, multiplier);
  }
};

}  // namespace

RoundingGrid rounding_grid(QuantElement e) {
  // e2m1 is 1 mantissa bit with normal exponents from 0 (0.5 its one subnormal).
  if (e == QuantElement::e2m1) return {1, 0};
  const FloatFormatLimits& f = float_format(e == QuantElement::e5m2 ? FloatFormat::fp8_e5m2 : FloatFormat::fp8_e4m3fn);
  return {f.mantissa_bits, static_cast<int>(std::lround(std::log2(f.min_normal)))};
}

ElementFormat element_format(const QuantFormatSpec& spec) {
  const QuantElementLimits lim = quant_element_limits(spec.element);
  ElementFormat e;
  e.max = static_cast<float>(lim.max);
  e.saturation_bound = static_cast<float>(lim.saturation_bound);
  e.saturates_at_bound = lim.saturates_at_bound;
  e.divide = spec.scaling != QuantScaling::block;  // torchao's fp8 dequantizes as fp8 / scale
  e.grid = rounding_grid(spec.element);
  return e;
}

bool packs_on_cpu(const PlannedMatrix& m) { return m.source.is_cpu() && widened_on_the_cpu(m.source.scalar_type()); }

void pack_rows_cpu(const PlannedMatrix& m, float* out) {
  // Rows in the source's own order (a no-op for the usual contiguous tensor).
  const at::Tensor source = m.source.contiguous();
  switch (source.scalar_type()) {
    case at::kFloat: return rows_to_magnitudes(source.const_data_ptr<float>(), m, out);
    case at::kBFloat16: return rows_to_magnitudes(source.const_data_ptr<at::BFloat16>(), m, out);
    case at::kHalf: return rows_to_magnitudes(source.const_data_ptr<at::Half>(), m, out);
    case at::kDouble: return rows_to_magnitudes(source.const_data_ptr<double>(), m, out);
    default: {  // fp8 and the like: widened by ATen first
      PlannedMatrix widened = m;
      widened.source = source.to(at::kFloat);
      return pack_rows_cpu(widened, out);
    }
  }
}

at::Tensor assemble_pass_sums(const at::Tensor& per_matrix, const at::Tensor& matrix_amax,
                              const at::Tensor& scale_range) {
  const int64_t matrices = per_matrix.size(0);
  const at::Tensor energy = matrix_amax.to(at::kDouble).square().view({matrices, 1, 1});
  const at::Tensor nonzero = per_matrix.narrow(1, 0, 1).view({matrices, 1, 1}).expand({matrices, kQuantFormatCount, 1});
  const at::Tensor signal = (per_matrix.narrow(1, 1, 1).view({matrices, 1, 1}) * energy).expand_as(nonzero);
  // Per format: saturated, nonzero dequantized, squared error over amax squared.
  const at::Tensor formats = per_matrix.narrow(1, 2, 3 * kQuantFormatCount).reshape({matrices, kQuantFormatCount, 3});
  return at::cat({nonzero, nonzero - formats.narrow(2, 1, 1), formats.narrow(2, 0, 1), signal,
                  formats.narrow(2, 2, 1) * energy, scale_range.log2()},
                 2);
}

at::Tensor pass_sums_cpu(const std::vector<PlannedMatrix>& pass) {
  const auto matrices = static_cast<int64_t>(pass.size());
  std::vector<int64_t> blocks_per_matrix;
  int64_t total = 0;
  for (const PlannedMatrix& m : pass) {
    blocks_per_matrix.push_back(m.padded() / kBlockSumsBlock);
    total += m.padded();
  }
  const at::Tensor buffer = at::empty({total}, at::kFloat);
  float* packed = buffer.mutable_data_ptr<float>();
  for (int64_t i = 0, offset = 0; i < matrices; offset += pass[i].padded(), ++i)
    pack_rows_cpu(pass[i], packed + offset);

  // The amax of every scaling group: 16- and 32-blocks, rows, matrices.
  const int64_t blocks32 = total / kBlockSumsBlock;
  std::vector<float> amax16(static_cast<size_t>(2 * blocks32)), amax32(static_cast<size_t>(blocks32));
  half_block_amax(packed, 2 * blocks32, amax16.data());
  for (int64_t b = 0; b < blocks32; ++b) amax32[b] = std::max(amax16[2 * b], amax16[2 * b + 1]);
  std::vector<float> row_amax;
  at::Tensor matrix_amax = at::empty({matrices}, at::kFloat);
  float* amax = matrix_amax.mutable_data_ptr<float>();
  std::vector<float> inverse_amax(static_cast<size_t>(matrices));
  for (int64_t i = 0, block = 0; i < matrices; ++i) {
    const PlannedMatrix& m = pass[i];
    const int64_t blocks_per_row = m.padded_cols / kBlockSumsBlock;
    float matrix = m.full_amax.defined() ? m.full_amax.item<float>() : 0.0f;
    for (int64_t r = 0; r < m.rows; ++r, block += blocks_per_row) {
      const float row = *std::max_element(amax32.begin() + block, amax32.begin() + block + blocks_per_row);
      row_amax.push_back(row);
      matrix = std::max(matrix, row);
    }
    amax[i] = matrix;
    // So that squares stay in float32's range (a gradient's 1e-20 squared is not).
    inverse_amax[i] = matrix > 0 ? 1.0f / matrix : 1.0f;
  }

  // Each format's factors per scaling group, and each matrix's range of its scales.
  at::Tensor scale_range = at::empty({matrices, kQuantFormatCount, 2}, at::kDouble);
  auto range = scale_range.accessor<double, 3>();
  std::vector<std::vector<float>> quantize(kQuantFormatCount), dequantize(kQuantFormatCount);
  std::vector<BlockFormat> formats;
  const float e2m1_max = static_cast<float>(quant_element_limits(QuantElement::e2m1).max);
  const float e4m3_max = static_cast<float>(quant_element_limits(QuantElement::e4m3).max);
  for (int f = 0; f < kQuantFormatCount; ++f) {
    const QuantFormatSpec& spec = kQuantFormats[f];
    const double format_max = quant_element_limits(spec.element).max;
    const bool nvfp4 = spec.element == QuantElement::e2m1;
    std::vector<float>& q = quantize[f];
    std::vector<float>& dq = dequantize[f];
    q.resize(static_cast<size_t>(nvfp4 ? 2 * blocks32 : blocks32));
    dq.resize(q.size());
    for (int64_t i = 0, block = 0, row = 0; i < matrices; ++i) {
      const PlannedMatrix& m = pass[i];
      const int64_t blocks_per_row = m.padded_cols / kBlockSumsBlock;
      ScaleRange scales;
      if (spec.scaling != QuantScaling::block) {
        const bool rowwise = spec.scaling == QuantScaling::rowwise;
        const float tensor_scale = fp8_scale(amax[i], format_max, spec.power_of_two_scales);
        if (!rowwise) scales.add(amax[i] > 0, 1.0f / tensor_scale);
        for (int64_t r = 0; r < m.rows; ++r, ++row) {
          const float scale = rowwise ? fp8_scale(row_amax[row], format_max, spec.power_of_two_scales) : tensor_scale;
          if (rowwise) scales.add(row_amax[row] > 0, 1.0f / scale);
          std::fill_n(q.begin() + block, blocks_per_row, scale);
          std::fill_n(dq.begin() + block, blocks_per_row, scale);
          block += blocks_per_row;
        }
      } else if (nvfp4) {
        const float tensor_scale = nvfp4_tensor_scale(amax[i], e4m3_max, e2m1_max);
        for (int64_t g = 2 * block, end = g + 2 * blocks_per_matrix[i]; g < end; ++g) {
          const GroupScale s = nvfp4_scale(amax16[g], tensor_scale, e2m1_max, e4m3_max);
          q[g] = s.quantize;
          dq[g] = s.dequantize;
          scales.add(amax16[g] > 0, s.dequantize);
        }
        block += blocks_per_matrix[i];
      } else {
        for (int64_t b = block, end = block + blocks_per_matrix[i]; b < end; ++b) {
          const GroupScale s = mx_scale(amax32[b], static_cast<float>(format_max));
          q[b] = s.quantize;
          dq[b] = s.dequantize;
          scales.add(amax32[b] > 0, s.dequantize);
        }
        block += blocks_per_matrix[i];
      }
      range[i][f][0] = scales.min;
      range[i][f][1] = scales.max;
    }
    formats.push_back({q.data(), dq.data(), nvfp4, element_format(spec)});
  }

  at::Tensor per_matrix = at::empty({matrices, block_sum_columns(kQuantFormatCount)}, at::kDouble);
  block_sums_cpu(packed, blocks_per_matrix, inverse_amax, formats, per_matrix.mutable_data_ptr<double>());
  return assemble_pass_sums(per_matrix, matrix_amax, scale_range);
}

}  // namespace ampscope::profiler
