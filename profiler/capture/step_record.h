#pragma once
// The engine's step event as the profiler records it.
#include "engine/events.h"
#include "profiler/records.h"

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

}  // namespace ampscope::profiler
