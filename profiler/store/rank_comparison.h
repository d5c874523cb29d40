#pragma once
// The ranks of one distributed run side by side (one session per rank, as
// `ampscope run` writes them under torchrun: FILE.rank<R>.ampscope): step time per
// rank (stragglers), skipped steps, whether every rank used the same loss scale at
// every step (DDP all-reduces gradients, so GradScaler must agree), and the time
// in collectives. One aggregation for `ampscope summary`, the HTML report and the GUI.
// It compares sessions as the loader reads them (SessionView), so it sits in store/
// beside that loader, above the single-session analysis.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

struct SessionView;

struct RankRow {
  std::string path;
  int64_t rank = 0;  // from the file name (…rank<R>.ampscope), else its position
  int64_t steps = 0;
  double median_step_ms = 0.0;
  double vs_fastest = 1.0;  // median step / the fastest rank's median step
  int64_t skipped = 0;
  double last_loss_scale = 1.0;
  int64_t collective_cpu_ns = 0;  // top-level torch.distributed (c10d::) ops
  double collective_share = 0.0;  // of all top-level op CPU time
  std::vector<StepRecord> step_records;  // by step, for plots
};

struct RankComparison {
  std::vector<RankRow> ranks;  // by rank
  // Steps where the ranks' loss scales differ, or a rank lacks the step.
  int64_t scale_disagreements = 0;
  int64_t first_disagreement_step = 0;
  size_t slowest = 0;  // index into ranks of the largest median step

  // Within 10 % of the fastest is noise on a shared machine; beyond it one rank
  // holds every other back at each all-reduce.
  static constexpr double kStragglerRatio = 1.1;
  // ranks[index] is the straggler: the slowest of several, beyond kStragglerRatio.
  bool is_straggler(size_t index) const {
    return ranks.size() > 1 && index == slowest && ranks[slowest].vs_fastest > kStragglerRatio;
  }
  bool has_straggler() const { return is_straggler(slowest); }
};

// The rank in a file name: 3 for "run.rank3.ampscope"; nullopt when it has none.
std::optional<int64_t> rank_from_path(std::string_view path);
// The file a rank writes for `ampscope run --out path` under torchrun, as the Python package
// names it (ampscope._capture.rank_path): "run.rank3.ampscope" for ("run.ampscope", 3).
std::string rank_session_path(const std::string& path, int64_t rank);
// torch.distributed's collectives as the op observer sees them (c10d:: ops).
bool is_collective_op(std::string_view name);

RankComparison compare_ranks(const std::vector<SessionView>& sessions);

// The ranks' steps as the distributed job's, for a precision comparison of a torchrun script:
// the steps every rank recorded, each taking the slowest rank's time (every all-reduce waits
// for it), processing the ranks' samples together (samples/s: all their samples over that
// time), at the ranks' mean loss (the global batch's, with equal batches per rank), and the
// largest memory of any rank (each holds its own device). Loss scale, skips, learning rate and
// gradient norm are rank 0's (the first's): DDP's ranks agree on them, and compare_ranks says
// where they did not. By step; `ranks` in rank order.
std::vector<StepRecord> job_steps(const std::vector<std::vector<StepRecord>>& ranks);
// Rank session files read with what the comparison needs (no kernels, no gradient
// summaries). Throws StoreError naming a file that cannot be read.
std::vector<SessionView> load_rank_sessions(const std::vector<std::string>& paths);
RankComparison compare_rank_files(const std::vector<std::string>& paths);

}  // namespace ampscope::profiler
