#include "profiler/store/row_codec.h"

#include <nlohmann/json.hpp>

#include "profiler/store/session_schema.h"

namespace ampscope::profiler::store_detail {

void bind_step(Stmt& s, int first, const StepRecord& r) {
  const int i = first;
  s.bind(i, r.step).bind(i + 1, r.loss).bind(i + 2, r.lr).bind(i + 3, r.loss_scale);
  s.bind(i + 4, r.found_inf).bind(i + 5, r.skipped).bind(i + 6, r.growth_tracker);
  s.bind(i + 7, r.grad_norm).bind(i + 8, r.step_time_ms).bind(i + 9, r.samples_per_second);
  s.bind(i + 10, r.mem_allocated_bytes).bind(i + 11, r.mem_reserved_bytes);
  s.bind(i + 12, r.mem_peak_bytes).bind(i + 13, r.end_ns).bind(i + 14, r.eval_loss);
}

StepRecord read_step(const Stmt& s, int first) {
  const int i = first;
  StepRecord r;
  r.step = s.i64(i);
  r.loss = s.real(i + 1);
  r.lr = s.real(i + 2);
  r.loss_scale = s.real(i + 3);
  r.found_inf = s.boolean(i + 4);
  r.skipped = s.boolean(i + 5);
  r.growth_tracker = s.i64(i + 6);
  r.grad_norm = s.real(i + 7);
  r.step_time_ms = s.real(i + 8);
  r.samples_per_second = s.real(i + 9);
  r.mem_allocated_bytes = s.i64(i + 10);
  r.mem_reserved_bytes = s.i64(i + 11);
  r.mem_peak_bytes = s.i64(i + 12);
  r.end_ns = s.i64(i + 13);
  r.eval_loss = s.real(i + 14);
  return r;
}

std::string step_select_columns(const Db& db, const char* table) {
  std::string columns = kStepColumns;
  if (!has_column(db, table, "eval_loss")) columns.replace(columns.rfind("eval_loss"), 9, "NULL");
  return columns;
}

std::string op_stats_select_columns(const Db& db) {
  return std::string(kOpStatsColumns) + "," + (has_column(db, "op_stats", kOpStatsCompiledColumn) ? kOpStatsCompiledColumn : "0");
}

void bind_op_stats(Stmt& s, int first, const OpStats& r, EncodedOpStats& keep) {
  keep.input_dtypes = encode_strings(r.input_dtypes);
  keep.input_shapes = encode_shapes(r.input_shapes);
  keep.output_dtypes = encode_strings(r.output_dtypes);
  const int i = first;
  s.bind_text(i, r.name).bind_text(i + 1, r.module).bind_text(i + 2, to_string(r.phase));
  s.bind_text(i + 3, to_string(r.category)).bind_text(i + 4, keep.input_dtypes);
  s.bind_text(i + 5, keep.input_shapes).bind_text(i + 6, keep.output_dtypes).bind(i + 7, r.calls);
  s.bind(i + 8, r.cpu_time_ns).bind(i + 9, r.gpu_time_ns).bind(i + 10, r.kernels);
  s.bind(i + 11, r.tensor_core_kernels).bind(i + 12, r.tensor_core_gpu_time_ns);
  s.bind(i + 13, r.cast_calls).bind(i + 14, r.cast_bytes).bind(i + 15, r.cast_cpu_time_ns);
  s.bind(i + 16, r.cast_gpu_time_ns).bind(i + 17, r.tensor_core_eligible);
  s.bind_text(i + 18, r.tensor_core_note).bind(i + 19, r.top_level);
}

OpStats read_op_stats(const Stmt& s, int first) {
  const int i = first;
  OpStats r;
  r.name = s.text(i);
  r.module = s.text(i + 1);
  r.phase = parse_phase(s.text(i + 2)).value_or(Phase::kOther);
  r.category = parse_category(s.text(i + 3)).value_or(OpCategory::kUnchanged);
  r.input_dtypes = decode_strings(s.text(i + 4));
  r.input_shapes = decode_shapes(s.text(i + 5));
  r.output_dtypes = decode_strings(s.text(i + 6));
  r.calls = s.i64(i + 7);
  r.cpu_time_ns = s.i64(i + 8);
  r.gpu_time_ns = s.i64(i + 9);
  r.kernels = s.i64(i + 10);
  r.tensor_core_kernels = s.i64(i + 11);
  r.tensor_core_gpu_time_ns = s.i64(i + 12);
  r.cast_calls = s.i64(i + 13);
  r.cast_bytes = s.i64(i + 14);
  r.cast_cpu_time_ns = s.i64(i + 15);
  r.cast_gpu_time_ns = s.i64(i + 16);
  r.tensor_core_eligible = s.boolean(i + 17);
  r.tensor_core_note = s.text(i + 18);
  r.top_level = s.boolean(i + 19);
  return r;
}

void bind_readiness(Stmt& s, int first, const ReadinessSample& sample, QuantFormat format) {
  const QuantMetrics& m = sample.tensor.formats[static_cast<int>(format)];
  const int i = first;
  s.bind(i, sample.step).bind_text(i + 1, sample.layer).bind_text(i + 2, tensor_role_key(sample.tensor.role));
  s.bind_text(i + 3, quant_format(format).key).bind(i + 4, m.elements).bind(i + 5, m.nonzero);
  s.bind(i + 6, m.flushed).bind(i + 7, m.saturated).bind(i + 8, m.signal).bind(i + 9, m.noise);
  if (m.scale_log2_max >= m.scale_log2_min) {
    s.bind(i + 10, m.scale_log2_min).bind(i + 11, m.scale_log2_max);
  } else {
    s.bind_null(i + 10).bind_null(i + 11);
  }
}

std::optional<ReadinessSample> read_readiness(const Stmt& s, int first) {
  const int i = first;
  const std::optional<TensorRole> role = parse_tensor_role(s.text(i + 2));
  const std::optional<QuantFormat> format = parse_quant_format(s.text(i + 3));
  if (!role || !format) return std::nullopt;
  ReadinessSample sample;
  sample.step = s.i64(i);
  sample.layer = s.text(i + 1);
  sample.tensor.role = *role;
  QuantMetrics& m = sample.tensor.formats[static_cast<int>(*format)];
  m.elements = s.i64(i + 4);
  m.nonzero = s.i64(i + 5);
  m.flushed = s.i64(i + 6);
  m.saturated = s.i64(i + 7);
  m.signal = s.real(i + 8);
  m.noise = s.real(i + 9);
  if (!s.is_null(i + 10) && !s.is_null(i + 11)) {
    m.scale_log2_min = s.real(i + 10);
    m.scale_log2_max = s.real(i + 11);
  }
  return sample;
}

void bind_scheduler_step(Stmt& s, int first, const SchedulerStepRecord& r) {
  const int i = first;
  s.bind(i, r.call).bind(i + 1, static_cast<int64_t>(r.scheduler)).bind_text(i + 2, r.name);
  s.bind(i + 3, static_cast<int64_t>(r.optimizer)).bind(i + 4, r.step).bind(i + 5, r.after_skipped);
  s.bind(i + 6, r.lr);
}

SchedulerStepRecord read_scheduler_step(const Stmt& s, int first) {
  const int i = first;
  SchedulerStepRecord r;
  r.call = s.i64(i);
  r.scheduler = s.i32(i + 1);
  r.name = s.text(i + 2);
  r.optimizer = s.i32(i + 3);
  r.step = s.i64(i + 4);
  r.after_skipped = s.boolean(i + 5);
  r.lr = s.real(i + 6);
  return r;
}

void bind_backward_check(Stmt& s, int first, const BackwardCheck& r) {
  const int i = first;
  s.bind(i, r.step).bind(i + 1, r.skipped).bind(i + 2, r.gradients).bind(i + 3, r.nonfinite);
  // NULL module and side when every gradient was finite.
  s.bind_text(i + 4, r.found() ? std::string_view(r.module) : std::string_view());
  s.bind_text(i + 5, r.found() ? to_string(r.side) : std::string_view());
  s.bind(i + 6, r.position);
}

BackwardCheck read_backward_check(const Stmt& s, int first) {
  const int i = first;
  BackwardCheck r;
  r.step = s.i64(i);
  r.skipped = s.boolean(i + 1);
  r.gradients = s.i64(i + 2);
  r.nonfinite = s.i64(i + 3);
  r.module = s.text(i + 4);
  r.side = parse_gradient_side(s.text(i + 5)).value_or(GradientSide::kInput);
  r.position = s.i64(i + 6);
  return r;
}

void bind_compiled_kernel(Stmt& s, int first, const CompiledKernelRow& r, std::string& ops_json) {
  nlohmann::json ops = nlohmann::json::array();
  for (const CompiledFusedOp& op : r.ops)
    ops.push_back({{"node", op.node}, {"name", op.name}, {"module", op.module}, {"category", op.category},
                   {"input_dtypes", op.input_dtypes}, {"output_dtypes", op.output_dtypes}});
  ops_json = ops.dump();
  const int i = first;
  s.bind(i, r.graph).bind_text(i + 1, to_string(r.phase)).bind_text(i + 2, r.kind).bind_text(i + 3, r.kernel);
  s.bind(i + 4, r.ordinal).bind_text(i + 5, ops_json).bind(i + 6, r.calls).bind(i + 7, r.cpu_time_ns);
}

CompiledKernelRow read_compiled_kernel(const Stmt& s, int first) {
  const int i = first;
  CompiledKernelRow r;
  r.graph = s.i64(i);
  r.phase = parse_phase(s.text(i + 1)).value_or(Phase::kOther);
  r.kind = s.text(i + 2);
  r.kernel = s.text(i + 3);
  r.ordinal = s.i64(i + 4);
  const auto ops = nlohmann::json::parse(s.text(i + 5), nullptr, /*allow_exceptions=*/false);
  if (ops.is_array())
    for (const auto& o : ops) {
      if (!o.is_object()) continue;
      auto text = [&](const char* key) { return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : ""; };
      auto list = [&](const char* key) {
        std::vector<std::string> out;
        if (o.contains(key) && o[key].is_array())
          for (const auto& v : o[key]) out.push_back(v.is_string() ? v.get<std::string>() : "");
        return out;
      };
      r.ops.push_back({text("node"), text("name"), text("module"), text("category"), list("input_dtypes"),
                       list("output_dtypes")});
    }
  r.calls = s.i64(i + 6);
  r.cpu_time_ns = s.i64(i + 7);
  return r;
}

}  // namespace ampscope::profiler::store_detail
