#include "profiler/capture/step_module_sink.h"

namespace ampscope::profiler {

void StepModuleSink::on_module_output(const std::string& scope_name, const at::Tensor& output) {
  if (activations) {
    PhaseTimer timer(phases.activations_ms);
    activations->on_module_output(scope_name, output);
  }
  if (backward) backward->on_module_tensor(scope_name, output, GradientSide::kOutput);
}

void StepModuleSink::on_module_input(const std::string& scope_name, const at::Tensor& input) {
  if (backward) backward->on_module_tensor(scope_name, input, GradientSide::kInput);
}

void StepModuleSink::on_layer_input(const std::string& scope_name, const at::Tensor& input, const at::Tensor& weight) {
  if (readiness) {
    PhaseTimer timer(phases.readiness_ms);
    readiness->on_layer_input(scope_name, input, weight);
  }
}

}  // namespace ampscope::profiler
