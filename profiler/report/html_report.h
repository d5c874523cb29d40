#pragma once
// The self-contained HTML report: one file with inline CSS (light and dark) and
// inline SVG charts; no script, no external URL, no font or image to fetch, so it
// opens offline and can be mailed or attached as is. The markup is well-formed
// (every element closed, attributes quoted) for XML tools as well as browsers.
#include <string>

#include "profiler/report/report_data.h"

namespace ampscope::profiler {

std::string render_html(const ReportData& data);

// Writes render_html(data) to out_path through a temporary file renamed over it, so
// an interrupted write never leaves a half report. Throws StoreError ("cannot write ...").
void write_html_report(const ReportData& data, const std::string& out_path);

}  // namespace ampscope::profiler
