#include "profiler/export/json_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "profiler/analysis/activation_coverage.h"
#include "profiler/analysis/loss_scale_window.h"
#include "profiler/export/export_util.h"
#include "profiler/memory_kind.h"
#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {
namespace {

using Json = nlohmann::ordered_json;

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

Json meta_json(const SessionView& session) {
  Json m;
  for (const auto& [key, value] : session.meta_values) {
    if (key == meta_key::kParameterCount) {
      m[key] = std::strtoll(value.c_str(), nullptr, 10);
    } else if (key == meta_key::kScalerEnabled) {
      m[key] = value == "true";
    } else {
      m[key] = value;
    }
  }
  return m;
}

// torch.compile'd code: its graphs' op table rows (compiled, no time of their own,
// so never among top_ops by time) and dynamo's graph breaks and recompilations.
Json compiled_json(const SessionView& session) {
  Json c;
  c["graphs"] = session.compile.graphs;
  Json ops = Json::array();
  for (const OpStats& o : session.op_stats) {
    if (!o.compiled) continue;
    ops.push_back({{"name", o.name},
                   {"module", o.module},
                   {"phase", to_string(o.phase)},
                   {"category", to_string(o.category)},
                   {"compiled", true},
                   {"input_dtypes", o.input_dtypes},
                   {"output_dtypes", o.output_dtypes},
                   {"calls", o.calls}});
  }
  c["ops"] = std::move(ops);
  Json breaks = Json::array();
  for (const auto& b : session.compile.graph_breaks)
    breaks.push_back({{"where", b.where}, {"reason", b.reason}, {"count", b.count}});
  c["graph_breaks"] = std::move(breaks);
  Json recompiles = Json::array();
  for (const auto& r : session.compile.recompilations) recompiles.push_back({{"frame", r.frame}, {"reason", r.reason}});
  c["recompilations"] = std::move(recompiles);
  Json ran_eagerly = Json::array();
  for (const auto& m : session.compile.ran_eagerly)
    ran_eagerly.push_back({{"module", m.module}, {"class", m.class_name}});
  c["ran_eagerly"] = std::move(ran_eagerly);
  // Inductor's kernels: per graph call (kind "graph"), its fused and extern kernels
  // with the graph ops each computes, and the share of the graphs' time they cover.
  Json kernels = Json::array();
  for (const CompiledKernelRow& r : session.compile.kernels) {
    Json ops = Json::array();
    for (const CompiledFusedOp& op : r.ops)
      ops.push_back({{"node", op.node}, {"name", op.name}, {"module", op.module}, {"category", op.category},
                     {"input_dtypes", op.input_dtypes}, {"output_dtypes", op.output_dtypes}});
    kernels.push_back({{"graph", r.graph}, {"phase", to_string(r.phase)}, {"kind", r.kind}, {"kernel", r.kernel},
                       {"ordinal", r.ordinal}, {"calls", r.calls}, {"cpu_time_ns", r.cpu_time_ns},
                       {"kernels", r.kernels}, {"tensor_core_kernels", r.tensor_core_kernels},
                       {"gpu_time_ns", r.gpu_time_ns}, {"first_call_gpu_time_ns", r.first_call_gpu_ns},
                       {"ops", std::move(ops)}});
  }
  if (!kernels.empty()) {
    const CompiledTimeShare share = compiled_time_share(session.compile.kernels);
    c["time"] = {{"graphs_cpu_time_ns", share.graph_ns},
                 {"kernels_cpu_time_ns", share.kernel_ns},
                 {"tuning_cpu_time_ns", share.tuning_ns},
                 {"other_ops_cpu_time_ns", share.other_ns},
                 {"kernel_share", share.kernel_share()},
                 {"graphs_gpu_time_ns", share.gpu_graph_ns},
                 {"kernels_gpu_time_ns", share.gpu_kernel_ns},
                 {"tuning_gpu_time_ns", share.gpu_tuning_ns},
                 {"unlisted_kernels_gpu_time_ns", share.gpu_other_ns},
                 {"gpu_kernel_share", share.gpu_kernel_share()},
                 {"gpu_attributed_share", share.gpu_attributed_share()},
                 {"graphs_first_calls_gpu_time_ns", share.gpu_graph_first_ns},
                 {"kernels_first_calls_gpu_time_ns", share.gpu_kernel_first_ns},
                 {"gpu_kernel_share_after_first_calls",
                  share.has_later_calls() ? Json(share.gpu_kernel_share_after_first_calls()) : Json(nullptr)}};
  }
  c["kernels"] = std::move(kernels);
  return c;
}

Json training_json(const std::vector<StepRecord>& steps) {
  Json t;
  t["steps"] = steps.size();
  if (steps.empty()) return t;
  t["first_step"] = steps.front().step;
  t["last_step"] = steps.back().step;
  t["first_loss"] = finite_or_null(steps.front().loss);
  t["last_loss"] = finite_or_null(steps.back().loss);
  Json skipped = Json::array();
  double scale_min = steps.front().loss_scale, scale_max = scale_min, time_ms = 0;
  for (const auto& s : steps) {
    if (s.skipped) skipped.push_back(s.step);
    scale_min = std::min(scale_min, s.loss_scale);
    scale_max = std::max(scale_max, s.loss_scale);
    time_ms += s.cost_ms();  // what the steps cost the run, the capture's work after them included
  }
  t["skipped_steps"] = skipped.size();
  t["skipped"] = std::move(skipped);
  t["loss_scale"] = {{"min", finite_or_null(scale_min)},
                     {"max", finite_or_null(scale_max)},
                     {"final", finite_or_null(steps.back().loss_scale)}};
  t["mean_step_time_ms"] = time_ms / static_cast<double>(steps.size());
  // Validation (--eval-every): every step after which it ran; null when none did.
  Json eval = Json::array();
  for (const auto& s : steps)
    if (has_eval_loss(s)) eval.push_back({{"step", s.step}, {"loss", finite_or_null(s.eval_loss)}});
  t["last_eval_loss"] = eval.empty() ? Json(nullptr) : eval.back()["loss"];
  t["eval"] = eval.empty() ? Json(nullptr) : std::move(eval);
  return t;
}

// Step times with the profiled steps apart (step_timing.h): step_time_ms is the
// unprofiled steps' median when there are any; capture_overhead null without both kinds;
// gradient-sampled steps apart, with what a sample adds in steps.
Json step_timing_json(const StepTiming& t) {
  const auto overhead = t.capture_overhead();
  return {{"step_time_ms", t.step_ms()},
          {"profiled_steps", t.recorded_steps},
          {"unprofiled_steps", t.unrecorded_steps},
          {"profiled_median_ms", t.recorded_steps > 0 ? Json(t.recorded_median_ms) : Json(nullptr)},
          {"unprofiled_median_ms", t.unrecorded_steps > 0 ? Json(t.unrecorded_median_ms) : Json(nullptr)},
          {"capture_overhead", overhead ? Json(*overhead) : Json(nullptr)},
          {"sampled_steps", t.sampled_steps},
          {"sampled_median_ms", t.sampled_steps > 0 ? Json(t.sampled_median_ms) : Json(nullptr)},
          {"sample_cost_steps", t.sample_cost() ? Json(*t.sample_cost()) : Json(nullptr)},
          {"includes_capture", t.every_step_recorded()}};
}

// The fp16 loss scales that would carry another precision's gradients (null in fp16 runs,
// whose backward already flushed the small ones, and when no gradient is nonzero).
Json loss_scale_window_json(const std::optional<LossScaleWindow>& w, const std::string& precision) {
  if (precision == "fp16" || !w) return nullptr;
  return {{"lowest_log2", w->lowest_log2},
          {"highest_log2", w->highest_log2},
          {"fits", w->fits()},
          {"flush_share", w->flush_share},
          {"max_abs", w->max_abs},
          {"flushed_at_highest", w->flushed_at_highest},
          {"flushed_norm_share_at_highest", w->flushed_norm_share_at_highest},
          {"text", loss_scale_window_text(*w)}};
}

// Fractions are over elements: each parameter's fraction weighted by its numel.
Json gradients_json(const std::vector<GradientSample>& grads, const std::string& precision) {
  if (grads.empty()) return nullptr;
  const GradientStepSummary total = summarize_gradients(grads);
  double min_abs = 0, max_abs = 0;
  for (const auto& g : grads) {
    if (g.min_abs_nonzero > 0 && (min_abs == 0 || g.min_abs_nonzero < min_abs))
      min_abs = g.min_abs_nonzero;
    max_abs = std::max(max_abs, g.max_abs);
  }
  Json j;
  j["step"] = total.step;
  j["parameters"] = grads.size();
  j["numel"] = total.numel;
  j["loss_scale"] = finite_or_null(total.loss_scale);
  j["fp16_underflow_fraction"] = total.fp16_underflow_fraction;
  j["fp16_subnormal_fraction"] = total.fp16_subnormal_fraction;
  j["fp16_overflow_fraction"] = total.fp16_overflow_fraction;
  // Every format, with its limits (null shares: not measured in this session).
  Json formats = Json::object();
  for (const FloatFormatLimits& f : kFloatFormats) {
    const FormatRangeShares r = total_range_shares(grads, f.format);
    formats[std::string(f.key)] = {{"max", f.max},
                                   {"min_normal", f.min_normal},
                                   {"min_subnormal", f.min_subnormal},
                                   {"has_inf", f.has_inf},
                                   {"underflow_fraction", finite_or_null(r.underflow)},
                                   {"subnormal_fraction", finite_or_null(r.subnormal)},
                                   {"overflow_fraction", finite_or_null(r.overflow)}};
  }
  j["formats"] = std::move(formats);
  j["zero_fraction"] = total.zero_fraction;
  j["nonfinite_fraction"] = total.nonfinite_fraction;
  j["min_abs_nonzero"] = finite_or_null(min_abs);
  j["max_abs"] = finite_or_null(max_abs);
  Json nearest = Json::array();
  for (const GradientSample* g : nearest_fp16_edge_first(grads, 5))
    nearest.push_back({{"parameter", g->parameter},
                       {"fp16_underflow_fraction", g->fp16_underflow_fraction},
                       {"fp16_subnormal_fraction", g->fp16_subnormal_fraction},
                       {"fp16_overflow_fraction", g->fp16_overflow_fraction},
                       {"nonfinite_fraction", g->nonfinite_fraction}});
  j["nearest_fp16_edge"] = std::move(nearest);
  j["fp16_loss_scale_window"] = loss_scale_window_json(total.fp16_window, precision);
  return j;
}

Json activation_json(const ActivationSample& a) {
  Json j{{"step", a.step},
         {"module", a.module},
         {"dtype", a.dtype},
         {"numel", a.numel},
         {"nonfinite_fraction", finite_or_null(a.nonfinite_fraction)},
         {"max_abs", finite_or_null(a.max_abs)}};
  for (const FloatFormatLimits& f : kFloatFormats) {
    const FormatRangeShares r = range_shares(a, f.format);
    j[std::string(f.key) + "_underflow_fraction"] = finite_or_null(r.underflow);
    j[std::string(f.key) + "_overflow_fraction"] = finite_or_null(r.overflow);
  }
  return j;
}

// Module outputs of the last sampled step, and where an fp16 overflow started; null
// when the session sampled none.
Json activations_json(const SessionView& session) {
  if (session.activation_sampled_steps == 0) return nullptr;
  Json j;
  j["step"] = session.latest_activations.empty() ? Json(nullptr) : Json(session.latest_activations.front().step);
  j["sampled_steps"] = session.activation_sampled_steps;
  Json modules = Json::array();
  for (const auto& a : session.latest_activations) modules.push_back(activation_json(a));
  j["modules"] = std::move(modules);
  const auto& first = session.first_fp16_overflow;
  j["first_fp16_overflow"] = first ? activation_json(*first) : Json(nullptr);
  // Modules inside torch.compile'd graphs, whose outputs no hook could measure.
  j["unmeasured_compiled_modules"] = modules_unmeasured_in_compiled_graphs(session);
  return j;
}

Json metric_json(const QuantMetrics& m) {
  return {{"elements", m.elements},
          {"sqnr_db", finite_or_null(m.sqnr_db())},  // null: exact (no noise) or no signal
          {"flushed_share", m.flushed_share()},
          {"saturated_share", m.saturated_share()},
          {"scale_spread_log2", m.scale_spread_log2()}};
}

Json reason_json(const ReadinessReason& why) {
  if (!why.metrics) return nullptr;
  const char* metric = why.metric == ReadinessMetric::sqnr      ? "sqnr_db"
                       : why.metric == ReadinessMetric::flushed ? "flushed_share"
                                                                : "saturated_share";
  return {{"verdict", readiness_key(why.verdict)},
          {"format", quant_format(why.format).key},
          {"tensor", tensor_role_key(why.tensor)},
          {"metric", metric},
          {"value", finite_or_null(why.value)}};
}

Json bounds_json(double sqnr_db, double flushed, double saturated) {
  return {{"sqnr_db", sqnr_db}, {"flushed_share", flushed}, {"saturated_share", saturated}};
}

// Precision readiness per layer, the sampled steps added up; null when none was
// measured (no sampled step, or a session from before).
Json readiness_json(const ReadinessTotals& totals) {
  if (totals.empty()) return nullptr;
  Json j;
  j["sampled_steps"] = totals.sampled_steps();
  Json measured = Json::array();
  for (TensorRole r : totals.roles()) measured.push_back(tensor_role_key(r));
  j["measured"] = std::move(measured);
  j["measured_text"] = describe_measured_tensors(totals.roles());
  Json thresholds;
  for (QuantElement e : kQuantElements) {
    const ReadinessThresholds& t = readiness_thresholds(e);
    Json formats = Json::array();
    for (const QuantFormatSpec& spec : kQuantFormats)
      if (spec.element == e) formats.push_back(spec.key);
    thresholds[std::string(element_name(e))] = {
        {"formats", std::move(formats)},
        {"ready", bounds_json(t.ready_sqnr_db, t.ready_flushed_share, t.ready_saturated_share)},
        {"borderline", bounds_json(t.borderline_sqnr_db, t.borderline_flushed_share, t.borderline_saturated_share)}};
  }
  j["thresholds"] = std::move(thresholds);
  Json layers = Json::array();
  for (const LayerReadiness& l : totals.layers()) {
    Json layer;
    layer["layer"] = l.layer;
    layer["overall"] = readiness_key(l.overall);
    layer["best_target"] = l.overall == Readiness::keep ? Json(nullptr) : Json(quant_target_name(l.best_target));
    Json targets;
    for (QuantTarget t : {QuantTarget::fp8, QuantTarget::mxfp8, QuantTarget::nvfp4})
      targets[std::string(quant_target_name(t))] = reason_json(target_reason(l, t));
    layer["targets"] = std::move(targets);
    Json formats;
    for (const QuantFormatSpec& spec : kQuantFormats) {
      Json tensors;
      for (const TensorQuantization& t : l.tensors)
        tensors[std::string(tensor_role_key(t.role))] = metric_json(t.formats[static_cast<int>(spec.format)]);
      formats[std::string(spec.key)] = {{"verdict", readiness_key(l.formats[static_cast<int>(spec.format)])},
                                        {"tensors", std::move(tensors)}};
    }
    layer["formats"] = std::move(formats);
    layers.push_back(std::move(layer));
  }
  j["layers"] = std::move(layers);
  return j;
}

// Where a non-finite gradient started in backward, over the checked steps; null when
// the session checked none.
Json backward_inf_json(const BackwardInfSummary& b) {
  if (!b.any()) return nullptr;
  Json j;
  j["checked_steps"] = b.checked_steps;
  j["checked_skipped_steps"] = b.checked_skipped_steps;
  // All of GradScaler's skips, checked or not: those unchecked have no origin.
  j["run_skipped_steps"] = b.run_skipped_steps >= 0 ? Json(b.run_skipped_steps) : Json(nullptr);
  j["steps_with_nonfinite"] = b.steps_with_nonfinite;
  if (b.first) {
    j["first"] = {{"step", b.first->step},
                  {"module", b.first->module},
                  {"gradient", to_string(b.first->side)},
                  {"skipped", b.first->skipped},
                  {"position", b.first->position},
                  {"gradients_checked", b.first->gradients},
                  {"nonfinite_gradients", b.first->nonfinite},
                  {"dtype", b.first->dtype.empty() ? Json(nullptr) : Json(b.first->dtype)}};
  } else {
    j["first"] = nullptr;
  }
  Json origins = Json::array();
  for (const auto& o : b.origins)
    origins.push_back({{"module", o.module}, {"gradient", to_string(o.side)}, {"steps", o.steps}});
  j["origins"] = std::move(origins);
  return j;
}

// Each LR scheduler against the optimizer steps GradScaler skipped; `drifts` flags one
// stepped per optimizer step that advanced after skipped ones (by after_skipped_steps).
Json schedulers_json(const std::vector<SchedulerSummary>& schedulers) {
  Json list = Json::array();
  for (const SchedulerSummary& s : schedulers) {
    list.push_back({{"scheduler", s.scheduler},
                    {"name", s.name},
                    {"optimizer", s.optimizer},
                    {"optimizer_name", s.optimizer_name},
                    {"calls", s.calls},
                    {"optimizer_steps", s.optimizer_steps},
                    {"after_skipped_steps", s.after_skipped},
                    {"skipped_steps_followed", s.after_skipped_steps},
                    {"per_optimizer_step", s.per_optimizer_step()},
                    {"drifts", s.drifts()},
                    {"last_lr", finite_or_null(s.last_lr)}});
  }
  return list;
}

}  // namespace

Json session_summary(const SessionView& session, size_t top_n) {
  Json s;
  s["format"] = "ampscope-summary";
  s["summary_version"] = 1;
  s["session"] = session.path;
  s["session_format"] = session.format_version;
  s["meta"] = meta_json(session);

  const auto& steps = session.steps;
  // Top-level op table rows: every nanosecond once, so the category shares add to 1.
  auto ops = session.op_stats;
  const auto& categories = session.category_totals;
  const int64_t unattributed_gpu = session.gpu_attribution.unattributed_ns;
  int64_t cpu = 0, gpu = 0, cast_cpu = 0, cast_gpu = 0;
  for (const auto& c : categories) {
    cpu += c.cpu_time_ns;
    gpu += c.gpu_time_ns;
    cast_cpu += c.cast_cpu_time_ns;
    cast_gpu += c.cast_gpu_time_ns;
  }
  Json totals;
  totals["steps"] = steps.size();
  totals["ops"] = session.op_count;
  totals["kernels"] = session.kernel_count;
  totals["cpu_time_ns"] = cpu;
  totals["gpu_time_ns"] = gpu;
  totals["cast_cpu_time_ns"] = cast_cpu;
  totals["cast_gpu_time_ns"] = cast_gpu;
  totals["unattributed_gpu_ns"] = unattributed_gpu;
  totals["unattributed_gpu_share"] = session.gpu_attribution.unattributed_share();
  Json cats = Json::array();
  for (const auto& c : categories) {
    cats.push_back({{"category", to_string(c.category)},
                    {"calls", c.calls},
                    {"cpu_time_ns", c.cpu_time_ns},
                    {"cpu_share", share(c.cpu_time_ns, cpu)},
                    {"gpu_time_ns", c.gpu_time_ns},
                    {"gpu_share", share(c.gpu_time_ns, gpu)},
                    {"cast_cpu_time_ns", c.cast_cpu_time_ns},
                    {"cast_gpu_time_ns", c.cast_gpu_time_ns},
                    {"compiled_cpu_time_ns", c.compiled_cpu_time_ns},
                    {"compiled_gpu_time_ns", c.compiled_gpu_time_ns}});
  }
  totals["categories"] = std::move(cats);
  const CompileTime compiling = compile_time(session.op_stats);
  totals["compile"] = {{"calls", compiling.calls},
                       {"cpu_time_ns", compiling.cpu_time_ns},
                       {"gpu_time_ns", compiling.gpu_time_ns}};
  Json phases = Json::array();  // top-level time by phase, compiling in none
  for (const PhaseTotals& p : phase_totals(session.op_stats))
    phases.push_back({{"phase", to_string(p.phase)},
                      {"calls", p.calls},
                      {"compiled_calls", p.compiled_calls},
                      {"cpu_time_ns", p.cpu_time_ns},
                      {"gpu_time_ns", p.gpu_time_ns}});
  totals["phases"] = std::move(phases);
  // The steps the op table covers (the step timing's profiled steps less a warm-up step left
  // out), and that step (null where the table holds every recorded step).
  totals["op_table_steps"] = session.profiled_steps;
  // Its kernels too where the kernel table (top_kernels, the unattributed share) left them out.
  if (const auto& warmup = session.warmup_left_out) {
    Json left_out{{"step", warmup->step},
                  {"calls", warmup->calls},
                  {"cpu_time_ns", warmup->cpu_time_ns},
                  {"gpu_time_ns", warmup->gpu_time_ns}};
    if (warmup->kernels_left_out) {
      left_out["kernels"] = warmup->kernels;
      left_out["kernel_gpu_ns"] = warmup->kernel_gpu_ns;
      left_out["unattributed_gpu_ns"] = warmup->unattributed_gpu_ns;
    }
    totals["warmup_left_out"] = std::move(left_out);
  } else {
    totals["warmup_left_out"] = Json();
  }
  s["totals"] = std::move(totals);

  std::stable_sort(ops.begin(), ops.end(), [](const OpStats& a, const OpStats& b) {
    return std::tie(a.gpu_time_ns, a.cpu_time_ns) > std::tie(b.gpu_time_ns, b.cpu_time_ns);
  });
  Json top_ops = Json::array();
  for (size_t i = 0; i < ops.size() && i < top_n; ++i) {
    const auto& o = ops[i];
    top_ops.push_back({{"name", o.name},
                       {"module", o.module},
                       {"phase", to_string(o.phase)},
                       {"category", to_string(o.category)},
                       {"top_level", o.top_level},
                       {"compiled", o.compiled},
                       {"input_dtypes", o.input_dtypes},
                       {"output_dtypes", o.output_dtypes},
                       {"calls", o.calls},
                       {"cpu_time_ns", o.cpu_time_ns},
                       {"gpu_time_ns", o.gpu_time_ns},
                       {"kernels", o.kernels},
                       {"tensor_core_kernels", o.tensor_core_kernels},
                       {"cast_calls", o.cast_calls},
                       {"cast_bytes", o.cast_bytes},
                       {"cast_cpu_time_ns", o.cast_cpu_time_ns},
                       {"cast_gpu_time_ns", o.cast_gpu_time_ns},
                       {"tensor_core_eligible", o.tensor_core_eligible},
                       {"tensor_core_note", o.tensor_core_note}});
  }
  s["top_ops"] = std::move(top_ops);

  Json top_kernels = Json::array();
  for (size_t i = 0; i < session.top_kernels.size() && i < top_n; ++i) {
    const KernelSummary& k = session.top_kernels[i];
    top_kernels.push_back({{"name", k.name},
                           {"kind", to_string(k.kind)},
                           {"calls", k.calls},
                           {"total_ns", k.total_ns},
                           {"mean_ns", k.mean_ns},
                           {"max_ns", k.max_ns},
                           {"gpu_share", share(k.total_ns, gpu + unattributed_gpu)},
                           {"grid", k.grid},
                           {"block", k.block},
                           {"tensor_core", k.tensor_core},
                           {"launching_ops", k.launching_ops}});
  }
  s["top_kernels"] = std::move(top_kernels);
  s["compiled"] = compiled_json(session);
  s["training"] = training_json(steps);
  s["training"]["step_time"] = step_timing_json(session.step_timing);
  // The steps' memory high-water mark (CUDA: the allocator's peak; CPU: the peak resident set)
  // and the largest mark a step outside the range samples' windows set (memory_peak.h); null
  // where not measured, or where no such step raised it.
  const MemoryPeak& memory = session.memory_peak;
  s["training"]["memory"] = {
      {"kind", std::string(peak_memory_name(memory_kind(session.meta.device)))},
      {"peak_bytes", memory.peak_bytes > 0 ? Json(memory.peak_bytes) : Json(nullptr)},
      {"peak_outside_samples_bytes",
       memory.outside_samples_bytes ? Json(*memory.outside_samples_bytes) : Json(nullptr)},
      {"raised_by_samples", memory.raised_by_samples()}};
  // Which steps took range samples (range_sample_spacing.h); null in older sessions.
  s["training"]["range_samples"] = session.range_sampling.empty() ? Json() : Json(session.range_sampling);
  // A sample's mean time on the training thread by pass (range_sample_phases.h); null before 2026-11-27.
  if (const auto& p = session.range_sample_phases) {
    const double n = static_cast<double>(p->samples);
    s["training"]["range_sample_phases_ms"] = {{"samples", p->samples},
                                               {"gradients", p->gradients_ms / n},
                                               {"activations", p->activations_ms / n},
                                               {"readiness", p->readiness_ms / n}};
  } else {
    s["training"]["range_sample_phases_ms"] = Json();
  }
  s["gradients"] = gradients_json(session.latest_gradients, session.meta.precision);
  s["activations"] = activations_json(session);
  s["readiness"] = readiness_json(session.readiness);
  s["backward_inf"] = backward_inf_json(session.backward_inf);
  s["schedulers"] = schedulers_json(session.schedulers);
  return s;
}

void export_json_summary(const SessionView& session, std::ostream& out, size_t top_n) {
  out << session_summary(session, top_n).dump(2) << '\n';
}

void export_json_summary(const SessionView& session, const std::string& path, size_t top_n) {
  write_json_summary(session_summary(session, top_n), path);
}

void write_json_summary(const nlohmann::ordered_json& summary, const std::string& path) {
  export_detail::write_file_atomically(path, [&](std::ostream& o) { o << summary.dump(2) << '\n'; });
}

}  // namespace ampscope::profiler
