#pragma once
// What ampscope writes to TensorBoard, in one place for the live logger (`train
// --tensorboard DIR`, `profile --tensorboard DIR`) and the export of a recorded
// session (`ampscope export FILE --format tensorboard`).
//
// Scalars per step: train/loss, train/lr, train/grad_norm (unscaled),
// amp/loss_scale, amp/skipped_steps (running count), perf/step_time_ms,
// perf/samples_per_second, memory/{allocated,reserved,peak}_bytes on CUDA and
// memory/{resident_set,peak_resident_set}_bytes on the CPU (profiler/memory_kind.h),
// and eval/loss on steps after which validation ran.
// Per sampled gradient step: a histogram per parameter, grad_log2_abs/<name>, of
// log2|g| of the UNSCALED gradient (nonzero finite elements; bucket k counts
// log2|g| in [k, k+1), the session's own bins, so counts are exact; TensorBoard
// spreads buckets on a linear axis, where |g| itself would put almost everything
// in the first bar). min/max are exact; sum and sum_squares are from bin centres
// (within ±0.5 per element). And for every format, over all parameters:
// grad_range/<format>/{underflow,subnormal,overflow}: shares of g * loss scale a
// cast to the format would flush to zero, leave subnormal, or overflow; grad_range/norm,
// the sampled gradients' total L2 norm (finite only; a script that does not clip has no
// train/grad_norm, whose steps TensorBoard then shows empty). For a run in
// another precision than fp16: grad_range/fp16_loss_scale/{lowest,highest}_log2, the
// loss scales at which fp16 would carry the gradients (analysis/loss_scale_window.h).
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/export/tensorboard/event_writer.h"
#include "profiler/memory_kind.h"
#include "profiler/records.h"

namespace ampscope::profiler {
class SessionReader;
}

namespace ampscope::profiler::tensorboard {

std::vector<Scalar> step_scalars(const StepRecord& step, int64_t skipped_steps_so_far, MemoryKind memory);
// Empty when the sample holds no nonzero finite element.
Histogram log2_magnitude_histogram(const GradientSample& sample);
std::string histogram_tag(const std::string& parameter);  // "grad_log2_abs/<parameter>"
// Histograms of one sampled step's parameters, and the format shares over all of them;
// `precision` (the run's: "fp32", "bf16", "fp16"; "" unknown) decides the fp16 loss-scale window.
void write_gradients(EventFileWriter& writer, const std::vector<GradientSample>& samples, double wall_time,
                     const std::string& precision);

// A live run's steps and gradient samples, as they come. Not thread-safe: one
// consumer thread (never the training thread) calls it.
class TensorBoardLogger {
 public:
  TensorBoardLogger(const std::string& dir, std::string precision, MemoryKind memory);  // throws StoreError
  void on_step(const StepRecord& step);                // wall time: now
  // One sampled step's samples; a step already written is ignored.
  void on_gradients(const std::vector<GradientSample>& samples);
  void flush() { writer_.flush(); }
  const std::string& path() const { return writer_.path(); }

 private:
  EventFileWriter writer_;
  int64_t skipped_ = 0;
  int64_t last_gradient_step_ = -1;
  std::string precision_;
  MemoryKind memory_;
};

// Every step and gradient sample of a session into a new event file in `dir`;
// wall times are the session's start (meta created_utc) plus each step's end on
// the profiler clock. Returns the file's path; throws StoreError.
std::string export_session(const SessionReader& session, const std::string& dir);

}  // namespace ampscope::profiler::tensorboard
