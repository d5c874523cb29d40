#pragma once
// Forward activation ranges: module outputs (engine::ModuleScope::output) on
// sampled steps, against the float formats. Each output costs a few reductions on
// its own device and no host sync; take() brings every module of the step back in
// one transfer.
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "engine/module_scope.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/records.h"

namespace ampscope::profiler {

class ActivationRecorder final : public engine::ActivationSink {
 public:
  void on_module_output(const std::string& scope_name, const at::Tensor& output) override;
  // The GPU tracer its reductions are bracketed in as the profiler's own (own_work.h).
  void set_activity_source(cupti::ActivitySource* source) { source_ = source; }
  // Every output since the last take, merged per module (micro-batches add up), in
  // the order modules first finished; one device-to-host transfer. Clears.
  std::vector<ActivationSample> take(int64_t step);
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> modules_;  // scope names without the "ampscope.module:" prefix
  std::vector<std::string> dtypes_;
  std::vector<at::Tensor> rows_;
  cupti::ActivitySource* source_ = nullptr;
};

// Sets the calling thread's activation sink for its lifetime (restoring the previous one).
class ActivationCapture {
 public:
  explicit ActivationCapture(engine::ActivationSink* sink) : previous_(engine::activation_sink()) {
    engine::activation_sink() = sink;
  }
  ~ActivationCapture() { engine::activation_sink() = previous_; }
  ActivationCapture(const ActivationCapture&) = delete;
  ActivationCapture& operator=(const ActivationCapture&) = delete;

 private:
  engine::ActivationSink* previous_;
};

}  // namespace ampscope::profiler
