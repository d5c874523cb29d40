#include "profiler/analysis/memory_peak.h"

#include <algorithm>

namespace ampscope::profiler {

MemoryPeak memory_peak(const std::vector<StepRecord>& steps, const std::set<int64_t>& sampled) {
  MemoryPeak m;
  int64_t mark_before = 0;  // the previous step's high-water mark
  for (const StepRecord& s : steps) {
    const int64_t mark = s.mem_peak_bytes;
    if (mark <= 0) continue;  // not measured
    m.peak_bytes = std::max(m.peak_bytes, mark);
    const bool in_window = sampled.count(s.step) > 0 || sampled.count(s.step - 1) > 0;
    // A mark that changed outside a window is that step's own peak: it rose, or the script
    // reset the mark (torch.cuda.reset_peak_memory_stats) and it is the peak since.
    if (!in_window && mark != mark_before)
      m.outside_samples_bytes = std::max(m.outside_samples_bytes.value_or(0), mark);
    mark_before = mark;
  }
  return m;
}

}  // namespace ampscope::profiler
