#pragma once
// The one loader of `ampscope diff` and the GUI's diff window: two session files
// read into compare_eager_and_compiled (profiler/analysis/eager_vs_compiled.h),
// op tables, step times, and every recorded op and kernel for the medians.
#include <string>

#include "profiler/analysis/eager_vs_compiled.h"

namespace ampscope::profiler {

// Throws StoreError (a missing, foreign or corrupt file) or std::runtime_error (a
// session without an op table), each with a one-line message naming the file.
EagerVsCompiled diff_sessions(const std::string& eager_path, const std::string& compiled_path);

}  // namespace ampscope::profiler
