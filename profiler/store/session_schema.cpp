#include "profiler/store/session_schema.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

namespace ampscope::profiler::store_detail {

// Times are int64 ns on the profiler clock; ids are uint64 stored as int64 (bit
// pattern kept). Enums are stored by their to_string() names so the file reads
// without this code. Kernel names repeat millions of times, so kernels refer to
// kernel_names. kernel_stats and kernel_ops are the profiler's KernelAggregator
// table, replaced as a whole every few seconds and at the end of a run (the same
// rows the live view shows), so top-kernel queries never scan kernels
// (kernel_stats' grid/block are those of the first call of the name).
// measured_calls, measured_tensor_core_calls and kernels.tensor_core_measured are
// reserved for hardware-counter confirmation, which is not built: written as 0/NULL.
// steps.eval_loss and steps.capture_after_ms came later (additive): older files lack the
// columns, readers read NULL and 0.
// So did op_stats.compiled (torch.compile's graph ops): older files read as eager rows,
// kernel_enclosing_ops (the ops a kernel ran inside): older files have no such table,
// and the readiness table (precision readiness, issue #30): older files lack it and
// have no readiness. scheduler_steps and backward_checks
// (issue #30) are additive tables too: older files lack them and read as having none;
// backward_checks.dtype came later (additive): older files read it as NULL.
// So is compiled_kernels (torch.compile'd code's kernels with the graph ops each
// fused, issue #28), replaced as a whole like op_stats.
// Format 2 (2026-11-26) stores ops as op_signatures (each distinct name, phase,
// category, module and dtypes/shapes once) and op_calls (integers per call, referring
// to a signature); the view `ops` joins them into the columns of format 1's table
// `ops`, which readers read in both (format 1 files have that table and neither of
// the two). The text columns were ~70 % of the file and most of the writer's time.
// op_calls has no index on start_ns (files before 2026-11-26 have one on ops,
// ops_by_start): ops are read by step and sorted within the steps read, and keeping a
// second index in step with a million rows a second was a fifth of the writer's time.
// Each table's columns are also listed in row_codec.h, which the writer and the
// reader build their SQL from: a column added here goes there too, in the same
// place (test_store_columns checks every table).
const char* const kSchemaSql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE steps(
  step INTEGER PRIMARY KEY, loss REAL, lr REAL, loss_scale REAL, found_inf INTEGER,
  skipped INTEGER, growth_tracker INTEGER, grad_norm REAL, step_time_ms REAL,
  samples_per_second REAL, mem_allocated_bytes INTEGER, mem_reserved_bytes INTEGER,
  mem_peak_bytes INTEGER, end_ns INTEGER, eval_loss REAL, capture_after_ms REAL);
CREATE TABLE op_signatures(
  id INTEGER PRIMARY KEY, name TEXT, phase TEXT, category TEXT, module TEXT,
  input_dtypes TEXT, input_shapes TEXT, output_dtypes TEXT);
CREATE TABLE op_calls(
  id INTEGER PRIMARY KEY, parent_id INTEGER, step INTEGER,
  signature_id INTEGER REFERENCES op_signatures(id), sequence_nr INTEGER,
  forward_op_id INTEGER, depth INTEGER, thread_id INTEGER, start_ns INTEGER,
  end_ns INTEGER, cast_bytes INTEGER, autograd_node INTEGER);
CREATE INDEX op_calls_by_step ON op_calls(step);
CREATE VIEW ops AS SELECT
  c.id, c.parent_id, c.step, s.name, s.phase, s.category, s.module, c.sequence_nr,
  c.forward_op_id, c.depth, c.thread_id, c.start_ns, c.end_ns, s.input_dtypes,
  s.input_shapes, s.output_dtypes, c.cast_bytes, c.autograd_node
  FROM op_calls c JOIN op_signatures s ON s.id = c.signature_id;
CREATE TABLE kernel_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE kernels(
  id INTEGER PRIMARY KEY, kind TEXT, correlation_id INTEGER, op_id INTEGER, step INTEGER,
  name_id INTEGER REFERENCES kernel_names(id), device INTEGER, stream INTEGER,
  start_ns INTEGER, end_ns INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER, registers_per_thread INTEGER,
  shared_memory_bytes INTEGER, bytes INTEGER, tensor_core_by_name INTEGER,
  tensor_core_measured INTEGER);
CREATE INDEX kernels_by_start ON kernels(start_ns);
CREATE INDEX kernels_by_op ON kernels(op_id);
CREATE INDEX kernels_by_step ON kernels(step);
CREATE TABLE kernel_stats(
  name_id INTEGER PRIMARY KEY, kind TEXT, calls INTEGER, total_ns INTEGER, min_ns INTEGER,
  max_ns INTEGER, tensor_core_calls INTEGER, measured_calls INTEGER,
  measured_tensor_core_calls INTEGER, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
  block_x INTEGER, block_y INTEGER, block_z INTEGER);
CREATE TABLE kernel_ops(
  name_id INTEGER, op_name TEXT, calls INTEGER, PRIMARY KEY(name_id, op_name)) WITHOUT ROWID;
CREATE TABLE kernel_enclosing_ops(
  name_id INTEGER, op_name TEXT, calls INTEGER, PRIMARY KEY(name_id, op_name)) WITHOUT ROWID;
CREATE VIEW kernels_named AS
  SELECT k.*, n.name AS name FROM kernels k JOIN kernel_names n ON n.id = k.name_id;
CREATE TABLE gradients(
  step INTEGER, parameter TEXT, loss_scale REAL, numel INTEGER, log2_histogram BLOB,
  zero_fraction REAL, nonfinite_fraction REAL, fp16_underflow_fraction REAL,
  fp16_subnormal_fraction REAL, fp16_overflow_fraction REAL, min_abs_nonzero REAL,
  max_abs REAL, norm REAL, bf16_underflow_fraction REAL, bf16_subnormal_fraction REAL,
  bf16_overflow_fraction REAL, fp8_e4m3_underflow_fraction REAL, fp8_e4m3_subnormal_fraction REAL,
  fp8_e4m3_overflow_fraction REAL, fp8_e5m2_underflow_fraction REAL,
  fp8_e5m2_subnormal_fraction REAL, fp8_e5m2_overflow_fraction REAL, PRIMARY KEY(step, parameter));
CREATE TABLE activations(
  step INTEGER, ord INTEGER, module TEXT, dtype TEXT, numel INTEGER, nonfinite_fraction REAL,
  max_abs REAL, fp16_underflow_fraction REAL, fp16_subnormal_fraction REAL,
  fp16_overflow_fraction REAL, bf16_underflow_fraction REAL, bf16_subnormal_fraction REAL,
  bf16_overflow_fraction REAL, fp8_e4m3_underflow_fraction REAL, fp8_e4m3_subnormal_fraction REAL,
  fp8_e4m3_overflow_fraction REAL, fp8_e5m2_underflow_fraction REAL,
  fp8_e5m2_subnormal_fraction REAL, fp8_e5m2_overflow_fraction REAL, PRIMARY KEY(step, module));
CREATE TABLE op_stats(
  id INTEGER PRIMARY KEY, name TEXT, module TEXT, phase TEXT, category TEXT,
  input_dtypes TEXT, input_shapes TEXT, output_dtypes TEXT, calls INTEGER,
  cpu_time_ns INTEGER, gpu_time_ns INTEGER, kernels INTEGER, tensor_core_kernels INTEGER,
  tensor_core_gpu_time_ns INTEGER, cast_calls INTEGER, cast_bytes INTEGER,
  cast_cpu_time_ns INTEGER, cast_gpu_time_ns INTEGER, tensor_core_eligible INTEGER,
  tensor_core_note TEXT, top_level INTEGER, compiled INTEGER NOT NULL DEFAULT 0, step_cpu_ns TEXT,
  step_gpu_ns TEXT);
CREATE TABLE optimizer_steps(
  step INTEGER, optimizer INTEGER, name TEXT, stepped INTEGER, found_inf INTEGER,
  skipped INTEGER, unscale_calls INTEGER, lr REAL, loss_scale REAL, loss_scale_after REAL,
  PRIMARY KEY(step, optimizer));
CREATE TABLE readiness(
  step INTEGER, layer TEXT, tensor TEXT, format TEXT, elements INTEGER, nonzero INTEGER,
  flushed INTEGER, saturated INTEGER, signal REAL, noise REAL, scale_log2_min REAL,
  scale_log2_max REAL, PRIMARY KEY(step, layer, tensor, format));
CREATE TABLE scheduler_steps(
  call INTEGER PRIMARY KEY, scheduler INTEGER, name TEXT, optimizer INTEGER, step INTEGER,
  after_skipped INTEGER, lr REAL);
CREATE TABLE backward_checks(
  step INTEGER PRIMARY KEY, skipped INTEGER, gradients INTEGER, nonfinite INTEGER, module TEXT,
  side TEXT, position INTEGER, dtype TEXT);
CREATE TABLE compiled_kernels(
  graph INTEGER, phase TEXT, kind TEXT, kernel TEXT, ordinal INTEGER, ops TEXT, calls INTEGER,
  cpu_time_ns INTEGER, kernels INTEGER, tensor_core_kernels INTEGER, gpu_time_ns INTEGER,
  first_call_gpu_ns INTEGER);
)sql";

namespace {

void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  // Dtype names never need escaping: one append for the whole name.
  if (std::none_of(s.begin(), s.end(), [](unsigned char c) { return c == '"' || c == '\\' || c < 0x20; })) {
    out += s;
    out += '"';
    return;
  }
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

void encode_strings_into(std::string& out, const std::vector<std::string>& values) {
  out.assign(1, '[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, values[i]);
  }
  out += ']';
}

void encode_shapes_into(std::string& out, const std::vector<Shape>& shapes) {
  out.assign(1, '[');
  char digits[24];
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ',';
    out += '[';
    for (size_t j = 0; j < shapes[i].size(); ++j) {
      if (j) out += ',';
      out.append(digits, std::to_chars(digits, digits + sizeof digits, shapes[i][j]).ptr);
    }
    out += ']';
  }
  out += ']';
}

std::string encode_strings(const std::vector<std::string>& values) {
  std::string out;
  encode_strings_into(out, values);
  return out;
}

std::string encode_shapes(const std::vector<Shape>& shapes) {
  std::string out;
  encode_shapes_into(out, shapes);
  return out;
}

std::vector<std::string> decode_strings(std::string_view text) {
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& v : j) out.push_back(v.is_string() ? v.get<std::string>() : std::string());
  return out;
}

std::vector<Shape> decode_shapes(std::string_view text) {
  std::vector<Shape> out;
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    Shape shape;
    if (s.is_array())
      for (const auto& d : s)
        if (d.is_number_integer()) shape.push_back(d.get<int64_t>());
    out.push_back(std::move(shape));
  }
  return out;
}

std::string encode_histogram(const std::array<int64_t, kGradBins>& h) {
  std::string out(static_cast<size_t>(kGradBins) * 8, '\0');
  for (int i = 0; i < kGradBins; ++i) {
    auto v = static_cast<uint64_t>(h[static_cast<size_t>(i)]);
    for (int b = 0; b < 8; ++b)
      out[static_cast<size_t>(i) * 8 + static_cast<size_t>(b)] = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return out;
}

std::array<int64_t, kGradBins> decode_histogram(std::string_view blob) {
  std::array<int64_t, kGradBins> h{};
  size_t n = std::min<size_t>(kGradBins, blob.size() / 8);
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b)
      v = (v << 8) | static_cast<unsigned char>(blob[i * 8 + static_cast<size_t>(b)]);
    h[i] = static_cast<int64_t>(v);
  }
  return h;
}

}  // namespace ampscope::profiler::store_detail
