// The synthetic tasks: what each model kind gets, determinism per seed, and that the
// tasks carry a signal a model can learn.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "engine/config.h"
#include "engine/data/data_source.h"
#include "engine/errors.h"

namespace ampscope::engine {
namespace {

std::unique_ptr<DataSource> synthetic_for(ModelKind kind, uint64_t seed = 1,
                                          int64_t samples = 512) {
  DataConfig data;
  data.synthetic_samples = samples;
  data.vocab_size = 16;
  ModelConfig model;
  model.kind = kind;
  model.seq_len = 12;
  return make_data_source(data, model, seed);
}

Batch draw(DataSource& source, int64_t batch, uint64_t generator_seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(generator_seed);
  return source.sample_batch(batch, gen);
}

TEST(SyntheticData, MlpGetsLabelledVectors) {
  auto source = synthetic_for(ModelKind::kMLP);
  EXPECT_EQ(source->spec().task, TaskKind::kClassification);
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{32}));
  EXPECT_EQ(source->spec().num_classes, 10);
  EXPECT_EQ(source->size(), 512);
  const Batch b = draw(*source, 8, 0);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{8, 32}));
  EXPECT_EQ(b.input.scalar_type(), at::kFloat);
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{8}));
  EXPECT_EQ(b.target.scalar_type(), at::kLong);
  EXPECT_TRUE(b.input.device().is_cpu());
  EXPECT_GE(b.target.min().item<int64_t>(), 0);
  EXPECT_LT(b.target.max().item<int64_t>(), 10);
  EXPECT_FALSE(source->description().empty());
}

TEST(SyntheticData, TorchScriptGetsTheSameVectorsAsMlp) {
  auto mlp = synthetic_for(ModelKind::kMLP, 5);
  auto ts = synthetic_for(ModelKind::kTorchScript, 5);
  EXPECT_EQ(ts->spec().input_shape, mlp->spec().input_shape);
  const Batch a = draw(*mlp, 16, 3);
  const Batch b = draw(*ts, 16, 3);
  EXPECT_TRUE(at::equal(a.input, b.input));
  EXPECT_TRUE(at::equal(a.target, b.target));
}

TEST(SyntheticData, ConvNetGetsImages) {
  auto source = synthetic_for(ModelKind::kConvNet);
  EXPECT_EQ(source->spec().task, TaskKind::kClassification);
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{3, 16, 16}));
  EXPECT_EQ(source->spec().num_classes, 10);
  const Batch b = draw(*source, 4, 0);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{4, 3, 16, 16}));
  EXPECT_EQ(b.input.scalar_type(), at::kFloat);
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{4}));
  EXPECT_EQ(b.target.scalar_type(), at::kLong);
  EXPECT_GE(b.target.min().item<int64_t>(), 0);
  EXPECT_LT(b.target.max().item<int64_t>(), 10);
}

TEST(SyntheticData, GptGetsTokenSequencesWithShiftedTargets) {
  auto source = synthetic_for(ModelKind::kGPT);
  EXPECT_EQ(source->spec().task, TaskKind::kLanguageModel);
  EXPECT_EQ(source->spec().input_shape, (std::vector<int64_t>{12}));
  EXPECT_EQ(source->spec().num_classes, 16);
  const Batch b = draw(*source, 6, 0);
  EXPECT_EQ(b.input.sizes(), (at::IntArrayRef{6, 12}));
  EXPECT_EQ(b.target.sizes(), (at::IntArrayRef{6, 12}));
  EXPECT_EQ(b.input.scalar_type(), at::kLong);
  EXPECT_EQ(b.target.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(b.input.narrow(1, 1, 11), b.target.narrow(1, 0, 11)));
  EXPECT_GE(b.input.min().item<int64_t>(), 0);
  EXPECT_LT(b.input.max().item<int64_t>(), 16);
  EXPECT_LT(b.target.max().item<int64_t>(), 16);
}

TEST(SyntheticData, GptNextTokenIsAFunctionOfThePreviousOne) {
  // A learnable rule: the same token is always followed by the same token.
  auto source = synthetic_for(ModelKind::kGPT);
  const Batch b = draw(*source, 64, 1);
  std::vector<int64_t> next(16, -1);
  auto in = b.input.accessor<int64_t, 2>();
  auto out = b.target.accessor<int64_t, 2>();
  for (int64_t i = 0; i < 64; ++i) {
    for (int64_t t = 0; t < 12; ++t) {
      int64_t& n = next[in[i][t]];
      if (n == -1) n = out[i][t];
      ASSERT_EQ(n, out[i][t]) << "token " << in[i][t] << " has two successors";
    }
  }
}

TEST(SyntheticData, SameSeedsGiveIdenticalBatchesDifferentSeedsDiffer) {
  for (ModelKind kind : {ModelKind::kMLP, ModelKind::kConvNet, ModelKind::kGPT}) {
    SCOPED_TRACE(static_cast<int>(kind));
    auto a = synthetic_for(kind, 7);
    auto b = synthetic_for(kind, 7);
    auto c = synthetic_for(kind, 8);
    const Batch ba = draw(*a, 32, 11);
    const Batch bb = draw(*b, 32, 11);
    EXPECT_TRUE(at::equal(ba.input, bb.input));
    EXPECT_TRUE(at::equal(ba.target, bb.target));
    // A different data seed changes the data set; a different generator seed the batch.
    EXPECT_FALSE(at::equal(ba.input, draw(*c, 32, 11).input));
    EXPECT_FALSE(at::equal(ba.input, draw(*a, 32, 12).input));
  }
}

TEST(SyntheticData, ConsecutiveBatchesFromOneGeneratorDiffer) {
  auto source = synthetic_for(ModelKind::kMLP);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(0);
  const Batch first = source->sample_batch(16, gen);
  const Batch second = source->sample_batch(16, gen);
  EXPECT_FALSE(at::equal(first.input, second.input));
}

TEST(SyntheticData, VectorClassesAreNotDegenerate) {
  auto source = synthetic_for(ModelKind::kMLP, 3, 4096);
  const Batch b = draw(*source, 4096, 0);
  const at::Tensor counts = at::bincount(b.target, {}, 10);
  EXPECT_LT(counts.max().item<int64_t>(), 4096 / 2);
  EXPECT_GE((counts > 0).sum().item<int64_t>(), 8) << counts;
}

TEST(SyntheticData, VectorLabelsAreLinearlyPredictable) {
  // A least-squares linear probe on one-hot labels must beat chance (10%) by far.
  auto source = synthetic_for(ModelKind::kMLP, 4, 4096);
  const Batch b = draw(*source, 4096, 0);
  const at::Tensor x = at::cat({b.input, at::ones({4096, 1})}, 1).to(at::kDouble);
  const at::Tensor y = at::one_hot(b.target, 10).to(at::kDouble);
  const at::Tensor w = std::get<0>(at::linalg_lstsq(x, y));
  const double accuracy = x.matmul(w).argmax(1).eq(b.target).to(at::kDouble).mean().item<double>();
  EXPECT_GT(accuracy, 0.6);
}

TEST(SyntheticData, ImagesOfAClassAreCloserToTheirClassMean) {
  // Nearest-class-mean on held-out samples: the templates must stand out of the noise.
  auto source = synthetic_for(ModelKind::kConvNet, 2, 2048);
  const Batch train = draw(*source, 2048, 0);
  const at::Tensor x = train.input.reshape({2048, -1});
  std::vector<at::Tensor> means;
  for (int64_t c = 0; c < 10; ++c) means.push_back(x.index({train.target.eq(c)}).mean(0));
  const at::Tensor centers = at::stack(means);
  const Batch test = draw(*source, 256, 1);
  const at::Tensor distances = at::cdist(test.input.reshape({256, -1}), centers);
  const double accuracy = distances.argmin(1).eq(test.target).to(at::kDouble).mean().item<double>();
  EXPECT_GT(accuracy, 0.9);
}

TEST(SyntheticData, ImpossibleSettingsAreConfigErrors) {
  DataConfig data;
  ModelConfig model;
  data.synthetic_samples = 0;
  EXPECT_THROW(make_data_source(data, model, 0), ConfigError);
  data.synthetic_samples = 16;
  model.kind = ModelKind::kGPT;
  data.vocab_size = 1;
  EXPECT_THROW(make_data_source(data, model, 0), ConfigError);
  data.vocab_size = 8;
  model.seq_len = 0;
  EXPECT_THROW(make_data_source(data, model, 0), ConfigError);
  model.seq_len = 4;
  auto source = make_data_source(data, model, 0);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(0);
  EXPECT_THROW(source->sample_batch(0, gen), ConfigError);
}

}  // namespace
}  // namespace ampscope::engine
