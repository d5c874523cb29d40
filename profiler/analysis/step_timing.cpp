#include "profiler/analysis/step_timing.h"

#include <algorithm>
#include <cmath>

#include "profiler/analysis/comparison.h"
#include "profiler/number_text.h"

namespace ampscope::profiler {

std::optional<double> StepTiming::capture_overhead() const {
  if (recorded_steps == 0 || unrecorded_steps == 0 || unrecorded_median_ms <= 0.0) return std::nullopt;
  return recorded_median_ms / unrecorded_median_ms;
}

std::optional<double> StepTiming::sample_cost() const {
  if (sampled_steps == 0 || unrecorded_steps + recorded_steps == 0 || step_ms() <= 0.0) return std::nullopt;
  return sampled_median_ms / step_ms() - 1.0;
}

StepTiming step_timing(const std::vector<StepRecord>& steps, const std::set<int64_t>& recorded,
                       const std::set<int64_t>& sampled) {
  std::vector<double> in, out, samples;
  for (const StepRecord& s : steps)
    (sampled.count(s.step) ? samples : recorded.count(s.step) ? in : out).push_back(s.cost_ms());
  StepTiming t;
  t.recorded_steps = static_cast<int64_t>(in.size());
  t.unrecorded_steps = static_cast<int64_t>(out.size());
  t.sampled_steps = static_cast<int64_t>(samples.size());
  t.recorded_median_ms = median_of(std::move(in));
  t.unrecorded_median_ms = median_of(std::move(out));
  t.sampled_median_ms = median_of(std::move(samples));
  return t;
}

std::string StepTimeScale::describe() const {
  auto one = [](const std::pair<int64_t, double>& s) {
    return "step " + std::to_string(s.first) + " (" + text::duration_text(s.second * 1e6) + ")";
  };
  if (off_scale.size() > 3) {
    const auto slowest = std::max_element(off_scale.begin(), off_scale.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    return std::to_string(off_scale.size()) + " steps, the slowest " + one(*slowest);
  }
  std::string out;
  for (const auto& s : off_scale) out += (out.empty() ? "" : ", ") + one(s);
  return out;
}

std::optional<StepTimeScale> step_time_scale(const std::vector<std::pair<int64_t, double>>& step_ms) {
  std::vector<double> times;
  for (const auto& [step, ms] : step_ms)
    if (std::isfinite(ms)) times.push_back(ms);
  if (times.size() < 3) return std::nullopt;
  const double limit = kStepTimeOutlier * median_of(std::move(times));
  StepTimeScale scale;
  for (const auto& [step, ms] : step_ms) {
    if (!std::isfinite(ms)) continue;
    if (ms > limit)
      scale.off_scale.emplace_back(step, ms);
    else
      scale.ceiling_ms = std::max(scale.ceiling_ms, ms);
  }
  if (scale.off_scale.empty() || scale.ceiling_ms <= 0.0) return std::nullopt;
  return scale;
}

}  // namespace ampscope::profiler
