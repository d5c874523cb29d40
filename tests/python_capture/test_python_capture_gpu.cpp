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

#include <fstream>
#include <nlohmann/json.hpp>

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

TEST(PythonCaptureGpu, FullCaptureOfALoopWithoutAGradScalerWaitsForTheDeviceNowhere) {
  const auto python = ampscope::test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU";
  ScratchDir dir;
  const auto script = dir / "loop.py";
  write_file(script, no_sync_loop(dir / "record.json"));

  std::string bare_output;
  const int bare = ampscope::test::run_command(fmt::format("'{}' '{}' 2>&1", *python, script.string()), &bare_output);
  ASSERT_EQ(bare, 0) << "the script itself waits for the device:\n" << bare_output;

  const auto session = dir / "loop.ampscope";
  const auto r = ampscope::test::ampscope(
      fmt::format("run --out '{}' --grad-every 0 '{}'", session.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << "a wait for the device under capture:\n" << r.output;

  std::ifstream in(dir / "record.json");
  const auto record = nlohmann::json::parse(in);
  const auto steps = SessionReader::open(session.string()).steps();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_EQ(steps[i].loss, record["loss"][i].get<double>()) << "step " << i + 1;
    EXPECT_EQ(steps[i].grad_norm, record["norm"][i].get<double>()) << "step " << i + 1;
  }
}

}  // namespace
