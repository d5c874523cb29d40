#pragma once
// Rows that more than one table holds in the same columns: steps (sessions'
// `steps`, comparisons' `comparison_steps`) and op table rows (`op_stats`,
// `comparison_op_stats`); and the newer session tables' rows (readiness,
// scheduler_steps, backward_checks), whose column order is written here once for
// the writer and the reader. One place binds and reads them, so the tables cannot drift.
#include <string>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/records.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler::store_detail {

inline constexpr const char* kStepColumns =
    "step,loss,lr,loss_scale,found_inf,skipped,growth_tracker,grad_norm,step_time_ms,"
    "samples_per_second,mem_allocated_bytes,mem_reserved_bytes,mem_peak_bytes,end_ns,eval_loss";
inline constexpr int kStepColumnCount = 15;
// kStepColumns to SELECT from `table`: files written before eval_loss existed read it
// as NULL (NaN: no validation).
std::string step_select_columns(const Db& db, const char* table);

inline constexpr const char* kOpStatsColumns =
    "name,module,phase,category,input_dtypes,input_shapes,output_dtypes,calls,cpu_time_ns,"
    "gpu_time_ns,kernels,tensor_core_kernels,tensor_core_gpu_time_ns,cast_calls,cast_bytes,"
    "cast_cpu_time_ns,cast_gpu_time_ns,tensor_core_eligible,tensor_core_note,top_level";
inline constexpr int kOpStatsColumnCount = 20;

// Binds kStepColumns to parameters first..first+14.
void bind_step(Stmt& stmt, int first, const StepRecord& step);
// Reads kStepColumns from result columns first..first+14.
StepRecord read_step(const Stmt& stmt, int first);

// Stmt binds text without copying: the encoded lists live here until the statement ran.
struct EncodedOpStats {
  std::string input_dtypes, input_shapes, output_dtypes;
};
void bind_op_stats(Stmt& stmt, int first, const OpStats& row, EncodedOpStats& keep_alive);
OpStats read_op_stats(const Stmt& stmt, int first);

// Sessions' op_stats has one column more than comparison_op_stats: `compiled`, after
// kOpStatsColumns. Files written before it lack it and read as eager rows (0).
inline constexpr const char* kOpStatsCompiledColumn = "compiled";
std::string op_stats_select_columns(const Db& db);

// Precision readiness: a row per sampled step, layer, tensor and format (keys:
// tensor_role_key, QuantFormatSpec::key), the format's QuantMetrics sums; the
// scale exponents NULL where no scaling group held a nonzero value.
inline constexpr const char* kReadinessColumns =
    "step,layer,tensor,format,elements,nonzero,flushed,saturated,signal,noise,scale_log2_min,scale_log2_max";
inline constexpr int kReadinessColumnCount = 12;
void bind_readiness(Stmt& stmt, int first, const ReadinessSample& sample, QuantFormat format);
// A row as a sample holding that one format's sums (the others empty, so that it
// merges into ReadinessTotals as is); nothing for a tensor or format this build
// does not know (a newer file's).
std::optional<ReadinessSample> read_readiness(const Stmt& stmt, int first);
inline constexpr const char* kSchedulerStepColumns = "call,scheduler,name,optimizer,step,after_skipped,lr";
inline constexpr int kSchedulerStepColumnCount = 7;
void bind_scheduler_step(Stmt& stmt, int first, const SchedulerStepRecord& row);
SchedulerStepRecord read_scheduler_step(const Stmt& stmt, int first);

inline constexpr const char* kBackwardCheckColumns = "step,skipped,gradients,nonfinite,module,side,position";
inline constexpr int kBackwardCheckColumnCount = 7;
void bind_backward_check(Stmt& stmt, int first, const BackwardCheck& row);
BackwardCheck read_backward_check(const Stmt& stmt, int first);

// torch.compile'd code's kernels (issue #28), one row per call of a compiled graph
// (CompiledKernelRow), the graph ops a kernel computes in `ops` as a JSON array of
// {node, name, module, category, input_dtypes, output_dtypes}.
inline constexpr const char* kCompiledKernelColumns = "graph,phase,kind,kernel,ordinal,ops,calls,cpu_time_ns";
inline constexpr int kCompiledKernelColumnCount = 8;
// The ops' JSON stays alive in `ops_json` until the statement ran.
void bind_compiled_kernel(Stmt& stmt, int first, const CompiledKernelRow& row, std::string& ops_json);
CompiledKernelRow read_compiled_kernel(const Stmt& stmt, int first);

}  // namespace ampscope::profiler::store_detail
