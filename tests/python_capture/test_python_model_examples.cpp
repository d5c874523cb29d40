// `ampscope run` on the two model examples users train on GPUs (examples/hf_gpt2_fp16.py,
// a Hugging Face GPT-2 with GradScaler, unscale_ and clipping; examples/
// torchvision_resnet50_bf16.py, channels-last bf16), at small sizes on the CPU: the
// scripts run unmodified under capture, and their sessions hold what a user opens
// them for. scripts/gpu-check.sh runs the same scripts at full size on CUDA.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;

class ModelExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    if (!ampscope::test::python_peers_installed())
      GTEST_SKIP() << "torchvision and transformers are not installed (PYTHON_TEST_PACKAGES)";
  }
  // Runs examples/NAME.py under `ampscope run` and returns the session's path.
  std::filesystem::path run(const std::string& name, const std::string& args) {
    const auto session = dir_ / (name + ".ampscope");
    const auto r = ampscope::test::ampscope(
        fmt::format("run --out '{}' '{}/{}.py' {} 2>&1", session.string(), AMPSCOPE_EXAMPLES_DIR, name, args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("steady step ms:"), std::string::npos) << r.output;
    return session;
  }
  ScratchDir dir_;
};

// Forward rows of `table` that autocast demoted, with their module paths.
std::map<std::string, const OpStats*> demoted_forward(const std::vector<OpStats>& table, const std::string& op) {
  std::map<std::string, const OpStats*> out;
  for (const auto& r : table)
    if (r.phase == Phase::kForward && r.category == OpCategory::kDemoted && r.name == op) out[r.module] = &r;
  return out;
}

TEST_F(ModelExamples, Gpt2Fp16RecordsDemotedProjectionsPerModuleAndOneOptimizerStepPerStep) {
  constexpr int kSteps = 4;
  const auto session = run("hf_gpt2_fp16", fmt::format("--steps {} --warmup 1 --layers 2 --width 64 --heads 4 "
                                                       "--seq-len 16 --batch-size 2 --vocab-size 128", kSteps));
  const auto reader = SessionReader::open(session.string());
  EXPECT_EQ(reader.meta_value("kind").value_or(""), "python");
  // GPT-2's projections are Conv1D modules calling addmm: autocast runs them in fp16,
  // each under its own module path (transformer.h.0.attn.c_attn, ...).
  const auto table = reader.op_stats();
  const auto addmm = demoted_forward(table, "aten::addmm");
  ASSERT_FALSE(addmm.empty()) << "no demoted aten::addmm in the forward";
  for (const auto& [module, row] : addmm) {
    EXPECT_FALSE(module.empty());
    ASSERT_FALSE(row->output_dtypes.empty());
    EXPECT_EQ(row->output_dtypes.front(), "float16") << module;
  }
  EXPECT_TRUE(addmm.count("transformer.h.0.attn.c_attn")) << "module paths: " << addmm.begin()->first;
  EXPECT_TRUE(addmm.count("transformer.h.1.mlp.c_fc"));
  // One step per optimizer step, each with the script's unscale_ before clipping.
  const auto steps = reader.steps();
  const auto optimizer_steps = reader.optimizer_steps();
  EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(optimizer_steps.size(), steps.size());
  for (const auto& r : optimizer_steps) {
    EXPECT_EQ(r.name, "AdamW");
    EXPECT_EQ(r.unscale_calls, 1) << "step " << r.step;
  }
}

TEST_F(ModelExamples, Resnet50Bf16RecordsDemotedConvolutionsInBfloat16WithoutAScaler) {
  constexpr int kSteps = 2;
  const auto session = run("torchvision_resnet50_bf16",
                           fmt::format("--steps {} --warmup 1 --image-size 32 --batch-size 2", kSteps));
  const auto reader = SessionReader::open(session.string());
  const auto table = reader.op_stats();
  const auto conv = demoted_forward(table, "aten::conv2d");
  // ResNet-50: the stem, 16 bottlenecks of 3 convolutions and 4 downsample convolutions.
  EXPECT_EQ(conv.size(), 53u);
  for (const auto& [module, row] : conv) {
    ASSERT_FALSE(row->output_dtypes.empty());
    EXPECT_EQ(row->output_dtypes.front(), "bfloat16") << module;
  }
  EXPECT_TRUE(conv.count("conv1"));
  EXPECT_TRUE(conv.count("layer4.2.conv3"));
  const auto steps = reader.steps();
  EXPECT_EQ(steps.size(), static_cast<size_t>(kSteps));
  for (const auto& s : steps) EXPECT_EQ(s.loss_scale, 1.0) << "bf16 needs no scaler";
  ASSERT_EQ(reader.optimizer_steps().size(), steps.size());
  EXPECT_EQ(reader.optimizer_steps().front().name, "SGD");
}

}  // namespace
