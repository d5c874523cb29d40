#include "profiler/report/recommendations.h"

#include <algorithm>

#include "profiler/report/recommendation_rules.h"

namespace ampscope::profiler {

std::vector<Recommendation> recommend(const RecommendationInput& input) {
  std::vector<report_rules::Finding> findings;
  report_rules::add_op_table_findings(input, findings);
  report_rules::add_training_findings(input, findings);
  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    if (a.recommendation.severity != b.recommendation.severity) {
      return a.recommendation.severity == Severity::kWarning;
    }
    return a.impact > b.impact;
  });
  std::vector<Recommendation> out;
  out.reserve(findings.size());
  for (auto& f : findings) out.push_back(std::move(f.recommendation));
  return out;
}

std::string_view to_string(Severity s) { return s == Severity::kWarning ? "warning" : "info"; }

}  // namespace ampscope::profiler
