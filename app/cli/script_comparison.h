#pragma once
// `ampscope run --compare fp32,bf16 [--repeats N] [--warmup W] [--max-steps S] SCRIPT`: a
// precision comparison of the user's own script, the same file `ampscope compare` writes
// for the built-in models (profiler/analysis/comparison.h), read by summary, report and
// ampscope-ui alike.
//
// Each run is a child `python -m ampscope run --precision V --max-steps S` (the script's
// AMP regions entered in V; the script stops as step S+1 would begin): per repeat every
// precision in turn (interleaved, so drift of the machine hits all alike), recording no op
// and taking no range sample, for the step times; then one profiled run per precision of
// W + P steps whose last P are recorded, for the per-op table. The children's output goes
// to a log per run; a failed run names its last line and ends that precision's runs.
// Under torchrun (--nproc-per-node N) each run is N ranks, and its steps are the job's
// (profiler::job_steps: the slowest rank's time, all ranks' samples, their mean loss); the op
// table and what describes the script are rank 0's.
#include <cstdint>
#include <string>
#include <vector>

namespace ampscope::cli {

struct ScriptComparisonPlan {
  std::string python;
  std::vector<std::string> script;  // [-m] SCRIPT ARGS..., as `python -m ampscope run` takes them
  std::string variants = "fp32,bf16";
  int64_t repeats = 3;
  int64_t warmup_steps = 5;
  int64_t max_steps = 0;  // 0: profiler::kDefaultComparedSteps
  int64_t profile_steps = 3;
  std::string out_path;
  bool overwrite = false;
  bool trace_gpu = true;
  // Each run as N ranks under torchrun on this machine (--nproc-per-node); 0: one process.
  int64_t nproc_per_node = 0;
};

// Runs the comparison and prints its tables; the exit code (2 for impossible settings,
// 1 when no precision finished a run, 130 when interrupted).
int run_script_comparison(const ScriptComparisonPlan& plan);

}  // namespace ampscope::cli
