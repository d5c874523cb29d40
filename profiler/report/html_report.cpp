#include "profiler/report/html_report.h"

#include <cctype>
#include <filesystem>

#include "profiler/export/export_util.h"
#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"
#include "profiler/script_facts.h"

namespace ampscope::profiler {
namespace report_detail {
namespace {

// No url(), @import or web font: the page must render offline exactly as shipped.
constexpr const char* kStyle = R"css(
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d1f23; --muted: #5f6670; --line: #dde1e6;
  --card: #f4f6f8; --accent: #1f77b4; --warn: #a8460b; --warn-bg: #fff1e6; --info-bg: #e8f1fa; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15171b; --fg: #e4e6e9; --muted: #9aa1aa; --line: #30353d; --card: #1e2127;
    --accent: #6fb1e8; --warn: #f2a05c; --warn-bg: #3a2616; --info-bg: #182a3b; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 20px 28px 40px; }
h1 { font-size: 24px; margin: 4px 0 2px; }
h2 { font-size: 18px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 8px; }
p { margin: 6px 0; }
.muted, .subtitle { color: var(--muted); }
.meta { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 2px 16px; margin: 12px 0;
  font-size: 13px; }
.meta dt { color: var(--muted); }
.meta dd { margin: 0; overflow-wrap: anywhere; }
ul.verdict { margin: 6px 0; padding-left: 20px; font-size: 15px; }
ul.verdict li { margin: 3px 0; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(165px, 1fr)); gap: 10px; margin: 14px 0; }
.figure { background: var(--card); border-radius: 6px; padding: 8px 12px; }
.figure .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.figure .label { font-size: 12px; color: var(--muted); }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; margin: 6px 0 12px; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-weight: 600; color: var(--muted); white-space: nowrap; position: sticky; top: 0; background: var(--bg); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total td { font-weight: 600; }
code, .mono { font-family: ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12px; }
td code { white-space: nowrap; }
.shapes { font-family: ui-monospace, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 11px;
  color: var(--muted); }
table.kernels td:first-child { max-width: 560px; }
table.kernels td:first-child code { white-space: normal; overflow-wrap: anywhere; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0 4px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 6px 24px; }
.rec { border-left: 4px solid var(--accent); background: var(--info-bg); padding: 8px 12px; margin: 10px 0;
  border-radius: 0 6px 6px 0; }
.rec.warning { border-left-color: var(--warn); background: var(--warn-bg); }
.rec .title { font-weight: 600; }
.rec .id { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 11px; color: var(--muted); }
.rec ul { margin: 4px 0 0; padding-left: 18px; font-size: 12.5px; }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; border: 1px solid currentColor; }
.badge.warning { color: var(--warn); }
.badge.info { color: var(--accent); }
.bad { color: #d62728; font-weight: 600; }
table.heat td.ready { background: rgba(44, 160, 44, 0.28); }
table.heat td.borderline { background: rgba(255, 170, 0, 0.35); }
table.heat td.keep { background: rgba(214, 39, 40, 0.33); }
table.heat td { white-space: nowrap; font-variant-numeric: tabular-nums; }
ul.thresholds, ul.notes { margin: 4px 0; padding-left: 20px; font-size: 12.5px; color: var(--muted); }
footer { margin-top: 36px; padding-top: 8px; border-top: 1px solid var(--line); font-size: 12px; color: var(--muted); }
)css";

}  // namespace

std::string page_html(const std::string& title, const std::string& version, const std::string& body_html,
                      const std::string& footer_html) {
  std::string s;
  s.reserve(body_html.size() + (1 << 12));
  s += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>";
  s += "<meta name=\"color-scheme\" content=\"light dark\"/>";
  s += "<meta name=\"generator\" content=\"ampscope " + escape(version) + "\"/>";
  s += "<title>" + escape(title) + "</title><style>" + kStyle + "</style></head>\n<body><main>";
  s += body_html;
  s += "<footer>" + footer_html + "</footer></main></body></html>\n";
  return s;
}

std::string file_name(const std::string& path) {
  const auto name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

namespace {

void add_meta(std::string& out, const std::string& key, const std::string& value) {
  if (value.empty()) return;
  out += "<dt>" + escape(key) + "</dt><dd>" + escape(value) + "</dd>";
}

std::string header_html(const ReportData& d) {
  const auto& m = d.meta;
  const bool comparison = d.kind == ReportData::Kind::kComparison && d.comparison;
  std::string s =
      "<header><h1>" + escape(m.model.empty() ? std::string("ampscope report") : m.model) + "</h1>";
  const bool ranks = d.kind == ReportData::Kind::kRanks && d.ranks;
  s += "<p class=\"subtitle\">" +
       escape(comparison ? "Precision comparison, " + file_name(d.path)
              : ranks    ? "Distributed run, " + std::to_string(d.ranks->ranks.size()) + " ranks"
                         : "Profiled session, " + file_name(d.path)) +
       "</p><dl class=\"meta\">";
  // A Python script's session: the script and what the capture saw it use.
  // A script's comparison: the script compared (its precision row names the precisions).
  const auto facts = ranks        ? std::nullopt
                     : comparison ? d.comparison->script
                                  : script_facts(d.meta_values);
  if (facts) {
    for (const auto& [label, value] : fact_rows(*facts))
      if (label != "device") add_meta(s, label, value);
  } else {
    add_meta(s, "model", m.model);
    add_meta(s, "data", m.data);
  }
  add_meta(s, "device", m.device_name.empty() ? m.device : m.device_name + " (" + m.device + ")");
  if (comparison) {
    std::string variants;
    for (const auto& v : d.comparison->variants)
      variants += (variants.empty() ? "" : ", ") + v.variant;
    if (!facts) add_meta(s, "precisions", variants);  // else the facts' precision row names them
    add_meta(s, "repeats",
             std::to_string(d.comparison->planned_repeats) + " planned, warm-up " +
                 std::to_string(d.comparison->warmup_steps) + " steps");
  } else if (!facts) {  // a script's precision and scaler are among its facts
    add_meta(s, "precision", m.precision + (m.scaler_enabled ? " + loss scaler" : ""));
  }
  if (m.parameter_count > 0) add_meta(s, "parameters", grouped(m.parameter_count));
  add_meta(s, "torch", m.torch_version);
  add_meta(s, "date", m.created_utc);
  add_meta(s, "GPU trace", m.gpu_tracing);
  s += "</dl></header>";
  return s;
}

std::string verdict_html(const ReportData& d) {
  if (d.verdict.empty())
    return section_html("verdict", "Verdict", paragraph("Too little data for a verdict.", "muted"));
  std::string s = "<ul class=\"verdict\">";
  for (const auto& line : d.verdict) s += "<li>" + rich_text(line) + "</li>";
  return section_html("verdict", "Verdict", s + "</ul>");
}

}  // namespace

std::string table_html(const std::vector<Column>& columns,
                       const std::vector<std::vector<std::string>>& rows,
                       const std::string& css_class) {
  std::string s = "<div class=\"scroll\"><table" +
                  (css_class.empty() ? "" : " class=\"" + escape(css_class) + "\"") +
                  "><thead><tr>";
  for (const auto& c : columns) {
    s += std::string("<th") + (c.numeric ? " class=\"num\"" : "") +
         (c.tooltip.empty() ? "" : " title=\"" + escape(c.tooltip) + "\"") + ">" +
         escape(c.header) + "</th>";
  }
  s += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    s += "<tr>";
    for (size_t i = 0; i < columns.size(); ++i) {
      s += std::string("<td") + (columns[i].numeric ? " class=\"num\"" : "") + ">";
      if (i < row.size()) s += row[i];
      s += "</td>";
    }
    s += "</tr>";
  }
  return s + "</tbody></table></div>";
}

std::string section_html(const std::string& id, const std::string& title,
                         const std::string& body_html) {
  return "<section id=\"" + escape(id) + "\"><h2>" + escape(title) + "</h2>" + body_html +
         "</section>";
}

std::string figures_html(const std::vector<std::pair<std::string, std::string>>& figures) {
  std::string s = "<div class=\"figures\">";
  for (const auto& [label, value] : figures)
    s += "<div class=\"figure\"><div class=\"value\">" + rich_text(value) +
         "</div><div class=\"label\">" + escape(label) + "</div></div>";
  return s + "</div>";
}

std::string paragraph(const std::string& text, const std::string& css_class) {
  return "<p" + (css_class.empty() ? "" : " class=\"" + escape(css_class) + "\"") + ">" +
         rich_text(text) + "</p>";
}

std::string rich_text(const std::string& text) {
  const std::string e = escape(text);
  std::string out;
  out.reserve(e.size());
  auto digit = [&](size_t k) {
    return k < e.size() && std::isdigit(static_cast<unsigned char>(e[k]));
  };
  for (size_t i = 0; i < e.size(); ++i) {
    const bool word_start = i == 0 || !std::isalnum(static_cast<unsigned char>(e[i - 1]));
    if (e[i] == '2' && word_start && i + 1 < e.size() && e[i + 1] == '^') {
      size_t j = i + 2;
      if (j < e.size() && e[j] == '-') ++j;
      if (digit(j)) {
        while (digit(j)) ++j;
        out += "2<sup>" + e.substr(i + 2, j - i - 2) + "</sup>";
        i = j - 1;
        continue;
      }
    }
    out += e[i];
  }
  return out;
}


std::string dtypes_text(const std::vector<DtypeName>& in, const std::vector<DtypeName>& out) {
  const std::string flow = text::dtype_flow_text(in, out);
  return flow.empty() ? std::string("\u2013") : flow;
}

std::string recommendations_html(const std::vector<Recommendation>& recs) {
  if (recs.empty())
    return paragraph("Nothing to recommend: no rule found clear evidence of a problem.", "muted");
  std::string s;
  for (const auto& r : recs) {
    const std::string severity(to_string(r.severity));
    s += "<div class=\"rec " + escape(severity) + "\"><div><span class=\"badge " +
         escape(severity) + "\">" + escape(severity) + "</span> <span class=\"title\">" +
         rich_text(r.title) + "</span> <span class=\"id\">" + escape(r.id) + "</span></div>";
    if (!r.detail.empty()) s += "<p>" + rich_text(r.detail) + "</p>";
    if (!r.evidence.empty()) {
      s += "<ul>";
      for (const auto& e : r.evidence) s += "<li class=\"mono\">" + escape(e) + "</li>";
      s += "</ul>";
    }
    s += "</div>";
  }
  return s;
}

}  // namespace report_detail

std::string render_html(const ReportData& d) {
  using namespace report_detail;
  const bool comparison = d.kind == ReportData::Kind::kComparison && d.comparison;
  std::string title =
      "ampscope report: " + (d.meta.model.empty() ? file_name(d.path) : d.meta.model);
  std::string body = header_html(d);
  body += verdict_html(d);
  const bool ranks = d.kind == ReportData::Kind::kRanks && d.ranks && !d.ranks->ranks.empty();
  body += comparison ? comparison_body(d) : ranks ? ranks_body(d) : session_body(d);
  std::string footer = escape(file_name(d.path)) + " \u00b7 report by ampscope " + escape(d.ampscope_version);
  if (!d.meta.ampscope_version.empty() && d.meta.ampscope_version != d.ampscope_version)
    footer += " (recorded by ampscope " + escape(d.meta.ampscope_version) + ")";
  return page_html(title, d.ampscope_version, body, footer);
}

void write_html_report(const ReportData& data, const std::string& out_path) {
  const std::string html = render_html(data);
  export_detail::write_file_atomically(out_path, [&](std::ostream& out) { out << html; });
}

}  // namespace ampscope::profiler
