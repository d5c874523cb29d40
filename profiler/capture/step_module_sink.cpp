#include "profiler/capture/step_module_sink.h"

namespace ampscope::profiler {

template <class Work>
void StepModuleSink::guarded(std::string_view part, Work&& work) {
  if (failure == nullptr) return work();
  if (failure->run(part, std::forward<Work>(work))) return;
  // The step's sample is dropped (the Profiler releases what it gathered at the step's end).
  activations = nullptr;
  readiness = nullptr;
  backward = nullptr;
}

void StepModuleSink::on_module_output(const std::string& scope_name, const at::Tensor& output) {
  if (activations) {
    PhaseTimer timer(phases.activations_ms);
    guarded("activation ranges", [&] { activations->on_module_output(scope_name, output); });
  }
  if (backward)
    guarded("backward check", [&] { backward->on_module_tensor(scope_name, output, GradientSide::kOutput); });
}

void StepModuleSink::on_module_input(const std::string& scope_name, const at::Tensor& input) {
  if (backward) guarded("backward check", [&] { backward->on_module_tensor(scope_name, input, GradientSide::kInput); });
}

void StepModuleSink::on_layer_input(const std::string& scope_name, const at::Tensor& input, const at::Tensor& weight) {
  if (readiness) {
    PhaseTimer timer(phases.readiness_ms);
    guarded("readiness pass", [&] { readiness->on_layer_input(scope_name, input, weight); });
  }
}

}  // namespace ampscope::profiler
