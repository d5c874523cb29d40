#pragma once
// The engine's step event as the profiler records it.
#include "engine/events.h"
#include "profiler/records.h"

#include <vector>

namespace ampscope::profiler {

inline StepRecord to_step_record(const engine::StepEvent& e, int64_t end_ns = 0) {
  StepRecord r;
  r.step = e.step;
  r.loss = e.loss;
  r.lr = e.lr;
  r.loss_scale = e.loss_scale;
  r.found_inf = e.found_inf;
  r.skipped = e.skipped;
  r.growth_tracker = e.growth_tracker;
  r.grad_norm = e.grad_norm;
  r.step_time_ms = e.step_time_ms;
  r.samples_per_second = e.samples_per_second;
  r.mem_allocated_bytes = e.memory.allocated_bytes;
  r.mem_reserved_bytes = e.memory.reserved_bytes;
  r.mem_peak_bytes = e.memory.peak_allocated_bytes;
  r.end_ns = end_ns;
  r.eval_loss = e.eval_loss;
  return r;
}

// GradScaler's decision per optimizer, for steps of several optimizers (the multi-loss
// recipe); empty for one optimizer, whose decision the step record already is.
inline std::vector<OptimizerStepRecord> to_optimizer_step_records(const engine::StepEvent& e) {
  std::vector<OptimizerStepRecord> out;
  if (e.optimizers.size() < 2) return out;
  for (size_t i = 0; i < e.optimizers.size(); ++i) {
    const engine::OptimizerOutcome& o = e.optimizers[i];
    OptimizerStepRecord& r = out.emplace_back();
    r.step = e.step;
    r.optimizer = static_cast<int32_t>(i);
    r.name = o.name;
    r.stepped = !o.skipped;
    r.found_inf = o.found_inf;
    r.skipped = o.skipped;
    r.unscale_calls = o.unscale_calls;
    r.lr = o.lr;
    r.loss_scale = e.loss_scale;
    r.loss_scale_after = e.loss_scale_after;
  }
  return out;
}

}  // namespace ampscope::profiler
