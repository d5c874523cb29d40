// The verdict says what the data supports, in plain words: speedups with their
// spread, slowdowns with their cause when the op table shows it, loss agreement,
// skipped steps, gradient underflow, and that no GPU was traced when so.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>

#include "profiler/report/report_data.h"
#include "profiler/report/verdict.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/report/report_fixture.h"

namespace ampscope::test {
namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

constexpr const char* kComparisonPath = "cmp.ampscope";

ReportData session_report(const Fixture& f) {
  ReportData d;
  d.path = "s.ampscope";
  d.meta = f.meta;
  d.steps = f.steps;
  d.op_stats = f.op_stats;
  d.profiled_steps = 4;
  for (const auto& g : f.gradients)
    if (g.step == 4) d.latest_gradients.push_back(g);
  finish_report(d);
  return d;
}

TEST(Verdict, ComparisonGivesTheSpeedupWithItsSpreadAcrossRepeats) {
  const auto d = comparison_report(gpu_comparison(), kComparisonPath);
  const auto v = joined(d.verdict);
  EXPECT_NE(v.find("bf16 gave 2.4\u00d7 over fp32 (1.9\u00d7\u20132.6\u00d7 across 3 repeats)"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("Fastest: bf16"), std::string::npos) << v;
  // softmax and layer_norm kept in fp32: 22 of 42 ms of bf16's op time.
  EXPECT_NE(v.find("aten::layer_norm and aten::softmax kept in fp32 took 52% of op time"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("the casts autocast inserted cost 4.8%"), std::string::npos) << v;
  EXPECT_NE(v.find("bf16's final loss 2.31 is within 1% of fp32's 2.30"), std::string::npos) << v;
  EXPECT_NE(v.find("fp16 skipped 1 step on inf/NaN gradients"), std::string::npos) << v;
  EXPECT_EQ(v.find("No GPU was traced"), std::string::npos) << v;
  EXPECT_EQ(v.find("slower"), std::string::npos) << v;
}

TEST(Verdict, FP16OnACpuIsSlowerAndTheMatrixMultipliesSayWhy) {
  const auto d = comparison_report(cpu_comparison(), kComparisonPath);
  const auto v = joined(d.verdict);
  EXPECT_NE(v.find("fp16 was 15\u00d7 slower than fp32 on this CPU"), std::string::npos) << v;
  EXPECT_NE(v.find("its matrix multiplies ran 40\u00d7 slower than in fp32, as PyTorch has no "
                   "oneDNN fp16 kernels on this CPU (vector ISA AVX2) and runs them in ATen's "
                   "fallback loops"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("No GPU was traced, so op times are CPU times; GPU tracing: no GPU."),
            std::string::npos)
      << v;
  EXPECT_EQ(v.find(" gave "), std::string::npos) << v;
}

// The cause is PyTorch's own answer stored in the session, never a guess: where
// oneDNN runs fp16 (an AVX512-FP16 or AMX CPU), or an older session has no answer,
// the slowdown is still said but no hardware reason is given.
TEST(Verdict, TheCpuReasonIsGivenOnlyWhenTheSessionRecordedTheFallback) {
  for (const char* recorded : {kCpuMatmulOneDnn, ""}) {
    auto c = cpu_comparison();
    c.meta.cpu_fp16_matmul = recorded;
    const auto v = joined(comparison_report(c, kComparisonPath).verdict);
    EXPECT_NE(v.find("its matrix multiplies ran 40\u00d7 slower than in fp32"), std::string::npos) << v;
    EXPECT_EQ(v.find("oneDNN"), std::string::npos) << v;
    EXPECT_EQ(v.find("CPU has no"), std::string::npos) << v;
  }
}

TEST(Verdict, SameSpeedDivergenceAndNoBaselineAreSaidPlainly) {
  auto c = gpu_comparison();
  auto& bf16 = c.variants[1];
  bf16.repeats = c.variants[0].repeats;  // same times as fp32
  bf16.repeats[2].back().loss = std::numeric_limits<double>::quiet_NaN();
  auto v = joined(comparison_report(c, kComparisonPath).verdict);
  EXPECT_NE(v.find("bf16 ran at fp32's speed (1.00\u00d7 in each of 3 repeats)"), std::string::npos)
      << v;
  EXPECT_NE(v.find("bf16 diverged: its final loss is not a number"), std::string::npos) << v;

  c.variants.erase(c.variants.begin());  // no fp32
  v = joined(comparison_report(c, kComparisonPath).verdict);
  EXPECT_NE(v.find("No fp32 baseline was run, so no speedup is given."), std::string::npos) << v;
  EXPECT_EQ(v.find(" gave "), std::string::npos) << v;
}

TEST(Verdict, AVariantThatFinishedNothingSaysWhy) {
  auto c = gpu_comparison();
  c.variants[2].repeats.clear();
  c.variants[2].error = "out of memory";
  const auto v = joined(comparison_report(c, kComparisonPath).verdict);
  EXPECT_NE(v.find("fp16 finished no repeat: out of memory."), std::string::npos) << v;
}

// A profiled step's time includes capture (issue #27): the verdict gives the
// unprofiled steps' median and the overhead, or says that every step was profiled.
TEST(Verdict, TheStepTimeSaysWhatCaptureCost) {
  ReportData d = session_report(make_fixture());
  // The verdict's text for these step times.
  const auto verdict_with = [&](int64_t recorded, int64_t unrecorded, int64_t sampled, double recorded_ms,
                                double unrecorded_ms, double sampled_ms) {
    StepTiming& t = d.step_timing;
    t.recorded_steps = recorded;
    t.unrecorded_steps = unrecorded;
    t.sampled_steps = sampled;
    t.recorded_median_ms = recorded_ms;
    t.unrecorded_median_ms = unrecorded_ms;
    t.sampled_median_ms = sampled_ms;
    finish_report(d);
    return joined(d.verdict);
  };
  auto v = verdict_with(4, 36, 0, 21.0, 19.0, 0.0);
  EXPECT_NE(v.find("median step 19.0 ms over 36 unprofiled steps; 4 profiled steps 21.0 ms (capture overhead 1.1\u00d7)"),
            std::string::npos)
      << v;
  v = verdict_with(4, 0, 0, 33.2, 0.0, 0.0);
  EXPECT_NE(v.find("median step 33.2 ms; every step was profiled, so this includes capture"), std::string::npos) << v;
  // Gradient samples cost far more than recording ops: their steps are stated apart
  // (the H200's --every 10: recorded steps 1.2x, samples 207 steps).
  v = verdict_with(4, 32, 4, 28.0, 23.0, 4783.0);
  EXPECT_NE(v.find("median step 23.0 ms over 32 unprofiled steps; 4 profiled steps 28.0 ms (capture overhead 1.2\u00d7); "
                   "4 gradient-sampled steps 4,783 ms (a sample adds 207 steps)"),
            std::string::npos)
      << v;
  // Samples no slower than the other steps (within their spread): no cost, not "-0.3 steps".
  v = verdict_with(2, 0, 1, 4.29, 0.0, 2.94);
  EXPECT_NE(v.find("1 gradient-sampled step 2.94 ms (a sample adds no measurable time)"), std::string::npos) << v;
  v = verdict_with(36, 0, 4, 40.9, 0.0, 4805.0);
  EXPECT_NE(v.find("median step 40.9 ms; every step was profiled, so this includes capture; 4 gradient-sampled steps "
                   "4,805 ms (a sample adds 116 steps)"),
            std::string::npos)
      << v;
}

TEST(Verdict, SessionReportsSkippedStepsUnderflowAndTensorCores) {
  const auto d = session_report(make_fixture());
  const auto v = joined(d.verdict);
  EXPECT_NE(v.find("fp16 run of MLP 2x64 on NVIDIA H100 80GB HBM3: 4 steps, median step 9.00 ms."),
            std::string::npos)
      << v;
  EXPECT_NE(
      v.find(
          "1 of 4 steps were skipped on inf/NaN gradients; the loss scale went from 65536 to 32768."),
      std::string::npos)
      << v;
  // fc1.weight 4096 elements at 25%, fc1.bias 64 at 50%: 25.4% by element.
  EXPECT_NE(v.find("25% of gradients underflow fp16 at scale 32768 (step 4)."), std::string::npos)
      << v;
  EXPECT_NE(v.find("of GPU op time ran in Tensor Core kernels"), std::string::npos) << v;
  EXPECT_NE(v.find("Autocast ran AddmmBackward0 and aten::linear in fp16 (67% of op time)"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("The loss went from 2.00 to 0.500."), std::string::npos) << v;
  EXPECT_EQ(v.find("No GPU was traced"), std::string::npos) << v;
}

TEST(Verdict, OpsWhereTheScriptTurnedAutocastOffAreSaidWithTheirShare) {
  Fixture f = make_fixture();
  int64_t total = 0;
  for (const auto& r : f.op_stats)
    if (r.top_level) total += r.gpu_time_ns;
  OpStats off;
  off.name = "aten::mm";
  off.module = "head";
  off.phase = Phase::kForward;
  off.category = OpCategory::kAutocastOff;
  off.top_level = true;
  off.calls = 4;
  off.cpu_time_ns = off.gpu_time_ns = total;  // half of the op time, with it
  off.input_dtypes = {"float32", "float32"};
  off.output_dtypes = {"float32"};
  f.op_stats.push_back(off);
  const auto v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("; aten::mm, run where the code turned autocast off, took 50% of op time"), std::string::npos) << v;
}

// A torch.compile'd run: the verdict's shares are the category table's (category_totals), so
// compiling (in no category) takes none, and a compiled region's time counts by what its
// kernels computed. Summing the rows itself, it said "aten::addmm in bf16 (0% of op time)"
// beside a table with demoted at 19%.
TEST(Verdict, ACompiledRunsSharesAreTheCategoryTables) {
  ReportData d;
  d.path = "s.ampscope";
  d.meta.precision = "bf16";
  d.meta.device = "cpu";
  const auto row = [](std::string name, OpCategory category, bool compiled, int64_t cpu_ns) {
    OpStats r;
    r.name = std::move(name);
    r.category = category;
    r.compiled = compiled;
    r.top_level = true;
    r.calls = 19;
    r.cpu_time_ns = cpu_ns;
    return r;
  };
  d.op_stats = {row(std::string(profiler::kTorchCompileOp), OpCategory::kUnchanged, false, 20'000'000'000),
                row("Torch-Compiled Region: 0/0", OpCategory::kUnchanged, false, 800'000'000),
                row("aten::cross_entropy_loss", OpCategory::kKeptFp32, false, 200'000'000),
                row("aten::addmm", OpCategory::kDemoted, true, 0)};  // a graph's node: no time of its own
  d.compiled_compute = {{OpCategory::kDemoted, "bfloat16", 400'000'000, 0}};  // half the region: its GEMMs
  finish_report(d);
  const auto v = joined(d.verdict);
  EXPECT_NE(v.find("Autocast ran aten::addmm in bf16 (40% of op time); aten::cross_entropy_loss kept in fp32 took "
                   "20% of op time"),
            std::string::npos)
      << v;
}

// model.bfloat16() with no autocast region: a bf16 run (its autocast precision reads fp32), and
// a warning that the optimizer has no fp32 master weights; an fp32 model with a few bf16
// buffers-as-parameters is neither.
TEST(Verdict, AModelInBf16WithoutAutocastIsABf16RunWithoutMasterWeights) {
  for (const auto& [dtypes, reduced] : {std::pair{"bfloat16:9866,float32:10", true},
                                        std::pair{"float32:9866,bfloat16:10", false}}) {
    SCOPED_TRACE(dtypes);
    Fixture f = make_fixture();
    for (auto& r : f.op_stats) r.category = OpCategory::kUnchanged;
    ReportData d;
    d.path = "s.ampscope";
    d.meta = f.meta;
    d.meta.precision = "fp32";
    d.meta_values["parameter_dtypes"] = dtypes;
    d.steps = f.steps;
    d.op_stats = f.op_stats;
    d.profiled_steps = 4;
    finish_report(d);
    const auto v = joined(d.verdict);
    EXPECT_EQ(v.starts_with("bf16 run (a bf16 model, no autocast) of "), reduced) << v;
    EXPECT_EQ(v.find("Autocast changed no op's precision: the model's parameters are bf16, so its ops ran in bf16 "
                     "without it, with no fp32 master weights") != std::string::npos,
              reduced)
        << v;
    EXPECT_EQ(v.find("(an fp32 run)") != std::string::npos, !reduced) << v;
    bool warned = false;
    for (const auto& r : d.recommendations) warned |= r.id == "no_master_weights";
    EXPECT_EQ(warned, reduced);
  }
}

TEST(Verdict, ASkippedStepSaysWhereItsInfStartedAndWhichSchedulerRanAhead) {
  ReportData d;
  d.path = "s.ampscope";
  d.meta = make_fixture().meta;
  d.steps = make_fixture().steps;
  profiler::BackwardCheck check;
  check.step = 3;
  check.skipped = true;
  check.gradients = 7;
  check.nonfinite = 2;
  check.module = "fc2";
  check.side = profiler::GradientSide::kOutput;
  d.backward_inf = profiler::summarize_backward_checks({check});
  profiler::SchedulerSummary drifting;
  drifting.name = "StepLR";
  drifting.calls = drifting.optimizer_steps = 4;
  drifting.after_skipped = 1;
  d.schedulers = {drifting};
  finish_report(d);
  const auto v = joined(d.verdict);
  EXPECT_NE(v.find("The first non-finite gradient in backward arrived at fc2's output (from the loss or code between "
                   "modules) at step 3;"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("StepLR advanced after 1 optimizer step GradScaler skipped: its schedule runs 1 step ahead of the "
                   "optimizer."),
            std::string::npos)
      << v;
}

TEST(Verdict, ACpuSessionSaysNoGpuWasTracedAndWouldUnderflow) {
  auto f = make_fixture();
  f.meta.device = "cpu";
  f.meta.device_name = "";
  f.meta.precision = "bf16";
  f.meta.scaler_enabled = false;
  f.meta.gpu_tracing = "no GPU";
  for (auto& r : f.op_stats) r.gpu_time_ns = r.cast_gpu_time_ns = r.tensor_core_gpu_time_ns = 0;
  for (auto& s : f.steps) s.skipped = false, s.loss_scale = 1;
  for (auto& g : f.gradients) g.loss_scale = 1;
  f.steps[2].loss = std::numeric_limits<double>::quiet_NaN();
  const auto v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("No GPU was traced, so op times are CPU times; GPU tracing: no GPU."),
            std::string::npos)
      << v;
  // A bf16 run's gradients against fp16: which loss scales would carry them, not the shares
  // at this run's scale of 1, which no fp16 run uses. The fixture's 2^40 elements below
  // 2^-63, the smallest 1e-30 (2^-99.7), flush up to 2^74; its largest, 3.5, overflows above 2^14.
  EXPECT_NE(v.find("No loss scale fits these gradients in fp16: keeping all but 0.10% of the nonzero elements "
                   "from flushing to zero needs 2^75, and above 2^14 the largest (|g| = 3.50) overflows. At 2^14, "
                   "100% of the nonzero elements flush to zero, carrying at most <0.01% of the gradients' L2 norm; "
                   "bf16 has fp32's range (step 4)."),
            std::string::npos)
      << v;
  EXPECT_EQ(v.find("would underflow fp16 at scale 1"), std::string::npos) << v;
  EXPECT_NE(v.find("The loss stopped being finite at step 3."), std::string::npos) << v;
  EXPECT_EQ(v.find("skipped"), std::string::npos) << v;
  EXPECT_EQ(v.find("Tensor Core"), std::string::npos) << v;
  EXPECT_EQ(v.find("oneDNN"), std::string::npos) << "no recorded answer, no claim:\n" << v;

  f.meta.cpu_isa = "AVX2";
  f.meta.cpu_bf16_matmul = kCpuMatmulFallback;
  const auto recorded = joined(session_report(f).verdict);
  EXPECT_NE(recorded.find("Its bf16 matrix multiplies may be slow, as PyTorch has no oneDNN bf16 "
                          "kernels on this CPU (vector ISA AVX2)"),
            std::string::npos)
      << recorded;
}

// "0% of gradients underflow" is about what a cast could still lose. An fp16 backward at a
// tiny loss scale flushes the gradients itself, before the unscale: they arrive as zeros,
// and the verdict said 0% underflow while nothing trained.
TEST(Verdict, GradientsThatAreAlreadyZeroAreSaidBesideTheUnderflow) {
  auto f = make_fixture();
  for (auto& g : f.gradients) {
    g.loss_scale = 1e-6;
    g.zero_fraction = 1.0;
    g.fp16_underflow_fraction = g.fp16_subnormal_fraction = g.fp16_overflow_fraction = 0.0;
  }
  auto v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("0% of gradients underflow fp16 at scale 1e-06 (step 4), but every gradient element was exactly "
                   "zero: the step had nothing to apply (with a loss scale below 1, fp16's backward flushes small "
                   "values to zero before the unscale)."),
            std::string::npos)
      << v;
  for (auto& g : f.gradients) g.loss_scale = 65536;
  v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("(step 4), but every gradient element was exactly zero: the step had nothing to apply."),
            std::string::npos)
      << v;
  // fc1.weight 4096 elements half zero, fc1.bias 64 none: 49.2% by element.
  for (auto& g : f.gradients) g.zero_fraction = g.parameter == "fc1.weight" ? 0.5 : 0.0;
  v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("(step 4); 49% of the elements were exactly zero before any cast, where an fp16 backward's "
                   "flushed values end up."),
            std::string::npos)
      << v;
  for (auto& g : f.gradients) g.zero_fraction = 0.04;
  v = joined(session_report(f).verdict);
  EXPECT_NE(v.find("at scale 65536 (step 4)."), std::string::npos) << v;
}

TEST(Verdict, AnEmptySessionClaimsNothing) {
  ReportData d;
  d.meta.gpu_tracing = "cupti";
  finish_report(d);
  EXPECT_TRUE(d.verdict.empty()) << joined(d.verdict);
}

}  // namespace
}  // namespace ampscope::test
