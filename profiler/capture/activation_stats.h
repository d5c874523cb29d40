#pragma once
// Forward activation ranges: module outputs (engine::ModuleScope::output) on
// sampled steps, against the float formats.
//
// During the forward a module output costs no ATen op: the recorder keeps a flat
// view of it (batched_pass.h flat_elements: a reference to its storage, no autograd
// history). take(), at the step's end (Profiler::on_step_end: after the timed step),
// measures every output held in one batched pass (a fixed number of ops whatever the
// number of modules, the gradient statistics' machinery) and brings the step back in
// one transfer per pass. Holding references keeps outputs alive past their use:
// once the held outputs would exceed kActivationHeldBytes a pass runs at once (inside
// the forward) and releases them; its results stay on the device until take().
//
// An output modified in place after its module returned it (a later `add_` on it) is
// measured as it is at the pass, not as the module left it: the version counter tells,
// and from then on that module's outputs are copied when seen (one op each).
#include <ATen/core/Tensor.h>

#include <c10/core/TensorImpl.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/module_scope.h"
#include "profiler/cupti/activity_source.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// Bytes of module outputs the recorder holds at most between passes (64 MiB); a
// single larger output is measured as it arrives.
inline constexpr int64_t kActivationHeldBytes = int64_t{64} << 20;

class ActivationRecorder final : public engine::ActivationSink {
 public:
  // `held_bytes_bound`: kActivationHeldBytes but in tests.
  explicit ActivationRecorder(int64_t held_bytes_bound = kActivationHeldBytes) : held_bytes_bound_(held_bytes_bound) {}
  void on_module_output(const std::string& scope_name, const at::Tensor& output) override;
  // The GPU tracer its passes are bracketed in as the profiler's own (own_work.h).
  void set_activity_source(cupti::ActivitySource* source) { source_ = source; }
  // Every output since the last take, merged per module (micro-batches add up), in
  // the order modules first finished; one device-to-host transfer per pass. Clears.
  std::vector<ActivationSample> take(int64_t step);
  bool empty() const { return captures_.empty(); }
  // Forgets the step's outputs unmeasured (a run that ended inside a step): the
  // references held are released.
  void discard();
  // Bytes of outputs held now, waiting for a pass.
  int64_t held_bytes() const { return held_bytes_; }

 private:
  struct Capture {
    size_t module;       // index into modules_
    at::ScalarType dtype;  // of the output as computed
    int64_t numel;
  };
  struct Held {
    size_t capture;  // index into captures_
    at::Tensor flat;
    c10::VariableVersion version;  // the output's, to tell an in-place change
    uint32_t seen_version;
  };
  struct Table {
    at::Tensor rows;               // [captures, columns] on the outputs' device
    std::vector<size_t> captures;  // the capture of each row
  };
  // The held outputs through one batched pass; the results stay on the device.
  void run_pass();

  std::vector<std::string> modules_;  // scope names without the "ampscope.module:" prefix
  std::unordered_map<std::string, size_t> module_index_;  // by scope name
  std::vector<bool> copy_when_seen_;  // per module: an output of it was changed in place
  std::vector<Capture> captures_;     // this step's, in completion order
  std::vector<Held> held_;
  int64_t held_bytes_ = 0;
  int64_t held_bytes_bound_;
  std::vector<Table> tables_;
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
