#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <numbers>

#include "engine/config.h"
#include "engine/errors.h"
#include "engine/events.h"
#include "engine/optim.h"

namespace ampscope::engine {
namespace {

TEST(Config, NamesRoundTrip) {
  for (auto p : {Precision::kFP32, Precision::kFP16, Precision::kBF16}) EXPECT_EQ(parse_precision(to_string(p)), p);
  for (auto m : {ModelKind::kMLP, ModelKind::kConvNet, ModelKind::kGPT, ModelKind::kTorchScript})
    EXPECT_EQ(parse_model(to_string(m)), m);
  for (auto d : {DataKind::kSynthetic, DataKind::kMNIST, DataKind::kCIFAR10, DataKind::kText, DataKind::kCSV})
    EXPECT_EQ(parse_data(to_string(d)), d);
  EXPECT_FALSE(parse_precision("fp8").has_value());
}

TEST(Config, ScalerDefaultsFollowPrecision) {
  TrainConfig c;
  c.precision = Precision::kFP16;
  EXPECT_TRUE(c.scaler_enabled());
  c.precision = Precision::kBF16;
  EXPECT_FALSE(c.scaler_enabled());
  c.use_scaler = true;
  EXPECT_TRUE(c.scaler_enabled());
}

TEST(Config, ContradictionsAreRejectedWithTheFlagName) {
  auto expect_error = [](TrainConfig c, const std::string& needle) {
    try {
      validate(c);
      ADD_FAILURE() << "accepted; expected an error mentioning " << needle;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  TrainConfig c;
  c.steps = 0;
  expect_error(c, "--steps");
  c = {};
  c.precision = Precision::kFP32;
  c.use_scaler = true;
  expect_error(c, "scaler");
  c = {};
  c.model.kind = ModelKind::kTorchScript;
  expect_error(c, "--torchscript");
  c = {};
  c.optim.warmup_steps = 10;
  expect_error(c, "--schedule cosine");
  c = {};
  c.precision = Precision::kFP16;
  c.scaler.backoff_factor = 1.5;
  expect_error(c, "--backoff-factor");
  c = {};
  c.data.kind = DataKind::kCSV;
  expect_error(c, "--data-path");
  validate(TrainConfig{});  // the defaults are valid
}

TEST(LearningRateSchedule, CosineWithWarmup) {
  OptimConfig o;
  o.lr = 1.0;
  o.schedule = ScheduleKind::kCosine;
  o.warmup_steps = 4;
  o.min_lr_ratio = 0.1;
  LearningRateSchedule s(o, 104);
  EXPECT_DOUBLE_EQ(s.lr_at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.lr_at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(4), 1.0);
  EXPECT_NEAR(s.lr_at(54), 0.1 + 0.9 * 0.5, 1e-12);  // half way through the decay
  EXPECT_NEAR(s.lr_at(104), 0.1, 1e-12);
  EXPECT_NEAR(s.lr_at(500), 0.1, 1e-12);  // clamps past the end
}

TEST(LearningRateSchedule, AppliesToEveryParamGroup) {
  OptimConfig o;
  o.kind = OptimizerKind::kSGD;
  o.lr = 0.5;
  o.schedule = ScheduleKind::kCosine;
  auto opt = make_optimizer(o, {at::ones({2}).set_requires_grad(true)});
  LearningRateSchedule s(o, 10);
  EXPECT_DOUBLE_EQ(s.apply(*opt, 10), 0.0);
  EXPECT_DOUBLE_EQ(opt->param_groups()[0].options().get_lr(), 0.0);
}

TEST(Optimizers, EachKindStepsAndRejectsBadSettings) {
  for (auto kind : {OptimizerKind::kSGD, OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    OptimConfig o;
    o.kind = kind;
    o.lr = 0.1;
    at::Tensor p = at::ones({3}).set_requires_grad(true);
    auto opt = make_optimizer(o, {p});
    p.sum().backward();
    opt->step();
    EXPECT_TRUE((p.detach() < 1.0).all().item<bool>()) << to_string(kind);
  }
  OptimConfig bad;
  bad.lr = -1;
  EXPECT_THROW(make_optimizer(bad, {at::ones({1}).set_requires_grad(true)}), ConfigError);
}

TEST(EventQueue, DropsWhenFullAndKeepsOrder) {
  EventQueue q(3);
  for (int i = 1; i <= 5; ++i) q.try_push(StepEvent{.step = i});
  EXPECT_EQ(q.dropped(), 2u);
  std::vector<Event> out;
  EXPECT_EQ(q.drain(out), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::get<StepEvent>(out[i]).step, i + 1);
  EXPECT_TRUE(q.try_push(StepEvent{.step = 6}));  // space again after draining
}

}  // namespace
}  // namespace ampscope::engine
