#pragma once
// Everything the HTML report shows, read once from a session or a comparison file
// into plain values, so rendering and the verdict never touch the store and tests
// can build a ReportData in memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/records.h"
#include "profiler/report/recommendations.h"

namespace ampscope::profiler {

// The fp16 range fractions of one gradient sample step, weighted by element count.
struct GradientStepSummary {
  int64_t step = 0;
  double loss_scale = 1.0;
  int64_t numel = 0;
  double fp16_underflow_fraction = 0.0;  // of g * loss_scale: flushes to zero in fp16
  double fp16_subnormal_fraction = 0.0;
  double fp16_overflow_fraction = 0.0;
};

struct VariantRecommendations {
  std::string variant;
  std::vector<Recommendation> recommendations;
};

struct ReportData {
  enum class Kind { kSession, kComparison };
  Kind kind = Kind::kSession;
  std::string path;              // the file the report was made from, as given
  std::string ampscope_version;  // of the build writing the report (meta has the recording build's)
  SessionMeta meta;

  // A session (kind == kSession); a comparison leaves these empty.
  std::vector<StepRecord> steps;
  // GradScaler's decision per optimizer, for steps of several optimizers (multi-loss, Python loops).
  std::vector<OptimizerStepRecord> optimizer_steps;
  std::vector<OpStats> op_stats;
  int64_t profiled_steps = 0;  // steps whose ops were recorded: op_stats times / this = per step
  std::vector<CategoryTotals> category_totals;
  int64_t unattributed_gpu_ns = 0;
  GpuAttribution gpu_attribution;
  std::vector<KernelSummary> top_kernels;        // by GPU time; empty when no GPU was traced
  std::vector<GradientSample> latest_gradients;  // of the last sampled step, by parameter
  // One entry per sampled step (at most kMaxGradientSteps, evenly chosen when there are more).
  std::vector<GradientStepSummary> gradient_steps;
  // Module outputs of the last sampled step (completion order), and the first
  // module whose output overflowed fp16 at the earliest sampled step with one.
  std::vector<ActivationSample> latest_activations;
  std::optional<ActivationSample> first_fp16_overflow;
  std::vector<Recommendation> recommendations;

  // A comparison (kind == kComparison).
  std::optional<Comparison> comparison;
  std::vector<VariantSummary> variant_summaries;  // summarize(*comparison)
  std::vector<OpComparisonRow> op_rows;           // match_ops(*comparison)
  // recommend() on each variant other than fp32/tf32 that has a profiled pass.
  std::vector<VariantRecommendations> variant_recommendations;

  std::vector<std::string> verdict;  // verdict(*this), filled by load_report

  bool gpu_traced() const { return meta.gpu_tracing == "cupti"; }
};

inline constexpr size_t kMaxGradientSteps = 2000;
inline constexpr size_t kReportTopKernels = 15;

// Reads a session or a comparison file. Throws StoreError (or std::runtime_error)
// with a one-line message for a missing, foreign, newer or corrupt file.
ReportData load_report(const std::string& path);

// The report of a comparison held in memory (a finished or still running one):
// finish_report over it. load_report makes a comparison file's report with it.
ReportData comparison_report(Comparison comparison, std::string path);

// Completes a ReportData whose inputs were set in memory (a session's steps, op_stats,
// gradients...; or `comparison`): derived tables, recommendations and the verdict.
// load_report calls it; tests use it directly.
void finish_report(ReportData& data);

// Fraction weighted by numel over the parameters of one sampled step.
GradientStepSummary summarize_gradients(const std::vector<GradientSample>& samples);

}  // namespace ampscope::profiler
