#include "profiler/export/comparison_export.h"

#include <cmath>

#include "profiler/export/export_util.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler {
namespace {

using Json = nlohmann::ordered_json;
using export_detail::csv_header;
using Row = export_detail::CsvRow;

Json finite_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
// A figure that is 0 where it is not known (no baseline, no FLOP count, no datasheet peak).
Json known_or_null(double v) { return std::isfinite(v) && v > 0.0 ? Json(v) : Json(nullptr); }

Json spread_json(const Spread& s) {
  if (s.median <= 0.0) return nullptr;
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}

Json variants_json(const Comparison& c, const std::vector<VariantSummary>& summaries) {
  Json all = Json::array();
  for (size_t i = 0; i < summaries.size(); ++i) {
    const VariantSummary& s = summaries[i];
    const VariantRun& v = c.variants[i];
    all.push_back({{"variant", v.variant},
                   {"precision", v.precision},
                   {"tf32", v.tf32},
                   {"scaler", v.scaler},
                   {"error", v.error.empty() ? Json(nullptr) : Json(v.error)},
                   {"finished_repeats", s.finished_repeats},
                   {"measured_steps", s.measured_steps},
                   {"step_ms", spread_json(s.step_ms)},
                   {"repeat_median_ms", s.repeat_median_ms},
                   {"samples_per_second", known_or_null(s.samples_per_second)},
                   {"speedup_vs_fp32", spread_json(s.speedup)},
                   {"peak_memory_bytes", s.peak_memory_bytes > 0 ? Json(s.peak_memory_bytes) : Json(nullptr)},
                   {"final_loss", finite_or_null(s.final_loss)},
                   {"skipped_steps", s.skipped_steps},
                   {"flops_per_step", known_or_null(s.flops_per_step)},
                   {"achieved_flops_per_second", known_or_null(s.achieved_flops_per_second)},
                   {"peak_flops_per_second", known_or_null(s.peak_flops_per_second)},
                   {"utilization", known_or_null(s.utilization)},
                   {"profiled_steps", v.profiled_steps}});
  }
  return all;
}

Json ops_json(const Comparison& c, const std::vector<OpComparisonRow>& ops) {
  Json all = Json::array();
  for (const OpComparisonRow& row : ops) {
    Json shapes = Json::array();
    for (const Shape& shape : row.input_shapes) shapes.push_back(shape);
    Json per_variant = Json::object();
    for (size_t v = 0; v < row.cells.size(); ++v) {
      const OpVariantCell& cell = row.cells[v];
      if (!cell.present) {
        per_variant[c.variants[v].variant] = nullptr;
        continue;
      }
      per_variant[c.variants[v].variant] = {{"category", cell.category},
                                            {"input_dtypes", cell.input_dtypes},
                                            {"calls_per_step", cell.calls_per_step},
                                            {"time_ns_per_step", cell.time_ns_per_step},
                                            {"per_step_median", cell.per_step_median},
                                            {"cast_ns_per_step", cell.cast_ns_per_step},
                                            {"speedup_vs_fp32", known_or_null(row.speedup[v])},
                                            {"ran_as", cell.ran_as}};
    }
    all.push_back({{"name", row.name},
                   {"module", row.module},
                   {"phase", std::string(to_string(row.phase))},
                   {"input_shapes", std::move(shapes)},
                   {"variants", std::move(per_variant)}});
  }
  return all;
}

}  // namespace

Json comparison_summary(const Comparison& c, const std::vector<VariantSummary>& summaries,
                        const std::vector<OpComparisonRow>& ops) {
  Json j;
  j["kind"] = "comparison";
  j["meta"] = {{"ampscope_version", c.meta.ampscope_version},
               {"created_utc", c.meta.created_utc},
               {"model", c.meta.model},
               {"data", c.meta.data},
               {"device", c.meta.device},
               {"device_name", c.meta.device_name},
               {"torch_version", c.meta.torch_version},
               {"gpu_tracing", c.meta.gpu_tracing}};
  if (c.script) {
    j["script"] = {{"script", c.script->script},
                   {"arguments", c.script->arguments},
                   {"ranks", c.script->command ? c.script->command->world_size : 1},
                   {"ended", c.script->ended}};
  } else {
    j["script"] = nullptr;
  }
  j["inference"] = c.inference;
  j["unit"] = timed_unit(c);
  j["warmup_steps"] = c.warmup_steps;
  j["planned_repeats"] = c.planned_repeats;
  j["effective_batch"] = c.effective_batch;
  j["baseline"] = baseline_index(c) ? Json(kBaselineVariant) : Json(nullptr);
  j["variants"] = variants_json(c, summaries);
  j["ops"] = ops_json(c, ops);
  return j;
}

void export_comparison_csv(const Comparison& c, const std::string& base) {
  const std::vector<VariantSummary> summaries = summarize(c);
  export_detail::write_file_atomically(base + ".variants.csv", [&](std::ostream& out) {
    csv_header(out, {"variant", "precision", "tf32", "scaler", "finished_repeats", "measured_steps", "step_ms_median",
                     "step_ms_min", "step_ms_max", "samples_per_second", "speedup_vs_fp32_median",
                     "speedup_vs_fp32_min", "speedup_vs_fp32_max", "peak_memory_bytes", "final_loss",
                     "skipped_steps", "achieved_flops_per_second", "utilization", "profiled_steps", "error"});
    for (size_t i = 0; i < summaries.size(); ++i) {
      const VariantSummary& s = summaries[i];
      const VariantRun& v = c.variants[i];
      Row r(out);
      r.text(v.variant).text(v.precision).flag(v.tf32).flag(v.scaler).num(s.finished_repeats).num(s.measured_steps);
      r.num(s.step_ms.median).num(s.step_ms.min).num(s.step_ms.max).num(s.samples_per_second);
      r.num(s.speedup.median).num(s.speedup.min).num(s.speedup.max).num(s.peak_memory_bytes).num(s.final_loss);
      r.num(s.skipped_steps).num(s.achieved_flops_per_second).num(s.utilization).num(v.profiled_steps).text(v.error);
    }
  });
  export_detail::write_file_atomically(base + ".ops.csv", [&](std::ostream& out) {
    csv_header(out, {"name", "module", "phase", "input_shapes", "variant", "category", "input_dtypes",
                     "calls_per_step", "time_ns_per_step", "per_step_median", "cast_ns_per_step", "speedup_vs_fp32",
                     "ran_as"});
    for (const OpComparisonRow& row : match_ops(c))
      for (size_t v = 0; v < row.cells.size(); ++v) {
        const OpVariantCell& cell = row.cells[v];
        if (!cell.present) continue;  // the op did not run in that precision: no row
        Row r(out);
        r.text(row.name).text(row.module).text(to_string(row.phase));
        r.text(store_detail::encode_shapes(row.input_shapes));
        r.text(c.variants[v].variant).text(cell.category).text(store_detail::encode_strings(cell.input_dtypes));
        r.num(cell.calls_per_step).num(cell.time_ns_per_step).flag(cell.per_step_median).num(cell.cast_ns_per_step);
        r.num(row.speedup[v]).text(store_detail::encode_strings(cell.ran_as));
      }
  });
  export_detail::write_file_atomically(base + ".steps.csv", [&](std::ostream& out) {
    csv_header(out, {"variant", "repeat", "step", "timed", "loss", "step_time_ms", "samples_per_second", "loss_scale",
                     "found_inf", "skipped", "mem_peak_bytes"});
    for (const VariantRun& v : c.variants)
      for (size_t repeat = 0; repeat < v.repeats.size(); ++repeat)
        for (const StepRecord& s : v.repeats[repeat]) {
          Row r(out);
          r.text(v.variant).num(static_cast<int64_t>(repeat)).num(s.step).flag(s.step > c.warmup_steps);
          r.num(s.loss).num(s.step_time_ms).num(s.samples_per_second).num(s.loss_scale).flag(s.found_inf);
          r.flag(s.skipped).num(s.mem_peak_bytes);
        }
  });
}

}  // namespace ampscope::profiler
