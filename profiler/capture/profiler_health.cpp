#include "profiler/capture/profiler.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {

void Profiler::on_sample_stopped() {
  // What the failed sample had gathered is dropped (its tensors released); no part of a
  // sample runs from here on (wants_gradients is false, the sinks stay null).
  activations_.discard();
  readiness_.discard();
  backward_checks_recorder_.discard();
  step_sink_.activations = nullptr;
  step_sink_.readiness = nullptr;
  step_sink_.backward = nullptr;
  if (sample_stop_published_) return;
  sample_stop_published_ = true;
  {
    std::lock_guard lock(queue_mutex_);
    samples_stopped_why_ = sample_failure_.why();
  }
  samples_stopped_step_.store(sample_failure_.stopped_step(), std::memory_order_release);
  if (writer_) {
    writer_->set_meta_value(meta_key::kRangeSamplesStoppedStep, std::to_string(sample_failure_.stopped_step()));
    writer_->set_meta_value(meta_key::kRangeSamplesStoppedWhy, sample_failure_.why());
  }
}

RecordingHealth Profiler::health() const {
  RecordingHealth h;
  h.profiler_dropped_batches = dropped_.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(queue_mutex_);
    h.op_sampling_fallbacks = op_fallbacks_;
    h.range_samples_stopped_why = samples_stopped_why_;
  }
  h.ops_over_step_budget = ops_over_budget_.load(std::memory_order_relaxed);
  h.step_op_budget = options_.step_op_budget;
  h.first_step_over_budget = first_step_over_budget_.load(std::memory_order_relaxed);
  h.interrupted_step = interrupted_step_.load(std::memory_order_relaxed);
  h.interrupted_step_ops = interrupted_ops_.load(std::memory_order_relaxed);
  h.interrupted_step_gpu_activities = interrupted_kernels_.load(std::memory_order_relaxed);
  h.range_samples_stopped_step = samples_stopped_step_.load(std::memory_order_acquire);
  // Created on the training thread when the run starts, never replaced: once seen it stays valid.
  if (const SessionWriter* writer = writer_published_.load(std::memory_order_acquire)) {
    h.store_dropped_batches = writer->dropped_batches();
    h.store_error = writer->last_error();
  }
  return h;
}

}  // namespace ampscope::profiler
