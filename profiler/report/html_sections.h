#pragma once
// Pieces of the HTML report shared by html_report.cpp (page, header, verdict,
// recommendations), html_session.cpp and html_comparison.cpp. Internal to the
// report library. Every function returns well-formed HTML; text arguments are
// plain text and escaped here unless the parameter says `_html`.
#include <string>
#include <utility>
#include <vector>

#include "profiler/records.h"
#include "profiler/report/recommendations.h"
#include "profiler/report/report_data.h"

namespace ampscope::profiler::report_detail {

// Op table rows shown at most, by time.
inline constexpr size_t kReportTopOps = 40;

// What the op table's totals divide by for per-step figures: the steps its ops cover
// (1 for a session that says none, so a figure is the total rather than nothing).
inline double profiled_step_divisor(const ReportData& d) {
  return d.profiled_steps > 0 ? static_cast<double>(d.profiled_steps) : 1.0;
}

struct Column {
  Column(std::string header_text, bool is_numeric = false, std::string tooltip_text = "")
      : header(std::move(header_text)), numeric(is_numeric), tooltip(std::move(tooltip_text)) {}
  std::string header;
  bool numeric = false;  // right-aligned, tabular figures
  std::string tooltip;
};

// A table; cells are HTML (already escaped), one vector per row, as many as columns.
std::string table_html(const std::vector<Column>& columns,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::string& css_class = "");
std::string section_html(const std::string& id, const std::string& title,
                         const std::string& body_html);
// The summary cards: label and value (text).
std::string figures_html(const std::vector<std::pair<std::string, std::string>>& figures);
std::string paragraph(const std::string& text, const std::string& css_class = "");
// Escaped text with each power of two written "2^16" set as 2<sup>16</sup>.
std::string rich_text(const std::string& text);

// "float32, float32 → float16".
std::string dtypes_text(const std::vector<DtypeName>& in, const std::vector<DtypeName>& out);
std::string recommendations_html(const std::vector<Recommendation>& recommendations);

// A path's file name, for headers and footers (the path itself when it has none).
std::string file_name(const std::string& path);

// The version the report names itself by (report_data.cpp: AMPSCOPE_VERSION).
std::string report_version();

// The whole page around a body: head, the one inline style sheet, footer (HTML).
std::string page_html(const std::string& title, const std::string& version, const std::string& body_html,
                      const std::string& footer_html);

std::string session_body(const ReportData& data);     // html_session.cpp
std::string readiness_html(const ReportData& data);   // html_readiness.cpp; "" without readiness
std::string compiled_html(const ReportData& data);    // html_compiled.cpp; "" without compiled code
std::string comparison_body(const ReportData& data);  // html_comparison.cpp
std::string ranks_body(const ReportData& data);       // html_ranks.cpp

}  // namespace ampscope::profiler::report_detail
