#include "profiler/report/report_data.h"

#include <algorithm>
#include <utility>

#include "profiler/report/html_sections.h"
#include "profiler/session_meta_keys.h"
#include "profiler/report/verdict.h"

// The build writing the report; kept in step with `ampscope --version` and SessionMeta's.
#ifndef AMPSCOPE_VERSION
#define AMPSCOPE_VERSION "0.1.0"
#endif

namespace ampscope::profiler {
namespace {

RecommendationInput session_input(const ReportData& d) {
  RecommendationInput in;
  in.meta = d.meta;
  in.op_stats = d.op_stats;
  in.profiled_steps = d.profiled_steps;
  in.steps = d.steps;
  in.gradients = d.latest_gradients;
  in.kernels = d.top_kernels;
  in.schedulers = d.schedulers;
  in.backward_inf = d.backward_inf;
  if (const auto it = d.meta_values.find(meta_key::kParameterDtypes); it != d.meta_values.end())
    in.parameter_dtypes = it->second;
  in.script = script_facts(d.meta_values);
  return in;
}

bool reduced_precision(const VariantRun& run) {
  return run.precision == "fp16" || run.precision == "bf16";
}

}  // namespace

namespace report_detail {
std::string report_version() { return AMPSCOPE_VERSION; }
}  // namespace report_detail

void finish_report(ReportData& d) {
  if (d.ampscope_version.empty()) d.ampscope_version = AMPSCOPE_VERSION;
  if (d.kind == ReportData::Kind::kSession) {
    if (d.category_totals.empty()) d.category_totals = category_totals(d.op_stats, d.compiled_compute);
    if (d.gradient_summaries.empty() && !d.latest_gradients.empty())
      d.gradient_summaries.push_back(summarize_gradients(d.latest_gradients));
    d.recommendations = recommend(session_input(d));
  } else if (d.comparison) {
    const auto& c = *d.comparison;
    d.meta = c.meta;
    d.variant_summaries = summarize(c);
    d.op_rows = match_ops(c);
    d.variant_recommendations.clear();
    for (const auto& run : c.variants) {
      if (!reduced_precision(run) || run.profiled_steps <= 0) continue;
      RecommendationInput in;
      in.meta = c.meta;
      in.meta.precision = run.precision;
      in.meta.scaler_enabled = run.scaler;
      in.op_stats = run.op_stats;
      in.profiled_steps = run.profiled_steps;
      if (!run.repeats.empty()) in.steps = run.repeats.front();
      d.variant_recommendations.push_back({run.variant, recommend(in)});
    }
  }
  d.verdict = verdict(d);
}

ReportData comparison_report(Comparison comparison, std::string path) {
  ReportData d;
  d.kind = ReportData::Kind::kComparison;
  d.path = std::move(path);
  d.comparison = std::move(comparison);
  finish_report(d);
  return d;
}

ReportData session_report(SessionView session) {
  ReportData d;
  static_cast<SessionView&>(d) = std::move(session);
  d.kind = ReportData::Kind::kSession;
  finish_report(d);
  return d;
}

ReportData rank_report(const std::vector<std::string>& paths) {
  std::vector<SessionView> sessions = load_rank_sessions(paths);
  ReportData d;
  d.kind = ReportData::Kind::kRanks;
  d.ranks = compare_ranks(sessions);
  if (!sessions.empty()) {
    // The header's meta and the footer's file: the lowest rank's.
    const auto lowest = std::find_if(sessions.begin(), sessions.end(),
                                     [&](const SessionView& s) { return s.path == d.ranks->ranks.front().path; });
    static_cast<SessionView&>(d) = std::move(*lowest);
  }
  finish_report(d);
  return d;
}

ReportData load_report(const std::string& path) {
  RecordedFile file = open_recorded_file(path, kReportViewOptions);
  if (file.comparison) return comparison_report(std::move(*file.comparison), path);
  return session_report(std::move(*file.session));
}

}  // namespace ampscope::profiler
