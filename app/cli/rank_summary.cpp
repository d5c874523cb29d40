#include "app/cli/rank_summary.h"

#include <fmt/format.h>

#include "profiler/store/rank_comparison.h"

namespace ampscope::cli {

int print_rank_summary(const std::vector<std::string>& paths) {
  const profiler::RankComparison ranks = profiler::compare_rank_files(paths);
  fmt::print("{} ranks\n  {:<5} {:>6} {:>14} {:>10} {:>8} {:>14} {:>12}  {}\n", ranks.ranks.size(), "rank", "steps",
             "median step ms", "vs fastest", "skipped", "last scale", "collectives", "file");
  for (const auto& r : ranks.ranks)
    fmt::print("  {:<5} {:>6} {:>14.2f} {:>9.2f}x {:>8} {:>14g} {:>11.1f}%  {}\n", r.rank, r.steps, r.median_step_ms,
               r.vs_fastest, r.skipped, r.last_loss_scale, 100.0 * r.collective_share, r.path);
  if (ranks.scale_disagreements == 0)
    fmt::print("  loss scale: the same on every rank at every step\n");
  else
    fmt::print("  loss scale: ranks disagree (or a rank lacks the step) at {} steps, first at step {}\n",
               ranks.scale_disagreements, ranks.first_disagreement_step);
  return 0;
}

}  // namespace ampscope::cli
