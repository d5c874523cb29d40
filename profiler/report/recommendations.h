#pragma once
// What to change, read from a session: each rule looks at the op table, the
// steps or the gradient samples, fires only where its evidence is clear, and
// says what it saw (with figures) and what to do about it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/analysis/backward_origin.h"
#include "profiler/analysis/scheduler_drift.h"
#include "profiler/records.h"
#include "profiler/script_facts.h"

namespace ampscope::profiler {

enum class Severity { kInfo, kWarning };

struct Recommendation {
  // Stable ids: gemm_dims_not_multiple_of_8, eligible_not_on_tensor_cores,
  // high_cast_tax, kept_fp32_share, autocast_off_share, frequent_skipped_steps, loss_scale_stuck_low,
  // fp16_gradient_underflow, no_autocast_effect, scheduler_steps_after_skipped, no_master_weights,
  // sharded_gradients_unsynced_scaler, loss_scaler_without_fp16, clip_before_unscale.
  std::string id;
  Severity severity = Severity::kInfo;
  std::string title;                  // one line, plain words
  std::string detail;                 // what was seen, with figures, and what to do about it
  std::vector<std::string> evidence;  // up to 8 lines naming ops/modules/shapes/parameters/steps
};

struct RecommendationInput {
  SessionMeta
      meta;  // meta.precision "fp32"|"fp16"|"bf16", meta.device "cpu"/"cuda:0", meta.scaler_enabled
  std::vector<OpStats> op_stats;  // the op table
  int64_t profiled_steps = 0;     // steps the op table covers
  std::vector<StepRecord> steps;  // every step
  std::vector<GradientSample>
      gradients;  // the latest gradient sample, one per parameter (may be empty)
  std::vector<KernelSummary> kernels;  // top kernels (empty on CPU)
  std::vector<SchedulerSummary> schedulers;  // a Python loop's LR schedulers
  BackwardInfSummary backward_inf;           // where non-finite gradients started in backward
  // A Python session's parameters by dtype (meta parameter_dtypes: "bfloat16:9866,float32:10"); "" unknown.
  std::string parameter_dtypes;
  // A Python session's facts (script_facts()): its FSDP policies, its scaler's class.
  std::optional<ScriptFacts> script;
  // The precision the gradients were computed in: autocast's (meta.precision), or a script's
  // parameters' own or FSDP's cast of them where no autocast region ran (ScriptFacts).
  std::string compute_precision() const { return script ? script->compute_precision() : meta.precision; }
};

// Warnings first, then by impact (the share of step time or of steps concerned).
std::vector<Recommendation> recommend(const RecommendationInput& input);

std::string_view to_string(Severity s);  // "info" | "warning"

}  // namespace ampscope::profiler
