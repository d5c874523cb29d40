#pragma once
// A precision comparison: the same model, data, seed and steps trained in each
// chosen precision variant, several times, interleaved (fp32, bf16, fp32, bf16, ...)
// so that drift of the machine (clocks, other load) hits every variant alike.
// Timing runs are never profiled; one extra short profiled pass per variant gives
// the per-op table. Plain values, no LibTorch: the store, the report and the GUI
// read these.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/records.h"
#include "profiler/script_facts.h"

namespace ampscope::profiler {

// "fp32", "tf32" (fp32 with TF32 matmuls and convolutions; CUDA only), "fp16"
// (autocast + GradScaler), "bf16" (autocast, no scaler).
inline constexpr const char* kBaselineVariant = "fp32";

struct VariantRun {
  std::string variant;
  std::string precision;  // the engine's precision: "fp32" | "fp16" | "bf16"
  bool tf32 = false;
  bool scaler = false;
  // Why the variant stopped early (a repeat failed or diverged); "" when every planned repeat finished.
  std::string error;
  // Every step of every finished repeat, warm-up included; repeats[r][i].step == i + 1.
  std::vector<std::vector<StepRecord>> repeats;
  // The profiled pass: its op table and how many steps it recorded (0 = no pass).
  std::vector<OpStats> op_stats;
  int64_t profiled_steps = 0;
};

struct Comparison {
  SessionMeta meta;             // of the base configuration; meta.precision is "" (several)
  // An inference comparison (`compare --inference`): each record of a repeat is one
  // timed inference batch (step = batch index, step_time_ms = its latency, loss = its
  // loss; the model in eval mode under InferenceMode and the variant's autocast), not a
  // training step; warm-up counts batches. No profiled pass, no loss scaler.
  bool inference = false;
  int64_t warmup_steps = 0;     // leading steps (batches) of each repeat excluded from timing
  int64_t planned_repeats = 0;
  int64_t effective_batch = 0;  // samples per optimizer step (batch size x accumulation)
  std::vector<VariantRun> variants;  // in the order asked for
  // A script's comparison (`ampscope run --compare`): the script, as its file says; nullopt
  // for the built-in models'.
  std::optional<ScriptFacts> script;
};

struct Spread {
  double median = 0.0, min = 0.0, max = 0.0;
};

struct VariantSummary {
  std::string variant;
  int64_t finished_repeats = 0;
  int64_t measured_steps = 0;        // over all repeats, warm-up excluded
  Spread step_ms;                    // over every measured step of every repeat
  std::vector<double> repeat_median_ms;
  double samples_per_second = 0.0;   // effective batch / median step time
  int64_t peak_memory_bytes = 0;     // max over repeats (CUDA: allocator peak; CPU: peak resident set)
  double final_loss = 0.0;           // median over repeats of the last step's loss (NaN if diverged)
  int64_t skipped_steps = 0;         // max over repeats
  // Against the baseline: per repeat r, baseline median_r / this median_r (paired
  // because repeats are interleaved); median/min/max over the pairs. 0 when not comparable.
  Spread speedup;
  double flops_per_step = 0.0;       // from the profiled pass's GEMM/conv shapes; 0 if unknown
  double achieved_flops_per_second = 0.0;
  double peak_flops_per_second = 0.0;  // the device's datasheet peak for this precision; 0 if unknown
  double utilization = 0.0;            // achieved / peak; 0 if unknown
};

// Ops matched across variants by what the user wrote: (op, phase, module, shapes),
// with dtypes differing by design and every kernel variant of an op taken as the op
// (op_family.h: fp32 and bf16 attention run different ATen kernels, each one row,
// aten::scaled_dot_product_attention, forward and backward). Only top-level rows, so
// a row's time includes its nested ops and the cast tax autocast paid for it.
struct OpVariantCell {
  bool present = false;
  // The ATen ops the variant ran for the row, when other than the row's name
  // ("aten::_scaled_dot_product_flash_attention_for_cpu_backward"), most time first.
  std::vector<std::string> ran_as;
  std::string category;              // to_string(OpCategory) of the largest share of calls
  std::vector<DtypeName> input_dtypes;  // of that share
  double calls_per_step = 0.0;
  // GPU time when traced, else CPU time; cast tax included. The median over the
  // profiled steps when the pass kept per-step samples and the op ran in every step
  // (per_step_median), else the total over the steps' count.
  double time_ns_per_step = 0.0;
  bool per_step_median = false;
  double cast_ns_per_step = 0.0;     // the cast tax inside it (the mean over the steps)
};

struct OpComparisonRow {
  std::string name;  // the op as the user wrote it (matched_op_name)
  std::string module;
  Phase phase = Phase::kOther;
  std::vector<Shape> input_shapes;  // the identifying shapes (matched_op_shapes)
  std::vector<OpVariantCell> cells;  // one per Comparison::variants entry, same order
  std::vector<double> speedup;       // baseline time / variant time per variant; 0 if either is missing
};

// What one timed record of the comparison is, for labels: "step" or "batch".
inline const char* timed_unit(const Comparison& c) { return c.inference ? "batch" : "step"; }
inline const char* timed_units(const Comparison& c) { return c.inference ? "batches" : "steps"; }

// The middle value (the mean of the two middle ones for an even count); 0 when empty.
double median_of(std::vector<double> values);
// Median step time (ms) of the steps after warm-up; 0 when there are none.
double median_step_ms(const std::vector<StepRecord>& steps, int64_t warmup_steps);

std::vector<VariantSummary> summarize(const Comparison& comparison);
// Rows by baseline time (or the largest time when the baseline lacks the op), descending.
std::vector<OpComparisonRow> match_ops(const Comparison& comparison);
// Index of the baseline variant in comparison.variants, if it is there.
std::optional<size_t> baseline_index(const Comparison& comparison);

}  // namespace ampscope::profiler
