#pragma once
// What the models' ModuleScopes show the profiler on a step it samples or checks:
// module outputs to the activation ranges and layer inputs to precision readiness
// (gradient-sampled steps), module inputs and outputs to the backward checks (those
// and the steps after a skip or a growth of the loss scale). Training thread only.
#include <string>

#include "engine/module_scope.h"
#include "profiler/capture/backward_checks.h"
#include "profiler/capture/readiness_recorder.h"
#include "profiler/capture/sample_failure.h"
#include "profiler/range_sample_phases.h"

namespace ampscope::profiler {

class StepModuleSink final : public engine::ActivationSink {
 public:
  engine::ActivationSink* activations = nullptr;  // null: not this step
  ReadinessRecorder* readiness = nullptr;          // null: not this step
  BackwardCheckRecorder* backward = nullptr;       // null: not this step
  // The profiler's: a part that throws drops the step's sample (the sinks above go null).
  SampleFailure* failure = nullptr;
  // This step's time in the profiler's own passes (the Profiler adds its own and
  // takes it at the step's end).
  RangeSamplePhases phases;
  void on_module_output(const std::string& scope_name, const at::Tensor& output) override;
  void on_module_input(const std::string& scope_name, const at::Tensor& input) override;
  void on_layer_input(const std::string& scope_name, const at::Tensor& input, const at::Tensor& weight) override;

 private:
  template <class Work>
  void guarded(std::string_view part, Work&& work);
};

}  // namespace ampscope::profiler
