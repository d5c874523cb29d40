// Forward activation ranges of a user's own script under `ampscope run`: on a range-sampled
// step every module's output is measured (dtype, elements, inf/NaN share, largest finite
// |x|) as the script's own forward hooks see it, and the first module whose output
// overflowed fp16 is named, in the summary and the JSON summary alike.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// fp16 autocast with GradScaler("cpu"). `boost` multiplies its input by 1 until step 3 and by
// 1e5 from there: fp16 outputs past 65504 are inf, and the Linear after it is fed them. The
// script's own forward hooks write what each module returned, per step (the peer).
constexpr const char* kOverflowScript = R"(import json, sys, torch
from torch import nn
torch.manual_seed(0)

class Boost(nn.Module):
    factor = 1.0
    def forward(self, x):
        return x * self.factor

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), Boost(), nn.Linear(32, 4))
seen = {}

def hook(name):
    def record(module, args, out):
        if not torch.is_grad_enabled():
            return
        finite = out[torch.isfinite(out)]
        seen[step][name] = {"dtype": str(out.dtype).replace("torch.", ""), "numel": out.numel(),
                            "nonfinite": (~torch.isfinite(out)).float().mean().item(),
                            "max_abs": finite.abs().max().item() if finite.numel() else 0.0}
    return record

for name, module in model.named_modules():
    module.register_forward_hook(hook(name or "Sequential"))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
for step in range(1, 5):
    seen[step] = {}
    Boost.factor = 1e5 if step >= 3 else 1.0
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(torch.randn(8, 16)).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
json.dump(seen, open(sys.argv[1], "w"))
)";

TEST(PythonActivations, EveryModulesOutputIsMeasuredAsItsForwardHookSeesItAndTheFirstFp16OverflowIsNamed) {
  if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  ScratchDir dir;
  write_file(dir / "train.py", kOverflowScript);
  const auto session = (dir / "s.ampscope").string();
  const auto peer_path = dir / "hooks.json";
  const auto r = ampscope::test::ampscope(fmt::format("run --out '{}' --grad-every 1 --sample-budget 0 '{}' '{}'",
                                                      session, (dir / "train.py").string(), peer_path.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(peer_path);
  const auto peer = nlohmann::json::parse(in);

  const auto reader = SessionReader::open(session);
  ASSERT_EQ(reader.activation_steps(), (std::vector<int64_t>{1, 2, 3, 4}));
  for (const auto& [step_key, modules] : peer.items()) {
    const int64_t step = std::stoll(step_key);
    std::map<std::string, ampscope::profiler::ActivationSample> ours;
    for (const auto& a : reader.activations(step)) ours[a.module] = a;
    ASSERT_EQ(ours.size(), modules.size()) << "step " << step;  // Sequential, 0, 1, 2, 3
    for (const auto& [module, seen] : modules.items()) {
      SCOPED_TRACE(fmt::format("step {} module {}", step, module));
      ASSERT_TRUE(ours.contains(module));
      const auto& a = ours[module];
      EXPECT_EQ(a.dtype, seen["dtype"].get<std::string>());
      EXPECT_EQ(a.numel, seen["numel"].get<int64_t>());
      EXPECT_NEAR(a.nonfinite_fraction, seen["nonfinite"].get<double>(), 1e-9);
      EXPECT_NEAR(a.max_abs, seen["max_abs"].get<double>(), 1e-6 * seen["max_abs"].get<double>());
    }
  }
  ASSERT_GT(peer["3"]["2"]["nonfinite"].get<double>(), 0.0);  // the script did overflow where meant
  ASSERT_EQ(peer["2"]["2"]["nonfinite"].get<double>(), 0.0);

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session));
  EXPECT_NE(summary.output.find(fmt::format(
                "Activations: the first module whose output overflowed fp16 is 2 at step 3 (float16 output, {:.3f}% "
                "inf/NaN",
                100 * peer["3"]["2"]["nonfinite"].get<double>())),
            std::string::npos)
      << summary.output;
  const auto json_path = (dir / "s.json").string();
  const auto exported = ampscope::test::ampscope(fmt::format("export '{}' --format json -o '{}'", session, json_path));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream json_in(json_path);
  const auto activations = nlohmann::json::parse(json_in)["activations"];
  EXPECT_EQ(activations["sampled_steps"], 4);
  EXPECT_EQ(activations["first_fp16_overflow"]["module"], "2");
  EXPECT_EQ(activations["first_fp16_overflow"]["step"], 3);
}

}  // namespace
