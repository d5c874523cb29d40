#include "profiler/report/report_data.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "profiler/report/verdict.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/sqlite_util.h"

// The build writing the report; kept in step with `ampscope --version` and SessionMeta's.
#ifndef AMPSCOPE_VERSION
#define AMPSCOPE_VERSION "0.1.0"
#endif

namespace ampscope::profiler {
namespace {

// Thrown out of a for_each_op callback to stop at the first row.
struct FoundOp {};

bool has_ops(const SessionReader& reader, int64_t first_step, int64_t last_step) {
  try {
    reader.for_each_op(first_step, last_step, [](const OpRecord&) { throw FoundOp{}; });
  } catch (const FoundOp&) {
    return true;
  }
  return false;
}

// Steps whose ops were recorded. The reader has no distinct-step query, so stored
// steps are probed for ops, galloping over runs of unrecorded steps: a probe of an
// empty step range is one index lookup, so a short window in a million-step run costs
// a few dozen probes, not a scan of the ops table.
int64_t count_profiled_steps(const SessionReader& reader, const std::vector<StepRecord>& steps) {
  if (auto v = reader.meta_value("profiled_steps")) {
    try {
      return std::stoll(*v);
    } catch (const std::exception&) {
      // not a number: count instead
    }
  }
  if (reader.op_count() == 0) return 0;
  int64_t count = 0;
  size_t i = 0, stride = 1;
  while (i < steps.size()) {
    const size_t j = std::min(steps.size(), i + stride);
    if (!has_ops(reader, steps[i].step, steps[j - 1].step)) {
      i = j;
      stride *= 2;
    } else if (j - i == 1) {
      ++count;
      ++i;
      stride = 1;
    } else {
      stride = 1;  // somewhere in the range: step through it one by one
    }
  }
  // Ops can be recorded for a step whose StepRecord never arrived (a run killed mid-step).
  return std::max<int64_t>(count, 1);
}

std::vector<GradientStepSummary> gradient_history(const SessionReader& reader) {
  const auto steps = reader.gradient_steps();
  std::vector<GradientStepSummary> out;
  if (steps.empty()) return out;
  const size_t n = std::min(steps.size(), kMaxGradientSteps);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // Evenly over the samples, the last one always included.
    const size_t k = n == 1 ? steps.size() - 1 : i * (steps.size() - 1) / (n - 1);
    out.push_back(summarize_gradients(reader.gradients(steps[k])));
  }
  return out;
}

RecommendationInput session_input(const ReportData& d) {
  RecommendationInput in;
  in.meta = d.meta;
  in.op_stats = d.op_stats;
  in.profiled_steps = d.profiled_steps;
  in.steps = d.steps;
  in.gradients = d.latest_gradients;
  in.kernels = d.top_kernels;
  return in;
}

bool reduced_precision(const VariantRun& run) {
  return run.precision == "fp16" || run.precision == "bf16";
}

}  // namespace

GradientStepSummary summarize_gradients(const std::vector<GradientSample>& samples) {
  GradientStepSummary s;
  if (samples.empty()) return s;
  s.step = samples.front().step;
  s.loss_scale = samples.front().loss_scale;
  for (const auto& g : samples) s.numel += g.numel;
  const FormatRangeShares fp16 = total_range_shares(samples, FloatFormat::fp16);
  s.fp16_underflow_fraction = fp16.underflow;
  s.fp16_subnormal_fraction = fp16.subnormal;
  s.fp16_overflow_fraction = fp16.overflow;
  return s;
}

void finish_report(ReportData& d) {
  if (d.ampscope_version.empty()) d.ampscope_version = AMPSCOPE_VERSION;
  if (d.kind == ReportData::Kind::kSession) {
    if (d.category_totals.empty()) d.category_totals = category_totals(d.op_stats);
    if (d.gradient_steps.empty() && !d.latest_gradients.empty())
      d.gradient_steps.push_back(summarize_gradients(d.latest_gradients));
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

ReportData load_report(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw StoreError("cannot open '" + path + "': no such file");
  if (std::filesystem::is_directory(path, ec))
    throw StoreError("cannot open '" + path + "': it is a directory, not a session file");
  if (is_comparison_file(path)) return comparison_report(read_comparison(path), path);
  ReportData d;
  d.path = path;
  const auto reader = SessionReader::open(path);
  d.kind = ReportData::Kind::kSession;
  d.meta = reader.meta();
  d.steps = reader.steps();
  d.optimizer_steps = reader.optimizer_steps();
  d.op_stats = reader.op_stats();
  d.profiled_steps = count_profiled_steps(reader, d.steps);
  d.category_totals = category_totals(d.op_stats);
  d.unattributed_gpu_ns = reader.unattributed_gpu_ns();
  d.gpu_attribution = reader.gpu_attribution();
  if (reader.kernel_count() > 0) d.top_kernels = reader.top_kernels(kReportTopKernels);
  d.latest_gradients = reader.latest_gradients();
  d.gradient_steps = gradient_history(reader);
  if (const auto steps = reader.activation_steps(); !steps.empty()) d.latest_activations = reader.activations(steps.back());
  d.first_fp16_overflow = reader.first_fp16_overflow();
  finish_report(d);
  return d;
}

}  // namespace ampscope::profiler
