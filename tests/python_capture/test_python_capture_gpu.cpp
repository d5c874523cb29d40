// `ampscope run` on a CUDA loop adds no host-device synchronisation to its steps.
//
// A bf16 loop without a GradScaler (fused AdamW, clip_grad_norm_) never waits for the
// GPU by itself: the host queues step after step. The capture read each step's loss
// (and the clipped norm) with .item(), a wait per step that held the host until the
// GPU had finished, ResNet-50 on an H200 ran 1.85x of bare (session 44). PyTorch's
// own sync checker (torch.cuda.set_sync_debug_mode("error")) raises on any such wait;
// the script turns it on after its first steps, bare first (the control: the script
// itself makes none), then under full capture, whose session must still hold every
// step's loss and norm exactly as the script computed them.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "profiler/capture/deferred_step_values.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

constexpr int kSteps = 30;

std::string no_sync_loop(const std::filesystem::path& record) {
  return fmt::format(R"(import json, torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
x, y = torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")
losses, norms = [], []
for i in range({steps}):
    if i == 3:  # after the first steps' one-time work (optimizer state, CUDA's lazy loading)
        torch.cuda.set_sync_debug_mode("error")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    loss.backward()
    norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).detach())
    opt.step()
    opt.zero_grad(set_to_none=True)
    losses.append(loss.detach())
torch.cuda.set_sync_debug_mode(0)
json.dump({{"loss": [l.item() for l in losses], "norm": [n.item() for n in norms]}}, open("{record}", "w"))
)",
                     fmt::arg("steps", kSteps), fmt::arg("record", record.string()));
}

class PythonCaptureGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    python_ = ampscope::test::python_with_torch();
    if (!python_) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU";
  }
  // `script` (given the path its record goes to) run bare, the control that it never waits
  // for the device by itself, then under full capture: false (and a failure) if either
  // raised. The session is session(), the script's record record().
  bool run_bare_then_captured(const std::function<std::string(const std::filesystem::path&)>& script) {
    const auto path = dir_ / "loop.py";
    write_file(path, script(dir_ / "record.json"));
    std::string bare_output;
    const int bare = ampscope::test::run_command(fmt::format("'{}' '{}' 2>&1", *python_, path.string()), &bare_output);
    EXPECT_EQ(bare, 0) << "the script itself waits for the device:\n" << bare_output;
    if (bare != 0) return false;
    const auto r = ampscope::test::ampscope(
        fmt::format("run --out '{}' --grad-every 0 '{}'", session().string(), path.string()));
    EXPECT_EQ(r.exit_code, 0) << "a wait for the device under capture:\n" << r.output;
    return r.exit_code == 0;
  }
  std::filesystem::path session() const { return dir_ / "loop.ampscope"; }
  nlohmann::json record() const {
    std::ifstream in(dir_ / "record.json");
    return nlohmann::json::parse(in);
  }

  std::optional<std::string> python_;
  ScratchDir dir_;
};

TEST_F(PythonCaptureGpu, FullCaptureOfALoopWithoutAGradScalerWaitsForTheDeviceNowhere) {
  ASSERT_TRUE(run_bare_then_captured(no_sync_loop));
  const auto record = this->record();
  const auto steps = SessionReader::open(session().string()).steps();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_EQ(steps[i].loss, record["loss"][i].get<double>()) << "step " << i + 1;
    EXPECT_EQ(steps[i].grad_norm, record["norm"][i].get<double>()) << "step " << i + 1;
  }
}

// An fp16 loop under GradScaler whose AdamW is fused: GradScaler hands the optimizer its
// found-inf flag on the device and the script never waits (its control, run bare, says
// so). The capture read found_inf and the scale with .item() at every step; it now
// copies them on the device and reads them later, so the session must hold GradScaler's
// every decision as the script's own copies tell them: the scale each backward used, the
// scale update() left, the two steps forced to overflow skipped, the scheduler calls
// after them flagged. The backward is checked on the step after each growth of the scale
// (foreseen from the growth tracker, not read) and, within the values' allowed lag, after
// the skips; those checks wait by design, with the script's sync checker set aside.
constexpr int kScalerSteps = 30;
constexpr int kGrowthInterval = 4;

std::string fused_scaler_loop(const std::filesystem::path& record) {
  return fmt::format(R"(import json, math, torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.99)
scaler = torch.amp.GradScaler("cuda", init_scale=2.0**10, growth_interval={interval})
x, y = torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")
losses, before, after = [], [], []
for i in range({steps}):
    if i == 3:
        torch.cuda.set_sync_debug_mode("error")
    with torch.autocast("cuda", dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x).float(), y)
    if i in (13, 14):  # steps 14 and 15: a run of two overflows
        loss = loss * math.inf
    scaler.scale(loss).backward()
    scaler.step(opt)
    before.append(scaler._scale.clone())
    scaler.update()
    after.append(scaler._scale.clone())
    sched.step()
    opt.zero_grad(set_to_none=True)
    losses.append(loss.detach())
torch.cuda.set_sync_debug_mode(0)
finite = lambda v: v if math.isfinite(v) else None
json.dump({{"loss": [finite(l.item()) for l in losses], "before": [s.item() for s in before],
           "after": [s.item() for s in after]}}, open("{record}", "w"))
)",
                     fmt::arg("steps", kScalerSteps), fmt::arg("interval", kGrowthInterval),
                     fmt::arg("record", record.string()));
}

TEST_F(PythonCaptureGpu, FullCaptureOfAGradScalerLoopWithAFusedOptimizerWaitsOnlyOnCheckedSteps) {
  ASSERT_TRUE(run_bare_then_captured(fused_scaler_loop));
  const auto record = this->record();
  const SessionReader reader = SessionReader::open(session().string());
  const auto steps = reader.steps();
  const auto rows = reader.optimizer_steps();
  const auto calls = reader.scheduler_steps();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kScalerSteps));
  ASSERT_EQ(rows.size(), static_cast<size_t>(kScalerSteps));
  ASSERT_EQ(calls.size(), static_cast<size_t>(kScalerSteps));
  std::vector<int64_t> grew, skipped;
  for (int i = 0; i < kScalerSteps; ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    const double before = record["before"][i].get<double>(), after = record["after"][i].get<double>();
    if (record["loss"][i].is_null())
      EXPECT_TRUE(std::isinf(steps[i].loss));
    else
      EXPECT_EQ(steps[i].loss, record["loss"][i].get<double>());
    EXPECT_EQ(steps[i].loss_scale, before);
    EXPECT_EQ(steps[i].skipped, after < before);
    EXPECT_EQ(rows[i].skipped, after < before);
    EXPECT_EQ(rows[i].loss_scale_after, after);
    EXPECT_EQ(calls[i].step, i + 1);
    EXPECT_EQ(calls[i].after_skipped, after < before);
    if (after > before) grew.push_back(i + 1);
    if (after < before) skipped.push_back(i + 1);
  }
  ASSERT_EQ(skipped, (std::vector<int64_t>{14, 15}));
  ASSERT_GE(grew.size(), 4u);
  std::set<int64_t> checked;
  for (const auto& c : reader.backward_checks()) checked.insert(c.step);
  for (int64_t g : grew) {
    if (g < kScalerSteps) {
      EXPECT_TRUE(checked.count(g + 1)) << "the step after the growth at " << g;
    }
  }
  bool after_skip = false;
  for (int64_t s = 15; s <= 15 + static_cast<int64_t>(ampscope::profiler::DeferredStepValues::kMaxWaiting); ++s)
    after_skip |= checked.count(s) > 0;
  EXPECT_TRUE(after_skip) << "no check after the skips within the values' allowed lag";
}

}  // namespace
