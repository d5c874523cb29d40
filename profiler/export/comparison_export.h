#pragma once
// A precision comparison (`ampscope compare`, `ampscope run --compare`) for scripts, CI and
// spreadsheets: a JSON summary (what was compared, each precision's step time, speedup against
// fp32, memory, loss and skipped steps, each matched op's time per precision) and CSV tables
// (variants, ops, steps). The numbers are summarize()'s and match_ops()'s, the ones `summary`,
// the HTML report and the GUI's comparison page show. Fields: docs/session-format.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"

namespace ampscope::profiler {

// `summaries` and `ops`: summarize(comparison) and match_ops(comparison), made by the caller
// (comparison_report() has them), not made again here.
nlohmann::ordered_json comparison_summary(const Comparison& comparison, const std::vector<VariantSummary>& summaries,
                                          const std::vector<OpComparisonRow>& ops);

// BASE.variants.csv (a row per precision), BASE.ops.csv (a row per matched op and precision,
// long form: a pivot table's input) and BASE.steps.csv (every step of every repeat, warm-up
// marked). Throws StoreError when a file cannot be written.
void export_comparison_csv(const Comparison& comparison, const std::string& base);

}  // namespace ampscope::profiler
