// Gradient clipping under a GradScaler, as a user's script does it: clip_grad_norm_ after
// scaler.unscale_(optimizer) (PyTorch's AMP examples), and the classic mistake, before it,
// where max_norm applies to gradients still multiplied by the loss scale. The script itself
// prints the gradients' own norm each step (its peer for ampscope's gradient norm); ampscope
// stores that norm either way, and warns of the mistake with its figures.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "profiler/store/session_reader.h"
#include "profiler/store/session_view.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::SessionReader;
using ampscope::test::read_file;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// train.py OUT before|after|none: fp16 autocast under GradScaler("cpu"), clip_grad_norm_(max_norm=1)
// before or after scaler.unscale_, or no clipping. Each step appends the gradients' own norm,
// computed by the script from the gradients it holds before clipping (divided by the scale
// where not yet unscaled; without clipping by torch.nn.utils.get_total_norm, the function
// clip_grad_norm_ takes its norm with), and the loss, as exact hex floats.
constexpr const char* kScript = R"(import sys, torch
from torch import nn
torch.manual_seed(0)
out, order = sys.argv[1], sys.argv[2]
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")

def own_norm(divide_by):
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad.double() / divide_by)
                                                 for p in model.parameters()])).item()

with open(out, "w") as digest:
    for step in range(4):
        with torch.autocast("cpu", dtype=torch.float16):
            loss = model(torch.randn(8, 16)).float().pow(2).mean()
        scaler.scale(loss).backward()
        if order == "after":
            scaler.unscale_(opt)
            norm = own_norm(1.0)
        elif order == "before":
            norm = own_norm(scaler.get_scale())
        else:
            norm = nn.utils.get_total_norm([p.grad.double() / scaler.get_scale() for p in model.parameters()]).item()
        if order != "none":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        digest.write(f"{norm.hex()} {loss.item().hex()}\n")
)";

class PythonClipping : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = ampscope::test::python_with_torch();
    if (!python_) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    write_file(dir_ / "train.py", kScript);
  }
  // The script under `ampscope run`: its digest lines (norm, loss).
  std::vector<std::pair<double, std::string>> run(const std::string& order, const std::string& flags = "") {
    const auto digest = dir_ / (order + ".txt");
    const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' --force {} '{}' '{}' {}", session(), flags,
                                                        (dir_ / "train.py").string(), digest.string(), order));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return lines(read_file(digest));
  }
  static std::vector<std::pair<double, std::string>> lines(const std::string& text) {
    std::vector<std::pair<double, std::string>> out;
    std::istringstream in(text);
    for (std::string norm, loss; in >> norm >> loss;) out.emplace_back(std::strtod(norm.c_str(), nullptr), loss);
    return out;
  }
  std::vector<std::string> recommendation_ids() {
    const auto json = dir_ / "s.json";
    const auto exported =
        ampscope::test::ampscope(fmt::format("export --format json '{}' -o '{}'", session(), json.string()));
    EXPECT_EQ(exported.exit_code, 0) << exported.output;
    const nlohmann::json summary = nlohmann::json::parse(read_file(json));
    std::vector<std::string> ids;
    for (const auto& r : summary.at("findings").at("recommendations")) ids.push_back(r.at("id").get<std::string>());
    return ids;
  }
  std::string session() const { return (dir_ / "s.ampscope").string(); }
  // Each step's stored gradient norm against the script's own, and its scale.
  void expect_own_norms(const std::vector<std::pair<double, std::string>>& script) {
    const auto steps = SessionReader::open(session()).steps();
    ASSERT_EQ(steps.size(), script.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_NEAR(steps[i].grad_norm, script[i].first, 1e-5 * script[i].first) << "step " << steps[i].step;
      EXPECT_EQ(steps[i].loss_scale, 65536.0) << "step " << steps[i].step;
    }
  }
  std::optional<std::string> python_;
  ScratchDir dir_;
};

TEST_F(PythonClipping, ClippingAfterUnscaleIsTheGradientsOwnNormAndNoWarning) {
  const auto script = run("after");
  ASSERT_EQ(script.size(), 4u);
  expect_own_norms(script);
  for (const std::string& id : recommendation_ids()) EXPECT_NE(id, "clip_before_unscale");
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_EQ(summary.output.find("ran on the scaled gradients"), std::string::npos) << summary.output;
}

TEST_F(PythonClipping, ClippingBeforeUnscaleIsWarnedOfWithItsFiguresAndTheNormShownIsTheGradientsOwn) {
  const auto script = run("before");
  ASSERT_EQ(script.size(), 4u);
  // Captured, the script trains as it does bare: the warning is ampscope's only change.
  const auto bare = dir_ / "bare.txt";
  ASSERT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' '{}' before", *python_,
                                                    (dir_ / "train.py").string(), bare.string())),
            0);
  EXPECT_EQ(lines(read_file(bare)), script);
  // clip_grad_norm_ returned the scaled norm, 65536 times the gradients' own: stored is the own.
  expect_own_norms(script);
  const SessionReader reader = SessionReader::open(session());
  EXPECT_EQ(reader.meta_value("clip_before_unscale").value_or(""),
            R"({"steps": 4, "first_step": 1, "max_norm": 1.0})");
  std::vector<std::string> ids = recommendation_ids();
  EXPECT_NE(std::find(ids.begin(), ids.end(), "clip_before_unscale"), ids.end()) << fmt::format("{}", ids.size());

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("  warning  clip_grad_norm_ clipped the scaled gradients: call "
                                "scaler.unscale_(optimizer) before it\n"),
            std::string::npos)
      << summary.output;
  // The first step's figures: the gradients' own norm (below max_norm: nothing to clip) cut to 1/65536.
  ASSERT_LT(script[0].first, 1.0);
  EXPECT_NE(summary.output.find("* step 1: loss scale 65536, gradient norm "), std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("4 of 4 steps clipped before unscale_, the first at step 1"), std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("divided by the loss scale: the script clipped before scaler.unscale_"),
            std::string::npos)
      << summary.output;
  // The verdict says it beside the loss scale (wrapped for the terminal: its words, in order).
  EXPECT_NE(summary.output.find("  - clip_grad_norm_ ran on the scaled gradients, before scaler.unscale_, in 4"),
            std::string::npos)
      << summary.output;
}

// A script that does not clip has no gradient norm per step: ampscope shows the range samples'
// total norm at their steps instead, which must be PyTorch's own total norm of the same unscaled
// gradients; summary says it as a range, and the report draws it as points. Clipping, the steps'
// own norm is what both show (the control).
TEST_F(PythonClipping, WithoutClippingTheSampledStepsGradientNormIsPyTorchsTotalNorm) {
  const auto script = run("none", "--grad-every 2 --sample-budget 0");
  ASSERT_EQ(script.size(), 4u);
  const auto view = ampscope::profiler::load_session_view(session());
  for (const auto& step : view.steps) EXPECT_TRUE(std::isnan(step.grad_norm)) << "step " << step.step;
  ASSERT_EQ(view.sampled_gradient_norms.size(), 2u);
  for (const auto& g : view.sampled_gradient_norms) {
    ASSERT_TRUE(g.step == 2 || g.step == 4) << g.step;
    const double own = script[static_cast<size_t>(g.step - 1)].first;
    EXPECT_NEAR(g.norm, own, 1e-5 * own) << "step " << g.step;
  }
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  const std::string norms = ampscope::profiler::sampled_gradient_norm_text(view.sampled_gradient_norms);
  EXPECT_NE(norms.find(" at step 2 to "), std::string::npos) << norms;
  EXPECT_NE(norms.find(" at step 4"), std::string::npos) << norms;
  EXPECT_NE(summary.output.find("  gradient norm (L2 of the unscaled gradients): " + norms + "\n"), std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("gradient norm at range-sampled steps only, from the sampled gradients: the script "
                                "does not clip gradients"),
            std::string::npos)
      << summary.output;
  const auto html = dir_ / "none.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", session(), html.string())).exit_code, 0);
  const std::string report = read_file(html);
  EXPECT_NE(report.find("<title>Gradient norm</title>"), std::string::npos);
  EXPECT_NE(report.find("gradient norm at the range-sampled steps"), std::string::npos);

  // Control: a script that clips has every step's norm, shown as it is; no line from samples.
  const auto clipped = run("after", "--grad-every 2 --sample-budget 0");
  expect_own_norms(clipped);
  const auto clipped_summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_EQ(clipped_summary.output.find("gradient norm (L2 of the unscaled gradients)"), std::string::npos)
      << clipped_summary.output;
  const auto clipped_html = dir_ / "after.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", session(), clipped_html.string())).exit_code,
            0);
  const std::string clipped_report = read_file(clipped_html);
  EXPECT_NE(clipped_report.find("<title>Gradient norm</title>"), std::string::npos);
  EXPECT_EQ(clipped_report.find("gradient norm at the range-sampled steps"), std::string::npos);
}

}  // namespace
