#pragma once
// Reads a session file (.ampscope) read-only: a finished one, one a writer is still
// filling (WAL), or one left by a killed process (its -wal file beside it). Every
// failure, including a foreign, newer, truncated or corrupt file, is a StoreError
// with a one-line message. Queries read the writer's aggregates (op_stats,
// kernel_stats) or use an index, so they stay cheap on sessions with millions of
// kernels. Const methods may be called from several threads (the connection
// serializes them).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analysis/compiled_kernels.h"
#include "profiler/analysis/quantization_readiness.h"
#include "profiler/records.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::profiler {

class SessionReader {
 public:
  static SessionReader open(const std::string& path);
  SessionReader(SessionReader&&) noexcept;
  SessionReader& operator=(SessionReader&&) noexcept;
  ~SessionReader();

  const std::string& path() const;
  int format_version() const { return format_version_; }
  // The open connection, for the store's own readers of tables beside the
  // session's (comparison_store.cpp's comparison tables).
  const store_detail::Db& database() const;

  SessionMeta meta() const;
  std::optional<std::string> meta_value(const std::string& key) const;
  std::map<std::string, std::string> meta_values() const;

  std::vector<StepRecord> steps() const;  // by step
  std::vector<OpStats> op_stats() const;  // in stored order
  // Ops of steps first_step..last_step (inclusive), by start time.
  std::vector<OpRecord> ops(int64_t first_step = std::numeric_limits<int64_t>::min(),
                            int64_t last_step = std::numeric_limits<int64_t>::max()) const;
  int64_t op_count() const;
  // The distinct steps with recorded ops, ascending: one index seek per such step, never a scan.
  std::vector<int64_t> op_steps() const;
  void for_each_op(int64_t first_step, int64_t last_step,
                   const std::function<void(const OpRecord&)>& fn) const;

  // Kernels overlapping [start_ns, end_ns), by start time, at most `limit`.
  std::vector<KernelRecord> kernels(int64_t start_ns = std::numeric_limits<int64_t>::min(),
                                    int64_t end_ns = std::numeric_limits<int64_t>::max(),
                                    size_t limit = std::numeric_limits<size_t>::max()) const;
  void for_each_kernel(int64_t start_ns, int64_t end_ns,
                       const std::function<void(const KernelRecord&)>& fn) const;
  // Kernels of steps first_step..last_step (inclusive), by start time.
  std::vector<KernelRecord> kernels_in_steps(int64_t first_step, int64_t last_step) const;
  int64_t kernel_count() const;
  std::vector<KernelRecord> kernels_for_op(uint64_t op_id) const;
  // By total time, descending. grid/block are those of the first stored call of each name.
  std::vector<KernelSummary> top_kernels(size_t n) const;

  std::vector<GradientSample> gradients(int64_t step) const;  // by parameter
  std::vector<int64_t> gradient_steps() const;
  // Each sampled step's total gradient norm, by step (two columns read, not the samples).
  std::vector<SampledGradientNorm> sampled_gradient_norms() const;
  std::vector<GradientSample> latest_gradients() const;  // of the last sampled step
  // By step, then optimizer. Empty for sessions without the table (written before it
  // existed) and for the built-in engine's sessions.
  std::vector<OptimizerStepRecord> optimizer_steps() const;
  // Module outputs of one sampled step, in forward completion order (none in
  // sessions recorded before activation ranges were).
  std::vector<ActivationSample> activations(int64_t step) const;
  std::vector<int64_t> activation_steps() const;
  // The first module whose output overflowed fp16, at the earliest sampled step with one.
  std::optional<ActivationSample> first_fp16_overflow() const;
  // Precision readiness per layer and tensor, every sampled step added up, read
  // row by row (the rows are never all in memory). Empty for sessions recorded
  // before readiness was.
  ReadinessTotals readiness() const;
  // lr_scheduler.step() calls of a Python loop, in call order; backward passes checked
  // for non-finite gradients, by step. Empty for sessions written before they existed.
  std::vector<SchedulerStepRecord> scheduler_steps() const;
  std::vector<BackwardCheck> backward_checks() const;
  // torch.compile'd code's kernels, as stored (by graph, then in call order). Empty
  // for sessions without compiled code or written before the table existed.
  std::vector<CompiledKernelRow> compiled_kernels() const;

  // profiler::category_totals over the top-level rows of the stored op table and the
  // compiled kernel rows (the compiled regions' time by what their kernels computed);
  // it never scans ops or kernels.
  std::vector<CategoryTotals> category_totals() const;
  // GPU time of activity that no op launched (kernels rows with op_id 0); from the
  // kernels_by_op index. Not part of any category.
  int64_t unattributed_gpu_ns() const;  // of the whole session, the warm-up step's included
  // Over the kernel table's steps (the warm-up step left out where the table left it out,
  // warmup_step.h): the GPU time with no op, and all traced GPU time (the table's total).
  GpuAttribution gpu_attribution() const;

 private:
  struct Impl;
  explicit SessionReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  const char* op_calls_table() const;
  int64_t longest_kernel_ns() const;  // of any stored kernel
  int format_version_ = 0;
};

}  // namespace ampscope::profiler
