#pragma once
// Marks a module boundary for RecordFunction observers (ampscope's op observer,
// and PyTorch's own profiler, which shows it like torch.profiler.record_function).
// Costs one thread-local check when no observer is registered.
#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <string>

#include "engine/scope_names.h"

namespace ampscope::engine {

// Receives module outputs (forward activations), and the inputs the models mark, on
// the thread that set it, e.g. the profiler on sampled steps. It must not synchronise
// with the device.
class ActivationSink {
 public:
  virtual ~ActivationSink() = default;
  // `scope_name` is the ModuleScope's name ("ampscope.module:<path>").
  virtual void on_module_output(const std::string& scope_name, const at::Tensor& output) = 0;
  // A Linear or convolution layer's input and weight, just before its GEMM, in
  // the layer's own scope: the operands the GEMM would quantize (precision readiness).
  virtual void on_layer_input(const std::string& /*scope_name*/, const at::Tensor& /*input*/, const at::Tensor& /*weight*/) {}
  // The tensor the module computes from (its gradient is what the module's backward
  // produces: where a non-finite gradient starts, profiler/capture/backward_checks.h).
  virtual void on_module_input(const std::string& /*scope_name*/, const at::Tensor& /*input*/) {}
};

// The calling thread's sink (null: none, the common case). Set around a step's
// forward by whoever wants activations; ModuleScope::output reads it.
ActivationSink*& activation_sink();

class ModuleScope {
 public:
  // `name` is the full RecordFunction name ("ampscope.module:<path>"); it must
  // outlive the scope: models keep their scope names as members.
  explicit ModuleScope(const std::string& name) : guard_(at::RecordScope::USER_SCOPE), name_(name) {
    if (guard_.isActive()) guard_.before(name);
  }
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

  // The module's output, passed through; an activation sink, if one is set on
  // this thread, sees it. Models return `scope.output(y)`.
  at::Tensor output(at::Tensor y) const {
    if (ActivationSink* sink = activation_sink()) sink->on_module_output(name_, y);
    return y;
  }
  // A Linear or convolution layer's input, passed through; the sink sees it with
  // the layer's weight. Scopes of such layers call it on the input they apply the layer to.
  const at::Tensor& layer_input(const at::Tensor& x, const at::Tensor& weight) const {
    if (ActivationSink* sink = activation_sink()) sink->on_layer_input(name_, x, weight);
    return x;
  }
  // The module's input, passed through, likewise: `fc->forward(scope.input(x))`.
  const at::Tensor& input(const at::Tensor& x) const {
    if (ActivationSink* sink = activation_sink()) sink->on_module_input(name_, x);
    return x;
  }

 private:
  at::RecordFunction guard_;
  const std::string& name_;
};

}  // namespace ampscope::engine

namespace ampscope::engine {

// Marks a phase of the training step ("ampscope.phase:forward", ":backward",
// ":optimizer") the same way, so observers can attribute the ops inside it.
inline constexpr const char* kPhaseForward = "ampscope.phase:forward";
inline constexpr const char* kPhaseBackward = "ampscope.phase:backward";
inline constexpr const char* kPhaseOptimizer = "ampscope.phase:optimizer";

class PhaseScope {
 public:
  explicit PhaseScope(const char* name) : guard_(at::RecordScope::USER_SCOPE) {
    if (guard_.isActive()) guard_.before(name);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  at::RecordFunction guard_;
};

}  // namespace ampscope::engine
