#pragma once
// The keys of a session's `meta` table, once, beside records.h (capture, the store and
// the recording-health text all read them): the writer, the profiler, the comparison store and every reader use these names, so a key that
// is read is a key that something writes. docs/session-format.md lists them for
// users. The Python capture (python/ampscope/_capture.py) writes the SessionMeta
// keys and `kind` by name through the extension's set_meta; keep it in step.
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace ampscope::profiler::meta_key {

// SessionMeta's fields, written when the session is created.
inline constexpr const char* kAmpscopeVersion = "ampscope_version";
inline constexpr const char* kCreatedUtc = "created_utc";
inline constexpr const char* kConfigJson = "config_json";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kDeviceName = "device_name";
inline constexpr const char* kModel = "model";
inline constexpr const char* kData = "data";
inline constexpr const char* kPrecision = "precision";
inline constexpr const char* kParameterCount = "parameter_count";
// A Python session's parameters by dtype, most first: "bfloat16:9866,float32:10".
inline constexpr const char* kParameterDtypes = "parameter_dtypes";
// FSDP and sharded parameters in a Python session's models (profiler/script_facts.h reads it):
// a JSON object {"fsdp": [{"api": "fully_shard" or "FullyShardedDataParallel", "param_dtype",
// "reduce_dtype", "output_dtype": "bf16"/"fp16"/"fp32"/null, "modules": N}, ...] (one entry per
// distinct mixed-precision policy), "sharded_parameters": elements of DTensor parameters}.
// Absent where the models have neither (and in sessions before 2026-12-01).
inline constexpr const char* kSharding = "sharding";
// The devices ("cpu", "cuda") a Python script entered autocast regions for with enabled=False
// outside any enabled one and any layer: the region AMP wraps the forward in, switched off
// (`autocast(enabled=args.amp)` with the flag off). Absent when none.
inline constexpr const char* kAutocastDisabled = "autocast_disabled";
// `ampscope run --precision P`: the precision the script's AMP regions were entered in
// ("fp32", "tf32", "fp16", "bf16"), and what those regions asked for ("fp16", "bf16, fp16").
inline constexpr const char* kPrecisionOverride = "precision_override";
inline constexpr const char* kPrecisionAsked = "precision_asked";
inline constexpr const char* kScalerEnabled = "scaler_enabled";
// A script's loss scaler, by class: "torch.amp.GradScaler", or a subclass by its qualified name
// ("torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler"). Absent without one, and in
// sessions before 2026-12-01 (a GradScaler then).
inline constexpr const char* kScalerClass = "scaler_class";
inline constexpr const char* kTorchVersion = "torch_version";
inline constexpr const char* kGpuTracing = "gpu_tracing";
// Whether CUPTI tracing was asked for ("1"/"0"; gpu_tracing says what happened).
// Absent in older sessions (added 2026-11-28, after the op window).
inline constexpr const char* kTraceGpu = "trace_gpu";
inline constexpr const char* kCpuIsa = "cpu_isa";
inline constexpr const char* kCpuBf16Matmul = "cpu_bf16_matmul";
inline constexpr const char* kCpuFp16Matmul = "cpu_fp16_matmul";

// The recording process (Chrome trace's pid; one per rank under torchrun) and its
// host: a viewer on that host follows a live session while the pid runs.
inline constexpr const char* kPid = "pid";
inline constexpr const char* kHost = "host";
// What wrote the file: "comparison" (comparison_store), "python" (ampscope run /
// import ampscope); absent for the built-in engine's sessions.
inline constexpr const char* kKind = "kind";
inline constexpr const char* kKindPython = "python";
// A Python session's own facts (profiler/script_facts.h reads them): the command
// line, the script and its arguments as the script saw them (sys.argv), the
// optimizers' classes in the order first stepped, and "clip_grad_norm_" once the
// script clipped gradients (the gradient norm ampscope shows is the one it returns).
inline constexpr const char* kArgv = "argv";
inline constexpr const char* kScript = "script";
inline constexpr const char* kArguments = "arguments";
inline constexpr const char* kOptimizers = "optimizers";
inline constexpr const char* kGradNormSource = "grad_norm_source";
// clip_grad_norm_ run on gradients a GradScaler had scaled and not yet unscaled: a JSON object
// {"steps": steps it happened in, "first_step", "max_norm" (null where not a number)}. The
// gradient norm ampscope stores for those steps is the one it returned divided by the scale.
// Absent where it never happened, and in sessions before 2026-12-03.
inline constexpr const char* kClipBeforeUnscale = "clip_before_unscale";
// How `ampscope run` ran the script, so it can be run again as it ran (the GUI's Run again):
// a JSON object {"python", "working_directory", "module" (bool), "script" (a path as given, or
// a module's name), "arguments" (a list)}. Absent where the script imported ampscope itself,
// and in sessions before 2026-11-30.
inline constexpr const char* kScriptCommand = "script_command";
// `ampscope run --max-steps N`: the script was stopped as step N+1 would begin (absent: no limit).
inline constexpr const char* kMaxSteps = "max_steps";
// What a script's precision comparison (`ampscope run --compare`) copies into its file from
// the first run that finished: the keys that describe the script, not that run's precision.
inline constexpr const char* kComparedScriptKeys[] = {kScript,          kArguments,       kOptimizers,
                                                      kDevice,          kPrecisionAsked,  kParameterDtypes,
                                                      kScriptCommand,   kMaxSteps,        kSharding};

// Written with the op table each time it is saved, so the two always agree:
// steps whose ops the table holds (per-step time = table time / this).
inline constexpr const char* kProfiledSteps = "profiled_steps";
// With the table too: the warm-up step its rows leave out (analysis/warmup_step.h); absent
// where the table holds every recorded step (sessions before 2026-12-03 among them).
inline constexpr const char* kWarmupLeftOut = "warmup_left_out";
inline constexpr const char* kRecordedOps = "recorded_ops";
inline constexpr const char* kUnattributedKernels = "unattributed_kernels";
inline constexpr const char* kKernelsParked = "kernels_parked";
inline constexpr const char* kKernelsGivenUp = "kernels_given_up";
// The profiler's own GPU work (range statistics inside a traced step): kernels and
// their time, kept out of the kernel table and of the unattributed share.
inline constexpr const char* kProfilerOwnKernels = "profiler_own_kernels";
inline constexpr const char* kProfilerOwnGpuNs = "profiler_own_gpu_ns";
// Range samples (profiler/range_sample_spacing.h): every K steps, the budget in
// percent, and the changes of spacing the budget made (`from:every:cost_ms:step_ms`,
// ';'-separated; absent when there were none).
inline constexpr const char* kRangeSampleEvery = "range_sample_every";
inline constexpr const char* kRangeSampleBudget = "range_sample_budget";
// Precision readiness on every Nth range sample, the first included (0: off).
inline constexpr const char* kReadinessEvery = "readiness_every";
// The last step of a run known to end before step K, which range-samples instead
// (RangeSampleSpacing::set_last_step). Absent where there is none, and before 2026-12-02.
inline constexpr const char* kRangeSampleLastStep = "range_sample_last_step";
// Which steps' ops were asked for: from this step, this many steps (0: to the end), every
// Nth of them (profiler/capture_settings.h). Absent in sessions before 2026-11-28.
inline constexpr const char* kOpWindowStart = "op_window_start";
inline constexpr const char* kOpWindowSteps = "op_window_steps";
inline constexpr const char* kOpEvery = "op_every";
inline constexpr const char* kRangeSampleSpacing = "range_sample_spacing";
// Where the samples' time went on the training thread, by pass (range_sample_phases.h):
// "samples:N;gradients:ms;activations:ms;readiness:ms", sums. Absent before 2026-11-27.
inline constexpr const char* kRangeSamplePhases = "range_sample_phases";
// Range samples stopped at this step: one failed on the device (profiler/capture/
// sample_failure.h), and why ("the gradient statistics ran out of device memory").
// Absent where they never stopped, and before 2026-11-30.
inline constexpr const char* kRangeSamplesStoppedStep = "range_samples_stopped_step";
inline constexpr const char* kRangeSamplesStoppedWhy = "range_samples_stopped_why";
// The costliest of those kernels by name: a JSON array of {name, calls, gpu_ns}
// (session_view.h: own_kernels_json / own_kernels_from_meta).
inline constexpr const char* kProfilerOwnKernelNames = "profiler_own_kernel_names";

// torch.compile under `ampscope run` (python/ampscope/_compiled.py): graphs whose ops
// the op table holds (rows with `compiled`), and dynamo's graph breaks and
// recompilations as JSON arrays ([{where, reason, count}], [{frame, reason}]).
inline constexpr const char* kCompiledGraphs = "compiled_graphs";
inline constexpr const char* kCompileGraphBreaks = "compile_graph_breaks";
inline constexpr const char* kCompileRecompiles = "compile_recompiles";
// Modules compiled in place (`module.compile()`) in which dynamo compiled nothing, their
// code being all PyTorch's: [{module, cls}]; absent where none (and before 2026-12-02).
inline constexpr const char* kCompileRanEagerly = "compile_ran_eagerly";

// How the run ended (written when it ends; absent: still running or killed).
inline constexpr const char* kFinalState = "final_state";
inline constexpr const char* kFinalMessage = "final_message";

// What the recording lost (profiler/recording_health.h reads these).
inline constexpr const char* kProfilerDroppedBatches = "profiler_dropped_batches";
inline constexpr const char* kStoreDroppedBatches = "store_dropped_batches";
inline constexpr const char* kStoreLastError = "store_last_error";
// "open" from the session's creation, "complete" once the writer, closing, stored its
// counts and had no error. A full disk can fail those last writes too (the writer's
// error then never reaches the file): "open" beside a final_state says the session's
// counts of what it lost could not be written. Absent in sessions before 2026-11-27.
inline constexpr const char* kStoreOutcome = "store_outcome";
inline constexpr const char* kStoreOutcomeOpen = "open";
inline constexpr const char* kStoreOutcomeComplete = "complete";
inline constexpr const char* kCuptiDroppedRecords = "cupti_dropped_records";
inline constexpr const char* kCuptiUnmappedRecords = "cupti_unmapped_records";
// Where the capture fell back to recording fewer steps' ops (profiler/op_sampling_rule.h):
// "step:every:backlog" per fall-back, ";"-separated. Absent: it never fell behind.
inline constexpr const char* kOpSamplingFallbacks = "op_sampling_fallbacks";
// Ops each thread may record per step (ProfilerOptions::step_op_budget), the ops
// over it (counted, not recorded) and the first step that went over.
inline constexpr const char* kStepOpBudget = "step_op_budget";
inline constexpr const char* kOpsOverStepBudget = "ops_over_step_budget";
inline constexpr const char* kFirstStepOverBudget = "first_step_over_op_budget";
// A stop inside a step: that unfinished step's ops and GPU activities are not kept
// (writing them could take longer than the user waits for a stop).
inline constexpr const char* kInterruptedStep = "interrupted_step";
inline constexpr const char* kInterruptedStepOps = "interrupted_step_ops_not_kept";
inline constexpr const char* kInterruptedStepKernels = "interrupted_step_gpu_activities_not_kept";

// A count (or pid) stored under `key`: nullopt when absent, empty, negative or not
// wholly a number, so each reader decides what a missing count means.
inline std::optional<int64_t> count(const std::map<std::string, std::string>& meta, const char* key) {
  const auto it = meta.find(key);
  if (it == meta.end() || it->second.empty()) return std::nullopt;
  try {
    size_t used = 0;
    const long long v = std::stoll(it->second, &used);
    if (used == it->second.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace ampscope::profiler::meta_key
