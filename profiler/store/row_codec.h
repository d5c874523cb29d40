#pragma once
// Every session and comparison table's row encoding: its columns in on-disk order,
// and the functions that bind a record to them (the writers) and read it back (the
// readers). Both sides build their SQL from these lists, so they cannot disagree on
// an order; the CREATE TABLE text (session_schema.cpp, comparison_store.cpp) is
// checked against them by tests/profiler_core/test_store_columns.cpp, which compares
// PRAGMA table_info of freshly written files with table_layouts().
//
// A list leaves out the INTEGER PRIMARY KEY that SQLite assigns (kernels.id,
// kernel_names.id, op_stats.id, comparison_op_stats.id, comparison_variants.ord):
// no record carries it. table_layouts() puts it back.
//
// Definitions: row_codec.cpp (the helpers, steps, op tables, meta, optimizer and
// scheduler steps, comparisons), row_codec_gpu.cpp (ops, kernels, the kernel table),
// row_codec_numerics.cpp (gradients, activations, readiness, backward checks).
#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/records.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::store_detail {

// A run of a table's columns, in on-disk order; the lists below are std::arrays,
// their size() the column count that the bind/read functions are checked against.
using Columns = std::span<const std::string_view>;

template <size_t... N>
constexpr std::array<std::string_view, (N + ...)> concat_columns(const std::array<std::string_view, N>&... parts) {
  std::array<std::string_view, (N + ...)> out{};
  size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(at)), at += N), ...);
  return out;
}

// "a,b,c", or with a table alias "k.a,k.b,k.c".
std::string column_list(Columns columns, std::string_view alias = {});
// "<verb> INTO table(a,b,c) VALUES(?1,?2,?3)", verb "INSERT" or "INSERT OR REPLACE".
std::string insert_sql(std::string_view verb, std::string_view table, Columns columns);
// The same for `rows` rows in one statement: row k's values at ?(k*n+1)..?(k*n+n).
std::string insert_rows_sql(std::string_view verb, std::string_view table, Columns columns, size_t rows);

// A column added to a table after files were written without it: such files read
// `when_absent` (an SQL expression) in its place.
struct AddedColumn {
  std::string_view name;
  std::string_view when_absent;
};
// `columns` to SELECT from `table`, each of `added` that the file's table lacks
// replaced by its when_absent. Any other missing column stays an error.
std::string select_columns(const Db& db, std::string_view table, Columns columns,
                           std::span<const AddedColumn> added = {});

// ---- steps (sessions' steps; comparison_steps after variant and repeat) ----
inline constexpr auto kStepColumns = std::to_array<std::string_view>(
    {"step", "loss", "lr", "loss_scale", "found_inf", "skipped", "growth_tracker", "grad_norm", "step_time_ms",
     "samples_per_second", "mem_allocated_bytes", "mem_reserved_bytes", "mem_peak_bytes", "end_ns", "eval_loss",
     "capture_after_ms"});
// Files written before eval_loss existed read it as NULL (NaN: no validation); before
// capture_after_ms, as 0 (the capture's work after a step was not measured).
inline constexpr std::array<AddedColumn, 2> kStepAddedColumns{{{"eval_loss", "NULL"}, {"capture_after_ms", "0"}}};
// Binds kStepColumns to parameters first.. (1-based); reads them from result columns first.. (0-based).
void bind_step(Stmt& stmt, int first, const StepRecord& step);
StepRecord read_step(const Stmt& stmt, int first);

// ---- op tables (sessions' op_stats; comparison_op_stats per variant) ----
inline constexpr auto kOpStatsColumns = std::to_array<std::string_view>(
    {"name", "module", "phase", "category", "input_dtypes", "input_shapes", "output_dtypes", "calls", "cpu_time_ns",
     "gpu_time_ns", "kernels", "tensor_core_kernels", "tensor_core_gpu_time_ns", "cast_calls", "cast_bytes",
     "cast_cpu_time_ns", "cast_gpu_time_ns", "tensor_core_eligible", "tensor_core_note", "top_level"});

// Stmt binds text without copying: the encoded lists live here until the statement ran.
struct EncodedOpStats {
  std::string input_dtypes, input_shapes, output_dtypes, step_cpu_ns, step_gpu_ns;
};
void bind_op_stats(Stmt& stmt, int first, const OpStats& row, EncodedOpStats& keep_alive);
OpStats read_op_stats(const Stmt& stmt, int first);

// Sessions' op_stats: kOpStatsColumns, then `compiled` (torch.compile's graph ops), then the
// per-step times of a short window (ProfilerOptions::op_step_samples; "" when not kept).
inline constexpr auto kSessionOpStatsColumns =
    concat_columns(kOpStatsColumns, std::to_array<std::string_view>({"compiled", "step_cpu_ns", "step_gpu_ns"}));
// Files written before `compiled` read as eager rows; before the per-step columns, as no samples.
inline constexpr std::array<AddedColumn, 3> kSessionOpStatsAddedColumns{
    {{"compiled", "0"}, {"step_cpu_ns", "NULL"}, {"step_gpu_ns", "NULL"}}};
void bind_session_op_stats(Stmt& stmt, int first, const OpStats& row, EncodedOpStats& keep_alive);
OpStats read_session_op_stats(const Stmt& stmt, int first);

// comparison_op_stats: the variant, kOpStatsColumns, then the profiled pass's
// per-step times ("12,0,15").
inline constexpr auto kComparisonOpStatsColumns =
    concat_columns(std::to_array<std::string_view>({"variant"}), kOpStatsColumns,
                   std::to_array<std::string_view>({"step_cpu_ns", "step_gpu_ns"}));
// Comparison files from before the per-step columns read as no samples.
inline constexpr std::array<AddedColumn, 2> kComparisonOpStatsAddedColumns{
    {{"step_cpu_ns", "NULL"}, {"step_gpu_ns", "NULL"}}};
void bind_comparison_op_stats(Stmt& stmt, int first, std::string_view variant, const OpStats& row,
                              EncodedOpStats& keep_alive);
// The row's op statistics; its variant (column first) is the caller's query key.
OpStats read_comparison_op_stats(const Stmt& stmt, int first);

// ---- comparison_steps and comparison_variants ----
inline constexpr auto kComparisonStepColumns =
    concat_columns(std::to_array<std::string_view>({"variant", "repeat"}), kStepColumns);
struct ComparisonStepRow {
  std::string variant;
  int64_t repeat = 0;
  StepRecord step;
};
void bind_comparison_step(Stmt& stmt, int first, std::string_view variant, int64_t repeat, const StepRecord& step);
ComparisonStepRow read_comparison_step(const Stmt& stmt, int first);

// What a variant is before it runs; profiled_steps follows once its profiled pass
// stored its op table (0 until then, the column's default).
inline constexpr auto kComparisonVariantDescriptionColumns =
    std::to_array<std::string_view>({"variant", "precision", "tf32", "scaler", "error"});
inline constexpr auto kComparisonVariantColumns =
    concat_columns(kComparisonVariantDescriptionColumns, std::to_array<std::string_view>({"profiled_steps"}));
// Binds kComparisonVariantDescriptionColumns; reads kComparisonVariantColumns (no repeats, no op table).
void bind_comparison_variant(Stmt& stmt, int first, const VariantRun& variant);
VariantRun read_comparison_variant(const Stmt& stmt, int first);

// ---- meta: key/value text pairs (session_meta_keys.h) ----
inline constexpr auto kMetaColumns = std::to_array<std::string_view>({"key", "value"});
void bind_meta(Stmt& stmt, int first, std::string_view key, std::string_view value);
std::pair<std::string, std::string> read_meta(const Stmt& stmt, int first);

// ---- optimizer_steps, scheduler_steps ----
inline constexpr auto kOptimizerStepColumns = std::to_array<std::string_view>(
    {"step", "optimizer", "name", "stepped", "found_inf", "skipped", "unscale_calls", "lr", "loss_scale",
     "loss_scale_after"});
void bind_optimizer_step(Stmt& stmt, int first, const OptimizerStepRecord& row);
OptimizerStepRecord read_optimizer_step(const Stmt& stmt, int first);

inline constexpr auto kSchedulerStepColumns =
    std::to_array<std::string_view>({"call", "scheduler", "name", "optimizer", "step", "after_skipped", "lr"});
void bind_scheduler_step(Stmt& stmt, int first, const SchedulerStepRecord& row);
SchedulerStepRecord read_scheduler_step(const Stmt& stmt, int first);

// ---- ops (row_codec_gpu.cpp) ----
// A session stores each op signature once (op_signatures) and each op call as
// integers referring to it (op_calls); the view `ops` joins them into kOpColumns,
// which is also the table `ops` of files before format 2. Readers read `ops`.
inline constexpr auto kOpColumns = std::to_array<std::string_view>(
    {"id", "parent_id", "step", "name", "phase", "category", "module", "sequence_nr", "forward_op_id", "depth",
     "thread_id", "start_ns", "end_ns", "input_dtypes", "input_shapes", "output_dtypes", "cast_bytes",
     "autograd_node"});
OpRecord read_op(const Stmt& stmt, int first);

inline constexpr auto kOpSignatureColumns = std::to_array<std::string_view>(
    {"id", "name", "phase", "category", "module", "input_dtypes", "input_shapes", "output_dtypes"});
struct EncodedOpSignature {
  std::string input_dtypes, input_shapes, output_dtypes;
};
void bind_op_signature(Stmt& stmt, int first, int64_t id, const OpRecord& op, EncodedOpSignature& keep_alive);
// The signature's fields of an OpRecord (name, phase, category, module, dtypes, shapes).
OpRecord read_op_signature(const Stmt& stmt, int first);

inline constexpr auto kOpCallColumns = std::to_array<std::string_view>(
    {"id", "parent_id", "step", "signature_id", "sequence_nr", "forward_op_id", "depth", "thread_id", "start_ns",
     "end_ns", "cast_bytes", "autograd_node"});
void bind_op_call(Stmt& stmt, int first, const OpRecord& op, int64_t signature_id);
// The call's fields into `op` (the others are left as they are); returns its signature_id.
int64_t read_op_call(const Stmt& stmt, int first, OpRecord& op);

// ---- kernel_names, kernels, kernel_stats, kernel_ops, kernel_enclosing_ops ----
// Kernel names repeat millions of times: kernels and the kernel table refer to them by name_id.
inline constexpr auto kKernelNameColumns = std::to_array<std::string_view>({"name"});

// tensor_core_measured is reserved for hardware-counter confirmation (not built):
// written NULL, not read.
inline constexpr auto kKernelColumns = std::to_array<std::string_view>(
    {"kind", "correlation_id", "op_id", "step", "name_id", "device", "stream", "start_ns", "end_ns", "grid_x",
     "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread", "shared_memory_bytes", "bytes",
     "tensor_core_by_name", "tensor_core_measured"});
void bind_kernel(Stmt& stmt, int first, const KernelRecord& kernel, int64_t name_id);
// The kernel rows are read with their names: kKernelColumns from kKernelsWithNames,
// name_id's place taken by the name.
inline constexpr const char* kKernelsWithNames = "kernels k JOIN kernel_names n ON n.id = k.name_id";
std::string kernel_select_columns();
KernelRecord read_kernel(const Stmt& stmt, int first);

// The profiler's kernel table, a row per name (grid and block of its first call);
// measured_calls and measured_tensor_core_calls are reserved like
// tensor_core_measured: written 0, not read.
inline constexpr auto kKernelStatColumns = std::to_array<std::string_view>(
    {"name_id", "kind", "calls", "total_ns", "min_ns", "max_ns", "tensor_core_calls", "measured_calls",
     "measured_tensor_core_calls", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"});
void bind_kernel_stat(Stmt& stmt, int first, const KernelSummary& row, int64_t name_id);
// Everything but the name (kernel_names') and the ops (kernel_ops').
struct KernelStatRow {
  int64_t name_id = 0;
  KernelSummary summary;
};
KernelStatRow read_kernel_stat(const Stmt& stmt, int first);

// kernel_ops (the ops that launched a kernel) and kernel_enclosing_ops (the ops it
// ran inside): calls per kernel name and op name, the same columns.
inline constexpr auto kKernelOpColumns = std::to_array<std::string_view>({"name_id", "op_name", "calls"});
void bind_kernel_op(Stmt& stmt, int first, int64_t name_id, std::string_view op_name, int64_t calls);

// ---- gradients, activations (row_codec_numerics.cpp) ----
inline constexpr auto kGradientColumns = std::to_array<std::string_view>(
    {"step", "parameter", "loss_scale", "numel", "log2_histogram", "zero_fraction", "nonfinite_fraction",
     "fp16_underflow_fraction", "fp16_subnormal_fraction", "fp16_overflow_fraction", "min_abs_nonzero", "max_abs",
     "norm", "bf16_underflow_fraction", "bf16_subnormal_fraction", "bf16_overflow_fraction",
     "fp8_e4m3_underflow_fraction", "fp8_e4m3_subnormal_fraction", "fp8_e4m3_overflow_fraction",
     "fp8_e5m2_underflow_fraction", "fp8_e5m2_subnormal_fraction", "fp8_e5m2_overflow_fraction"});
// Added to format 1 with the fp8 shares: sessions from before read them as NULL (NaN).
inline constexpr std::array<AddedColumn, 9> kGradientAddedColumns{{{"bf16_underflow_fraction", "NULL"},
                                                                   {"bf16_subnormal_fraction", "NULL"},
                                                                   {"bf16_overflow_fraction", "NULL"},
                                                                   {"fp8_e4m3_underflow_fraction", "NULL"},
                                                                   {"fp8_e4m3_subnormal_fraction", "NULL"},
                                                                   {"fp8_e4m3_overflow_fraction", "NULL"},
                                                                   {"fp8_e5m2_underflow_fraction", "NULL"},
                                                                   {"fp8_e5m2_subnormal_fraction", "NULL"},
                                                                   {"fp8_e5m2_overflow_fraction", "NULL"}}};
// The histogram blob is bound without a copy: it lives in `histogram_keep_alive`.
void bind_gradient(Stmt& stmt, int first, const GradientSample& sample, std::string& histogram_keep_alive);
GradientSample read_gradient(const Stmt& stmt, int first);

inline constexpr auto kActivationColumns = std::to_array<std::string_view>(
    {"step", "ord", "module", "dtype", "numel", "nonfinite_fraction", "max_abs", "fp16_underflow_fraction",
     "fp16_subnormal_fraction", "fp16_overflow_fraction", "bf16_underflow_fraction", "bf16_subnormal_fraction",
     "bf16_overflow_fraction", "fp8_e4m3_underflow_fraction", "fp8_e4m3_subnormal_fraction",
     "fp8_e4m3_overflow_fraction", "fp8_e5m2_underflow_fraction", "fp8_e5m2_subnormal_fraction",
     "fp8_e5m2_overflow_fraction"});
void bind_activation(Stmt& stmt, int first, const ActivationSample& sample);
ActivationSample read_activation(const Stmt& stmt, int first);

// ---- readiness, backward_checks ----
// Precision readiness: a row per sampled step, layer, tensor and format (keys:
// tensor_role_key, QuantFormatSpec::key), the format's QuantMetrics sums; the
// scale exponents NULL where no scaling group held a nonzero value.
inline constexpr auto kReadinessColumns = std::to_array<std::string_view>(
    {"step", "layer", "tensor", "format", "elements", "nonzero", "flushed", "saturated", "signal", "noise",
     "scale_log2_min", "scale_log2_max"});
void bind_readiness(Stmt& stmt, int first, const ReadinessSample& sample, QuantFormat format);
// A row as a sample holding that one format's sums (the others empty, so that it
// merges into ReadinessTotals as is); nothing for a tensor or format this build
// does not know (a newer file's).
std::optional<ReadinessSample> read_readiness(const Stmt& stmt, int first);

inline constexpr auto kBackwardCheckColumns = std::to_array<std::string_view>(
    {"step", "skipped", "gradients", "nonfinite", "module", "side", "position", "dtype"});
// Files written before dtype existed read it as NULL ("": not known).
inline constexpr std::array<AddedColumn, 1> kBackwardCheckAddedColumns{{{"dtype", "NULL"}}};
void bind_backward_check(Stmt& stmt, int first, const BackwardCheck& row);
BackwardCheck read_backward_check(const Stmt& stmt, int first);

// torch.compile'd code's kernels (issue #28), one row per kernel of a compiled graph
// (CompiledKernelRow), the graph ops a kernel computes in `ops` as a JSON array of
// {node, name, module, category, input_dtypes, output_dtypes}.
inline constexpr auto kCompiledKernelColumns = std::to_array<std::string_view>(
    {"graph", "phase", "kind", "kernel", "ordinal", "ops", "calls", "cpu_time_ns", "kernels", "tensor_core_kernels",
     "gpu_time_ns", "first_call_gpu_ns"});
// Files written before the GPU's kernels were joined read as no GPU kernel, and files
// written before first calls were told apart as none in first calls.
inline constexpr std::array<AddedColumn, 4> kCompiledKernelAddedColumns{
    {{"kernels", "0"}, {"tensor_core_kernels", "0"}, {"gpu_time_ns", "0"}, {"first_call_gpu_ns", "0"}}};
// The ops' JSON stays alive in `ops_json` until the statement ran.
void bind_compiled_kernel(Stmt& stmt, int first, const CompiledKernelRow& row, std::string& ops_json);
CompiledKernelRow read_compiled_kernel(const Stmt& stmt, int first);

// ---- the tables as a whole ----
struct TableLayout {
  std::string_view table;
  std::vector<std::string_view> columns;  // all of them, in CREATE TABLE order
};
// Every table of a session file (kSchemaSql), then the tables a comparison file adds.
const std::vector<TableLayout>& session_table_layouts();
const std::vector<TableLayout>& comparison_table_layouts();

}  // namespace ampscope::profiler::store_detail
