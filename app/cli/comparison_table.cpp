#include "app/cli/comparison_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profiler/memory_kind.h"
#include "profiler/number_text.h"
#include "profiler/script_facts.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_data.h"

namespace ampscope::cli {
namespace {

std::string speedup_text(const profiler::Spread& s) {
  if (s.median <= 0.0) return "-";
  if (s.max - s.min < 0.005) return fmt::format("{:.2f}x", s.median);
  return fmt::format("{:.2f}x ({:.2f}-{:.2f})", s.median, s.min, s.max);
}

std::string flops_text(double flops) { return flops > 0.0 ? fmt::format("{:.2f} TFLOP/s", flops / 1e12) : "-"; }

// The ops matched across the variants, the `top_ops` first (by fp32 time).
void print_op_rows(std::FILE* out, const profiler::Comparison& c, const std::vector<profiler::OpComparisonRow>& rows,
                   size_t top_ops);


}  // namespace

void print_comparison(std::FILE* out, const profiler::Comparison& c, size_t top_ops) {
  const std::string unit = profiler::timed_unit(c);
  fmt::print(out, "{}{} on {} ({}), {} warm-up {} excluded, {} repeat{} planned\n",
             c.inference ? fmt::format("inference, batch of {}: ", c.effective_batch) : "", c.meta.model,
             c.meta.device_name.empty() ? c.meta.device : c.meta.device_name, c.meta.device, c.warmup_steps,
             profiler::timed_units(c), c.planned_repeats, c.planned_repeats == 1 ? "" : "s");
  if (c.script)
    fmt::print(out, "script {}{}, in {}; ended {}\n", c.script->script,
               c.script->arguments.empty() ? "" : " " + c.script->arguments, profiler::compared_precisions(*c.script),
               c.script->ended);
  if (c.script && !profiler::ranks_text(*c.script).empty())
    fmt::print(out, "ranks: {}\n", profiler::ranks_text(*c.script));
  const auto summaries = profiler::summarize(c);
  fmt::print(out, "{:<6} {:>7} {:>26} {:>12} {:>20} {:>11} {:>11} {:>7} {:>14} {:>6}\n", "", "repeats",
             unit + " ms median (min-max)", "samples/s", "speedup vs fp32",
             profiler::memory_kind(c.meta.device) == profiler::MemoryKind::kResidentSet ? "peak RSS" : "peak mem",
             c.inference ? "last loss" : "final loss", "skipped", "achieved", "util");
  for (size_t i = 0; i < summaries.size(); ++i) {
    const auto& s = summaries[i];
    const auto& v = c.variants[i];
    fmt::print(out, "{:<6} {:>7} {:>26} {:>12.1f} {:>20} {:>11} {:>11.4f} {:>7} {:>14} {:>6}\n", s.variant,
               s.finished_repeats, fmt::format("{:.3f} ({:.3f}-{:.3f})", s.step_ms.median, s.step_ms.min, s.step_ms.max),
               s.samples_per_second, speedup_text(s.speedup),
               s.peak_memory_bytes > 0 ? profiler::text::bytes_text(static_cast<double>(s.peak_memory_bytes)) : "-", s.final_loss,
               s.skipped_steps, flops_text(s.achieved_flops_per_second),
               s.utilization > 0.0 ? fmt::format("{:.0f}%", 100.0 * s.utilization) : "-");
    if (!v.error.empty()) fmt::print(out, "       {} stopped: {}\n", v.variant, v.error);
  }
  // What the numbers say, and why (a CPU without fp16 kernels, a cast tax): the report's
  // and the GUI's verdict, one sentence a line; what to change last, where a terminal leaves the reader.
  const profiler::ReportData report = profiler::comparison_report(c, "");
  if (!report.verdict.empty()) fmt::print(out, "\nverdict\n");
  for (const std::string& sentence : report.verdict) fmt::print(out, "  {}\n", sentence);
  print_op_rows(out, c, report.op_rows, top_ops);
  fmt::print(out, "\n{}", profiler::recommendations_text(profiler::comparison_findings(report)));
}

namespace {

void print_op_rows(std::FILE* out, const profiler::Comparison& c, const std::vector<profiler::OpComparisonRow>& rows,
                   size_t top_ops) {
  if (rows.empty() || top_ops == 0) return;
  fmt::print(out, "\nops by {} time per step (top {}), speedup vs fp32, cast tax in the variant\n",
             c.meta.gpu_tracing == "cupti" ? "GPU" : "CPU", std::min(top_ops, rows.size()));
  const size_t shown = std::min(top_ops, rows.size());
  // Columns as wide as what they show (op names run to 40+ characters), modules cut at 32 from the left.
  constexpr size_t kModuleWidth = 32;
  size_t op_width = 2, module_width = 6;
  const auto module_text = [&](const std::string& m) {
    return m.size() > kModuleWidth ? "..." + m.substr(m.size() - (kModuleWidth - 3)) : m;
  };
  for (size_t r = 0; r < shown; ++r) {
    op_width = std::max(op_width, rows[r].name.size());
    module_width = std::max(module_width, module_text(rows[r].module).size());
  }
  std::string header = fmt::format("{:<{}} {:<9} {:<{}}", "op", op_width, "phase", "module", module_width);
  for (const auto& v : c.variants) header += fmt::format(" {:>24}", v.variant + " us (x, cast)");
  fmt::print(out, "{}  shapes\n", header);
  for (size_t r = 0; r < shown; ++r) {
    const auto& row = rows[r];
    std::string line = fmt::format("{:<{}} {:<9} {:<{}}", row.name, op_width, std::string(profiler::to_string(row.phase)),
                                   module_text(row.module), module_width);
    std::string ran_as;
    for (size_t v = 0; v < row.cells.size(); ++v) {
      const auto& cell = row.cells[v];
      if (!cell.present) {
        line += fmt::format(" {:>24}", "-");
        continue;
      }
      std::string text = fmt::format("{:.1f}", cell.time_ns_per_step / 1e3);
      if (row.speedup[v] > 0.0 && c.variants[v].variant != profiler::kBaselineVariant)
        text += fmt::format(" ({:.2f}x", row.speedup[v]) +
                (cell.cast_ns_per_step > 0.0 ? fmt::format(", {:.1f})", cell.cast_ns_per_step / 1e3) : ")");
      line += fmt::format(" {:>24}", text);
      for (const std::string& name : cell.ran_as) ran_as += fmt::format("{}{} ran {}", ran_as.empty() ? "" : "; ", c.variants[v].variant, name);
    }
    fmt::print(out, "{}  {}\n", line, profiler::text::shapes_text(row.input_shapes));
    // Which kernel op each precision picked for the op the model called (attention's variants).
    if (!ran_as.empty()) fmt::print(out, "{:<{}}   ({})\n", "", op_width, ran_as);
  }
}

}  // namespace
}  // namespace ampscope::cli
