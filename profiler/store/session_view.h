#pragma once
// A recorded session, read once into plain values: the one loader behind every
// view of a file (heaptrack's AccumulatedTraceData). `ampscope summary`, the JSON
// summary, the HTML report and the GUI all take a SessionView, so they show the
// same numbers from the same queries. Raw rows (every op, every kernel) stay in
// the store: the Chrome trace, CSV and TensorBoard exports stream them from a
// SessionReader instead.
//
// open_recorded_file opens a file the user hands over once and says what it
// holds: a session, or a comparison (same container, other tables).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/loss_scale_window.h"
#include "profiler/analysis/backward_origin.h"
#include "profiler/analysis/comparison.h"
#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/profile_snapshot.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/analysis/scheduler_drift.h"
#include "profiler/analysis/memory_peak.h"
#include "profiler/analysis/step_timing.h"
#include "profiler/own_kernel_costs.h"
#include "profiler/range_sample_phases.h"
#include "profiler/records.h"
#include "profiler/recording_health.h"

namespace ampscope::profiler {

class SessionReader;

// The fp16 range fractions of one gradient sample step, weighted by element count.
struct GradientStepSummary {
  int64_t step = 0;
  double loss_scale = 1.0;
  int64_t numel = 0;
  double fp16_underflow_fraction = 0.0;  // of g * loss_scale: flushes to zero in fp16
  double fp16_subnormal_fraction = 0.0;
  double fp16_overflow_fraction = 0.0;
  // Of all elements of g, before any cast: exactly zero (nothing a cast can lose; all of
  // it when fp16's backward flushed everything before the unscale), and inf/NaN.
  double zero_fraction = 0.0;
  double nonfinite_fraction = 0.0;
  // Every element zero: the step had nothing to apply.
  bool all_zero() const { return numel > 0 && zero_fraction >= 1.0; }
  // The fp16 loss scales that would carry these gradients (read low in an fp16 run: its
  // backward flushed the small ones already); nullopt when none is nonzero.
  std::optional<LossScaleWindow> fp16_window;
};

// Fraction weighted by numel over the parameters of one sampled step.
GradientStepSummary summarize_gradients(const std::vector<GradientSample>& samples);

// The gradient norm at the sampled steps, for a session whose steps have none of their own
// (a script that does not clip): "0.412 at step 10 to 0.198 at step 120, largest 0.52 at step
// 30 (12 range-sampled steps)", "0.412 at step 10 (1 range-sampled step)", with "inf/NaN at N
// of them" where gradients overflowed. "" without samples.
std::string sampled_gradient_norm_text(const std::vector<SampledGradientNorm>& norms);

// torch.compile in a Python training loop: how many graphs ampscope read, and where
// dynamo broke a graph or compiled a function again, with its reasons.
struct GraphBreak {
  std::string where;   // file:line of the user code dynamo stopped at
  std::string reason;  // dynamo's, first line
  int64_t count = 0;   // times dynamo met it (again at each recompilation)
};
struct Recompilation {
  std::string frame;   // the function compiled again
  std::string reason;  // the guard that failed, as dynamo words it
};
// A module compiled in place (`module.compile()`) that ran without compiled code: dynamo
// compiles from the first frame outside PyTorch the module's call reaches, and the code of
// nn.Linear, nn.TransformerEncoderLayer and the like is all PyTorch's.
struct EagerInPlaceModule {
  std::string module;      // its path
  std::string class_name;  // "TransformerEncoderLayer"
};
struct CompileEvents {
  int64_t graphs = 0;
  std::vector<GraphBreak> graph_breaks;
  std::vector<Recompilation> recompilations;
  std::vector<EagerInPlaceModule> ran_eagerly;
  // Inductor's kernels with the graph ops each fused and their time (compiled_kernels table).
  std::vector<CompiledKernelRow> kernels;
  bool any() const {
    return graphs > 0 || !graph_breaks.empty() || !recompilations.empty() || !kernels.empty() || !ran_eagerly.empty();
  }
};
// "12 AOTAutograd graphs read (forward and backward)"; "1 AOTAutograd graph read (...)";
// "no AOTAutograd graph read" where torch.compile compiled none (every module compiled in
// place ran eagerly, or a backend without AOTAutograd such as "eager").
std::string graphs_read_text(int64_t graphs);
// "2 modules compiled in place ran eagerly (torch.compile compiled nothing in them):
// TransformerEncoderLayer ×2 (layers.0, layers.1). ..."; "" where none.
std::string ran_eagerly_text(const std::vector<EagerInPlaceModule>& modules);
// From the meta keys _compiled.py writes; absent or unreadable ones read as none.
CompileEvents compile_events_from_meta(const std::map<std::string, std::string>& meta);

struct SessionViewOptions {
  size_t top_kernels = 15;             // KernelSummary rows, by GPU time
  size_t gradient_summaries = 2000;    // GradientStepSummary rows at most, evenly over the samples
  size_t gradient_history_steps = 0;   // every sample of the last N sampled steps (the GUI's heatmap)
};

// The profile part (op table, kernels, ranges, readiness, backward checks) is the
// live views' ProfileSnapshot itself; the rest is what only a file holds.
struct SessionView : ProfileSnapshot {
  std::string path;
  int format_version = 0;
  SessionMeta meta;
  std::map<std::string, std::string> meta_values;  // every key, also those SessionMeta has no field for
  RecordingHealth health;                          // what the recording lost, from the meta

  std::vector<StepRecord> steps;  // by step
  // Step times of the steps the profiler recorded (ops, range statistics) apart from the others.
  StepTiming step_timing;
  // The steps' memory high-water mark, and the part the range-sampled steps added.
  MemoryPeak memory_peak;
  // GradScaler's decision per optimizer, for steps of several optimizers (multi-loss, Python loops).
  std::vector<OptimizerStepRecord> optimizer_steps;

  // The op table (ProfileSnapshot::op_stats). A run killed before its first save
  // has none stored: then it is rebuilt from the recorded ops and kernels (without
  // Tensor Core notes) and op_stats_rebuilt says so.
  bool op_stats_rebuilt = false;
  std::vector<CategoryTotals> category_totals;
  int64_t op_count = 0;
  int64_t kernel_count = 0;

  std::vector<GradientStepSummary> gradient_summaries;  // per sampled step (see the options)
  // Every sampled step's gradient norm (total_gradient_norm), whatever the options: a script
  // that does not clip has no norm per step, and these are the ones it has.
  std::vector<SampledGradientNorm> sampled_gradient_norms;
  size_t gradient_sampled_steps = 0;

  size_t activation_sampled_steps = 0;  // steps whose module outputs were sampled

  // LR schedulers of a Python loop (lr_scheduler.step() calls), each against the
  // optimizer steps GradScaler skipped; empty when the script stepped none.
  std::vector<SchedulerSummary> schedulers;

  CompileEvents compile;  // torch.compile'd code of a Python loop; op_stats rows with `compiled`
  // (range_sampling, which steps took range samples, is ProfileSnapshot's: the live views
  // show it too; from the meta, empty in sessions before 2026-11-26.)
  // Where the samples' time went on the training thread, by pass (range_sample_phases.h);
  // none in sessions before 2026-11-27 or without a sample.
  std::optional<RangeSamplePhases> range_sample_phases;
  std::vector<OwnKernelCost> own_kernels;  // the profiler's own costliest kernels (none in older sessions)

  bool gpu_traced() const { return meta.gpu_tracing == "cupti"; }
  // Anything beyond the training curve: ops, kernels or gradient samples.
  bool has_profile() const { return op_count > 0 || kernel_count > 0 || gradient_sampled_steps > 0; }
};

// Throws StoreError with a one-line message for a missing, foreign, newer or
// corrupt file, and for a comparison (open_recorded_file takes either).
SessionView load_session_view(const std::string& path, const SessionViewOptions& options = {});
SessionView load_session_view(const SessionReader& reader, const SessionViewOptions& options = {});

struct RecordedFile {
  std::optional<SessionView> session;  // exactly one of the two is set
  std::optional<Comparison> comparison;
};
RecordedFile open_recorded_file(const std::string& path, const SessionViewOptions& options = {});

}  // namespace ampscope::profiler
