#pragma once
// What the profiler records, as plain values that cross threads by move and
// are immutable once published. No LibTorch or Qt types here: the store, the
// exporters and the GUI's models read these without linking LibTorch.
//
// Units: times are nanoseconds on one clock for CPU and GPU alike
// (CLOCK_MONOTONIC, which std::chrono::steady_clock reads on Linux; the CUPTI
// tracer registers it as CUPTI's timestamp source). Bytes are bytes.
#include <array>
#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/float_formats.h"

namespace ampscope::profiler {

// Tensor element types by name ("float32", "float16", "bfloat16", "int64", ...,
// torch.<name> spellings); "" for a non-tensor argument; a number wrapped in a
// tensor (`x * 0.5`) is "wrapped:float64" (it takes no part in type promotion).
using DtypeName = std::string;
inline constexpr const char* kWrappedNumberPrefix = "wrapped:";
using Shape = std::vector<int64_t>;

// kForwardNoGrad: a forward pass run without autograd (torch.no_grad, inference_mode):
// validation, inference, or a frozen model such as a distillation teacher. No backward
// follows it, and its calls are not the training forward's (stored by name, so the
// order here is free).
// kRecompute: forward code run again inside the backward, where activation checkpointing
// (torch.utils.checkpoint) recomputes what it did not keep: the price of the memory it saves.
enum class Phase : uint8_t { kForward, kForwardNoGrad, kBackward, kRecompute, kOptimizer, kOther };

// What autocast did to an op call, read from its input and output dtypes.
enum class OpCategory : uint8_t {
  kDemoted,       // floating inputs wider than the output: fp32 -> fp16/bf16 (the autocast lower-precision list)
  kKeptFp32,      // reduced-precision inputs, fp32 output (the autocast fp32 list)
  kPromoted,      // mixed floating inputs, run at the widest type (the autocast promote list)
  kUnchanged,     // ran in its inputs' precision
  kExplicitCast,  // a cast the user's code asked for (.to(), .half(), ...)
  kAutocastCast,  // a cast autocast inserted under an op: the cast tax
  // Autograd's engine casting the gradient of a promoted op's narrower input back to its
  // dtype (fp32 residual + fp16 branch: the branch's gradient cast to fp16): the promotion's
  // price in the backward. Last, so the values stored before it keep their meaning.
  kPromotionCast,
  // An op on autocast's lists run where the script turned autocast off inside its region
  // (torch.autocast(enabled=False), custom_fwd(cast_inputs=torch.float32)): it ran in the
  // precision the script gave it (fp32, as AMP's documentation advises for a sensitive
  // region), not the one autocast would have chosen.
  kAutocastOff,
  // A conversion FSDP's mixed-precision policy made (fully_shard's MixedPrecisionPolicy, FSDP1's
  // MixedPrecision), inside FSDP's own scopes, by a cast or a copy between floating dtypes: the
  // parameters' shards into param_dtype as they are gathered (for the forward, and again for
  // the backward), the forward's inputs cast to it, the gradients into reduce_dtype for their
  // reduction. The policy's cost, not the code's.
  kShardingCast,
};
inline constexpr int kOpCategoryCount = 9;  // records.cpp checks it against its table

struct OpRecord {
  uint64_t id = 0;          // unique in a session, > 0; also the CUPTI external correlation id
  uint64_t parent_id = 0;   // the enclosing recorded op; 0 for a top-level op
  int64_t step = 0;         // the optimizer step it ran in
  std::string name;         // "aten::linear"
  Phase phase = Phase::kOther;
  OpCategory category = OpCategory::kUnchanged;
  std::string module;       // dotted module path, "blocks.0.attn.qkv"; backward ops inherit their forward op's
  int64_t sequence_nr = -1; // autograd sequence number linking forward and backward; -1 if none
  uint64_t forward_op_id = 0;  // backward ops: the op that created the node (forward, or create_graph backward)
  uint32_t depth = 0;       // nesting depth among recorded ops
  // An autograd backward node ("AddmmBackward0") or a custom autograd.Function's forward
  // ("Float32MM"): a container whose children are the ops it ran; those children are
  // top-level ops (of the backward pass, or of the forward).
  bool autograd_node = false;
  uint64_t thread_id = 0;   // a small number per OS thread (1 = first thread seen)
  int64_t start_ns = 0, end_ns = 0;
  std::vector<DtypeName> input_dtypes;
  std::vector<Shape> input_shapes;
  std::vector<DtypeName> output_dtypes;
  int64_t cast_bytes = 0;   // the casts (kAutocastCast, kExplicitCast, kPromotionCast, kShardingCast): bytes written
};

enum class ActivityKind : uint8_t { kKernel, kMemcpy, kMemset };

struct KernelRecord {
  ActivityKind kind = ActivityKind::kKernel;
  uint64_t correlation_id = 0;  // CUPTI's, links the launch (runtime API) to the activity
  uint64_t op_id = 0;           // the OpRecord that launched it (external correlation); 0 if unknown
  int64_t step = 0;
  std::string name;             // demangled kernel name, or "Memcpy HtoD" / "Memset"
  int32_t device = 0;
  int32_t stream = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::array<int32_t, 3> grid{0, 0, 0};
  std::array<int32_t, 3> block{0, 0, 0};
  int32_t registers_per_thread = 0;
  int32_t shared_memory_bytes = 0;  // static + dynamic
  int64_t bytes = 0;                // memcpy/memset
  // From the kernel-name rule table (resources/tensor_core_kernels.txt), which is
  // checked against hardware counters (tests/fixtures/h100-kernels.tsv).
  bool tensor_core_by_name = false;
};

// One training step as the engine reported it (engine::StepEvent, flattened).
struct StepRecord {
  int64_t step = 0;
  double loss = 0.0;
  double lr = 0.0;
  double loss_scale = 1.0;
  bool found_inf = false;
  bool skipped = false;
  int64_t growth_tracker = 0;
  double grad_norm = 0.0;
  double step_time_ms = 0.0;
  double samples_per_second = 0.0;
  int64_t mem_allocated_bytes = 0;
  int64_t mem_reserved_bytes = 0;
  int64_t mem_peak_bytes = 0;
  int64_t end_ns = 0;  // when the step ended, on the profiler clock
  // Validation loss after this step (--eval-every); NaN on steps without validation,
  // and in sessions recorded before ampscope stored it.
  double eval_loss = std::numeric_limits<double>::quiet_NaN();
  // The profiler's work on the training thread after the step's timed work (a sample's
  // passes and read-backs, the ops' hand-off): not in step_time_ms, but the run paid it
  // before the next step began. 0 where there was none, and in older sessions.
  double capture_after_ms = 0.0;
  // What the step cost the run: its own time and the capture's work after it.
  double cost_ms() const { return step_time_ms + capture_after_ms; }
};

// Whether validation ran after the step.
inline bool has_eval_loss(const StepRecord& s) { return !std::isnan(s.eval_loss); }

// One optimizer's part in one step of a training loop captured from Python, where a
// step may run several optimizers under one torch.amp.GradScaler and GradScaler
// decides per optimizer: one may skip its step (an inf/NaN in its own gradients)
// while another does not. Stored in `optimizer_steps`, for Python loops and the built-in
// engine's multi-loss recipe; runs of one optimizer have none (the step row says it all).
struct OptimizerStepRecord {
  int64_t step = 0;
  int32_t optimizer = 0;       // 0-based, in the order the optimizers first stepped
  std::string name;            // the optimizer's class, "SGD", "AdamW"
  bool stepped = false;        // optimizer.step() ran
  bool found_inf = false;      // GradScaler found an inf/NaN in this optimizer's gradients
  bool skipped = false;        // GradScaler.step() skipped optimizer.step() because of it
  int64_t unscale_calls = 0;   // scaler.unscale_(optimizer) calls by the user's code (clipping)
  double lr = 0.0;             // param_groups[0]["lr"] when it stepped
  double loss_scale = 1.0;     // the scale in force at scaler.step (1 without a scaler)
  double loss_scale_after = 1.0;  // after this step's scaler.update(); NaN when there was none
};

// One lr_scheduler.step() call of a training loop captured from Python. A scheduler
// that advances after an optimizer step GradScaler skipped runs ahead of the
// optimizer's real updates (the schedule drifts): the capture records, per call,
// the optimizer step the call followed and whether GradScaler skipped it.
// Stored in `scheduler_steps`; the built-in engine's sessions have none.
struct SchedulerStepRecord {
  int64_t call = 0;              // 0-based, in the order the script made the calls (all schedulers)
  int32_t scheduler = 0;         // 0-based, in the order the schedulers first stepped
  std::string name;              // the scheduler's class, "StepLR"
  int32_t optimizer = 0;         // its optimizer, numbered as in OptimizerStepRecord::optimizer
  int64_t step = 0;              // the step of the optimizer step it followed; 0 before any
  bool after_skipped = false;    // GradScaler had skipped that optimizer step
  double lr = 0.0;               // param_groups[0]["lr"] after the call
};

// Which gradient a backward check saw become non-finite: the gradient with respect
// to a module's input (its own backward produced the inf/NaN), its output (it arrived
// non-finite, from the loss or from code between modules), or one of its parameters
// (its backward produced the inf/NaN in a weight's or bias's gradient, a sum over the
// batch that overflows fp16 where the activations' gradients need not).
enum class GradientSide : uint8_t { kInput, kOutput, kParameter };

// A backward pass checked for non-finite gradients (on gradient-sampled steps, and on
// steps after one GradScaler skipped or after the scale grew): module input, output and
// parameter gradients are tested on the device as autograd produces them, read once at
// the step's end.
struct BackwardCheck {
  int64_t step = 0;
  bool skipped = false;          // GradScaler skipped this step's optimizer step (any optimizer)
  int64_t gradients = 0;         // distinct gradient tensors checked
  int64_t nonfinite = 0;         // of which held inf or NaN
  // Where the first non-finite gradient, in backward order, arose: the module and
  // which of its gradients (for kParameter, `module` is the parameter's dotted name,
  // "blocks.1.mlp.proj.bias"); "" when every checked gradient was finite.
  std::string module;
  GradientSide side = GradientSide::kInput;
  int64_t position = 0;          // that gradient's index among those checked, in backward order
  DtypeName dtype;               // that gradient's dtype ("float16"); "" in sessions from before 2026-11-28
  bool found() const { return nonfinite > 0; }
};

// log2|g| histogram bins: bin i counts |g| in [2^(kLog2Min + i), 2^(kLog2Min + i + 1)).
// The range covers fp16's subnormal floor (2^-24), smallest normal (2^-14) and
// maximum (65504 < 2^16), and most of bf16's range; values outside go to the end bins.
inline constexpr int kGradLog2Min = -64;
inline constexpr int kGradLog2Max = 64;
inline constexpr int kGradBins = kGradLog2Max - kGradLog2Min;

// Shares of a tensor's elements that a cast to one format flushes to zero,
// leaves subnormal, or overflows (inf; NaN for fp8 e4m3fn).
struct FormatRangeShares {
  double underflow = 0.0, subnormal = 0.0, overflow = 0.0;
};

// Range statistics of one parameter's unscaled gradient at one step.
struct GradientSample {
  int64_t step = 0;
  std::string parameter;   // "blocks.0.attn.qkv.weight"
  double loss_scale = 1.0; // the scale in force: fp16 fractions below are for g * loss_scale
  int64_t numel = 0;
  std::array<int64_t, kGradBins> log2_histogram{};  // nonzero finite |g| only
  double zero_fraction = 0.0;
  double nonfinite_fraction = 0.0;
  // Shares of all elements of g * scale that a cast to fp16 (round to nearest
  // even, float_formats.h cast_outcome) would flush to 0 (nonzero, |g * scale| <=
  // 2^-25), leave subnormal (loses precision), or overflow to inf (|g * scale| >= 65520).
  double fp16_underflow_fraction = 0.0;
  double fp16_subnormal_fraction = 0.0;
  double fp16_overflow_fraction = 0.0;
  double min_abs_nonzero = 0.0, max_abs = 0.0, norm = 0.0;
  // The same shares, at the same scale, for the other formats. NaN when not
  // measured (sessions recorded before ampscope measured them).
  FormatRangeShares bf16, fp8_e4m3, fp8_e5m2;
};

// A sample's shares for any format (fp16's from its own fields).
FormatRangeShares range_shares(const GradientSample& s, FloatFormat f);
void set_range_shares(GradientSample& s, FloatFormat f, const FormatRangeShares& shares);
// Shares over all elements of the samples (each weighted by its numel); NaN when
// any sample lacks them.
FormatRangeShares total_range_shares(const std::vector<GradientSample>& samples, FloatFormat f);
// The L2 norm of all the samples' gradients together, sqrt(sum of their norms squared): the
// total norm torch.nn.utils.clip_grad_norm_ takes over the same parameters, so a script that
// does not clip still has its gradient norm at the sampled steps. +inf where an element is
// inf or NaN (clip_grad_norm_ returns inf or NaN there; a sample's own norm counts its finite
// elements only); NaN for no samples. Under FSDP the samples are this rank's shards.
class GradientNormSum {
 public:
  void add(double norm, double nonfinite_fraction);  // one sample's GradientSample::norm and share of inf/NaN
  double total() const;

 private:
  double squares_ = 0.0;
  bool nonfinite_ = false;
  bool any_ = false;
};
double total_gradient_norm(const std::vector<GradientSample>& samples);
// One sampled step's total_gradient_norm.
struct SampledGradientNorm {
  int64_t step = 0;
  double norm = 0.0;
};
// The first `limit` samples in the order of how much of each a cast to fp16 loses: flushed
// to zero, overflowed or already inf/NaN first, then left subnormal (precision lost); ties
// keep the samples' order. The one ranking behind summary's, the JSON's and the report's
// "nearest fp16's edge" lists.
std::vector<const GradientSample*> nearest_fp16_edge_first(const std::vector<GradientSample>& samples,
                                                           size_t limit);

// Range statistics of one module's forward output at one sampled step (the
// module's ModuleScope::output; with gradient accumulation, all micro-batches).
struct ActivationSample {
  int64_t step = 0;
  int64_t order = 0;         // completion order in the forward: inner modules finish before outer ones
  std::string module;        // "blocks.2.mlp"
  DtypeName dtype;           // of the output as computed ("float16" under fp16 autocast)
  int64_t numel = 0;
  double nonfinite_fraction = 0.0;  // inf/NaN in the output as computed
  double max_abs = 0.0;             // largest finite |x|
  // Shares of all elements a cast of the finite values to each format would flush
  // to zero, leave subnormal, or overflow (no loss scale: activations are not scaled).
  FormatRangeShares fp16, bf16, fp8_e4m3, fp8_e5m2;
};

// Whether the output overflowed fp16: inf/NaN in it, or finite values beyond fp16's range.
bool overflows_fp16(const ActivationSample& a);
// The first module, in forward completion order, whose output overflowed fp16: where
// the overflow started (later modules inherit the inf). Null when none did.
const ActivationSample* first_fp16_overflow(const std::vector<ActivationSample>& step_samples);
FormatRangeShares range_shares(const ActivationSample& a, FloatFormat f);

// What a session was: the run's settings and where it ran.
struct SessionMeta {
  std::string ampscope_version;
  std::string created_utc;     // ISO 8601
  std::string config_json;     // the TrainConfig as JSON
  std::string device;          // "cpu", "cuda:0"
  std::string device_name;     // "NVIDIA H100 80GB HBM3", or the CPU model
  std::string model;           // description
  std::string data;            // description
  std::string precision;       // "fp32" | "fp16" | "bf16"
  int64_t parameter_count = 0;
  bool scaler_enabled = false;
  std::string torch_version;
  std::string gpu_tracing;     // "cupti", or why not ("no GPU", "CUPTI held by another client", ...)
  // CPU runs only (empty otherwise, and in sessions older than these fields): ATen's
  // vector ISA ("AVX2") and which kernels multiply bf16 / fp16 matrices here,
  // kCpuMatmulOneDnn or kCpuMatmulFallback (engine::cpu_matmul_paths).
  std::string cpu_isa;
  std::string cpu_bf16_matmul;
  std::string cpu_fp16_matmul;
};
inline constexpr const char* kCpuMatmulOneDnn = "onednn";
inline constexpr const char* kCpuMatmulFallback = "aten-fallback";

std::string_view to_string(Phase p);
// What a phase that is not the training step's forward, backward or optimizer means, in a
// sentence or two for a table's note or tooltip; empty for those.
std::string_view phase_meaning(Phase p);
std::string_view to_string(OpCategory c);
std::string_view to_string(ActivityKind k);
std::string_view to_string(GradientSide s);  // "input" | "output" | "parameter"
// By name, for a failed test's message ("autocast_off", not "1-byte object <07>").
std::ostream& operator<<(std::ostream& os, Phase p);
std::ostream& operator<<(std::ostream& os, OpCategory c);
std::optional<Phase> parse_phase(std::string_view s);
std::optional<OpCategory> parse_category(std::string_view s);
std::optional<ActivityKind> parse_activity_kind(std::string_view s);
std::optional<GradientSide> parse_gradient_side(std::string_view s);

}  // namespace ampscope::profiler

namespace ampscope::profiler {

// One row of the op table: the calls of one op with one signature, grouped by
// what autocast did to them. GPU figures are zero when no GPU was traced.
struct OpStats {
  std::string name;
  std::string module;
  Phase phase = Phase::kOther;
  OpCategory category = OpCategory::kUnchanged;
  // Called by model, loss or optimizer code rather than inside another op; summing
  // top-level rows counts every microsecond once (nested rows are inclusive).
  bool top_level = false;
  std::vector<DtypeName> input_dtypes;
  std::vector<Shape> input_shapes;
  std::vector<DtypeName> output_dtypes;
  int64_t calls = 0;
  int64_t cpu_time_ns = 0;          // inclusive: the call's whole span
  int64_t gpu_time_ns = 0;          // kernels launched by the call or anything under it
  int64_t kernels = 0;
  int64_t tensor_core_kernels = 0;
  int64_t tensor_core_gpu_time_ns = 0;
  int64_t cast_calls = 0;           // autocast casts made under this op: the cast tax
  int64_t cast_bytes = 0;
  int64_t cast_cpu_time_ns = 0;
  int64_t cast_gpu_time_ns = 0;
  bool tensor_core_eligible = false;  // a lower-precision GEMM/conv on fp16/bf16 inputs
  std::string tensor_core_note;       // why an eligible op did not use them, when known
  // An op of a graph torch.compile compiled (AOTAutograd's forward or backward graph),
  // counted per call of the compiled region; it has no time of its own (the compiled
  // code fuses ops), so its time columns are 0 and its region's time stays in the eager rows.
  bool compiled = false;
  // This row's time in each sampled step (OpAggregator's sampled steps, in order; a
  // shorter vector means 0 in the steps after). Empty unless the aggregator keeps step
  // samples, as comparisons' profiled passes do: medians per step shrug off one
  // preempted step, which the sums above cannot.
  std::vector<int64_t> step_cpu_time_ns;
  std::vector<int64_t> step_gpu_time_ns;
};


// One kernel name aggregated over a session (or the live run so far).
struct KernelSummary {
  std::string name;
  ActivityKind kind = ActivityKind::kKernel;
  int64_t calls = 0;
  int64_t total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  int64_t tensor_core_calls = 0;  // by the kernel-name rule table
  bool tensor_core = false;       // some call ran on Tensor Cores (by name)
  std::vector<std::string> launching_ops;  // ops that launched it, most calls first (at most 8)
  // The recorded ops it ran inside (the launching op's ancestors: aten::linear around
  // aten::addmm), most calls first (at most 8): an op's kernels, its children's included.
  std::vector<std::string> enclosing_ops;
  std::array<int32_t, 3> grid{0, 0, 0};   // launch configuration of one call
  std::array<int32_t, 3> block{0, 0, 0};
};

// GPU time no op can be named for: activity launched outside any recorded op, or
// whose op never arrived. Shown with its share of all traced GPU time wherever
// kernels are shown (summary, GUI, report, JSON), so a profile that cannot say
// where GPU time went says so instead of hiding it.
struct GpuAttribution {
  int64_t unattributed_ns = 0;
  int64_t traced_ns = 0;  // all traced GPU activity, attributed or not
  double unattributed_share() const {
    return traced_ns > 0 ? static_cast<double>(unattributed_ns) / static_cast<double>(traced_ns) : 0.0;
  }
};

// Time per autocast category, summed over top-level op calls only (OpStats.top_level),
// so a nested op's time is counted once, under the category of the op the model called.
struct CategoryTotals {
  OpCategory category = OpCategory::kUnchanged;
  int64_t calls = 0;
  int64_t cpu_time_ns = 0;
  int64_t gpu_time_ns = 0;
  int64_t cast_cpu_time_ns = 0;  // the cast tax inside those calls
  int64_t cast_gpu_time_ns = 0;
  // Of cpu/gpu_time_ns, the time of torch.compile'd graphs' kernels counted here by what
  // they compute (CompiledComputeTime); 0 in a run without compiled graphs.
  int64_t compiled_cpu_time_ns = 0;
  int64_t compiled_gpu_time_ns = 0;
};

// The op that holds a torch.compile'd graph's call: dynamo's "Torch-Compiled Region: G/V",
// AOTAutograd's CompiledFunction and its backward, and ampscope's own marker around a
// graph's call (kCompiledGraphOpPrefix). None has dtypes: each is an unchanged row.
inline constexpr std::string_view kCompiledGraphOpPrefix = "ampscope::compiled_graph::";
bool is_compiled_region_op(std::string_view name);

// The op the Python capture opens around each torch.compile compilation that runs in the
// user's steps (dynamo's tracing, AOTAutograd, inductor: none of their ops is recorded):
// a model's first call, a graph break's resumed frame compiled inside a region, a lazily
// compiled backward. Compiling is no work autocast decided on: category_totals() leaves
// it out of every category (taken from the region that held it), and compile_time() says
// how long it was.
inline constexpr std::string_view kTorchCompileOp = "ampscope::torch_compile";
struct CompileTime {
  int64_t calls = 0, cpu_time_ns = 0, gpu_time_ns = 0;  // gpu: kernels launched while compiling (tuning)
};
CompileTime compile_time(const std::vector<OpStats>& rows);

// The kernels of torch.compile'd graphs by what they compute, summed by category and
// output dtype: compiled_compute_time() (analysis/compiled_kernels.h) over a session's
// compiled kernel rows. A compiled region is one recorded op around fused kernels
// and extern GEMMs, so without these its whole time reads "unchanged" while its GEMMs
// ran demoted to bf16.
struct CompiledComputeTime {
  OpCategory category = OpCategory::kUnchanged;
  std::string output_dtype;  // "bfloat16"; "" when the ops do not say
  int64_t cpu_time_ns = 0;
  int64_t gpu_time_ns = 0;
};

// Sums top-level rows by category, in OpCategory order; categories without calls are left out.
// The one aggregation by category: the CLI summary, the report and the GUI's strip use it.
// `compiled` moves time out of the compiled regions' rows (the categories holding them,
// at most their time) to the categories the kernels inside computed in; compiling
// (kTorchCompileOp) is in no category.
std::vector<CategoryTotals> category_totals(const std::vector<OpStats>& rows,
                                            const std::vector<CompiledComputeTime>& compiled = {});

// Time per phase (forward, forward without autograd, backward, optimizer, other), summed as
// category_totals sums it: top-level rows, compiling in none (a compile nested in a region
// leaves the region holding it, whatever its phase). In Phase order; without calls: left out.
struct PhaseTotals {
  Phase phase = Phase::kOther;
  int64_t calls = 0;
  int64_t cpu_time_ns = 0;
  int64_t gpu_time_ns = 0;
  // Of calls, compiled graphs' nodes: their time is their graph's call's, in the graph's phase
  // (a compiled recomputation's nodes are in the backward graph).
  int64_t compiled_calls = 0;
  // Every call a compiled node's: the phase's time is counted in another's.
  bool timed_elsewhere() const { return calls > 0 && compiled_calls == calls; }
};
std::vector<PhaseTotals> phase_totals(const std::vector<OpStats>& rows);

// Of all categories' time, what torch.compile'd kernels computed (CategoryTotals::compiled_*).
int64_t compiled_time_ns(const std::vector<CategoryTotals>& totals, bool gpu);

// category_totals' time split further by the output dtype it computed in (the row's first
// output; a compiled kernel's own), with the same moves out of compiled regions, so a
// split by dtype and the split by category add up to the same whole.
struct CategoryDtypeTime {
  OpCategory category = OpCategory::kUnchanged;
  std::string output_dtype;  // "" when the op has no output dtype (a compiled region's row)
  int64_t cpu_time_ns = 0;
  int64_t gpu_time_ns = 0;
};
std::vector<CategoryDtypeTime> time_by_category_and_dtype(const std::vector<OpStats>& rows,
                                                          const std::vector<CompiledComputeTime>& compiled = {});

}  // namespace ampscope::profiler
