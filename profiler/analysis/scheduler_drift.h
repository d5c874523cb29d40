#pragma once
// LR schedulers that advance on optimizer steps GradScaler skipped (issue #30). Under
// a GradScaler, a step whose gradients hold inf/NaN skips optimizer.step(); a
// scheduler stepped unconditionally advances anyway, so its schedule runs ahead of
// the optimizer's real updates by one step per skip (accelerate#4242, Lightning#18828).
// PyTorch warns only when it happens before the first optimizer step. One reading of
// the recorded calls for summary, JSON, report and GUI.
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

struct SchedulerSummary {
  int32_t scheduler = 0;
  std::string name;            // "StepLR"
  int32_t optimizer = 0;
  std::string optimizer_name;  // "SGD"; "" when the optimizer never stepped
  int64_t calls = 0;
  int64_t optimizer_steps = 0;  // steps its optimizer took part in (stepped or skipped)
  // Calls that followed an optimizer step GradScaler skipped, and at which steps.
  int64_t after_skipped = 0;
  std::vector<int64_t> after_skipped_steps;
  double last_lr = 0.0;  // after its last call

  // A scheduler stepped about once per optimizer step (at least every other one). One
  // stepped per epoch that happens to follow a skipped step is not off schedule.
  bool per_optimizer_step() const { return optimizer_steps > 0 && 2 * calls >= optimizer_steps; }
  // It advanced after skipped optimizer steps: its schedule is after_skipped steps ahead.
  bool drifts() const { return after_skipped > 0 && per_optimizer_step(); }
};

// One summary per scheduler, in the order they first stepped.
std::vector<SchedulerSummary> summarize_schedulers(const std::vector<SchedulerStepRecord>& calls,
                                                   const std::vector<OptimizerStepRecord>& optimizer_steps);

// One line per scheduler: "StepLR (optimizer 0, SGD): 40 steps, 7 after optimizer
// steps GradScaler skipped (steps 3, 5, ...): its schedule runs 7 steps ahead of the
// optimizer's updates", or that none followed a skipped step.
std::string scheduler_text(const SchedulerSummary& s);

// One clause for a drifting scheduler (the verdict, the GUI's learning-rate plot):
// "StepLR advanced after 7 optimizer steps GradScaler skipped: its schedule runs 7
// steps ahead of the optimizer".
std::string scheduler_drift_text(const SchedulerSummary& s);

// The fix, in words, for the report and summary: step the scheduler only when the
// optimizer stepped, i.e. when scaler.update() did not lower the scale.
extern const char* const kSchedulerFix;

}  // namespace ampscope::profiler
