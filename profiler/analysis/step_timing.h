#pragma once
// Step times with capture told apart (issue #27). Steps the profiler recorded
// (their ops, or range statistics: the activation part runs inside the step)
// are slower than the others by what capture costs, so a session's step time is
// the median of its unrecorded steps when it has any, and the capture overhead
// is the recorded steps' median over theirs. Where every step was recorded, the
// step time includes capture and says so. A step's time here is what it cost the run
// (StepRecord::cost_ms: its own time and the capture's work after it, which the
// built-in engine runs outside its timed step). One implementation for `summary`, the
// JSON summary, the report and the GUI (all through SessionView); the words are
// report_detail::step_timing_text (profiler/report/report_format.h).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// Three kinds of step: unrecorded; recorded (their ops, backward checks); sampled
// (gradient, activation and readiness statistics, which cost far more than recording
// ops: on an H200 a sample was 207 steps while a recorded step was 1.2, and one
// median of both read "capture overhead 116×").
struct StepTiming {
  int64_t recorded_steps = 0, unrecorded_steps = 0, sampled_steps = 0;
  double recorded_median_ms = 0.0, unrecorded_median_ms = 0.0, sampled_median_ms = 0.0;  // 0 where none

  bool any_recorded() const { return recorded_steps + sampled_steps > 0; }
  bool every_step_recorded() const { return any_recorded() && unrecorded_steps == 0; }
  // The run's step time as training sees it: unrecorded steps' median, else recorded
  // steps', else sampled steps'.
  double step_ms() const {
    return unrecorded_steps > 0 ? unrecorded_median_ms : recorded_steps > 0 ? recorded_median_ms : sampled_median_ms;
  }
  // Recorded over unrecorded median, where both exist.
  std::optional<double> capture_overhead() const;
  // What a sample adds, in steps: sampled median over step_ms(), less one; where
  // there are sampled steps and other steps to compare them with.
  std::optional<double> sample_cost() const;
};

// `recorded`: the steps with ops or backward checks; `sampled`: the steps with
// gradient or activation samples (a step in both counts as sampled).
StepTiming step_timing(const std::vector<StepRecord>& steps, const std::set<int64_t>& recorded,
                       const std::set<int64_t>& sampled);

// Steps far slower than the run's others: a torch.compile'd run's first step compiles
// (15 s against 3 ms steps for the example MLP on the CPU), a GPU run's first loads its
// libraries. On a scale that holds them the other steps lie flat on the axis, so the
// step-time charts (the GUI's, the report's) leave them off the scale and name them.
struct StepTimeScale {
  double ceiling_ms = 0.0;                            // the slowest step that is not an outlier
  std::vector<std::pair<int64_t, double>> off_scale;  // (step, ms), in step order
  // "step 1 (15.02 s)"; past three steps "12 steps, the slowest step 1 (15.02 s)".
  std::string describe() const;
};
// An outlier takes over kStepTimeOutlier times the median step: robust to the outliers
// themselves, and far above what a range sample costs, so sampled steps stay on the
// scale. Nullopt with fewer than 3 steps, or none an outlier.
inline constexpr double kStepTimeOutlier = 10.0;
std::optional<StepTimeScale> step_time_scale(const std::vector<std::pair<int64_t, double>>& step_ms);

}  // namespace ampscope::profiler
