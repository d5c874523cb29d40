// A user's own script in another precision, without editing it: `ampscope run --precision P`
// trains exactly as the script written for P would (to the bit, against that script run
// bare), `--max-steps N` stops it after N steps, and `ampscope run --compare fp32,bf16`
// writes the comparison file `ampscope compare` writes for the built-in models, each of its
// runs the script's own training in that precision.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "profiler/analysis/comparison.h"
#include "profiler/script_facts.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::SessionReader;
using ampscope::test::read_file;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// train.py OUT DTYPE on|off [STEPS [refuse-bf16]]: autocast in DTYPE (off: the region entered
// with enabled=False) under GradScaler; each step's loss appended to OUT as an exact hex float.
// refuse-bf16: the script raises where its region runs in bf16 (an op a bf16 build lacks).
constexpr const char* kScript = R"(import sys, torch
from torch import nn
torch.manual_seed(0)
out, dtype, amp = sys.argv[1], {"fp16": torch.float16, "bf16": torch.bfloat16}[sys.argv[2]], sys.argv[3] == "on"
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 4
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
with open(out, "w") as digest:
    for step in range(steps):
        with torch.autocast("cpu", dtype=dtype, enabled=amp):
            if sys.argv[5:] == ["refuse-bf16"] and torch.is_autocast_enabled("cpu") \
                    and torch.get_autocast_dtype("cpu") == torch.bfloat16:
                raise RuntimeError("this model has no bf16 kernel")
            loss = model(torch.randn(8, 16)).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        digest.write(f"loss {loss.item().hex()}\n")
        digest.flush()
)";

class PythonPrecision : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    write_file(dir_ / "train.py", kScript);
  }
  std::string script() const { return (dir_ / "train.py").string(); }
  // The script run bare (python train.py ...): its digest.
  std::string bare(const std::string& args) {
    const auto out = dir_ / "bare.txt";
    EXPECT_EQ(ampscope::test::run_command(fmt::format("'{}' '{}' '{}' {}", *ampscope::test::python_with_torch(),
                                                      script(), out.string(), args)),
              0);
    return read_file(out);
  }
  ampscope::test::CliResult run(const std::string& flags, const std::string& out, const std::string& args) {
    return ampscope::test::ampscope(fmt::format("run --out '{}' --force {} '{}' '{}' {}", session(), flags, script(),
                                                (dir_ / out).string(), args));
  }
  std::string session() const { return (dir_ / "s.ampscope").string(); }
  std::set<OpCategory> top_level_categories_of(const std::vector<OpStats>& rows, const std::string& op) {
    std::set<OpCategory> categories;
    for (const auto& row : rows)
      if (row.top_level && row.name == op) categories.insert(row.category);
    return categories;
  }
  ScratchDir dir_;
};

TEST_F(PythonPrecision, APrecisionOverrideTrainsAsTheScriptWrittenInThatPrecisionToTheBit) {
  const std::string written_bf16 = bare("bf16 on");
  const std::string written_fp32 = bare("fp16 off");
  ASSERT_NE(written_bf16, written_fp32);

  // An fp16 script run in bf16: its losses are the bf16 script's, its linears bf16's.
  auto r = run("--precision bf16", "bf16.txt", "fp16 on");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_file(dir_ / "bf16.txt"), written_bf16);
  {
    const auto reader = SessionReader::open(session());
    EXPECT_EQ(top_level_categories_of(reader.op_stats(), "aten::linear"), std::set{OpCategory::kDemoted});
    for (const auto& row : reader.op_stats()) {
      if (row.name != "aten::linear" || !row.top_level) continue;
      EXPECT_EQ(row.output_dtypes, std::vector<std::string>{"bfloat16"});
    }
  }
  auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("precision     bf16 autocast, set by --precision bf16 (the script's regions, asked "
                                "for fp16)\n"),
            std::string::npos)
      << summary.output;

  // In fp32: its regions turned off, as the script with enabled=False trains.
  r = run("--precision fp32", "fp32.txt", "fp16 on");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_file(dir_ / "fp32.txt"), written_fp32);
  EXPECT_EQ(top_level_categories_of(SessionReader::open(session()).op_stats(), "aten::linear"),
            std::set{OpCategory::kUnchanged});
  summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("precision     fp32, set by --precision fp32 (the script's autocast regions, asked "
                                "for fp16, turned off)\n"),
            std::string::npos)
      << summary.output;

  // tf32 is CUDA's: refused on a machine without one, in one line.
  if (!ampscope::test::python_can_import("torch; assert torch.cuda.is_available()")) {
    r = run("--precision tf32", "tf32.txt", "fp16 on");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("ampscope: error: precision tf32 needs a CUDA device"), std::string::npos) << r.output;
  }
}

TEST_F(PythonPrecision, MaxStepsStopsTheScriptAsTheNextStepBeginsWithExitStatusZero) {
  const auto r = run("--max-steps 3", "digest.txt", "fp16 on 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto reader = SessionReader::open(session());
  EXPECT_EQ(reader.steps().size(), 3u);
  EXPECT_EQ(reader.meta_value("final_state").value_or(""), "finished");
  EXPECT_EQ(reader.meta_value("final_message").value_or(""), "stopped after 3 steps (--max-steps)");
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("  ended         finished: stopped after 3 steps (--max-steps)\n"), std::string::npos)
      << summary.output;
  const std::string digest = read_file(dir_ / "digest.txt");
  EXPECT_EQ(std::count(digest.begin(), digest.end(), '\n'), 3) << digest;  // the script ran 3 steps, not 10
  // How it ran, so the GUI can run it again as it ran: the Python, where, the script, its arguments.
  const auto facts = ampscope::profiler::script_facts(reader.meta_values());
  ASSERT_TRUE(facts && facts->command) << reader.meta_value("script_command").value_or("(no script_command)");
  EXPECT_EQ(facts->command->script, script());
  EXPECT_FALSE(facts->command->module);
  EXPECT_EQ(facts->command->arguments, (std::vector<std::string>{(dir_ / "digest.txt").string(), "fp16", "on", "10"}));
  EXPECT_EQ(facts->command->working_directory, std::filesystem::current_path().string());
  EXPECT_TRUE(std::filesystem::is_regular_file(facts->command->python)) << facts->command->python;
}

// A first look at a script, shorter than --grad-every (10): its last step takes the range
// sample, so the session has gradient and activation ranges and readiness; the same 3 steps
// run to the script's own end, unknown beforehand, sample nothing and say why.
TEST_F(PythonPrecision, AFirstLookWithMaxStepsTakesItsRangeSampleAtItsLastStep) {
  auto r = run("--max-steps 3", "digest.txt", "fp16 on 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {
    const auto reader = SessionReader::open(session());
    EXPECT_EQ(reader.gradient_steps(), std::vector<int64_t>{3});
    EXPECT_EQ(reader.activation_steps(), std::vector<int64_t>{3});
    EXPECT_EQ(reader.gradients(3).size(), 4u);  // both Linear layers' weight and bias
    EXPECT_EQ(reader.meta_value("range_sample_last_step").value_or(""), "3");
  }
  auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("range samples every 10 steps (within the 5 % budget); the run's last step (3) too, "
                                "as the run ends before step 10; precision readiness"),
            std::string::npos)
      << summary.output;
  EXPECT_EQ(summary.output.find("No gradient range sample"), std::string::npos) << summary.output;

  r = run("", "digest.txt", "fp16 on 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(SessionReader::open(session()).gradient_steps().empty());
  summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  EXPECT_NE(summary.output.find("No gradient range sample by step 3: range samples every 10 steps"), std::string::npos)
      << summary.output;
}

// The script's GradScaler stays on whatever autocast's dtype: under bf16 it scales for nothing,
// and `summary` says so with the host time its own ops took; under fp16 it is what keeps the
// gradients in range, and nothing is said.
TEST_F(PythonPrecision, AGradScalerUnderBf16AutocastIsNamedWithWhatItsOwnOpsCost) {
  auto r = run("", "digest.txt", "bf16 on 4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("\n  info     A loss scaler is on, but bf16 gradients need no scaling\n"),
            std::string::npos)
      << summary.output;
  const auto json = dir_ / "s.json";
  const auto exported =
      ampscope::test::ampscope(fmt::format("export --format json '{}' -o '{}'", session(), json.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  bool named = false;
  const auto findings = nlohmann::json::parse(read_file(json)).at("findings");
  for (const auto& rec : findings.at("recommendations")) {
    if (rec.at("id").get<std::string>() != "loss_scaler_without_fp16") continue;
    named = true;
    EXPECT_NE(rec.at("detail").get<std::string>().find("Drop the torch.amp.GradScaler, or construct it with "
                                                       "enabled=False where the same script also trains in fp16."),
              std::string::npos)
        << rec.dump(2);
  }
  EXPECT_TRUE(named) << findings.dump(2);
  // Its evidence: the scale it kept, then its own ops (scaling the loss, unscaling), each per step.
  const auto evidence = summary.output.find("* loss scale 65536 over 4 steps, 0 skipped");
  ASSERT_NE(evidence, std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("* (GradScaler) aten::", evidence), std::string::npos) << summary.output;

  r = run("", "digest.txt", "fp16 on 4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  summary = ampscope::test::ampscope(fmt::format("summary '{}'", session()));
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output.find("need no scaling"), std::string::npos) << summary.output;
}

// The same from a script's own capture (`with ampscope.capture(..., max_steps=2)`): the
// stop leaves the with-block as SystemExit(0) does, and the session says why it ended.
TEST_F(PythonPrecision, ACaptureWithMaxStepsEndsTheScriptThereAndSaysSo) {
  write_file(dir_ / "own.py", fmt::format(R"(import torch, ampscope
from torch import nn
model = nn.Linear(8, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with ampscope.capture("{}", max_steps=2, trace_gpu=False):
    for i in range(10):
        model(torch.randn(4, 8)).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
        print("step", i + 1, flush=True)
print("after the loop")
)",
                                          session()));
  std::string out;
  const int rc = ampscope::test::run_command(fmt::format("PYTHONPATH='{}' '{}' '{}' 2>&1", AMPSCOPE_PYTHON_PACKAGE_DIR,
                                                         *ampscope::test::python_with_torch(),
                                                         (dir_ / "own.py").string()),
                                             &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("step 2\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("step 3"), std::string::npos) << out;
  EXPECT_EQ(out.find("after the loop"), std::string::npos) << out;
  const auto reader = SessionReader::open(session());
  EXPECT_EQ(reader.steps().size(), 2u);
  EXPECT_EQ(reader.meta_value("final_message").value_or(""), "stopped after 2 steps (max_steps)");
}

// The losses of a digest, parsed from their hex floats.
std::vector<double> losses_of(const std::string& digest) {
  std::vector<double> losses;
  std::istringstream lines(digest);
  std::string word, hex;
  while (lines >> word >> hex) losses.push_back(std::strtod(hex.c_str(), nullptr));
  return losses;
}

TEST_F(PythonPrecision, ACompareRunOfAScriptIsAComparisonOfTheScriptsOwnTrainingInEachPrecision) {
  const std::vector<double> written_fp32 = losses_of(bare("fp16 off"));
  const std::vector<double> written_bf16 = losses_of(bare("bf16 on"));
  ASSERT_EQ(written_fp32.size(), 4u);
  const auto out = (dir_ / "cmp.ampscope").string();
  const auto r = ampscope::test::ampscope(
      fmt::format("run --compare fp32,bf16 --repeats 2 --warmup 1 --max-steps 4 --profile-steps 2 --no-gpu-trace "
                  "--out '{}' '{}' '{}' fp16 on",
                  out, script(), (dir_ / "digest.txt").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("speedup vs fp32"), std::string::npos) << r.output;

  const auto comparison = ampscope::profiler::read_comparison(out);
  ASSERT_EQ(comparison.variants.size(), 2u);
  // The file says which script it compared, and how, as a session of it would.
  ASSERT_TRUE(comparison.script.has_value());
  EXPECT_EQ(comparison.script->script, script());
  EXPECT_EQ(comparison.script->arguments, (dir_ / "digest.txt").string() + " fp16 on");
  EXPECT_EQ(comparison.script->compared, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_FALSE(comparison.script->capture.trace_gpu) << "--no-gpu-trace, kept to compare it again so";
  ASSERT_TRUE(comparison.script->command) << "how its runs ran the script, to compare it again";
  EXPECT_EQ(comparison.script->command->script, script());
  EXPECT_EQ(comparison.script->command->arguments,
            (std::vector<std::string>{(dir_ / "digest.txt").string(), "fp16", "on"}));
  EXPECT_EQ(comparison.script->precision_asked, "fp16") << "the script's regions, not a run's precision";
  EXPECT_TRUE(comparison.script->scaler);
  EXPECT_EQ(comparison.script->ended, "finished");
  EXPECT_EQ(comparison.warmup_steps, 1);
  EXPECT_EQ(comparison.effective_batch, 8);
  for (const auto& v : comparison.variants) {
    SCOPED_TRACE(v.variant);
    EXPECT_TRUE(v.error.empty()) << v.error;
    EXPECT_TRUE(v.scaler);  // the script's GradScaler, kept in each precision
    ASSERT_EQ(v.repeats.size(), 2u);
    for (const auto& repeat : v.repeats) {
      ASSERT_EQ(repeat.size(), 4u);
      for (size_t i = 0; i < repeat.size(); ++i)
        EXPECT_EQ(repeat[i].loss, (v.variant == "fp32" ? written_fp32 : written_bf16)[i]) << "step " << i + 1;
    }
    EXPECT_EQ(v.profiled_steps, 2);
    EXPECT_EQ(top_level_categories_of(v.op_stats, "aten::linear"),
              std::set{v.variant == "fp32" ? OpCategory::kUnchanged : OpCategory::kDemoted});
  }
  // Each op's time per profiled step is kept, so the op table takes its median over the steps
  // (a step the machine stalled in weighed a half of a 2-step mean).
  size_t linears = 0;
  for (const auto& row : ampscope::profiler::match_ops(comparison)) {
    if (row.name != "aten::linear") continue;
    ++linears;
    for (const auto& cell : row.cells) {
      EXPECT_TRUE(cell.present) << row.module;
      EXPECT_TRUE(cell.per_step_median) << row.module;
    }
  }
  EXPECT_EQ(linears, 2u);
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", out));
  EXPECT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("python train.py: Sequential"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("script " + script() + " " + (dir_ / "digest.txt").string() +
                                " fp16 on, in fp32, bf16; ended finished"),
            std::string::npos)
      << summary.output;
  const auto html_path = dir_ / "cmp.html";
  const auto report = ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", out, html_path.string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string html = ampscope::test::read_file(html_path);
  EXPECT_NE(html.find("compared: fp32, bf16"), std::string::npos) << "the report's header names the script compared";
  EXPECT_NE(html.find(script()), std::string::npos);

}

// A precision the script cannot run in fails alone: its error, in one line, in the output and
// the file; the other precisions are compared as usual.
// And the runs' directories of comparisons killed before they could remove them are removed
// by the next one, those of comparisons that may still run are not.
TEST_F(PythonPrecision, APrecisionTheScriptFailsInIsReportedWithItsErrorAndTheOthersCompared) {
  namespace fs = std::filesystem;
  const fs::path tmp = dir_ / "tmp";
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);  // reaped: the pid runs nothing now
  const auto runs_dir = [&](int64_t pid, const std::string& tail, bool old) {
    const fs::path dir = tmp / fmt::format("ampscope-compare-{}-{}", pid, tail);
    fs::create_directories(dir);
    write_file(dir / "fp32.0.log", "x");
    if (old) fs::last_write_time(dir, fs::file_time_type::clock::now() - std::chrono::hours(1));
    return dir;
  };
  const fs::path killed = runs_dir(gone, "aaaaaa", true);
  const std::vector<fs::path> kept = {runs_dir(gone, "bbbbbb", false),  // written to lately
                                      runs_dir(::getpid(), "cccccc", true),  // its comparison runs
                                      tmp / "ampscope-compare-dddddd"};      // an older build's name
  fs::create_directories(kept.back());

  const auto out = (dir_ / "cmp.ampscope").string();
  ampscope::test::CliResult r;
  r.exit_code = ampscope::test::run_command(
      fmt::format("TMPDIR='{}' '{}' run --compare fp32,bf16 --repeats 2 --warmup 1 --max-steps 3 --profile-steps 1 "
                  "--out '{}' '{}' '{}' fp16 on 3 refuse-bf16 2>&1",
                  tmp.string(), AMPSCOPE_CLI, out, script(), (dir_ / "digest.txt").string()),
      &r.output);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(killed));
  for (const fs::path& dir : kept) EXPECT_TRUE(fs::exists(dir)) << dir;
  const auto runs_dirs = std::count_if(fs::directory_iterator(tmp), fs::directory_iterator(), [](const auto& entry) {
    return entry.path().filename().string().starts_with("ampscope-compare-");
  });
  EXPECT_EQ(runs_dirs, 3) << "its own runs' directory went too";
  EXPECT_NE(r.output.find("bf16: failed: RuntimeError: this model has no bf16 kernel\n"), std::string::npos)
      << r.output;
  // Its whole output, the traceback included, is kept beside the comparison.
  EXPECT_NE(r.output.find("  its output: " + out + ".bf16.log\n"), std::string::npos) << r.output;
  const std::string log = read_file(out + ".bf16.log");
  EXPECT_NE(log.find("Traceback (most recent call last)"), std::string::npos) << log;
  EXPECT_NE(r.output.find("ampscope: 6 runs of the script: 3 per precision (2 timed, 1 profiled), each stopped after 3 "
                          "steps\n"),
            std::string::npos)
      << r.output;
  const auto comparison = ampscope::profiler::read_comparison(out);
  ASSERT_EQ(comparison.variants.size(), 2u);
  EXPECT_EQ(comparison.variants[0].repeats.size(), 2u);
  EXPECT_EQ(comparison.variants[0].profiled_steps, 1);
  EXPECT_TRUE(comparison.variants[1].repeats.empty());
  EXPECT_EQ(comparison.variants[1].error, "RuntimeError: this model has no bf16 kernel");
}

}  // namespace
