// Precision readiness's CPU kernel (profiler/capture/quantization_block_sums_cpu.h,
// issue 27): its rounding against LibTorch's own fp8 casts at every grid point and
// tie, and its sums against the ATen ops it replaces on the CPU (the path a GPU
// still takes), on the tensors a sampled step holds, with one thread and several.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"
#include "profiler/capture/quantization_block_sums_cpu.h"
#include "profiler/capture/quantization_sim.h"
#include "profiler/float_formats.h"
#include "tests/support/quantization_cases.h"

namespace ampscope::profiler {
namespace {

using quantization_cases::expect_equal_sums;
using quantization_cases::step_tensors;

// Every non-negative value of the format, the midpoints between neighbours (the
// ties), one float32 ulp either side of each, and values in between: all up to max.
at::Tensor grid_probe(at::ScalarType fp8) {
  const at::Tensor codes = at::arange(0, 128, at::kByte).view(fp8).to(at::kFloat);
  const at::Tensor finite = std::get<0>(codes.masked_select(codes.isfinite()).sort());
  const at::Tensor mids = (finite.narrow(0, 0, finite.numel() - 1) + finite.narrow(0, 1, finite.numel() - 1)) / 2;
  const at::Tensor inf = at::full({1}, INFINITY);
  const at::Tensor thirds = finite.narrow(0, 0, finite.numel() - 1) * (2.0 / 3) + finite.narrow(0, 1, finite.numel() - 1) / 3;
  return at::cat({finite, mids, at::nextafter(mids, inf), at::nextafter(mids, -inf), thirds,
                  at::rand({100000}) * finite.max()})
      .clamp(0, finite.max().item<float>());
}

void expect_grid_equals_cast(at::ScalarType fp8, RoundingGrid grid) {
  const at::Tensor x = grid_probe(fp8);
  const at::Tensor cast = x.to(fp8).to(at::kFloat);
  const float* in = x.const_data_ptr<float>();
  const float* want = cast.const_data_ptr<float>();
  int differing = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float got = round_to_grid(in[i], grid);
    if (got != want[i] && ++differing <= 5) ADD_FAILURE() << in[i] << " rounds to " << got << ", LibTorch casts to " << want[i];
  }
  EXPECT_EQ(differing, 0) << "of " << x.numel();
}

TEST(QuantizationKernelCpu, RoundsAsLibTorchCastsToFp8) {
  const FloatFormatLimits& e4m3 = float_format(FloatFormat::fp8_e4m3fn);
  const FloatFormatLimits& e5m2 = float_format(FloatFormat::fp8_e5m2);
  expect_grid_equals_cast(at::kFloat8_e4m3fn, {e4m3.mantissa_bits, -6});
  expect_grid_equals_cast(at::kFloat8_e5m2, {e5m2.mantissa_bits, -14});
}

TEST(QuantizationKernelCpu, RoundsToE2m1sGridTiesToEven) {
  // {0, 0.5, 1, 1.5, 2, 3, 4, 6}: each tie goes to the neighbour with the even mantissa.
  const RoundingGrid e2m1{1, 0};
  const std::vector<std::pair<float, float>> cases{
      {0.0f, 0.0f}, {0.25f, 0.0f}, {0.2501f, 0.5f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f}, {2.5f, 2.0f},
      {3.5f, 4.0f}, {5.0f, 4.0f},  {5.01f, 6.0f},   {6.0f, 6.0f},  {1.4f, 1.5f},  {2.9f, 3.0f}};
  for (const auto& [x, want] : cases) EXPECT_EQ(round_to_grid(x, e2m1), want) << x;
}

TEST(QuantizationKernelCpu, SumsEqualTheAtenOpsOnEveryTensorOfAStep) {
  const std::vector<at::Tensor> tensors = step_tensors();
  const QuantizationSums aten = quantization_sums(tensors, QuantizationKernel::aten);
  const QuantizationSums fused = quantization_sums(tensors, QuantizationKernel::best);
  expect_equal_sums(fused, aten, tensors.size());
  // What the comparison covers: elements flushed somewhere, and the non-finite
  // values counted as zeros. (The six formats scale from the amax, so nothing
  // saturates here; the next test drives the kernel past a format's max.)
  int64_t flushed = 0;
  for (size_t i = 0; i < tensors.size(); ++i)
    for (const QuantMetrics& m : read_quantization_sums(fused.sums[static_cast<int64_t>(i)], fused.elements[i]))
      flushed += m.flushed;
  EXPECT_GT(flushed, 0);
  EXPECT_EQ(read_quantization_sums(fused.sums[8], fused.elements[8])[0].nonzero, 3 * 40 - 2);
}

// Large tensors measured on spaced rows, their tensorwise scales from the whole tensor's amax:
// the host's pass and the ATen ops agree there too.
TEST(QuantizationKernelCpu, SampledRowsSumEqualTheAtenOps) {
  const std::vector<at::Tensor> tensors = step_tensors();
  std::vector<int64_t> sample_elements(tensors.size(), 0);
  sample_elements[7] = 4 * 96;    // the outliers' matrix: 4 of its 16 rows
  sample_elements[9] = 40 * 512;  // the large weight: 40 of 300 rows
  const QuantizationSums fused = quantization_sums(tensors, sample_elements, QuantizationKernel::best);
  const QuantizationSums aten = quantization_sums(tensors, sample_elements, QuantizationKernel::aten);
  EXPECT_EQ(fused.elements[9], 38 * 512) << "every 8th row of 300";
  expect_equal_sums(fused, aten, tensors.size());
}

TEST(QuantizationKernelCpu, CountsSaturationPastTheFormatsBoundAndTheErrorOfTheClamp) {
  // One block 0, 1, ..., 31 times 20 into e4m3 (max 448; a value rounds past it
  // from 464 up): 24 * 20 = 480 and above saturate, 8 elements; 23 * 20 = 460
  // rounds to 448 without saturating. Dequantized by dividing by 20, as torchao's fp8.
  const at::Tensor x = at::arange(32, at::kFloat);
  const float quantize = 20.0f;
  const FloatFormatLimits& e4m3 = float_format(FloatFormat::fp8_e4m3fn);
  BlockFormat f;
  f.quantize = &quantize;
  f.dequantize = &quantize;
  f.element.divide = true;
  f.element.max = static_cast<float>(e4m3.max);
  f.element.saturation_bound = static_cast<float>(e4m3.overflow_bound);
  f.element.saturates_at_bound = e4m3.overflow_at_bound;
  f.element.grid = {e4m3.mantissa_bits, -6};
  const int64_t blocks = 1;
  const float inverse_amax = 1.0f / 31;
  double out[block_sum_columns(1)];
  block_sums_cpu(x.const_data_ptr<float>(), {&blocks, 1}, {&inverse_amax, 1}, {&f, 1}, out);
  EXPECT_EQ(out[0], 31);  // nonzero |x|
  EXPECT_EQ(out[2], 8);   // saturated
  EXPECT_EQ(out[3], 31);  // nonzero dequantized
  // The error, clamp included, from LibTorch's cast.
  const at::Tensor dequantized = (x * quantize).clamp_max(e4m3.max).to(at::kFloat8_e4m3fn).to(at::kFloat) / quantize;
  const double noise = ((dequantized - x) * inverse_amax).square().sum().item<double>();
  EXPECT_NEAR(out[4], noise, 1e-6 * noise);
  EXPECT_NEAR(out[1], (x * inverse_amax).square().sum().item<double>(), 1e-6);
}

// The GPU kernel runs quantize_element (profiler/cuda/quantization_element_math.h)
// one element at a time; the CPU kernel runs the same arithmetic four lanes at a
// time. Each value alone in its 32-block (zeros beside it add nothing), so the CPU
// kernel's sums are that one element's: the two must agree exactly, for every
// element type, both dequantization rules and both saturation rules, on values from
// far below a grid's subnormals to far past its max.
TEST(QuantizationKernelCpu, TheGpusElementMathEqualsTheCpuKernelElementForElement) {
  at::manual_seed(11);
  constexpr int64_t kValues = 4096;
  const at::Tensor x = at::exp2(at::rand({kValues}) * 60 - 40).contiguous();
  const at::Tensor quantize = at::exp2(at::rand({kValues}) * 30 - 15).contiguous();
  const at::Tensor dequantize = at::exp2(at::rand({kValues}) * 30 - 15).contiguous();
  at::Tensor blocks = at::zeros({kValues, kBlockSumsBlock});
  blocks.select(1, 0).copy_(x);
  // Per 16-block: the value's group and an unused one.
  const at::Tensor quantize16 = at::stack({quantize, at::ones_like(quantize)}, 1).contiguous();
  const at::Tensor dequantize16 = at::stack({dequantize, at::ones_like(dequantize)}, 1).contiguous();
  const std::vector<int64_t> one_block(kValues, 1);
  const std::vector<float> inverse_amax(kValues, 1.0f / 3);
  const std::vector<std::pair<QuantElement, RoundingGrid>> elements{
      {QuantElement::e4m3, {3, -6}}, {QuantElement::e5m2, {2, -14}}, {QuantElement::e2m1, {1, 0}}};
  for (const auto& [element, grid] : elements) {
    const QuantElementLimits lim = quant_element_limits(element);
    for (const bool divide : {false, true}) {
      for (const bool groups_of_16 : {false, true}) {
        SCOPED_TRACE(::testing::Message() << static_cast<int>(element) << " divide " << divide << " groups_of_16 "
                                          << groups_of_16);
        BlockFormat f;
        f.quantize = (groups_of_16 ? quantize16 : quantize).const_data_ptr<float>();
        f.dequantize = (groups_of_16 ? dequantize16 : dequantize).const_data_ptr<float>();
        f.groups_of_16 = groups_of_16;
        f.element = {static_cast<float>(lim.max), static_cast<float>(lim.saturation_bound), lim.saturates_at_bound,
                     divide, grid};
        std::vector<double> out(static_cast<size_t>(kValues) * block_sum_columns(1));
        block_sums_cpu(blocks.const_data_ptr<float>(), one_block, inverse_amax, {&f, 1}, out.data());
        int differing = 0, saturated = 0, flushed = 0;
        for (int64_t i = 0; i < kValues; ++i) {
          const float value = x.const_data_ptr<float>()[i];
          const ElementSums e = quantize_element(value, quantize.const_data_ptr<float>()[i],
                                                 dequantize.const_data_ptr<float>()[i], inverse_amax[0], f.element);
          const double* row = out.data() + i * block_sum_columns(1);
          saturated += e.saturated;
          flushed += !e.dequantized_nonzero;
          if ((row[2] != e.saturated || row[3] != e.dequantized_nonzero ||
               row[4] != static_cast<double>(e.error * e.error)) &&
              ++differing <= 5)
            ADD_FAILURE() << value << ": CPU kernel " << row[2] << " " << row[3] << " " << row[4] << ", element math "
                          << e.saturated << " " << e.dequantized_nonzero << " " << e.error * e.error;
        }
        EXPECT_EQ(differing, 0) << "of " << kValues;
        // What the comparison covers: clamped values and values flushed to zero.
        EXPECT_GT(saturated, 0);
        EXPECT_GT(flushed, 0);
      }
    }
  }
}

TEST(QuantizationKernelCpu, SumsDoNotDependOnTheNumberOfThreads) {
  const std::vector<at::Tensor> tensors = step_tensors();
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const QuantizationSums one = quantization_sums(tensors);
  at::set_num_threads(4);
  const QuantizationSums four = quantization_sums(tensors);
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one.sums, four.sums));
}

}  // namespace
}  // namespace ampscope::profiler
