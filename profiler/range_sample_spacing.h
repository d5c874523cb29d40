#pragma once
// Which steps take a range sample (gradient, activation and readiness statistics):
// every K steps (--grad-every), spaced further when samples cost more than a share
// of the run's time (--sample-budget, percent). A sample's cost is what the user
// feels: its step's wall time beyond the median of recent unsampled steps. On an
// H200 one sample of a 12-layer GPT cost ~1.1 s against a 20 ms step, so sampling
// every 10 steps made the training 5x slower: the profiler would not be left on.
// The cost taken is the mean of the last kCostSamples samples' (the budget bounds
// their sum; one noisy step on a loaded machine should not swing the spacing), or of
// as many as one precision readiness cycle holds when that is longer (readiness on
// every Nth sample: the mean then always holds one costly sample, its share of N).
// After each sample the next one is N steps later, the least multiple of K for
// which the sample's cost is at most the budget of N steps' time: the samples stay on
// multiples of K, and the first one is always taken. A run whose length is known (the
// engine's --steps, a script's --max-steps) and that ends before step K samples its last
// step instead: a 5-step first look at a script shows its ranges too. Each change
// of spacing is kept in the session (meta `range_sample_spacing`) and said by
// `summary`. Without unsampled steps to compare with (K = 1 from the start) the
// spacing stays K. No LibTorch.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace ampscope::profiler {

class RangeSampleSpacing {
 public:
  // A change of spacing: from `from_step` on, samples every `every` steps; the
  // sample at the step before cost `cost_ms` against a `step_ms` median step.
  struct Change {
    int64_t from_step = 0;
    int64_t every = 0;
    double cost_ms = 0.0;
    double step_ms = 0.0;
  };
  static constexpr size_t kBaselineSteps = 32;  // recent unsampled steps whose median is the step
  static constexpr size_t kCostSamples = 4;     // recent samples whose mean cost is a sample's
  static constexpr size_t kMaxChanges = 64;     // then the spacing stays (the meta line stays short)

  // every: K (0 = never sample); budget_percent: 0 = every K steps, whatever they cost;
  // readiness_every: readiness on every Nth sample (its cycle sets the cost's window).
  RangeSampleSpacing(int64_t every, int64_t budget_percent, int64_t readiness_every = 1);

  // The run's last step where it is known (0: not known). Kept only where the run ends
  // before step K, the first sample: that step samples then.
  void set_last_step(int64_t step);
  int64_t early_last_step() const { return early_last_step_; }

  bool selects(int64_t step) const;
  // At a step's end, with its wall time (NaN: unknown, ignored) and whether it sampled.
  // True when the spacing changed.
  bool on_step_end(int64_t step, double step_ms, bool sampled);

  int64_t current_every() const { return every_now_; }
  const std::vector<Change>& changes() const { return changes_; }
  // "from:every:cost_ms:step_ms" per change, ';'-separated (the session's meta value).
  std::string encode() const;
  static std::vector<Change> decode(const std::string& text);
  // "every 10 steps, spaced to every 560 from step 11 (a sample cost 1120 ms against a 20 ms step; budget 5 %)".
  static std::string describe(int64_t every, int64_t budget_percent, const std::vector<Change>& changes);
  // "precision readiness on one sample in 5, the first included", "... on every sample", "... off".
  static std::string describe_readiness(int64_t readiness_every);
  // Both, as `summary`, the report and the GUI say them: describe(), then the readiness
  // cadence where samples are taken and the session knows it (nullopt: a session from
  // before readiness had its own cadence, which measured it on every sample).
  // early_last_step: the last step of a run that ends before step K, sampled instead (0: none).
  static std::string describe_sampling(int64_t every, int64_t budget_percent, const std::vector<Change>& changes,
                                       std::optional<int64_t> readiness_every, int64_t early_last_step = 0);

 private:
  double baseline_ms() const;

  int64_t every_;
  int64_t budget_percent_;
  int64_t every_now_;
  size_t cost_samples_;  // the samples whose mean cost is a sample's
  int64_t next_ = 0;  // the first step that may sample
  int64_t early_last_step_ = 0;
  std::deque<double> unsampled_ms_;
  std::deque<double> sample_costs_ms_;
  std::vector<Change> changes_;
};

}  // namespace ampscope::profiler
