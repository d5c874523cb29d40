// `ampscope run` on examples/ that shard the model with FSDP2 (fully_shard), two ranks on gloo:
// each rank's gradients are its shards, its precision FSDP's policy, and its loss scaler may be
// FSDP's ShardedGradScaler. Each check is a fact PyTorch decides (the whole gradient
// DTensor.full_tensor() gathers, GradScaler's rule and the scaler's own printed scale) against
// what the ranks' sessions recorded.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "profiler/store/session_reader.h"
#include "tests/cli/cli_runner.h"
#include "tests/support/gradscaler_rule.h"
#include "tests/support/test_support.h"

namespace {

using ampscope::profiler::OpCategory;
using ampscope::profiler::OpStats;
using ampscope::profiler::Phase;
using ampscope::profiler::SessionReader;
using ampscope::test::ScratchDir;

class PythonExamples : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ampscope::test::python_with_torch()) GTEST_SKIP() << "no Python with torch (AMPSCOPE_PYTHON)";
  }
  ScratchDir dir_;
};

// A wrapper that runs examples/<example>.py with `arguments` and prints, on rank 0, each whole
// gradient (DTensor.full_tensor(), a collective) as the optimizer is about to step on it:
// "whole <optimizer step> <parameter> <elements> <largest |g|>". Under a GradScaler the
// optimizer steps only where no rank found inf/NaN, on the unscaled gradients.
std::filesystem::path whole_gradient_printer(const ScratchDir& dir, const std::string& example,
                                             const std::string& arguments) {
  const auto peer = dir / "peer.py";
  ampscope::test::write_file(peer.string(), fmt::format(R"(import runpy, sys, torch
from torch.optim.optimizer import register_optimizer_step_pre_hook
calls = [0]
def whole_gradients(optimizer, args, kwargs):
    calls[0] += 1
    names = {{id(p): name for name, p in sys.modules["__main__"].model.named_parameters()}}
    for p in (p for group in optimizer.param_groups for p in group["params"]):
        whole = p.grad.full_tensor()  # a collective: every rank gathers
        if torch.distributed.get_rank() == 0:
            print(f"whole {{calls[0]}} {{names[id(p)]}} {{whole.numel()}} {{whole.abs().max().item()!r}}")
register_optimizer_step_pre_hook(whole_gradients)
sys.argv = ["{}.py"] + "{}".split()
runpy.run_path("{}/{}.py", run_name="__main__")
)",
                                                        example, arguments, AMPSCOPE_EXAMPLES_DIR, example));
  return peer;
}

// The whole gradients whole_gradient_printer printed, against the two ranks' samples: at each
// sampled step (every 2nd: --grad-every 2) the ranks' shards of a parameter together hold the
// whole gradient's elements and its largest magnitude. `step_of` maps the printer's n-th
// optimizer step to the session's step (-1: none). Returns how many (step, parameter) it compared.
int expect_shards_make_the_whole(const std::string& output, const std::filesystem::path (&ranks)[2],
                                 const std::function<int64_t(int64_t)>& step_of) {
  const std::regex whole(R"(whole (\d+) (\S+) (\d+) (\S+))");
  int compared = 0;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), whole); it != std::sregex_iterator(); ++it) {
    const int64_t step = step_of(std::stoll((*it)[1]));
    EXPECT_GT(step, 0) << "optimizer step " << (*it)[1] << " has no step in the session";
    if (step % 2 != 0) continue;
    const std::string parameter = (*it)[2];
    int64_t elements = 0, ranks_with_it = 0;
    double max_abs = 0;
    for (const auto& path : ranks)
      for (const auto& sample : SessionReader::open(path.string()).gradients(step))
        if (sample.parameter == parameter) {
          ++ranks_with_it;
          elements += sample.numel;
          max_abs = std::max(max_abs, sample.max_abs);
        }
    EXPECT_EQ(ranks_with_it, 2) << "step " << step << " " << parameter;
    EXPECT_EQ(elements, std::stoll((*it)[3])) << "step " << step << " " << parameter;
    EXPECT_DOUBLE_EQ(max_abs, std::stod((*it)[4])) << "step " << step << " " << parameter;
    ++compared;
  }
  return compared;
}

// FSDP2 with a bf16 MixedPrecisionPolicy, two ranks: the compute is bf16 with no autocast region,
// and the parameters are DTensors, which hold no data of their own (their sample failed, "data
// is not allocated yet"). Each rank's gradient samples are its shards: together they are the
// whole gradient DTensor.full_tensor() gathers, which a hook of the script's prints.
TEST_F(PythonExamples, Fsdp2MixedPrecisionIsBf16ComputeAndItsRanksSampleTheirShardsOfEachGradient) {
  const auto peer = whole_gradient_printer(dir_, "fsdp2_bf16", "--steps 4");
  const auto out = dir_ / "fsdp.ampscope";
  // Every 2nd step on both ranks: with the sample budget on, a rank slowed by a busy machine
  // spaces its samples out on its own.
  const auto run = ampscope::test::ampscope(fmt::format(
      "run --nproc-per-node 2 --grad-every 2 --sample-budget 0 --out '{}' '{}'", out.string(), peer.string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::filesystem::path ranks[] = {dir_ / "fsdp.rank0.ampscope",
                                         dir_ / "fsdp.rank1.ampscope"};
  for (const auto& path : ranks) {
    const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", path.string()));
    EXPECT_NE(
        summary.output.find(
            "precision     bf16 compute on fp32 parameters: FSDP's mixed precision (param_dtype "
            "bf16), no autocast\n"),
        std::string::npos)
        << summary.output;
    EXPECT_NE(summary.output.find(
                  "sharding      FSDP (fully_shard) on 3 modules: param_dtype bf16, reduce_dtype "
                  "fp32; the range samples read this rank's shard of each gradient\n"),
              std::string::npos)
        << summary.output;
    EXPECT_EQ(summary.output.find("lost "), std::string::npos) << "no sample failed:\n"
                                                               << summary.output;
    // FSDP's casts are its policy's, not the script's: the parameters cast to bf16 as they are
    // gathered (forward, and again for the backward) and the inputs cast in the forward. The
    // script's own casts are its `.float()` of the [16, 10] output and that cast's gradient.
    const auto session = SessionReader::open(path.string());
    std::set<Phase> fsdp_cast_phases;
    for (const OpStats& r : session.op_stats()) {
      if (!r.top_level) continue;
      if (r.category == OpCategory::kShardingCast) fsdp_cast_phases.insert(r.phase);
      if (r.category == OpCategory::kExplicitCast) {
        EXPECT_EQ(r.input_shapes.front(), (std::vector<int64_t>{16, 10})) << r.name << " in " << r.module;
      }
    }
    EXPECT_EQ(fsdp_cast_phases, (std::set<Phase>{Phase::kForward, Phase::kBackward})) << path;
    // Precision readiness found each layer's weight gradient: the optimizer's shard, by name.
    std::set<std::string> with_weight_gradient;
    for (const auto& layer : session.readiness().layers())
      for (const auto& t : layer.tensors)
        if (t.role == ampscope::profiler::TensorRole::weight_gradient)
          with_weight_gradient.insert(layer.layer);
    EXPECT_EQ(with_weight_gradient,
              (std::set<std::string>{"0", "1.up", "1.down", "2.up", "2.down", "3"}))
        << path;
  }
  // The report's verdict says it too.
  const auto html = dir_ / "rank0.html";
  const auto report =
      ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", ranks[0].string(), html.string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(html);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(text.find("bf16 run (FSDP&#39;s mixed precision: fp32 parameters, bf16 compute; no autocast)"),
            std::string::npos);
  EXPECT_NE(text.find("Autocast changed no op&#39;s precision: FSDP casts the parameters to bf16"), std::string::npos);
  // The gradients FSDP reduce-scattered, by step and parameter, as the ranks' samples hold them.
  const int compared = expect_shards_make_the_whole(run.output, ranks, [](int64_t call) { return call; });
  EXPECT_EQ(compared, 2 * 16) << "16 parameters at steps 2 and 4:\n" << run.output;
}

// FSDP2 with an fp16 policy and FSDP's ShardedGradScaler, which defines its own scale(), unscale_()
// and update() (they all-reduce the inf check): its loss scale, skipped steps and unscaled
// gradient samples were lost, the capture wrapping GradScaler's alone. A high initial scale
// makes the first steps overflow; the scale then grows every 3rd clean step and overflows again.
TEST_F(PythonExamples, Fsdp2Fp16UnderShardedGradScalerRecordsItsScaleItsSkippedStepsAndUnscaledShards) {
  const auto peer = whole_gradient_printer(dir_, "fsdp2_fp16", "--steps 12 --init-scale 1048576 --growth-interval 3");
  const auto out = dir_ / "fsdp16.ampscope";
  const auto run = ampscope::test::ampscope(fmt::format(
      "run --nproc-per-node 2 --grad-every 2 --sample-budget 0 --out '{}' '{}'", out.string(), peer.string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::filesystem::path ranks[] = {dir_ / "fsdp16.rank0.ampscope", dir_ / "fsdp16.rank1.ampscope"};
  std::vector<std::vector<int64_t>> skipped_by_rank;
  for (int rank = 0; rank < 2; ++rank) {
    const auto session = SessionReader::open(ranks[rank].string());
    EXPECT_EQ(session.meta_value("scaler_class").value_or(""),
              "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler");
    const auto steps = session.steps();
    ASSERT_EQ(steps.size(), 12u) << ranks[rank];
    int backoffs = 0, growths = 0;
    ampscope::test::expect_gradscaler_rule(steps, session.optimizer_steps(), 3, &backoffs, &growths);
    EXPECT_GT(backoffs, 0);
    EXPECT_GT(growths, 0);
    // The scale this rank's scaler printed after its last update().
    std::smatch m;
    const std::regex final_scale(fmt::format(R"(rank {}: final loss \S+, scale (\S+))", rank));
    ASSERT_TRUE(std::regex_search(run.output, m, final_scale))
        << run.output;
    EXPECT_EQ(session.optimizer_steps().back().loss_scale_after, std::stod(m[1])) << ranks[rank];
    std::vector<int64_t> skipped;
    for (const auto& s : steps)
      if (s.skipped) skipped.push_back(s.step);
    skipped_by_rank.push_back(skipped);
    // Every 2nd step sampled, each sample under its step's scale.
    EXPECT_EQ(session.gradient_steps(), (std::vector<int64_t>{2, 4, 6, 8, 10, 12})) << ranks[rank];
    for (const auto& s : steps)
      for (const auto& g : session.gradients(s.step)) EXPECT_EQ(g.loss_scale, s.loss_scale) << "step " << s.step;

    const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", ranks[rank].string()));
    EXPECT_NE(summary.output.find("precision     fp16 compute on fp32 parameters: FSDP's mixed precision "
                                  "(param_dtype fp16), no autocast\n"),
              std::string::npos)
        << summary.output;
    EXPECT_NE(summary.output.find("loss scaler   torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler\n"),
              std::string::npos)
        << summary.output;
  }
  // ShardedGradScaler all-reduces the check: both ranks skipped the same steps.
  EXPECT_EQ(skipped_by_rank[0], skipped_by_rank[1]);
  const auto both = ampscope::test::ampscope(fmt::format("summary '{}' '{}'", ranks[0].string(), ranks[1].string()));
  EXPECT_NE(both.output.find("loss scale: the same on every rank at every step"), std::string::npos) << both.output;

  // The optimizer steps on the unscaled gradients (the hook runs only on steps not skipped, the
  // n-th optimizer step being the n-th step not skipped): the ranks' samples of those are their
  // shards of them, the scale divided out.
  std::vector<int64_t> stepped;
  for (const auto& s : SessionReader::open(ranks[0].string()).steps())
    if (!s.skipped) stepped.push_back(s.step);
  const int compared = expect_shards_make_the_whole(run.output, ranks, [&](int64_t call) {
    return call <= static_cast<int64_t>(stepped.size()) ? stepped[static_cast<size_t>(call - 1)] : -1;
  });
  EXPECT_GE(compared, 2 * 16) << "16 parameters at 2 sampled steps or more:\n" << run.output;
}

// The same loop under torch.amp.GradScaler, which checks each rank's shard alone: the report
// warns, naming the scaler the script used.
TEST_F(PythonExamples, Fsdp2Fp16UnderAPlainGradScalerIsWarnedOfInTheReport) {
  const auto out = dir_ / "plain.ampscope";
  const auto run = ampscope::test::ampscope(
      fmt::format("run --nproc-per-node 2 --out '{}' '{}/fsdp2_fp16.py' --steps 3 --scaler plain", out.string(),
                  AMPSCOPE_EXAMPLES_DIR));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto rank0 = dir_ / "plain.rank0.ampscope";
  EXPECT_EQ(SessionReader::open(rank0.string()).meta_value("scaler_class").value_or(""), "torch.amp.GradScaler");
  const auto html = dir_ / "plain.html";
  const auto report = ampscope::test::ampscope(fmt::format("report '{}' -o '{}'", rank0.string(), html.string()));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::ifstream in(html);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  EXPECT_NE(text.find("FSDP shards the gradients, but torch.amp.GradScaler checks each rank&#39;s shard alone"),
            std::string::npos);
  // `summary` ends with the same findings, and the JSON summary holds them.
  const auto summary = ampscope::test::ampscope(fmt::format("summary '{}'", rank0.string()));
  EXPECT_NE(summary.output.find("  warning  FSDP shards the gradients, but torch.amp.GradScaler checks each rank's "
                                "shard alone\n"),
            std::string::npos)
      << summary.output;
  const auto json = dir_ / "plain.json";
  const auto exported =
      ampscope::test::ampscope(fmt::format("export --format json '{}' -o '{}'", rank0.string(), json.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  std::ifstream json_in(json);
  const auto summary_json = nlohmann::json::parse(json_in);
  std::set<std::string> ids;
  for (const auto& r : summary_json.at("findings").at("recommendations")) ids.insert(r.at("id").get<std::string>());
  EXPECT_TRUE(ids.count("sharded_gradients_unsynced_scaler")) << summary_json.at("findings").dump(2);
}

}  // namespace
