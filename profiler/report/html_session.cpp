// The sections of a session report: summary, training plots, gradient range,
// op table by autocast category, kernels, recommendations.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "profiler/analysis/activation_coverage.h"
#include "profiler/analysis/loss_scale_window.h"
#include "profiler/display_colors.h"
#include "profiler/memory_kind.h"
#include "profiler/report/html_sections.h"
#include "profiler/report/report_format.h"
#include "profiler/report/svg_chart.h"

namespace ampscope::profiler::report_detail {
namespace {

constexpr int kChartWidth = 560, kChartHeight = 230;
constexpr size_t kRowsPerCategory = 10;
constexpr size_t kWorstParameters = 10;
const FloatFormatLimits& kFp16 = float_format(FloatFormat::fp16);

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The summary's figures are numbers; what qualifies them (capture in the step time, how
// the range samples were spaced and what they cost) is written under them as notes: in
// the figures' large type, those sentences took a card each, ten lines tall.
std::string summary_html(const ReportData& d) {
  std::vector<std::pair<std::string, std::string>> f;
  std::vector<std::string> notes;
  const auto& steps = d.steps;
  f.emplace_back("steps", grouped(static_cast<int64_t>(steps.size())));
  if (!steps.empty()) {
    std::vector<double> times, rates;
    for (size_t i = steps.size() > 1 ? 1 : 0; i < steps.size(); ++i) {
      times.push_back(steps[i].cost_ms());
      if (std::isfinite(steps[i].samples_per_second)) rates.push_back(steps[i].samples_per_second);
    }
    // Profiled steps are slower by what capture costs: say which time is which.
    const StepTiming& timing = d.step_timing;
    if (timing.any_recorded()) {
      f.emplace_back(timing.unrecorded_steps > 0  ? "median step (unprofiled steps)"
                     : timing.recorded_steps > 0 ? "median step (profiled: includes capture)"
                                                 : "median step (gradient-sampled)",
                     ms_text(timing.step_ms()));
      notes.push_back("Step time: " + step_timing_text(timing) + ".");
    } else {
      f.emplace_back("median step time", ms_text(median(times)));
    }
    if (!d.range_sampling.empty()) notes.push_back("Range samples: " + d.range_sampling + ".");
    if (d.range_sample_phases && d.range_sample_phases->samples > 0) {
      std::string passes = d.range_sample_phases->describe();
      passes[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(passes[0])));
      notes.push_back(passes + ".");
    }
    if (!rates.empty()) f.emplace_back("samples/s (median)", sig3(median(rates)));  // no batch seen: no figure
    f.emplace_back("final loss", sig3(steps.back().loss));
    const auto last_eval = std::find_if(steps.rbegin(), steps.rend(), has_eval_loss);
    if (last_eval != steps.rend())
      f.emplace_back("eval loss (step " + grouped(last_eval->step) + ")", sig3(last_eval->eval_loss));
    int64_t skipped = 0;
    for (const auto& s : steps) skipped += s.skipped ? 1 : 0;
    f.emplace_back("skipped steps", grouped(skipped));
    if (d.meta.scaler_enabled)
      f.emplace_back("final loss scale", text::loss_scale_text(steps.back().loss_scale));
    const std::string_view peak_name = peak_memory_name(memory_kind(d.meta.device));
    if (d.memory_peak.peak_bytes > 0)
      f.emplace_back(std::string(peak_name), bytes_text(static_cast<double>(d.memory_peak.peak_bytes)));
    if (d.memory_peak.raised_by_samples())
      notes.push_back(capitalized(std::string(peak_name)) + ": " + memory_peak_text(d.memory_peak) + ".");
  }
  f.emplace_back("profiled steps", grouped(d.profiled_steps));
  std::string html = figures_html(f);
  if (!notes.empty()) {
    html += "<ul class=\"notes\">";
    for (const auto& note : notes) html += "<li>" + rich_text(note) + "</li>";
    html += "</ul>";
  }
  return html;
}

// GradScaler decides per optimizer: one may skip (an inf/NaN in its own gradients) while
// another steps. One row per optimizer, with the steps it skipped.
std::string optimizers_html(const std::vector<OptimizerStepRecord>& rows, bool scaler) {
  struct PerOptimizer {
    std::string name;
    int64_t steps = 0, skipped = 0, unscale_calls = 0;
    std::string skipped_at;
  };
  std::map<int32_t, PerOptimizer> by_optimizer;
  constexpr int64_t kListed = 20;
  for (const auto& r : rows) {
    PerOptimizer& o = by_optimizer[r.optimizer];
    o.name = r.name;
    ++o.steps;
    o.unscale_calls += r.unscale_calls;
    if (!r.skipped) continue;
    if (o.skipped < kListed) o.skipped_at += (o.skipped ? ", " : "") + std::to_string(r.step);
    if (o.skipped == kListed) o.skipped_at += ", …";
    ++o.skipped;
  }
  std::vector<std::vector<std::string>> table;
  table.reserve(by_optimizer.size());
  for (const auto& [index, o] : by_optimizer)
    table.push_back({std::to_string(index), escape(o.name), grouped(o.steps), grouped(o.steps - o.skipped),
                     grouped(o.skipped), escape(o.skipped_at), grouped(o.unscale_calls)});
  return (scaler ? "<h3>Optimizers: GradScaler's decision per optimizer</h3>"
                 : "<h3>Optimizers: steps per optimizer (no GradScaler: every step() call stepped)</h3>") +
         table_html({{"#", true}, {"optimizer"}, {"steps", true}, {"stepped", true}, {"skipped", true},
                     {"skipped at steps"}, {"unscale_ calls", true, "explicit scaler.unscale_(optimizer) calls"}},
                    table);
}

// LR schedulers (lr_scheduler.step() calls) against the optimizer steps GradScaler
// skipped: one row per scheduler; the recommendation says what to change.
std::string schedulers_html(const std::vector<SchedulerSummary>& schedulers) {
  std::vector<std::vector<std::string>> table;
  for (const SchedulerSummary& s : schedulers) {
    std::string at;
    for (size_t i = 0; i < s.after_skipped_steps.size() && i < 20; ++i)
      at += (i ? ", " : "") + std::to_string(s.after_skipped_steps[i]);
    if (s.after_skipped_steps.size() > 20) at += ", …";
    const std::string after = s.drifts() ? "<span class=\"bad\">" + grouped(s.after_skipped) + "</span>"
                                         : grouped(s.after_skipped);
    table.push_back({std::to_string(s.scheduler), escape(s.name),
                     escape(std::to_string(s.optimizer) + (s.optimizer_name.empty() ? "" : " " + s.optimizer_name)),
                     grouped(s.calls), after, escape(at), escape(sig3(s.last_lr))});
  }
  return "<h3>LR schedulers</h3>" +
         table_html({{"#", true},
                     {"scheduler"},
                     {"optimizer"},
                     {"steps", true},
                     {"after skipped steps", true, "scheduler steps that followed an optimizer step GradScaler skipped"},
                     {"after skipped steps at"},
                     {"last lr", true}},
                    table);
}

// The unscaled gradients' norm: every step's where the run measured it (the built-in loop, a
// script that clips), else the range-sampled steps' (a script that does not clip), as dots.
svg::Series gradient_norm_series(const ReportData& d) {
  svg::Series norm{"gradient norm", {}, {}, svg::palette()[4], false};
  for (const auto& s : d.steps) {
    if (!std::isfinite(s.grad_norm)) continue;
    norm.x.push_back(static_cast<double>(s.step));
    norm.y.push_back(s.grad_norm);
  }
  if (!norm.x.empty()) return norm;
  norm.name = "gradient norm at the range-sampled steps (the steps have none: the script does not clip)";
  norm.dots = true;
  for (const auto& g : d.sampled_gradient_norms) {
    if (!std::isfinite(g.norm)) continue;
    norm.x.push_back(static_cast<double>(g.step));
    norm.y.push_back(g.norm);
  }
  return norm;
}

std::string training_html(const ReportData& d) {
  const auto& steps = d.steps;
  if (steps.empty())
    return section_html("training", "Training", paragraph("No step was recorded.", "muted"));
  svg::Series loss{"loss", {}, {}, "", false},
      scale{"loss scale", {}, {}, svg::palette()[1], false};
  svg::Series time{"step time", {}, {}, svg::palette()[2], false};
  svg::Series eval{"eval loss", {}, {}, svg::palette()[3], false, true};
  std::vector<double> skipped;
  bool scale_varies = false;
  for (const auto& s : steps) {
    const auto x = static_cast<double>(s.step);
    loss.x.push_back(x);
    loss.y.push_back(s.loss);
    if (has_eval_loss(s)) {
      eval.x.push_back(x);
      eval.y.push_back(s.eval_loss);
    }
    scale.x.push_back(x);
    scale.y.push_back(s.loss_scale);
    time.x.push_back(x);
    time.y.push_back(s.step_time_ms);
    if (s.skipped) skipped.push_back(x);
    scale_varies = scale_varies || s.loss_scale != steps.front().loss_scale;
  }
  std::string s = "<div class=\"charts\">";
  svg::LineChartOptions o;
  o.width = kChartWidth;
  o.height = kChartHeight;
  o.title = "Loss";
  o.x_label = "step";
  o.marker_x = skipped;
  o.marker_label = "skipped step";
  s += eval.x.empty() ? svg::line_chart({loss}, o) : svg::line_chart({loss, eval}, o);
  if (d.meta.scaler_enabled || scale_varies) {
    o.title = "Loss scale";
    o.log2_y = true;
    s += svg::line_chart({scale}, o);
    o.log2_y = false;
  }
  if (auto norm = gradient_norm_series(d); !norm.x.empty()) {
    o.title = "Gradient norm";
    o.y_label = "‖g‖₂";
    s += svg::line_chart({norm}, o);
  }
  o.title = "Step time";
  o.y_label = "ms";
  o.marker_x.clear();
  std::vector<std::pair<int64_t, double>> step_ms;
  for (const auto& st : steps) step_ms.emplace_back(st.step, st.step_time_ms);
  if (const auto time_scale = step_time_scale(step_ms)) {
    o.y_max = time_scale->ceiling_ms * 1.15;
    o.note = "off the scale: " + time_scale->describe();
  }
  s += svg::line_chart({time}, o);
  s += "</div>";
  if (!skipped.empty())
    s += paragraph(std::to_string(skipped.size()) + " skipped " +
                   (skipped.size() == 1 ? "step is" : "steps are") +
                   " marked in red at the bottom of the plots.");
  if (!d.optimizer_steps.empty()) s += optimizers_html(d.optimizer_steps, d.meta.scaler_enabled);
  if (!d.schedulers.empty()) s += schedulers_html(d.schedulers);
  return section_html("training", "Training", s);
}

// The latest sample's log2|g| histogram over every parameter, against fp16's range at
// the loss scale in force (the histogram is of unscaled g; fp16 sees g * scale).
std::string gradient_histogram(const std::vector<GradientSample>& grads, bool loss_scaled) {
  std::vector<double> counts(kGradBins, 0.0);
  for (const auto& g : grads)
    for (int i = 0; i < kGradBins; ++i) counts[i] += static_cast<double>(g.log2_histogram[i]);
  const double shift = std::log2(std::max(grads.front().loss_scale, 1e-300));
  const double under = log2_min_subnormal(kFp16) - shift, normal = log2_min_normal(kFp16) - shift,
               over = log2_max(kFp16) - shift;
  int first = kGradBins, last = -1;
  for (int i = 0; i < kGradBins; ++i)
    if (counts[i] > 0) {
      first = std::min(first, i);
      last = i;
    }
  double lo = std::min(under, static_cast<double>(kGradLog2Min + first)) - 3;
  double hi = std::max(over, static_cast<double>(kGradLog2Min + last + 1)) + 3;
  lo = std::max(lo, static_cast<double>(kGradLog2Min));
  hi = std::min(hi, static_cast<double>(kGradLog2Max));
  const int b0 = static_cast<int>(std::floor(lo)) - kGradLog2Min;
  const int b1 = static_cast<int>(std::ceil(hi)) - kGradLog2Min;
  const std::vector<double> shown(counts.begin() + b0, counts.begin() + b1);

  svg::HistogramOptions o;
  o.title = "|g| at step " + std::to_string(grads.front().step) + ", all parameters, against fp16 " +
            (loss_scaled ? "at scale " + text::loss_scale_text(grads.front().loss_scale) : "(no loss scaling)");
  o.x_label = "|g| (unscaled)";
  o.width = 1100;
  o.height = 250;
  o.log_count = true;
  o.x_is_log2 = true;
  o.shaded = {{-1e9, under, "flushes to 0 in fp16", "#d62728"},
              {under, normal, "fp16 subnormal: loses precision", "#ff7f0e"},
              {over, 1e9, "overflows fp16 (inf)", "#9467bd"}};
  return svg::histogram(static_cast<double>(kGradLog2Min + b0), 1.0, shown, o);
}

// One row per format: its limits and the shares of all elements of g * scale a
// cast to it would flush to 0, leave subnormal, or overflow.
std::string format_shares_table(const std::vector<GradientSample>& grads) {
  std::vector<std::vector<std::string>> rows;
  for (const FloatFormatLimits& f : kFloatFormats) {
    const FormatRangeShares r = total_range_shares(grads, f.format);
    const bool measured = !std::isnan(r.underflow);
    const auto share = [&](double v) { return measured ? escape(percent(v)) : std::string("—"); };
    rows.push_back({escape(std::string(f.name)), escape(sig3(f.max)), escape(power_of_two_text(f.min_normal)),
                    escape(power_of_two_text(f.min_subnormal)), f.has_inf ? "inf" : "NaN (no inf)",
                    share(r.underflow), share(r.subnormal), share(r.overflow)});
  }
  return "<h3>Every element of g·scale at step " + std::to_string(grads.front().step) +
         ", cast to each format</h3>" +
         table_html({{"format"},
                     {"max", true},
                     {"min normal", true},
                     {"min subnormal", true},
                     {"above max", false, "what a plain cast gives; fp8 recipes clamp to ±max first"},
                     {"flushed to 0", true, "nonzero, <= half the min subnormal"},
                     {"subnormal", true, "below the min normal: fewer significant bits"},
                     {"overflow", true, "beyond max by more than half a step"}},
                    rows);
}

// For a run in another precision: the fp16 loss scales that would carry its gradients at each
// sample. Gradients shrink as training converges, so the window's low end rises: a scale
// that fits early can flush late, which the latest sample alone does not show.
std::string loss_scale_window_chart(const std::vector<GradientStepSummary>& summaries) {
  svg::Series lowest{"least scale (at most 0.1% of nonzero elements flush)", {}, {}, "#d62728", false},
      highest{"greatest scale (the largest |g| stays finite)", {}, {}, "#9467bd", false},
      start{"GradScaler's initial scale, 2^16", {}, {}, "#7f7f7f", true};
  const GradientStepSummary* first = nullptr;
  const GradientStepSummary* last = nullptr;
  for (const GradientStepSummary& g : summaries) {
    if (!g.fp16_window) continue;
    const LossScaleWindow& w = *g.fp16_window;
    const auto x = static_cast<double>(g.step);
    // A bound outside float32's scales ("at any scale") breaks the line.
    lowest.x.push_back(x);
    lowest.y.push_back(w.lowest_log2 <= 127 ? std::ldexp(1.0, w.lowest_log2) : std::nan(""));
    highest.x.push_back(x);
    highest.y.push_back(w.highest_log2 >= -126 ? std::ldexp(1.0, w.highest_log2) : std::nan(""));
    start.x.push_back(x);
    start.y.push_back(std::ldexp(1.0, kGradScalerInitLog2));
    if (first == nullptr) first = &g;
    last = &g;
  }
  if (first == last) return "";
  svg::LineChartOptions o;
  o.title = "fp16 loss scales that would carry the gradients, per sample";
  o.x_label = "step";
  o.y_label = "loss scale";
  o.log2_y = true;
  o.width = 1100;
  o.height = 220;
  const auto range = [](const GradientStepSummary& g) {
    const LossScaleWindow& w = *g.fp16_window;
    return w.fits() ? "2^" + std::to_string(w.lowest_log2) + " to 2^" + std::to_string(w.highest_log2) + " at step " +
                          std::to_string(g.step)
                    : "none at step " + std::to_string(g.step);
  };
  return svg::line_chart({lowest, highest, start}, o) +
         paragraph("fp16 loss scales that would carry the gradients: " + range(*first) + ", " + range(*last) +
                       ". Where the least rises above the greatest, no scale fits: bf16 has fp32's range.",
                   "muted");
}

std::string gradients_html(const ReportData& d) {
  const auto& grads = d.latest_gradients;
  if (grads.empty()) {
    // Say what the sampling was (one sentence with summary and the GUI), so an empty
    // section reads as "none by step 8, samples every 10 steps", not as a broken capture.
    const std::string none = profiler::no_gradient_sample_text(d);
    return section_html("gradients", "Gradient range",
                        paragraph(none.empty() ? "No gradient statistics were sampled in this session."
                                               : none + ".",
                                  "muted"));
  }
  std::string s = gradient_histogram(grads, d.meta.scaler_enabled);
  s += paragraph(
      "Shaded: where fp16 cannot hold the gradient once multiplied by the loss scale. The "
      "outermost bars also count everything beyond them. The table gives the same shares for "
      "every format a cast could put the scaled gradient in.",
      "muted");
  // Under fp16 autocast the backward's own results are fp16: what they could not hold is
  // already 0 in the gradient, so "flushed to 0" stays near 0 and the zeros tell instead.
  const GradientStepSummary total = summarize_gradients(grads);
  if (d.meta.precision != "fp16") {
    if (total.fp16_window)
      s += paragraph(report_detail::capitalized(loss_scale_window_text(*total.fp16_window)) + ".", "muted");
  } else {
    s += paragraph("This run's backward computed in fp16, so what fp16 could not hold was flushed there, "
                   "before the unscale, and reaches these gradients as exact zeros: " +
                       percent(total.zero_fraction) + " of the elements at step " + std::to_string(total.step) +
                       " (the zero column below; dead units and unused embedding rows are zeros too).",
                   "muted");
  }
  s += format_shares_table(grads);
  if (d.gradient_summaries.size() > 1) {
    svg::Series under{"underflow", {}, {}, "#d62728", false},
        sub{"subnormal", {}, {}, "#ff7f0e", false};
    for (const auto& g : d.gradient_summaries) {
      under.x.push_back(static_cast<double>(g.step));
      under.y.push_back(100.0 * g.fp16_underflow_fraction);
      sub.x.push_back(static_cast<double>(g.step));
      sub.y.push_back(100.0 * g.fp16_subnormal_fraction);
    }
    svg::LineChartOptions o;
    o.title = "Share of gradient elements outside fp16's normal range, per sample";
    o.x_label = "step";
    o.y_label = "% of elements";
    o.width = 1100;
    o.height = 220;
    s += svg::line_chart({under, sub}, o);
    if (d.meta.precision != "fp16") s += loss_scale_window_chart(d.gradient_summaries);
  }
  std::vector<std::vector<std::string>> rows;
  for (const GradientSample* nearest : nearest_fp16_edge_first(grads, kWorstParameters)) {
    const auto& g = *nearest;
    rows.push_back({"<code>" + escape(g.parameter) + "</code>", grouped(g.numel),
                    escape(percent(g.zero_fraction)), escape(percent(g.fp16_underflow_fraction)),
                    escape(percent(g.fp16_subnormal_fraction)),
                    escape(percent(g.fp16_overflow_fraction)), escape(percent(g.nonfinite_fraction)),
                    escape(sig3(g.min_abs_nonzero)),
                    escape(sig3(g.max_abs)), escape(sig3(g.norm))});
  }
  s += "<h3>Parameters nearest fp16's edge: most lost to a cast first, then most left subnormal</h3>";
  s += table_html({{"parameter"},
                   {"elements", true},
                   {"zero", true},
                   {"underflow", true, "nonzero, |g·scale| <= 2^-25: a cast to fp16 makes it 0"},
                   {"subnormal", true, "2^-25 < |g·scale| < 2^-14 - 2^-25: fp16 subnormal"},
                   {"overflow", true, "|g·scale| >= 65520: a cast to fp16 makes it infinite"},
                   {"inf/NaN", true, "non-finite in the gradient as computed (GradScaler skips such a step)"},
                   {"min |g|", true},
                   {"max |g|", true},
                   {"norm", true}},
                  rows);
  return section_html("gradients", "Gradient range", s);
}

// Where a non-finite gradient started in backward, beside the forward origin.
std::string backward_inf_html(const BackwardInfSummary& b) {
  if (!b.any()) return {};
  const std::string text = backward_inf_text(b);
  if (!b.first) return paragraph(capitalized(text) + ".", "muted");
  std::string advice;
  switch (b.first->side) {
    case GradientSide::kInput:
      advice = " Its backward is where to look: keep it in fp32, or rescale what it multiplies.";
      break;
    case GradientSide::kOutput: advice = " Look at what consumes its output: the loss, or code between modules."; break;
    case GradientSide::kParameter:
      advice = " GradScaler backs off until this sum fits fp16; if its skips persist, the parameter's gradient "
               "sums too many large terms for fp16 at a useful scale: fewer samples per backward, or its layer in "
               "fp32 (or bf16).";
      break;
  }
  return paragraph(capitalized(text) + "." + advice, "rec warning");
}

// Forward outputs per module at the last sampled step, against the formats, and
// the module where an fp16 overflow started; beside it, where a non-finite gradient
// started in backward.
std::string activations_html(const ReportData& d) {
  if (d.latest_activations.empty() && !d.first_fp16_overflow && !d.backward_inf.any()) return {};
  std::string s;
  if (d.latest_activations.empty() && !d.first_fp16_overflow) {
    // No forward samples (a Python loop): the backward origin alone.
  } else if (const auto& first = d.first_fp16_overflow) {
    s += paragraph("The first module whose output overflowed fp16: " + first->module + " at step " +
                       std::to_string(first->step) + " (" + first->dtype + " output, " +
                       percent(first->nonfinite_fraction) + " inf/NaN, " + percent(first->fp16.overflow) +
                       " of finite values beyond fp16's max). Modules after it inherit the inf; keep this one in "
                       "fp32 or rescale its input.",
                   "rec warning");
  } else {
    s += paragraph("No module output overflowed fp16 at the sampled steps.", "muted");
  }
  if (const std::string unmeasured = unmeasured_activations_text(modules_unmeasured_in_compiled_graphs(d));
      !unmeasured.empty())
    s += paragraph(capitalized(unmeasured) + ".", "muted");
  s += backward_inf_html(d.backward_inf);
  std::vector<std::vector<std::string>> rows;
  for (const ActivationSample& a : d.latest_activations) {
    rows.push_back({"<code>" + escape(a.module) + "</code>", escape(a.dtype), grouped(a.numel),
                    escape(sig3(a.max_abs)), escape(percent(a.nonfinite_fraction)),
                    escape(percent(a.fp16.overflow)), escape(percent(a.fp16.underflow)),
                    escape(percent(a.fp8_e4m3.overflow)), escape(percent(a.fp8_e4m3.underflow)),
                    escape(percent(a.fp8_e5m2.overflow)), escape(percent(a.fp8_e5m2.underflow))});
  }
  if (!rows.empty()) {
    s += "<h3>Module outputs at step " + std::to_string(d.latest_activations.front().step) +
         ", in the order modules finished</h3>";
    s += table_html({{"module"},
                     {"dtype"},
                     {"elements", true},
                     {"max |x|", true},
                     {"inf/NaN", true, "non-finite in the output as computed"},
                     {"fp16 over", true, "finite values a cast to fp16 makes infinite"},
                     {"fp16 → 0", true},
                     {"e4m3 over", true, "finite values a cast to fp8 e4m3fn makes NaN (it has no inf)"},
                     {"e4m3 → 0", true},
                     {"e5m2 over", true},
                     {"e5m2 → 0", true}},
                    rows);
  }
  return section_html("activations", "Activation range and non-finite gradients", s);
}

// Without a GPU trace the GPU columns would be dashes only: leave them out.
std::string table_without(std::vector<Column> columns, std::vector<std::vector<std::string>> rows,
                          const std::vector<std::string>& dropped) {
  for (size_t i = columns.size(); i-- > 0;) {
    if (std::find(dropped.begin(), dropped.end(), columns[i].header) == dropped.end()) continue;
    columns.erase(columns.begin() + static_cast<std::ptrdiff_t>(i));
    for (auto& row : rows)
      if (i < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return table_html(columns, rows);
}

double op_time(const OpStats& r, bool gpu) {
  return static_cast<double>(gpu ? r.gpu_time_ns : r.cpu_time_ns);
}

// Time by phase: the same top-level rows as the categories (profiler::phase_totals), so the
// two tables add up to the same whole; "how much of my step is the optimizer, the validation?".
std::string phases_html(const ReportData& d, double per, bool gpu) {
  const std::vector<PhaseTotals> phases = phase_totals(d.op_stats);
  if (phases.empty()) return "";
  double cpu_all = 0, gpu_all = 0;
  std::string notes;
  for (const auto& p : phases) {
    cpu_all += static_cast<double>(p.cpu_time_ns);
    gpu_all += static_cast<double>(p.gpu_time_ns);
    if (const std::string_view meaning = phase_meaning(p.phase); !meaning.empty())
      notes += paragraph(std::string(to_string(p.phase)) + ": " + std::string(meaning), "muted");
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : phases) {
    const auto cpu = static_cast<double>(p.cpu_time_ns), g = static_cast<double>(p.gpu_time_ns);
    std::vector<std::string> row{escape(std::string(to_string(p.phase))),
                                 escape(sig3(static_cast<double>(p.calls) / per))};
    const std::string elsewhere = escape("in its graph's call");
    if (p.timed_elsewhere())
      row.insert(row.end(), {elsewhere, "\u2013", gpu ? elsewhere : "\u2013", "\u2013"});
    else
      row.insert(row.end(), {escape(ns_as_ms(cpu / per)), escape(percent(cpu_all > 0 ? cpu / cpu_all : 0)),
                             gpu ? escape(ns_as_ms(g / per)) : "\u2013",
                             gpu ? escape(percent(gpu_all > 0 ? g / gpu_all : 0)) : "\u2013"});
    rows.push_back(std::move(row));
  }
  const std::string s = "<h3>Time by phase</h3>" + notes;
  const std::vector<std::string> no_gpu_columns =
      gpu ? std::vector<std::string>{} : std::vector<std::string>{"GPU/step", "GPU share"};
  return s + table_without({{"phase"},
                            {"calls/step", true},
                            {"CPU/step", true},
                            {"CPU share", true},
                            {"GPU/step", true},
                            {"GPU share", true}},
                           rows, no_gpu_columns);
}

std::string ops_html(const ReportData& d) {
  if (d.op_stats.empty())
    return section_html("ops", "Ops", paragraph("No op was recorded in this session.", "muted"));
  const double per = profiled_step_divisor(d);
  bool gpu = false;
  for (const auto& t : d.category_totals) gpu = gpu || t.gpu_time_ns > 0;
  double cpu_all = 0, gpu_all = 0;
  for (const auto& t : d.category_totals) {
    cpu_all += static_cast<double>(t.cpu_time_ns);
    gpu_all += static_cast<double>(t.gpu_time_ns);
  }
  std::string s =
      paragraph("Times are per profiled step (" + std::to_string(d.profiled_steps) +
                " profiled), inclusive, over the calls the model, loss and optimizer made (nested "
                "calls are inside them). "
                "The cast tax is the time of the casts autocast inserted for those calls.");
  if (d.warmup_left_out)
    s += paragraph(capitalized(warmup_left_out_text(*d.warmup_left_out, d.category_totals, d.profiled_steps)) + ".");
  if (const CompileTime compiling = compile_time(d.op_stats); compiling.calls > 0)
    s += paragraph("torch.compile compiled " + std::to_string(compiling.calls) +
                   (compiling.calls == 1 ? " time" : " times") + " inside the profiled steps, for " +
                   ns_as_ms(static_cast<double>(compiling.cpu_time_ns)) +
                   " CPU in all: in no category below (compiling is no work autocast decided on).");
  if (const int64_t compiled_ns = compiled_time_ns(d.category_totals, gpu); compiled_ns > 0)
    s += paragraph("A torch.compile'd region is one recorded op around the kernels inductor generated: " +
                   ns_as_ms(static_cast<double>(compiled_ns) / per) + (gpu ? " GPU" : " CPU") +
                   " per step of their kernels is counted by what each computes (a fused kernel under its "
                   "ops' autocast decision, not the casts fused into it); the rest of a region's time "
                   "stays unchanged.");
  std::vector<std::vector<std::string>> rows;
  std::vector<svg::Bar> bars;
  auto totals = d.category_totals;
  std::stable_sort(totals.begin(), totals.end(), [&](const auto& a, const auto& b) {
    return (gpu ? a.gpu_time_ns : a.cpu_time_ns) > (gpu ? b.gpu_time_ns : b.cpu_time_ns);
  });
  for (const auto& t : totals) {
    const auto cpu = static_cast<double>(t.cpu_time_ns), g = static_cast<double>(t.gpu_time_ns);
    rows.push_back(
        {escape(std::string(to_string(t.category))),
         escape(sig3(static_cast<double>(t.calls) / per)), escape(ns_as_ms(cpu / per)),
         escape(percent(cpu_all > 0 ? cpu / cpu_all : 0)),
         gpu ? escape(ns_as_ms(g / per)) : "\u2013",
         gpu ? escape(percent(gpu_all > 0 ? g / gpu_all : 0)) : "\u2013",
         escape(
             ns_as_ms(static_cast<double>(gpu ? t.cast_gpu_time_ns : t.cast_cpu_time_ns) / per))});
    bars.push_back({std::string(to_string(t.category)), (gpu ? g : cpu) / per / 1e6,
                    svg::css_color(category_color(t.category))});
  }
  s += "<h3>Time by what autocast did</h3>";
  const std::vector<std::string> no_gpu_columns =
      gpu ? std::vector<std::string>{}
          : std::vector<std::string>{"GPU/step", "GPU share", "Tensor Core kernels"};
  s += table_without({{"category"},
                      {"calls/step", true},
                      {"CPU/step", true},
                      {"CPU share", true},
                      {"GPU/step", true},
                      {"GPU share", true},
                      {"cast tax/step", true}},
                     rows, no_gpu_columns);
  svg::BarChartOptions bo;
  bo.title = std::string(gpu ? "GPU" : "CPU") + " time per step by category";
  bo.unit = "ms";
  bo.width = 720;
  bo.label_width = 130;
  s += svg::bar_chart(bars, bo);
  s += phases_html(d, per, gpu);

  std::map<OpCategory, std::vector<const OpStats*>> by_category;
  for (const auto& r : d.op_stats)
    // compiled: their own section; compiling: in no category (the paragraph above)
    if (r.top_level && !r.compiled && r.name != kTorchCompileOp) by_category[r.category].push_back(&r);
  for (const auto& t : totals) {
    auto& list = by_category[t.category];
    if (list.empty()) continue;
    std::stable_sort(list.begin(), list.end(), [&](auto* a, auto* b) {
      return op_time(*a, gpu) + op_time(*a, !gpu) * 1e-9 >
             op_time(*b, gpu) + op_time(*b, !gpu) * 1e-9;
    });
    s += "<h3>" + escape(std::string(to_string(t.category))) + " <span class=\"muted\">(" +
         std::to_string(list.size()) + (list.size() == 1 ? " signature" : " signatures") +
         (list.size() > kRowsPerCategory ? ", top " + std::to_string(kRowsPerCategory) + " shown"
                                         : "") +
         ")</span></h3>";
    std::vector<std::vector<std::string>> op_rows;
    for (size_t i = 0; i < list.size() && i < kRowsPerCategory; ++i) {
      const auto& r = *list[i];
      std::string tc = r.kernels > 0
                           ? std::to_string(r.tensor_core_kernels) + "/" + std::to_string(r.kernels)
                           : "";
      if (!r.tensor_core_note.empty()) tc += (tc.empty() ? "" : " ") + r.tensor_core_note;
      op_rows.push_back(
          {"<code>" + escape(r.name) + "</code>", escape(r.module.empty() ? "\u2013" : r.module),
           escape(std::string(to_string(r.phase))),
           escape(dtypes_text(r.input_dtypes, r.output_dtypes)),
           "<span class=\"mono\">" + escape(shapes_text(r.input_shapes)) + "</span>",
           escape(sig3(static_cast<double>(r.calls) / per)),
           escape(ns_as_ms(static_cast<double>(r.cpu_time_ns) / per)),
           gpu ? escape(ns_as_ms(static_cast<double>(r.gpu_time_ns) / per)) : "\u2013",
           escape(
               ns_as_ms(static_cast<double>(gpu ? r.cast_gpu_time_ns : r.cast_cpu_time_ns) / per)),
           escape(tc)});
    }
    s += table_without({{"op"},
                        {"module"},
                        {"phase"},
                        {"dtypes in \u2192 out"},
                        {"input shapes"},
                        {"calls/step", true},
                        {"CPU/step", true},
                        {"GPU/step", true},
                        {"cast tax/step", true},
                        {"Tensor Core kernels", false,
                         "kernels on Tensor Cores / kernels, and why not when known"}},
                       op_rows, no_gpu_columns);
  }
  return section_html("ops", "Ops by autocast category", s);
}

std::string kernels_html(const ReportData& d) {
  if (d.top_kernels.empty()) {
    const std::string why = d.meta.gpu_tracing.empty() ? "no reason recorded" : d.meta.gpu_tracing;
    return section_html("kernels", "GPU kernels",
                        paragraph("No GPU activity was traced: " + why + "."));
  }
  double total = static_cast<double>(d.gpu_attribution.traced_ns);
  if (total <= 0) {  // sessions written before the kernel table held every kernel
    total = static_cast<double>(d.gpu_attribution.unattributed_ns);
    for (const auto& t : d.category_totals) total += static_cast<double>(t.gpu_time_ns);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : d.top_kernels) {
    std::string tc = k.tensor_core ? "yes" : "no";
    std::string ops;
    for (const auto& o : k.launching_ops) ops += (ops.empty() ? "" : ", ") + o;
    rows.push_back({"<code>" + escape(k.name) + "</code>", escape(std::string(to_string(k.kind))),
                    grouped(k.calls), escape(ns_as_ms(static_cast<double>(k.total_ns))),
                    escape(sig3(static_cast<double>(k.mean_ns) / 1e3) + " \u00b5s"),
                    escape(total > 0 ? percent(static_cast<double>(k.total_ns) / total) : "\u2013"),
                    escape(tc), escape(ops)});
  }
  std::string s = table_html({{"kernel"},
                              {"kind"},
                              {"calls", true},
                              {"total", true},
                              {"mean", true},
                              {"GPU share", true},
                              {"Tensor Cores"},
                              {"launched by"}},
                             rows, "kernels");
  const GpuAttribution& a = d.gpu_attribution;
  s += paragraph("GPU time with no op: " + ns_as_ms(static_cast<double>(a.unattributed_ns)) + " of " +
                 ns_as_ms(static_cast<double>(a.traced_ns)) + " traced (" + percent(a.unattributed_share()) +
                 ")" + (a.unattributed_ns > 0 ? ": launched outside any recorded op." : "."));
  if (d.warmup_left_out)
    if (const std::string left_out = warmup_kernels_text(*d.warmup_left_out, a, d.profiled_steps); !left_out.empty())
      s += paragraph(capitalized(left_out) + ".");
  return section_html("kernels", "Top GPU kernels", s);
}

}  // namespace

std::string session_body(const ReportData& d) {
  std::string s = section_html("summary", "Summary", summary_html(d));
  s += training_html(d);
  s += gradients_html(d);
  s += activations_html(d);
  s += readiness_html(d);
  s += ops_html(d);
  s += compiled_html(d);
  s += kernels_html(d);
  s += section_html("recommendations", "Recommendations", recommendations_html(d.recommendations));
  return s;
}

}  // namespace ampscope::profiler::report_detail
