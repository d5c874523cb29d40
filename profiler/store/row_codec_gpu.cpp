// row_codec.h's ops, kernels and kernel table rows.
#include "profiler/store/row_codec.h"

#include "profiler/store/row_codec_cursor.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler::store_detail {

void bind_op_signature(Stmt& s, int first, int64_t id, const OpRecord& op, EncodedOpSignature& keep) {
  encode_strings_into(keep.input_dtypes, op.input_dtypes);
  encode_shapes_into(keep.input_shapes, op.input_shapes);
  encode_strings_into(keep.output_dtypes, op.output_dtypes);
  BindCursor b(s, first);
  b.value(id).text(op.name).text(to_string(op.phase)).text(to_string(op.category)).text(op.module);
  b.text(keep.input_dtypes).text(keep.input_shapes).text(keep.output_dtypes);
  b.done(kOpSignatureColumns);
}

void bind_op_call(Stmt& s, int first, const OpRecord& op, int64_t signature_id) {
  BindCursor b(s, first);
  b.value(op.id).value(op.parent_id).value(op.step).value(signature_id).value(op.sequence_nr);
  b.value(op.forward_op_id).value(static_cast<int64_t>(op.depth)).value(op.thread_id).value(op.start_ns);
  b.value(op.end_ns).value(op.cast_bytes).value(static_cast<int64_t>(op.autograd_node));
  b.done(kOpCallColumns);
}

OpRecord read_op_signature(const Stmt& s, int first) {
  ReadCursor c(s, first);
  OpRecord op;
  c.skip();  // id: the caller's key
  op.name = c.text();
  op.phase = parse_phase(c.text()).value_or(Phase::kOther);
  op.category = parse_category(c.text()).value_or(OpCategory::kUnchanged);
  op.module = c.text();
  op.input_dtypes = decode_strings(c.text());
  op.input_shapes = decode_shapes(c.text());
  op.output_dtypes = decode_strings(c.text());
  c.done(kOpSignatureColumns);
  return op;
}

int64_t read_op_call(const Stmt& s, int first, OpRecord& op) {
  ReadCursor c(s, first);
  op.id = c.u64();
  op.parent_id = c.u64();
  op.step = c.i64();
  const int64_t signature_id = c.i64();
  op.sequence_nr = c.i64();
  op.forward_op_id = c.u64();
  op.depth = static_cast<uint32_t>(c.i64());
  op.thread_id = c.u64();
  op.start_ns = c.i64();
  op.end_ns = c.i64();
  op.cast_bytes = c.i64();
  op.autograd_node = c.i64() != 0;
  c.done(kOpCallColumns);
  return signature_id;
}

OpRecord read_op(const Stmt& s, int first) {
  ReadCursor c(s, first);
  OpRecord op;
  op.id = c.u64();
  op.parent_id = c.u64();
  op.step = c.i64();
  op.name = c.text();
  op.phase = parse_phase(c.text()).value_or(Phase::kOther);
  op.category = parse_category(c.text()).value_or(OpCategory::kUnchanged);
  op.module = c.text();
  op.sequence_nr = c.i64();
  op.forward_op_id = c.u64();
  op.depth = static_cast<uint32_t>(c.i64());
  op.thread_id = c.u64();
  op.start_ns = c.i64();
  op.end_ns = c.i64();
  op.input_dtypes = decode_strings(c.text());
  op.input_shapes = decode_shapes(c.text());
  op.output_dtypes = decode_strings(c.text());
  op.cast_bytes = c.i64();
  op.autograd_node = c.i64() != 0;
  c.done(kOpColumns);
  return op;
}

void bind_kernel(Stmt& s, int first, const KernelRecord& k, int64_t name_id) {
  BindCursor b(s, first);
  b.text(to_string(k.kind)).value(k.correlation_id).value(k.op_id).value(k.step).value(name_id);
  b.value(k.device).value(k.stream).value(k.start_ns).value(k.end_ns);
  for (const int32_t g : k.grid) b.value(g);
  for (const int32_t x : k.block) b.value(x);
  b.value(k.registers_per_thread).value(k.shared_memory_bytes).value(k.bytes).value(k.tensor_core_by_name);
  b.null();  // tensor_core_measured: no hardware counters are read
  b.done(kKernelColumns);
}

std::string kernel_select_columns() {
  std::string columns = column_list(kKernelColumns, "k");
  columns.replace(columns.find("k.name_id"), 9, "n.name");
  return columns;
}

KernelRecord read_kernel(const Stmt& s, int first) {
  ReadCursor c(s, first);
  KernelRecord k;
  k.kind = parse_activity_kind(c.text()).value_or(ActivityKind::kKernel);
  k.correlation_id = c.u64();
  k.op_id = c.u64();
  k.step = c.i64();
  k.name = c.text();  // n.name, in name_id's place
  k.device = c.i32();
  k.stream = c.i32();
  k.start_ns = c.i64();
  k.end_ns = c.i64();
  for (int32_t& g : k.grid) g = c.i32();
  for (int32_t& x : k.block) x = c.i32();
  k.registers_per_thread = c.i32();
  k.shared_memory_bytes = c.i32();
  k.bytes = c.i64();
  k.tensor_core_by_name = c.boolean();
  c.skip();  // tensor_core_measured
  c.done(kKernelColumns);
  return k;
}

void bind_kernel_stat(Stmt& s, int first, const KernelSummary& k, int64_t name_id) {
  BindCursor b(s, first);
  b.value(name_id).text(to_string(k.kind)).value(k.calls).value(k.total_ns).value(k.min_ns).value(k.max_ns);
  b.value(k.tensor_core_calls);
  b.value(int64_t{0}).value(int64_t{0});  // measured_calls, measured_tensor_core_calls: reserved
  for (const int32_t g : k.grid) b.value(g);
  for (const int32_t x : k.block) b.value(x);
  b.done(kKernelStatColumns);
}

KernelStatRow read_kernel_stat(const Stmt& s, int first) {
  ReadCursor c(s, first);
  KernelStatRow row;
  KernelSummary& k = row.summary;
  row.name_id = c.i64();
  k.kind = parse_activity_kind(c.text()).value_or(ActivityKind::kKernel);
  k.calls = c.i64();
  k.total_ns = c.i64();
  k.mean_ns = k.calls ? k.total_ns / k.calls : 0;
  k.min_ns = c.i64();
  k.max_ns = c.i64();
  k.tensor_core_calls = c.i64();
  k.tensor_core = k.tensor_core_calls > 0;
  c.skip();  // measured_calls
  c.skip();  // measured_tensor_core_calls
  for (int32_t& g : k.grid) g = c.i32();
  for (int32_t& x : k.block) x = c.i32();
  c.done(kKernelStatColumns);
  return row;
}

void bind_kernel_op(Stmt& s, int first, int64_t name_id, std::string_view op_name, int64_t calls) {
  BindCursor b(s, first);
  b.value(name_id).text(op_name).value(calls);
  b.done(kKernelOpColumns);
}

}  // namespace ampscope::profiler::store_detail
