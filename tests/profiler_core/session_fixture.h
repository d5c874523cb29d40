#pragma once
// A small crafted session shared by the store and exporter tests: 4 steps (step 2
// skipped on inf with the scale halved), an autocast linear per step with a cast
// and a GEMM under it, a backward op on another thread, GEMM / elementwise kernels
// and a memcpy, gradient samples at steps 2 and 4, validation after steps 2 and 4
// (eval loss 1.25, 0.75), and a 4-row op table (three top-level rows, one nested cast row).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <unordered_map>

#include "profiler/analysis/kernel_aggregator.h"
#include "profiler/records.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/session_writer.h"

namespace ampscope::test {

using namespace ampscope::profiler;

inline constexpr int64_t kT0 = 1'000'000'000'000;  // ns; steps are 10 ms apart
inline constexpr int64_t kStepNs = 10'000'000;
inline const std::string kOddKernel = R"(void at::native::elementwise_kernel<128, 4, "add,mul">)";

struct Fixture {
  SessionMeta meta;
  std::vector<StepRecord> steps;
  std::vector<OpRecord> ops;
  std::vector<KernelRecord> kernels;
  std::vector<GradientSample> gradients;
  std::vector<OpStats> op_stats;
};

inline Fixture make_fixture() {
  Fixture f;
  f.meta = {"0.1.0",
            "2026-01-02T03:04:05Z",
            R"({"model":"mlp","precision":"fp16"})",
            "cuda:0",
            "NVIDIA H100 80GB HBM3",
            "MLP 2x64",
            "synthetic",
            "fp16",
            12345,
            true,
            "2.11.0",
            "cupti",
            "",  // a GPU session: no CPU matmul paths
            "",
            ""};
  const double scales[] = {65536, 32768, 32768, 32768};
  uint64_t next_id = 1, corr = 100;
  for (int64_t s = 1; s <= 4; ++s) {
    const int64_t t = kT0 + (s - 1) * kStepNs;
    StepRecord st;
    st.step = s;
    st.loss = 2.0 / static_cast<double>(s);
    st.lr = 0.01;
    st.loss_scale = scales[s - 1];
    st.found_inf = st.skipped = (s == 2);
    st.growth_tracker = s == 2 ? 0 : s;
    st.grad_norm = 1.5;
    st.step_time_ms = 9.0;
    st.samples_per_second = 1000;
    st.mem_allocated_bytes = 1 << 20;
    st.mem_reserved_bytes = 2 << 20;
    st.mem_peak_bytes = 3 << 20;
    st.end_ns = t + 9'500'000;
    if (s % 2 == 0) st.eval_loss = s == 2 ? 1.25 : 0.75;  // --eval-every 2
    f.steps.push_back(st);

    OpRecord linear;
    linear.id = next_id++;
    linear.step = s;
    linear.name = "aten::linear";
    linear.phase = Phase::kForward;
    linear.category = OpCategory::kDemoted;
    linear.module = "fc1";
    linear.sequence_nr = 10 * s;
    linear.thread_id = 1;
    linear.start_ns = t + 1'000'000;
    linear.end_ns = t + 3'000'000;
    linear.input_dtypes = {"float32", "float32", "float32"};
    linear.input_shapes = {{32, 64}, {64, 64}, {64}};
    linear.output_dtypes = {"float16"};
    OpRecord cast = linear;
    cast.id = next_id++;
    cast.parent_id = linear.id;
    cast.name = "aten::_to_copy";
    cast.category = OpCategory::kAutocastCast;
    cast.sequence_nr = -1;
    cast.depth = 1;
    cast.start_ns = t + 1'100'000;
    cast.end_ns = t + 1'400'000;
    cast.input_dtypes = {"float32", ""};
    cast.input_shapes = {{64, 64}, {}};
    cast.cast_bytes = 64 * 64 * 2;
    OpRecord addmm = linear;
    addmm.id = next_id++;
    addmm.parent_id = linear.id;
    addmm.name = "aten::addmm";
    addmm.sequence_nr = 10 * s + 1;
    addmm.depth = 1;
    addmm.start_ns = t + 1'500'000;
    addmm.end_ns = t + 2'900'000;
    addmm.input_dtypes = {"float16", "float16", "float16", "", ""};
    addmm.input_shapes = {{64}, {32, 64}, {64, 64}, {}, {}};
    OpRecord backward = addmm;
    backward.id = next_id++;
    backward.parent_id = 0;
    backward.name = "AddmmBackward0";
    backward.phase = Phase::kBackward;
    backward.category = OpCategory::kUnchanged;
    backward.forward_op_id = addmm.id;
    backward.depth = 0;
    backward.thread_id = 2;
    backward.start_ns = t + 5'000'000;
    backward.end_ns = t + 6'000'000;
    backward.input_dtypes = {"float16"};
    backward.input_shapes = {{32, 64}};
    for (const auto& op : {linear, cast, addmm, backward}) f.ops.push_back(op);

    KernelRecord copy;
    copy.kind = ActivityKind::kMemcpy;
    copy.correlation_id = corr++;
    copy.op_id = cast.id;
    copy.step = s;
    copy.name = "Memcpy DtoD (Device -> Device)";
    copy.stream = 7;
    copy.start_ns = t + 1'300'000;
    copy.end_ns = t + 1'350'000;
    copy.bytes = 8192;
    KernelRecord gemm;
    gemm.correlation_id = corr++;
    gemm.op_id = addmm.id;
    gemm.step = s;
    gemm.name = "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64";
    gemm.stream = 7;
    gemm.start_ns = t + 2'000'000;
    gemm.end_ns = t + 2'000'000 + 100'000 * s;  // 100..400 us
    gemm.grid = {4, 2, 1};
    gemm.block = {128, 1, 1};
    gemm.registers_per_thread = 168;
    gemm.shared_memory_bytes = 65536;
    gemm.tensor_core_by_name = true;
    KernelRecord elementwise = gemm;
    elementwise.correlation_id = corr++;
    elementwise.op_id = backward.id;
    elementwise.name = kOddKernel;
    elementwise.start_ns = t + 5'500'000;
    elementwise.end_ns = t + 5'520'000;
    elementwise.tensor_core_by_name = false;
    for (const auto& k : {copy, gemm, elementwise}) f.kernels.push_back(k);

    if (s % 2 == 0) {
      for (const char* p : {"fc1.weight", "fc1.bias"}) {
        GradientSample g;
        g.step = s;
        g.parameter = p;
        g.loss_scale = st.loss_scale;
        g.numel = p == std::string("fc1.weight") ? 4096 : 64;
        g.log2_histogram[40] = 10;
        g.log2_histogram[kGradBins - 1] = 3;
        g.log2_histogram[0] = int64_t{1} << 40;
        g.zero_fraction = 0.01;
        g.fp16_underflow_fraction = p == std::string("fc1.weight") ? 0.25 : 0.5;
        g.fp16_subnormal_fraction = 0.125;
        g.bf16 = {0.0, 0.001, 0.0};
        g.fp8_e4m3 = {0.5, 0.25, 0.0625};
        g.fp8_e5m2 = {0.375, 0.125, 0.03125};
        g.min_abs_nonzero = 1e-30;
        g.max_abs = 3.5;
        g.norm = 7.25;
        f.gradients.push_back(g);
      }
    }
  }
  OpStats a;
  a.name = "aten::linear";
  a.module = "fc1";
  a.phase = Phase::kForward;
  a.category = OpCategory::kDemoted;
  a.input_dtypes = {"float32", "float32", "float32"};
  a.input_shapes = {{32, 64}, {64, 64}, {64}};
  a.output_dtypes = {"float16"};
  a.calls = 4;
  a.cpu_time_ns = 8'000'000;
  a.gpu_time_ns = 1'200'000;
  a.kernels = 8;
  a.tensor_core_kernels = 4;
  a.tensor_core_gpu_time_ns = 1'000'000;
  a.cast_calls = 4;
  a.cast_bytes = 4 * 8192;
  a.tensor_core_eligible = true;
  a.top_level = true;
  OpStats b = a;
  b.name = R"(my_op "fused, fast")";
  b.category = OpCategory::kUnchanged;
  b.tensor_core_eligible = false;
  b.tensor_core_note = "fp32 inputs, \"no\" autocast";
  OpStats c = a;
  c.name = "AddmmBackward0";
  c.phase = Phase::kBackward;
  a.cast_cpu_time_ns = 4 * 300'000;  // the casts under linear: the cast tax
  a.cast_gpu_time_ns = 4 * 50'000;
  OpStats d;  // the casts themselves, nested: left out of category totals
  d.name = "aten::_to_copy";
  d.module = "fc1";
  d.phase = Phase::kForward;
  d.category = OpCategory::kAutocastCast;
  d.top_level = false;
  d.input_dtypes = {"float32", ""};
  d.input_shapes = {{64, 64}, {}};
  d.output_dtypes = {"float16"};
  d.calls = 4;
  d.cpu_time_ns = 4 * 300'000;
  d.gpu_time_ns = 4 * 50'000;
  d.kernels = 4;
  f.op_stats = {a, b, c, d};
  return f;
}

// The kernel table as the profiler stores it: the one KernelAggregator, fed with
// each kernel and the name of the op that launched it.
inline void write_kernel_table(SessionWriter& w, const std::vector<OpRecord>& ops,
                               const std::vector<KernelRecord>& kernels) {
  std::unordered_map<uint64_t, std::string> op_names;
  for (const auto& op : ops) op_names[op.id] = op.name;
  KernelAggregator table;
  for (const auto& k : kernels) {
    const auto it = op_names.find(k.op_id);
    table.add(k, it == op_names.end() ? std::string() : it->second);
  }
  auto launchers = table.launchers();
  w.replace_kernel_stats(table.summaries(), SessionWriter::KernelLaunchers(launchers.begin(), launchers.end()));
}

inline void write_fixture(SessionWriter& w, const Fixture& f) {
  for (const auto& s : f.steps) w.append_step(s);
  w.append_ops(std::vector<OpRecord>(f.ops));
  w.append_kernels(std::vector<KernelRecord>(f.kernels));
  write_kernel_table(w, f.ops, f.kernels);
  w.append_gradients(std::vector<GradientSample>(f.gradients));
  w.replace_op_stats(std::vector<OpStats>(f.op_stats));
}

inline void write_fixture_file(const std::string& path, const Fixture& f) {
  auto w = SessionWriter::create(path, f.meta);
  write_fixture(*w, f);
  w->close();
  ASSERT_EQ(w->dropped_batches(), 0u);
  ASSERT_EQ(w->last_error(), "");
}

}  // namespace ampscope::test
