// estimated_weight_bytes, which lets a run refuse a model too big for memory before
// building it, against what the built-in models really allocate: every parameter and
// buffer, for several shapes of each.
#include <gtest/gtest.h>

#include <unordered_set>

#include "engine/models/convnet.h"
#include "engine/models/gpt.h"
#include "engine/models/mlp.h"
#include "engine/models/model.h"

namespace ampscope::engine {
namespace {

// Bytes of every parameter and buffer, each tensor once (a tied head shares its embedding).
double allocated_bytes(const torch::nn::Module& module) {
  std::unordered_set<const void*> seen;
  double bytes = 0;
  for (const auto& list : {module.parameters(), module.buffers()})
    for (const auto& t : list)
      if (seen.insert(t.unsafeGetTensorImpl()).second) bytes += static_cast<double>(t.nbytes());
  return bytes;
}

TEST(ModelMemory, MlpEstimateIsWhatItAllocates) {
  const SampleSpec spec{TaskKind::kClassification, {32}, 10, 0};
  for (const auto& [layers, width] : {std::pair<int64_t, int64_t>{0, 8}, {1, 16}, {3, 24}}) {
    ModelConfig c;
    c.kind = ModelKind::kMLP;
    c.layers = layers;
    c.width = width;
    models::MlpImpl built(32, layers, width, 10);
    EXPECT_EQ(estimated_weight_bytes(c, spec), allocated_bytes(built)) << layers << "x" << width;
  }
  // Regression: the output is the target's width.
  const SampleSpec regression{TaskKind::kRegression, {5}, 0, 1};
  ModelConfig c;
  c.kind = ModelKind::kMLP;
  c.layers = 2;
  c.width = 8;
  EXPECT_EQ(estimated_weight_bytes(c, regression), allocated_bytes(models::MlpImpl(5, 2, 8, 1)));
}

TEST(ModelMemory, ConvNetEstimateIsWhatItAllocates) {
  const SampleSpec spec{TaskKind::kClassification, {3, 8, 8}, 10, 0};
  for (const auto& [layers, width] : {std::pair<int64_t, int64_t>{1, 8}, {2, 16}}) {
    ModelConfig c;
    c.kind = ModelKind::kConvNet;
    c.layers = layers;
    c.width = width;
    models::ConvNetImpl built(3, layers, width, 10, false);
    EXPECT_EQ(estimated_weight_bytes(c, spec), allocated_bytes(built)) << layers << "x" << width;
  }
}

TEST(ModelMemory, GptEstimateIsWhatItAllocates) {
  for (const bool tied : {true, false}) {
    ModelConfig c;
    c.kind = ModelKind::kGPT;
    c.layers = 2;
    c.width = 16;
    c.heads = 2;
    c.seq_len = 12;
    c.tied_head = tied;
    const SampleSpec spec{TaskKind::kLanguageModel, {12}, 40, 0};
    models::GptImpl built(40, 12, 2, 16, 2, tied, AttentionKind::kSDPA);
    EXPECT_EQ(estimated_weight_bytes(c, spec), allocated_bytes(built)) << (tied ? "tied" : "untied");
  }
}

TEST(ModelMemory, AbsurdSettingsDoNotOverflow) {
  ModelConfig c;
  c.kind = ModelKind::kMLP;
  c.width = 10000000000;  // (10^10)^2 does not fit in 64 bits
  EXPECT_GT(estimated_weight_bytes(c, SampleSpec{TaskKind::kClassification, {32}, 10, 0}), 1e20);
}

}  // namespace
}  // namespace ampscope::engine
