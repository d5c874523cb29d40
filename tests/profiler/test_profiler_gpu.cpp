// The profiler's claims on a real GPU (issue #10), each skipped without CUPTI and
// a CUDA device: GEMM (cuBLASLt, launched through cuLaunchKernelEx) and attention
// kernels carry their op, almost no GPU time is left without an op, unsampled
// steps produce no kernel records, and CUPTI can be taken and released twice in
// one process.
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/trainer.h"
#include "profiler/capture/profiler.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/store/session_reader.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

bool gpu_tracing_possible(std::string* why) {
  if (!cupti::built_with_cupti()) return *why = "built without CUPTI", false;
  if (!at::hasCUDA()) return *why = "LibTorch sees no CUDA device", false;
  return true;
}

// A GPT big enough for cuBLASLt's GEMMs and fused attention.
engine::TrainConfig gpu_gpt(int64_t steps) {
  engine::TrainConfig c = test::tiny_gpt(engine::Precision::kBF16, steps);
  c.device = engine::DeviceChoice::kCUDA;
  c.model.layers = 2;
  c.model.width = 256;
  c.model.heads = 4;
  c.model.seq_len = 128;
  c.data.vocab_size = 256;
  c.batch_size = 8;
  return c;
}

void train(Profiler& profiler, const engine::TrainConfig& config) {
  engine::Trainer trainer(config);
  trainer.add_observer(&profiler);
  trainer.start();
  trainer.wait();
  ASSERT_EQ(trainer.state(), engine::RunState::kFinished) << trainer.error_message();
}

bool is_gemm_or_attention(const std::string& name) {
  for (const char* n : {"aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::matmul",
                        "aten::scaled_dot_product_attention", "aten::_scaled_dot_product"}) {
    if (name.rfind(n, 0) == 0) return true;
  }
  return false;
}

TEST(ProfilerGpu, GemmAndAttentionKernelsCarryTheirOp) {
  std::string why;
  if (!gpu_tracing_possible(&why)) GTEST_SKIP() << why;
  ProfilerOptions options;
  options.capture.gradient_every = 2;
  options.capture.sample_budget_percent = 0;  // every K steps exactly, whatever they cost
  Profiler profiler(options);
  train(profiler, gpu_gpt(4));
  if (profiler.gpu_tracing() != "cupti") GTEST_SKIP() << profiler.gpu_tracing();
  const auto snap = profiler.snapshot();
  int gemm_rows = 0;
  for (const OpStats& row : snap->op_stats) {
    if (row.phase != Phase::kForward || !is_gemm_or_attention(row.name)) continue;
    if (row.output_dtypes.empty() || row.output_dtypes.front() != "bfloat16") continue;
    ++gemm_rows;
    EXPECT_GT(row.gpu_time_ns, 0) << row.name << " " << row.module;
    EXPECT_GT(row.tensor_core_kernels, 0) << row.name << " " << row.module << ": no Tensor Core kernel";
  }
  EXPECT_GE(gemm_rows, 4);
  EXPECT_LT(snap->gpu_attribution.unattributed_share(), 0.02)
      << snap->gpu_attribution.unattributed_ns << " of " << snap->gpu_attribution.traced_ns << " ns";
}

TEST(ProfilerGpu, UnsampledStepsProduceNoKernelRecords) {
  std::string why;
  if (!gpu_tracing_possible(&why)) GTEST_SKIP() << why;
  test::ScratchDir dir;
  ProfilerOptions options;
  options.session_path = (dir / "s.ampscope").string();
  options.capture.every_n_steps = 3;  // steps 1 and 4
  options.capture.gradient_every = 1;
  options.capture.sample_budget_percent = 0;  // every K steps exactly, whatever they cost
  {
    Profiler profiler(options);
    train(profiler, gpu_gpt(6));
    if (profiler.gpu_tracing() != "cupti") GTEST_SKIP() << profiler.gpu_tracing();
  }
  std::set<int64_t> steps;
  const auto session = SessionReader::open(options.session_path);
  session.for_each_kernel(INT64_MIN, INT64_MAX, [&](const KernelRecord& k) { steps.insert(k.step); });
  EXPECT_EQ(steps, (std::set<int64_t>{1, 4}));
  EXPECT_LT(session.gpu_attribution().unattributed_share(), 0.02);
}

TEST(ProfilerGpu, TwoStartStopCyclesInOneProcess) {
  std::string why;
  if (!gpu_tracing_possible(&why)) GTEST_SKIP() << why;
  for (int cycle = 0; cycle < 2; ++cycle) {
    ProfilerOptions options;
    Profiler profiler(options);
    train(profiler, gpu_gpt(2));
    ASSERT_EQ(profiler.gpu_tracing(), "cupti") << "cycle " << cycle;
    EXPECT_FALSE(profiler.snapshot()->top_kernels.empty()) << "cycle " << cycle;
  }
}

}  // namespace
}  // namespace ampscope::profiler
