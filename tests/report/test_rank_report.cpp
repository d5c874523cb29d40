// The ranks of a distributed run: which rank is the straggler, whether GradScaler
// agreed on every rank at every step, how much time went to collectives; the same
// figures for `ampscope summary`, the HTML report and the GUI (compare_ranks).
#include <gtest/gtest.h>

#include <cmath>

#include "profiler/store/rank_comparison.h"
#include "profiler/report/html_report.h"
#include "profiler/report/report_data.h"
#include "profiler/store/session_view.h"
#include "tests/report/report_fixture.h"
#include "tests/support/rank_sessions.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

using namespace ampscope::profiler;

TEST(RankComparison, FindsTheStragglerAndChecksTheLossScaleAgrees) {
  ScratchDir dir;
  // Given out of order: the rank comes from the file name.
  const std::vector<std::string> paths = {write_rank(dir, 1, 10, 15.0, 4, 2'000'000),
                                          write_rank(dir, 0, 10, 10.0, 4, 1'000'000)};
  std::vector<SessionView> sessions;
  for (const auto& p : paths) sessions.push_back(load_session_view(p));
  const RankComparison ranks = compare_ranks(sessions);
  ASSERT_EQ(ranks.ranks.size(), 2u);
  EXPECT_EQ(ranks.ranks[0].rank, 0);
  EXPECT_EQ(ranks.ranks[1].rank, 1);
  EXPECT_EQ(ranks.slowest, 1u);
  EXPECT_DOUBLE_EQ(ranks.ranks[1].vs_fastest, 1.5);
  EXPECT_EQ(ranks.ranks[0].skipped, 1);
  EXPECT_EQ(ranks.scale_disagreements, 0);
  EXPECT_EQ(ranks.ranks[1].collective_cpu_ns, 2'000'000);
  EXPECT_DOUBLE_EQ(ranks.ranks[1].collective_share, 2.0 / (2.0 + 7.0));

  // A rank that skipped on its own (it saw an inf the other did not) disagrees from there on,
  // and a rank that lacks steps disagrees at each of them.
  const std::string odd = write_rank(dir, 2, 8, 10.0, 6, 0);
  sessions.push_back(load_session_view(odd));
  const RankComparison three = compare_ranks(sessions);
  EXPECT_EQ(three.first_disagreement_step, 4);
  // Steps 4 and 5 (rank 2 still at 65536), 9 and 10 (rank 2 lacks them).
  EXPECT_EQ(three.scale_disagreements, 4);
}

// A rank that compiled inside its profiled steps spent seconds in torch.compile, which is no op time
// (summary keeps it out of every category): over it, a torch.compile'd FSDP job read 0.0 % in
// collectives where its all-gathers and reduce-scatters took 3 % of its ops' time.
TEST(RankComparison, TheCollectivesShareLeavesCompilingOut) {
  const auto row = [](std::string name, int64_t ns) {
    OpStats r;
    r.name = std::move(name);
    r.top_level = true;
    r.cpu_time_ns = ns;
    return r;
  };
  SessionView rank;
  rank.path = "job.rank0.ampscope";
  rank.op_stats = {row("c10d::_allgather_base_", 3'000'000), row("aten::addmm", 97'000'000),
                   row(std::string(kTorchCompileOp), 18'000'000'000)};
  const RankComparison ranks = compare_ranks({rank});
  ASSERT_EQ(ranks.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(ranks.ranks[0].collective_share, 0.03);
}

// Within 10 % of the fastest is noise, not a straggler: the report and the GUI say so.
TEST(RankComparison, RanksWithin10PercentHaveNoStraggler) {
  ScratchDir dir;
  const ReportData d = rank_report({write_rank(dir, 0, 10, 10.0, 0, 0), write_rank(dir, 1, 10, 10.9, 0, 0)});
  ASSERT_TRUE(d.ranks.has_value());
  EXPECT_FALSE(d.ranks->has_straggler());
  EXPECT_FALSE(d.ranks->is_straggler(1));
  ASSERT_FALSE(d.verdict.empty());
  EXPECT_EQ(d.verdict.front().rfind("No straggler", 0), 0u) << d.verdict.front();
}

// A torchrun job's step, as a precision comparison of it times the job: the slowest rank's time,
// all ranks' samples over it, their mean loss, the largest memory; the rest rank 0's; steps
// some rank lacks are not the job's.
TEST(RankComparison, TheJobsStepIsTheSlowestRanksTimeOverAllItsSamplesAtTheRanksMeanLoss) {
  const auto step = [](int64_t n, double ms, int64_t batch, double loss, int64_t peak, double scale) {
    StepRecord s;
    s.step = n;
    s.step_time_ms = ms;
    s.samples_per_second = static_cast<double>(batch) / (ms / 1e3);
    s.loss = loss;
    s.mem_peak_bytes = peak;
    s.loss_scale = scale;
    s.lr = 0.1;
    return s;
  };
  const std::vector<std::vector<StepRecord>> ranks = {
      {step(1, 10.0, 8, 2.0, 100, 1024), step(2, 12.0, 8, 1.5, 300, 512), step(3, 10.0, 8, 1.0, 100, 512)},
      {step(1, 15.0, 12, 3.0, 200, 1024), step(2, 11.0, 12, 2.5, 200, 512)}};  // stopped before step 3
  const std::vector<StepRecord> job = job_steps(ranks);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].step, 1);
  EXPECT_DOUBLE_EQ(job[0].step_time_ms, 15.0);
  EXPECT_DOUBLE_EQ(job[0].samples_per_second, 20.0 / 0.015);  // both ranks' 8 + 12 samples in 15 ms
  EXPECT_DOUBLE_EQ(job[0].loss, 2.5);
  EXPECT_EQ(job[0].mem_peak_bytes, 200);
  EXPECT_DOUBLE_EQ(job[1].step_time_ms, 12.0);
  EXPECT_DOUBLE_EQ(job[1].samples_per_second, 20.0 / 0.012);
  EXPECT_DOUBLE_EQ(job[1].loss, 2.0);
  EXPECT_EQ(job[1].mem_peak_bytes, 300);
  EXPECT_DOUBLE_EQ(job[1].loss_scale, 512);
  EXPECT_TRUE(std::isnan(job[1].eval_loss));
  // One rank: its own steps.
  EXPECT_DOUBLE_EQ(job_steps({ranks[0]}).at(2).step_time_ms, 10.0);
  EXPECT_TRUE(job_steps({}).empty());
}

TEST(RankComparison, TheRankIsReadFromTheFileName) {
  EXPECT_EQ(rank_from_path("/runs/a.rank3.ampscope"), 3);
  EXPECT_EQ(rank_from_path("a.rank12.ampscope"), 12);
  EXPECT_EQ(rank_from_path("/runs.rank1/a.ampscope"), std::nullopt);
  EXPECT_EQ(rank_from_path("a.rankx.ampscope"), std::nullopt);
  EXPECT_EQ(rank_from_path("a.rank.ampscope"), std::nullopt);
  // The files torchrun's ranks write for --out, named as the Python package names them.
  EXPECT_EQ(rank_session_path("/runs/a.ampscope", 3), "/runs/a.rank3.ampscope");
  EXPECT_EQ(rank_session_path("/runs.d/a.b.db", 0), "/runs.d/a.b.rank0.db");
  EXPECT_EQ(rank_session_path("/runs.d/a", 1), "/runs.d/a.rank1.ampscope");
  EXPECT_EQ(rank_from_path(rank_session_path("/runs/a.ampscope", 12)), 12);
  EXPECT_TRUE(is_collective_op("c10d::allreduce_"));
  EXPECT_FALSE(is_collective_op("aten::add"));
}

TEST(RankReport, IsOneSelfContainedPageWithTheStragglerNamed) {
  ScratchDir dir;
  const std::vector<std::string> paths = {write_rank(dir, 0, 20, 10.0, 0, 1'000'000),
                                          write_rank(dir, 1, 20, 14.0, 0, 3'000'000)};
  const ReportData d = rank_report(paths);
  ASSERT_EQ(d.kind, ReportData::Kind::kRanks);
  EXPECT_EQ(d.path, paths[0]);  // the header's meta: rank 0's
  ASSERT_FALSE(d.verdict.empty());
  EXPECT_NE(d.verdict.front().find("Rank 1 is the straggler"), std::string::npos) << d.verdict.front();
  const std::string html = render_html(d);
  expect_self_contained(html);
  EXPECT_NE(html.find("Distributed run, 2 ranks"), std::string::npos);
  EXPECT_NE(html.find("Step time per rank"), std::string::npos);
  EXPECT_NE(html.find("Loss scale per rank"), std::string::npos);
  EXPECT_NE(html.find("same on every rank"), std::string::npos);
  EXPECT_NE(html.find("run.rank1.ampscope"), std::string::npos);
  const std::string out = (dir / "ranks.html").string();
  write_html_report(d, out);
  expect_python_accepts(out);
}

}  // namespace
}  // namespace ampscope::test
