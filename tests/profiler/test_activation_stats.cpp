// Forward activation ranges: a crafted model whose third block's output exceeds
// fp16's max names that block as where the overflow started, on the CPU under
// fp16 autocast; the stats match a cast done by hand; the store keeps them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/autocast_guard.h"
#include "engine/module_scope.h"
#include "profiler/capture/activation_stats.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"
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

}  // namespace
}  // namespace ampscope::profiler
