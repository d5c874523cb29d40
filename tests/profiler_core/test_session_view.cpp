// The one loader of a recorded session: what `summary`, the JSON summary, the HTML
// report and the GUI show comes from one SessionView, so it must hold what the
// store holds, count profiled steps the way the stored table was made, rebuild a
// missing op table, and open a file the user hands over once, whatever it holds.
#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/export/json_summary.h"
#include "profiler/store/comparison_store.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_view.h"
#include "tests/profiler_core/session_fixture.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

const OpStats* find_row(const std::vector<OpStats>& rows, const std::string& name, bool top_level) {
  const auto it = std::find_if(rows.begin(), rows.end(),
                               [&](const OpStats& r) { return r.name == name && r.top_level == top_level; });
  return it == rows.end() ? nullptr : &*it;
}

TEST(SessionView, HoldsWhatTheStoreHolds) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  const Fixture f = make_fixture();
  write_fixture_file(path, f);

  const SessionView v = load_session_view(path);
  const SessionReader r = SessionReader::open(path);
  EXPECT_EQ(v.path, path);
  EXPECT_EQ(v.meta.model, "MLP 2x64");
  EXPECT_EQ(v.meta_values.at(meta_key::kPrecision), "fp16");
  ASSERT_EQ(v.steps.size(), 4u);
  EXPECT_EQ(v.steps[1].skipped, true);
  ASSERT_EQ(v.op_stats.size(), f.op_stats.size());
  EXPECT_FALSE(v.op_stats_rebuilt);
  EXPECT_EQ(v.op_count, static_cast<int64_t>(f.ops.size()));
  EXPECT_EQ(v.kernel_count, static_cast<int64_t>(f.kernels.size()));
  // Category totals are profiler::category_totals of the table: one aggregation.
  const auto totals = category_totals(v.op_stats);
  ASSERT_EQ(v.category_totals.size(), totals.size());
  for (size_t i = 0; i < totals.size(); ++i) EXPECT_EQ(v.category_totals[i].cpu_time_ns, totals[i].cpu_time_ns);
  // No stored count (a session from before it was stored): the steps with ops.
  EXPECT_EQ(v.profiled_steps, 4);
  EXPECT_EQ(v.gpu_attribution.traced_ns, r.gpu_attribution().traced_ns);
  EXPECT_EQ(v.gpu_attribution.unattributed_ns, r.unattributed_gpu_ns());
  ASSERT_FALSE(v.top_kernels.empty());
  EXPECT_EQ(v.top_kernels.front().name, r.top_kernels(1).front().name);
  EXPECT_EQ(v.gradient_sampled_steps, 2u);
  ASSERT_EQ(v.latest_gradients.size(), 2u);
  EXPECT_EQ(v.latest_gradients.front().step, 4);
  ASSERT_EQ(v.gradient_summaries.size(), 2u);
  EXPECT_EQ(v.gradient_summaries.front().step, 2);
  EXPECT_EQ(v.gradient_summaries.back().step, 4);
  EXPECT_TRUE(v.gradient_history.empty());  // not asked for
  // Written without the profiler: it never said how the run ended.
  EXPECT_FALSE(v.health.closed);
  EXPECT_TRUE(v.has_profile());
}

TEST(SessionView, OptionsBoundWhatIsRead) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  write_fixture_file(path, make_fixture());
  SessionViewOptions options;
  options.top_kernels = 1;
  options.gradient_summaries = 1;
  options.gradient_history_steps = 1;
  const SessionView v = load_session_view(path, options);
  EXPECT_EQ(v.top_kernels.size(), 1u);
  ASSERT_EQ(v.gradient_summaries.size(), 1u);
  EXPECT_EQ(v.gradient_summaries.front().step, 4);  // the last sample is always in
  ASSERT_EQ(v.gradient_history.size(), 2u);         // both parameters of the last sampled step
  EXPECT_EQ(v.gradient_history.front().step, 4);
}

// A script that does not clip gets its gradient norm from the range samples: the samples'
// norms add in squares, as clip_grad_norm_'s per-tensor norms do; an inf/NaN element makes it
// inf (the per-parameter norms count finite elements only, and would understate it).
TEST(SessionView, ASampledStepsGradientNormIsItsParametersNormsAddedInSquares) {
  const auto sample = [](int64_t step, double norm, double nonfinite) {
    GradientSample g;
    g.step = step;
    g.parameter = "w" + std::to_string(norm);  // (step, parameter) is the table's key
    g.numel = 10;
    g.norm = norm;
    g.nonfinite_fraction = nonfinite;
    return g;
  };
  EXPECT_DOUBLE_EQ(total_gradient_norm({sample(3, 3.0, 0), sample(3, 4.0, 0), sample(3, 12.0, 0)}), 13.0);
  EXPECT_EQ(total_gradient_norm({sample(5, 3.0, 0), sample(5, 4.0, 0.1)}), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(total_gradient_norm({})));

  // The loader reads them per step from the stored samples, all steps whatever the options.
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  {
    auto writer = SessionWriter::create(path, SessionMeta{}, false);
    writer->append_gradients({sample(10, 0.3, 0), sample(10, 0.4, 0), sample(20, 3.0, 0), sample(20, 4.0, 0.5),
                              sample(30, 6.0, 0), sample(30, 8.0, 0), sample(40, 0.6, 0), sample(40, 0.8, 0)});
    writer->close();
  }
  SessionViewOptions few;
  few.gradient_summaries = 0;
  const std::vector<SampledGradientNorm> steps = load_session_view(path, few).sampled_gradient_norms;
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[1].step, 20);
  EXPECT_EQ(steps[1].norm, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(steps[2].norm, 10.0);
  EXPECT_EQ(sampled_gradient_norm_text(steps),
            "0.500 at step 10 to 1.00 at step 40, largest 10.0 at step 30 (4 range-sampled steps; inf/NaN at 1 of "
            "them)");
  EXPECT_EQ(sampled_gradient_norm_text({steps[0]}), "0.500 at step 10 (1 range-sampled step)");
  EXPECT_EQ(sampled_gradient_norm_text({steps[1]}), "inf/NaN (1 range-sampled step)");
  EXPECT_EQ(sampled_gradient_norm_text({}), "");
}

// The profiler stores the count with each save of the op table, so per-step times
// of a killed run's (older) table divide by the steps that table covers.
TEST(SessionView, TheStoredProfiledStepCountDescribesTheStoredTable) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  {
    auto w = SessionWriter::create(path, make_fixture().meta);
    write_fixture(*w, make_fixture());
    w->set_meta_value(meta_key::kProfiledSteps, "3");
    w->close();
  }
  EXPECT_EQ(load_session_view(path).profiled_steps, 3);
  {
    // Not a count: counted from the ops instead of trusted.
    auto w = SessionWriter::create(path, make_fixture().meta, true);
    write_fixture(*w, make_fixture());
    w->set_meta_value(meta_key::kProfiledSteps, "3 steps");
    w->close();
  }
  EXPECT_EQ(load_session_view(path).profiled_steps, 4);
}

// Ops after the last completed step (a run stopped mid-step, a Python loop's
// GradScaler.update() after its last optimizer step) are in the table, but make no
// profiled step of their own: per-step times divide by the completed steps.
TEST(SessionView, OpsAfterTheLastCompletedStepMakeNoProfiledStep) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  Fixture f = make_fixture();
  OpRecord trailing = f.ops.front();
  trailing.id = 999;
  trailing.step = 5;  // no StepRecord 5
  f.ops.push_back(trailing);
  write_fixture_file(path, f);
  EXPECT_EQ(load_session_view(path).profiled_steps, 4);
}

// A run killed before its op table was first saved left ops but no table: the view
// rebuilds it with the live profiler's aggregation, and says so.
TEST(SessionView, AMissingOpTableIsRebuiltFromTheRecordedOps) {
  ScratchDir dir;
  const std::string path = dir / "killed.ampscope";
  const Fixture f = make_fixture();
  {
    auto w = SessionWriter::create(path, f.meta);
    for (const auto& s : f.steps) w->append_step(s);
    w->append_ops(std::vector<OpRecord>(f.ops));
    w->append_kernels(std::vector<KernelRecord>(f.kernels));
    w->close();
  }
  ASSERT_TRUE(SessionReader::open(path).op_stats().empty());
  const SessionView v = load_session_view(path);
  EXPECT_TRUE(v.op_stats_rebuilt);
  const OpStats* linear = find_row(v.op_stats, "aten::linear", true);
  ASSERT_NE(linear, nullptr);
  const OpStats* stored = find_row(f.op_stats, "aten::linear", true);
  // The fixture's stored row holds the 4 steps' calls; the profiler leaves step 1, the warm-up,
  // out of its table (warmup_step.h), and so does the rebuilt one.
  int64_t step1_ns = 0;
  for (const OpRecord& op : f.ops)
    if (op.step == 1 && op.name == "aten::linear") step1_ns += op.end_ns - op.start_ns;
  ASSERT_GT(step1_ns, 0);
  EXPECT_EQ(linear->calls, stored->calls - 1);
  EXPECT_EQ(linear->cpu_time_ns, stored->cpu_time_ns - step1_ns);
  ASSERT_TRUE(v.warmup_left_out.has_value());
  EXPECT_EQ(v.warmup_left_out->step, 1);
  EXPECT_EQ(linear->category, OpCategory::kDemoted);
  EXPECT_EQ(linear->module, "fc1");
  EXPECT_GT(linear->gpu_time_ns, 0);  // the kernels were joined to their ops
  ASSERT_NE(find_row(v.op_stats, "AddmmBackward0", true), nullptr);
  ASSERT_NE(find_row(v.op_stats, "aten::_to_copy", false), nullptr);
  EXPECT_EQ(v.profiled_steps, 3);
  EXPECT_FALSE(v.category_totals.empty());
}

// Profiled steps are slower by what capture costs (issue #27): the view tells
// the steps with ops from those with range samples and from the others, so the
// step time shown is the unprofiled steps', the overhead is the profiled steps'
// against it, and a sample's cost is stated apart (one median of both read
// "capture overhead 116×" on an H200, for steps at 1.2× and samples at 207 steps).
TEST(SessionView, StepTimesOfProfiledStepsAreToldApart) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  Fixture f = make_fixture();  // ops in steps 1-4, gradient samples at 2 and 4
  for (auto& s : f.steps) s.step_time_ms = s.step % 2 == 0 ? 50.0 : 12.0;
  for (int64_t step = 5; step <= 9; ++step) {
    StepRecord plain = f.steps.back();
    plain.step = step;
    plain.step_time_ms = step == 7 ? 30.0 : 10.0;  // an outlier the median ignores
    f.steps.push_back(plain);
  }
  write_fixture_file(path, f);
  const SessionView v = load_session_view(path);
  EXPECT_EQ(v.step_timing.recorded_steps, 2);
  EXPECT_EQ(v.step_timing.sampled_steps, 2);
  EXPECT_EQ(v.step_timing.unrecorded_steps, 5);
  EXPECT_EQ(v.step_timing.recorded_median_ms, 12.0);
  EXPECT_EQ(v.step_timing.sampled_median_ms, 50.0);
  EXPECT_EQ(v.step_timing.unrecorded_median_ms, 10.0);
  EXPECT_EQ(v.step_timing.step_ms(), 10.0);
  ASSERT_TRUE(v.step_timing.capture_overhead());
  EXPECT_DOUBLE_EQ(*v.step_timing.capture_overhead(), 1.2);
  ASSERT_TRUE(v.step_timing.sample_cost());
  EXPECT_DOUBLE_EQ(*v.step_timing.sample_cost(), 4.0);
  const auto json = session_summary(v)["training"]["step_time"];
  EXPECT_EQ(json["step_time_ms"], 10.0);
  EXPECT_DOUBLE_EQ(json["capture_overhead"].get<double>(), 1.2);
  EXPECT_DOUBLE_EQ(json["sample_cost_steps"].get<double>(), 4.0);
  EXPECT_EQ(json["includes_capture"], false);

  // Every step profiled: no overhead can be measured, and the step time includes capture.
  const std::string all = dir / "all.ampscope";
  write_fixture_file(all, make_fixture());
  const SessionView every = load_session_view(all);
  EXPECT_TRUE(every.step_timing.every_step_recorded());
  EXPECT_FALSE(every.step_timing.capture_overhead());
  const auto every_json = session_summary(every)["training"]["step_time"];
  EXPECT_EQ(every_json["includes_capture"], true);
  EXPECT_TRUE(every_json["capture_overhead"].is_null());
}

// The memory peak with the range samples' rise told apart (memory_peak.h), in the JSON
// summary (the words `summary`, the report and the GUI use: test_html_report, test_ui_python_session).
TEST(SessionView, TheMemoryPeakSaysWhatTheRangeSampledStepsRaisedItTo) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  Fixture f = make_fixture();  // gradient samples at 2 and 4
  f.meta.device = "cuda:0";
  for (auto& s : f.steps) s.mem_peak_bytes = s.step == 1 ? int64_t{1} << 30 : int64_t{3} << 29;  // 2: the sample's
  for (int64_t step = 5; step <= 8; ++step) {
    StepRecord plain = f.steps.back();
    plain.step = step;
    f.steps.push_back(plain);
  }
  write_fixture_file(path, f);
  const SessionView v = load_session_view(path);
  EXPECT_EQ(v.memory_peak.peak_bytes, int64_t{3} << 29);
  EXPECT_EQ(v.memory_peak.outside_samples_bytes.value_or(0), int64_t{1} << 30);
  const auto json = session_summary(v)["training"]["memory"];
  EXPECT_EQ(json["kind"], "peak memory");
  EXPECT_EQ(json["peak_bytes"], int64_t{3} << 29);
  EXPECT_EQ(json["peak_outside_samples_bytes"], int64_t{1} << 30);
  EXPECT_EQ(json["raised_by_samples"], true);
}

// The profiler's own kernels by name: the costliest kept, costliest first, and a
// damaged or foreign value reads as none rather than failing the session.
TEST(SessionView, TheProfilersOwnKernelsKeepTheCostliestFirst) {
  const std::string json = profiler::own_kernels_json(
      {{"copy", 10, 500}, {"reduce", 3, 9000}, {"compare", 40, 700}, {"tiny", 1, 1}}, 3);
  const auto kept = profiler::own_kernels_from_meta({{profiler::meta_key::kProfilerOwnKernelNames, json}});
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].name, "reduce");
  EXPECT_EQ(kept[0].calls, 3);
  EXPECT_EQ(kept[0].gpu_ns, 9000);
  EXPECT_EQ(kept[1].name, "compare");
  EXPECT_EQ(kept[2].name, "copy");
  for (const char* damaged : {"", "{", "{\"name\": 1}", "[1, {\"calls\": 2}]"})
    EXPECT_TRUE(profiler::own_kernels_from_meta({{profiler::meta_key::kProfilerOwnKernelNames, damaged}}).empty())
        << damaged;
  EXPECT_TRUE(profiler::own_kernels_from_meta({}).empty());
}

TEST(SessionView, AFileIsOpenedOnceAndSaysWhatItHolds) {
  ScratchDir dir;
  const std::string session = dir / "s.ampscope";
  write_fixture_file(session, make_fixture());
  const RecordedFile s = open_recorded_file(session);
  ASSERT_TRUE(s.session.has_value());
  EXPECT_FALSE(s.comparison.has_value());
  EXPECT_EQ(s.session->steps.size(), 4u);

  const std::string comparison = dir / "c.ampscope";
  Comparison c;
  c.meta.model = "MLP 2x64";
  c.planned_repeats = 2;
  VariantRun fp32;
  fp32.variant = fp32.precision = "fp32";
  {
    auto writer = ComparisonWriter::create(comparison, c, false);
    writer->add_variant(fp32);
  }
  const RecordedFile file = open_recorded_file(comparison);
  ASSERT_TRUE(file.comparison.has_value());
  EXPECT_FALSE(file.session.has_value());
  EXPECT_EQ(file.comparison->planned_repeats, 2);
  ASSERT_EQ(file.comparison->variants.size(), 1u);
  EXPECT_EQ(file.comparison->variants.front().variant, "fp32");
  try {
    (void)load_session_view(comparison);
    ADD_FAILURE() << "a comparison loaded as a session";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("holds a comparison"), std::string::npos) << e.what();
  }
  try {
    (void)open_recorded_file(dir / "missing.ampscope");
    ADD_FAILURE() << "a missing file opened";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open session"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ampscope::test
