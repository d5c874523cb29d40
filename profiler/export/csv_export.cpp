#include "profiler/export/csv_export.h"

#include <initializer_list>
#include <limits>

#include "profiler/export/export_util.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler {
namespace {

using Row = export_detail::CsvRow;
using export_detail::csv_header;

std::string dims(const std::array<int32_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

}  // namespace

void export_op_table_csv(const SessionReader& session, std::ostream& out) {
  csv_header(out, {"name",
               "module",
               "phase",
               "category",
               "input_dtypes",
               "input_shapes",
               "output_dtypes",
               "calls",
               "cpu_time_ns",
               "gpu_time_ns",
               "kernels",
               "tensor_core_kernels",
               "tensor_core_gpu_time_ns",
               "cast_calls",
               "cast_bytes",
               "cast_cpu_time_ns",
               "cast_gpu_time_ns",
               "tensor_core_eligible",
               "tensor_core_note",
               "top_level",
               "compiled"});
  for (const auto& s : session.op_stats()) {
    Row r(out);
    r.text(s.name).text(s.module).text(to_string(s.phase)).text(to_string(s.category));
    r.text(store_detail::encode_strings(s.input_dtypes));
    r.text(store_detail::encode_shapes(s.input_shapes));
    r.text(store_detail::encode_strings(s.output_dtypes));
    r.num(s.calls).num(s.cpu_time_ns).num(s.gpu_time_ns).num(s.kernels);
    r.num(s.tensor_core_kernels).num(s.tensor_core_gpu_time_ns).num(s.cast_calls);
    r.num(s.cast_bytes).num(s.cast_cpu_time_ns).num(s.cast_gpu_time_ns);
    r.flag(s.tensor_core_eligible).text(s.tensor_core_note).flag(s.top_level).flag(s.compiled);
  }
}

void export_kernels_csv(const SessionReader& session, std::ostream& out) {
  csv_header(out, {"kind", "name", "op_id", "step", "device", "stream", "start_ns", "end_ns",
               "duration_ns", "correlation_id", "grid", "block", "registers_per_thread",
               "shared_memory_bytes", "bytes", "tensor_core_by_name"});
  session.for_each_kernel(
      std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
      [&](const KernelRecord& k) {
        Row r(out);
        r.text(to_string(k.kind)).text(k.name).num(static_cast<int64_t>(k.op_id)).num(k.step);
        r.num(int64_t{k.device}).num(int64_t{k.stream}).num(k.start_ns).num(k.end_ns);
        r.num(k.end_ns - k.start_ns).num(static_cast<int64_t>(k.correlation_id));
        r.text(dims(k.grid)).text(dims(k.block)).num(int64_t{k.registers_per_thread});
        r.num(int64_t{k.shared_memory_bytes}).num(k.bytes).flag(k.tensor_core_by_name);
      });
}

void export_steps_csv(const SessionReader& session, std::ostream& out) {
  csv_header(out, {"step", "loss", "lr", "loss_scale", "found_inf", "skipped", "growth_tracker",
               "grad_norm", "step_time_ms", "capture_after_ms", "samples_per_second", "mem_allocated_bytes",
               "mem_reserved_bytes", "mem_peak_bytes", "end_ns", "eval_loss"});
  for (const auto& s : session.steps()) {
    Row r(out);
    r.num(s.step).num(s.loss).num(s.lr).num(s.loss_scale).flag(s.found_inf).flag(s.skipped);
    r.num(s.growth_tracker).num(s.grad_norm).num(s.step_time_ms).num(s.capture_after_ms).num(s.samples_per_second);
    r.num(s.mem_allocated_bytes).num(s.mem_reserved_bytes).num(s.mem_peak_bytes).num(s.end_ns);
    if (has_eval_loss(s)) {
      r.num(s.eval_loss);
    } else {
      r.text("");  // no validation after this step
    }
  }
}

void export_gradients_csv(const SessionReader& session, std::ostream& out) {
  {
    Row h(out);
    for (const char* n : {"step", "parameter", "loss_scale", "numel", "zero_fraction", "nonfinite_fraction"}) h.text(n);
    for (const FloatFormatLimits& f : kFloatFormats)
      for (const char* share : {"_underflow_fraction", "_subnormal_fraction", "_overflow_fraction"})
        h.text(std::string(f.key) + share);
    for (const char* n : {"min_abs_nonzero", "max_abs", "norm"}) h.text(n);
  }
  for (int64_t step : session.gradient_steps()) {
    for (const GradientSample& g : session.gradients(step)) {
      Row r(out);
      r.num(g.step).text(g.parameter).num(g.loss_scale).num(g.numel).num(g.zero_fraction).num(g.nonfinite_fraction);
      for (const FloatFormatLimits& f : kFloatFormats) {
        const FormatRangeShares s = range_shares(g, f.format);
        r.num(s.underflow).num(s.subnormal).num(s.overflow);
      }
      r.num(g.min_abs_nonzero).num(g.max_abs).num(g.norm);
    }
  }
}

void export_gradients_csv(const SessionReader& session, const std::string& path) {
  export_detail::write_file_atomically(path, [&](std::ostream& o) { export_gradients_csv(session, o); });
}

void export_op_table_csv(const SessionReader& session, const std::string& path) {
  export_detail::write_file_atomically(path,
                                       [&](std::ostream& o) { export_op_table_csv(session, o); });
}
void export_kernels_csv(const SessionReader& session, const std::string& path) {
  export_detail::write_file_atomically(path,
                                       [&](std::ostream& o) { export_kernels_csv(session, o); });
}
void export_steps_csv(const SessionReader& session, const std::string& path) {
  export_detail::write_file_atomically(path,
                                       [&](std::ostream& o) { export_steps_csv(session, o); });
}

}  // namespace ampscope::profiler
