// The HTML report: loaded from a real session file or a comparison, it is one
// well-formed, self-contained page (no URL at all) that shows what a user needs:
// the verdict and speedups, the op table, skipped steps marked, no "nan" in charts,
// and a small file for a huge run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <tuple>

#include "profiler/number_text.h"
#include "profiler/report/html_report.h"
#include "profiler/report/report_data.h"
#include "profiler/report/svg_chart.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/sqlite_util.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/report/report_fixture.h"

namespace ampscope::test {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

constexpr const char* kComparisonPath = "/tmp/runs/cmp.ampscope";

TEST(HtmlReport, SessionFileBecomesOneSelfContainedPage) {
  ScratchDir dir;
  const auto session = (dir / "run.ampscope").string();
  write_fixture_file(session, make_fixture());
  const auto data = load_report(session);
  EXPECT_EQ(data.kind, ReportData::Kind::kSession);
  EXPECT_EQ(data.profiled_steps, 4);
  EXPECT_EQ(data.steps.size(), 4u);
  ASSERT_EQ(data.gradient_summaries.size(), 2u);
  EXPECT_EQ(data.gradient_summaries.back().step, 4);
  EXPECT_FALSE(data.top_kernels.empty());
  EXPECT_FALSE(data.verdict.empty());

  const auto out = (dir / "report.html").string();
  write_html_report(data, out);
  const auto html = read(out);
  EXPECT_EQ(html, render_html(data));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_NE(entry.path().extension(), ".tmp") << "a temporary file was left: " << entry.path();
  expect_self_contained(html);
  expect_python_accepts(out);

  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(contains(html, "prefers-color-scheme: dark"));
  for (const auto& line : data.verdict) EXPECT_TRUE(contains(html, line.substr(0, 20))) << line;
  // Header, op table (escaped), kernels with their Tensor Core column, gradients, footer.
  EXPECT_TRUE(contains(html, "MLP 2x64"));
  EXPECT_TRUE(contains(html, "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(contains(html, "<code>aten::linear</code>"));
  EXPECT_TRUE(contains(html, "my_op &quot;fused, fast&quot;"));
  EXPECT_TRUE(contains(html, "fp32 inputs, &quot;no&quot; autocast"));
  EXPECT_TRUE(contains(html, "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64"));
  EXPECT_TRUE(contains(html, "elementwise_kernel&lt;128, 4, &quot;add,mul&quot;&gt;"));
  EXPECT_TRUE(contains(html, ">Tensor Cores<"));
  EXPECT_TRUE(contains(html, "fc1.weight"));
  EXPECT_TRUE(contains(html, "flushes to 0 in fp16"));
  EXPECT_TRUE(contains(html, "report by ampscope"));
  EXPECT_TRUE(contains(html, "run.ampscope"));
  // Step 2 was skipped: a red tick on the loss plot, listed in its tooltip.
  EXPECT_TRUE(contains(html, std::string("stroke=\"") + svg::kMarkerColor));
  EXPECT_TRUE(contains(html, "skipped step (1): 2"));
  EXPECT_TRUE(contains(html, "1 skipped step is marked"));
  // Validation after steps 2 and 4: the last eval loss in the figures, a second series
  // on the loss chart with a dot at each of the two validations.
  EXPECT_TRUE(contains(html, "eval loss (step 4)"));
  EXPECT_TRUE(contains(html, "<title>eval loss</title></path>"));
  size_t dots = 0;
  for (size_t at = html.find("<circle"); at != std::string::npos; at = html.find("<circle", at + 1)) ++dots;
  EXPECT_EQ(dots, 2u);
}

// Where the kernel table left the warm-up step out (as the op table does), the kernels
// section says what its kernels took, beneath the attribution line it shares steps with.
TEST(HtmlReport, TheKernelsSectionSaysWhatTheWarmUpStepsKernelsTook) {
  ScratchDir dir;
  const auto session = (dir / "run.ampscope").string();
  write_fixture_file(session, make_fixture());
  ReportData data = load_report(session);
  const std::string said = "Step 1 left out as warm-up: its 1,234 kernels took";
  EXPECT_FALSE(contains(render_html(data), said));
  WarmupLeftOut left_out;
  left_out.kernels_left_out = true;
  left_out.kernels = 1234;
  left_out.kernel_gpu_ns = 7'000'000;
  left_out.unattributed_gpu_ns = 1'000'000;
  data.warmup_left_out = left_out;
  const std::string html = render_html(data);
  const size_t kernels = html.find("Top GPU kernels");
  ASSERT_NE(kernels, std::string::npos);
  const size_t at = html.find(said, kernels);
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(html.find("of it with no op", at), std::string::npos);
  EXPECT_LT(html.find("GPU time with no op:", kernels), at);
}

// Time by phase: a row per phase of the same top-level rows the categories sum, the
// forward's and the backward's CPU time per profiled step as profiler::phase_totals has them.
TEST(HtmlReport, TimeByPhaseHasARowPerPhaseAddingUpAsTheCategoriesDo) {
  ScratchDir dir;
  const auto session = (dir / "run.ampscope").string();
  write_fixture_file(session, make_fixture());
  const auto data = load_report(session);
  const auto html = render_html(data);
  const size_t at = html.find("<h3>Time by phase</h3>");
  ASSERT_NE(at, std::string::npos);
  const std::string table = html.substr(at, html.find("</table>", at) - at);
  const auto phases = phase_totals(data.op_stats);
  ASSERT_GE(phases.size(), 2u);
  int64_t phase_cpu = 0, category_cpu = 0;
  for (const auto& p : phases) {
    phase_cpu += p.cpu_time_ns;
    const std::string row = "<tr><td>" + std::string(to_string(p.phase)) + "</td>";
    ASSERT_TRUE(contains(table, row)) << row << "\n" << table;
    const std::string cpu_per_step = ampscope::profiler::text::ns_as_ms(static_cast<double>(p.cpu_time_ns) /
                                                                        static_cast<double>(data.profiled_steps));
    EXPECT_TRUE(contains(table.substr(table.find(row)), "<td class=\"num\">" + cpu_per_step + "</td>"))
        << to_string(p.phase) << " " << cpu_per_step << "\n" << table;
  }
  for (const auto& c : data.category_totals) category_cpu += c.cpu_time_ns;
  EXPECT_EQ(phase_cpu, category_cpu);
}

// The fixture's session, written into `dir` and loaded as `report` loads it.
ReportData fixture_report(const ScratchDir& dir) {
  const auto session = (dir / "run.ampscope").string();
  write_fixture_file(session, make_fixture());
  return load_report(session);
}

// The summary's figures are numbers in large type; the sentences that qualify them (capture
// in the step time, the range samples' spacing and cost) are notes under them. As figures
// they took a card each, ten lines tall.
TEST(HtmlReport, SummaryFiguresAreShortAndWhatQualifiesThemIsWrittenUnder) {
  ScratchDir dir;
  ReportData data = fixture_report(dir);
  ASSERT_TRUE(data.step_timing.any_recorded());
  data.range_sampling = "every 10 steps, spaced to every 70 from step 51 to keep samples within 5 % of the run's time";
  data.range_sample_phases =
      RangeSamplePhases{.samples = 4, .gradients_ms = 4, .activations_ms = 2, .readiness_ms = 12};
  const std::string html = render_html(data);
  const std::string value_open = "<div class=\"value\">";
  size_t figures = 0;
  for (size_t at = html.find(value_open); at != std::string::npos; at = html.find(value_open, at + 1)) {
    const size_t begin = at + value_open.size();
    std::string value = html.substr(begin, html.find("</div>", begin) - begin);
    value = std::regex_replace(value, std::regex("<[^>]*>"), "");
    EXPECT_LE(value.size(), 24u) << value;
    ++figures;
  }
  EXPECT_GE(figures, 5u);
  EXPECT_TRUE(contains(html, "median step (profiled: includes capture)")) << html.substr(0, 4000);
  EXPECT_TRUE(contains(html, "<ul class=\"notes\"><li>Step time: median step"));
  EXPECT_TRUE(contains(html, "every step was profiled, so this includes capture"));
  EXPECT_TRUE(contains(html, "<li>Range samples: every 10 steps, spaced to every 70 from step 51"));
  EXPECT_TRUE(contains(html, "own passes on the training thread (mean of 4): readiness 3.0 ms"));

  // Range samples that raised the memory high-water mark: the figure is the mark, the note
  // says what the other steps reached (memory_peak.h).
  data.memory_peak = {.peak_bytes = int64_t{3} << 29, .outside_samples_bytes = int64_t{1} << 30};
  const std::string raised = render_html(data);
  EXPECT_TRUE(contains(raised, "1.50 GiB")) << raised.substr(0, 4000);
  EXPECT_TRUE(contains(raised, "<li>Peak memory: 1.50 GiB; 1.00 GiB outside range-sampled steps (a sample holds the "
                                    "modules&#39; outputs"));
  data.memory_peak.outside_samples_bytes = int64_t{3} << 29;
  EXPECT_FALSE(contains(render_html(data), "outside range-sampled steps"));
}

// The gradient table lists what a cast to fp16 loses first (flushed, overflowed), then
// what loses precision (subnormal): with nothing outside the range it was in parameter order.
TEST(HtmlReport, TheParametersNearestFp16sEdgeComeFirst) {
  ScratchDir dir;
  ReportData data = fixture_report(dir);
  ASSERT_FALSE(data.latest_gradients.empty());
  const GradientSample base = data.latest_gradients.front();
  auto sample = [&](const std::string& name, double underflow, double subnormal) {
    GradientSample g = base;
    g.parameter = name;
    g.fp16_underflow_fraction = underflow;
    g.fp16_overflow_fraction = 0;
    g.fp16_subnormal_fraction = subnormal;
    return g;
  };
  data.latest_gradients = {sample("a.weight", 0, 0.01), sample("b.weight", 0, 0.30), sample("c.weight", 0.05, 0),
                           sample("d.weight", 0, 0)};
  const std::string html = render_html(data);
  const size_t table = html.find("Parameters nearest fp16's edge");
  ASSERT_NE(table, std::string::npos);
  auto at = [&](const char* name) { return html.find(std::string("<code>") + name + "</code>", table); };
  const size_t a = at("a.weight"), b = at("b.weight"), c = at("c.weight"), d = at("d.weight");
  ASSERT_NE(d, std::string::npos);
  EXPECT_LT(c, b);
  EXPECT_LT(b, a);
  EXPECT_LT(a, d);
}

// A session whose steps never reached a range sample (8 steps, samples every 10) says so
// and how it sampled, as summary and the GUI do, rather than that nothing was sampled at all.
TEST(HtmlReport, ASessionWithNoGradientSampleSaysByWhichStepAndHowItSampled) {
  ScratchDir dir;
  ReportData data = fixture_report(dir);
  data.latest_gradients.clear();
  data.step = 8;
  data.range_sampling = "every 10 steps (within the 5 % budget)";
  const std::string html = render_html(data);
  EXPECT_TRUE(contains(html, "No gradient range sample by step 8: range samples every 10 steps "
                             "(within the 5 % budget)."))
      << html.substr(std::min(html.size(), html.find("id=\"gradients\"")), 600);
  EXPECT_FALSE(contains(html, "No gradient statistics were sampled"));
  expect_self_contained(html);
}

// Under fp16 autocast the backward flushes what fp16 cannot hold before the unscale, so the
// gradients' "flushed to 0" is near 0 while the flushed values are zeros: the report says
// where to look. A bf16 run's backward flushes nothing of fp16's, and says nothing of it.
TEST(HtmlReport, AnFp16SessionSaysItsFlushedGradientsAreTheZeros) {
  ScratchDir dir;
  ReportData data = fixture_report(dir);
  ASSERT_EQ(data.meta.precision, "fp16");
  for (auto& g : data.latest_gradients) g.zero_fraction = g.parameter == "fc1.weight" ? 0.5 : 0.0;
  const std::string html = render_html(data);
  // fc1.weight's 4096 elements half zero, fc1.bias's 64 none: 49.2 %.
  EXPECT_TRUE(contains(html, "This run&#39;s backward computed in fp16, so what fp16 could not hold was flushed "
                             "there, before the unscale, and reaches these gradients as exact zeros: 49% of the "
                             "elements"))
      << html.substr(html.find("Gradient range"), 3000);
  data.meta.precision = "bf16";
  EXPECT_FALSE(contains(render_html(data), "backward computed in fp16"));
}

// A bf16 run's report plots the fp16 loss scales that would carry its gradients at each
// sample: as training converges the gradients shrink and the least scale rises, which the
// latest sample alone does not show. An fp16 run's (read low: its backward flushed) has none.
TEST(HtmlReport, ABf16RunPlotsTheFp16LossScaleWindowPerSample) {
  ScratchDir dir;
  ReportData data = fixture_report(dir);
  data.meta.precision = "bf16";
  data.gradient_summaries.clear();
  for (const auto& [step, lowest, highest] : {std::tuple{10, -6, 19}, std::tuple{50, 2, 18}, std::tuple{90, 12, 18}}) {
    GradientStepSummary g;
    g.step = step;
    g.numel = 100;
    g.fp16_window = LossScaleWindow{.step = step, .lowest_log2 = lowest, .highest_log2 = highest, .max_abs = 0.1};
    data.gradient_summaries.push_back(g);
  }
  std::string html = render_html(data);
  EXPECT_TRUE(contains(html, "<title>fp16 loss scales that would carry the gradients, per sample</title>"));
  // (Powers of two as superscripts.)
  EXPECT_TRUE(contains(html, "fp16 loss scales that would carry the gradients: 2<sup>-6</sup> to 2<sup>19</sup> at "
                             "step 10, 2<sup>12</sup> to 2<sup>18</sup> at step 90."))
      << html.substr(html.find("per sample</title>"), 200);
  data.gradient_summaries.back().fp16_window->lowest_log2 = 20;
  EXPECT_TRUE(contains(render_html(data), "2<sup>19</sup> at step 10, none at step 90."));
  data.meta.precision = "fp16";
  EXPECT_FALSE(contains(render_html(data), "fp16 loss scales that would carry the gradients"));
}

TEST(HtmlReport, EveryFormatsSharesAndTheModuleWhereAnFp16OverflowStarted) {
  ScratchDir dir;
  const auto session = (dir / "act.ampscope").string();
  const Fixture f = make_fixture();
  {
    auto w = SessionWriter::create(session, f.meta);
    write_fixture(*w, f);
    std::vector<ActivationSample> acts(3);
    for (int i = 0; i < 3; ++i) {
      acts[i].step = 4;
      acts[i].order = i;
      acts[i].module = "blocks." + std::to_string(i);
      acts[i].dtype = "float16";
      acts[i].numel = 64;
    }
    acts[1].nonfinite_fraction = 0.5;  // blocks.1 overflowed; blocks.2 inherits it
    acts[2].nonfinite_fraction = 1.0;
    w->append_activations(std::move(acts));
    w->close();
  }
  const auto data = load_report(session);
  ASSERT_TRUE(data.first_fp16_overflow);
  EXPECT_EQ(data.first_fp16_overflow->module, "blocks.1");
  const auto html = render_html(data);
  expect_self_contained(html);
  // The formats table: every format with its limits and the fixture's shares.
  for (const char* format : {">fp16<", ">bf16<", ">fp8 e4m3<", ">fp8 e5m2<", ">448<", "NaN (no inf)"})
    EXPECT_TRUE(contains(html, format)) << format;
  EXPECT_TRUE(contains(html, "The first module whose output overflowed fp16: blocks.1 at step 4"));
  EXPECT_TRUE(contains(html, "<code>blocks.2</code>"));
}

// A tensor's sums in every format: `flushed` of its 1000 nonzero values flushed, 40 dB.
TensorQuantization quantized(TensorRole role, int64_t flushed) {
  TensorQuantization t{role, {}};
  for (QuantMetrics& m : t.formats) {
    m.elements = m.nonzero = 1000;
    m.flushed = flushed;
    m.signal = 1.0;
    m.noise = 1e-4;
  }
  return t;
}

TEST(HtmlReport, ReadinessIsAHeatMapOfLayersByFormatsWithEveryTensorInTheTitle) {
  ScratchDir dir;
  const auto session = (dir / "ready.ampscope").string();
  const Fixture f = make_fixture();
  {
    auto w = SessionWriter::create(session, f.meta);
    write_fixture(*w, f);
    w->append_readiness({{4, "fc1", quantized(TensorRole::weight, 0)},
                         {4, "fc1", quantized(TensorRole::input_activation, 0)},
                         {4, "fc2", quantized(TensorRole::weight, 0)},
                         {4, "fc2", quantized(TensorRole::input_activation, 260)}});
    w->close();
  }
  const auto data = load_report(session);
  const auto html = render_html(data);
  expect_self_contained(html);
  EXPECT_TRUE(contains(html, "<h2>Precision readiness</h2>"));
  EXPECT_TRUE(contains(html, "<table class=\"heat\">"));
  for (const QuantFormatSpec& spec : kQuantFormats) EXPECT_TRUE(contains(html, ">" + std::string(spec.name) + "<"));
  // fc1 is ready everywhere, down to NVFP4; fc2's input flushes 26%: red in every format.
  EXPECT_TRUE(contains(html, "<td class=\"ready\">NVFP4</td>"));
  EXPECT_TRUE(contains(html, "<td class=\"keep\">keep in bf16</td>"));
  EXPECT_TRUE(contains(html, "title=\"fc2, NVFP4 (e2m1, 16-blocks): keep in bf16\nweight: SQNR 40.0 dB, 0% flushed, 0% "
                             "saturated\ninput: SQNR 40.0 dB, 26% flushed, 0% saturated\">keep \u00b7 26% flushed (input)</td>"));
  EXPECT_TRUE(contains(html, "e2m1 (NVFP4): ready at &gt;= 17 dB SQNR"));
  EXPECT_TRUE(contains(html, "Measured: weights and layer inputs."));
}

TEST(HtmlReport, ASessionWithoutGpuSaysSoInsteadOfAKernelTable) {
  ScratchDir dir;
  auto f = make_fixture();
  f.meta.device = "cpu";
  f.meta.gpu_tracing = "no GPU";
  f.kernels.clear();
  for (auto& r : f.op_stats)
    r.gpu_time_ns = r.cast_gpu_time_ns = r.tensor_core_gpu_time_ns = r.kernels = 0;
  const auto session = (dir / "cpu.ampscope").string();
  write_fixture_file(session, f);
  const auto html = render_html(load_report(session));
  EXPECT_TRUE(contains(html, "No GPU activity was traced: no GPU."));
  EXPECT_FALSE(contains(html, "Top GPU kernels"));
  // Its memory is the process's resident set (3 MiB, the fixture's peak), not tensors' bytes.
  EXPECT_TRUE(contains(html, "peak resident set")) << html.substr(0, 4000);
  EXPECT_FALSE(contains(html, "peak memory"));
  EXPECT_TRUE(contains(render_html(fixture_report(dir)), "peak memory")) << "a CUDA session's allocator peak";
  expect_self_contained(html);
}

// A torch.compile'd run's first step compiled for 15 s; its steps take a few ms. The
// step-time chart keeps the steps readable and names the one it left off.
TEST(HtmlReport, TheStepTimeChartLeavesACompilingFirstStepOffItsScale) {
  auto f = make_fixture();
  ASSERT_GE(f.steps.size(), 3u);
  f.steps.front().step_time_ms = 15'021.0;
  ScratchDir dir;
  const auto session = (dir / "compiled.ampscope").string();
  write_fixture_file(session, f);
  const auto html = render_html(load_report(session));
  EXPECT_TRUE(contains(html, "off the scale: step " + std::to_string(f.steps.front().step) + " (15.02 s)"));
  f.steps.front().step_time_ms = f.steps.back().step_time_ms;
  const auto steady = (dir / "steady.ampscope").string();
  write_fixture_file(steady, f);
  EXPECT_FALSE(contains(render_html(load_report(steady)), "off the scale"));
}

TEST(HtmlReport, ANanLossLeavesNoNanInTheCharts) {
  ScratchDir dir;
  auto f = make_fixture();
  f.steps[1].loss = std::numeric_limits<double>::quiet_NaN();
  f.steps[2].loss = std::numeric_limits<double>::infinity();
  f.steps[3].step_time_ms = std::numeric_limits<double>::quiet_NaN();
  const auto session = (dir / "diverged.ampscope").string();
  write_fixture_file(session, f);
  const auto data = load_report(session);
  const auto html = render_html(data);
  const auto out = (dir / "diverged.html").string();
  write_html_report(data, out);
  expect_self_contained(html);
  expect_python_accepts(out);  // also rejects nan/inf inside SVG geometry
  for (const char* bad : {" nan", "nan ", "\"nan", "nan\"", "\"inf", "inf\"", " inf "})
    EXPECT_FALSE(contains(html, bad)) << bad;
}

TEST(HtmlReport, ComparisonShowsSpeedupsLossCurvesAndTheOpTable) {
  ScratchDir dir;
  auto c = gpu_comparison();
  c.variants[2].repeats[0][5].skipped = true;  // a second repeat skips step 6 too: one marker
  const auto data = comparison_report(c, kComparisonPath);
  const auto out = (dir / "cmp.html").string();
  write_html_report(data, out);
  const auto html = read(out);
  expect_self_contained(html);
  expect_python_accepts(out);
  EXPECT_TRUE(contains(html, "Precision comparison, cmp.ampscope"));
  EXPECT_TRUE(contains(html, "bf16 gave 2.4\u00d7 over fp32"));
  EXPECT_TRUE(contains(html, "<strong>2.4\u00d7</strong>"));          // the per-variant table
  EXPECT_TRUE(contains(html, "1.9\u00d7 \u2013 2.6\u00d7"));          // its spread
  EXPECT_TRUE(contains(html, "Loss, median of 3 repeats at each step"));  // overlaid curves
  EXPECT_TRUE(contains(html, "Loss minus fp32&#39;s loss")) << "the gap to fp32, where the curves overlap";
  EXPECT_TRUE(contains(html, "<code>aten::softmax</code>"));
  EXPECT_TRUE(contains(html, "<code>aten::layer_norm</code>"));
  EXPECT_TRUE(contains(html, ">kept_fp32<"));
  EXPECT_TRUE(contains(html, ">bf16 speedup<"));
  EXPECT_TRUE(contains(html, ">3.0\u00d7<")) << "linear: 60 ms in fp32, 20 ms in bf16";
  EXPECT_TRUE(contains(html, "skipped step (any repeat) (1): 6")) << "fp16's skipped step on the loss plot";
  EXPECT_TRUE(contains(html, "id=\"recommendations\""));
}

TEST(HtmlReport, CpuComparisonMarksSlowerOpsAndSaysNoGpuWasTraced) {
  const auto html = render_html(comparison_report(cpu_comparison(), kComparisonPath));
  expect_self_contained(html);
  EXPECT_TRUE(contains(html, "fp16 was 15\u00d7 slower than fp32 on this CPU"));
  EXPECT_TRUE(contains(html, "<span class=\"bad\">0.025\u00d7</span>")) << "linear 40x slower";
  EXPECT_TRUE(contains(html, "No GPU was traced, so op times are CPU times; GPU tracing: no GPU."));
  // Its memory column is the process's resident set, named so; a GPU comparison's is the allocator's.
  EXPECT_TRUE(contains(html, ">peak resident set<"));
  EXPECT_FALSE(contains(html, ">peak memory<"));
  EXPECT_TRUE(contains(render_html(comparison_report(gpu_comparison(), kComparisonPath)), ">peak memory<"));
}

TEST(HtmlReport, AComparisonFileLoadsAsAComparison) {
  ScratchDir dir;
  const auto path = (dir / "cmp.ampscope").string();
  const auto c = gpu_comparison();
  {
    auto w = ComparisonWriter::create(path, c, false);
    for (const auto& v : c.variants) {
      w->add_variant(v);
      for (size_t r = 0; r < v.repeats.size(); ++r)
        w->add_repeat(v.variant, static_cast<int64_t>(r), v.repeats[r]);
      w->set_profile(v.variant, v.op_stats, v.profiled_steps);
    }
  }
  const auto data = load_report(path);
  EXPECT_EQ(data.kind, ReportData::Kind::kComparison);
  ASSERT_TRUE(data.comparison);
  EXPECT_EQ(data.variant_summaries.size(), 3u);
  EXPECT_FALSE(data.op_rows.empty());
  EXPECT_EQ(data.variant_recommendations.size(), 2u) << "bf16 and fp16";
  EXPECT_TRUE(contains(render_html(data), "bf16 gave 2.4\u00d7 over fp32"));
}

TEST(HtmlReport, AHugeRunStaysASmallFile) {
  ReportData d;
  d.path = "huge.ampscope";
  d.meta.model = "MLP";
  d.meta.precision = "fp16";
  d.meta.scaler_enabled = true;
  d.meta.gpu_tracing = "no GPU";
  const int64_t n = 300'000;
  d.steps.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    auto& s = d.steps[static_cast<size_t>(i)];
    s.step = i + 1;
    s.loss = 3.0 / (1.0 + static_cast<double>(i) * 1e-4);
    s.loss_scale = (i / 1000) % 2 ? 32768 : 65536;
    s.skipped = i % 1000 == 999;
    s.step_time_ms = 5 + (i % 7);
  }
  finish_report(d);
  const auto html = render_html(d);
  EXPECT_LT(html.size(), 400'000u);
  expect_self_contained(html);
  EXPECT_TRUE(contains(html, "skipped step (300): 1000, 2000"));
}

TEST(HtmlReport, BadFilesAreOneLineErrors) {
  ScratchDir dir;
  auto one_line = [](const std::string& path, const std::string& expected) {
    try {
      load_report(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const StoreError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(expected), std::string::npos) << what;
    }
  };
  one_line((dir / "missing.ampscope").string(), "cannot open session");
  write_file(dir / "text.ampscope", "this is not a session\n");
  one_line((dir / "text.ampscope").string(), "text.ampscope");
  one_line(dir.path().string(), "directory");
}

TEST(HtmlReport, ProfiledStepsCountOnlyStepsWithOps) {
  ScratchDir dir;
  auto f = make_fixture();
  // 60 steps, ops in steps 1..4 (the fixture's) and in step 50.
  for (int64_t s = 5; s <= 60; ++s) {
    StepRecord st = f.steps.back();
    st.step = s;
    f.steps.push_back(st);
  }
  OpRecord late = f.ops.front();
  late.id = 9999;
  late.step = 50;
  f.ops.push_back(late);
  const auto session = (dir / "window.ampscope").string();
  write_fixture_file(session, f);
  EXPECT_EQ(load_report(session).profiled_steps, 5);
}

}  // namespace
}  // namespace ampscope::test
