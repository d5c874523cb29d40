// The seeds' AMP patterns as recipes (--recipe): each trains in fp32, bf16 and
// fp16 with a scaler; multi-loss decides skips per optimizer exactly as
// torch.amp.GradScaler does; the gradient penalty is unscaled correctly; the
// combinations that cannot work are refused with one line.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "engine/errors.h"
#include "engine/training_run.h"
#include "tests/support/train_steps.h"
#include "tests/support/test_support.h"

namespace ampscope::engine {
namespace {

TrainConfig recipe_config(RecipeKind recipe, Precision precision) {
  TrainConfig c;
  c.recipe = recipe;
  c.model.kind = ModelKind::kMLP;
  c.model.layers = 2;
  c.model.width = 64;
  c.data.synthetic_samples = 1024;
  c.precision = precision;
  c.device = DeviceChoice::kCPU;
  c.batch_size = 32;
  c.steps = 80;
  c.optim.lr = 3e-3;
  c.seed = 11;
  return c;
}

std::vector<StepEvent> train(const TrainConfig& config) { return test::train_all_steps(config); }
using test::mean_loss;

std::vector<at::Tensor> snapshot(const Trainee& t) {
  std::vector<at::Tensor> out;
  for (const auto& p : t.parameters) out.push_back(p.detach().clone());
  return out;
}

bool changed(const std::vector<at::Tensor>& before, const Trainee& t) {
  for (size_t i = 0; i < before.size(); ++i)
    if (!at::equal(before[i], t.parameters[i].detach())) return true;
  return false;
}

using RecipePrecision = std::tuple<RecipeKind, Precision>;
class RecipeTrains : public ::testing::TestWithParam<RecipePrecision> {};

TEST_P(RecipeTrains, WithAFallingLoss) {
  const auto [recipe, precision] = GetParam();
  const auto events = train(recipe_config(recipe, precision));
  const double first = mean_loss(events, 0, 5);
  const double last = mean_loss(events, events.size() - 5, events.size());
  EXPECT_LT(last, 0.9 * first) << to_string(recipe) << " " << to_string(precision) << ": " << first << " -> "
                               << last;
  for (const auto& e : events) {
    ASSERT_TRUE(std::isfinite(e.loss)) << "step " << e.step;
    ASSERT_EQ(e.optimizers.size(), recipe == RecipeKind::kMultiLoss ? 2u : 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRecipes, RecipeTrains,
                         ::testing::Combine(::testing::Values(RecipeKind::kStandard, RecipeKind::kMultiLoss,
                                                              RecipeKind::kGradientPenalty,
                                                              RecipeKind::kCustomFunction),
                                            ::testing::Values(Precision::kFP32, Precision::kBF16,
                                                              Precision::kFP16)),
                         [](const auto& info) {
                           std::string name = fmt::format("{}_{}", to_string(std::get<0>(info.param)),
                                                          to_string(std::get<1>(info.param)));
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

TEST(Recipes, CombineWithAccumulationAndClipping) {
  for (const RecipeKind recipe : {RecipeKind::kMultiLoss, RecipeKind::kGradientPenalty, RecipeKind::kCustomFunction}) {
    TrainConfig c = recipe_config(recipe, Precision::kFP16);
    c.accumulation_steps = 2;
    c.clip_grad_norm = 1.0;
    c.steps = 40;
    const auto events = train(c);
    const double first = mean_loss(events, 0, 5);
    const double last = mean_loss(events, events.size() - 5, events.size());
    EXPECT_LT(last, 0.95 * first) << to_string(recipe) << ": " << first << " -> " << last;
    for (const auto& e : events) ASSERT_FALSE(e.skipped) << to_string(recipe) << " step " << e.step;
  }
}

TEST(MultiLoss, AnOverflowInOneModelSkipsOnlyItsOptimizer) {
  TrainConfig c = recipe_config(RecipeKind::kMultiLoss, Precision::kFP16);
  c.steps = 4;
  c.inject_inf = {{3, 1}};  // B at step 3
  c.scaler.init_scale = 1024.0;
  TrainingRun run(c);
  ASSERT_EQ(run.trainees().size(), 2u);
  for (int64_t s = 1; s <= c.steps; ++s) {
    const auto before_a = snapshot(run.trainees()[0]);
    const auto before_b = snapshot(run.trainees()[1]);
    const StepEvent e = run.step(s);
    ASSERT_EQ(e.optimizers.size(), 2u);
    const bool overflow = s == 3;
    EXPECT_FALSE(e.optimizers[0].found_inf) << "step " << s;
    EXPECT_FALSE(e.optimizers[0].skipped) << "step " << s;
    EXPECT_EQ(e.optimizers[1].found_inf, overflow) << "step " << s;
    EXPECT_EQ(e.optimizers[1].skipped, overflow) << "step " << s;
    EXPECT_TRUE(changed(before_a, run.trainees()[0])) << "A must step at " << s;
    EXPECT_EQ(changed(before_b, run.trainees()[1]), !overflow) << "B at " << s;
    // The step as a whole: one optimizer skipped, one update backed the scale off.
    EXPECT_EQ(e.skipped, overflow);
    EXPECT_EQ(e.loss_scale_after, overflow ? e.loss_scale * 0.5 : e.loss_scale) << "step " << s;
    // Only A's optimizer is unscaled explicitly (for its clipping); B's inside its step().
    EXPECT_EQ(e.optimizers[0].unscale_calls, 1);
    EXPECT_EQ(e.optimizers[1].unscale_calls, 0);
  }
}

TEST(MultiLoss, SkipsAndScalesAsTorchAmpGradScaler) {
  auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  const int64_t steps = 10;
  const std::string inject = "3:b,5:a,6:b";
  std::string out;
  const std::string cmd =
      fmt::format("'{}' '{}' {} {} 1024 2 0.5 2", *python,
                  test::test_source_path("python/multi_loss_reference.py").string(), steps, inject);
  ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd;
  struct Row {
    double used;
    int a, b;
    double after;
    bool operator==(const Row&) const = default;
  };
  std::vector<Row> reference;
  std::istringstream lines(out);
  Row r{};
  while (lines >> r.used >> r.a >> r.b >> r.after) reference.push_back(r);
  ASSERT_EQ(reference.size(), static_cast<size_t>(steps)) << out;

  TrainConfig c = recipe_config(RecipeKind::kMultiLoss, Precision::kFP16);
  c.steps = steps;
  c.scaler = ScalerConfig{1024.0, 2.0, 0.5, 2};
  c.inject_inf = {{3, 1}, {5, 0}, {6, 1}};
  std::vector<Row> ours;
  for (const StepEvent& e : train(c)) {
    ASSERT_EQ(e.optimizers.size(), 2u);
    ours.push_back({e.loss_scale, e.optimizers[0].skipped ? 0 : 1, e.optimizers[1].skipped ? 0 : 1,
                    e.loss_scale_after});
  }
  ASSERT_EQ(ours.size(), reference.size());
  for (size_t i = 0; i < ours.size(); ++i)
    EXPECT_EQ(ours[i], reference[i]) << "step " << i + 1 << ": ampscope " << ours[i].used << " " << ours[i].a << " "
                                     << ours[i].b << " " << ours[i].after << ", torch " << reference[i].used << " "
                                     << reference[i].a << " " << reference[i].b << " " << reference[i].after;
}

TEST(MultiLoss, ValidatesTheLossItTrainsOn) {
  // Both models, both losses: the eval loss is on the training loss's scale, not model A's alone.
  TrainConfig c = recipe_config(RecipeKind::kMultiLoss, Precision::kBF16);
  c.steps = 10;
  c.eval_every = 10;
  const auto events = train(c);
  const double trained = mean_loss(events, 5, 10);
  ASSERT_TRUE(std::isfinite(events.back().eval_loss));
  EXPECT_NEAR(events.back().eval_loss, trained, 0.2 * trained);
}

TEST(GradientPenalty, IsTheSameWhateverTheLossScale) {
  // The penalty's gradients come from the scaled loss and are unscaled by hand: the loss
  // the step reports (loss + ||grad||) must not depend on the scale (as long as nothing
  // overflows), and must exceed the plain loss by the gradient norm.
  auto first_loss = [](double init_scale, RecipeKind recipe) {
    TrainConfig c = recipe_config(recipe, Precision::kFP16);
    c.steps = 1;
    c.scaler.init_scale = init_scale;
    TrainingRun run(c);
    return run.step(1).loss;
  };
  const double small = first_loss(16.0, RecipeKind::kGradientPenalty);
  const double large = first_loss(65536.0, RecipeKind::kGradientPenalty);
  const double plain = first_loss(65536.0, RecipeKind::kStandard);
  EXPECT_NEAR(small, large, 1e-3 * std::abs(large));
  EXPECT_GT(large, plain + 1e-3);
}

TEST(CustomFunction, AddsTheTwoFunctionsWeightsToTheOptimizer) {
  TrainingRun run(recipe_config(RecipeKind::kCustomFunction, Precision::kBF16));
  std::vector<std::string> names;
  for (const auto& [name, p] : run.trainees()[0].named_parameters()) names.push_back(name);
  EXPECT_NE(std::find(names.begin(), names.end(), "fp32_function.weight"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "autocast_function.weight"), names.end());
  const auto before = snapshot(run.trainees()[0]);
  run.step(1);
  const auto& after = run.trainees()[0].parameters;
  // Both custom functions' weights got gradients and were updated.
  EXPECT_FALSE(at::equal(before[before.size() - 2], after[after.size() - 2].detach()));
  EXPECT_FALSE(at::equal(before.back(), after.back().detach()));
}

TEST(Recipes, RefuseCombinationsThatCannotWork) {
  TrainConfig penalty_sdpa = recipe_config(RecipeKind::kGradientPenalty, Precision::kBF16);
  penalty_sdpa.model.kind = ModelKind::kGPT;
  penalty_sdpa.model.attention = AttentionKind::kSDPA;
  try {
    validate(penalty_sdpa);
    FAIL() << "gradient-penalty with fused attention must be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--attention math"), std::string::npos) << e.what();
  }
  TrainConfig model_b = recipe_config(RecipeKind::kStandard, Precision::kFP16);
  model_b.inject_inf = {{1, 1}};
  EXPECT_THROW(validate(model_b), ConfigError);
  TrainConfig late = recipe_config(RecipeKind::kStandard, Precision::kFP16);
  late.inject_inf = {{late.steps + 1, 0}};
  EXPECT_THROW(validate(late), ConfigError);
}

}  // namespace
}  // namespace ampscope::engine
