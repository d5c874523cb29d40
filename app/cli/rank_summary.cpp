#include "app/cli/rank_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "profiler/store/session_reader.h"

namespace ampscope::cli {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int print_rank_summary(const std::vector<std::string>& paths) {
  struct Rank {
    std::string path;
    std::vector<profiler::StepRecord> steps;
    double median_ms = 0, collective_share = 0;
    int64_t skipped = 0;
  };
  std::vector<Rank> ranks;
  for (const auto& path : paths) {
    const auto session = profiler::SessionReader::open(path);
    Rank r{path, session.steps()};
    std::vector<double> times;
    for (const auto& s : r.steps) {
      times.push_back(s.step_time_ms);
      r.skipped += s.skipped;
    }
    r.median_ms = median(times);
    // Top-level op time in collectives (torch.distributed's c10d:: ops) over all top-level op time.
    int64_t all = 0, collective = 0;
    for (const auto& row : session.op_stats()) {
      if (!row.top_level) continue;
      all += row.cpu_time_ns;
      if (row.name.rfind("c10d::", 0) == 0) collective += row.cpu_time_ns;
    }
    r.collective_share = all > 0 ? static_cast<double>(collective) / static_cast<double>(all) : 0.0;
    ranks.push_back(std::move(r));
  }
  double fastest = ranks.front().median_ms;
  for (const auto& r : ranks) fastest = std::min(fastest, r.median_ms);
  fmt::print("{} ranks\n  {:<5} {:>6} {:>14} {:>10} {:>8} {:>14} {:>12}  {}\n", ranks.size(), "rank", "steps",
             "median step ms", "vs fastest", "skipped", "last scale", "collectives", "file");
  for (size_t i = 0; i < ranks.size(); ++i) {
    const Rank& r = ranks[i];
    fmt::print("  {:<5} {:>6} {:>14.2f} {:>9.2f}x {:>8} {:>14g} {:>11.1f}%  {}\n", i, r.steps.size(), r.median_ms,
               fastest > 0 ? r.median_ms / fastest : 1.0, r.skipped,
               r.steps.empty() ? 1.0 : r.steps.back().loss_scale, 100.0 * r.collective_share, r.path);
  }
  // GradScaler state must agree across ranks (DDP all-reduces the gradients, so every
  // rank sees the same infs); a disagreement means the ranks trained differently.
  std::map<int64_t, std::vector<double>> scales;
  for (const auto& r : ranks)
    for (const auto& s : r.steps) scales[s.step].push_back(s.loss_scale);
  int64_t disagree = 0, first = 0;
  for (const auto& [step, v] : scales) {
    if (v.size() == ranks.size() && std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); })) continue;
    if (disagree++ == 0) first = step;
  }
  if (disagree == 0)
    fmt::print("  loss scale: the same on every rank at every step\n");
  else
    fmt::print("  loss scale: ranks disagree (or a rank lacks the step) at {} steps, first at step {}\n", disagree, first);
  return 0;
}

}  // namespace ampscope::cli
