// Profiler methods for callers that feed steps themselves (the Python capture),
// apart from profiler.cpp: the session writer is thread-safe, so these go to it directly.
#include "profiler/capture/profiler.h"

#include "profiler/capture/own_work.h"

namespace ampscope::profiler {

void Profiler::append_optimizer_steps(std::vector<OptimizerStepRecord>&& records) {
  if (writer_) writer_->append_optimizer_steps(std::move(records));
}

void Profiler::append_scheduler_steps(std::vector<SchedulerStepRecord>&& records) {
  if (writer_) writer_->append_scheduler_steps(std::move(records));
}

void Profiler::on_scheduler_steps(std::vector<SchedulerStepRecord> calls) {
  step_values_.hold_scheduler_steps(std::move(calls));
  hand_over_steps(/*wait=*/false);
}

at::Tensor Profiler::copy_scaler_state(const at::Tensor& scale, const at::Tensor& growth_tracker,
                                       const std::vector<std::vector<at::Tensor>>& found_inf) {
  OwnWork own(scale.device().is_cpu() ? nullptr : gpu_source_.get());
  return scaler_state_copy(scale, growth_tracker, found_inf);
}

void Profiler::on_backward_check(BackwardCheck check) { enqueue(BackwardCheckJob{std::move(check)}, false); }

void Profiler::set_meta_value(std::string key, std::string value) {
  if (writer_) writer_->set_meta_value(std::move(key), std::move(value));
}

void Profiler::set_compiled_op_signatures(std::vector<CompiledOpSignature> signatures) {
  auto shared = std::make_shared<const std::vector<CompiledOpSignature>>(std::move(signatures));
  std::lock_guard lock(compiled_mutex_);
  compiled_op_signatures_ = std::move(shared);
}

void Profiler::set_compiled_graph_calls(std::vector<int64_t> calls, std::vector<int64_t> warmup_calls) {
  std::lock_guard lock(compiled_mutex_);
  compiled_graph_calls_.swap(calls);
  compiled_warmup_graph_calls_.swap(warmup_calls);
}

void Profiler::set_compiled_kernels(std::vector<CompiledKernelRow> rows) {
  auto shared = std::make_shared<const std::vector<CompiledKernelRow>>(std::move(rows));
  std::lock_guard lock(compiled_mutex_);
  compiled_kernels_ = std::move(shared);
}

}  // namespace ampscope::profiler
