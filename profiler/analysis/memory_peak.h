#pragma once
// A session's memory peak, and what the range-sampled steps made of it. A range sample
// holds each module's output to its step's end (the activation ranges) and runs batched
// passes over gradients and outputs (on a GPU up to some 500 MB of temporaries at once,
// batched_pass.h): the device's peak may rise on those steps, and the peak stays risen,
// since both figures are high-water marks (CUDA's allocator peak, the process's VmHWM).
// Steps outside a sample's window tell the peak the training reached without samples:
// a high-water mark that rose on such a step is that step's own peak. The window is the
// sampled step and the one after it: the passes at a step's end land in the next step's
// mark. One implementation for `summary`, the JSON summary, the report and the GUI.
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

struct MemoryPeak {
  int64_t peak_bytes = 0;  // the largest high-water mark of any step; 0 where none was measured
  // The largest mark a step outside the samples' windows set: nullopt where no such step
  // raised the mark (every step sampled, or none measured).
  std::optional<int64_t> outside_samples_bytes;
  // The samples' windows raised the mark above what the other steps reached, by at least
  // kMaterialRise of it: a CPU run's resident set creeps by kilobytes from step to step
  // (the interpreter's allocator), which the steps a sample ran in take part in too.
  static constexpr double kMaterialRise = 0.01;
  bool raised_by_samples() const {
    return outside_samples_bytes &&
           static_cast<double>(peak_bytes - *outside_samples_bytes) >= kMaterialRise * static_cast<double>(peak_bytes);
  }
};

// `steps` in step order; `sampled`: the steps with gradient or activation samples.
MemoryPeak memory_peak(const std::vector<StepRecord>& steps, const std::set<int64_t>& sampled);

}  // namespace ampscope::profiler
