// Issue 32: `ampscope run` of a fast loop (2,000 steps of about a millisecond on
// the CPU) keeps every step, every skip and every loss-scale change exactly as
// torch's GradScaler made them, checked against the script's own record of
// get_scale(); the only thing it may shed is ops, and then the session says
// which steps' ops it kept and why (the op sampling rule's fall-backs).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "profiler/op_sampling_rule.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpSamplingRule;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

constexpr int kSteps = 2000;
constexpr int kBatch = 16;

// fp16 autocast with a GradScaler that starts far too high and grows every 20 clean
// steps, plus a loss 1000x larger every 97th step: overflows, back-offs and growths
// all through the run. The script records, per step, the scale the step used
// (get_scale() before update) and the one update() left.
std::string fast_loop_script(const std::filesystem::path& record) {
  return fmt::format(R"(import json, torch
from torch import nn
torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=20)
record = []
for i in range({steps}):
    x = torch.randn({batch}, 32)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(x).float().pow(2).mean() * (1e3 if i % 97 == 0 else 1.0)
    scaler.scale(loss).backward()
    scaler.step(opt)
    before = scaler.get_scale()
    scaler.update()
    record.append({{"scale": before, "scale_after": scaler.get_scale()}})
    opt.zero_grad()
json.dump(record, open("{record}", "w"))
)",
                     fmt::arg("steps", kSteps), fmt::arg("batch", kBatch), fmt::arg("record", record.string()));
}

class PythonFastLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  ScratchDir dir_;
};

TEST_F(PythonFastLoop, KeepsEveryStepSkipAndScaleChangeAndSaysWhichOpsItShed) {
  const auto script = dir_ / "fast.py";
  const auto record_path = dir_ / "record.json";
  const auto session_path = dir_ / "fast.ampscope";
  write_file(script, fast_loop_script(record_path));
  // --every 1: every step's ops asked for, the load that lost a third of the steps before.
  const auto r = ampscope::test::ampscope(
      fmt::format("run --out '{}' --every 1 '{}'", session_path.string(), script.string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::ifstream in(record_path);
  const auto record = nlohmann::json::parse(in);
  ASSERT_EQ(record.size(), static_cast<size_t>(kSteps));

  const auto session = SessionReader::open(session_path.string());
  const auto steps = session.steps();
  ASSERT_EQ(steps.size(), static_cast<size_t>(kSteps)) << "steps were lost";
  std::map<int64_t, double> scale_after;
  for (const auto& row : session.optimizer_steps()) scale_after[row.step] = row.loss_scale_after;
  ASSERT_EQ(scale_after.size(), static_cast<size_t>(kSteps)) << "optimizer decisions were lost";

  int script_skips = 0, script_changes = 0, session_skips = 0, session_changes = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double before = record[i]["scale"].get<double>();
    const double after = record[i]["scale_after"].get<double>();
    const auto& s = steps[i];
    ASSERT_EQ(s.step, i + 1);
    EXPECT_EQ(s.loss_scale, before) << "step " << s.step;
    EXPECT_EQ(scale_after[s.step], after) << "step " << s.step;
    // GradScaler backs off exactly when it skipped the optimizer step.
    EXPECT_EQ(s.skipped, after < before) << "step " << s.step;
    EXPECT_FALSE(std::isnan(s.loss)) << "step " << s.step;
    // Samples per second from the batch the capture saw: never NaN.
    ASSERT_GT(s.step_time_ms, 0.0);
    EXPECT_NEAR(s.samples_per_second, kBatch * 1000.0 / s.step_time_ms, 1e-6 * s.samples_per_second)
        << "step " << s.step;
    script_skips += after < before;
    script_changes += after != before;
    session_skips += s.skipped;
    session_changes += scale_after[s.step] != s.loss_scale;
  }
  EXPECT_GT(script_skips, 20);  // the loop is one that exercises the scaler
  EXPECT_EQ(session_skips, script_skips);
  EXPECT_EQ(session_changes, script_changes);

  // Nothing dropped silently: the one thing that may be shed is ops, by the recorded rule.
  EXPECT_EQ(session.meta_value(ampscope::profiler::meta_key::kProfilerDroppedBatches).value_or("?"), "0");
  EXPECT_EQ(session.meta_value(ampscope::profiler::meta_key::kStoreDroppedBatches).value_or("?"), "0");
  const std::string stored_rule =
      session.meta_value(ampscope::profiler::meta_key::kOpSamplingFallbacks).value_or("");
  const auto fallbacks = OpSamplingRule::decode(stored_rule);
  ASSERT_TRUE(fallbacks.has_value()) << stored_rule;
  const OpSamplingRule rule(1, 0, 1, *fallbacks);
  std::set<int64_t> expected_op_steps;
  for (int64_t step = 1; step <= kSteps; ++step)
    if (rule.selects(step)) expected_op_steps.insert(step);
  const auto op_steps = session.op_steps();
  std::set<int64_t> recorded(op_steps.begin(), op_steps.end());
  recorded.erase(kSteps + 1);  // the last scaler.update() after the loop's last optimizer step
  EXPECT_EQ(recorded, expected_op_steps) << "ops of steps the rule did not select, or missing: rule " << stored_rule;

  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session_path.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find(fmt::format("steps     {} ", kSteps)), std::string::npos) << summary.output;
  if (!fallbacks->empty()) {
    EXPECT_NE(summary.output.find(OpSamplingRule::describe(*fallbacks)), std::string::npos) << summary.output;
  }
  RecordProperty("op_sampling_fallbacks", stored_rule);
  std::printf("op sampling fall-backs: %s (%zu of %d steps' ops recorded)\n",
              stored_rule.empty() ? "none" : stored_rule.c_str(), recorded.size(), kSteps);
}

}  // namespace
