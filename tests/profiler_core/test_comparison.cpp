// A comparison's summary (timing without warm-up, paired speedups, losses), its
// op matching across precisions, and its file round trip.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>

#include "profiler/analysis/comparison.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_writer.h"
#include "tests/support/test_support.h"

namespace ampscope::test {
namespace {

using namespace ampscope::profiler;

// Steps 1..n: the first `warmup` take 100 ms (compilation, allocator warm-up), the rest `ms`.
std::vector<StepRecord> run_steps(int n, int warmup, double ms, double final_loss, int64_t peak = 1000) {
  std::vector<StepRecord> steps;
  for (int i = 1; i <= n; ++i) {
    StepRecord s;
    s.step = i;
    s.step_time_ms = i <= warmup ? 100.0 : ms + 0.01 * i;
    s.loss = i == n ? final_loss : 3.0;
    s.mem_peak_bytes = peak;
    steps.push_back(s);
  }
  return steps;
}

OpStats op(const std::string& name, const std::string& module, Phase phase, std::vector<DtypeName> dtypes,
           std::vector<Shape> shapes, int64_t calls, int64_t cpu_ns, OpCategory category, bool top_level = true,
           int64_t cast_ns = 0) {
  OpStats r;
  r.name = name;
  r.module = module;
  r.phase = phase;
  r.input_dtypes = std::move(dtypes);
  r.input_shapes = std::move(shapes);
  r.calls = calls;
  r.cpu_time_ns = cpu_ns;
  r.category = category;
  r.top_level = top_level;
  r.cast_cpu_time_ns = cast_ns;
  r.cast_calls = cast_ns > 0 ? calls : 0;
  return r;
}

Comparison two_variant_comparison() {
  Comparison c;
  c.meta.model = "MLP 2x128";
  c.meta.device = "cpu";
  c.meta.device_name = "Some CPU";
  c.warmup_steps = 2;
  c.planned_repeats = 3;
  c.effective_batch = 64;
  VariantRun fp32;
  fp32.variant = "fp32";
  fp32.precision = "fp32";
  // Repeat medians ~10, 12, 11 ms; bf16's ~5, 4, 5.5 ms: paired speedups ~2, 3, 2.
  fp32.repeats = {run_steps(10, 2, 10.0, 1.0, 5000), run_steps(10, 2, 12.0, 1.0, 6000), run_steps(10, 2, 11.0, 1.0)};
  fp32.profiled_steps = 2;
  const Shape x{64, 128}, w{128, 128}, b{128};
  fp32.op_stats = {
      op("aten::linear", "fc1", Phase::kForward, {"float32", "float32", "float32"}, {x, w, b}, 2, 2'000'000,
         OpCategory::kUnchanged),
      op("aten::addmm", "fc1", Phase::kForward, {"float32", "float32", "float32"}, {b, x, w}, 2, 1'900'000,
         OpCategory::kUnchanged, /*top_level=*/false),
      op("aten::relu", "act", Phase::kForward, {"float32"}, {x}, 2, 200'000, OpCategory::kUnchanged),
  };
  VariantRun bf16;
  bf16.variant = "bf16";
  bf16.precision = "bf16";
  bf16.repeats = {run_steps(10, 2, 5.0, 1.01, 4000), run_steps(10, 2, 4.0, 1.01), run_steps(10, 2, 5.5, 1.01)};
  bf16.profiled_steps = 2;
  bf16.op_stats = {
      // Same op, same shapes, other dtypes: autocast demoted it; 0.5 ms of the 1 ms is casts.
      op("aten::linear", "fc1", Phase::kForward, {"float32", "float32", "float32"}, {x, w, b}, 2, 1'000'000,
         OpCategory::kDemoted, true, 500'000),
      op("aten::relu", "act", Phase::kForward, {"bfloat16"}, {x}, 2, 100'000, OpCategory::kUnchanged),
      // Only in bf16: a cast the model asked for.
      op("aten::to", "head", Phase::kForward, {"bfloat16"}, {x}, 2, 50'000, OpCategory::kExplicitCast),
  };
  c.variants = {fp32, bf16};
  return c;
}

TEST(ComparisonSummary, TimesExcludeWarmupAndSpeedupsArePairedByRepeat) {
  const auto s = summarize(two_variant_comparison());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].measured_steps, 3 * 8);
  // The 100 ms warm-up steps are not in the spread.
  EXPECT_LT(s[0].step_ms.max, 13.0);
  EXPECT_NEAR(s[0].step_ms.min, 10.03, 1e-9);
  ASSERT_EQ(s[0].repeat_median_ms.size(), 3u);
  EXPECT_NEAR(s[0].repeat_median_ms[1], 12.065, 1e-9);
  EXPECT_NEAR(s[0].speedup.median, 1.0, 1e-12);
  EXPECT_NEAR(s[1].speedup.min, 10.065 / 5.065, 1e-9);
  EXPECT_NEAR(s[1].speedup.median, 11.065 / 5.565, 1e-9);
  EXPECT_NEAR(s[1].speedup.max, 12.065 / 4.065, 1e-9);
  EXPECT_NEAR(s[1].samples_per_second, 64.0 / (s[1].step_ms.median / 1e3), 1e-6);
  EXPECT_EQ(s[0].peak_memory_bytes, 6000);
  EXPECT_DOUBLE_EQ(s[1].final_loss, 1.01);
  // No GPU: no peak to compare with.
  EXPECT_EQ(s[1].peak_flops_per_second, 0.0);
  EXPECT_EQ(s[1].utilization, 0.0);
}

TEST(ComparisonSummary, ADivergedRepeatMakesTheFinalLossNaNAndSkipsCount) {
  auto c = two_variant_comparison();
  c.variants[1].repeats[2].back().loss = std::nan("");
  c.variants[1].repeats[0][4].skipped = true;
  c.variants[1].repeats[0][5].skipped = true;
  const auto s = summarize(c);
  EXPECT_TRUE(std::isnan(s[1].final_loss));
  EXPECT_EQ(s[1].skipped_steps, 2);
  EXPECT_EQ(s[0].skipped_steps, 0);
}

TEST(ComparisonSummary, NoBaselineMeansNoSpeedup) {
  auto c = two_variant_comparison();
  c.variants.erase(c.variants.begin());
  const auto s = summarize(c);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].speedup.median, 0.0);
  EXPECT_FALSE(baseline_index(c).has_value());
}

TEST(ComparisonOps, MatchesTopLevelOpsByNameModulePhaseAndShapesAcrossDtypes) {
  const auto c = two_variant_comparison();
  const auto rows = match_ops(c);
  // linear, relu, to: the nested addmm is inside linear's time and not a row of its own.
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "aten::linear");
  ASSERT_EQ(rows[0].cells.size(), 2u);
  EXPECT_TRUE(rows[0].cells[0].present);
  EXPECT_TRUE(rows[0].cells[1].present);
  EXPECT_DOUBLE_EQ(rows[0].cells[0].time_ns_per_step, 1'000'000.0);  // 2 ms over 2 profiled steps
  EXPECT_DOUBLE_EQ(rows[0].cells[1].time_ns_per_step, 500'000.0);
  EXPECT_DOUBLE_EQ(rows[0].cells[1].cast_ns_per_step, 250'000.0);
  EXPECT_EQ(rows[0].cells[1].category, "demoted");
  EXPECT_DOUBLE_EQ(rows[0].speedup[1], 2.0);
  EXPECT_DOUBLE_EQ(rows[0].cells[0].calls_per_step, 1.0);

  const auto to = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.name == "aten::to"; });
  ASSERT_NE(to, rows.end());
  EXPECT_FALSE(to->cells[0].present);
  EXPECT_EQ(to->speedup[1], 0.0);  // nothing to compare with
  EXPECT_EQ(to->cells[1].category, "explicit_cast");
}

// Issue 31: fp32 and bf16 attention run different ATen kernels (memory-efficient
// against flash on an H200), and matched by exact name each precision's backward
// was a row of its own with the other side empty ("bf16: -"), twelve of them at the
// top of the table. Matched by what the user wrote, forward and backward are one row
// each, and each cell says which kernel op the variant ran.
TEST(ComparisonOps, AttentionKernelVariantsAreOneRowPerPhase) {
  Comparison c = two_variant_comparison();
  const Shape q{8, 12, 1024, 64}, lse{8, 12, 1024};
  c.variants[0].op_stats = {
      op("aten::scaled_dot_product_attention", "h.0.attn", Phase::kForward, {"float32", "float32", "float32"},
         {q, q, q}, 2, 4'000'000, OpCategory::kUnchanged),
      op("aten::_scaled_dot_product_efficient_attention_backward", "h.0.attn", Phase::kBackward,
         {"float32", "float32", "float32", "float32", "", "float32", "float32"}, {q, q, q, q, {}, q, lse}, 2,
         8'000'000, OpCategory::kUnchanged),
  };
  c.variants[1].op_stats = {
      op("aten::scaled_dot_product_attention", "h.0.attn", Phase::kForward, {"bfloat16", "bfloat16", "bfloat16"},
         {q, q, q}, 2, 1'000'000, OpCategory::kUnchanged),
      op("aten::_scaled_dot_product_flash_attention_backward", "h.0.attn", Phase::kBackward,
         {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "float32"}, {q, q, q, q, q, lse}, 2,
         2'000'000, OpCategory::kUnchanged),
  };
  const auto rows = match_ops(c);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.name, "aten::scaled_dot_product_attention");
    EXPECT_TRUE(row.cells[0].present && row.cells[1].present) << to_string(row.phase);
    EXPECT_EQ(row.input_shapes, (std::vector<Shape>{q, q, q})) << "q, k, v identify the call";
    EXPECT_DOUBLE_EQ(row.speedup[1], 4.0);
  }
  const auto& backward = rows[0];  // 4 ms per step in fp32: first
  ASSERT_EQ(backward.phase, Phase::kBackward);
  EXPECT_EQ(backward.cells[0].ran_as,
            (std::vector<std::string>{"aten::_scaled_dot_product_efficient_attention_backward"}));
  EXPECT_EQ(backward.cells[1].ran_as, (std::vector<std::string>{"aten::_scaled_dot_product_flash_attention_backward"}));
  EXPECT_TRUE(rows[1].cells[0].ran_as.empty()) << "the forward ran as written";
}

// One preempted step must not decide an op's speedup: with per-step samples the
// time per step is the median, where the mean would take the outlier whole.
TEST(ComparisonOps, PerStepSamplesGiveMediansThatIgnoreOnePreemptedStep) {
  auto c = two_variant_comparison();
  c.variants[0].profiled_steps = c.variants[1].profiled_steps = 3;
  c.variants[0].op_stats[0].step_cpu_time_ns = {1'000'000, 1'000'000, 1'000'000};
  c.variants[0].op_stats[0].cpu_time_ns = 3'000'000;
  // bf16's linear: 0.5 ms per step, but step 2 was preempted for 30 ms.
  c.variants[1].op_stats[0].step_cpu_time_ns = {500'000, 30'500'000, 500'000};
  c.variants[1].op_stats[0].cpu_time_ns = 31'500'000;
  // relu ran in one step of three in bf16: no median, the mean stands.
  c.variants[1].op_stats[1].step_cpu_time_ns = {300'000};
  const auto rows = match_ops(c);
  const auto& linear = rows[0];
  ASSERT_EQ(linear.name, "aten::linear");
  EXPECT_TRUE(linear.cells[1].per_step_median);
  EXPECT_DOUBLE_EQ(linear.cells[1].time_ns_per_step, 500'000.0);
  EXPECT_DOUBLE_EQ(linear.speedup[1], 2.0);  // the mean would say 1/10.5: a slowdown that did not happen
  const auto relu = std::find_if(rows.begin(), rows.end(), [](const auto& r) { return r.name == "aten::relu"; });
  ASSERT_NE(relu, rows.end());
  EXPECT_FALSE(relu->cells[1].per_step_median);
  EXPECT_DOUBLE_EQ(relu->cells[1].time_ns_per_step, 100'000.0 / 3);
  EXPECT_FALSE(relu->cells[0].per_step_median);  // fp32's relu has no samples at all
}

TEST(ComparisonOps, DifferentShapesAreDifferentRows) {
  auto c = two_variant_comparison();
  c.variants[1].op_stats[0].input_shapes[0] = {32, 128};
  const auto rows = match_ops(c);
  int linear_rows = 0;
  for (const auto& r : rows) linear_rows += r.name == "aten::linear" ? 1 : 0;
  EXPECT_EQ(linear_rows, 2);
}

TEST(ComparisonStore, RoundTripsEveryRepeatAndOpTable) {
  ScratchDir dir;
  const std::string path = dir / "c.ampscope";
  Comparison original = two_variant_comparison();
  original.variants[1].op_stats[0].step_cpu_time_ns = {400'000, 600'000};
  original.variants[1].op_stats[0].step_gpu_time_ns = {0, 12};
  {
    auto writer = ComparisonWriter::create(path, original, false);
    for (const auto& v : original.variants) writer->add_variant(v);
    for (const auto& v : original.variants) {
      for (size_t r = 0; r < v.repeats.size(); ++r) writer->add_repeat(v.variant, static_cast<int64_t>(r), v.repeats[r]);
      writer->set_profile(v.variant, v.op_stats, v.profiled_steps);
    }
    writer->set_error("bf16", "diverged at step 9");
  }
  EXPECT_TRUE(is_comparison_file(path));
  const Comparison read = read_comparison(path);
  EXPECT_EQ(read.meta.model, "MLP 2x128");
  EXPECT_FALSE(read.script.has_value()) << "the built-in models' comparison is no script's";
  EXPECT_EQ(read.warmup_steps, 2);
  EXPECT_EQ(read.planned_repeats, 3);
  EXPECT_EQ(read.effective_batch, 64);
  ASSERT_EQ(read.variants.size(), 2u);
  EXPECT_EQ(read.variants[0].variant, "fp32");
  EXPECT_EQ(read.variants[1].error, "diverged at step 9");
  ASSERT_EQ(read.variants[1].repeats.size(), 3u);
  EXPECT_EQ(read.variants[1].repeats[1].size(), 10u);
  EXPECT_DOUBLE_EQ(read.variants[1].repeats[1][5].step_time_ms, original.variants[1].repeats[1][5].step_time_ms);
  ASSERT_EQ(read.variants[1].op_stats.size(), 3u);
  EXPECT_EQ(read.variants[1].op_stats[0].cast_cpu_time_ns, 500'000);
  EXPECT_EQ(read.variants[1].profiled_steps, 2);
  EXPECT_EQ(read.variants[1].op_stats[0].step_cpu_time_ns, original.variants[1].op_stats[0].step_cpu_time_ns);
  EXPECT_EQ(read.variants[1].op_stats[0].step_gpu_time_ns, original.variants[1].op_stats[0].step_gpu_time_ns);
  EXPECT_TRUE(read.variants[0].op_stats[1].step_cpu_time_ns.empty());
  // What the user sees is the same from the file as from memory.
  const auto a = summarize(original), b = summarize(read);
  EXPECT_DOUBLE_EQ(a[1].speedup.median, b[1].speedup.median);
  EXPECT_EQ(match_ops(read).size(), match_ops(original).size());
}

TEST(ComparisonStore, KeepsWhatFinishedWhenTheWriterGoesAway) {
  ScratchDir dir;
  const std::string path = dir / "partial.ampscope";
  const Comparison original = two_variant_comparison();
  {
    auto writer = ComparisonWriter::create(path, original, false);
    for (const auto& v : original.variants) writer->add_variant(v);
    writer->add_repeat("fp32", 0, original.variants[0].repeats[0]);
    // The process would die here: no profile, no more repeats.
  }
  const Comparison read = read_comparison(path);
  ASSERT_EQ(read.variants.size(), 2u);
  EXPECT_EQ(read.variants[0].repeats.size(), 1u);
  EXPECT_TRUE(read.variants[1].repeats.empty());
  const auto s = summarize(read);
  EXPECT_EQ(s[1].finished_repeats, 0);
  EXPECT_EQ(s[1].speedup.median, 0.0);
}

// Comparison files written before the per-step columns existed still open.
TEST(ComparisonStore, AFileWithoutPerStepColumnsReadsAsNoSamples) {
  ScratchDir dir;
  const std::string path = dir / "older.ampscope";
  Comparison original = two_variant_comparison();
  original.variants[0].op_stats[0].step_cpu_time_ns = {1, 2};
  {
    auto writer = ComparisonWriter::create(path, original, false);
    for (const auto& v : original.variants) writer->add_variant(v);
    writer->set_profile("fp32", original.variants[0].op_stats, 2);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE comparison_op_stats DROP COLUMN step_cpu_ns;"
                         "ALTER TABLE comparison_op_stats DROP COLUMN step_gpu_ns;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  const Comparison read = read_comparison(path);
  ASSERT_EQ(read.variants[0].op_stats.size(), 3u);
  EXPECT_TRUE(read.variants[0].op_stats[0].step_cpu_time_ns.empty());
  EXPECT_EQ(read.variants[0].op_stats[0].cpu_time_ns, 2'000'000);
}

TEST(ComparisonStore, APlainSessionIsNotAComparison) {
  ScratchDir dir;
  const std::string path = dir / "s.ampscope";
  SessionMeta meta;
  meta.precision = "bf16";
  SessionWriter::create(path, meta, false)->close();
  EXPECT_FALSE(is_comparison_file(path));
  try {
    read_comparison(path);
    FAIL() << "read_comparison accepted a plain session";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a comparison"), std::string::npos) << e.what();
  }
  EXPECT_THROW(is_comparison_file((dir / "missing.ampscope").string()), StoreError);
}

TEST(ComparisonStore, RefusesToOverwriteUnlessAsked) {
  ScratchDir dir;
  const std::string path = dir / "c.ampscope";
  const Comparison c = two_variant_comparison();
  ComparisonWriter::create(path, c, false);
  EXPECT_THROW(ComparisonWriter::create(path, c, false), StoreError);
  EXPECT_NO_THROW(ComparisonWriter::create(path, c, true));
}

// Issue 29: a comparison writes its file for minutes (every variant, every repeat).
// It holds the file live all that time, as a profile does, so no other run's
// --force replaces it under it; once it is done the file may be replaced.
TEST(ComparisonStore, AComparisonBeingWrittenIsLiveAndNotReplaced) {
  ScratchDir dir;
  const std::string path = dir / "c.ampscope";
  const Comparison c = two_variant_comparison();
  {
    auto writer = ComparisonWriter::create(path, c, false);
    writer->add_variant(c.variants[0]);
    EXPECT_TRUE(is_live_session(path));
    try {
      SessionWriter::create(path, SessionMeta{}, /*overwrite=*/true);
      FAIL() << "a profile replaced a comparison being written";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("another ampscope run is writing it"), std::string::npos) << e.what();
    }
    EXPECT_THROW(ComparisonWriter::create(path, c, true), StoreError);
    writer->add_variant(c.variants[1]);  // it goes on writing its own file
  }
  EXPECT_FALSE(is_live_session(path));
  EXPECT_EQ(read_comparison(path).variants.size(), 2u);
  EXPECT_NO_THROW(ComparisonWriter::create(path, c, true));
}

}  // namespace
}  // namespace ampscope::test
