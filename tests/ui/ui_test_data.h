#pragma once
// Realistic profiler rows for the UI tests: a bf16 autocast MLP/GPT step as the
// profiler would summarize it (demoted GEMMs, fp32-kept reductions, casts).
#include <cmath>
#include <memory>

#include "profiler/analysis/profile_snapshot.h"

namespace ampscope::ui::testing {

inline profiler::OpStats op(std::string name, std::string module, profiler::Phase phase,
                            profiler::OpCategory category, std::vector<std::string> in,
                            std::vector<std::string> out, int64_t calls, int64_t cpu_ns,
                            int64_t gpu_ns = 0) {
  profiler::OpStats s;
  s.name = std::move(name);
  s.module = std::move(module);
  s.phase = phase;
  s.category = category;
  s.input_dtypes = std::move(in);
  s.output_dtypes = std::move(out);
  s.input_shapes = {{64, 256}, {256, 256}};
  s.calls = calls;
  s.cpu_time_ns = cpu_ns;
  s.gpu_time_ns = gpu_ns;
  return s;
}

inline std::vector<profiler::OpStats> realisticOps() {
  using profiler::OpCategory;
  using profiler::Phase;
  std::vector<profiler::OpStats> rows = {
      op("aten::linear", "layers.0", Phase::kForward, OpCategory::kDemoted,
         {"float32", "float32", "float32"}, {"bfloat16"}, 40, 9'000'000, 4'000'000),
      op("aten::linear", "layers.1", Phase::kForward, OpCategory::kDemoted,
         {"float32", "float32", "float32"}, {"bfloat16"}, 40, 10'000'000, 5'000'000),
      op("aten::linear", "blocks.0.attn.qkv", Phase::kForward, OpCategory::kDemoted,
         {"float32", "float32"}, {"bfloat16"}, 40, 900'000, 300'000),
      op("aten::softmax", "blocks.0.attn", Phase::kForward, OpCategory::kKeptFp32, {"bfloat16", ""},
         {"float32"}, 40, 2'500'000, 1'000'000),
      op("aten::layer_norm", "blocks.0.ln1", Phase::kForward, OpCategory::kKeptFp32,
         {"bfloat16", "float32", "float32"}, {"float32"}, 40, 1'200'000, 600'000),
      op("aten::add", "blocks.0", Phase::kForward, OpCategory::kPromoted, {"bfloat16", "float32"},
         {"float32"}, 80, 700'000, 200'000),
      op("aten::relu", "layers.0", Phase::kForward, OpCategory::kUnchanged, {"bfloat16"},
         {"bfloat16"}, 40, 300'000, 100'000),
      op("aten::_to_copy", "layers.0", Phase::kForward, OpCategory::kAutocastCast, {"float32"},
         {"bfloat16"}, 120, 1'500'000, 700'000),
      op("aten::to", "", Phase::kOther, OpCategory::kExplicitCast, {"float32"}, {"float16"}, 1,
         50'000, 10'000),
      op("aten::mm", "layers.0", Phase::kBackward, OpCategory::kUnchanged, {"bfloat16", "bfloat16"},
         {"bfloat16"}, 80, 12'000'000, 8'000'000),
      op("aten::_fused_adamw_", "", Phase::kOptimizer, OpCategory::kUnchanged, {"float32"},
         {"float32"}, 40, 3'000'000, 1'500'000),
  };
  rows[0].kernels = 40;
  rows[0].tensor_core_kernels = 40;
  rows[0].tensor_core_gpu_time_ns = 3'600'000;
  rows[0].tensor_core_eligible = true;
  rows[1].cast_calls = 80;
  rows[1].cast_bytes = 80 * 256 * 256 * 2;
  rows[1].cast_cpu_time_ns = 400'000;
  rows[1].cast_gpu_time_ns = 250'000;
  return rows;
}

inline std::vector<profiler::KernelSummary> realisticKernels() {
  auto k = [](std::string name, int64_t calls, int64_t total, bool tc, std::string op) {
    profiler::KernelSummary s;
    s.name = std::move(name);
    s.calls = calls;
    s.total_ns = total;
    s.max_ns = total / std::max<int64_t>(1, calls) * 2;
    s.tensor_core = tc;
    if (!op.empty()) s.launching_ops = {std::move(op)};
    s.grid = {128, 2, 1};
    s.block = {256, 1, 1};
    return s;
  };
  return {k("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", 120,
            9'000'000, true, "aten::linear"),
          k("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", 80, 8'000'000, true,
            "aten::mm"),
          k("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
            "namespace)::softmax>(int)",
            40, 1'000'000, false, "aten::softmax"),
          k("void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>", 120, 700'000,
            false, "aten::_to_copy"),
          k("void at::native::vectorized_layer_norm_kernel<float, float>", 40, 600'000, false,
            "aten::layer_norm"),
          k("Memcpy HtoD", 2, 90'000, false, "")};
}

inline profiler::GradientSample gradientSample(std::string parameter, int center_log2, int spread,
                                               double loss_scale, int64_t step) {
  profiler::GradientSample g;
  g.step = step;
  g.parameter = std::move(parameter);
  g.loss_scale = loss_scale;
  for (int d = -spread; d <= spread; ++d) {
    const int bin = center_log2 + d - profiler::kGradLog2Min;
    if (bin >= 0 && bin < profiler::kGradBins) g.log2_histogram[bin] = 1000 / (1 + d * d);
  }
  for (int64_t c : g.log2_histogram) g.numel += c;
  g.fp16_underflow_fraction = 0.031;
  g.fp16_subnormal_fraction = 0.12;
  g.fp8_e4m3 = {0.5, 0.25, 0.0};
  g.fp8_e5m2 = {0.07, 0.125, 0.0};
  g.max_abs = std::ldexp(1.0, center_log2 + spread);
  return g;
}

inline profiler::ProfileSnapshotPtr realisticSnapshot(int64_t step) {
  auto snapshot = std::make_shared<profiler::ProfileSnapshot>();
  snapshot->step = step;
  snapshot->op_stats = realisticOps();
  snapshot->top_kernels = realisticKernels();
  snapshot->latest_gradients = {gradientSample("layers.0.weight", -20, 6, 65536.0, step),
                         gradientSample("layers.0.bias", -16, 4, 65536.0, step),
                         gradientSample("layers.1.weight", -26, 8, 65536.0, step),
                         gradientSample("head.weight", -12, 5, 65536.0, step)};
  snapshot->gpu_tracing = "cupti";
  return snapshot;
}

}  // namespace ampscope::ui::testing
