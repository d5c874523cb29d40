#pragma once
// The profiler's own work on the training thread (gradient and activation range
// statistics) is not the user's: while an OwnWork is alive its ATen ops are not
// recorded (RecordFunction off on this thread) and the device work it launches
// is bracketed with cupti::kProfilerOwnWork, so a tracer that is on (activation
// statistics run inside a traced forward) hands those kernels back marked as the
// profiler's. The Profiler keeps them out of the op and kernel tables and out of
// the unattributed share, and counts them on their own.
#include <ATen/record_function.h>

#include <optional>

#include "profiler/cupti/activity_source.h"

namespace ampscope::profiler {

class OwnWork {
 public:
  explicit OwnWork(cupti::ActivitySource* source) : source_(source) {
    if (!recorded_on_this_thread()) not_recorded_.emplace();
    if (source_) source_->push_external_id(cupti::kProfilerOwnWork);
  }
  // Tests that count the ops the profiler's own work dispatches (a RecordFunction
  // callback: tests/support/dispatched_ops.h) leave them recorded on their thread.
  static bool& recorded_on_this_thread() {
    static thread_local bool recorded = false;
    return recorded;
  }
  ~OwnWork() {
    if (source_) source_->pop_external_id();
  }
  OwnWork(const OwnWork&) = delete;
  OwnWork& operator=(const OwnWork&) = delete;

 private:
  std::optional<at::DisableRecordFunctionGuard> not_recorded_;
  cupti::ActivitySource* source_;
};

}  // namespace ampscope::profiler
