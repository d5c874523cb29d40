#include "profiler/store/row_codec.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <initializer_list>

#include "profiler/store/row_codec_cursor.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler::store_detail {

std::string column_list(Columns columns, std::string_view alias) {
  std::string out;
  for (const std::string_view column : columns) {
    if (!out.empty()) out += ',';
    if (!alias.empty()) (out += alias) += '.';
    out += column;
  }
  return out;
}

std::string insert_sql(std::string_view verb, std::string_view table, Columns columns) {
  return insert_rows_sql(verb, table, columns, 1);
}

std::string insert_rows_sql(std::string_view verb, std::string_view table, Columns columns, size_t rows) {
  std::string out = std::string(verb) + " INTO " + std::string(table) + "(" + column_list(columns) + ") VALUES";
  for (size_t row = 0; row < rows; ++row) {
    out += row ? ",(" : "(";
    for (size_t i = 1; i <= columns.size(); ++i) {
      if (i > 1) out += ',';
      out += '?' + std::to_string(row * columns.size() + i);
    }
    out += ')';
  }
  return out;
}

std::string select_columns(const Db& db, std::string_view table, Columns columns, std::span<const AddedColumn> added) {
  if (added.empty()) return column_list(columns);
  const std::vector<std::string> present = table_columns(db, table);
  std::string out;
  for (const std::string_view column : columns) {
    if (!out.empty()) out += ',';
    const auto it = std::find_if(added.begin(), added.end(), [&](const AddedColumn& a) { return a.name == column; });
    const bool absent = it != added.end() && std::find(present.begin(), present.end(), column) == present.end();
    out += absent ? it->when_absent : column;
  }
  return out;
}

// ---- steps ----

void bind_step(Stmt& s, int first, const StepRecord& r) {
  BindCursor b(s, first);
  b.value(r.step).value(r.loss).value(r.lr).value(r.loss_scale).value(r.found_inf).value(r.skipped);
  b.value(r.growth_tracker).value(r.grad_norm).value(r.step_time_ms).value(r.samples_per_second);
  b.value(r.mem_allocated_bytes).value(r.mem_reserved_bytes).value(r.mem_peak_bytes).value(r.end_ns);
  b.value(r.eval_loss).value(r.capture_after_ms);
  b.done(kStepColumns);
}

StepRecord read_step(const Stmt& s, int first) {
  ReadCursor c(s, first);
  StepRecord r;
  r.step = c.i64();
  r.loss = c.real();
  r.lr = c.real();
  r.loss_scale = c.real();
  r.found_inf = c.boolean();
  r.skipped = c.boolean();
  r.growth_tracker = c.i64();
  r.grad_norm = c.real();
  r.step_time_ms = c.real();
  r.samples_per_second = c.real();
  r.mem_allocated_bytes = c.i64();
  r.mem_reserved_bytes = c.i64();
  r.mem_peak_bytes = c.i64();
  r.end_ns = c.i64();
  r.eval_loss = c.real();
  r.capture_after_ms = c.real();
  c.done(kStepColumns);
  return r;
}

// ---- op tables ----

namespace {

// Per-step times as "12,0,15": readable in the sqlite3 shell, and short (a profiled pass has few steps).
std::string encode_samples(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    out += std::to_string(values[i]);
  }
  return out;
}

std::vector<int64_t> decode_samples(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    try {
      out.push_back(std::stoll(text.substr(start, comma - start)));
    } catch (const std::exception&) {
      return {};  // damaged: the reader falls back to the totals
    }
    start = comma + 1;
  }
  return out;
}

void bind_op_stats_values(BindCursor& b, const OpStats& r, EncodedOpStats& keep) {
  keep.input_dtypes = encode_strings(r.input_dtypes);
  keep.input_shapes = encode_shapes(r.input_shapes);
  keep.output_dtypes = encode_strings(r.output_dtypes);
  b.text(r.name).text(r.module).text(to_string(r.phase)).text(to_string(r.category));
  b.text(keep.input_dtypes).text(keep.input_shapes).text(keep.output_dtypes);
  b.value(r.calls).value(r.cpu_time_ns).value(r.gpu_time_ns).value(r.kernels).value(r.tensor_core_kernels);
  b.value(r.tensor_core_gpu_time_ns).value(r.cast_calls).value(r.cast_bytes).value(r.cast_cpu_time_ns);
  b.value(r.cast_gpu_time_ns).value(r.tensor_core_eligible).text(r.tensor_core_note).value(r.top_level);
}

OpStats read_op_stats_values(ReadCursor& c) {
  OpStats r;
  r.name = c.text();
  r.module = c.text();
  r.phase = parse_phase(c.text()).value_or(Phase::kOther);
  r.category = parse_category(c.text()).value_or(OpCategory::kUnchanged);
  r.input_dtypes = decode_strings(c.text());
  r.input_shapes = decode_shapes(c.text());
  r.output_dtypes = decode_strings(c.text());
  r.calls = c.i64();
  r.cpu_time_ns = c.i64();
  r.gpu_time_ns = c.i64();
  r.kernels = c.i64();
  r.tensor_core_kernels = c.i64();
  r.tensor_core_gpu_time_ns = c.i64();
  r.cast_calls = c.i64();
  r.cast_bytes = c.i64();
  r.cast_cpu_time_ns = c.i64();
  r.cast_gpu_time_ns = c.i64();
  r.tensor_core_eligible = c.boolean();
  r.tensor_core_note = c.text();
  r.top_level = c.boolean();
  return r;
}

}  // namespace

void bind_op_stats(Stmt& s, int first, const OpStats& r, EncodedOpStats& keep) {
  BindCursor b(s, first);
  bind_op_stats_values(b, r, keep);
  b.done(kOpStatsColumns);
}

OpStats read_op_stats(const Stmt& s, int first) {
  ReadCursor c(s, first);
  OpStats r = read_op_stats_values(c);
  c.done(kOpStatsColumns);
  return r;
}

void bind_session_op_stats(Stmt& s, int first, const OpStats& r, EncodedOpStats& keep) {
  BindCursor b(s, first);
  bind_op_stats_values(b, r, keep);
  b.value(r.compiled);
  keep.step_cpu_ns = encode_samples(r.step_cpu_time_ns);
  keep.step_gpu_ns = encode_samples(r.step_gpu_time_ns);
  b.text(keep.step_cpu_ns).text(keep.step_gpu_ns);
  b.done(kSessionOpStatsColumns);
}

OpStats read_session_op_stats(const Stmt& s, int first) {
  ReadCursor c(s, first);
  OpStats r = read_op_stats_values(c);
  r.compiled = c.boolean();
  r.step_cpu_time_ns = decode_samples(c.text());
  r.step_gpu_time_ns = decode_samples(c.text());
  c.done(kSessionOpStatsColumns);
  return r;
}

void bind_comparison_op_stats(Stmt& s, int first, std::string_view variant, const OpStats& r,
                              EncodedOpStats& keep) {
  BindCursor b(s, first);
  b.text(variant);
  bind_op_stats_values(b, r, keep);
  keep.step_cpu_ns = encode_samples(r.step_cpu_time_ns);
  keep.step_gpu_ns = encode_samples(r.step_gpu_time_ns);
  b.text(keep.step_cpu_ns).text(keep.step_gpu_ns);
  b.done(kComparisonOpStatsColumns);
}

OpStats read_comparison_op_stats(const Stmt& s, int first) {
  ReadCursor c(s, first);
  c.skip();  // the variant
  OpStats r = read_op_stats_values(c);
  r.step_cpu_time_ns = decode_samples(c.text());
  r.step_gpu_time_ns = decode_samples(c.text());
  c.done(kComparisonOpStatsColumns);
  return r;
}

// ---- comparison_steps, comparison_variants ----

void bind_comparison_step(Stmt& s, int first, std::string_view variant, int64_t repeat, const StepRecord& step) {
  s.bind_text(first, variant).bind(first + 1, repeat);
  bind_step(s, first + 2, step);
}

ComparisonStepRow read_comparison_step(const Stmt& s, int first) {
  return {s.text(first), s.i64(first + 1), read_step(s, first + 2)};
}

void bind_comparison_variant(Stmt& s, int first, const VariantRun& v) {
  BindCursor b(s, first);
  b.text(v.variant).text(v.precision).value(v.tf32).value(v.scaler).text(v.error);
  b.done(kComparisonVariantDescriptionColumns);
}

VariantRun read_comparison_variant(const Stmt& s, int first) {
  ReadCursor c(s, first);
  VariantRun v;
  v.variant = c.text();
  v.precision = c.text();
  v.tf32 = c.boolean();
  v.scaler = c.boolean();
  v.error = c.text();
  v.profiled_steps = c.i64();
  c.done(kComparisonVariantColumns);
  return v;
}

// ---- meta ----

void bind_meta(Stmt& s, int first, std::string_view key, std::string_view value) {
  BindCursor b(s, first);
  b.text(key).text(value);
  b.done(kMetaColumns);
}

std::pair<std::string, std::string> read_meta(const Stmt& s, int first) {
  ReadCursor c(s, first);
  std::pair<std::string, std::string> kv;
  kv.first = c.text();
  kv.second = c.text();
  c.done(kMetaColumns);
  return kv;
}

// ---- optimizer_steps, scheduler_steps ----

void bind_optimizer_step(Stmt& s, int first, const OptimizerStepRecord& r) {
  BindCursor b(s, first);
  b.value(r.step).value(static_cast<int64_t>(r.optimizer)).text(r.name).value(r.stepped).value(r.found_inf);
  b.value(r.skipped).value(r.unscale_calls).value(r.lr).value(r.loss_scale).value(r.loss_scale_after);
  b.done(kOptimizerStepColumns);
}

OptimizerStepRecord read_optimizer_step(const Stmt& s, int first) {
  ReadCursor c(s, first);
  OptimizerStepRecord r;
  r.step = c.i64();
  r.optimizer = c.i32();
  r.name = c.text();
  r.stepped = c.boolean();
  r.found_inf = c.boolean();
  r.skipped = c.boolean();
  r.unscale_calls = c.i64();
  r.lr = c.real();
  r.loss_scale = c.real();
  r.loss_scale_after = c.real();
  c.done(kOptimizerStepColumns);
  return r;
}

void bind_scheduler_step(Stmt& s, int first, const SchedulerStepRecord& r) {
  BindCursor b(s, first);
  b.value(r.call).value(static_cast<int64_t>(r.scheduler)).text(r.name).value(static_cast<int64_t>(r.optimizer));
  b.value(r.step).value(r.after_skipped).value(r.lr);
  b.done(kSchedulerStepColumns);
}

SchedulerStepRecord read_scheduler_step(const Stmt& s, int first) {
  ReadCursor c(s, first);
  SchedulerStepRecord r;
  r.call = c.i64();
  r.scheduler = c.i32();
  r.name = c.text();
  r.optimizer = c.i32();
  r.step = c.i64();
  r.after_skipped = c.boolean();
  r.lr = c.real();
  c.done(kSchedulerStepColumns);
  return r;
}

// ---- the tables as a whole ----

namespace {

TableLayout layout(std::string_view table, std::initializer_list<Columns> parts) {
  TableLayout out{table, {}};
  for (const Columns part : parts) out.columns.insert(out.columns.end(), part.begin(), part.end());
  return out;
}

// The INTEGER PRIMARY KEY columns SQLite assigns, outside the codecs' lists.
constexpr std::array<std::string_view, 1> kAssignedId{"id"};
constexpr std::array<std::string_view, 1> kAssignedOrd{"ord"};

}  // namespace

const std::vector<TableLayout>& session_table_layouts() {
  static const std::vector<TableLayout> layouts{
      layout("meta", {kMetaColumns}),
      layout("steps", {kStepColumns}),
      layout("op_signatures", {kOpSignatureColumns}),
      layout("op_calls", {kOpCallColumns}),
      layout("ops", {kOpColumns}),  // a view of the two
      layout("kernel_names", {kAssignedId, kKernelNameColumns}),
      layout("kernels", {kAssignedId, kKernelColumns}),
      layout("kernel_stats", {kKernelStatColumns}),
      layout("kernel_ops", {kKernelOpColumns}),
      layout("kernel_enclosing_ops", {kKernelOpColumns}),
      layout("gradients", {kGradientColumns}),
      layout("activations", {kActivationColumns}),
      layout("op_stats", {kAssignedId, kSessionOpStatsColumns}),
      layout("optimizer_steps", {kOptimizerStepColumns}),
      layout("readiness", {kReadinessColumns}),
      layout("scheduler_steps", {kSchedulerStepColumns}),
      layout("backward_checks", {kBackwardCheckColumns}),
      layout("compiled_kernels", {kCompiledKernelColumns}),
  };
  return layouts;
}

const std::vector<TableLayout>& comparison_table_layouts() {
  static const std::vector<TableLayout> layouts{
      layout("comparison_variants", {kAssignedOrd, kComparisonVariantColumns}),
      layout("comparison_steps", {kComparisonStepColumns}),
      layout("comparison_op_stats", {kAssignedId, kComparisonOpStatsColumns}),
  };
  return layouts;
}

void bind_compiled_kernel(Stmt& s, int first, const CompiledKernelRow& r, std::string& ops_json) {
  nlohmann::json ops = nlohmann::json::array();
  for (const CompiledFusedOp& op : r.ops)
    ops.push_back({{"node", op.node}, {"name", op.name}, {"module", op.module}, {"category", op.category},
                   {"input_dtypes", op.input_dtypes}, {"output_dtypes", op.output_dtypes}});
  ops_json = ops.dump();
  BindCursor b(s, first);
  b.value(r.graph).text(to_string(r.phase)).text(r.kind).text(r.kernel).value(r.ordinal).text(ops_json);
  b.value(r.calls).value(r.cpu_time_ns).value(r.kernels).value(r.tensor_core_kernels).value(r.gpu_time_ns);
  b.value(r.first_call_gpu_ns);
  b.done(kCompiledKernelColumns);
}

CompiledKernelRow read_compiled_kernel(const Stmt& s, int first) {
  ReadCursor c(s, first);
  CompiledKernelRow r;
  r.graph = c.i64();
  r.phase = parse_phase(c.text()).value_or(Phase::kOther);
  r.kind = c.text();
  r.kernel = c.text();
  r.ordinal = c.i64();
  const auto ops = nlohmann::json::parse(c.text(), nullptr, /*allow_exceptions=*/false);
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
  r.calls = c.i64();
  r.cpu_time_ns = c.i64();
  r.kernels = c.i64();
  r.tensor_core_kernels = c.i64();
  r.gpu_time_ns = c.i64();
  r.first_call_gpu_ns = c.i64();
  c.done(kCompiledKernelColumns);
  return r;
}

}  // namespace ampscope::profiler::store_detail
