#include "profiler/capture/profiler.h"

namespace ampscope::profiler {

RecordingHealth Profiler::health() const {
  RecordingHealth h;
  h.profiler_dropped_batches = dropped_.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(queue_mutex_);
    h.op_sampling_fallbacks = op_fallbacks_;
  }
  h.ops_over_step_budget = ops_over_budget_.load(std::memory_order_relaxed);
  h.step_op_budget = options_.step_op_budget;
  h.first_step_over_budget = first_step_over_budget_.load(std::memory_order_relaxed);
  h.interrupted_step = interrupted_step_.load(std::memory_order_relaxed);
  h.interrupted_step_ops = interrupted_ops_.load(std::memory_order_relaxed);
  h.interrupted_step_gpu_activities = interrupted_kernels_.load(std::memory_order_relaxed);
  // Created on the training thread when the run starts, never replaced: once seen it stays valid.
  if (const SessionWriter* writer = writer_published_.load(std::memory_order_acquire)) {
    h.store_dropped_batches = writer->dropped_batches();
    h.store_error = writer->last_error();
  }
  return h;
}

}  // namespace ampscope::profiler
