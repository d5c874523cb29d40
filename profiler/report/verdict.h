#pragma once
// The report's verdict: a few sentences in plain words that say what mixed
// precision bought on this run ("bf16 gave 2.4× over fp32 (1.9–2.6× across 3
// repeats)", "fp16 was 15× slower than fp32 on this CPU: ..."), what it cost, and
// whether the loss agreed. Only claims the data supports: no speedup without a
// baseline, no Tensor Core claim without a GPU trace.
#include <string>
#include <vector>

#include "profiler/report/report_data.h"

namespace ampscope::profiler {

// Sentences in reading order; text, not HTML (the renderer escapes it).
std::vector<std::string> verdict(const ReportData& data);

}  // namespace ampscope::profiler
