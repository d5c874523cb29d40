#pragma once
// Shared by the report tests: comparisons built in memory (a GPU one where bf16 wins
// 2.4x, a CPU one where fp16 is 15x slower), and checks that a report is well-formed
// and self-contained (a C++ tag-balance walk, and tests/python/check_html_report.py).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/records.h"
#include "tests/support/test_support.h"

namespace ampscope::test {

using namespace ampscope::profiler;

inline OpStats op_row(const std::string& name, OpCategory category, int64_t time_ns, bool gpu,
                      std::vector<Shape> shapes = {{32, 64}, {64, 64}}) {
  OpStats r;
  r.name = name;
  r.module = "blocks.0.mlp";
  r.phase = Phase::kForward;
  r.category = category;
  r.top_level = true;
  r.input_shapes = std::move(shapes);
  r.calls = 10;
  r.cpu_time_ns = gpu ? time_ns / 4 : time_ns;
  r.gpu_time_ns = gpu ? time_ns : 0;
  return r;
}

// steps_ms[r]: the step time of every step of repeat r; loss falls from 3 to `final_loss`.
inline VariantRun variant_run(const std::string& variant, const std::string& precision,
                              const std::vector<double>& repeat_ms, double final_loss,
                              int64_t steps = 20) {
  VariantRun run;
  run.variant = variant;
  run.precision = precision;
  run.scaler = precision == "fp16";
  for (double ms : repeat_ms) {
    std::vector<StepRecord> rep;
    for (int64_t s = 1; s <= steps; ++s) {
      StepRecord st;
      st.step = s;
      st.loss = 3.0 + (final_loss - 3.0) * static_cast<double>(s) / static_cast<double>(steps);
      st.step_time_ms = s <= 2 ? ms * 5 : ms;  // slow warm-up steps, excluded from timing
      st.loss_scale = run.scaler ? 65536 : 1;
      st.mem_peak_bytes = precision == "fp32" ? (2LL << 30) : (1LL << 30);
      rep.push_back(st);
    }
    run.repeats.push_back(std::move(rep));
  }
  run.profiled_steps = 10;
  return run;
}

// fp32 10 ms, bf16 about 4.2 ms (2.4x; per-repeat 1.9x..2.6x), fp16 with one skipped step, on an
// H100.
inline Comparison gpu_comparison() {
  Comparison c;
  c.meta.model = "GPT 4 layers, width 256";
  c.meta.data = "synthetic text";
  c.meta.device = "cuda:0";
  c.meta.device_name = "NVIDIA H100 80GB HBM3";
  c.meta.torch_version = "2.11.0";
  c.meta.gpu_tracing = "cupti";
  c.meta.created_utc = "2026-01-02T03:04:05Z";
  c.warmup_steps = 2;
  c.planned_repeats = 3;
  c.effective_batch = 64;
  auto fp32 = variant_run("fp32", "fp32", {10.0, 10.0, 10.0}, 2.30);
  auto bf16 = variant_run("bf16", "bf16", {10.0 / 1.9, 10.0 / 2.4, 10.0 / 2.6}, 2.31);
  auto fp16 = variant_run("fp16", "fp16", {10.0 / 2.2, 10.0 / 2.3, 10.0 / 2.5}, 2.305);
  fp16.repeats[1][5].skipped = true;
  fp16.repeats[1][5].found_inf = true;
  fp32.op_stats = {
      op_row("aten::linear", OpCategory::kUnchanged, 60'000'000, true),
      op_row("aten::softmax", OpCategory::kUnchanged, 20'000'000, true, {{32, 8, 64, 64}}),
      op_row("aten::layer_norm", OpCategory::kUnchanged, 20'000'000, true, {{32, 64, 256}})};
  for (auto* run : {&bf16, &fp16}) {
    run->op_stats = {
        op_row("aten::linear", OpCategory::kDemoted, 20'000'000, true),
        op_row("aten::softmax", OpCategory::kKeptFp32, 12'000'000, true, {{32, 8, 64, 64}}),
        op_row("aten::layer_norm", OpCategory::kKeptFp32, 10'000'000, true, {{32, 64, 256}})};
    run->op_stats[0].cast_gpu_time_ns = 2'000'000;
    run->op_stats[0].cast_calls = 10;
  }
  c.variants = {fp32, bf16, fp16};
  return c;
}

// fp16 on a CPU: 15x slower, all of it in its matrix multiplies.
inline Comparison cpu_comparison() {
  Comparison c = gpu_comparison();
  c.meta.device = "cpu";
  c.meta.device_name = "AMD EPYC 9654";
  c.meta.gpu_tracing = "no GPU";
  c.meta.cpu_isa = "AVX2";
  c.meta.cpu_bf16_matmul = kCpuMatmulFallback;
  c.meta.cpu_fp16_matmul = kCpuMatmulFallback;
  c.variants.erase(c.variants.begin() + 1);  // fp32, fp16
  auto& fp16 = c.variants[1];
  for (auto& rep : fp16.repeats)
    for (auto& st : rep) st.step_time_ms *= 2.3 * 15;  // 10/2.3 ms * 2.3 * 15 = 150 ms
  for (auto& r : c.variants[0].op_stats) r.gpu_time_ns = 0, r.cpu_time_ns *= 4;
  for (auto& r : fp16.op_stats) r.gpu_time_ns = 0, r.cpu_time_ns *= 4;
  fp16.op_stats[0].cpu_time_ns = 60'000'000LL * 40;  // linear: 40x the fp32 time
  return c;
}

// Problems with the element structure: every element closed, in order.
inline std::string tag_balance_problems(const std::string& html) {
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    if (html.compare(i, 2, "<!") == 0) {
      i = html.find('>', i);
      if (i == std::string::npos) return "unterminated declaration";
      continue;
    }
    const size_t end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    const bool closing = html[i + 1] == '/';
    const size_t name_start = i + (closing ? 2 : 1);
    size_t name_end = name_start;
    while (name_end < end &&
           (std::isalnum(static_cast<unsigned char>(html[name_end])) || html[name_end] == '-'))
      ++name_end;
    const std::string name = html.substr(name_start, name_end - name_start);
    if (name.empty()) return "a '<' that starts no tag at " + std::to_string(i);
    if (closing) {
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> closes <" +
               (stack.empty() ? std::string("nothing") : stack.back()) + ">";
      stack.pop_back();
    } else if (html[end - 1] != '/') {
      stack.push_back(name);
    }
    i = end + 1;
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

inline void expect_self_contained(const std::string& html) {
  for (const char* bad :
       {"http://", "https://", "//cdn", "@import", "url(", "src=", "<script", "<link", "<img"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  EXPECT_EQ(tag_balance_problems(html), "");
}

// tests/python/check_html_report.py on the file: html5lib (if installed), html.parser balance, XML,
// no URL.
inline void expect_python_accepts(const std::string& path) {
  std::string python;
  if (auto p = python_with_torch()) {
    python = *p;
  } else if (run_command("command -v python3 >/dev/null 2>&1") == 0) {
    python = "python3";
  } else {
    GTEST_SKIP() << "no Python to run check_html_report.py";
  }
  std::string out;
  const int rc =
      run_command(python + " " + test_source_path("python/check_html_report.py").string() + " '" +
                      path + "' 2>&1",
                  &out);
  EXPECT_EQ(rc, 0) << out;
}

}  // namespace ampscope::test
