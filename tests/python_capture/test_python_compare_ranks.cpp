// A precision comparison of a torchrun script (`ampscope run --compare fp32,bf16
// --nproc-per-node 2`): each run is the script's ranks, DDP on gloo here, and each step is the
// job's: the slowest rank's time over all ranks' samples, at the ranks' mean loss. A rank that
// fails ends its precision's runs with its own error, the other precisions compared as usual.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/script_facts.h"
#include "profiler/store/comparison_store.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/test_support.h"

namespace {

namespace fs = std::filesystem;
using ampscope::profiler::OpCategory;
using ampscope::test::read_file;
using ampscope::test::ScratchDir;
using ampscope::test::write_file;

// ranks.py DIR [fail]: DDP on gloo, rank 0 on batches of 8 and rank 1 of 12, bf16 autocast under
// GradScaler. Each rank writes its losses (exact hex floats) to DIR/losses.<torchrun's pid>.<rank>,
// so each run of the comparison leaves its ranks' files. fail: rank 1 raises at its 2nd step where
// its region runs in bf16.
constexpr const char* kScript = R"(import os, sys, torch
import torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu")
with open(os.path.join(sys.argv[1], f"losses.{os.getppid()}.{rank}"), "w") as digest:
    for step in range(1, 1000):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            if sys.argv[2:] == ["fail"] and rank == 1 and step == 2 and torch.is_autocast_enabled("cpu"):
                raise RuntimeError("rank 1 has no bf16 kernel")
            loss = model(torch.randn(8 + 4 * rank, 16)).float().pow(2).mean()
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        digest.write(f"{loss.item().hex()}\n")
        digest.flush()
dist.destroy_process_group()
)";

// Each run's ranks' losses, by torchrun's pid then rank.
std::map<std::string, std::map<int, std::vector<double>>> runs_in(const fs::path& dir) {
  std::map<std::string, std::map<int, std::vector<double>>> runs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();  // losses.<pid>.<rank>
    if (!name.starts_with("losses.")) continue;
    const size_t dot = name.rfind('.');
    std::vector<double>& losses = runs[name.substr(7, dot - 7)][std::stoi(name.substr(dot + 1))];
    std::istringstream lines(read_file(entry.path()));
    for (std::string hex; lines >> hex;) losses.push_back(std::strtod(hex.c_str(), nullptr));
  }
  return runs;
}

class PythonCompareRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
    write_file(dir_ / "ranks.py", kScript);
    fs::create_directories(dir_ / "losses");
  }
  ampscope::test::CliResult compare(const std::string& flags, const std::string& out, const std::string& args = "") {
    return ampscope::test::ampscope(fmt::format("run --compare fp32,bf16 --nproc-per-node 2 --repeats 1 --warmup 1 "
                                                "--max-steps 4 --no-gpu-trace {} --out '{}' '{}' '{}' {}",
                                                flags, out, (dir_ / "ranks.py").string(),
                                                (dir_ / "losses").string(), args));
  }
  ScratchDir dir_;
};

TEST_F(PythonCompareRanks, EachRunIsTheScriptsRanksAndEachStepTheJobs) {
  const std::string out = (dir_ / "cmp.ampscope").string();
  const auto r = compare("--profile-steps 1", out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("each stopped after 4 steps, 2 ranks each under torchrun"), std::string::npos) << r.output;

  const auto comparison = ampscope::profiler::read_comparison(out);
  ASSERT_EQ(comparison.variants.size(), 2u);
  // The job's samples: rank 0's 8 and rank 1's 12 a step.
  EXPECT_EQ(comparison.effective_batch, 20);
  // Each timed run (4 steps; the profiled ones stop after 2) is one torchrun of two ranks, and
  // its steps' losses are the ranks' mean, to the bit.
  const auto runs = runs_in(dir_ / "losses");
  EXPECT_EQ(runs.size(), 4u) << "2 timed and 2 profiled runs";
  std::set<std::string> matched;
  for (const auto& v : comparison.variants) {
    SCOPED_TRACE(v.variant);
    EXPECT_TRUE(v.error.empty()) << v.error;
    EXPECT_TRUE(v.scaler);
    ASSERT_EQ(v.repeats.size(), 1u);
    const auto& steps = v.repeats.front();
    ASSERT_EQ(steps.size(), 4u);
    std::string found;
    for (const auto& [pid, ranks] : runs) {
      if (ranks.size() != 2 || ranks.at(0).size() != 4 || ranks.at(1).size() != 4) continue;
      bool same = true;
      for (size_t i = 0; i < 4; ++i) same &= steps[i].loss == (ranks.at(0)[i] + ranks.at(1)[i]) / 2.0;
      if (same) found = pid;
    }
    EXPECT_FALSE(found.empty()) << "no run's ranks average to this precision's losses";
    matched.insert(found);
    for (const auto& s : steps) EXPECT_GT(s.step_time_ms, 0.0);
    // The op table: rank 0's profiled step, autocast's decisions in it.
    EXPECT_EQ(v.profiled_steps, 1);
    std::set<OpCategory> linear;
    for (const auto& row : v.op_stats)
      if (row.name == "aten::linear" && row.top_level) linear.insert(row.category);
    EXPECT_EQ(linear, std::set{v.variant == "fp32" ? OpCategory::kUnchanged : OpCategory::kDemoted});
  }
  EXPECT_EQ(matched.size(), 2u) << "fp32 and bf16: two different runs";
  // Every view of the file says how its runs were joined.
  ASSERT_TRUE(comparison.script && comparison.script->command);
  EXPECT_EQ(comparison.script->command->world_size, 2);
  const std::string said = ampscope::profiler::ranks_text(*comparison.script);
  EXPECT_EQ(said.rfind("each run 2 ranks under torchrun (2 per machine): a step takes the slowest rank's time", 0),
            0u)
      << said;
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", out));
  EXPECT_NE(summary.output.find("ranks: " + said), std::string::npos) << summary.output;
  const auto html = dir_ / "cmp.html";
  ASSERT_EQ(ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", out, html.string())).exit_code, 0);
  EXPECT_NE(read_file(html).find("slowest rank"), std::string::npos);
}

TEST_F(PythonCompareRanks, ARankThatFailsEndsItsPrecisionWithItsOwnErrorAndTheOthersAreCompared) {
  const std::string out = (dir_ / "fail.ampscope").string();
  const auto r = compare("--profile-steps 0", out, "fail");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("bf16: failed: rank 1: RuntimeError: rank 1 has no bf16 kernel"), std::string::npos)
      << r.output;
  const auto comparison = ampscope::profiler::read_comparison(out);
  ASSERT_EQ(comparison.variants.size(), 2u);
  EXPECT_TRUE(comparison.variants[0].error.empty()) << comparison.variants[0].error;
  EXPECT_EQ(comparison.variants[0].repeats.size(), 1u);
  EXPECT_EQ(comparison.variants[1].error, "rank 1: RuntimeError: rank 1 has no bf16 kernel");
  EXPECT_TRUE(fs::exists(out + ".bf16.log")) << "torchrun's output, kept";
}

}  // namespace
