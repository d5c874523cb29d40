#pragma once
// Chrome trace JSON in the layout of PyTorch profiler (Kineto) traces, so Perfetto,
// chrome://tracing and tools written for torch.profiler traces open it: CPU ops as
// "cpu_op" complete events with PyTorch's arg names and dtype spellings, kernels /
// memcpy / memset on (device, stream) tracks, "ac2g" flows from each op to the
// kernels it launched, "fwdbwd" flows from forward to backward ops, and steps as
// "ProfilerStep#N" user annotations. ampscope adds "Module", "Autocast", "Phase",
// "Output type" and "Cast bytes" to the op args.
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

#include "profiler/store/session_reader.h"

namespace ampscope::profiler {

struct ChromeTraceOptions {
  // Steps to export (inclusive): a trace of a whole long run is too big for a viewer.
  int64_t first_step = std::numeric_limits<int64_t>::min();
  int64_t last_step = std::numeric_limits<int64_t>::max();
};

void export_chrome_trace(const SessionReader& session, std::ostream& out,
                         const ChromeTraceOptions& options = {});
// Throws StoreError when the file cannot be written; never leaves a partial file.
void export_chrome_trace(const SessionReader& session, const std::string& path,
                         const ChromeTraceOptions& options = {});

// "float16" -> "c10::Half", "float32" -> "float", "int64" -> "long int", as
// torch.profiler writes "Input type"; names already in that form pass through.
std::string_view pytorch_dtype_name(std::string_view dtype);

// The pid of CPU tracks: the meta value "pid" when the capture stored one, else this
// (GPU tracks use the device index as pid, as Kineto does).
inline constexpr int64_t kDefaultCpuPid = 1'000'000;

}  // namespace ampscope::profiler
