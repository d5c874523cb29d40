// GradScaler against PyTorch's rule, written out here independently, and
// against torch.amp.GradScaler itself when Python torch is there.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <sstream>

#include "engine/grad_scaler.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

enum class Grad { kOk, kInf, kNaN };

struct StepRecord {
  double scale_used;
  bool stepped;
  double scale_after;
  bool operator==(const StepRecord&) const = default;
};

std::ostream& operator<<(std::ostream& os, const StepRecord& r) {
  return os << "{used " << r.scale_used << ", stepped " << r.stepped << ", after " << r.scale_after << "}";
}

// Runs the scaler on a 4-parameter SGD problem where the loss is made inf/NaN on
// the scripted steps, exactly as the Python reference script does.
std::vector<StepRecord> run_pattern(const std::vector<Grad>& pattern, const ScalerConfig& cfg) {
  at::Tensor param = at::ones({4}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(cfg, c10::Device(c10::kCPU));
  std::vector<StepRecord> records;
  for (Grad g : pattern) {
    opt.zero_grad();
    at::Tensor loss = (param * at::arange(1, 5, at::kFloat)).sum();
    if (g == Grad::kInf) loss = loss * std::numeric_limits<double>::infinity();
    if (g == Grad::kNaN) loss = loss * std::numeric_limits<double>::quiet_NaN();
    const double used = scaler.scale_value();
    scaler.scale(loss).backward();
    const at::Tensor before = param.detach().clone();
    const bool stepped = scaler.step(opt);
    EXPECT_EQ(stepped, !at::equal(before, param.detach()));
    scaler.update();
    records.push_back({used, stepped, scaler.scale_value()});
  }
  return records;
}

// PyTorch's _amp_update_scale_ rule, in float32 like the scale tensor.
std::vector<StepRecord> expected_by_rule(const std::vector<Grad>& pattern, const ScalerConfig& cfg) {
  float scale = static_cast<float>(cfg.init_scale);
  int64_t tracker = 0;
  std::vector<StepRecord> records;
  for (Grad g : pattern) {
    const float used = scale;
    const bool inf = g != Grad::kOk;
    if (inf) {
      scale = static_cast<float>(scale * cfg.backoff_factor);
      tracker = 0;
    } else if (++tracker == cfg.growth_interval) {
      const float grown = static_cast<float>(scale * cfg.growth_factor);
      if (std::isfinite(grown)) scale = grown;
      tracker = 0;
    }
    records.push_back({used, !inf, scale});
  }
  return records;
}

std::vector<Grad> parse_pattern(const std::string& text) {
  std::vector<Grad> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item == "inf" ? Grad::kInf : item == "nan" ? Grad::kNaN : Grad::kOk);
  return out;
}

const char* kPattern = "ok,ok,inf,ok,ok,ok,nan,nan,ok,ok,ok,ok,ok,ok,inf,ok,ok,ok,ok,ok";

TEST(GradScaler, DefaultsMatchTorchAmpGradScaler) {
  ScalerConfig cfg;
  EXPECT_EQ(cfg.init_scale, 65536.0);
  EXPECT_EQ(cfg.growth_factor, 2.0);
  EXPECT_EQ(cfg.backoff_factor, 0.5);
  EXPECT_EQ(cfg.growth_interval, 2000);
}

TEST(GradScaler, ScaleAndSkipSequenceFollowsPyTorchRule) {
  ScalerConfig cfg;
  cfg.init_scale = 1024.0;
  cfg.growth_interval = 3;
  const auto pattern = parse_pattern(kPattern);
  EXPECT_EQ(run_pattern(pattern, cfg), expected_by_rule(pattern, cfg));
}

TEST(GradScaler, NonDefaultFactorsFollowRule) {
  ScalerConfig cfg;
  cfg.init_scale = 3.0;
  cfg.growth_factor = 3.0;
  cfg.backoff_factor = 0.25;
  cfg.growth_interval = 2;
  const auto pattern = parse_pattern(kPattern);
  EXPECT_EQ(run_pattern(pattern, cfg), expected_by_rule(pattern, cfg));
}

TEST(GradScaler, NeverGrowsToInfinity) {
  ScalerConfig cfg;
  cfg.init_scale = std::ldexp(1.0, 127);  // float32 max is just under 2^128
  cfg.growth_interval = 1;
  at::Tensor param = at::ones({4}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(cfg, c10::Device(c10::kCPU));
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    // Gradients of 2^-20, so even scaled by 2^127 they stay finite.
    scaler.scale(param.sum() * std::ldexp(1.0, -20)).backward();
    ASSERT_TRUE(scaler.step(opt));
    scaler.update();
    EXPECT_EQ(scaler.scale_value(), std::ldexp(1.0, 127));  // 2^128 would be inf: kept
    EXPECT_EQ(scaler.growth_tracker_value(), 0);             // but the interval restarts
  }
}

TEST(GradScaler, MatchesPythonTorchAmpGradScaler) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  for (const auto& [init, growth, backoff, interval] :
       std::vector<std::tuple<double, double, double, int64_t>>{{1024.0, 2.0, 0.5, 3}, {3.0, 3.0, 0.25, 2},
                                                               {65536.0, 2.0, 0.5, 2000}}) {
    std::string out;
    const std::string cmd = fmt::format("'{}' '{}' {} {} {} {} {}", *python,
                                        test::test_source_path("python/gradscaler_reference.py").string(),
                                        kPattern, init, growth, backoff, interval);
    ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd;
    std::vector<StepRecord> reference;
    std::istringstream lines(out);
    double used = 0, after = 0;
    int stepped = 0;
    while (lines >> used >> stepped >> after) reference.push_back({used, stepped != 0, after});
    ScalerConfig cfg{init, growth, backoff, interval};
    EXPECT_EQ(run_pattern(parse_pattern(kPattern), cfg), reference) << "config " << init << "/" << interval;
  }
}

TEST(GradScaler, UnscaleTwiceIsAnError) {
  at::Tensor param = at::ones({2}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(ScalerConfig{}, c10::Device(c10::kCPU));
  scaler.scale(param.sum()).backward();
  scaler.unscale_(opt);
  EXPECT_THROW(scaler.unscale_(opt), ScalerStateError);
  // step after an explicit unscale_ does not unscale again.
  ASSERT_TRUE(scaler.step(opt));
  EXPECT_TRUE(at::allclose(param.detach(), at::full({2}, 0.9)));
  EXPECT_THROW(scaler.step(opt), ScalerStateError);
  EXPECT_THROW(scaler.unscale_(opt), ScalerStateError);
  scaler.update();
  EXPECT_THROW(scaler.update(), ScalerStateError);  // nothing recorded since
}

TEST(GradScaler, UnscaleDividesByTheScale) {
  at::Tensor param = at::ones({3}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.1));
  ScalerConfig cfg;
  cfg.init_scale = 4096.0;
  GradScaler scaler(cfg, c10::Device(c10::kCPU));
  (scaler.scale((param * at::tensor({1.0f, -2.0f, 0.5f})).sum())).backward();
  EXPECT_TRUE(at::allclose(param.grad(), at::tensor({4096.0f, -8192.0f, 2048.0f})));
  scaler.unscale_(opt);
  EXPECT_TRUE(at::allclose(param.grad(), at::tensor({1.0f, -2.0f, 0.5f})));
}

TEST(GradScaler, AccumulatedMicroBatchesAreCheckedOncePerStep) {
  // Four micro-batches, one of them overflowing: one skipped step, one backoff.
  at::Tensor param = at::ones({2}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(ScalerConfig{}, c10::Device(c10::kCPU));
  for (int micro = 0; micro < 4; ++micro) {
    at::Tensor loss = param.sum() / 4.0;
    if (micro == 2) loss = loss * std::numeric_limits<double>::infinity();
    scaler.scale(loss).backward();
  }
  EXPECT_FALSE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(scaler.scale_value(), 32768.0);
  EXPECT_TRUE(at::equal(param.detach(), at::ones({2})));
}

TEST(GradScaler, MultipleOptimizersCombineTheirChecks) {
  at::Tensor a = at::ones({2}).set_requires_grad(true);
  at::Tensor b = at::ones({2}).set_requires_grad(true);
  torch::optim::SGD opt_a({a}, torch::optim::SGDOptions(0.1));
  torch::optim::SGD opt_b({b}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(ScalerConfig{}, c10::Device(c10::kCPU));
  scaler.scale(a.sum() + b.sum() * std::numeric_limits<double>::infinity()).backward();
  EXPECT_TRUE(scaler.step(opt_a));   // a's gradients are finite
  EXPECT_FALSE(scaler.step(opt_b));  // b's are not
  scaler.update();
  EXPECT_EQ(scaler.scale_value(), 32768.0);  // one backoff for the combined step
}

TEST(GradScaler, DisabledIsAPassThrough) {
  at::Tensor param = at::ones({2}).set_requires_grad(true);
  torch::optim::SGD opt({param}, torch::optim::SGDOptions(0.5));
  GradScaler scaler(ScalerConfig{}, c10::Device(c10::kCPU), /*enabled=*/false);
  const at::Tensor loss = param.sum();
  EXPECT_TRUE(scaler.scale(loss).is_same(loss));
  loss.backward();
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(scaler.scale_value(), 1.0);
}

TEST(GradScaler, RejectsImpossibleSettings) {
  EXPECT_THROW(GradScaler(ScalerConfig{0.0, 2.0, 0.5, 10}, c10::Device(c10::kCPU)), ConfigError);
  EXPECT_THROW(GradScaler(ScalerConfig{1.0, 1.0, 0.5, 10}, c10::Device(c10::kCPU)), ConfigError);
  EXPECT_THROW(GradScaler(ScalerConfig{1.0, 2.0, 1.5, 10}, c10::Device(c10::kCPU)), ConfigError);
  EXPECT_THROW(GradScaler(ScalerConfig{1.0, 2.0, 0.5, 0}, c10::Device(c10::kCPU)), ConfigError);
}

}  // namespace
}  // namespace ampscope::engine
