#pragma once
// The eager and the compiled run side by side (issue 28) as a self-contained HTML
// page, in the report's style: what `ampscope diff --html` writes.
#include <string>

#include "profiler/analysis/eager_vs_compiled.h"

namespace ampscope::profiler {

std::string render_diff_html(const EagerVsCompiled& diff, const std::string& eager_path,
                             const std::string& compiled_path);
// Through a temporary file renamed over out_path; throws StoreError ("cannot write ...").
void write_diff_html(const EagerVsCompiled& diff, const std::string& eager_path, const std::string& compiled_path,
                     const std::string& out_path);

}  // namespace ampscope::profiler
