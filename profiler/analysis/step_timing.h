#pragma once
// Step times with capture told apart (issue #27). Steps the profiler recorded
// (their ops, or range statistics: the activation part runs inside the step)
// are slower than the others by what capture costs, so a session's step time is
// the median of its unrecorded steps when it has any, and the capture overhead
// is the recorded steps' median over theirs. Where every step was recorded, the
// step time includes capture and says so. One implementation for `summary`, the
// JSON summary, the report and the GUI (all through SessionView); the words are
// report_detail::step_timing_text (profiler/report/report_format.h).
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

struct StepTiming {
  int64_t recorded_steps = 0, unrecorded_steps = 0;
  double recorded_median_ms = 0.0, unrecorded_median_ms = 0.0;  // 0 where there are none

  bool every_step_recorded() const { return recorded_steps > 0 && unrecorded_steps == 0; }
  // The run's step time as training sees it: unrecorded steps' median, else all steps'.
  double step_ms() const { return unrecorded_steps > 0 ? unrecorded_median_ms : recorded_median_ms; }
  // Recorded over unrecorded median, where both exist.
  std::optional<double> capture_overhead() const;
};

// `recorded`: the steps with ops, gradient or activation samples.
StepTiming step_timing(const std::vector<StepRecord>& steps, const std::set<int64_t>& recorded);

}  // namespace ampscope::profiler
