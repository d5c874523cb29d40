#include "profiler/range_sample_spacing.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "profiler/number_text.h"

namespace ampscope::profiler {

RangeSampleSpacing::RangeSampleSpacing(int64_t every, int64_t budget_percent, int64_t readiness_every)
    : every_(std::max<int64_t>(0, every)),
      budget_percent_(std::max<int64_t>(0, budget_percent)),
      every_now_(every_),
      cost_samples_(std::max<size_t>(kCostSamples, static_cast<size_t>(std::max<int64_t>(0, readiness_every)))) {}

void RangeSampleSpacing::set_last_step(int64_t step) { early_last_step_ = step > 0 && step < every_ ? step : 0; }

bool RangeSampleSpacing::selects(int64_t step) const {
  return every_ > 0 && ((step % every_ == 0 && step >= next_) || (early_last_step_ > 0 && step == early_last_step_));
}

double RangeSampleSpacing::baseline_ms() const {
  if (unsampled_ms_.empty()) return std::nan("");
  std::vector<double> sorted(unsampled_ms_.begin(), unsampled_ms_.end());
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  return *middle;
}

bool RangeSampleSpacing::on_step_end(int64_t step, double step_ms, bool sampled) {
  if (!std::isfinite(step_ms)) return false;
  if (!sampled) {
    unsampled_ms_.push_back(step_ms);
    if (unsampled_ms_.size() > kBaselineSteps) unsampled_ms_.pop_front();
    return false;
  }
  if (every_ == 0 || budget_percent_ == 0) return false;
  const double step_time = baseline_ms();
  if (!std::isfinite(step_time) || step_time <= 0) return false;  // nothing to compare with: every K steps
  sample_costs_ms_.push_back(std::max(0.0, step_ms - step_time));
  if (sample_costs_ms_.size() > cost_samples_) sample_costs_ms_.pop_front();
  double cost = 0.0;
  for (const double c : sample_costs_ms_) cost += c;
  cost /= static_cast<double>(sample_costs_ms_.size());
  // Steps from this sample to the next so that cost <= budget * their time, in whole multiples of K.
  const double steps_needed = cost / (static_cast<double>(budget_percent_) / 100.0 * step_time);
  const auto multiples = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(steps_needed / static_cast<double>(every_))));
  const int64_t every = multiples * every_;
  // Past kMaxChanges the spacing stays as last said, so the session's account stays true.
  const bool changed = every != every_now_ && changes_.size() < kMaxChanges;
  if (changed) {
    every_now_ = every;
    changes_.push_back({step + 1, every, cost, step_time});
  }
  next_ = step + every_now_;
  return changed;
}

std::string RangeSampleSpacing::encode() const {
  std::string out;
  for (const Change& c : changes_) {
    if (!out.empty()) out += ';';
    out += std::to_string(c.from_step) + ':' + std::to_string(c.every) + ':' + text::fixed(c.cost_ms, 3) + ':' +
           text::fixed(c.step_ms, 3);
  }
  return out;
}

std::vector<RangeSampleSpacing::Change> RangeSampleSpacing::decode(const std::string& text) {
  std::vector<Change> out;
  std::stringstream all(text);
  std::string item;
  while (std::getline(all, item, ';')) {
    Change c;
    char colon[3] = {};
    std::stringstream fields(item);
    if (fields >> c.from_step >> colon[0] >> c.every >> colon[1] >> c.cost_ms >> colon[2] >> c.step_ms &&
        colon[0] == ':' && colon[1] == ':' && colon[2] == ':' && c.every > 0)
      out.push_back(c);
  }
  return out;
}

std::string RangeSampleSpacing::describe(int64_t every, int64_t budget_percent, const std::vector<Change>& changes) {
  if (every <= 0) return "off";
  std::string out = "every " + std::to_string(every) + " steps";
  const std::string budget = std::to_string(budget_percent) + " %";
  if (changes.empty()) return budget_percent > 0 ? out + " (within the " + budget + " budget)" : out;
  const Change& last = changes.back();
  out += ", spaced to every " + std::to_string(last.every) + " from step " + std::to_string(last.from_step) +
         " to keep samples within " + budget + " of the run's time (a sample cost " + text::fixed(last.cost_ms, 0) +
         " ms against a " + text::fixed(last.step_ms, 1) + " ms step)";
  if (changes.size() > 1) out += "; " + std::to_string(changes.size()) + " changes of spacing";
  return out;
}

std::string RangeSampleSpacing::describe_readiness(int64_t readiness_every) {
  if (readiness_every <= 0) return "precision readiness off";
  if (readiness_every == 1) return "precision readiness on every sample";
  return "precision readiness on one sample in " + std::to_string(readiness_every) + ", the first included";
}

std::string RangeSampleSpacing::describe_sampling(int64_t every, int64_t budget_percent,
                                                  const std::vector<Change>& changes,
                                                  std::optional<int64_t> readiness_every,
                                                  int64_t early_last_step) {
  std::string out = describe(every, budget_percent, changes);
  if (every > 0 && early_last_step > 0 && early_last_step < every)
    out += "; the run's last step (" + std::to_string(early_last_step) + ") too, as the run ends before step " +
           std::to_string(every);
  if (readiness_every && every > 0) out += "; " + describe_readiness(*readiness_every);
  return out;
}

}  // namespace ampscope::profiler
