#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <cmath>
#include <numbers>

#include "engine/config.h"
#include "engine/config_json.h"
#include "engine/errors.h"
#include "engine/events.h"
#include "engine/optim.h"
#include "tests/support/train_steps.h"

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

// A session's settings come back exactly: the run panel shows them and "Start" re-runs them.
TEST(Config, JsonRoundTripsEverySetting) {
  TrainConfig c;
  c.model.kind = ModelKind::kGPT;
  c.model.layers = 3;
  c.model.width = 96;
  c.model.heads = 6;
  c.model.seq_len = 32;
  c.model.tied_head = false;
  c.model.attention = AttentionKind::kMath;
  c.model.channels_last = true;
  c.optim.fused = true;
  c.eval_every = 25;
  c.eval_batches = 3;
  c.data.kind = DataKind::kText;
  c.data.path = "/data/corpus.txt";
  c.data.vocab_size = 80;
  c.precision = Precision::kFP16;
  c.device = DeviceChoice::kCUDA;
  c.allow_tf32 = true;
  c.scaler.init_scale = 1024;
  c.scaler.growth_interval = 100;
  c.optim.kind = OptimizerKind::kSGD;
  c.optim.lr = 0.05;
  c.optim.beta1 = 0.8;
  c.optim.beta2 = 0.95;
  c.optim.schedule = ScheduleKind::kCosine;
  c.optim.warmup_steps = 7;
  c.steps = 123;
  c.batch_size = 17;
  c.accumulation_steps = 3;
  c.clip_grad_norm = 1.5;
  c.seed = 42;
  const TrainConfig back = config_from_json(to_json(c).dump());
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.use_scaler, std::optional<bool>(true));  // fp16's default made explicit
  EXPECT_EQ(back.optim.beta2, 0.95);
  EXPECT_EQ(back.data.path, "/data/corpus.txt");
  EXPECT_EQ(back.model.attention, AttentionKind::kMath);
  EXPECT_TRUE(back.optim.fused);
  EXPECT_EQ(back.eval_every, 25);
}

// GPT sessions saved before --attention existed ran the written-out attention: re-running one
// from the GUI must not switch it to SDPA behind the user's back.
TEST(Config, OlderGptSettingsMeanWrittenOutAttention) {
  EXPECT_EQ(config_from_json(R"({"model": {"kind": "gpt"}})").model.attention, AttentionKind::kMath);
  EXPECT_EQ(config_from_json(R"({"model": {"kind": "gpt", "attention": "sdpa"}})").model.attention,
            AttentionKind::kSDPA);
  EXPECT_EQ(config_from_json(R"({"model": {"kind": "mlp"}})").model.attention, AttentionKind::kSDPA);
  EXPECT_EQ(TrainConfig{}.model.attention, AttentionKind::kSDPA);
  EXPECT_FALSE(TrainConfig{}.optim.fused);
  EXPECT_EQ(parse_attention("math"), AttentionKind::kMath);
  EXPECT_FALSE(parse_attention("flash").has_value());
}

TEST(Config, JsonFromAnOlderOrDamagedFileIsDefaultsOrAClearError) {
  const TrainConfig partial = config_from_json(R"({"model": {"kind": "convnet"}, "steps": 9})");
  EXPECT_EQ(partial.model.kind, ModelKind::kConvNet);
  EXPECT_EQ(partial.steps, 9);
  EXPECT_EQ(partial.batch_size, TrainConfig{}.batch_size);
  auto message = [](std::string_view json) {
    try {
      config_from_json(json);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{\"steps\": "), "the saved settings are not valid JSON (byte 11)");
  EXPECT_EQ(message(R"({"model": {"kind": "resnet"}})"), "the saved settings name an unknown model.kind 'resnet'");
  EXPECT_EQ(message(R"({"steps": "many"})"), "the saved settings have a malformed 'steps'");
  EXPECT_EQ(message(R"({"optimizer": {"betas": [0.9]}})"), "the saved settings have a malformed 'optimizer.betas'");
  EXPECT_EQ(message("[1, 2]"), "the saved settings are not a JSON object");
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
  for (int i = 1; i <= 5; ++i) q.try_push(test::step_event(i));
  EXPECT_EQ(q.dropped(), 2u);
  std::vector<Event> out;
  EXPECT_EQ(q.drain(out), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::get<StepEvent>(out[i]).step, i + 1);
  EXPECT_TRUE(q.try_push(test::step_event(6)));  // space again after draining
}

}  // namespace
}  // namespace ampscope::engine
