#include "profiler/capture/quantization_sim.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/quantization_block_sums_cuda.h"
#include "profiler/capture/quantization_pass.h"
#include "profiler/cuda/quantization_scale_math.h"
#include "profiler/float_formats.h"

namespace ampscope::profiler {
namespace {

// A pass holds at most kPassElements padded elements (batched_pass.h, the bound the
// gradient and activation passes share): its buffer and the temporaries of one format
// (some 20 bytes an element) stay bounded whatever the model.

// Everything below works on magnitudes: each format's rounding is symmetric
// (a positive scale, a clamp to ±max, round to nearest even), so the quantization
// of x is sign(x) times that of |x|, and x - dequantized(x) has the magnitudes'
// difference. That saves the sign in every op.

at::ScalarType fp8_dtype(QuantElement e) {
  return e == QuantElement::e5m2 ? at::kFloat8_e5m2 : at::kFloat8_e4m3fn;
}

// Full-size buffers of a pass, reused by every format: on the CPU a fresh tensor
// of that size is fresh pages from the kernel, zeroed and faulted in, a good part
// of what the op on it costs.
struct Scratch {
  explicit Scratch(int64_t elements, const at::Device device)
      : scaled(at::empty({elements}, at::TensorOptions(at::kFloat).device(device))),
        values(at::empty({elements}, at::TensorOptions(at::kFloat).device(device))),
        words(at::empty({elements}, at::TensorOptions(at::kInt).device(device))),
        bytes(at::empty({elements}, at::TensorOptions(at::kByte).device(device))),
        mask(at::empty({elements}, at::TensorOptions(at::kBool).device(device))) {}
  at::Tensor scaled, values;  // float32
  at::Tensor words;           // int32: fp8 codes for the table, e2m1's rounding constants
  at::Tensor bytes;           // fp8 values, viewed as the format's dtype
  at::Tensor mask;            // saturation
};

// `values` cast to fp8 and back to float32, in place. On the CPU ATen widens fp8
// one element at a time (some 4 ns each, the slowest op of the pass); the 256
// codes' float values, widened by ATen itself once, looked up are the same numbers
// at a fifth of that.
void round_to_fp8(at::Tensor& values, QuantElement e, Scratch& scratch) {
  const at::Tensor fp8 = scratch.bytes.view(fp8_dtype(e)).narrow(0, 0, values.numel()).view(values.sizes());
  fp8.copy_(values);
  if (!values.device().is_cpu()) {
    values.copy_(fp8);
    return;
  }
  static const at::Tensor e4m3 = at::arange(256, at::kByte).view(at::kFloat8_e4m3fn).to(at::kFloat);
  static const at::Tensor e5m2 = at::arange(256, at::kByte).view(at::kFloat8_e5m2).to(at::kFloat);
  at::Tensor codes = scratch.words.narrow(0, 0, values.numel());
  codes.copy_(scratch.bytes.narrow(0, 0, values.numel()));
  at::Tensor flat = values.view({-1});
  at::index_select_out(flat, e == QuantElement::e5m2 ? e5m2 : e4m3, 0, codes);
}

// A small tensor (block scales) cast to fp8 and back.
at::Tensor fp8_rounded(const at::Tensor& t, QuantElement e) { return t.to(fp8_dtype(e)).to(at::kFloat); }

// round_to_grid (profiler/cuda/quantization_element_math.h) as ATen ops, in place: e2m1's
// rounding on any device. M = 2^(max(exponent of x, min normal exponent) + 23 -
// mantissa bits) is the power of two at or below x, floored, times 2^(23 - mantissa
// bits); adding and subtracting it rounds x to the grid, ties to even. (fp8 keeps
// ATen's own casts: they are the reference the CPU kernel is tested against.)
void round_on_grid(at::Tensor& x, RoundingGrid grid, Scratch& scratch) {
  at::Tensor bits = scratch.words.narrow(0, 0, x.numel()).view(x.sizes());
  at::bitwise_and_out(bits, x.view(at::kInt), 0x7F800000);
  const at::Tensor magic = bits.view(at::kFloat)
                               .clamp_min_(std::ldexp(1.0, grid.min_normal_exponent))
                               .mul_(std::ldexp(1.0, 23 - grid.mantissa_bits));
  x.add_(magic).sub_(magic);
}

// Where the scaled magnitudes went past the format's max (saturation_bound), into `out`.
void saturated_into(at::Tensor& out, const at::Tensor& scaled_magnitudes, QuantElement e) {
  const QuantElementLimits lim = quant_element_limits(e);
  if (lim.saturates_at_bound) at::ge_out(out, scaled_magnitudes, lim.saturation_bound);
  else at::gt_out(out, scaled_magnitudes, lim.saturation_bound);
}

// [segments, columns.size()]: each column reduced by segment. Column by column: on
// CUDA at::segment_reduce runs 1-D data through CUB but anything wider through a
// kernel with one thread per segment and column, which walks its whole segment
// alone: on an H200 that made one readiness sample of a GPT-2-sized model take
// 4.7 s of GPU time (issue 27). (SegmentLengths cuts long segments for CUB too.)
at::Tensor segment_columns(const std::vector<at::Tensor>& columns, std::string_view how, const SegmentLengths& segments) {
  std::vector<at::Tensor> reduced;
  reduced.reserve(columns.size());
  for (const at::Tensor& c : columns) reduced.push_back(segments.reduce(c, how));
  return at::stack(reduced, 1);
}

PlannedMatrix plan(const at::Tensor& m, int64_t sample_elements = kPassElements) {
  PlannedMatrix p;
  p.source = m;
  p.cols = m.size(-1);
  p.rows = m.numel() / p.cols;
  p.padded_cols = padded_width(p.cols);
  const int64_t max_rows = std::max<int64_t>(1, std::min(sample_elements, kPassElements) / p.padded_cols);
  if (p.rows > max_rows) {
    const at::Tensor all = m.reshape({p.rows, p.cols});
    p.source = all.slice(0, 0, p.rows, (p.rows + max_rows - 1) / max_rows);
    p.rows = p.source.size(0);
    // The tensorwise scales want the whole matrix's amax: aminmax reads it without
    // a |x| copy. (Non-finite extremes read as 0 here, so a sampled matrix holding
    // an inf takes its amax from the sampled rows.)
    const auto [lo, hi] = at::aminmax(all);
    p.full_amax = at::maximum(at::nan_to_num(lo.to(at::kFloat), 0.0, 0.0, 0.0).abs(),
                              at::nan_to_num(hi.to(at::kFloat), 0.0, 0.0, 0.0).abs());
  }
  return p;
}

// A pass's matrices as float32 magnitudes, each row padded with zeros to a
// multiple of 32, end to end; the segment lengths and indexes that map blocks to
// rows and rows to matrices (made on the device from the host's shapes: no sync);
// and the amax of every scaling group.
struct Packed {
  at::Tensor magnitudes;  // [blocks32, 32]
  int64_t matrices = 0, rows = 0, blocks32 = 0;
  // Segments: a row's 32-blocks, a matrix's rows, its 32-blocks, its 16-blocks, and one per matrix.
  SegmentLengths blocks_by_row, rows_by_matrix, blocks_by_matrix, half_blocks_by_matrix, one_by_matrix;
  at::Tensor row_of_block, matrix_of_block;                        // int64, per 32-block
  at::Tensor amax16, amax32, row_amax, matrix_amax;
  // Per 32-block, [blocks32, 1]: 1 / its matrix's amax (1 for an all-zero matrix),
  // so that squares stay in float32's range (a gradient's 1e-20 squared is not).
  at::Tensor inverse_amax;
  at::Tensor inverse_matrix_amax;  // [matrices]
};

Packed pack(const std::vector<PlannedMatrix>& plan, const at::Device device) {
  Packed p;
  p.matrices = static_cast<int64_t>(plan.size());
  std::vector<int64_t> rows_per_matrix, blocks_per_row, blocks_per_matrix;
  int64_t total = 0;
  for (const PlannedMatrix& m : plan) {
    rows_per_matrix.push_back(m.rows);
    blocks_per_matrix.push_back(m.padded() / kRowAlign);
    blocks_per_row.insert(blocks_per_row.end(), static_cast<size_t>(m.rows), m.padded_cols / kRowAlign);
    total += m.padded();
  }
  p.rows = static_cast<int64_t>(blocks_per_row.size());
  p.blocks32 = total / kRowAlign;
  at::Tensor buffer;
  if (device.is_cpu() && std::all_of(plan.begin(), plan.end(), packs_on_cpu)) {
    buffer = at::empty({total}, at::kFloat);
    float* out = buffer.mutable_data_ptr<float>();
    for (const PlannedMatrix& m : plan) {
      pack_rows_cpu(m, out);
      out += m.padded();
    }
  } else {
    buffer = at::zeros({total}, at::TensorOptions(at::kFloat).device(device));
    int64_t offset = 0;
    for (const PlannedMatrix& m : plan) {
      // The matrix's rows in the buffer, viewed in the source's shape: one copy, any
      // layout and dtype in, without a reshaped copy of the source first.
      buffer.narrow(0, offset, m.padded())
          .view({m.rows, m.padded_cols})
          .narrow(1, 0, m.cols)
          .view(m.source.sizes())
          .copy_(m.source);
      offset += m.padded();
    }
    buffer.abs_().nan_to_num_(0.0, 0.0, 0.0);
  }
  p.magnitudes = buffer.view({p.blocks32, kRowAlign});
  p.blocks_by_row = SegmentLengths(blocks_per_row, device);
  p.rows_by_matrix = SegmentLengths(rows_per_matrix, device);
  p.blocks_by_matrix = SegmentLengths(blocks_per_matrix, device);
  std::vector<int64_t> halves(blocks_per_matrix);
  for (int64_t& n : halves) n *= 2;
  p.half_blocks_by_matrix = SegmentLengths(halves, device);
  p.one_by_matrix = SegmentLengths(std::vector<int64_t>(plan.size(), 1), device);
  const at::Tensor matrix_of_row = p.rows_by_matrix.segment_of_each_element(p.rows);
  p.row_of_block = p.blocks_by_row.segment_of_each_element(p.blocks32);
  p.matrix_of_block = matrix_of_row.index_select(0, p.row_of_block);
  p.amax16 = buffer.view({-1, 16}).amax(1);
  p.amax32 = p.amax16.view({-1, 2}).amax(1);
  p.row_amax = p.blocks_by_row.reduce(p.amax32, "max");
  p.matrix_amax = p.rows_by_matrix.reduce(p.row_amax, "max");
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].full_amax.defined()) continue;
    at::Tensor slot = p.matrix_amax.narrow(0, static_cast<int64_t>(i), 1);
    slot.copy_(at::maximum(slot, plan[i].full_amax.reshape({1})));
  }
  const at::Tensor inverse = at::where(p.matrix_amax > 0, p.matrix_amax.reciprocal(), at::ones_like(p.matrix_amax));
  p.inverse_matrix_amax = inverse;
  p.inverse_amax = inverse.index_select(0, p.matrix_of_block).unsqueeze(1);
  return p;
}

// One format's factors per scaling group (32-block; 16-block for NVFP4) and the
// group scales its statistics read. The element-wise part is then the same for
// every format: |x| times `quantize`, clamped, rounded, times (or over) `dequantize`.
struct FormatScales {
  at::Tensor quantize;    // float32 [groups]
  at::Tensor dequantize;  // float32 [groups]
  bool divide = false;    // torchao's fp8 dequantizes as fp8 / scale
  bool groups_of_16 = false;
  at::Tensor groups;      // the dequantization multiplier of each scaling group (tensor, row or block)
  at::Tensor live;        // per group: it holds a nonzero element
  const SegmentLengths* groups_by_matrix = nullptr;  // the Packed's
};

// torchao float8: scale = fp8_max / clamp(amax, EPS) in float64, then float32,
// optionally rounded down to a power of two; x * scale clamped to ±max, cast;
// dequantized as fp8 / scale.
FormatScales fp8_scales(const Packed& p, const QuantFormatSpec& spec) {
  const QuantElementLimits lim = quant_element_limits(spec.element);
  const bool rowwise = spec.scaling == QuantScaling::rowwise;
  const at::Tensor& amax = rowwise ? p.row_amax : p.matrix_amax;
  at::Tensor scale = (lim.max / amax.to(at::kDouble).clamp_min(kAmaxEps)).to(at::kFloat);
  if (spec.power_of_two_scales) scale = at::exp2(at::floor(at::log2(scale)));
  FormatScales s;
  s.quantize = scale.index_select(0, rowwise ? p.row_of_block : p.matrix_of_block);
  s.dequantize = s.quantize;
  s.divide = true;
  s.groups = scale.reciprocal();
  s.live = amax > 0;
  s.groups_by_matrix = rowwise ? &p.rows_by_matrix : &p.one_by_matrix;
  return s;
}

// torchao to_mx with the RCEIL rule (NVIDIA's, cuBLAS "Computing scaling and
// conversion factors for FP8 with UE8M0 scales"; the default of torchao's MXFP8
// training recipes): the block's E8M0 exponent is ceil(log2(amax / max)), clamped to
// [-127, 127], so no element goes past max; x times 2^-exponent (times 1 for the
// exponent -127, i.e. biased 0, as torchao), clamped, cast; dequantized times
// 2^exponent. (The OCP spec's FLOOR rule clamps a block's largest values instead.)
FormatScales mx_scales(const Packed& p, const QuantFormatSpec& spec) {
  const QuantElementLimits lim = quant_element_limits(spec.element);
  const at::Tensor descale = p.amax32 / lim.max;
  const at::Tensor biased = at::ceil(at::log2(descale)).clamp(-kE8M0Bias, kE8M0Bias) + kE8M0Bias;
  const at::Tensor multiplier = at::exp2(biased - kE8M0Bias);
  FormatScales s;
  s.quantize = at::where(biased == 0, at::ones_like(biased), at::exp2(kE8M0Bias - biased));
  s.dequantize = multiplier;
  s.groups = multiplier;
  s.live = p.amax32 > 0;
  s.groups_by_matrix = &p.blocks_by_matrix;
  return s;
}

// torchao nvfp4_quantize with a per-tensor scale (per_tensor_amax_to_scale):
// tensor scale = amax / (448 * 6); block scale = block amax / 6 / tensor scale,
// clamped to e4m3's normal range and cast to e4m3; x times (1 / tensor scale) /
// block scale, clamped to ±6, rounded to e2m1; dequantized times tensor scale *
// block scale. An all-zero tensor (torchao: NaN) takes amax 1: zeros.
FormatScales nvfp4_scales(const Packed& p) {
  const double e2m1_max = quant_element_limits(QuantElement::e2m1).max;
  const double e4m3_max = quant_element_limits(QuantElement::e4m3).max;
  const at::Tensor tensor_scale =
      at::where(p.matrix_amax > 0, p.matrix_amax, at::ones_like(p.matrix_amax)) / (e4m3_max * e2m1_max);
  // Per 16-block (two to a 32-block): its matrix's scale.
  const at::Tensor per_block = tensor_scale.index_select(0, p.matrix_of_block).repeat_interleave(2);
  const at::Tensor block_scale = p.amax16 / e2m1_max;
  // torchao keeps the block scales in e4m3's normal range.
  const double e4m3_min_normal = float_format(FloatFormat::fp8_e4m3fn).min_normal;
  const at::Tensor block_scale_e4m3 =
      fp8_rounded((block_scale / per_block).clamp(e4m3_min_normal, e4m3_max), QuantElement::e4m3);
  FormatScales s;
  s.quantize = per_block.reciprocal() / block_scale_e4m3;
  s.dequantize = per_block * block_scale_e4m3;
  s.groups_of_16 = true;
  s.groups = s.dequantize;
  s.live = p.amax16 > 0;
  s.groups_by_matrix = &p.half_blocks_by_matrix;
  return s;
}

FormatScales scales_of(const Packed& p, const QuantFormatSpec& spec) {
  switch (spec.scaling) {
    case QuantScaling::tensorwise:
    case QuantScaling::rowwise: return fp8_scales(p, spec);
    case QuantScaling::block: return spec.element == QuantElement::e2m1 ? nvfp4_scales(p) : mx_scales(p, spec);
  }
  return {};
}

// One format over a pass's magnitudes as ATen ops, in groups of 32 (16 for NVFP4);
// the results are views of the pass's Scratch, good until the next format.
struct Quantized {
  at::Tensor scaled;       // |x| times the quantization multiplier, before the clamp
  at::Tensor dequantized;  // magnitudes
};

Quantized quantized(const Packed& p, const QuantFormatSpec& spec, const FormatScales& s, Scratch& scratch) {
  const at::Tensor magnitudes = s.groups_of_16 ? p.magnitudes.view({-1, 16}) : p.magnitudes;
  Quantized q;
  q.scaled = scratch.scaled.narrow(0, 0, magnitudes.numel()).view(magnitudes.sizes());
  q.dequantized = scratch.values.narrow(0, 0, magnitudes.numel()).view(magnitudes.sizes());
  at::mul_out(q.scaled, magnitudes, s.quantize.unsqueeze(1));
  at::clamp_max_out(q.dequantized, q.scaled, quant_element_limits(spec.element).max);
  if (spec.element == QuantElement::e2m1) round_on_grid(q.dequantized, rounding_grid(spec.element), scratch);
  else round_to_fp8(q.dequantized, spec.element, scratch);
  if (s.divide) q.dequantized.div_(s.dequantize.unsqueeze(1));
  else q.dequantized.mul_(s.dequantize.unsqueeze(1));
  return q;
}

at::Tensor squared_norms(const at::Tensor& blocks) { return at::linalg_vector_norm(blocks, 2, {1}).square(); }

// The per-matrix columns of block_sums_cpu ([matrices, block_sum_columns] float64)
// as ATen ops, on any device: per 32-block counts and squares over the matrix's
// amax squared, then one segmented sum per column.
at::Tensor matrix_sums_aten(const Packed& p, const std::vector<FormatScales>& scales) {
  Scratch scratch(p.magnitudes.numel(), p.magnitudes.device());
  std::vector<at::Tensor> columns{p.magnitudes.sign().sum(1), squared_norms(p.magnitudes * p.inverse_amax)};
  for (size_t f = 0; f < scales.size(); ++f) {
    const QuantFormatSpec& spec = kQuantFormats[f];
    const Quantized q = quantized(p, spec, scales[f], scratch);
    // NVFP4's 16-blocks back to 32-blocks: pairs summed.
    const bool halves = scales[f].groups_of_16;
    const auto to_32 = [&](const at::Tensor& per_block) { return halves ? per_block.view({-1, 2}).sum(1) : per_block; };
    at::Tensor mask = scratch.mask.narrow(0, 0, q.scaled.numel()).view(q.scaled.sizes());
    saturated_into(mask, q.scaled, spec.element);
    columns.push_back(to_32(mask.sum({1}, false, at::kInt).to(at::kFloat)));
    // The dequantized magnitudes' signs (0 or 1), in the scaled buffer, which is done with.
    at::Tensor signs = q.scaled;
    at::sign_out(signs, q.dequantized);
    columns.push_back(to_32(signs.sum(1)));
    const at::Tensor inverse = halves ? p.inverse_amax.repeat_interleave(2, 0) : p.inverse_amax;
    const at::Tensor magnitudes = halves ? p.magnitudes.view({-1, 16}) : p.magnitudes;
    at::Tensor dequantized = q.dequantized;
    columns.push_back(to_32(squared_norms(dequantized.sub_(magnitudes).mul_(inverse))));
  }
  for (at::Tensor& c : columns) c = c.to(at::kDouble);
  return segment_columns(columns, "sum", p.blocks_by_matrix);
}

// The same columns on a CUDA GPU (quantization_block_sums_cuda.h).
at::Tensor matrix_sums_fused_cuda(const Packed& p, const std::vector<FormatScales>& scales) {
  std::vector<BlockFormatFactors> formats;
  for (size_t f = 0; f < scales.size(); ++f)
    formats.push_back(
        {scales[f].quantize, scales[f].dequantize, scales[f].groups_of_16, element_format(kQuantFormats[f])});
  return block_sums_cuda(p.magnitudes, p.blocks_by_matrix.host_lengths(), p.inverse_matrix_amax, formats);
}

// The pass's sums, [matrices, kQuantFormatCount, kQuantSumColumns] float64.
at::Tensor pass_sums(const Packed& p, QuantizationKernel kernel) {
  std::vector<FormatScales> scales;
  for (const QuantFormatSpec& spec : kQuantFormats) scales.push_back(scales_of(p, spec));
  const at::Tensor per_matrix = kernel == QuantizationKernel::best && block_sums_on_cuda(p.magnitudes)
                                    ? matrix_sums_fused_cuda(p, scales)
                                    : matrix_sums_aten(p, scales);
  // Per format, the range of the scales of groups holding a nonzero element: an
  // all-zero group's scale says nothing.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<at::Tensor> ranges;
  for (const FormatScales& s : scales) {
    ranges.push_back(s.groups_by_matrix->reduce(at::where(s.live, s.groups, inf), "min"));
    ranges.push_back(s.groups_by_matrix->reduce(at::where(s.live, s.groups, 0.0), "max"));
  }
  const at::Tensor scale_range = at::stack(ranges, 1).to(at::kDouble).view({p.matrices, kQuantFormatCount, 2});
  return assemble_pass_sums(per_matrix, p.matrix_amax, scale_range);
}

}  // namespace

at::Tensor scaling_matrix(const at::Tensor& t, TensorRole role, bool channels_first) {
  // variable_data(): detached without an ATen op. A sampled step hands over a few
  // tensors per layer, and each dispatched op (detach, reshape) is microseconds on the
  // training thread; a 2-D tensor is its own matrix in every role.
  const at::Tensor m = t.variable_data();
  if (m.dim() == 2) return m;
  if (m.dim() == 0) return m.reshape({1, 1});
  if (m.dim() == 1) return m.reshape({1, -1});
  if (role == TensorRole::weight || role == TensorRole::weight_gradient) return m.reshape({m.size(0), -1});
  if (channels_first && m.dim() > 2) return m.movedim(1, -1);
  return m;
}

SimulatedQuantization simulate_quantization(const at::Tensor& matrix, QuantFormat format) {
  const QuantFormatSpec& spec = quant_format(format);
  const int64_t rows = matrix.size(0), cols = matrix.size(1);
  const Packed p = pack({plan(matrix)}, matrix.device());
  Scratch scratch(p.magnitudes.numel(), matrix.device());
  const FormatScales scales = scales_of(p, spec);
  const Quantized q = quantized(p, spec, scales, scratch);
  const auto unpad = [&](const at::Tensor& t) { return t.reshape({rows, padded_width(cols)}).narrow(1, 0, cols); };
  SimulatedQuantization out;
  out.dequantized = at::copysign(unpad(q.dequantized), matrix.to(at::kFloat));
  at::Tensor saturated = at::empty(q.scaled.sizes(), q.scaled.options().dtype(at::kBool));
  saturated_into(saturated, q.scaled, spec.element);
  out.saturated = unpad(saturated);
  switch (spec.scaling) {
    case QuantScaling::tensorwise: out.scales = scales.groups.reshape({1, 1}); break;
    case QuantScaling::rowwise: out.scales = scales.groups.reshape({rows, 1}); break;
    case QuantScaling::block:
      out.scales = scales.groups.reshape({rows, -1}).narrow(1, 0, (cols + spec.block_size - 1) / spec.block_size);
      break;
  }
  return out;
}

QuantizationSums quantization_sums(const std::vector<at::Tensor>& matrices, QuantizationKernel kernel) {
  return quantization_sums(matrices, {}, kernel);
}

QuantizationSums quantization_sums(const std::vector<at::Tensor>& matrices, const std::vector<int64_t>& sample_elements,
                                   QuantizationKernel kernel) {
  QuantizationSums out;
  out.elements.assign(matrices.size(), 0);
  if (matrices.empty()) return out;
  const at::Device device = matrices.front().device();
  // Passes in the matrices' order: a pass ends where the device changes or it is full.
  std::vector<std::vector<PlannedMatrix>> passes;
  std::vector<int64_t> measured;  // the matrices with elements, in order
  int64_t pass_elements = 0;
  for (size_t i = 0; i < matrices.size(); ++i) {
    if (matrices[i].numel() == 0) continue;
    const int64_t budget = i < sample_elements.size() && sample_elements[i] > 0 ? sample_elements[i] : kPassElements;
    PlannedMatrix m = plan(matrices[i], budget);
    out.elements[i] = m.rows * m.cols;
    if (passes.empty() || passes.back().front().source.device() != m.source.device() ||
        pass_elements + m.padded() > kPassElements) {
      passes.emplace_back();
      pass_elements = 0;
    }
    pass_elements += m.padded();
    passes.back().push_back(std::move(m));
    measured.push_back(static_cast<int64_t>(i));
  }
  const at::TensorOptions doubles = at::TensorOptions(at::kDouble).device(device);
  out.sums = at::zeros({static_cast<int64_t>(matrices.size()), kQuantFormatCount, kQuantSumColumns}, doubles);
  if (measured.empty()) return out;
  std::vector<at::Tensor> parts;
  for (const auto& pass : passes) {
    // CPU tensors on the host alone (quantization_pass.h); the ATen ops elsewhere, and
    // where the caller asks for the reference.
    const at::Device on = pass.front().source.device();
    const bool host = kernel == QuantizationKernel::best && on.is_cpu();
    parts.push_back((host ? pass_sums_cpu(pass) : pass_sums(pack(pass, on), kernel)).to(device));
  }
  out.passes = static_cast<int64_t>(passes.size());
  const at::Tensor sums = at::cat(parts);
  if (measured.size() == matrices.size()) out.sums = sums;
  else out.sums.index_copy_(0, host_values_on(measured, device), sums);
  return out;
}

std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const double* row, int64_t elements) {
  std::array<QuantMetrics, kQuantFormatCount> out{};
  for (int f = 0; f < kQuantFormatCount; ++f) {
    const double* c = row + f * kQuantSumColumns;
    QuantMetrics& m = out[f];
    m.elements = elements;
    m.nonzero = static_cast<int64_t>(c[0]);
    m.flushed = static_cast<int64_t>(c[1]);
    m.saturated = static_cast<int64_t>(c[2]);
    m.signal = c[3];
    m.noise = c[4];
    if (std::isfinite(c[5]) && std::isfinite(c[6])) {
      m.scale_log2_min = c[5];
      m.scale_log2_max = c[6];
    }
  }
  return out;
}

std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const at::Tensor& host_sums, int64_t elements) {
  const at::Tensor sums = host_sums.to(at::kDouble).contiguous();
  TORCH_CHECK(sums.numel() == kQuantFormatCount * kQuantSumColumns, "read_quantization_sums: ", sums.sizes());
  return read_quantization_sums(sums.const_data_ptr<double>(), elements);
}

}  // namespace ampscope::profiler
