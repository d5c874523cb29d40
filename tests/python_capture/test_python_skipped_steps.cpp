// Issue 30: what a skipped step leads to, under `ampscope run` on the CPU.
// - An LR scheduler stepped unconditionally advances after the optimizer steps
//   GradScaler skipped: summary, the JSON summary and the report flag it with the
//   exact count, which the script itself counts from get_scale() around update().
//   Stepped only when the scale did not drop (the documented fix), it is not flagged.
// - A layer whose backward overflows (a custom autograd Function multiplying the
//   gradient by 1e60 in fp32) is named as where the non-finite gradient started, at
//   the steps the capture checks: every step with --grad-every 1; with --grad-every 0,
//   only the steps after a skipped one or after the scale grew.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>
#include <vector>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::GradientSide;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// fp16 autocast under GradScaler("cpu"); on --inf-steps the loss is multiplied by
// inf, so GradScaler finds inf gradients and skips optimizer.step(). StepLR steps
// after every update(), or, with --guard, only when update() did not lower the scale.
constexpr const char* kSchedulerScript = R"(import argparse, torch
from torch import nn
p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--inf-steps", default="3,4,8")
p.add_argument("--guard", action="store_true")
a = p.parse_args()
inf_steps = {int(s) for s in a.inf_steps.split(",")}
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
after_skipped = calls = 0
for i in range(1, a.steps + 1):
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(torch.randn(4, 8))
    loss = out.float().pow(2).mean()
    if i in inf_steps:
        loss = loss * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scale = scaler.get_scale()
    scaler.update()
    skipped = scaler.get_scale() < scale
    if not (a.guard and skipped):
        sched.step()
        calls += 1
        after_skipped += skipped
    opt.zero_grad()
print("scheduler calls", calls)
print("scheduler steps after skipped steps", after_skipped)
print("last lr", opt.param_groups[0]["lr"])
)";

// fp32 under GradScaler("cpu"): block.boom's backward multiplies the gradient by
// 1e30 twice on --boom-steps (inf in fp32), so GradScaler skips those steps.
constexpr const char* kBackwardScript = R"(import argparse, torch
from torch import nn
p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=8)
p.add_argument("--boom-steps", default="3,6")
p.add_argument("--growth-interval", type=int, default=2000)
a = p.parse_args()
boom_steps = {int(s) for s in a.boom_steps.split(",") if s}

class Overflow(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        return g * 1e30 * 1e30

class Boom(nn.Module):
    armed = False
    def forward(self, x):
        return Overflow.apply(x) if self.armed else x

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.boom = Boom()
    def forward(self, x):
        return self.boom(self.fc1(x))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.fc2 = nn.Linear(16, 2)
    def forward(self, x):
        return self.fc2(torch.relu(self.block(x)))

torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", growth_interval=a.growth_interval)
skipped = []
for i in range(1, a.steps + 1):
    model.block.boom.armed = i in boom_steps
    loss = model(torch.randn(4, 8)).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scale = scaler.get_scale()
    scaler.update()
    if scaler.get_scale() < scale:
        skipped.append(i)
    opt.zero_grad()
print("skipped steps", ",".join(map(str, skipped)))
)";

// fp16 autocast on the CPU with GradScaler growing the scale every 2 clean steps: the
// targets sit 3 above the outputs, so the output gradients share a sign, and the last
// Linear's bias gradient, their sum over 256 samples, passes fp16's 65504 at 2^16 (each
// one is 2 * 3 / 1024 * 2^16 = 384) while no activation gradient does. GradScaler skips,
// backs off to 2^15, grows again two steps later: the skip of a healthy fp16 run. The
// script prints which parameters' gradients PyTorch itself holds as non-finite.
constexpr const char* kBiasOverflowScript = R"(import sys, torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
init_scale = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0**16
scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=2)
for i in range(1, 9):
    x, y = torch.randn(256, 16), torch.randn(256, 4) + 3
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    bad = [n for n, p in model.named_parameters() if not torch.isfinite(p.grad).all()]
    print(f"step {i} nonfinite [{','.join(bad)}]")
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
)";

// Schedulers that define their own step(): SequentialLR (which steps the scheduler of the
// current phase inside its own call) every optimizer step, ReduceLROnPlateau once an epoch.
constexpr const char* kNestedSchedulersScript = R"(import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
seq = torch.optim.lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[2])
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
for epoch in range(2):
    for i in range(3):
        model(torch.randn(2, 4)).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        seq.step()
    plateau.step(1.0)
)";

// A GradScaler subclass of the script's own, defined after the capture started: its scale()
// takes an argument GradScaler's does not, and each of its methods calls GradScaler's through
// super(). The inf steps are skipped as in kSchedulerScript.
constexpr const char* kSubclassedScalerScript = R"(import torch
from torch import nn
class CountingScaler(torch.amp.GradScaler):
    unscales = 0
    def scale(self, outputs, note=""):
        return super().scale(outputs)
    def unscale_(self, optimizer):
        CountingScaler.unscales += 1
        return super().unscale_(optimizer)
    def update(self, new_scale=None):
        return super().update(new_scale)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = CountingScaler("cpu", init_scale=1024.0)
for i in range(1, 9):
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(torch.randn(4, 8)).float().pow(2).mean()
    if i in (3, 4):
        loss = loss * float("inf")
    scaler.scale(loss, note="the script's own argument").backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
print("unscale_ calls", CountingScaler.unscales)
)";

int printed_int(const std::string& output, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(label + " ([0-9]+)"))) return -1;
  return std::stoi(m[1]);
}

class PythonSkippedSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  ampscope::test::CliResult run(const char* script, const std::string& flags, const std::string& args = "") {
    write_file(dir_ / "train.py", script);
    return ampscope::test::ampscope(fmt::format("run --out '{}' --force {} '{}' {}", session(), flags,
                                                (dir_ / "train.py").string(), args));
  }
  std::string session() const { return (dir_ / "s.ampscope").string(); }
  nlohmann::json json_summary() {
    const auto r = ampscope::test::ampscope(fmt::format("export '{}' --format json --force -o '{}'", session(), (dir_ / "s.json").string()));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(dir_ / "s.json");
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  ScratchDir dir_;
};

TEST_F(PythonSkippedSteps, AStepLRSteppedAfterSkippedStepsIsFlaggedWithTheExactCount) {
  const auto r = run(kSchedulerScript, "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int after_skipped = printed_int(r.output, "scheduler steps after skipped steps");
  ASSERT_EQ(after_skipped, 3) << r.output;  // GradScaler skipped the three inf steps

  const auto calls = SessionReader::open(session()).scheduler_steps();
  ASSERT_EQ(calls.size(), 12u);  // the constructor's step is not a call
  int flagged = 0;
  for (const auto& c : calls) {
    EXPECT_EQ(c.name, "StepLR");
    EXPECT_EQ(c.optimizer, 0);
    EXPECT_EQ(c.step, c.call + 1) << "each call follows the optimizer step of its own step";
    EXPECT_EQ(c.after_skipped, c.step == 3 || c.step == 4 || c.step == 8) << "step " << c.step;
    flagged += c.after_skipped;
  }
  EXPECT_EQ(flagged, after_skipped);
  EXPECT_NEAR(calls.back().lr, 0.1 * std::pow(0.9, 12), 1e-12);  // the LR the call set

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("WARNING StepLR (optimizer 0, SGD): 12 steps, 3 after optimizer steps GradScaler "
                                "skipped (steps 3, 4, 8): its schedule runs 3 steps ahead"),
            std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("fix: step the scheduler only when the optimizer stepped"), std::string::npos);

  const auto j = json_summary();
  ASSERT_EQ(j["schedulers"].size(), 1u) << j.dump(2);
  const auto& s = j["schedulers"][0];
  EXPECT_EQ(s["name"], "StepLR");
  EXPECT_EQ(s["calls"], 12);
  EXPECT_EQ(s["after_skipped_steps"], after_skipped);
  EXPECT_EQ(s["skipped_steps_followed"], nlohmann::json::array({3, 4, 8}));
  EXPECT_EQ(s["drifts"], true);

  const auto report = ampscope::test::ampscope(fmt::format("report '{}' --force -o '{}'", session(), (dir_ / "r.html").string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(dir_ / "r.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("StepLR advanced 3 times after optimizer steps GradScaler skipped"), std::string::npos);
  EXPECT_NE(html.find("scaler.get_scale()"), std::string::npos);  // the fix

  // The inf came with the loss: it arrived at the last module's output. Checked: step 4
  // (after the skip at 3), 5 (after 4), 9 (after 8) and 10 (--grad-every's default).
  const auto& b = j["backward_inf"];
  EXPECT_EQ(b["checked_steps"], 4) << b.dump(2);
  EXPECT_EQ(b["checked_skipped_steps"], 1);
  EXPECT_EQ(b["run_skipped_steps"], 3);  // 3, 4 and 8: the two not checked have no origin
  EXPECT_EQ(b["first"]["step"], 4);
  EXPECT_EQ(b["first"]["module"], "2");
  EXPECT_EQ(b["first"]["gradient"], "output");
}

TEST_F(PythonSkippedSteps, AStepLRSteppedOnlyWhenTheScaleDidNotDropIsNotFlagged) {
  const auto r = run(kSchedulerScript, "", "--guard");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(printed_int(r.output, "scheduler calls"), 9) << r.output;
  const auto calls = SessionReader::open(session()).scheduler_steps();
  ASSERT_EQ(calls.size(), 9u);
  for (const auto& c : calls) EXPECT_FALSE(c.after_skipped) << "step " << c.step;

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("StepLR (optimizer 0, SGD): 9 steps, none after an optimizer step GradScaler skipped"),
            std::string::npos)
      << summary.output;
  EXPECT_EQ(summary.output.find("WARNING StepLR"), std::string::npos);
  const auto j = json_summary();
  EXPECT_EQ(j["schedulers"][0]["after_skipped_steps"], 0);
  EXPECT_EQ(j["schedulers"][0]["drifts"], false);
}

TEST_F(PythonSkippedSteps, ACraftedBackwardOverflowNamesItsModule) {
  const auto r = run(kBackwardScript, "--grad-every 1 --sample-budget 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("skipped steps 3,6"), std::string::npos) << r.output;
  const auto checks = SessionReader::open(session()).backward_checks();
  ASSERT_EQ(checks.size(), 8u);  // every step: --grad-every 1
  for (const auto& c : checks) {
    EXPECT_EQ(c.found(), c.step == 3 || c.step == 6) << "step " << c.step;
    EXPECT_EQ(c.skipped, c.found()) << "step " << c.step;
    EXPECT_GT(c.gradients, 0);
    if (!c.found()) continue;
    EXPECT_EQ(c.module, "block.boom") << "step " << c.step;  // not fc1, whose output gradient it made inf
    EXPECT_EQ(c.side, GradientSide::kInput);
  }
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("Backward: the first non-finite gradient in backward came out of block.boom's "
                                "backward (its input gradient) at step 3; 2 of the 8 checked steps (2 skipped by "
                                "GradScaler) had one"),
            std::string::npos)
      << summary.output;
  const auto j = json_summary();
  EXPECT_EQ(j["backward_inf"]["first"]["module"], "block.boom");
  EXPECT_EQ(j["backward_inf"]["first"]["gradient"], "input");
  EXPECT_EQ(j["backward_inf"]["origins"], nlohmann::json::parse(R"([{"module":"block.boom","gradient":"input","steps":2}])"));
}

TEST_F(PythonSkippedSteps, ABiasGradientThatOverflowsFp16IsNamedWherePyTorchHoldsItNonFinite) {
  const auto r = run(kBiasOverflowScript, "--grad-every 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::map<int64_t, std::string> nonfinite;  // PyTorch's own p.grad after backward, per step
  const std::regex line("step ([0-9]+) nonfinite \\[([^\\]]*)\\]");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
    nonfinite[std::stoll((*it)[1])] = (*it)[2];
  ASSERT_EQ(nonfinite.size(), 8u) << r.output;
  // Checked: the steps after the scale grew (4, 7) and after a skip (2, 5, 8).
  const auto checks = SessionReader::open(session()).backward_checks();
  std::vector<int64_t> checked, found;
  for (const auto& c : checks) {
    checked.push_back(c.step);
    EXPECT_EQ(c.found(), !nonfinite[c.step].empty()) << "step " << c.step;
    if (!c.found()) continue;
    found.push_back(c.step);
    EXPECT_EQ(c.side, GradientSide::kParameter) << "step " << c.step;  // no activation gradient was inf
    EXPECT_EQ(c.module, nonfinite[c.step]) << "step " << c.step;
  }
  EXPECT_EQ(checked, (std::vector<int64_t>{2, 4, 5, 7, 8}));
  EXPECT_EQ(found, (std::vector<int64_t>{4, 7}));
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("Backward: the first non-finite gradient in backward was parameter 2.bias's gradient "
                                "(a sum over the batch: it overflows where the activations' gradients need not) at "
                                "step 4; 2 of the 5 checked steps (2 skipped by GradScaler) had one"),
            std::string::npos)
      << summary.output;
  EXPECT_NE(summary.output.find("\nNo gradient range sample by step 8: range samples off\n"), std::string::npos)
      << summary.output;
  const auto j = json_summary();
  EXPECT_EQ(j["backward_inf"]["first"]["module"], "2.bias");
  EXPECT_EQ(j["backward_inf"]["first"]["gradient"], "parameter");
}

// The same loop at 2^24: each output gradient, 384 * 2^8 = 98304 in fp32 (mse_loss runs
// in fp32), passes 65504 as autograd casts it into the last Linear's fp16 output.
TEST_F(PythonSkippedSteps, AnFp16GradientThatArrivesNonFiniteAtAnOutputSaysSo) {
  const auto r = run(kBiasOverflowScript, "--grad-every 1 --sample-budget 0", "16777216");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto checks = SessionReader::open(session()).backward_checks();
  ASSERT_FALSE(checks.empty());
  const auto& first = checks.front();
  EXPECT_EQ(first.step, 1);
  ASSERT_TRUE(first.found());
  EXPECT_EQ(first.module, "2");
  EXPECT_EQ(first.side, GradientSide::kOutput);
  EXPECT_EQ(first.dtype, "float16");
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("Backward: the first non-finite gradient in backward arrived at 2's output as an fp16 "
                                "gradient (from the loss or code between modules, where fp16 holds at most 65504) at "
                                "step 1;"),
            std::string::npos)
      << summary.output;
  EXPECT_EQ(json_summary()["backward_inf"]["first"]["dtype"], "float16");
}

TEST_F(PythonSkippedSteps, WithoutGradientSamplingTheStepsAfterASkipAreChecked) {
  // Overflow at 3 and 4: step 3 is not checked (nothing armed it), step 4 is (3 skipped),
  // and so is step 5 (4 skipped); none else.
  const auto r = run(kBackwardScript, "--grad-every 0", "--boom-steps 3,4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto checks = SessionReader::open(session()).backward_checks();
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].step, 4);
  EXPECT_EQ(checks[0].module, "block.boom");
  EXPECT_EQ(checks[1].step, 5);
  EXPECT_FALSE(checks[1].found());
}

TEST_F(PythonSkippedSteps, TheStepAfterTheScaleGrewIsChecked) {
  // GradScaler grows the scale after every 3 clean steps (at the updates of steps 3 and
  // 6): the overflow a larger scale may bring would come at steps 4 and 7.
  const auto r = run(kBackwardScript, "--grad-every 0", "--boom-steps '' --growth-interval 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto checks = SessionReader::open(session()).backward_checks();
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].step, 4);
  EXPECT_EQ(checks[1].step, 7);
}

// On a GPU the capture reads GradScaler's decisions a step or a few after they were made
// (python/ampscope/_scaler_state.py): it does not wait for the device to learn them. Which
// backward it checks is then decided from what it has read. A real GradScaler on the CPU,
// its decisions handed over `lag` steps late (at once on a checked step, which waited
// anyway): at lag 0 exactly the steps after a skip or a growth are checked (the rule the
// tests above hold the CPU capture to); at any lag, the step after every growth still is
// (foreseen from the growth tracker), a run of skips is caught within lag + 1 steps of its
// first, and a late read checks at most one step more per run of skips.
constexpr const char* kLateReadScript = R"(import math, sys, torch
from ampscope._scaler_state import ScalerState
INTERVAL, STEPS, OVERFLOW = 5, 40, (12, 13, 14, 27)
def run(lag):
    p = torch.nn.Parameter(torch.ones(4))
    opt = torch.optim.SGD([p], lr=0.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=INTERVAL)
    state, truth, checked = ScalerState(), {}, {1: False}
    for n in range(1, STEPS + 1):
        before = scaler.get_scale()
        scaled = scaler.scale(p.sum() * (math.inf if n in OVERFLOW else 1.0))
        tracker = int(scaler._growth_tracker.item())
        scaled.backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        after = scaler.get_scale()
        truth[n] = dict(step=n, skipped=after < before, growth_tracker=tracker, grew=after > before)
        state.note_read(truth.get(n if checked[n] else n - lag), INTERVAL)
        checked[n + 1] = state.check_next(n, INTERVAL)
    return truth, {k for k, v in checked.items() if v and k <= STEPS}
skip_runs = 2
for lag in (0, 1, 2, 4):
    truth, checked = run(lag)
    needed = {n + 1 for n, t in truth.items() if (t["skipped"] or t["grew"]) and n < STEPS}
    assert sum(t["grew"] for t in truth.values()) >= 4 and sum(t["skipped"] for t in truth.values()) == 4
    if lag == 0:
        assert checked == needed, (sorted(checked), sorted(needed))
    for n, t in truth.items():
        if t["grew"] and n < STEPS:
            assert n + 1 in checked, f"lag {lag}: the step after the growth at {n} is not checked"
        if t["skipped"] and not truth.get(n - 1, {}).get("skipped"):
            assert checked & set(range(n + 1, n + lag + 2)), f"lag {lag}: the skips from {n} are not caught"
    assert len(checked - needed) <= skip_runs, f"lag {lag}: {sorted(checked - needed)} checked for nothing"
print("ok")
)";

TEST_F(PythonSkippedSteps, ChecksDecidedFromGradScalersStateReadLateFollowItsGrowthsAndCatchItsSkips) {
  write_file(dir_ / "late.py", kLateReadScript);
  std::string output;
  const int rc = ampscope::test::run_command(fmt::format("PYTHONPATH='{}' '{}' '{}' 2>&1", AMPSCOPE_PYTHON_PACKAGE_DIR,
                                                         *ampscope::test::python_with_torch(),
                                                         (dir_ / "late.py").string()),
                                             &output);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("ok"), std::string::npos) << output;
}

TEST_F(PythonSkippedSteps, ANestedSchedulerStepIsTheOuterOnesAndReduceLROnPlateauIsRecorded) {
  const auto r = run(kNestedSchedulersScript, "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto calls = SessionReader::open(session()).scheduler_steps();
  ASSERT_EQ(calls.size(), 8u);  // not LinearLR's or StepLR's steps inside SequentialLR's, nor constructors'
  std::vector<std::pair<std::string, int64_t>> seen;
  for (const auto& c : calls) {
    seen.emplace_back(c.name, c.step);
    EXPECT_FALSE(c.after_skipped);
  }
  const std::vector<std::pair<std::string, int64_t>> expected{
      {"SequentialLR", 1}, {"SequentialLR", 2}, {"SequentialLR", 3}, {"ReduceLROnPlateau", 3},
      {"SequentialLR", 4}, {"SequentialLR", 5}, {"SequentialLR", 6}, {"ReduceLROnPlateau", 6}};
  EXPECT_EQ(seen, expected);
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("ReduceLROnPlateau (optimizer 0, SGD): 2 steps, none after an optimizer step"),
            std::string::npos)
      << summary.output;
}

// The script's own GradScaler subclass is followed as GradScaler is, each call once though its
// methods call GradScaler's, and its scale()'s own argument reaches it.
TEST_F(PythonSkippedSteps, AScriptsGradScalerSubclassIsFollowedOnceACallWithItsOwnArguments) {
  const auto r = run(kSubclassedScalerScript, "--grad-every 1 --sample-budget 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(printed_int(r.output, "unscale_ calls"), 8) << r.output;
  const auto recorded = SessionReader::open(session());
  EXPECT_EQ(recorded.meta_value("scaler_class").value_or(""), "__main__.CountingScaler (a torch.amp.GradScaler)");
  const auto steps = recorded.steps();
  ASSERT_EQ(steps.size(), 8u);
  for (const auto& s : steps) EXPECT_EQ(s.skipped, s.step == 3 || s.step == 4) << "step " << s.step;
  for (const auto& o : recorded.optimizer_steps()) EXPECT_EQ(o.unscale_calls, 1) << "step " << o.step;
  for (const auto& s : steps)
    EXPECT_EQ(recorded.gradients(s.step).size(), 4u) << "one sample a parameter, step " << s.step;
}

TEST_F(PythonSkippedSteps, FiniteGradientsNameNoModule) {
  const auto r = run(kBackwardScript, "--grad-every 2 --sample-budget 0", "--boom-steps ''");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("Backward: no non-finite gradient in the backward passes of the 4 checked steps (0 "
                                "skipped by GradScaler)"),
            std::string::npos)
      << summary.output;
}

}  // namespace
