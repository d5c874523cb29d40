#pragma once
// What the report concludes of a session, wherever the session is shown: its verdict (a few
// sentences) and its recommendations. The HTML report, `ampscope summary`, the JSON summary and
// the GUI's Findings pane all take them from session_report(), so they never disagree.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/report/recommendations.h"
#include "profiler/store/session_view.h"

namespace ampscope::profiler {

struct SessionFindings {
  std::vector<std::string> verdict;
  std::vector<Recommendation> recommendations;  // warnings first, then by impact
  // Why there are none when the rules had nothing to read (a comparison without a profiled
  // pass); empty: they read the run and found nothing to change.
  std::string none_because;
};

// The report's verdict and recommendations of a loaded session (of a copy of it).
SessionFindings session_findings(const SessionView& session);

struct ReportData;
// A precision comparison's report (comparison_report()): its verdict, and each reduced
// precision's recommendations (of its profiled pass), their titles led by the precision
// ("bf16: ..."), in the comparison's order, as its HTML report lists them.
SessionFindings comparison_findings(const ReportData& comparison);

// {"verdict": [sentences], "recommendations": [{id, severity, title, detail, evidence}]}.
nlohmann::ordered_json findings_json(const SessionFindings& findings);

// For a terminal: the verdict, then each recommendation with its severity, title, what to do
// and its evidence, wrapped at `width` columns.
std::string findings_text(const SessionFindings& findings, size_t width = 100);
// Its second part alone, "What to change (N)" and the recommendations (or why there are none):
// where the verdict was printed before (a comparison's table).
std::string recommendations_text(const SessionFindings& findings, size_t width = 100);

}  // namespace ampscope::profiler
