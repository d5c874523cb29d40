// The recipes as a user meets them: `--recipe multi-loss` with an overflow in model B
// only records B's skip (and A's step) in the metrics, the session, `summary` and the
// report; `--recipe custom-function` shows in the op table which function ran in fp32
// and which followed autocast; impossible combinations are one-line exit-2 errors.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::SessionReader;
using ampscope::test::ampscope;
using ampscope::test::CliResult;
using ampscope::test::ScratchDir;

constexpr const char* kTiny =
    "--model mlp --device cpu --width 32 --batch-size 16 --synthetic-samples 256 --steps 6 --quiet";

TEST(CliRecipes, MultiLossRecordsEachOptimizersSkip) {
  ScratchDir dir;
  const std::string session = (dir / "multi.ampscope").string();
  const std::string metrics = (dir / "metrics.jsonl").string();
  const CliResult r = ampscope(fmt::format(
      "profile {} --recipe multi-loss --precision fp16 --init-scale 1024 --inject-inf 3:b,5:a --metrics '{}' --out '{}'",
      kTiny, metrics, session));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // The metrics: each step names both optimizers and who skipped.
  std::ifstream lines(metrics);
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    const int64_t step = j["step"].get<int64_t>();
    ASSERT_EQ(j["optimizers"].size(), 2u) << line;
    EXPECT_EQ(j["optimizers"][0]["skipped"].get<bool>(), step == 5) << line;
    EXPECT_EQ(j["optimizers"][1]["skipped"].get<bool>(), step == 3) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 6);

  // The session: two optimizer rows per step, B skipped at 3, A at 5, the scale halved each time.
  const auto reader = SessionReader::open(session);
  const auto opt = reader.optimizer_steps();
  ASSERT_EQ(opt.size(), 12u);
  for (const auto& o : opt) {
    const bool expected_skip = (o.step == 3 && o.optimizer == 1) || (o.step == 5 && o.optimizer == 0);
    EXPECT_EQ(o.skipped, expected_skip) << "step " << o.step << " optimizer " << o.optimizer;
    EXPECT_EQ(o.stepped, !expected_skip);
    EXPECT_NE(o.name.find(o.optimizer == 0 ? "model A" : "model B"), std::string::npos) << o.name;
    if (o.step == 3 || o.step == 5) {
      EXPECT_EQ(o.loss_scale_after, o.loss_scale / 2) << "step " << o.step;
    }
  }
  // The op table keeps the two models apart by module path.
  bool saw_a = false, saw_b = false;
  for (const auto& row : reader.op_stats()) {
    saw_a = saw_a || row.module.rfind("model_a.", 0) == 0;
    saw_b = saw_b || row.module.rfind("model_b.", 0) == 0;
  }
  EXPECT_TRUE(saw_a && saw_b);

  const CliResult summary = ampscope(fmt::format("summary '{}'", session));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("GradScaler's decision per optimizer"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("(steps 3)"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("(steps 5)"), std::string::npos) << summary.output;
  // Its last step's gradient sample (6 steps, before the first of every 10), at the scale it ran at.
  EXPECT_NE(summary.output.find("Gradients at step 6 (unscaled g; shares of g * loss scale 256 cast to each format)"),
            std::string::npos)
      << summary.output;

  const std::string html = (dir / "report.html").string();
  const CliResult report = ampscope(fmt::format("report '{}' -o '{}'", session, html));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("decision per optimizer"), std::string::npos);
  EXPECT_NE(text.find("adamw (model B)"), std::string::npos);
  EXPECT_NE(text.find("all parameters, against fp16 at scale 256"), std::string::npos);
}

// Without a loss scaler (bf16) nothing is scaled and nothing skips: summary and report say
// so, where they read "skipped 0   loss scale 1 .. 1" and "GradScaler's decision".
TEST(CliRecipes, WithoutAScalerNoLossScaleOrGradScalerDecisionIsShown) {
  ScratchDir dir;
  const std::string session = (dir / "bf16.ampscope").string();
  const CliResult r = ampscope(fmt::format("profile {} --recipe multi-loss --precision bf16 --out '{}'", kTiny, session));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const CliResult summary = ampscope(fmt::format("summary '{}'", session));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("no loss scaling"), std::string::npos) << summary.output;
  EXPECT_EQ(summary.output.find("loss scale 1"), std::string::npos) << summary.output;
  // Its gradients, sampled at its last step, against the formats as they are: no scale named.
  EXPECT_NE(summary.output.find("Gradients at step 6 (no loss scaling: shares of g cast to each format)"),
            std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("Optimizers (no GradScaler: every step() call stepped)"), std::string::npos)
      << summary.output;
  EXPECT_EQ(summary.output.find("GradScaler's decision"), std::string::npos) << summary.output;

  const std::string html = (dir / "report.html").string();
  const CliResult report = ampscope(fmt::format("report '{}' -o '{}'", session, html));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(html);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("steps per optimizer (no GradScaler"), std::string::npos);
  EXPECT_NE(text.find("all parameters, against fp16 (no loss scaling)"), std::string::npos);
  EXPECT_EQ(text.find("against fp16 at scale"), std::string::npos);
  EXPECT_EQ(text.find("GradScaler's decision"), std::string::npos);
}

TEST(CliRecipes, CustomFunctionShowsWhichFunctionRanInFp32) {
  ScratchDir dir;
  const std::string session = (dir / "custom.ampscope").string();
  const CliResult r = ampscope(fmt::format("profile {} --recipe custom-function --precision bf16 --out '{}'", kTiny, session));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto ops = SessionReader::open(session).op_stats();
  auto forward_mm = [&](const std::string& module) -> const ampscope::profiler::OpStats* {
    for (const auto& row : ops)
      if (row.module == module && row.name == "aten::mm" && row.phase == ampscope::profiler::Phase::kForward)
        return &row;
    return nullptr;
  };
  const auto* fp32 = forward_mm("fp32_function");
  const auto* follows = forward_mm("autocast_function");
  ASSERT_NE(fp32, nullptr);
  ASSERT_NE(follows, nullptr);
  // custom_fwd(cast_inputs=torch.float32): autocast off inside, the matmul in fp32.
  EXPECT_EQ(fp32->output_dtypes, std::vector<std::string>{"float32"});
  // custom_fwd(): the matmul is lowered by autocast like any other.
  EXPECT_EQ(follows->output_dtypes, std::vector<std::string>{"bfloat16"});
  // Casts by module, phase and direction. The fp32 function's: its input cast up, the
  // gradient cast back down by autograd's engine, both asked for by cast_inputs=torch.float32.
  // The other's backward, under custom_bwd, ran in bf16: its gradients cast back up to the
  // fp32 inputs' dtype are autocast's price.
  std::map<std::string, std::set<ampscope::profiler::OpCategory>> casts;
  for (const auto& row : ops)
    if (row.top_level && row.name == "aten::to" && row.module.ends_with("_function") &&
        row.input_dtypes.front() != row.output_dtypes.front())
      casts[fmt::format("{} {} {}->{}", row.module, ampscope::profiler::to_string(row.phase),
                        row.input_dtypes.front(), row.output_dtypes.front())]
          .insert(row.category);
  using ampscope::profiler::OpCategory;
  const std::map<std::string, std::set<OpCategory>> expected{
      {"fp32_function forward bfloat16->float32", {OpCategory::kExplicitCast}},
      {"fp32_function backward float32->bfloat16", {OpCategory::kExplicitCast}},
      {"autocast_function backward bfloat16->float32", {OpCategory::kAutocastCast}}};
  EXPECT_EQ(casts, expected);
}

// The gradient penalty's autograd::grad with create_graph builds a graph of the first
// backward's ops, which the second backward runs: the backward of a gradient's cast
// back to fp32 is a cast of autocast's, of the layer whose weight autocast cast, never
// a cast the user wrote (the recipe writes none in backward).
TEST(CliRecipes, GradientPenaltysSecondBackwardCastsAreAutocastsOfTheirLayer) {
  ScratchDir dir;
  const std::string session = (dir / "penalty.ampscope").string();
  const CliResult r =
      ampscope(fmt::format("profile {} --recipe gradient-penalty --precision fp16 --out '{}'", kTiny, session));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int second_backward_casts = 0;
  for (const auto& row : SessionReader::open(session).op_stats()) {
    if (!row.top_level || row.phase != ampscope::profiler::Phase::kBackward) continue;
    EXPECT_NE(row.category, ampscope::profiler::OpCategory::kExplicitCast) << row.name << " " << row.module;
    // A weight's or bias's gradient cast back is fp16 -> fp32; its backward, fp32 -> fp16.
    if (row.category == ampscope::profiler::OpCategory::kAutocastCast && row.module.starts_with("hidden.") &&
        row.input_dtypes.front() == "float32")
      ++second_backward_casts;
  }
  EXPECT_GT(second_backward_casts, 0);
}

TEST(CliRecipes, RefusesWhatCannotWorkInOneLine) {
  for (const std::string& args :
       {fmt::format("train {} --recipe gradient-penalty --model gpt --attention sdpa", kTiny),
        fmt::format("train {} --inject-inf 2:b", kTiny), fmt::format("train {} --inject-inf 99", kTiny),
        fmt::format("train {} --inject-inf x:a", kTiny), fmt::format("train {} --recipe sideways", kTiny)}) {
    const CliResult r = ampscope(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("ampscope: error: ", 0), 0u) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

}  // namespace
