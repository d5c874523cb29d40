// The report's torch.compile section (issue #28): the graphs' ops as autocast traced
// them (compiled op table rows: dtypes, module, category; calls, no time of their
// own), the time inside the compiled graphs per kernel inductor generated with the
// graph ops it fused, and dynamo's graph breaks and recompilations with its reasons.
#include <algorithm>
#include <string>
#include <vector>

#include "profiler/analysis/compiled_kernels_text.h"
#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"

namespace ampscope::profiler::report_detail {
namespace {

// Graph op rows shown at most, by calls.
constexpr size_t kCompiledOpRows = 40;

std::string graph_ops_html(const ReportData& d, double per) {
  std::vector<const OpStats*> rows;
  for (const OpStats& r : d.op_stats)
    if (r.compiled) rows.push_back(&r);
  if (rows.empty()) return "";
  // Autocast's decisions first (demoted, kept fp32, promoted, casts), then by calls.
  std::stable_sort(rows.begin(), rows.end(), [](const OpStats* a, const OpStats* b) {
    if (a->category != b->category) return a->category < b->category;
    return a->calls > b->calls;
  });
  std::vector<std::vector<std::string>> table;
  for (size_t i = 0; i < rows.size() && i < kCompiledOpRows; ++i) {
    const OpStats& r = *rows[i];
    table.push_back({"<code>" + escape(r.name) + "</code>", escape(r.module.empty() ? "\u2013" : r.module),
                     escape(std::string(to_string(r.phase))), escape(std::string(to_string(r.category))),
                     escape(dtypes_text(r.input_dtypes, r.output_dtypes)),
                     escape(sig3(static_cast<double>(r.calls) / per))});
  }
  std::string s = "<h3>Graph ops as autocast traced them <span class=\"muted\">(" + std::to_string(rows.size()) +
                  " signatures" + (rows.size() > kCompiledOpRows ? ", " + std::to_string(kCompiledOpRows) + " shown" : "") +
                  ")</span></h3>";
  s += paragraph("Autocast's casts are graph ops of their own, so a demoted op's inputs show the dtype they were "
                 "cast to.",
                 "muted");
  s += table_html({{"op"}, {"module"}, {"phase"}, {"category"}, {"dtypes in \u2192 out"}, {"calls/step", true}}, table);
  return s;
}

std::string compiled_kernels_html(const ReportData& d, double per) {
  const std::vector<CompiledKernelRow>& rows = d.compile.kernels;
  if (rows.empty()) return "";
  const CompiledTimeShare share = compiled_time_share(rows);
  // On a GPU a kernel's share is of its graph's GPU time, else of its CPU time.
  const bool gpu = share.gpu_graph_ns > 0;
  std::string s = "<h3>Time inside the compiled graphs</h3>";
  s += paragraph(ns_as_ms(static_cast<double>(share.graph_ns) / per) + " CPU" +
                 (gpu ? " and " + ns_as_ms(static_cast<double>(share.gpu_graph_ns) / per) + " GPU" : "") +
                 " per profiled step inside compiled graphs: " + compiled_share_text(share) + ".");
  const auto per_step = [&](int64_t ns) { return escape(ns_as_ms(static_cast<double>(ns) / per)); };
  const auto gpu_cell = [&](const CompiledKernelRow& r) {
    if (r.kernels == 0) return std::string("\u2013");
    std::string cell = per_step(r.gpu_time_ns);
    if (r.tensor_core_kernels > 0)
      cell += " <span class=\"muted\">TC " + std::to_string(r.tensor_core_kernels) + "/" + std::to_string(r.kernels) + "</span>";
    return cell;
  };
  std::vector<std::vector<std::string>> table;
  int64_t graph_ns = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const CompiledKernelRow& r = rows[i];
    if (r.kind == kCompiledGraphCall) {
      graph_ns = gpu ? r.gpu_time_ns : r.cpu_time_ns;
      table.push_back({"<b>graph " + std::to_string(r.graph) + "</b>", escape(std::string(to_string(r.phase))), "",
                       "", escape(sig3(static_cast<double>(r.calls) / per)), per_step(r.cpu_time_ns), gpu_cell(r), "",
                       ""});
      continue;
    }
    const int64_t own = gpu ? r.gpu_time_ns : r.cpu_time_ns;
    table.push_back({"", escape(std::string(to_string(r.phase))), escape(r.kind),
                     "<code>" + escape(compiled_call_text(r)) + "</code>",
                     escape(sig3(static_cast<double>(r.calls) / per)), per_step(r.cpu_time_ns), gpu_cell(r),
                     escape(graph_ns > 0 ? percent(static_cast<double>(own) / static_cast<double>(graph_ns)) : "\u2013"),
                     escape(r.kind == kCompiledOtherCall ? "" : fused_ops_text(r))});
  }
  s += table_html({{"graph"},
                   {"phase"},
                   {"kind", false,
                    "fused: a kernel inductor generated; extern: an ATen op it calls (GEMM, conv); tuning: a "
                    "first call's autotuning of a kernel (its timed runs, the buffers reset between them); "
                    "other: what the listing does not name"},
                   {"kernel"},
                   {"calls/step", true},
                   {"CPU/step", true},
                   {"GPU/step", true, "the GPU kernels it ran (CUPTI); TC: how many used Tensor Cores"},
                   {"of its graph", true, gpu ? "of the graph's GPU time" : "of the graph's CPU time"},
                   {"graph ops it computes", false, "by module and autocast category"}},
                  table);
  return s;
}

std::string compile_events_html(const CompileEvents& c) {
  std::string s;
  if (const std::string eager = ran_eagerly_text(c.ran_eagerly); !eager.empty())
    s += paragraph(capitalized(eager) + ".", "rec warning");
  s += "<h3>Graph breaks and recompilations</h3>";
  if (c.graph_breaks.empty() && c.recompilations.empty())
    return s + paragraph("None: dynamo compiled each function once, without a break.");
  std::vector<std::vector<std::string>> table;
  for (const GraphBreak& b : c.graph_breaks)
    table.push_back({"graph break", "<code>" + escape(b.where) + "</code>", grouped(b.count), escape(b.reason)});
  for (const Recompilation& r : c.recompilations)
    table.push_back({"recompilation", "<code>" + escape(r.frame) + "</code>", "", escape(r.reason)});
  return s + table_html({{"event"}, {"where"}, {"times", true}, {"dynamo's reason"}}, table);
}

}  // namespace

std::string compiled_html(const ReportData& d) {
  bool graph_ops = false;
  for (const OpStats& r : d.op_stats) graph_ops = graph_ops || r.compiled;
  if (!d.compile.any() && !graph_ops) return "";
  const double per = profiled_step_divisor(d);
  std::string s = paragraph(capitalized(graphs_read_text(d.compile.graphs)) +
                            (d.compile.graphs == 0 && !graph_ops
                                 ? "."
                                 : ". Per profiled step; the compiled regions' own rows in the op table above hold "
                                   "their time as the eager code sees it."));
  s += compiled_kernels_html(d, per);
  s += graph_ops_html(d, per);
  s += compile_events_html(d.compile);
  return section_html("compiled", "Compiled code (torch.compile)", s);
}

}  // namespace ampscope::profiler::report_detail
