#include "profiler/analysis/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "profiler/analysis/flop_count.h"
#include "profiler/analysis/gpu_peaks.h"
#include "profiler/analysis/op_family.h"

namespace ampscope::profiler {
double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

namespace {

Spread spread_of(const std::vector<double>& values) {
  if (values.empty()) return {};
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {median_of(values), *lo, *hi};
}

std::vector<double> measured_step_times(const std::vector<StepRecord>& steps, int64_t warmup_steps) {
  std::vector<double> times;
  for (const auto& s : steps)
    if (s.step > warmup_steps) times.push_back(s.step_time_ms);
  return times;
}

}  // namespace

double median_step_ms(const std::vector<StepRecord>& steps, int64_t warmup_steps) {
  return median_of(measured_step_times(steps, warmup_steps));
}

std::optional<size_t> baseline_index(const Comparison& comparison) {
  for (size_t i = 0; i < comparison.variants.size(); ++i)
    if (comparison.variants[i].variant == kBaselineVariant) return i;
  return std::nullopt;
}

std::vector<VariantSummary> summarize(const Comparison& comparison) {
  const std::optional<GpuPeak> gpu_peak =
      comparison.meta.device.rfind("cuda", 0) == 0 ? find_gpu_peak(comparison.meta.device_name) : std::nullopt;

  std::vector<VariantSummary> out;
  for (const auto& run : comparison.variants) {
    VariantSummary s;
    s.variant = run.variant;
    s.finished_repeats = static_cast<int64_t>(run.repeats.size());
    std::vector<double> all_times, final_losses;
    for (const auto& steps : run.repeats) {
      const auto times = measured_step_times(steps, comparison.warmup_steps);
      s.measured_steps += static_cast<int64_t>(times.size());
      all_times.insert(all_times.end(), times.begin(), times.end());
      s.repeat_median_ms.push_back(median_of(times));
      int64_t skipped = 0;
      for (const auto& step : steps) {
        skipped += step.skipped ? 1 : 0;
        s.peak_memory_bytes = std::max(s.peak_memory_bytes, step.mem_peak_bytes);
      }
      s.skipped_steps = std::max(s.skipped_steps, skipped);
      if (!steps.empty()) final_losses.push_back(steps.back().loss);
    }
    s.step_ms = spread_of(all_times);
    if (s.step_ms.median > 0.0)
      s.samples_per_second = static_cast<double>(comparison.effective_batch) / (s.step_ms.median / 1e3);
    // A diverged repeat's NaN loss must not vanish into a median of the others.
    const bool any_nan = std::any_of(final_losses.begin(), final_losses.end(), [](double v) { return std::isnan(v); });
    s.final_loss = any_nan ? std::numeric_limits<double>::quiet_NaN() : median_of(final_losses);
    s.flops_per_step = flops_per_step(run.op_stats, run.profiled_steps);
    if (s.flops_per_step > 0.0 && s.step_ms.median > 0.0)
      s.achieved_flops_per_second = s.flops_per_step / (s.step_ms.median / 1e3);
    if (gpu_peak) s.peak_flops_per_second = peak_for_variant(*gpu_peak, run.variant);
    if (s.peak_flops_per_second > 0.0) s.utilization = s.achieved_flops_per_second / s.peak_flops_per_second;
    out.push_back(std::move(s));
  }

  if (const auto base = baseline_index(comparison)) {
    const auto& base_medians = out[*base].repeat_median_ms;
    for (auto& s : out) {
      std::vector<double> ratios;
      const size_t pairs = std::min(base_medians.size(), s.repeat_median_ms.size());
      for (size_t r = 0; r < pairs; ++r)
        if (base_medians[r] > 0.0 && s.repeat_median_ms[r] > 0.0) ratios.push_back(base_medians[r] / s.repeat_median_ms[r]);
      s.speedup = spread_of(ratios);
    }
  }
  return out;
}

std::vector<OpComparisonRow> match_ops(const Comparison& comparison) {
  using Key = std::tuple<std::string, std::string, Phase, std::vector<Shape>>;
  struct Share {
    int64_t calls = 0;
    std::string category;
    std::vector<DtypeName> dtypes;
  };
  // The cell's time in each profiled step, summed over the rows it merges; `complete`
  // while every merged row carried per-step samples.
  struct StepSamples {
    std::vector<double> ns;
    bool complete = true;
  };
  std::map<Key, OpComparisonRow> rows;
  std::map<std::pair<Key, size_t>, Share> largest_share;
  std::map<std::pair<Key, size_t>, StepSamples> step_samples;
  std::map<std::pair<Key, size_t>, std::map<std::string, int64_t>> ran_as;  // op name -> time
  const size_t n = comparison.variants.size();

  for (size_t v = 0; v < n; ++v) {
    const auto& run = comparison.variants[v];
    if (run.profiled_steps <= 0) continue;
    const double steps = static_cast<double>(run.profiled_steps);
    const bool gpu_traced = std::any_of(run.op_stats.begin(), run.op_stats.end(),
                                        [](const OpStats& r) { return r.gpu_time_ns > 0; });
    for (const auto& op : run.op_stats) {
      if (!op.top_level) continue;
      Key key{matched_op_name(op.name), op.module, op.phase, matched_op_shapes(op.name, op.input_shapes)};
      auto [it, inserted] = rows.try_emplace(key);
      OpComparisonRow& row = it->second;
      if (inserted) {
        row.name = std::get<0>(key);
        row.module = op.module;
        row.phase = op.phase;
        row.input_shapes = std::get<3>(key);
        row.cells.resize(n);
        row.speedup.assign(n, 0.0);
      }
      OpVariantCell& cell = row.cells[v];
      cell.present = true;
      if (op.name != row.name) ran_as[{key, v}][op.name] += gpu_traced ? op.gpu_time_ns : op.cpu_time_ns;
      cell.calls_per_step += static_cast<double>(op.calls) / steps;
      cell.time_ns_per_step += static_cast<double>(gpu_traced ? op.gpu_time_ns : op.cpu_time_ns) / steps;
      cell.cast_ns_per_step += static_cast<double>(gpu_traced ? op.cast_gpu_time_ns : op.cast_cpu_time_ns) / steps;
      Share& share = largest_share[{key, v}];
      if (op.calls > share.calls) share = {op.calls, std::string(to_string(op.category)), op.input_dtypes};
      StepSamples& samples = step_samples[{key, v}];
      const auto& per_step = gpu_traced ? op.step_gpu_time_ns : op.step_cpu_time_ns;
      if (per_step.empty()) samples.complete = false;
      if (samples.ns.size() < per_step.size()) samples.ns.resize(per_step.size(), 0.0);
      for (size_t i = 0; i < per_step.size(); ++i) samples.ns[i] += static_cast<double>(per_step[i]);
    }
  }
  // The median step where the op ran in every profiled step: one preempted step then
  // moves nothing, where the mean would take its whole outlier.
  for (auto& [key_and_variant, samples] : step_samples) {
    const auto& run = comparison.variants[key_and_variant.second];
    const bool every_step = samples.complete && static_cast<int64_t>(samples.ns.size()) == run.profiled_steps &&
                            std::all_of(samples.ns.begin(), samples.ns.end(), [](double t) { return t > 0.0; });
    if (!every_step) continue;
    OpVariantCell& cell = rows[key_and_variant.first].cells[key_and_variant.second];
    cell.time_ns_per_step = median_of(samples.ns);
    cell.per_step_median = true;
  }
  for (auto& [key_and_variant, share] : largest_share) {
    OpVariantCell& cell = rows[key_and_variant.first].cells[key_and_variant.second];
    cell.category = share.category;
    cell.input_dtypes = share.dtypes;
  }

  for (auto& [key_and_variant, names] : ran_as) {
    std::vector<std::pair<std::string, int64_t>> by_time(names.begin(), names.end());
    std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    auto& cell_names = rows[key_and_variant.first].cells[key_and_variant.second].ran_as;
    for (auto& [name, ns] : by_time) cell_names.push_back(std::move(name));
  }

  const auto base = baseline_index(comparison);
  std::vector<OpComparisonRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    if (base && row.cells[*base].present && row.cells[*base].time_ns_per_step > 0.0)
      for (size_t v = 0; v < n; ++v)
        if (row.cells[v].present && row.cells[v].time_ns_per_step > 0.0)
          row.speedup[v] = row.cells[*base].time_ns_per_step / row.cells[v].time_ns_per_step;
    out.push_back(std::move(row));
  }
  const auto sort_time = [&](const OpComparisonRow& r) {
    if (base && r.cells[*base].present) return r.cells[*base].time_ns_per_step;
    double t = 0.0;
    for (const auto& c : r.cells) t = std::max(t, c.time_ns_per_step);
    return t;
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const OpComparisonRow& a, const OpComparisonRow& b) { return sort_time(a) > sort_time(b); });
  return out;
}

}  // namespace ampscope::profiler
