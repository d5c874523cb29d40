#pragma once
// A profile: the op table, kernels, gradient and activation ranges, readiness and
// backward checks of a run so far. One carrier for live and saved data (Tracy's
// Worker, heaptrack's AccumulatedTraceData): the live profiler publishes it as an
// immutable snapshot, replaced as a whole (built off the training thread's hot
// path, swapped as a shared_ptr; readers keep theirs as long as they like), and
// the store's SessionView *is* one (it derives from it), so a file opens into the
// same value the live views take, without repacking: a new profile field is one
// field here, filled by the profiler and by the loader.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/backward_origin.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/analysis/warmup_step.h"
#include "profiler/records.h"

namespace ampscope::profiler {

struct ProfileSnapshot {
  int64_t step = 0;                                 // the last step included
  std::vector<OpStats> op_stats;                    // the whole op table so far
  // torch.compile'd graphs' kernels by what they compute (category_totals() moves their
  // time out of the regions' rows). A saved session's, from its compiled kernel rows;
  // empty live: only Python loops compile, and the GUI opens their sessions as files.
  std::vector<CompiledComputeTime> compiled_compute;
  std::vector<KernelSummary> top_kernels;           // by total GPU time, descending (a saved file: the top N)
  // GPU time no op can be named for, against all traced GPU time.
  GpuAttribution gpu_attribution;
  // Completed steps whose ops op_stats covers (per-step time = table time / this), and the
  // warm-up step it leaves out (warmup_step.h; nullopt where it holds every recorded step).
  int64_t profiled_steps = 0;
  std::optional<WarmupLeftOut> warmup_left_out;
  int64_t unattributed_kernels = 0;
  std::vector<GradientSample> latest_gradients;     // the latest sample, one per parameter
  std::vector<GradientSample> gradient_history;     // every sample of a bounded set of steps (heatmap over time)
  std::vector<ActivationSample> latest_activations;  // module outputs of the latest sampled step, in completion order
  // The first module whose output overflowed fp16, at the earliest sampled step with one.
  std::optional<ActivationSample> first_fp16_overflow;
  // Precision readiness per layer and tensor, the sampled steps so far added up.
  ReadinessTotals readiness;
  // Backward passes checked for non-finite gradients, and where the first one arose.
  BackwardInfSummary backward_inf;
  // How range samples were taken: "every 10 steps, spaced to every 1100 from step 11 to keep
  // samples within 5 % of the run's time (...); precision readiness on one sample in 5, the
  // first included" (RangeSampleSpacing::describe_sampling); "" when the session has no word.
  std::string range_sampling;
  std::string gpu_tracing;                          // "cupti" or why GPU tracing is off
  uint64_t dropped_records = 0;                     // anything the capture had to drop
};

using ProfileSnapshotPtr = std::shared_ptr<const ProfileSnapshot>;

// Why a profile has no gradient ranges: "No gradient range sample by step 8: range samples
// every 10 steps (within the 5 % budget)", so an empty pane or section says what the
// sampling was instead of looking broken (a sentence, without its full stop: summary, the
// report and the GUI all start a paragraph with it); "" when it has some, or before the first step.
inline std::string no_gradient_sample_text(const ProfileSnapshot& p) {
  if (!p.latest_gradients.empty() || p.step <= 0) return "";
  std::string text = "No gradient range sample by step " + std::to_string(p.step);
  if (!p.range_sampling.empty()) text += ": range samples " + p.range_sampling;
  return text;
}

}  // namespace ampscope::profiler
