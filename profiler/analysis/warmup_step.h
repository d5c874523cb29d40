#pragma once
// The run's first step, left out of the op table. Its ops carry one-off costs no later
// step pays (lazy initialisation, oneDNN/cuBLAS handles and plans, first allocations):
// in a 20-step run of examples/amp_typical.py on the CPU, step 1's ops took 115 ms and
// the other 19 steps' 47 ms together, so "cross_entropy_loss takes 28 % of op time" was
// step 1's cross_entropy (40.6 ms once, 0.05 ms a step after). torch.profiler's schedule skips
// warm-up steps for the same reason. The capture aggregates step 1's ops apart
// (OpAggregator::keep_step_apart); the table keeps the other steps, and what was left out
// is stored (meta kWarmupLeftOut) and said by summary, the report, the JSON summary and the
// GUI. Step 1 stays in where it is the only recorded step. Where torch.compile compiled in
// it, its compiles stay (in no category, said apart by compile_time) and the rest is left
// out: in a 20-step run of examples/compiled_bf16.py on the CPU, step 1's ops took 70 ms
// besides compiling (the compiled region's first call 28 ms against 0.85 ms after), the
// other 19 steps' 33 ms together. The compiled graphs' node rows count the graphs' calls of
// the table's steps (the Python capture counts step 1's apart).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

inline constexpr int64_t kWarmupStep = 1;

// The warm-up step's top-level ops, summed as category_totals sums them, and its kernels.
struct WarmupLeftOut {
  int64_t step = kWarmupStep;
  int64_t calls = 0;
  int64_t cpu_time_ns = 0;
  int64_t gpu_time_ns = 0;
  // The kernel table (and the GPU attribution beside it) leaves the step out with the op
  // table: every kernel its ops launched, and those with no op that ran in it (a kernel's
  // `step`). False in sessions whose kernel table kept it.
  bool kernels_left_out = false;
  int64_t kernels = 0;
  int64_t kernel_gpu_ns = 0;
  int64_t unattributed_gpu_ns = 0;  // of kernel_gpu_ns
  int64_t longest_kernel_ns = 0;    // no kernel table row bounds it any more
};

struct OpTable {
  std::vector<OpStats> rows;
  std::optional<WarmupLeftOut> warmup_left_out;  // set where the warm-up step's rows were left out
};

// `steady`: the rows of every step but the warm-up one; `warmup`: its rows (OpAggregator's
// op_stats and warmup_op_stats). `other_steps_profiled`: a completed step besides the warm-up
// one had its ops recorded. The warm-up rows are left out where there is such a step, but
// for its compiles (kTorchCompileOp rows), which stay as top-level rows (the rows that held
// them are gone) and whose time the left-out figures do not count; otherwise they are added
// in, row by row, the warm-up step's rows first (the order a table aggregated in one piece has).
OpTable op_table_without_warmup(std::vector<OpStats> steady, std::vector<OpStats> warmup, bool other_steps_profiled);

// The meta value (JSON: step, calls, cpu_ns, gpu_ns, and where the kernels were left out
// kernels, kernel_ns, unattributed_ns, longest_kernel_ns) and back; nullopt where absent or unreadable.
std::string warmup_meta_value(const WarmupLeftOut& left_out);
std::optional<WarmupLeftOut> warmup_left_out_from_meta(const std::map<std::string, std::string>& meta);
// The same from the value alone (a reader's one-key lookup).
std::optional<WarmupLeftOut> warmup_left_out_from_meta_value(const std::string& value);

// "step 1 left out as warm-up: its ops took 115 ms CPU (2.8× the other 19 profiled steps
// together); one-off costs (...) that no later step pays", against the table's top-level time
// (`totals`, category_totals) over its `steps` profiled steps; GPU time too where any was traced.
std::string warmup_left_out_text(const WarmupLeftOut& left_out, const std::vector<CategoryTotals>& totals,
                                 int64_t steps);
// "step 1 left out as warm-up: its 1,234 kernels took 56.2 ms (3.1% of the other 19 profiled
// steps together; 0.4 ms of it with no op)", against the kernel table's traced time
// (`table`, the GPU attribution over its steps); "" where the kernels were not left out.
std::string warmup_kernels_text(const WarmupLeftOut& left_out, const GpuAttribution& table, int64_t steps);

}  // namespace ampscope::profiler
