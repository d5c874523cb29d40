// Forward activation ranges: a crafted model whose third block's output exceeds
// fp16's max names that block as where the overflow started, on the CPU under
// fp16 autocast; the stats match a cast done by hand; the store keeps them.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>
#include <torch/nn.h>

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/autocast_guard.h"
#include "engine/module_scope.h"
#include "profiler/capture/activation_stats.h"
#include "profiler/store/session_reader.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/own_work.h"
#include "profiler/store/session_writer.h"
#include "tests/support/dispatched_ops.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

// Five linear blocks marked as the built-in models mark theirs. Block 2 multiplies
// by 1000: with inputs near 100 its output reaches ~1e5 > 65504.
struct CraftedModel {
  std::vector<torch::nn::Linear> blocks;
  std::vector<std::string> scopes;
  CraftedModel() {
    for (int i = 0; i < 5; ++i) {
      torch::nn::Linear l(8, 8);
      torch::NoGradGuard no_grad;
      l->weight.copy_(at::eye(8) * (i == 2 ? 1000.0 : 1.0));
      l->bias.zero_();
      blocks.push_back(l);
      scopes.push_back(std::string(engine::kModuleScopePrefix) + "blocks." + std::to_string(i));
    }
  }
  at::Tensor forward(at::Tensor x) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      engine::ModuleScope scope(scopes[i]);
      x = scope.output(blocks[i]->forward(x));
    }
    return x;
  }
};

std::vector<ActivationSample> run_crafted(int micro_batches) {
  CraftedModel model;
  ActivationRecorder recorder;
  {
    ActivationCapture capture(&recorder);
    engine::AutocastGuard autocast(c10::kCPU, at::kHalf);
    for (int m = 0; m < micro_batches; ++m) model.forward(at::full({4, 8}, 100.0));
  }
  EXPECT_EQ(engine::activation_sink(), nullptr);  // restored
  return recorder.take(3);
}

TEST(ActivationStats, TheThirdBlockOfACraftedModelIsNamedAsTheFp16OverflowOrigin) {
  const auto samples = run_crafted(1);
  ASSERT_EQ(samples.size(), 5u);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].module, "blocks." + std::to_string(i));
    EXPECT_EQ(samples[i].order, static_cast<int64_t>(i));
    EXPECT_EQ(samples[i].step, 3);
    EXPECT_EQ(samples[i].dtype, "float16");  // autocast ran the linears in fp16
    EXPECT_EQ(samples[i].numel, 32);
  }
  EXPECT_FALSE(overflows_fp16(samples[0]));
  EXPECT_FALSE(overflows_fp16(samples[1]));
  EXPECT_EQ(samples[1].max_abs, 100.0);
  // 100 * 1000 = 1e5 does not fit fp16: the fp16 output holds inf.
  EXPECT_EQ(samples[2].nonfinite_fraction, 1.0);
  const ActivationSample* first = first_fp16_overflow(samples);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->module, "blocks.2");
}

TEST(ActivationStats, Fp32OutputsBeyondAFormatCountAsOverflowForIt) {
  // Without autocast the block-2 output is a finite fp32 1e5: beyond fp16 (65520)
  // and fp8 e4m3 (464) and e5m2 (61440), within bf16.
  CraftedModel model;
  ActivationRecorder recorder;
  {
    ActivationCapture capture(&recorder);
    model.forward(at::full({4, 8}, 100.0));
  }
  const auto samples = recorder.take(1);
  ASSERT_EQ(samples.size(), 5u);
  const ActivationSample& b2 = samples[2];
  EXPECT_EQ(b2.dtype, "float32");
  EXPECT_EQ(b2.nonfinite_fraction, 0.0);
  // 1000 * identity times a constant 100: every element is 1e5.
  EXPECT_EQ(b2.max_abs, 100000.0);
  EXPECT_EQ(b2.fp16.overflow, 1.0);
  EXPECT_EQ(b2.fp8_e5m2.overflow, 1.0);
  EXPECT_EQ(b2.bf16.overflow, 0.0);
  // Blocks 0 and 1 hold 100s: beyond fp8 e4m3? No (100 < 448). Nothing overflows fp16.
  EXPECT_EQ(samples[1].fp8_e4m3.overflow, 0.0);
  EXPECT_EQ(first_fp16_overflow(samples)->module, "blocks.2");
}

TEST(ActivationStats, MicroBatchesAddUpPerModule) {
  const auto samples = run_crafted(3);
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[0].numel, 3 * 32);
  EXPECT_EQ(samples[4].order, 4);
}

TEST(ActivationStats, NoSinkNoCost) {
  // Without a capture the models' ModuleScope::output only passes the tensor through.
  ASSERT_EQ(engine::activation_sink(), nullptr);
  CraftedModel model;
  const at::Tensor y = model.forward(at::ones({1, 8}));
  EXPECT_EQ(y.sum().item<double>(), 8000.0);
}

TEST(ActivationStats, StoreKeepsThemAndFindsTheOrigin) {
  test::ScratchDir dir;
  const std::string path = dir / "a.ampscope";
  auto early = run_crafted(1);
  for (auto& a : early) a.step = 5;
  {
    auto writer = SessionWriter::create(path, SessionMeta{});
    auto later = early;
    for (auto& a : later) a.step = 10;
    writer->append_activations(std::move(later));
    writer->append_activations(std::vector<ActivationSample>(early));
    writer->close();
    ASSERT_EQ(writer->last_error(), "");
  }
  const auto session = SessionReader::open(path);
  EXPECT_EQ(session.activation_steps(), (std::vector<int64_t>{5, 10}));
  const auto back = session.activations(5);
  ASSERT_EQ(back.size(), early.size());
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].module, early[i].module);
    EXPECT_EQ(back[i].dtype, early[i].dtype);
    EXPECT_EQ(back[i].nonfinite_fraction, early[i].nonfinite_fraction);
    EXPECT_EQ(back[i].fp8_e4m3.overflow, early[i].fp8_e4m3.overflow);
  }
  const auto first = session.first_fp16_overflow();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->module, "blocks.2");
  EXPECT_EQ(first->step, 5);
}

// What the recorder computed per module output before the batched pass (one
// output's reductions at a time, as on_module_output ran them inside the step):
// numel, non-finite count, max finite |x|, then the format counts.
std::array<double, 3 + kCountsPerFormat * kFloatFormatCount> per_module_reference(const at::Tensor& output) {
  at::NoGradGuard no_grad;
  at::Tensor x = output.detach().reshape({-1});
  if (x.scalar_type() != at::kDouble) x = x.to(at::kFloat);
  const at::Tensor a = x.abs();
  const at::Tensor finite = at::isfinite(x);
  const at::Tensor nonzero = (a > 0) & finite;
  std::vector<at::Tensor> parts{at::full({1}, static_cast<double>(x.numel()), x.options().dtype(at::kDouble)),
                                (~finite).sum().to(at::kDouble).reshape({1}),
                                at::where(finite, a, 0.0).max().to(at::kDouble).reshape({1})};
  const auto count = [](const at::Tensor& mask) { return mask.sum().to(at::kDouble).reshape({1}); };
  for (const FloatFormatLimits& f : kFloatFormats) {  // a mask per outcome, as cast_outcome reads
    const double flush = f.min_subnormal / 2, normal = f.min_normal - f.min_subnormal / 2;
    parts.push_back(count(nonzero & (a <= flush)));
    parts.push_back(count(nonzero & (a > flush) & (a < normal)));
    parts.push_back(count(finite & (f.overflow_at_bound ? a >= f.overflow_bound : a > f.overflow_bound)));
  }
  const at::Tensor row = at::cat(parts);
  std::array<double, 3 + kCountsPerFormat * kFloatFormatCount> out{};
  for (size_t k = 0; k < out.size(); ++k) out[k] = row[static_cast<int64_t>(k)].item<double>();
  return out;
}

void expect_matches_reference(const ActivationSample& s, const at::Tensor& output, const std::string& what) {
  const auto ref = per_module_reference(output);
  const double n = ref[0];
  EXPECT_EQ(s.numel, static_cast<int64_t>(n)) << what;
  EXPECT_EQ(s.nonfinite_fraction, ref[1] / n) << what;
  EXPECT_EQ(s.max_abs, ref[2]) << what;
  for (const FloatFormatLimits& f : kFloatFormats) {
    const size_t base = 3 + kCountsPerFormat * static_cast<size_t>(f.format);
    const FormatRangeShares shares = range_shares(s, f.format);
    EXPECT_EQ(shares.underflow, ref[base] / n) << what << " " << f.name;
    EXPECT_EQ(shares.subnormal, ref[base + 1] / n) << what << " " << f.name;
    EXPECT_EQ(shares.overflow, ref[base + 2] / n) << what << " " << f.name;
  }
}

std::string scope(const std::string& module) { return std::string(engine::kModuleScopePrefix) + module; }

// Outputs a module chain of width 32, batch 16 might give, one per module.
std::vector<at::Tensor> chain_outputs(int modules) {
  at::manual_seed(static_cast<uint64_t>(modules));
  std::vector<at::Tensor> outputs;
  for (int i = 0; i < modules; ++i) outputs.push_back(at::randn({16, 32}).to(at::kBFloat16));
  return outputs;
}

TEST(ActivationStats, ASampleDispatchesNoOpInTheForwardAndAsManyAfterItForSixtyFourModulesAsForFour) {
  // The recorder's own ops are counted too (OwnWork leaves them recorded).
  OwnWork::recorded_on_this_thread() = true;
  int64_t forward_ops[2] = {0, 0}, pass_ops[2] = {0, 0};
  const int sizes[2] = {4, 64};
  for (int k = 0; k < 2; ++k) {
    const auto outputs = chain_outputs(sizes[k]);
    ActivationRecorder recorder;
    {
      test::DispatchedOps ops;
      for (size_t i = 0; i < outputs.size(); ++i) recorder.on_module_output(scope("layers." + std::to_string(i)), outputs[i]);
      forward_ops[k] = ops.count();
    }
    test::DispatchedOps ops;
    ASSERT_EQ(recorder.take(2).size(), static_cast<size_t>(sizes[k]));
    pass_ops[k] = ops.count();
  }
  OwnWork::recorded_on_this_thread() = false;
  EXPECT_EQ(forward_ops[0], 0);
  EXPECT_EQ(forward_ops[1], 0);
  EXPECT_GT(pass_ops[0], 0) << "the counting callback saw nothing";
  EXPECT_EQ(pass_ops[1], pass_ops[0]);
  RecordProperty("ops_per_sample", std::to_string(pass_ops[1]));  // for docs/performance.md
}

// The pass reads each output's elements as they lie in memory: transposed (dense,
// not contiguous) and expanded (not dense) outputs, mixed dtypes and sizes side by
// side, inf/NaN, fp16 subnormals and a float64 output (which makes the pass
// float64) each get the numbers the per-module computation gave.
TEST(ActivationStats, TheBatchedPassGivesThePerModuleNumbers) {
  at::manual_seed(11);
  at::Tensor with_inf = at::randn({7, 5}) * 10;
  with_inf[0][0] = std::numeric_limits<float>::infinity();
  with_inf[3][1] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<at::Tensor> outputs{
      (at::randn({48, 16}) * 1e-6).t(),                    // fp16 subnormal range, transposed
      (at::randn({1, 7}) * 300).expand({5, 7}),            // expanded: not dense; beyond fp8 e4m3
      (at::randn({300}) * 1e3).to(at::kBFloat16),
      with_inf.to(at::kHalf),
      at::randn({3, 4, 5}, at::kDouble) * 1e-30,           // below every format
      at::randn({64}) * 1e5,                               // beyond fp16 and fp8
  };
  for (bool with_double : {true, false}) {
    ActivationRecorder recorder;
    std::vector<at::Tensor> seen;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!with_double && outputs[i].scalar_type() == at::kDouble) continue;
      recorder.on_module_output(scope("m" + std::to_string(i)), outputs[i]);
      seen.push_back(outputs[i]);
    }
    const auto samples = recorder.take(4);
    ASSERT_EQ(samples.size(), seen.size());
    for (size_t i = 0; i < seen.size(); ++i)
      expect_matches_reference(samples[i], seen[i], samples[i].module + (with_double ? " (float64 pass)" : ""));
  }
}

TEST(ActivationStats, OneModuleOverflowingFp16IsTheFirstOverflowInCompletionOrder) {
  // Module 5 of 8 holds 70000 (beyond fp16's 65504, finite in fp32), module 6 an
  // fp16 inf it inherited; the rest stay small.
  ActivationRecorder recorder;
  for (int i = 0; i < 8; ++i) {
    at::Tensor y = at::full({4, 4}, 2.0);
    if (i == 5) y[1][2] = 70000.0;
    if (i == 6) y = at::full({4, 4}, std::numeric_limits<float>::infinity()).to(at::kHalf);
    recorder.on_module_output(scope("blocks." + std::to_string(i)), y);
  }
  const auto samples = recorder.take(9);
  ASSERT_EQ(samples.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(overflows_fp16(samples[static_cast<size_t>(i)]), i == 5 || i == 6) << i;
  EXPECT_EQ(samples[5].fp16.overflow, 1.0 / 16);
  EXPECT_EQ(samples[5].max_abs, 70000.0);
  EXPECT_EQ(samples[6].nonfinite_fraction, 1.0);
  ASSERT_NE(first_fp16_overflow(samples), nullptr);
  EXPECT_EQ(first_fp16_overflow(samples)->module, "blocks.5");
}

TEST(ActivationStats, HeldOutputsStayWithinTheBoundAndStillAddUp) {
  // A bound of 3 outputs' bytes: the fourth runs a pass on the three held first;
  // an output beyond the bound on its own is measured as it arrives.
  const at::Tensor small = at::ones({16, 32});  // 2 KiB
  const int64_t bound = 3 * small.numel() * 4;
  ActivationRecorder recorder(bound);
  for (int micro = 0; micro < 2; ++micro) {
    for (int i = 0; i < 5; ++i) {
      recorder.on_module_output(scope("l" + std::to_string(i)), small * (i + 1));
      EXPECT_LE(recorder.held_bytes(), bound);
    }
    recorder.on_module_output(scope("big"), at::full({4096}, 70000.0));
    EXPECT_EQ(recorder.held_bytes(), 0);
  }
  const auto samples = recorder.take(1);
  ASSERT_EQ(samples.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(samples[static_cast<size_t>(i)].module, "l" + std::to_string(i));
    EXPECT_EQ(samples[static_cast<size_t>(i)].numel, 2 * 512);
    EXPECT_EQ(samples[static_cast<size_t>(i)].max_abs, i + 1.0);
  }
  EXPECT_EQ(samples[5].numel, 2 * 4096);
  EXPECT_EQ(samples[5].fp16.overflow, 1.0);
  EXPECT_TRUE(recorder.empty());
}

TEST(ActivationStats, AnOutputChangedInPlaceAfterItsModuleIsCopiedFromTheNextSampleOn) {
  ActivationRecorder recorder;
  for (int step = 1; step <= 2; ++step) {
    at::Tensor y = at::full({8}, 3.0);
    recorder.on_module_output(scope("adds_in_place"), y);
    y.mul_(1e6);  // the next module's in-place op, after the recorder saw y
    const auto samples = recorder.take(step);
    ASSERT_EQ(samples.size(), 1u);
    // The first sample can only see what is left (documented); later ones copy.
    EXPECT_EQ(samples[0].max_abs, step == 1 ? 3e6 : 3.0) << step;
  }
}

}  // namespace
}  // namespace ampscope::profiler
