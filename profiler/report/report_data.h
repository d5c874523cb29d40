#pragma once
// Everything the HTML report shows, read once from a session or a comparison file
// into plain values, so rendering and the verdict never touch the store and tests
// can build a ReportData in memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/store/rank_comparison.h"
#include "profiler/records.h"
#include "profiler/report/recommendations.h"
#include "profiler/store/session_view.h"

namespace ampscope::profiler {

struct VariantRecommendations {
  std::string variant;
  std::vector<Recommendation> recommendations;
};

// A session's report is its SessionView (the one loader of a recorded session)
// plus what the report derives from it; a comparison's leaves the view empty.
struct ReportData : SessionView {
  enum class Kind { kSession, kComparison, kRanks };
  Kind kind = Kind::kSession;
  std::string ampscope_version;  // of the build writing the report (meta has the recording build's)

  std::vector<Recommendation> recommendations;  // a session's

  // A comparison (kind == kComparison).
  std::optional<Comparison> comparison;
  std::vector<VariantSummary> variant_summaries;  // summarize(*comparison)
  std::vector<OpComparisonRow> op_rows;           // match_ops(*comparison)
  // recommend() on each variant other than fp32/tf32 that has a profiled pass.
  std::vector<VariantRecommendations> variant_recommendations;

  // The ranks of a distributed run (kind == kRanks); the view above is rank 0's
  // (header, meta), the rows hold every rank's figures.
  std::optional<RankComparison> ranks;

  std::vector<std::string> verdict;  // verdict(*this), filled by finish_report
};

// What a report shows of a session: the top 15 kernels, up to 2000 gradient steps.
inline constexpr SessionViewOptions kReportViewOptions{};

// Reads a session or a comparison file (open_recorded_file: opened once). Throws
// StoreError with a one-line message for a missing, foreign, newer or corrupt file.
ReportData load_report(const std::string& path);
// The report of a session already loaded.
ReportData session_report(SessionView session);
// The report of the ranks of one distributed run, one session file per rank.
ReportData rank_report(const std::vector<std::string>& paths);

// The report of a comparison held in memory (a finished or still running one):
// finish_report over it. load_report makes a comparison file's report with it.
ReportData comparison_report(Comparison comparison, std::string path);

// Completes a ReportData whose inputs were set in memory (a session's steps, op_stats,
// gradients...; or `comparison`): derived tables, recommendations and the verdict.
// load_report calls it; tests use it directly.
void finish_report(ReportData& data);

}  // namespace ampscope::profiler
