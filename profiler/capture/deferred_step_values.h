#pragma once
// A Python loop's step values that live on the GPU (the loss, clip_grad_norm_'s total
// norm, GradScaler's scale, growth tracker and found-inf flags) read on the host when the
// device has computed them, not when the step ends.
//
// Reading them at the step's end (`loss.item()`, `scaler.get_scale()`) waited for the
// device: the host could not queue the next step's kernels while the GPU finished this
// one, a synchronisation per step that a bf16 loop without a GradScaler (ResNet-50 on an
// H200, session 44), or an fp16 one whose optimizer is fused (GradScaler hands it the
// found-inf flag on the device), never makes by itself. Here the values are stacked into
// one small tensor, copied to pinned host memory without blocking, and an event marks
// their arrival; the step's record (with its optimizers' rows) waits in a queue until its
// event has passed (checked, never waited on, at later steps' ends), and every record
// still waiting is read when the run ends. Records leave in step order.
//
// lr_scheduler.step() calls wait too: whether the optimizer step a call followed was
// skipped is known when that step's values have arrived.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// The device scalars of one step; an undefined or empty part is a value the records
// already hold.
struct StepDeviceValues {
  std::vector<at::Tensor> loss_parts;  // summed in float32, as the micro-batches' losses add up
  at::Tensor grad_norm;                // one element (clip_grad_norm_ returns a 0-d tensor)
  // GradScaler's: the scale this step's backward used and its growth tracker before
  // update(), the scale update() left, and per optimizer row (in the rows' order) the
  // found-inf flags GradScaler.step() decided by (one per device; an inf/NaN where their
  // sum is > 0; empty: the row's own found_inf stands). update() changes the scale and
  // the tracker in place, and adds every optimizer's flags into the first one's: what it
  // found is read from a copy made before it ran (scaler_state_copy).
  at::Tensor loss_scale;
  at::Tensor growth_tracker;
  at::Tensor loss_scale_after;
  std::vector<std::vector<at::Tensor>> found_inf;
  bool empty() const;
  // Where they are (the first defined part's device); not empty() only.
  c10::Device device() const;
};

// A copy of a GradScaler's state before update() changes it: float64 [scale, tracker,
// found-inf of row 0, row 1, ...] on the scale's device (each row's flags summed over
// devices; NaN for a row without flags). No wait: a device copy.
at::Tensor scaler_state_copy(const at::Tensor& scale, const at::Tensor& growth_tracker,
                             const std::vector<std::vector<at::Tensor>>& found_inf = {});

class DeferredStepValues {
 public:
  enum class ArrivalState { kNotYet, kArrived, kLost };
  // Whether the values have reached the host; `wait`: block until they have. kLost (or
  // a throw): they never will (the device failed), and the record goes out without them.
  using Arrival = std::function<ArrivalState(bool wait)>;

  // The host copy's layout: float64 [loss, grad_norm, loss_scale, growth_tracker,
  // loss_scale_after, found_inf of row 0, row 1, ...]; NaN: keep the records' value.
  enum Slot : size_t { kLoss, kGradNorm, kLossScale, kGrowthTracker, kLossScaleAfter, kFoundInf0 };

  // Steps whose values may wait at once: past this the oldest is waited for, so a host
  // that runs far ahead of its device holds a few records, not the run's.
  static constexpr size_t kMaxWaiting = 4;

  // What has left the queue, in order.
  struct Ready {
    std::vector<StepRecord> steps;
    std::vector<OptimizerStepRecord> optimizer_steps;
    std::vector<SchedulerStepRecord> scheduler_steps;
  };

  // Queues `record` and its optimizers' rows, to be filled from `values`. CPU tensors
  // are read at once (the CPU computed them already); device tensors as above.
  void hold(StepRecord record, std::vector<OptimizerStepRecord> rows, const StepDeviceValues& values);
  // Queues a record whose values are all known, behind those waiting (steps stay in order).
  void hold(StepRecord record, std::vector<OptimizerStepRecord> rows = {});
  // The seam the GPU path goes through: `host` holds the slots above once `arrived`
  // says so. Tests drive arrival themselves.
  void hold(StepRecord record, std::vector<OptimizerStepRecord> rows, at::Tensor host, Arrival arrived);
  // lr_scheduler.step() calls, in call order: each leaves once the step it followed has
  // (SchedulerStepRecord::after_skipped is then filled from that step's optimizer row).
  void hold_scheduler_steps(std::vector<SchedulerStepRecord> calls);

  // The records at the front whose values have arrived, oldest first; with `wait`,
  // every record held (the run's end).
  Ready take_ready(bool wait);
  size_t waiting() const { return held_.size(); }
  // The newest step that has left the queue, with its values (the Python capture reads
  // GradScaler's state from it to decide which steps' backward to check).
  const std::optional<StepRecord>& newest_ready() const { return newest_ready_; }

 private:
  struct Held {
    StepRecord record;
    std::vector<OptimizerStepRecord> rows;
    at::Tensor host;  // float64 slots; undefined: nothing to fill
    Arrival arrived;  // empty: arrived
  };
  static void fill(Held& held);
  void release(Held& held, Ready& ready);
  void release_scheduler_calls(bool all, Ready& ready);

  std::deque<Held> held_;
  std::deque<SchedulerStepRecord> scheduler_calls_;
  int64_t released_through_ = 0;  // the newest step that has left
  std::map<int32_t, std::pair<int64_t, bool>> last_decision_;  // optimizer -> (step, skipped), of steps left
  std::optional<StepRecord> newest_ready_;
};

}  // namespace ampscope::profiler
