#pragma once
// The built-in engine's backward checks (issue #30): on a checked step, each module
// input and output the models mark (engine::ModuleScope::input/output) that requires
// grad gets a tensor hook, and so does each parameter (for the step only: its hook is
// removed at take()); as autograd produces the tensor's gradient, the hook reduces
// it on its own device to one probe, inf/NaN exactly when the gradient holds one (no
// host sync), as the profiler's own work. take() tests the step's probes and reads
// them in one transfer, and names where the first non-finite
// gradient arose (profiler/analysis/backward_origin.h: the rule the Python capture uses).
#include <ATen/core/Tensor.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/module_scope.h"
#include "engine/training_observer.h"
#include "profiler/analysis/backward_origin.h"
#include "profiler/cupti/activity_source.h"

namespace ampscope::profiler {

class BackwardCheckRecorder {
 public:
  BackwardCheckRecorder();
  ~BackwardCheckRecorder();
  BackwardCheckRecorder(const BackwardCheckRecorder&) = delete;
  BackwardCheckRecorder& operator=(const BackwardCheckRecorder&) = delete;

  // The GPU tracer the hooks' reductions are bracketed in as the profiler's own.
  void set_activity_source(cupti::ActivitySource* source);
  // Training thread, during the forward: module `scope_name` takes `tensor` as input or
  // gives it as output.
  void on_module_tensor(const std::string& scope_name, const at::Tensor& tensor, GradientSide side);
  // The model's parameters, named by their modules' paths ("blocks.1.mlp.proj.weight"),
  // once before the first step: a weight's gradient sums over the batch and can
  // overflow fp16 where no module's input or output gradient does.
  void set_parameters(engine::NamedTensors parameters);
  // Training thread, at a checked step's start: a hook on each parameter that requires
  // grad, until take() or discard().
  void watch_parameters();
  // The step's tests, in the order autograd produced the gradients, read in one
  // transfer; none when no gradient was checked. Forgets the step.
  std::optional<BackwardCheck> take(int64_t step, bool skipped);
  // A run that ended inside a step: its parameter hooks removed, the parameters released.
  void discard();

 private:
  struct Uses;     // the modules that met one tensor, or the parameter it is
  struct Results;  // the hooks' tests (autograd threads), under a mutex
  class ParameterHook;  // a leaf's hook, removable without a trace
  // A hook's test of one gradient, kept with the step's results.
  static void record_test(const std::shared_ptr<Results>& results, const std::shared_ptr<Uses>& uses,
                          const at::Tensor& grad);
  int32_t name_index(std::string_view name);
  void remove_parameter_hooks();
  struct Watched {
    c10::weak_intrusive_ptr<c10::TensorImpl> tensor;
    std::shared_ptr<Uses> uses;
  };
  std::vector<std::string> modules_;
  std::unordered_map<std::string, int32_t> module_index_;
  std::unordered_map<const c10::TensorImpl*, Watched> watched_;  // this step's tensors
  std::shared_ptr<Results> results_;
  engine::NamedTensors parameters_;
  std::vector<std::pair<at::Tensor, const void*>> parameter_hooks_;  // (parameter, its hook) this step
  cupti::ActivitySource* source_ = nullptr;
};

}  // namespace ampscope::profiler
