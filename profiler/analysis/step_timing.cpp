#include "profiler/analysis/step_timing.h"

#include "profiler/analysis/comparison.h"

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

}  // namespace ampscope::profiler
