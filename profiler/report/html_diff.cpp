#include "profiler/report/html_diff.h"

#include "profiler/export/export_util.h"
#include "profiler/number_text.h"
#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"

namespace ampscope::profiler {
namespace {

using namespace report_detail;

// "—" for a phase or region a run did not record.
std::string ms(double v) { return v > 0 ? text::printf_string("%.3f ms", v) : "\u2014"; }

std::string ratio(double eager, double compiled) {
  return eager > 0 && compiled > 0 ? text::printf_string("%.2f\u00d7", eager / compiled) : "";
}

}  // namespace

std::string render_diff_html(const EagerVsCompiled& d, const std::string& eager_path,
                             const std::string& compiled_path) {
  std::string body = "<header><h1>Eager and compiled runs</h1><p class=\"subtitle\">" +
                     escape(file_name(eager_path)) + " \u2192 " + escape(file_name(compiled_path)) + "</p></header>";
  const auto speedup = d.speedup();
  body += figures_html({{"eager step", ms(d.eager_step_ms)},
                        {"compiled step", ms(d.compiled_step_ms)},
                        {"speedup", speedup ? ratio(d.eager_step_ms, d.compiled_step_ms) : "\u2014"},
                        {"modules alike", std::to_string(d.same) + " of " + std::to_string(d.modules.size())}});
  if (!d.compiled_run_has_graphs)
    body += paragraph("The second session holds no op read from a compiled graph: was it run under torch.compile, "
                      "through `ampscope run`?",
                      "warn");

  std::vector<std::vector<std::string>> rows;
  for (const ModulePrecision& m : d.modules) {
    const std::string agreement(to_string(m.agreement));
    rows.push_back({escape(m.module.empty() ? "(no module)" : m.module), escape(to_string(m.phase)), escape(m.kind),
                    escape(precision_side_text(m.eager, "\u2192", "\u2014")),
                    escape(precision_side_text(m.compiled, "\u2192", "\u2014")),
                    m.agreement == Agreement::kDiffers ? "<strong>" + escape(agreement) + "</strong>" : escape(agreement)});
  }
  body += section_html(
      "precision", "Precision per module",
      paragraph(std::to_string(d.same) + " same, " + std::to_string(d.differs) + " differ, " +
                std::to_string(d.eager_only) + " eager only, " + std::to_string(d.compiled_only) +
                " compiled only. Operand dtypes \u2192 output dtypes of each module's GEMMs, convolutions and "
                "attention, with autocast's decision where it changed anything. Ops of a compiled backward graph "
                "without a module path (AOTAutograd gave their nodes none) are listed under (no module).") +
          table_html({{"Module"}, {"Phase"}, {"Kind"}, {"Eager run"}, {"Compiled run"}, {"Agreement"}}, rows));

  rows.clear();
  for (const PhaseTime& p : d.phases)
    rows.push_back({escape(to_string(p.phase)), ms(p.eager_cpu_ms), ms(p.compiled_cpu_ms),
                    ratio(p.eager_cpu_ms, p.compiled_cpu_ms), ms(p.eager_gpu_ms), ms(p.compiled_gpu_ms)});
  body += section_html("phases", "Time per step, by phase",
                       paragraph("Medians over each run's recorded steps of the time inside the outermost recorded "
                                 "ops, so the step that compiled stays out.") +
                           table_html({{"Phase"},
                                       {"Eager CPU", true},
                                       {"Compiled CPU", true},
                                       {"", true},
                                       {"Eager GPU", true},
                                       {"Compiled GPU", true}},
                                      rows));
  if (!d.regions.empty()) {
    rows.clear();
    for (const RegionTime& r : d.regions)
      rows.push_back({escape(r.name), escape(to_string(r.phase)), std::to_string(r.calls), ms(r.median_ms),
                      ms(r.first_call_ms)});
    body += section_html("regions", "Compiled regions",
                         paragraph("CPU time of the median call, and of the first recorded call: where the run's "
                                   "first step was recorded, that is the call that compiled.") +
                             table_html({{"Region"}, {"Phase"}, {"Calls", true}, {"Median call", true},
                                         {"First call", true}},
                                        rows));
  }
  return page_html("ampscope: eager and compiled runs", report_version(), body,
                   escape(file_name(eager_path) + " \u00b7 " + file_name(compiled_path)) + " \u00b7 ampscope " +
                       escape(report_version()));
}

void write_diff_html(const EagerVsCompiled& diff, const std::string& eager_path, const std::string& compiled_path,
                     const std::string& out_path) {
  const std::string html = render_diff_html(diff, eager_path, compiled_path);
  export_detail::write_file_atomically(out_path, [&](std::ostream& out) { out << html; });
}

}  // namespace ampscope::profiler
