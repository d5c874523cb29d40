// ampscope's multi-tensor and fused optimizers against Python torch.optim (foreach=True,
// fused=True) on the same scripted gradients, over six steps with a changing lr, a parameter
// that misses one gradient, and (through GradScaler) a skipped step.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/optim/optimizer.h>

#include <nlohmann/json.hpp>

#include <ATen/record_function.h>

#include <algorithm>
#include <tuple>

#include "engine/config.h"
#include "engine/grad_scaler.h"
#include "engine/multi_tensor_optim.h"
#include "engine/optim.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

// Numbers, or strings such as "inf" for the values JSON cannot carry.
at::Tensor tensor_of(const nlohmann::json& values, const std::vector<int64_t>& shape) {
  std::vector<float> flat;
  for (const auto& v : values) flat.push_back(v.is_string() ? std::stof(v.get<std::string>()) : v.get<float>());
  return at::tensor(flat, at::TensorOptions().dtype(at::kFloat)).reshape(shape);
}

OptimConfig config_for(OptimizerKind kind, bool fused) {
  OptimConfig c;
  c.kind = kind;
  c.fused = fused;
  c.momentum = 0.9;
  c.beta1 = 0.9;
  c.beta2 = 0.999;
  c.eps = 1e-8;
  c.weight_decay = kind == OptimizerKind::kAdamW ? 0.1 : 0.01;
  c.lr = kind == OptimizerKind::kSGD ? 0.1 : 0.01;
  return c;
}

using Case = std::tuple<OptimizerKind, bool /*fused*/, bool /*scaler*/>;
class MatchesTorchOptim : public ::testing::TestWithParam<Case> {};

TEST_P(MatchesTorchOptim, ParametersAfterEveryStep) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const auto [kind, fused, with_scaler] = GetParam();
  std::string out;
  const std::string cmd = fmt::format("'{}' '{}' {} {} {} 2>&1", *python,
                                      test::test_source_path("python/optim_reference.py").string(),
                                      to_string(kind), fused ? "fused" : "foreach",
                                      with_scaler ? "scaler" : "plain");
  ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd << "\n" << out;
  const auto reference = nlohmann::json::parse(out);

  std::vector<std::vector<int64_t>> shapes;
  std::vector<at::Tensor> params;
  for (size_t i = 0; i < reference["shapes"].size(); ++i) {
    shapes.push_back(reference["shapes"][i].get<std::vector<int64_t>>());
    params.push_back(tensor_of(reference["params"][i], shapes.back()).requires_grad_(true));
  }
  auto optimizer = make_optimizer(config_for(kind, fused), params);
  ASSERT_NE(dynamic_cast<MultiTensorOptimizer*>(optimizer.get()), nullptr);
  ScalerConfig scaler_config;
  scaler_config.init_scale = 1024.0;
  scaler_config.growth_interval = 2;
  GradScaler scaler(scaler_config, c10::kCPU, with_scaler);

  int skipped = 0;
  for (size_t step = 0; step < reference["steps"].size(); ++step) {
    SCOPED_TRACE(fmt::format("step {}", step));
    const auto& expected = reference["steps"][step];
    for (auto& group : optimizer->param_groups()) group.options().set_lr(expected["lr"].get<double>());
    EXPECT_EQ(scaler.scale_value(), expected["scale"].get<double>());
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& g = expected["grads"][i];
      params[i].mutable_grad() = g.is_null() ? at::Tensor() : tensor_of(g, shapes[i]) * scaler.scale_value();
    }
    const auto before = [&] {
      std::vector<at::Tensor> copies;
      for (const auto& p : params) copies.push_back(p.detach().clone());
      return copies;
    }();
    scaler.unscale_(*optimizer);
    const bool stepped = scaler.step(*optimizer);
    scaler.update();
    EXPECT_EQ(stepped, expected["stepped"].get<bool>());
    skipped += stepped ? 0 : 1;
    for (size_t i = 0; i < params.size(); ++i) {
      const at::Tensor want = tensor_of(expected["after"][i], shapes[i]);
      EXPECT_TRUE(at::allclose(params[i].detach(), want, /*rtol=*/1e-5, /*atol=*/1e-6))
          << "parameter " << i << ": max difference "
          << (params[i].detach() - want).abs().max().item<double>();
      if (!stepped) { EXPECT_TRUE(at::equal(params[i].detach(), before[i])) << "a skipped step moved parameter " << i; }
    }
  }
  EXPECT_EQ(skipped, with_scaler ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, MatchesTorchOptim,
    ::testing::Combine(::testing::Values(OptimizerKind::kSGD, OptimizerKind::kAdam, OptimizerKind::kAdamW),
                       ::testing::Bool(), ::testing::Bool()),
    [](const auto& info) {
      return fmt::format("{}_{}_{}", to_string(std::get<0>(info.param)),
                         std::get<1>(info.param) ? "fused" : "foreach",
                         std::get<2>(info.param) ? "scaler" : "plain");
    });

thread_local std::vector<std::string>* recorded_ops = nullptr;

std::unique_ptr<at::ObserverContext> record_op(const at::RecordFunction& fn) {
  if (recorded_ops) recorded_ops->emplace_back(fn.name());
  return nullptr;
}

// The aten ops one step() calls for `count` parameters that all have gradients.
std::vector<std::string> ops_of_one_step(OptimizerKind kind, bool fused, int count) {
  std::vector<at::Tensor> params;
  for (int i = 0; i < count; ++i) {
    params.push_back(at::randn({8}).requires_grad_(true));
    params.back().mutable_grad() = at::randn({8});
  }
  auto optimizer = make_optimizer(config_for(kind, fused), params);
  optimizer->step();  // the first step creates the state
  std::vector<std::string> ops;
  recorded_ops = &ops;
  auto handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(record_op).scopes({at::RecordScope::FUNCTION}));
  optimizer->step();
  at::removeCallback(handle);
  recorded_ops = nullptr;
  return ops;
}

// The foreach and fused paths cost a fixed number of ops per step however many parameters
// there are (LibTorch's own optimizers loop: several ops per parameter).
TEST(MultiTensorOptimizer, OpsPerStepDoNotGrowWithTheParameterCount) {
  for (auto kind : {OptimizerKind::kSGD, OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    for (bool fused : {false, true}) {
      SCOPED_TRACE(fmt::format("{} {}", to_string(kind), fused ? "fused" : "foreach"));
      const auto few = ops_of_one_step(kind, fused, 4), many = ops_of_one_step(kind, fused, 40);
      auto top = [](const std::vector<std::string>& ops) {
        std::vector<std::string> names;
        for (const auto& n : ops)
          if (n.starts_with("aten::_foreach_") || n.starts_with("aten::_fused_")) names.push_back(n);
        return names;
      };
      EXPECT_FALSE(top(few).empty());
      EXPECT_EQ(top(few), top(many));
      if (fused) {
        const std::string expected = kind == OptimizerKind::kSGD    ? "aten::_fused_sgd_"
                                     : kind == OptimizerKind::kAdam ? "aten::_fused_adam_"
                                                                    : "aten::_fused_adamw_";
        EXPECT_NE(std::find(few.begin(), few.end(), expected), few.end());
      }
    }
  }
}

}  // namespace
}  // namespace ampscope::engine
