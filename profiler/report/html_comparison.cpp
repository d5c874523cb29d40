// The sections of a comparison report: per-variant table, step time bars, loss
// curves, the per-op comparison, recommendations per reduced-precision variant.
#include <algorithm>
#include <cmath>
#include <optional>

#include "profiler/display_colors.h"
#include "profiler/memory_kind.h"
#include "profiler/report/findings.h"
#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"
#include "profiler/report/svg_chart.h"

namespace ampscope::profiler::report_detail {
namespace {

// The GUI's colours (profiler/display_colors.h), so a reader who knows the app reads the
// report's charts at a glance.
std::string variant_color(const std::string& variant, size_t index) {
  if (const uint32_t rgb = profiler::variant_color(variant); rgb != 0) return svg::css_color(rgb);
  return svg::palette()[index % svg::palette().size()];
}

std::string variant_label(const VariantRun& run) {
  std::string s = run.precision;
  if (run.tf32) s += " + TF32";
  if (run.scaler) s += " + loss scaler";
  return s;
}

std::string range_text(const Spread& s) { return ms_text(s.min) + " \u2013 " + ms_text(s.max); }

std::string summary_html(const ReportData& d) {
  const auto& c = *d.comparison;
  const auto& sums = d.variant_summaries;
  std::vector<std::pair<std::string, std::string>> f;
  const std::string unit = timed_unit(c);
  if (c.inference) f.emplace_back("compares", "inference (forward only)");
  f.emplace_back("variants", std::to_string(c.variants.size()));
  f.emplace_back("repeats planned", std::to_string(c.planned_repeats));
  f.emplace_back(std::string("warm-up ") + timed_units(c) + " excluded", std::to_string(c.warmup_steps));
  if (c.effective_batch > 0) f.emplace_back("samples per " + unit, grouped(c.effective_batch));
  const auto base = baseline_index(c);
  for (size_t i = 0; i < sums.size(); ++i) {
    if (base && i != *base && sums[i].speedup.median > 0) {
      const double sp = sums[i].speedup.median;
      f.emplace_back(sums[i].variant + " vs " + c.variants[*base].variant,
                     sp < 1 ? factor(1 / sp) + " slower" : factor(sp) + " faster");
    } else {
      f.emplace_back(sums[i].variant + " median " + unit, ms_text(sums[i].step_ms.median));
    }
  }
  return figures_html(f);
}

std::string variants_html(const ReportData& d) {
  const auto& c = *d.comparison;
  const auto& sums = d.variant_summaries;
  bool flops = false, peak = false;
  for (const auto& s : sums) {
    flops = flops || s.achieved_flops_per_second > 0;
    peak = peak || s.utilization > 0;
  }
  const std::string unit = timed_unit(c);
  // On the CPU the figure is the process's resident set (each run's own where Linux lets its
  // peak be reset at the run's start).
  const MemoryKind memory = memory_kind(c.meta.device);
  std::vector<Column> cols = {{"variant"},
                              {"runs as"},
                              {"repeats", true},
                              {"median " + unit, true, c.inference ? "latency of one inference batch" : ""},
                              {"min \u2013 max", true, "over every measured step of every repeat"},
                              {"samples/s", true},
                              {"speedup vs fp32", true, "paired by repeat: median of fp32 / this"},
                              {"spread", true, "min \u2013 max of the per-repeat speedups"},
                              {std::string(peak_memory_name(memory)), true,
                               memory == MemoryKind::kResidentSet
                                   ? "the process's resident set at its highest (VmHWM): tensors, interpreter "
                                     "and libraries"
                                   : "CUDA's caching allocator: bytes held by tensors at their highest"},
                              {c.inference ? "loss" : "final loss", true,
                               c.inference ? "the last batch's loss, median over repeats" : ""},
                              {"skipped", true, "most skipped steps in one repeat"}};
  if (flops) cols.push_back({"FLOP/s", true, "from the GEMM/conv shapes of the profiled pass"});
  if (peak)
    cols.push_back({"of peak", true, "achieved / the device's datasheet peak for this precision"});
  std::vector<std::vector<std::string>> rows;
  std::vector<svg::Bar> bars;
  for (size_t i = 0; i < sums.size() && i < c.variants.size(); ++i) {
    const auto& s = sums[i];
    const auto& run = c.variants[i];
    const bool timed = s.step_ms.median > 0;
    const bool is_base = baseline_index(c) == i;
    const bool sped = s.speedup.median > 0 && !is_base;
    std::vector<std::string> row = {
        "<strong>" + escape(s.variant) + "</strong>" +
            (run.error.empty()
                 ? ""
                 : " <span class=\"bad\" title=\"" + escape(run.error) + "\">stopped early</span>"),
        escape(variant_label(run)),
        std::to_string(s.finished_repeats) + "/" + std::to_string(c.planned_repeats),
        timed ? escape(ms_text(s.step_ms.median)) : "\u2013",
        timed ? escape(range_text(s.step_ms)) : "\u2013",
        s.samples_per_second > 0 ? escape(sig3(s.samples_per_second)) : "\u2013",
        is_base ? std::string("baseline")
        : sped  ? "<strong>" + escape(factor(s.speedup.median)) + "</strong>"
                : "\u2013",
        sped && s.finished_repeats > 1
            ? escape(factor(s.speedup.min) + " \u2013 " + factor(s.speedup.max))
            : "\u2013",
        s.peak_memory_bytes > 0 ? escape(bytes_text(static_cast<double>(s.peak_memory_bytes)))
                                : "\u2013",
        std::isfinite(s.final_loss) ? escape(sig3(s.final_loss)) : "<span class=\"bad\">NaN</span>",
        s.skipped_steps > 0 ? "<span class=\"bad\">" + grouped(s.skipped_steps) + "</span>" : "0"};
    if (flops) row.push_back(escape(flops_text(s.achieved_flops_per_second)));
    if (peak) row.push_back(s.utilization > 0 ? escape(percent(s.utilization)) : "\u2013");
    rows.push_back(std::move(row));
    bars.push_back({s.variant, timed ? s.step_ms.median : std::nan(""),
                    variant_color(s.variant, i)});
  }
  std::string out = table_html(cols, rows);
  svg::BarChartOptions bo;
  bo.title = c.inference ? "Median latency per inference batch (lower is faster)"
                         : "Median step time (lower is faster)";
  bo.unit = "ms";
  bo.label_width = 90;
  bo.width = 720;
  out += svg::bar_chart(bars, bo);
  return section_html("variants", "Precision variants", out);
}

// The value at each step, as the median over the repeats that reached it: repeats of
// one seed train alike, so the median is their curve without one repeat's hiccups.
svg::Series median_curve(const VariantRun& run, const std::string& color, double (*value)(const StepRecord&)) {
  svg::Series out{run.variant, {}, {}, color, false};
  size_t longest = 0;
  for (const auto& rep : run.repeats) longest = std::max(longest, rep.size());
  std::vector<double> at_step;
  for (size_t i = 0; i < longest; ++i) {
    at_step.clear();
    for (const auto& rep : run.repeats)
      if (i < rep.size()) at_step.push_back(value(rep[i]));
    std::sort(at_step.begin(), at_step.end(), [](double a, double b) {
      return std::isnan(b) ? !std::isnan(a) : (!std::isnan(a) && a < b);  // NaN (diverged) last
    });
    const size_t n = at_step.size();
    const double median = n % 2 ? at_step[n / 2] : 0.5 * (at_step[n / 2 - 1] + at_step[n / 2]);
    out.x.push_back(static_cast<double>(i + 1));
    out.y.push_back(median);
  }
  return out;
}

std::string curves_html(const ReportData& d) {
  const auto& c = *d.comparison;
  const auto base = baseline_index(c);
  std::vector<svg::Series> loss, time, difference;
  std::vector<double> skipped;
  size_t most_repeats = 0;
  std::optional<svg::Series> base_loss;
  for (size_t i = 0; i < c.variants.size(); ++i) {
    const auto& run = c.variants[i];
    if (run.repeats.empty()) continue;
    most_repeats = std::max(most_repeats, run.repeats.size());
    const std::string color = variant_color(run.variant, i);
    loss.push_back(median_curve(run, color, [](const StepRecord& s) { return s.loss; }));
    time.push_back(median_curve(run, color, [](const StepRecord& s) { return s.step_time_ms; }));
    if (base && *base == i) base_loss = loss.back();
    for (const auto& rep : run.repeats)
      for (const auto& s : rep)
        if (s.skipped) skipped.push_back(static_cast<double>(s.step));
  }
  if (loss.empty())
    return section_html("curves", "Loss", paragraph("No repeat finished.", "muted"));
  std::sort(skipped.begin(), skipped.end());
  skipped.erase(std::unique(skipped.begin(), skipped.end()), skipped.end());
  // Same seed, same data: the curves often lie on top of each other, so the gap to
  // fp32 is drawn too; it shows how far a lower precision drifts.
  if (base_loss)
    for (const auto& l : loss) {
      if (l.name == c.variants[*base].variant) continue;
      svg::Series gap{l.name, l.x, {}, l.color, false};
      for (size_t i = 0; i < l.y.size(); ++i)
        gap.y.push_back(i < base_loss->y.size() ? l.y[i] - base_loss->y[i] : std::nan(""));
      difference.push_back(std::move(gap));
    }
  const std::string of_repeats =
      most_repeats > 1 ? ", median of " + std::to_string(most_repeats) + " repeats at each " + timed_unit(c) : "";
  svg::LineChartOptions o;
  o.width = 560;
  o.height = 250;
  o.x_label = timed_unit(c);
  o.title = (c.inference ? "Loss per batch" : "Loss") + of_repeats;
  o.marker_x = skipped;
  o.marker_label = "skipped step (any repeat)";
  std::string s = "<div class=\"charts\">" + svg::line_chart(loss, o);
  o.marker_x.clear();
  if (!difference.empty()) {
    o.title = "Loss minus " + c.variants[*base].variant + "'s loss";
    o.y_label = "difference";
    s += svg::line_chart(difference, o);
  }
  o.title = (c.inference ? "Latency per batch" : "Step time") + of_repeats;
  o.y_label = "ms";
  s += svg::line_chart(time, o) + "</div>";
  if (c.warmup_steps > 0)
    s += paragraph("The first " + std::to_string(c.warmup_steps) + " " + timed_units(c) +
                       " of each repeat are warm-up, left out of " + "the timings.",
                   "muted");
  return section_html("curves", c.inference ? "Loss and latency" : "Loss and step time", s);
}

// One category when every non-baseline variant agrees ("demoted"), else each named
// ("bf16 demoted, fp16 kept_fp32"): one column instead of one per variant.
std::string categories_text(const Comparison& c, const OpComparisonRow& row,
                            std::optional<size_t> base) {
  std::vector<std::pair<std::string, std::string>> seen;
  for (size_t v = 0; v < c.variants.size() && v < row.cells.size(); ++v)
    if ((!base || v != *base) && row.cells[v].present)
      seen.emplace_back(c.variants[v].variant, row.cells[v].category);
  if (seen.empty()) return "\u2013";
  const bool same = std::all_of(seen.begin(), seen.end(),
                                [&](const auto& p) { return p.second == seen[0].second; });
  if (same && seen.size() + (base ? 1 : 0) == c.variants.size()) return seen[0].second;
  std::string s;
  for (const auto& [variant, category] : seen) {
    if (!s.empty()) s += ", ";
    s += variant;
    s += " ";
    s += category;
  }
  return s;
}

std::string ops_html(const ReportData& d) {
  const auto& c = *d.comparison;
  const auto base = baseline_index(c);
  if (d.op_rows.empty())
    return section_html(
        "ops", "Ops across variants",
        paragraph("No variant had a profiled pass, so there is no per-op comparison.", "muted"));
  std::vector<Column> cols = {{"op and input shapes"}, {"module"}, {"phase"}};
  for (const auto& run : c.variants)
    cols.push_back({run.variant + "/step", true, "time per step, cast tax included"});
  for (size_t v = 0; v < c.variants.size(); ++v)
    if (base && v != *base)
      cols.push_back({c.variants[v].variant + " speedup", true, "fp32 time / this time"});
  for (size_t v = 0; v < c.variants.size(); ++v)
    if (!base || v != *base)
      cols.push_back({c.variants[v].variant + " cast tax", true, "per step"});
  cols.push_back(
      {"category", false, "what autocast did to the op in each reduced-precision variant"});

  std::vector<std::vector<std::string>> rows;
  for (size_t r = 0; r < d.op_rows.size() && r < kReportTopOps; ++r) {
    const auto& row = d.op_rows[r];
    // Shapes under the name, not in a column of their own: the variant columns need the width.
    const auto shapes = shapes_text(row.input_shapes);
    std::vector<std::string> cells = {
        "<code>" + escape(row.name) + "</code>" +
            (shapes.empty() ? "" : "<div class=\"shapes\">" + escape(shapes) + "</div>"),
        escape(row.module.empty() ? "\u2013" : row.module),
        escape(std::string(to_string(row.phase)))};
    auto cell = [&](size_t v) -> const OpVariantCell* {
      return v < row.cells.size() && row.cells[v].present ? &row.cells[v] : nullptr;
    };
    for (size_t v = 0; v < c.variants.size(); ++v)
      cells.push_back(cell(v) ? escape(ns_as_ms(cell(v)->time_ns_per_step)) : "\u2013");
    for (size_t v = 0; v < c.variants.size(); ++v) {
      if (!base || v == *base) continue;
      const double sp = v < row.speedup.size() ? row.speedup[v] : 0.0;
      // Red only beyond the noise: a few percent either way is the same speed.
      cells.push_back(sp > 0 ? (sp < 0.95 ? "<span class=\"bad\">" + escape(factor(sp)) + "</span>"
                                          : escape(factor(sp)))
                             : "\u2013");
    }
    for (size_t v = 0; v < c.variants.size(); ++v)
      if (!base || v != *base)
        cells.push_back(cell(v) && cell(v)->cast_ns_per_step > 0
                            ? escape(ns_as_ms(cell(v)->cast_ns_per_step))
                            : "\u2013");
    cells.push_back(escape(categories_text(c, row, base)));
    rows.push_back(std::move(cells));
  }
  std::string s =
      paragraph("Top-level ops matched across variants by name, phase, module and input shapes, " +
                std::string(d.op_rows.size() > kReportTopOps
                                ? "the " + std::to_string(kReportTopOps) + " slowest of " +
                                      std::to_string(d.op_rows.size())
                                : "all " + std::to_string(d.op_rows.size())) +
                ", by fp32 time. A speedup below 0.95× (red) means the op got slower.");
  s += table_html(cols, rows);
  return section_html("ops", "Ops across variants", s);
}

std::string recommendations_section(const ReportData& d) {
  std::string s;
  if (const std::string none = comparison_findings(d).none_because; !none.empty())
    s = paragraph(capitalized(none) + ".", "muted");
  for (const auto& v : d.variant_recommendations)
    s += "<h3>" + escape(v.variant) + "</h3>" + recommendations_html(v.recommendations);
  return section_html("recommendations", "Recommendations", s);
}

}  // namespace

std::string comparison_body(const ReportData& d) {
  std::string s = section_html("summary", "Summary", summary_html(d));
  s += variants_html(d);
  s += curves_html(d);
  s += ops_html(d);
  s += recommendations_section(d);
  return s;
}

}  // namespace ampscope::profiler::report_detail
