// Training on the CPU for real: the loss falls for every built-in model in every
// precision, runs are deterministic, accumulation and clipping behave.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "engine/errors.h"
#include "engine/training_run.h"
#include "tests/support/train_steps.h"

namespace ampscope::engine {
namespace {

TrainConfig small_config(ModelKind model, Precision precision) {
  TrainConfig c;
  c.model.kind = model;
  c.model.layers = 2;
  c.model.width = model == ModelKind::kConvNet ? 16 : 64;
  c.model.heads = 4;
  c.model.seq_len = 16;
  c.data.vocab_size = 16;
  c.data.synthetic_samples = 1024;
  c.precision = precision;
  c.device = DeviceChoice::kCPU;
  c.batch_size = 32;
  c.steps = 60;
  c.optim.kind = OptimizerKind::kAdamW;
  c.optim.lr = 3e-3;
  c.seed = 7;
  return c;
}

std::vector<StepEvent> train(const TrainConfig& config) { return test::train_all_steps(config); }
using test::mean_loss;

using ModelPrecision = std::tuple<ModelKind, Precision>;
class LossFalls : public ::testing::TestWithParam<ModelPrecision> {};

TEST_P(LossFalls, OnTheCpuWithinSeconds) {
  const auto [model, precision] = GetParam();
  const TrainConfig config = small_config(model, precision);
  const auto events = train(config);
  ASSERT_EQ(events.size(), static_cast<size_t>(config.steps));
  const double first = mean_loss(events, 0, 5);
  const double last = mean_loss(events, events.size() - 5, events.size());
  EXPECT_LT(last, 0.7 * first) << "loss " << first << " -> " << last;
  int64_t skipped = 0;
  for (const auto& e : events) {
    skipped += e.skipped;
    EXPECT_GT(e.step_time_ms, 0.0);
    EXPECT_GT(e.samples_per_second, 0.0);
    EXPECT_GT(e.memory.allocated_bytes, 0);
  }
  EXPECT_LT(skipped, 5);  // the scaler may skip a few steps while it settles
  if (precision == Precision::kFP16) {
    EXPECT_EQ(events.front().loss_scale, 65536.0);
  } else {
    EXPECT_EQ(events.front().loss_scale, 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    BuiltInModels, LossFalls,
    ::testing::Combine(::testing::Values(ModelKind::kMLP, ModelKind::kConvNet, ModelKind::kGPT),
                       ::testing::Values(Precision::kFP32, Precision::kBF16, Precision::kFP16)),
    [](const auto& info) {
      return fmt::format("{}_{}", to_string(std::get<0>(info.param)), to_string(std::get<1>(info.param)));
    });

TEST(TrainingRun, DeterministicForASeed) {
  for (Precision p : {Precision::kFP32, Precision::kBF16}) {
    TrainConfig c = small_config(ModelKind::kGPT, p);
    c.steps = 5;
    const auto a = train(c);
    const auto b = train(c);
    c.seed = 8;
    const auto other = train(c);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].loss, b[i].loss) << "step " << i + 1;
    EXPECT_NE(a[0].loss, other[0].loss);
  }
}

TEST(TrainingRun, AccumulationUpdatesTheScalerOncePerOptimizerStep) {
  TrainConfig c = small_config(ModelKind::kMLP, Precision::kFP16);
  c.accumulation_steps = 4;
  c.steps = 3;
  c.scaler.growth_interval = 100;
  const auto events = train(c);
  // The growth tracker counts clean optimizer steps, not micro-batches.
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].growth_tracker, 0);
  EXPECT_EQ(events[1].growth_tracker, 1);
  EXPECT_EQ(events[2].growth_tracker, 2);
  EXPECT_DOUBLE_EQ(events[0].samples_per_second * events[0].step_time_ms / 1e3, 4.0 * c.batch_size);
}

TEST(TrainingRun, ClippingActsOnUnscaledGradients) {
  // With SGD (no momentum) an optimizer step moves the weights by lr * grad, so
  // the size of the move shows what the clipping saw. A clip of 1e-3 on the
  // unscaled gradient moves the weights by lr * 1e-3; clipping the scaled
  // gradient (before unscale_) would move them 65536 times less.
  TrainConfig c = small_config(ModelKind::kMLP, Precision::kFP16);
  c.optim.kind = OptimizerKind::kSGD;
  c.optim.momentum = 0.0;
  c.optim.lr = 0.1;
  c.clip_grad_norm = 1e-3;
  c.steps = 1;
  TrainingRun run(c);
  std::vector<at::Tensor> before;
  for (const auto& p : run.model().parameters()) before.push_back(p.detach().clone());
  const StepEvent e = run.step(1);
  ASSERT_FALSE(e.skipped);
  ASSERT_GT(e.grad_norm, 1e-2);  // the gradient really is larger than the clip
  ASSERT_LT(e.grad_norm, 1e3);   // and reported unscaled
  double moved_sq = 0;
  const auto after = run.model().parameters();
  for (size_t i = 0; i < after.size(); ++i) moved_sq += (after[i].detach() - before[i]).pow(2).sum().item<double>();
  EXPECT_NEAR(std::sqrt(moved_sq), c.optim.lr * c.clip_grad_norm, 0.02 * c.optim.lr * c.clip_grad_norm);
}

// An SGD run at a learning rate of 1e30 over ten steps: the TrainingError it ends with ("" if none).
std::string divergence_message(TrainConfig c) {
  c.optim.kind = OptimizerKind::kSGD;
  c.optim.lr = 1e30;  // step 1's update makes the weights overflow every later forward
  c.steps = 10;
  TrainingRun run(c);
  try {
    for (int64_t s = 1; s <= c.steps; ++s) run.step(s);
  } catch (const TrainingError& e) {
    return e.what();
  }
  return "";
}

TEST(TrainingRun, Fp32DivergenceIsAnErrorNotACrash) {
  const std::string what = divergence_message(small_config(ModelKind::kMLP, Precision::kFP32));
  EXPECT_NE(what.find("diverged"), std::string::npos) << what;
}

// Under a loss scaler a diverged run ends after max_consecutive_skips skipped steps. When
// the loss itself went non-finite, the forward pass overflows and no scale can help: the
// message says so and since when, where it only said "inf/NaN gradients".
TEST(TrainingRun, ADivergedScaledRunSaysSinceWhenTheLossWasNotFinite) {
  TrainConfig c = small_config(ModelKind::kMLP, Precision::kFP16);
  c.max_consecutive_skips = 3;
  const std::string what = divergence_message(c);
  EXPECT_NE(what.find("3 consecutive steps had inf/NaN gradients"), std::string::npos) << what;
  EXPECT_NE(what.find("since step 2: the forward pass itself overflows, which no loss scale fixes"),
            std::string::npos)
      << what;
}

TEST(TrainingRun, ImpossibleSettingsAreConfigErrors) {
  TrainConfig c = small_config(ModelKind::kGPT, Precision::kFP32);
  c.model.heads = 3;  // 64 is not a multiple of 3
  EXPECT_THROW(TrainingRun{c}, ConfigError);
  c = small_config(ModelKind::kMLP, Precision::kFP32);
  c.use_scaler = true;
  EXPECT_THROW(TrainingRun{c}, ConfigError);
  c = small_config(ModelKind::kMLP, Precision::kFP32);
  c.data.kind = DataKind::kMNIST;
  EXPECT_THROW(TrainingRun{c}, ConfigError);  // no --data-path
}


// Validation: the same batches every time, no training-state change (parameters, gradients,
// BatchNorm statistics, training mode), its own loss on the steps it is due, none elsewhere.
TEST(TrainingRunEval, ValidationChangesNothingAndRepeats) {
  for (auto precision : {Precision::kFP32, Precision::kBF16}) {
    SCOPED_TRACE(to_string(precision));
    TrainConfig c = small_config(ModelKind::kConvNet, precision);
    c.steps = 6;
    c.eval_every = 3;
    c.eval_batches = 2;
    TrainingRun run(c);
    std::vector<StepEvent> events;
    for (int64_t s = 1; s <= 3; ++s) events.push_back(run.step(s));
    EXPECT_TRUE(std::isnan(events[0].eval_loss));
    EXPECT_TRUE(std::isnan(events[1].eval_loss));
    ASSERT_TRUE(std::isfinite(events[2].eval_loss));
    std::vector<at::Tensor> before;
    for (const auto& [name, p] : run.model().named_parameters()) before.push_back(p.detach().clone());
    const double again = run.evaluate(2);
    EXPECT_EQ(again, events[2].eval_loss);  // same batches, same weights: the same loss
    size_t i = 0;
    for (const auto& [name, p] : run.model().named_parameters()) {
      EXPECT_TRUE(at::equal(p.detach(), before[i++])) << name;
    }
    // The model is back in training mode: the next step trains as without validation.
    TrainConfig plain = c;
    plain.eval_every = 0;
    TrainingRun reference(plain);
    for (int64_t s = 1; s <= 4; ++s) {
      const StepEvent theirs = reference.step(s);
      if (s == 4) { EXPECT_EQ(run.step(4).loss, theirs.loss); }
    }
  }
}

}  // namespace
}  // namespace ampscope::engine
