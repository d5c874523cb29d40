#pragma once
// A Python loop's step values that live on the GPU (the loss, clip_grad_norm_'s total
// norm) read on the host when the device has computed them, not when the step ends.
//
// Reading them at the step's end (`loss.item()`) waited for the device: the host could
// not queue the next step's kernels while the GPU finished this one, a synchronisation
// per step that a bf16 loop without a GradScaler (ResNet-50 on an H200, session 44) never
// makes by itself. Here the values are stacked into one small tensor, copied to pinned
// host memory without blocking, and an event marks their arrival; the step's record waits
// in a queue until its event has passed (checked, never waited on, at later steps' ends),
// and every record still waiting is read when the run ends. Records leave in step order.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// The device scalars of one step; an empty part is a value the step record already holds.
struct StepDeviceValues {
  std::vector<at::Tensor> loss_parts;  // summed in float32, as the micro-batches' losses add up
  at::Tensor grad_norm;                // one element (clip_grad_norm_ returns a 0-d tensor)
  bool empty() const { return loss_parts.empty() && !grad_norm.defined(); }
  // Where they are (the first loss part's device, else the norm's); not empty() only.
  c10::Device device() const { return loss_parts.empty() ? grad_norm.device() : loss_parts.front().device(); }
};

class DeferredStepValues {
 public:
  enum class ArrivalState { kNotYet, kArrived, kLost };
  // Whether the values have reached the host; `wait`: block until they have. kLost (or
  // a throw): they never will (the device failed), and the record goes out without them.
  using Arrival = std::function<ArrivalState(bool wait)>;

  // Steps whose values may wait at once: past this the oldest is waited for, so a host
  // that runs far ahead of its device holds a few records, not the run's.
  static constexpr size_t kMaxWaiting = 4;

  // Queues `record`, its loss and grad_norm to be filled from `values`. CPU tensors are
  // read at once (the CPU computed them already); device tensors as above.
  void hold(StepRecord record, const StepDeviceValues& values);
  // Queues a record whose values are all known, behind those waiting (steps stay in order).
  void hold(StepRecord record);
  // The seam the GPU path goes through: `host` holds [loss, grad_norm] (NaN: keep the
  // record's) once `arrived` says so. Tests drive arrival themselves.
  void hold(StepRecord record, at::Tensor host, Arrival arrived);

  // The records at the front whose values have arrived, oldest first; with `wait`,
  // every record held (the run's end).
  std::vector<StepRecord> take_ready(bool wait);
  size_t waiting() const { return held_.size(); }

 private:
  struct Held {
    StepRecord record;
    at::Tensor host;  // float64 [loss, grad_norm]; undefined: nothing to fill
    Arrival arrived;  // empty: arrived
  };
  static void fill(Held& held);
  std::deque<Held> held_;
};

}  // namespace ampscope::profiler
