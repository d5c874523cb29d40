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

}  // namespace ampscope::profiler
