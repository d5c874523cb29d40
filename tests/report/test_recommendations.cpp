// Each recommendation rule fires on a crafted session that shows its problem and
// stays quiet on one that does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/report/findings.h"
#include "profiler/report/recommendations.h"
#include "profiler/report/report_data.h"

#include "engine/scope_names.h"

namespace ampscope::profiler {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A copy: recommend() returns a temporary.
std::optional<Recommendation> find(const std::vector<Recommendation>& recs, const std::string& id) {
  for (const Recommendation& r : recs) {
    if (r.id == id) return r;
  }
  return std::nullopt;
}

bool evidence_mentions(const Recommendation& r, const std::string& part) {
  return std::any_of(r.evidence.begin(), r.evidence.end(),
                     [&](const std::string& line) { return contains(line, part); });
}

RecommendationInput session(const std::string& precision, const std::string& device = "cuda:0") {
  RecommendationInput in;
  in.meta.precision = precision;
  in.meta.device = device;
  in.meta.scaler_enabled = precision == "fp16";
  in.profiled_steps = 4;
  return in;
}

// An autocast linear as the profiler records it: the top-level aten::linear
// (fp32 in, lowered out) and the addmm it runs on the lowered operands.
void add_linear(RecommendationInput& in, const std::string& module, int64_t batch,
                int64_t in_features, int64_t out_features) {
  const bool lowered = in.meta.precision != "fp32";
  const std::string low = in.meta.precision == "bf16" ? "bfloat16" : "float16";
  const std::string op_dtype = lowered ? low : "float32";
  OpStats linear;
  linear.name = "aten::linear";
  linear.module = module;
  linear.phase = Phase::kForward;
  linear.category = lowered ? OpCategory::kDemoted : OpCategory::kUnchanged;
  linear.top_level = true;
  linear.input_dtypes = {"float32", "float32", "float32"};
  linear.input_shapes = {{batch, in_features}, {out_features, in_features}, {out_features}};
  linear.output_dtypes = {op_dtype};
  linear.calls = in.profiled_steps;
  linear.cpu_time_ns = 1'000'000;
  OpStats addmm = linear;
  addmm.name = "aten::addmm";
  addmm.top_level = false;
  addmm.category = OpCategory::kUnchanged;
  addmm.input_dtypes = {op_dtype, op_dtype, op_dtype, "", ""};
  addmm.input_shapes = {{out_features}, {batch, in_features}, {in_features, out_features}, {}, {}};
  addmm.cpu_time_ns = 800'000;
  in.op_stats.push_back(linear);
  in.op_stats.push_back(addmm);
}

OpStats top_level_op(const std::string& name, const std::string& module, OpCategory category,
                     int64_t time_ns) {
  OpStats r;
  r.name = name;
  r.module = module;
  r.phase = Phase::kForward;
  r.category = category;
  r.top_level = true;
  r.calls = 4;
  r.cpu_time_ns = time_ns;
  r.input_dtypes = {"float32"};
  r.output_dtypes = {"float32"};
  return r;
}

TEST(Recommendations, SeverityNames) {
  EXPECT_EQ(to_string(Severity::kInfo), "info");
  EXPECT_EQ(to_string(Severity::kWarning), "warning");
}

TEST(Recommendations, GemmDimsNotMultipleOf8ForHidden100) {
  auto in = session("fp16");
  add_linear(in, "fc1", 64, 784, 100);
  add_linear(in, "fc2", 64, 100, 10);
  const auto recs = recommend(in);
  const auto r = find(recs, "gemm_dims_not_multiple_of_8");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "2 of 2 fp16 GEMM/conv layers")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "100 -> 104")) << r->detail;
  ASSERT_EQ(r->evidence.size(),
            2u);  // fc1's N and fc2's K; fc2's N = 10 classes is too small to matter
  EXPECT_TRUE(contains(r->evidence[0], "fc1 aten::linear")) << r->evidence[0];
  EXPECT_TRUE(contains(r->evidence[0], "N (out_features) = 100")) << r->evidence[0];
  EXPECT_TRUE(contains(r->evidence[1], "fc2 aten::linear")) << r->evidence[1];
  EXPECT_TRUE(contains(r->evidence[1], "K (in_features) = 100")) << r->evidence[1];
}

TEST(Recommendations, GemmDimsPredictsTheGpuFromACpuRun) {
  auto in = session("bf16", "cpu");
  add_linear(in, "fc1", 64, 784, 100);
  const auto r = find(recommend(in), "gemm_dims_not_multiple_of_8");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kInfo);
  EXPECT_TRUE(contains(r->detail, "bf16"));
  EXPECT_TRUE(contains(r->detail, "CPU"));
}

TEST(Recommendations, GemmDimsQuietForHidden128AndForFp32) {
  auto aligned = session("fp16");
  add_linear(aligned, "fc1", 64, 784, 128);
  add_linear(aligned, "fc2", 64, 128, 10);
  EXPECT_FALSE(find(recommend(aligned), "gemm_dims_not_multiple_of_8"));

  auto fp32 = session("fp32");
  add_linear(fp32, "fc1", 64, 784, 100);
  add_linear(fp32, "fc2", 64, 100, 10);
  EXPECT_FALSE(find(recommend(fp32), "gemm_dims_not_multiple_of_8"));
}

TEST(Recommendations, GemmDimsNamesARaggedBatchAfterLayerSizes) {
  auto in = session("fp16");
  add_linear(in, "fc1", 100, 784, 120);
  const auto r = find(recommend(in), "gemm_dims_not_multiple_of_8");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->evidence.size(), 1u);
  EXPECT_TRUE(contains(r->evidence[0], "M (batch x positions) = 100")) << r->evidence[0];

  // Convolutions: channels, with an RGB input left alone.
  auto conv = session("fp16");
  OpStats c = top_level_op("aten::conv2d", "stem", OpCategory::kDemoted, 1'000'000);
  c.input_dtypes = {"float32", "float32", ""};
  c.input_shapes = {{8, 3, 32, 32}, {20, 3, 3, 3}, {}};
  c.output_dtypes = {"float16"};
  conv.op_stats.push_back(c);
  const auto rc = find(recommend(conv), "gemm_dims_not_multiple_of_8");
  ASSERT_TRUE(rc);
  ASSERT_EQ(rc->evidence.size(), 1u);
  EXPECT_TRUE(contains(rc->evidence[0], "C_out (output channels) = 20")) << rc->evidence[0];
}

TEST(Recommendations, EvidenceIsCappedAtEightLines) {
  auto in = session("fp16");
  for (int i = 0; i < 12; ++i) add_linear(in, "layers." + std::to_string(i), 64, 100, 100);
  const auto r = find(recommend(in), "gemm_dims_not_multiple_of_8");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->evidence.size(), 8u);
  EXPECT_TRUE(contains(r->detail, "12 of 12"));
}

OpStats gpu_gemm(const std::string& module, int64_t k, int64_t kernels, int64_t tc_kernels,
                 int64_t gpu_ns) {
  OpStats r;
  r.name = "aten::addmm";
  r.module = module;
  r.phase = Phase::kForward;
  r.top_level = true;
  r.input_dtypes = {"float16", "float16", "float16", "", ""};
  r.input_shapes = {{64}, {128, k}, {k, 64}, {}, {}};
  r.output_dtypes = {"float16"};
  r.calls = 4;
  r.cpu_time_ns = gpu_ns;
  r.gpu_time_ns = gpu_ns;
  r.kernels = kernels;
  r.tensor_core_kernels = tc_kernels;
  r.tensor_core_eligible = true;
  return r;
}

TEST(Recommendations, EligibleNotOnTensorCores) {
  auto in = session("fp16");
  in.op_stats.push_back(gpu_gemm("fc1", 100, 4, 0, 3'000'000));  // missed, K = 100
  in.op_stats.push_back(gpu_gemm("fc2", 128, 4, 4, 1'000'000));  // on Tensor Cores
  const auto r = find(recommend(in), "eligible_not_on_tensor_cores");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "75% of GPU op time")) << r->detail;
  ASSERT_EQ(r->evidence.size(), 1u);
  EXPECT_TRUE(contains(r->evidence[0], "fc1 aten::addmm")) << r->evidence[0];
  // Since cuBLAS 11 a ragged K still runs on Tensor Cores (slower): it is never
  // given as the reason a GEMM missed them (H100 counters, issue #10).
  EXPECT_FALSE(contains(r->evidence[0], "K=100")) << r->evidence[0];
  EXPECT_TRUE(contains(r->evidence[0], "no reason known from the shapes")) << r->evidence[0];

  // The recorded note wins over the shape-based guess.
  in.op_stats[0].tensor_core_note = "tiny problem (M*N*K < 2^15)";
  EXPECT_TRUE(
      evidence_mentions(*find(recommend(in), "eligible_not_on_tensor_cores"), "tiny problem"));
}

TEST(Recommendations, EligibleQuietWithoutGpuTraceOrWhenTensorCoresRan) {
  auto in = session("fp16");
  in.op_stats.push_back(gpu_gemm("fc1", 100, 0, 0, 0));  // CPU: no kernels
  in.op_stats.push_back(gpu_gemm("fc2", 128, 4, 2, 1'000'000));
  EXPECT_FALSE(find(recommend(in), "eligible_not_on_tensor_cores"));
}

TEST(Recommendations, HighCastTax) {
  auto in = session("bf16", "cpu");
  OpStats linear = top_level_op("aten::linear", "fc1", OpCategory::kDemoted, 10'000'000);
  linear.output_dtypes = {"bfloat16"};
  linear.cast_calls = 8;
  linear.cast_bytes = 8 * 200'000;
  linear.cast_cpu_time_ns = 1'000'000;
  in.op_stats.push_back(linear);
  in.op_stats.push_back(top_level_op("aten::relu", "act", OpCategory::kUnchanged, 5'000'000));
  const auto r = find(recommend(in), "high_cast_tax");
  ASSERT_TRUE(r);  // 1 ms of 15 ms: 6.7%
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->title, "6.7%")) << r->title;
  EXPECT_TRUE(contains(r->detail, "250 µs per step")) << r->detail;
  ASSERT_EQ(r->evidence.size(), 1u);
  EXPECT_TRUE(contains(r->evidence[0], "fc1 aten::linear")) << r->evidence[0];

  in.op_stats[0].cast_cpu_time_ns = 500'000;  // 3.3%
  EXPECT_FALSE(find(recommend(in), "high_cast_tax"));
}

TEST(Recommendations, CastTaxUsesGpuTimeWhenTraced) {
  auto in = session("fp16");
  OpStats linear = top_level_op("aten::linear", "fc1", OpCategory::kDemoted, 10'000'000);
  linear.output_dtypes = {"float16"};
  linear.cast_cpu_time_ns = 5'000'000;  // launch overhead on the CPU side...
  linear.gpu_time_ns = 2'000'000;
  linear.cast_gpu_time_ns = 20'000;  // ...but 1% of GPU time
  in.op_stats.push_back(linear);
  EXPECT_FALSE(find(recommend(in), "high_cast_tax"));
  in.op_stats[0].cast_gpu_time_ns = 400'000;  // 20%
  EXPECT_TRUE(find(recommend(in), "high_cast_tax"));
}

TEST(Recommendations, KeptFp32Share) {
  auto in = session("bf16", "cpu");
  OpStats matmul = top_level_op("aten::linear", "fc", OpCategory::kDemoted, 7'000'000);
  matmul.output_dtypes = {"bfloat16"};
  in.op_stats.push_back(matmul);
  OpStats loss = top_level_op("aten::cross_entropy_loss", "loss", OpCategory::kKeptFp32, 3'000'000);
  loss.input_dtypes = {"bfloat16", "int64"};
  in.op_stats.push_back(loss);
  const auto r = find(recommend(in), "kept_fp32_share");
  ASSERT_TRUE(r);  // 30%
  EXPECT_EQ(r->severity, Severity::kInfo);
  EXPECT_TRUE(contains(r->detail, "cross_entropy_loss")) << r->detail;
  EXPECT_TRUE(evidence_mentions(*r, "loss aten::cross_entropy_loss"));

  in.op_stats[1].cpu_time_ns = 1'000'000;  // 12.5%
  EXPECT_FALSE(find(recommend(in), "kept_fp32_share"));
}

TEST(Recommendations, AutocastOffShareNamesTheRegionsModulesAndTheirOps) {
  auto in = session("fp16");
  OpStats matmul = top_level_op("aten::linear", "fc", OpCategory::kDemoted, 8'000'000);
  matmul.output_dtypes = {"float16"};
  in.op_stats.push_back(matmul);
  OpStats off = top_level_op("aten::mm", "attn.score", OpCategory::kAutocastOff, 2'000'000);
  off.output_dtypes = {"float32"};
  in.op_stats.push_back(off);
  const auto r = find(recommend(in), "autocast_off_share");
  ASSERT_TRUE(r);  // 20%
  EXPECT_TRUE(contains(r->title, "20%")) << r->title;
  EXPECT_TRUE(contains(r->detail, "attn.score")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "in fp16")) << r->detail;
  EXPECT_TRUE(evidence_mentions(*r, "attn.score aten::mm (forward, float32)"));
  // A kept-fp32 op (autocast's own choice) is not the script's region.
  in.op_stats[1].category = OpCategory::kKeptFp32;
  EXPECT_FALSE(find(recommend(in), "autocast_off_share"));
  in.op_stats[1].category = OpCategory::kAutocastOff;
  in.op_stats[1].cpu_time_ns = 800'000;  // 9%
  EXPECT_FALSE(find(recommend(in), "autocast_off_share"));
}

// Steps 1..n with the scale halving on each skipped step and doubling where `grow` says.
std::vector<StepRecord> steps(int64_t n, const std::vector<int64_t>& skipped,
                              const std::vector<int64_t>& grow = {}, double scale = 65536) {
  std::vector<StepRecord> out;
  for (int64_t s = 1; s <= n; ++s) {
    StepRecord r;
    r.step = s;
    r.skipped = r.found_inf = std::count(skipped.begin(), skipped.end(), s) > 0;
    if (r.skipped) scale /= 2;
    if (std::count(grow.begin(), grow.end(), s) > 0) scale *= 2;
    r.loss_scale = scale;
    out.push_back(r);
  }
  return out;
}

TEST(Recommendations, FrequentSkippedStepsIgnoresCalibration) {
  auto in = session("fp16");
  in.steps = steps(100, {1, 2, 3, 4, 5});  // the initial backoffs from 65536
  EXPECT_FALSE(find(recommend(in), "frequent_skipped_steps"));

  // A run starting far too high backs off for longer than 20 steps: still calibration.
  in.steps = steps(100, {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                         14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25},
                   {}, 1e12);
  EXPECT_FALSE(find(recommend(in), "frequent_skipped_steps"));

  in.steps = steps(100, {1, 2, 3, 30, 40, 50, 60, 70, 80}, {35, 45, 55, 65, 75});
  const auto r = find(recommend(in), "frequent_skipped_steps");
  ASSERT_TRUE(r);  // 6 of the 80 steps after the first 20
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "6 of the 80 steps")) << r->detail;
  // The title's share is of those steps, and says so (it read "7.5% of steps").
  EXPECT_EQ(r->title, "7.5% of the steps after the first 20 were skipped on gradient overflow");
  EXPECT_TRUE(contains(r->detail, "grew 5 times")) << r->detail;
  ASSERT_FALSE(r->evidence.empty());
  EXPECT_TRUE(contains(r->evidence[0], "step 30")) << r->evidence[0];

  in.meta.scaler_enabled = false;  // no scaler: no scale calibration to judge
  EXPECT_FALSE(find(recommend(in), "frequent_skipped_steps"));
  in.meta.scaler_enabled = true;
  in.steps = steps(100, {1, 2, 3, 50});  // a single overflow is the scaler probing
  EXPECT_FALSE(find(recommend(in), "frequent_skipped_steps"));
}

TEST(Recommendations, LossScaleStuckLow) {
  auto in = session("fp16");
  std::vector<int64_t> every_third;
  for (int64_t s = 3; s <= 60; s += 3) every_third.push_back(s);
  in.steps = steps(60, every_third);  // 65536 / 2^20 ends below 1
  auto r = find(recommend(in), "loss_scale_stuck_low");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "ended at 0.0625")) << r->detail;
  EXPECT_TRUE(contains(r->evidence[0], "step 60")) << r->evidence[0];  // latest backoff first

  // Not low yet, but backing off with no growth in between.
  in.steps = steps(100, {1, 2, 60, 70, 80});
  r = find(recommend(in), "loss_scale_stuck_low");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "backed off 3 times")) << r->detail;

  // A healthy scaler: overflows, grows back, overflows again.
  in.steps = steps(100, {1, 2, 40, 60, 80}, {50, 70, 90});
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
  in.steps = steps(100, {1, 2, 3});
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
  // bf16 has no fp16 loss scale to judge.
  in.meta.precision = "bf16";
  in.steps = steps(60, every_third);
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
}

TEST(Recommendations, LossScaleStuckLowNamesWhereTheBackwardInfStarted) {
  auto in = session("fp16");
  std::vector<int64_t> every_third;
  for (int64_t s = 3; s <= 60; s += 3) every_third.push_back(s);
  in.steps = steps(60, every_third);
  BackwardCheck check;
  check.step = 4;
  check.skipped = true;
  check.gradients = 12;
  check.nonfinite = 5;
  check.module = "blocks.1.attn";
  in.backward_inf = summarize_backward_checks({check});
  const auto r = find(recommend(in), "loss_scale_stuck_low");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "The backward checks say where: the first non-finite gradient in backward "
                                  "came out of blocks.1.attn's backward (its input gradient) at step 4"))
      << r->detail;
}

TEST(Recommendations, SchedulerSteppedAfterSkippedStepsWithTheCountAndTheFix) {
  auto in = session("fp16");
  SchedulerSummary s;
  s.name = "OneCycleLR";
  s.optimizer_name = "AdamW";
  s.calls = 100;
  s.optimizer_steps = 100;
  s.after_skipped = 4;
  s.after_skipped_steps = {1, 2, 3, 57};
  in.schedulers = {s};
  const auto r = find(recommend(in), "scheduler_steps_after_skipped");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_EQ(r->title, "OneCycleLR advanced 4 times after optimizer steps GradScaler skipped");
  EXPECT_TRUE(contains(r->detail, "its schedule runs 4 steps ahead")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "if scaler.get_scale() >= scale: scheduler.step()")) << r->detail;
  EXPECT_TRUE(evidence_mentions(*r, "step 57: optimizer step skipped, OneCycleLR stepped"));
  // Stepped once an epoch (4 calls for 100 optimizer steps): the schedule does not drift.
  in.schedulers[0].calls = 4;
  EXPECT_FALSE(find(recommend(in), "scheduler_steps_after_skipped"));
  // Never after a skipped step.
  in.schedulers[0].calls = 100;
  in.schedulers[0].after_skipped = 0;
  in.schedulers[0].after_skipped_steps.clear();
  EXPECT_FALSE(find(recommend(in), "scheduler_steps_after_skipped"));
}

GradientSample gradient(const std::string& parameter, int64_t numel, double underflow) {
  GradientSample g;
  g.step = 40;
  g.parameter = parameter;
  g.loss_scale = 1024;
  g.numel = numel;
  g.zero_fraction = 0.5;
  g.fp16_underflow_fraction = underflow;
  g.min_abs_nonzero = 1e-12;
  g.max_abs = 0.5;
  return g;
}

// A scale set low (--init-scale 1e-6) that never backed off was reported as "keeps backing
// off: gradients overflow", sending the user to look for an inf that was not there. It is
// its own finding: the flushed gradients are the zeros.
TEST(Recommendations, ALossScaleSetLowIsNotCalledBackingOff) {
  auto in = session("fp16");
  in.steps = steps(10, {}, {}, 1e-6);
  in.gradients = {gradient("fc1.weight", 1'000, 0.0), gradient("fc1.bias", 10, 0.0)};
  in.gradients[0].zero_fraction = 0.9;
  in.gradients[1].zero_fraction = 0.2;
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
  auto r = find(recommend(in), "loss_scale_set_low");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "The loss scale was 1e-06 at the first step and never backed off")) << r->detail;
  // (900 + 2) of 1,010 elements.
  EXPECT_TRUE(contains(r->detail, "at step 40, 89% of the gradient elements were exactly zero")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "(|g| = 0.5) allows a scale up to 131008")) << r->detail;
  ASSERT_GE(r->evidence.size(), 4u);
  EXPECT_TRUE(contains(r->evidence[0], "step 1: loss scale 1e-06")) << r->evidence[0];
  EXPECT_TRUE(contains(r->evidence[2], "fc1.weight: 90% of 1000 elements exactly zero")) << r->evidence[2];

  for (auto& g : in.gradients) g.zero_fraction = 1.0, g.max_abs = 0;
  r = find(recommend(in), "loss_scale_set_low");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "every gradient element was zero, so the optimizer had nothing to apply")) << r->detail;
  EXPECT_FALSE(contains(r->detail, "allows a scale up to")) << r->detail;

  // Backed off once on the way down: the old finding, not this one.
  in.steps = steps(10, {3}, {}, 1e-6);
  EXPECT_TRUE(find(recommend(in), "loss_scale_stuck_low"));
  EXPECT_FALSE(find(recommend(in), "loss_scale_set_low"));
  // A healthy scale: neither.
  in.steps = steps(10, {});
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
  EXPECT_FALSE(find(recommend(in), "loss_scale_set_low"));
}

TEST(Recommendations, Fp16GradientUnderflow) {
  auto in = session("fp16");
  in.gradients = {gradient("fc1.weight", 100'000, 0.0005), gradient("fc2.weight", 1'000, 0.2),
                  gradient("fc2.bias", 10, 0.0)};
  // (50 + 200) of (50k + 500 + 5) nonzero elements: 0.5%.
  const auto r = find(recommend(in), "fp16_gradient_underflow");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->detail, "0.5% of the nonzero gradient elements")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "loss scale 1024")) << r->detail;
  ASSERT_EQ(r->evidence.size(), 2u);
  EXPECT_TRUE(contains(r->evidence[0], "fc2.weight: 40% of 500")) << r->evidence[0];
  EXPECT_TRUE(contains(r->evidence[1], "fc1.weight")) << r->evidence[1];

  // Weighted by elements: a small parameter's high fraction alone stays under 0.1%.
  in.gradients = {gradient("big.weight", 1'000'000, 0.0), gradient("small.bias", 100, 0.5)};
  EXPECT_FALSE(find(recommend(in), "fp16_gradient_underflow"));

  // bf16 has fp32's range: fp16 underflow says nothing about it.
  in.gradients = {gradient("fc2.weight", 1'000, 0.2)};
  EXPECT_TRUE(find(recommend(in), "fp16_gradient_underflow"));
  in.meta.precision = "bf16";
  EXPECT_FALSE(find(recommend(in), "fp16_gradient_underflow"));
}

// A torchrun script's facts: FSDP2 casting the parameters to `param_dtype`, no autocast region,
// the loss scaled by `scaler_class` on one of two ranks.
ScriptFacts fsdp_script(const std::string& param_dtype, const std::string& scaler_class) {
  ScriptFacts f;
  f.precision = "fp32";  // no autocast region
  FsdpPolicy policy;
  policy.api = "fully_shard";
  policy.param_dtype = param_dtype;
  policy.reduce_dtype = "fp32";
  policy.modules = 3;
  f.fsdp.push_back(policy);
  f.scaler = !scaler_class.empty();
  f.scaler_class = scaler_class;
  ScriptCommand command;
  command.script = "train.py";
  command.world_size = command.local_world_size = 2;
  f.command = command;
  return f;
}

TEST(Recommendations, FsdpInFp16UnderAGradScalerThatChecksOnlyTheRanksOwnShardIsWarnedOf) {
  auto in = session("fp32");
  in.meta.scaler_enabled = true;
  in.steps = steps(10, {3, 7});
  in.script = fsdp_script("fp16", "torch.amp.GradScaler");
  auto r = find(recommend(in), "sharded_gradients_unsynced_scaler");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(contains(r->title, "torch.amp.GradScaler checks each rank's shard alone")) << r->title;
  EXPECT_TRUE(contains(r->detail, "ShardedGradScaler, which all-reduces the check")) << r->detail;
  ASSERT_EQ(r->evidence.size(), 3u);
  EXPECT_EQ(r->evidence[0], "loss scaler: torch.amp.GradScaler; 2 of 10 steps skipped on this rank");
  EXPECT_TRUE(contains(r->evidence[1], "step 3:")) << r->evidence[1];
  EXPECT_TRUE(contains(r->evidence[2], "step 7:")) << r->evidence[2];

  // Autocast's fp16 on FSDP's fp32 shards: the gradients are sharded all the same.
  in.script = fsdp_script("", "torch.amp.GradScaler");
  in.script->precision = "fp16";
  EXPECT_TRUE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
  // FSDP's own scaler, or a script's class derived from it, checks across the ranks.
  in.script = fsdp_script("fp16", "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler");
  EXPECT_FALSE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
  in.script = fsdp_script("fp16", "train.MyScaler (a torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler)");
  EXPECT_FALSE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
  // bf16 needs no scaler; one rank holds every shard; no FSDP: each rank has whole gradients.
  in.script = fsdp_script("bf16", "torch.amp.GradScaler");
  EXPECT_FALSE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
  in.script = fsdp_script("fp16", "torch.amp.GradScaler");
  in.script->command->world_size = in.script->command->local_world_size = 1;
  EXPECT_FALSE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
  in.script = fsdp_script("fp16", "torch.amp.GradScaler");
  in.script->fsdp.clear();
  EXPECT_FALSE(find(recommend(in), "sharded_gradients_unsynced_scaler"));
}

// FSDP's fp16 policy computes the gradients in fp16 though no autocast region ran (the session's
// precision reads fp32): the fp16 rules judge its loss scale.
TEST(Recommendations, Fp16RulesJudgeARunThatComputedInFp16WithoutAutocast) {
  auto in = session("fp32");
  in.meta.scaler_enabled = true;
  std::vector<int64_t> every_third;
  for (int64_t s = 3; s <= 60; s += 3) every_third.push_back(s);
  in.steps = steps(60, every_third);
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
  in.script = fsdp_script("fp16", "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler");
  EXPECT_TRUE(find(recommend(in), "loss_scale_stuck_low"));
  in.script = fsdp_script("bf16", "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler");
  EXPECT_FALSE(find(recommend(in), "loss_scale_stuck_low"));
}

// A session's findings are its report's, wherever they are shown: `summary` prints them wrapped
// for a terminal, the JSON summary holds them field by field.
TEST(Findings, ASessionsFindingsAreItsReportsAsTextAndJson) {
  SessionView view;
  view.meta.precision = "fp16";
  view.meta.device = "cuda:0";
  view.meta.scaler_enabled = true;
  std::vector<int64_t> every_third;
  for (int64_t s = 3; s <= 60; s += 3) every_third.push_back(s);
  view.steps = steps(60, every_third);
  const SessionFindings findings = session_findings(view);
  const ReportData report = session_report(view);
  EXPECT_EQ(findings.verdict, report.verdict);
  ASSERT_EQ(findings.recommendations.size(), report.recommendations.size());
  for (size_t i = 0; i < report.recommendations.size(); ++i)
    EXPECT_EQ(findings.recommendations[i].id, report.recommendations[i].id);
  const auto stuck = find(findings.recommendations, "loss_scale_stuck_low");
  ASSERT_TRUE(stuck);
  ASSERT_FALSE(findings.verdict.empty());

  const std::string text = findings_text(findings, 80);
  EXPECT_TRUE(contains(text, "Verdict\n  - ")) << text;
  EXPECT_TRUE(contains(text, "What to change (" + std::to_string(findings.recommendations.size()) + ")\n")) << text;
  EXPECT_TRUE(contains(text, "\n  warning  The fp16 loss scale keeps backing off")) << text;
  EXPECT_TRUE(contains(text, "\n           * " + stuck->evidence.front().substr(0, 20))) << text;
  std::istringstream lines(text);
  std::string words;  // the detail's words, as wrapped
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 80u) << line;
    if (line.rfind("           ", 0) == 0 && line[11] != ' ' && line[11] != '*') words += line.substr(11) + " ";
  }
  EXPECT_TRUE(contains(words, stuck->detail)) << "the detail, whole, under its title";

  const nlohmann::ordered_json j = findings_json(findings);
  ASSERT_EQ(j["verdict"].size(), findings.verdict.size());
  bool found = false;
  for (const auto& r : j["recommendations"]) {
    if (r["id"] != "loss_scale_stuck_low") continue;
    found = true;
    EXPECT_EQ(r["severity"], "warning");
    EXPECT_EQ(r["title"], stuck->title);
    EXPECT_EQ(r["detail"], stuck->detail);
    EXPECT_EQ(r["evidence"].size(), stuck->evidence.size());
  }
  EXPECT_TRUE(found) << j.dump(2);
  // A comparison's: its verdict, then each reduced precision's, titled with it, in its order.
  ReportData comparison;
  comparison.verdict = {"bf16 is 1.9x fp32."};
  comparison.variant_recommendations = {{"fp16", report.recommendations}, {"bf16", {report.recommendations.front()}}};
  const SessionFindings compared = comparison_findings(comparison);
  EXPECT_EQ(compared.verdict, comparison.verdict);
  ASSERT_EQ(compared.recommendations.size(), report.recommendations.size() + 1);
  EXPECT_EQ(compared.recommendations.front().title, "fp16: " + report.recommendations.front().title);
  EXPECT_EQ(compared.recommendations.back().title, "bf16: " + report.recommendations.front().title);
  EXPECT_EQ(compared.recommendations.back().detail, report.recommendations.front().detail);
  // None found: said so, not left blank.
  EXPECT_TRUE(contains(findings_text({.verdict = {"fp32 run."}, .recommendations = {}, .none_because = {}}),
                       "What to change: nothing the recommendation rules look for"));
  // A comparison without a profiled pass: the rules had nothing to read, and it says that instead.
  const SessionFindings unread = comparison_findings(ReportData{});
  EXPECT_TRUE(unread.recommendations.empty());
  EXPECT_EQ(recommendations_text(unread, 80),
            "What to change: no reduced-precision variant had a profiled pass to read\nrecommendations from\n");
  EXPECT_TRUE(compared.none_because.empty());  // they were read
}

TEST(Recommendations, NoAutocastEffect) {
  auto in = session("bf16");
  add_linear(in, "fc1", 64, 784, 128);
  for (OpStats& r : in.op_stats) {  // as if autocast was off: everything stayed fp32
    r.category = OpCategory::kUnchanged;
    r.input_dtypes = {"float32", "float32", "float32"};
    r.output_dtypes = {"float32"};
  }
  const auto r = find(recommend(in), "no_autocast_effect");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  EXPECT_TRUE(evidence_mentions(*r, "fc1 aten::linear: inputs float32"));

  auto working = session("bf16");
  add_linear(working, "fc1", 64, 784, 128);
  EXPECT_FALSE(find(recommend(working), "no_autocast_effect"));
  in.meta.precision = "fp32";
  EXPECT_FALSE(find(recommend(in), "no_autocast_effect"));
  EXPECT_TRUE(recommend(session("bf16")).empty());  // nothing recorded: nothing to judge
}

// bf16 and fp32 have fp32's exponent range: a loss scaler there costs its ops, and on CUDA a read
// of its inf check per step, for no range. Named, with what it cost; never under fp16.
TEST(Recommendations, ALossScalerWhereGradientsHaveFp32sRangeIsNamedWithWhatItCosts) {
  auto in = session("bf16");
  in.meta.scaler_enabled = true;
  add_linear(in, "fc1", 64, 784, 128);  // 1 ms of linear: the op time the scaler's share is of
  const std::string scaler = engine::kLossScalerModule;
  in.op_stats.push_back(top_level_op("aten::mul", scaler, OpCategory::kUnchanged, 200'000));
  in.op_stats.push_back(
      top_level_op("aten::_amp_foreach_non_finite_check_and_unscale_", scaler, OpCategory::kUnchanged, 600'000));
  in.op_stats.push_back(top_level_op("aten::item", scaler, OpCategory::kUnchanged, 100'000));
  in.op_stats.push_back(top_level_op("aten::mul", scaler, OpCategory::kUnchanged, 100'000));  // another signature
  in.op_stats.push_back(top_level_op("aten::item", "", OpCategory::kUnchanged, 5'000'000));  // the loop's own
  in.steps = steps(30, {7});
  auto r = find(recommend(in), "loss_scaler_without_fp16");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kInfo);
  EXPECT_EQ(r->title, "A loss scaler is on, but bf16 gradients need no scaling");
  // 1 ms of its ops over 4 profiled steps, of 7 ms of top-level op time; 4 ops and one read per step.
  EXPECT_TRUE(contains(r->detail, "took 250 µs of host time per step (4 ops, 14% of op time)")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "with .item() (1 per step)")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "(1 of 30 here)")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "Leave out --scaler")) << r->detail;
  ASSERT_EQ(r->evidence.size(), 4u);
  EXPECT_EQ(r->evidence[0], "loss scale 32768 to 65536 over 30 steps, 1 skipped");
  EXPECT_EQ(r->evidence[1],
            "(GradScaler) aten::_amp_foreach_non_finite_check_and_unscale_: 1 per step, 150 µs of host time");
  EXPECT_EQ(r->evidence[2], "(GradScaler) aten::mul: 2 per step, 75 µs of host time");  // both signatures
  EXPECT_FALSE(evidence_mentions(*r, "5 ms")) << "the loop's own .item() is not the scaler's";

  in.meta.device = "cpu";  // no device to wait for
  r = find(recommend(in), "loss_scaler_without_fp16");
  ASSERT_TRUE(r);
  EXPECT_FALSE(contains(r->detail, ".item()")) << r->detail;
  in.meta.precision = "fp32";
  r = find(recommend(in), "loss_scaler_without_fp16");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->title, "A loss scaler is on, but fp32 gradients need no scaling");
  // A script's scaler, by its class; fp16 computed by FSDP's cast needs it.
  in.script = fsdp_script("bf16", "torch.amp.GradScaler");
  r = find(recommend(in), "loss_scaler_without_fp16");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "Drop the torch.amp.GradScaler, or construct it with enabled=False")) << r->detail;
  in.script = fsdp_script("fp16", "torch.amp.GradScaler");
  EXPECT_FALSE(find(recommend(in), "loss_scaler_without_fp16"));

  in.script.reset();
  in.meta.precision = "fp16";  // what the scaler is for
  EXPECT_FALSE(find(recommend(in), "loss_scaler_without_fp16"));
  in.meta.precision = "bf16";
  in.meta.scaler_enabled = false;
  EXPECT_FALSE(find(recommend(in), "loss_scaler_without_fp16"));
}

// clip_grad_norm_ before scaler.unscale_: max_norm applies to the scaled norm. Named with what the
// clipping did to the first such step's gradients, whether or not they needed clipping.
TEST(Recommendations, ClippingBeforeUnscaleSaysWhatTheClippingDidToTheGradients) {
  auto in = session("fp16");
  in.steps = steps(10, {});
  for (StepRecord& s : in.steps) s.grad_norm = 0.5;
  EXPECT_FALSE(find(recommend(in), "clip_before_unscale"));  // no script facts: the built-in loop unscales first
  in.script = ScriptFacts{};
  in.script->precision = "fp16";
  EXPECT_FALSE(find(recommend(in), "clip_before_unscale"));  // a script that clipped after unscale_
  in.script->clip_before_unscale = ScriptFacts::ClipBeforeUnscale{.steps = 8, .first_step = 3, .max_norm = 1.0};
  auto r = find(recommend(in), "clip_before_unscale");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->severity, Severity::kWarning);
  // 0.5 needed no clipping; 0.5 x 65536 scaled was cut to 1, i.e. 1 / 65536 of the gradients' own.
  EXPECT_TRUE(contains(r->detail, "In 8 of the 10 steps")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "(65536 at step 3), and max_norm (1) applied to that scaled norm")) << r->detail;
  EXPECT_TRUE(contains(r->detail, "At step 3 the gradients' own norm was 0.5 (3.28e+04 scaled): clipping cut it to "
                                  "1.53e-05 where it needed no clipping, 32.8k times smaller than intended."))
      << r->detail;
  ASSERT_EQ(r->evidence.size(), 2u);
  EXPECT_EQ(r->evidence[0], "step 3: loss scale 65536, gradient norm 0.5, max_norm 1");
  EXPECT_EQ(r->evidence[1], "8 of 10 steps clipped before unscale_, the first at step 3");

  // Gradients that needed clipping: cut to max_norm / scale instead of max_norm.
  for (StepRecord& s : in.steps) s.grad_norm = 4;
  r = find(recommend(in), "clip_before_unscale");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "where max_norm would have cut it to 1, 65.5k times smaller")) << r->detail;
  // A max_norm past the scaled norm clips nothing here, and says so.
  in.script->clip_before_unscale->max_norm = 1e6;
  r = find(recommend(in), "clip_before_unscale");
  ASSERT_TRUE(r);
  EXPECT_TRUE(contains(r->detail, "the scaled norm (2.62e+05) stayed below max_norm and nothing was clipped"))
      << r->detail;
  // A max_norm the capture could not read: no figures to give, the mistake still named.
  in.script->clip_before_unscale->max_norm = std::nan("");
  r = find(recommend(in), "clip_before_unscale");
  ASSERT_TRUE(r);
  EXPECT_FALSE(contains(r->detail, "At step 3")) << r->detail;
}

TEST(Recommendations, WarningsFirstThenByImpact) {
  auto in = session("fp16", "cpu");
  OpStats linear = top_level_op("aten::linear", "fc1", OpCategory::kDemoted, 6'000'000);
  linear.output_dtypes = {"float16"};
  linear.cast_cpu_time_ns = 600'000;  // 6% cast tax
  in.op_stats.push_back(linear);
  OpStats loss = top_level_op("aten::cross_entropy_loss", "loss", OpCategory::kKeptFp32, 4'000'000);
  in.op_stats.push_back(loss);  // 40% kept fp32: info
  in.steps = steps(100, {1, 2, 30, 40, 50, 60, 70, 80, 90}, {35, 45, 55, 65, 75, 85, 95});
  const auto recs = recommend(in);  // skipped 7 of 80 (8.8%) outranks the cast tax (6%)
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].id, "frequent_skipped_steps");
  EXPECT_EQ(recs[1].id, "high_cast_tax");
  EXPECT_EQ(recs[2].id, "kept_fp32_share");
  for (const Recommendation& r : recs) {
    EXPECT_FALSE(r.title.empty());
    EXPECT_FALSE(r.detail.empty());
    EXPECT_LE(r.evidence.size(), 8u);
  }
}

}  // namespace
}  // namespace ampscope::profiler
