#include "profiler/store/rank_comparison.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "profiler/store/session_view.h"

namespace ampscope::profiler {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<int64_t> rank_from_path(std::string_view path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const auto at = name.rfind(".rank");
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + 5;
  int64_t rank = 0;
  const size_t first_digit = i;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && i - first_digit < 9)
    rank = rank * 10 + (name[i++] - '0');
  if (i == first_digit || (i < name.size() && name[i] != '.')) return std::nullopt;
  return rank;
}

std::string rank_session_path(const std::string& path, int64_t rank) {
  // os.path.splitext's split: the last dot of the file name, not a leading one.
  std::filesystem::path base(path);
  const std::string extension = base.extension().string();
  base.replace_extension();
  return base.string() + ".rank" + std::to_string(rank) + (extension.empty() ? ".ampscope" : extension);
}

bool is_collective_op(std::string_view name) { return name.rfind("c10d::", 0) == 0; }

RankComparison compare_ranks(const std::vector<SessionView>& sessions) {
  RankComparison out;
  for (size_t i = 0; i < sessions.size(); ++i) {
    const SessionView& s = sessions[i];
    RankRow r;
    r.path = s.path;
    r.rank = rank_from_path(s.path).value_or(static_cast<int64_t>(i));
    r.steps = static_cast<int64_t>(s.steps.size());
    std::vector<double> times;
    times.reserve(s.steps.size());
    for (const auto& step : s.steps) {
      times.push_back(step.step_time_ms);
      r.skipped += step.skipped;
    }
    r.median_step_ms = median(std::move(times));
    r.last_loss_scale = s.steps.empty() ? 1.0 : s.steps.back().loss_scale;
    int64_t all = 0;
    for (const auto& row : s.op_stats) {
      // Compiling (torch.compile inside the profiled steps) is no op time: seconds of it hid the collectives.
      if (!row.top_level || row.name == kTorchCompileOp) continue;
      all += row.cpu_time_ns;
      if (is_collective_op(row.name)) r.collective_cpu_ns += row.cpu_time_ns;
    }
    r.collective_share = all > 0 ? static_cast<double>(r.collective_cpu_ns) / static_cast<double>(all) : 0.0;
    r.step_records = s.steps;
    out.ranks.push_back(std::move(r));
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });
  if (out.ranks.empty()) return out;
  double fastest = out.ranks.front().median_step_ms;
  for (const auto& r : out.ranks) fastest = std::min(fastest, r.median_step_ms);
  for (size_t i = 0; i < out.ranks.size(); ++i) {
    RankRow& r = out.ranks[i];
    r.vs_fastest = fastest > 0 ? r.median_step_ms / fastest : 1.0;
    if (r.median_step_ms > out.ranks[out.slowest].median_step_ms) out.slowest = i;
  }
  // GradScaler state must agree across ranks (DDP all-reduces the gradients, so every
  // rank sees the same infs); a disagreement means the ranks trained differently.
  std::map<int64_t, std::vector<double>> scales;
  for (const auto& r : out.ranks)
    for (const auto& s : r.step_records) scales[s.step].push_back(s.loss_scale);
  for (const auto& [step, used] : scales) {
    const double first = used.front();
    const bool agree = used.size() == out.ranks.size() &&
                       std::all_of(used.begin(), used.end(), [first](double x) { return x == first; });
    if (agree) continue;
    if (out.scale_disagreements++ == 0) out.first_disagreement_step = step;
  }
  return out;
}

std::vector<StepRecord> job_steps(const std::vector<std::vector<StepRecord>>& ranks) {
  if (ranks.empty()) return {};
  std::map<int64_t, std::vector<const StepRecord*>> by_step;
  for (const auto& rank : ranks)
    for (const StepRecord& s : rank) by_step[s.step].push_back(&s);
  std::vector<StepRecord> job;
  for (const auto& [step, records] : by_step) {
    if (records.size() != ranks.size()) continue;  // a rank that stopped early: not a step of the job
    StepRecord j = *records.front();
    double loss = 0.0, samples = 0.0;
    for (const StepRecord* r : records) {
      j.step_time_ms = std::max(j.step_time_ms, r->step_time_ms);
      j.capture_after_ms = std::max(j.capture_after_ms, r->capture_after_ms);
      j.mem_allocated_bytes = std::max(j.mem_allocated_bytes, r->mem_allocated_bytes);
      j.mem_reserved_bytes = std::max(j.mem_reserved_bytes, r->mem_reserved_bytes);
      j.mem_peak_bytes = std::max(j.mem_peak_bytes, r->mem_peak_bytes);
      j.end_ns = std::max(j.end_ns, r->end_ns);
      loss += r->loss;
      samples += r->samples_per_second * r->step_time_ms;  // the rank's samples, x 1000
    }
    j.loss = loss / static_cast<double>(records.size());
    j.samples_per_second = j.step_time_ms > 0.0 ? samples / j.step_time_ms : 0.0;
    if (has_eval_loss(j)) {
      double eval = 0.0;
      for (const StepRecord* r : records) eval += r->eval_loss;
      j.eval_loss = eval / static_cast<double>(records.size());
    }
    job.push_back(j);
  }
  return job;
}

std::vector<SessionView> load_rank_sessions(const std::vector<std::string>& paths) {
  SessionViewOptions options;
  options.top_kernels = 0;
  options.gradient_summaries = 0;
  std::vector<SessionView> sessions;
  sessions.reserve(paths.size());
  for (const auto& path : paths) sessions.push_back(load_session_view(path, options));
  return sessions;
}

RankComparison compare_rank_files(const std::vector<std::string>& paths) {
  return compare_ranks(load_rank_sessions(paths));
}

}  // namespace ampscope::profiler
