// Time by phase (profiler::phase_totals): the top-level rows' time per phase, counted as
// category_totals counts it, so `summary`'s phases and categories add up to one whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/records.h"

namespace {

using namespace ampscope::profiler;

OpStats row(const std::string& name, Phase phase, int64_t calls, int64_t cpu_ns, bool top_level = true) {
  OpStats s;
  s.name = name;
  s.phase = phase;
  s.top_level = top_level;
  s.calls = calls;
  s.cpu_time_ns = cpu_ns;
  return s;
}

// A validation pass, a compiled region holding a graph break's compile, and nested rows
// (counted in their top-level op already).
TEST(PhaseTotals, SumTopLevelTimePerPhaseWithCompilingInNone) {
  const std::vector<OpStats> rows{
      row("Torch-Compiled Region: 0/0", Phase::kForward, 4, 10'000),
      row(std::string(kTorchCompileOp), Phase::kForward, 1, 6'000, /*top_level=*/false),
      row(std::string(kTorchCompileOp), Phase::kForward, 1, 50'000),
      row("aten::addmm", Phase::kForward, 4, 9'000, /*top_level=*/false),
      row("aten::linear", Phase::kForwardNoGrad, 2, 1'500),
      row("aten::mm", Phase::kBackward, 8, 7'000),
      row("aten::_foreach_add_", Phase::kOptimizer, 4, 2'000),
      row("aten::randn", Phase::kOther, 4, 500)};
  const auto phases = phase_totals(rows);
  ASSERT_EQ(phases.size(), 5u);
  EXPECT_EQ(phases[0].phase, Phase::kForward);
  EXPECT_EQ(phases[0].cpu_time_ns, 10'000 - 6'000) << "the region less the compile inside it";
  EXPECT_EQ(phases[0].calls, 4) << "the region's; no compile, no nested op";
  EXPECT_EQ(phases[1].phase, Phase::kForwardNoGrad);
  EXPECT_EQ(phases[1].cpu_time_ns, 1'500);
  EXPECT_EQ(phases[2].cpu_time_ns, 7'000);
  EXPECT_EQ(phases[3].cpu_time_ns, 2'000);
  EXPECT_EQ(phases[4].phase, Phase::kOther);
  int64_t by_phase = 0, by_category = 0;
  for (const auto& p : phases) by_phase += p.cpu_time_ns;
  for (const auto& c : category_totals(rows)) by_category += c.cpu_time_ns;
  EXPECT_EQ(by_phase, by_category) << "one whole, cut two ways";
}

// A compiled optimizer step called at the top level (torch.compile'd `def opt_step():
// opt.step()`): dynamo's region opens outside any phase, the optimizer's phase opens inside
// it, and the optimizer's graph is compiled there. Its compile is no time of the "other"
// phase: on a CPU run of that loop it was 13.5 s of the region's 13.9 s, and "other" read
// 99.9 % of the run.
TEST(PhaseTotals, ACompileWhosePhaseOpenedInsideItsRegionLeavesTheRegion) {
  const std::vector<OpStats> rows{
      row("Torch-Compiled Region: 0/0", Phase::kOther, 5, 13'900),
      row(std::string(kTorchCompileOp), Phase::kOptimizer, 1, 13'500, /*top_level=*/false),
      row("Torch-Compiled Region: 4/0", Phase::kOptimizer, 5, 300, /*top_level=*/false),
      row("aten::mm", Phase::kBackward, 10, 4'000),
      row("aten::randn", Phase::kOther, 5, 100)};
  const auto phases = phase_totals(rows);
  ASSERT_EQ(phases.size(), 2u) << "the optimizer's rows are all inside the region";
  EXPECT_EQ(phases[0].phase, Phase::kBackward);
  EXPECT_EQ(phases[0].cpu_time_ns, 4'000) << "no region there: nothing taken";
  EXPECT_EQ(phases[1].phase, Phase::kOther);
  EXPECT_EQ(phases[1].cpu_time_ns, 13'900 - 13'500 + 100);
  int64_t by_phase = 0, by_category = 0;
  for (const auto& p : phases) by_phase += p.cpu_time_ns;
  for (const auto& c : category_totals(rows)) by_category += c.cpu_time_ns;
  EXPECT_EQ(by_phase, by_category) << "one whole, cut two ways";
}

}  // namespace
