// A real comparison on the CPU (fp32 vs bf16, LibTorch autocast): consistent
// records in memory and on disk, per-op matching of real op tables, failures and
// stops that keep what finished, and impossible settings refused up front.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>

#include "engine/errors.h"
#include "profiler/compare/comparison_runner.h"
#include "profiler/store/comparison_store.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny_configs.h"

namespace ampscope::profiler {
namespace {

ComparisonOptions tiny_options(const std::string& out_path) {
  ComparisonOptions o;
  o.base = test::tiny_gpt(engine::Precision::kFP32, 6);
  o.variants = {"fp32", "bf16"};
  o.repeats = 2;
  o.warmup_steps = 2;
  o.profile_steps = 2;
  o.out_path = out_path;
  return o;
}

TEST(ComparisonRunner, Fp32VersusBf16OnTheCpuGivesConsistentRecords) {
  test::ScratchDir dir;
  const std::string path = dir / "c.ampscope";
  std::vector<std::string> finished;
  int64_t progress_calls = 0;
  ComparisonRunner runner(tiny_options(path));
  std::vector<size_t> repeats_so_far;  // finished timing runs in the partial results
  const Comparison c = runner.run([&](const ComparisonProgress& p) {
    ++progress_calls;
    if (!p.finished_message.empty()) {
      finished.push_back(p.finished_message);
      ASSERT_NE(p.so_far, nullptr);
      size_t total = 0;
      for (const auto& v : p.so_far->variants) total += v.repeats.size();
      repeats_so_far.push_back(total);
    } else {
      EXPECT_EQ(p.so_far, nullptr);
    }
  });
  // The partial results grow by one repeat per timing run (the run that just ended
  // included), then stay put through the profiled passes.
  EXPECT_EQ(repeats_so_far, (std::vector<size_t>{1, 2, 3, 4, 4, 4}));

  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(c.meta.device, "cpu");
  EXPECT_FALSE(c.meta.model.empty());
  EXPECT_EQ(c.effective_batch, 4);
  for (const auto& v : c.variants) {
    EXPECT_TRUE(v.error.empty()) << v.variant << ": " << v.error;
    ASSERT_EQ(v.repeats.size(), 2u) << v.variant;
    for (const auto& steps : v.repeats) {
      ASSERT_EQ(steps.size(), 6u);
      for (size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i].step, static_cast<int64_t>(i + 1));
        EXPECT_GT(steps[i].step_time_ms, 0.0);
        EXPECT_TRUE(std::isfinite(steps[i].loss));
      }
    }
    EXPECT_EQ(v.profiled_steps, 2);
    EXPECT_FALSE(v.op_stats.empty());
    EXPECT_FALSE(v.scaler);  // bf16 needs no loss scaling
  }
  // Same seed: the same run, so both repeats of fp32 give the same losses...
  EXPECT_DOUBLE_EQ(c.variants[0].repeats[0].back().loss, c.variants[0].repeats[1].back().loss);
  // ...and bf16 starts from the same weights and batch: the first loss agrees to bf16's precision.
  EXPECT_NEAR(c.variants[1].repeats[0][0].loss, c.variants[0].repeats[0][0].loss,
              0.02 * c.variants[0].repeats[0][0].loss);
  // Autocast demoted the linears in bf16 and in fp32 nothing was demoted.
  auto demoted = [](const VariantRun& v) {
    int64_t n = 0;
    for (const auto& r : v.op_stats) n += r.category == OpCategory::kDemoted ? r.calls : 0;
    return n;
  };
  EXPECT_EQ(demoted(c.variants[0]), 0);
  EXPECT_GT(demoted(c.variants[1]), 0);

  const auto summary = summarize(c);
  EXPECT_EQ(summary[0].measured_steps, 2 * 4);
  EXPECT_GT(summary[1].speedup.median, 0.0);
  EXPECT_GT(summary[1].speedup.max, 0.0);
  EXPECT_LE(summary[1].speedup.min, summary[1].speedup.max);
  // The model's linears match across precisions, though their dtypes differ.
  const auto rows = match_ops(c);
  const auto linear = std::find_if(rows.begin(), rows.end(), [](const OpComparisonRow& r) {
    return r.name == "aten::linear" && r.phase == Phase::kForward && r.cells[0].present && r.cells[1].present;
  });
  ASSERT_NE(linear, rows.end());
  EXPECT_EQ(linear->cells[0].input_dtypes[0], "float32");
  EXPECT_EQ(linear->cells[1].category, "demoted");
  EXPECT_GT(linear->speedup[1], 0.0);
  // The profiled pass kept each op's time per step, so its time is a median over the 2 steps.
  EXPECT_TRUE(linear->cells[0].per_step_median);
  EXPECT_TRUE(linear->cells[1].per_step_median);
  // 2 variants x (2 repeats + 1 profiled pass) runs, each reported when it ended.
  EXPECT_EQ(finished.size(), 6u);
  EXPECT_GT(progress_calls, 2 * 3 * 6 - 1);

  // The file says the same.
  const Comparison stored = read_comparison(path);
  ASSERT_EQ(stored.variants.size(), 2u);
  EXPECT_EQ(stored.variants[1].repeats.size(), 2u);
  EXPECT_DOUBLE_EQ(stored.variants[1].repeats[1][3].step_time_ms, c.variants[1].repeats[1][3].step_time_ms);
  EXPECT_EQ(stored.variants[1].op_stats.size(), c.variants[1].op_stats.size());
  EXPECT_EQ(stored.variants[1].op_stats[0].step_cpu_time_ns, c.variants[1].op_stats[0].step_cpu_time_ns);
  EXPECT_EQ(stored.variants[1].op_stats[0].step_cpu_time_ns.size(), 2u);
  EXPECT_EQ(stored.warmup_steps, 2);
  EXPECT_FALSE(stored.meta.gpu_tracing.empty());
}

// compare --inference: per precision, timed forward batches of a freshly built model in
// eval mode under InferenceMode and the precision's autocast. Its first batch is the
// training run's first batch through the same initial weights, so its loss must equal
// that training step's forward loss in the same precision (the GPT has no dropout or
// BatchNorm): the same model, data and autocast, with only the backward left out.
TEST(ComparisonRunner, InferenceTimesForwardBatchesUnderEachPrecisionsAutocast) {
  test::ScratchDir dir;
  const std::string path = dir / "inference.ampscope";
  ComparisonOptions o = tiny_options(path);
  o.inference = true;
  o.variants = {"fp32", "fp16", "bf16"};
  std::vector<std::string> finished;
  const Comparison c = ComparisonRunner(o).run([&](const ComparisonProgress& p) {
    if (!p.finished_message.empty()) finished.push_back(p.finished_message);
  });
  EXPECT_TRUE(c.inference);
  EXPECT_EQ(finished.size(), 3u * 2u) << "3 precisions x 2 repeats, no profiled pass";
  EXPECT_NE(finished[0].find("ms/batch"), std::string::npos) << finished[0];
  EXPECT_EQ(c.effective_batch, 4);
  ASSERT_EQ(c.variants.size(), 3u);
  for (const auto& v : c.variants) {
    EXPECT_TRUE(v.error.empty()) << v.variant << ": " << v.error;
    EXPECT_FALSE(v.scaler) << v.variant << ": no backward, nothing to scale";
    EXPECT_TRUE(v.op_stats.empty());
    EXPECT_EQ(v.profiled_steps, 0);
    ASSERT_EQ(v.repeats.size(), 2u) << v.variant;
    for (const auto& batches : v.repeats) {
      ASSERT_EQ(batches.size(), 6u);
      for (size_t i = 0; i < batches.size(); ++i) {
        EXPECT_EQ(batches[i].step, static_cast<int64_t>(i + 1));
        EXPECT_GT(batches[i].step_time_ms, 0.0);
        EXPECT_NEAR(batches[i].samples_per_second, 4.0 / (batches[i].step_time_ms / 1e3),
                    1e-9 * batches[i].samples_per_second);
        EXPECT_TRUE(std::isfinite(batches[i].loss));
        EXPECT_TRUE(std::isnan(batches[i].grad_norm)) << "no gradients in inference";
      }
    }
    // Each repeat rebuilds the same model and draws the same batches.
    EXPECT_EQ(v.repeats[0][3].loss, v.repeats[1][3].loss) << v.variant;
  }

  // The training comparison's first step, same seed: its loss is the forward's.
  ComparisonOptions t = tiny_options("");
  t.variants = o.variants;
  t.repeats = 1;
  t.profile_steps = 0;
  const Comparison trained = ComparisonRunner(t).run();
  for (size_t v = 0; v < 3; ++v) {
    const double inferred = c.variants[v].repeats[0][0].loss, train = trained.variants[v].repeats[0][0].loss;
    EXPECT_NEAR(inferred, train, 1e-6 * std::fabs(train)) << c.variants[v].variant;
  }
  // Autocast was on: fp16 and bf16 losses differ from fp32's, within their precision.
  const double fp32 = c.variants[0].repeats[0][0].loss;
  for (size_t v = 1; v < 3; ++v) {
    EXPECT_NE(c.variants[v].repeats[0][0].loss, fp32) << c.variants[v].variant;
    EXPECT_NEAR(c.variants[v].repeats[0][0].loss, fp32, 0.02 * fp32) << c.variants[v].variant;
  }

  const auto summary = summarize(c);
  EXPECT_EQ(summary[0].speedup.median, 1.0);
  EXPECT_EQ(summary[0].measured_steps, 2 * 4);
  EXPECT_GT(summary[2].speedup.median, 0.0);

  // On disk: flagged as inference, with every batch; a file without the flag (written
  // before inference comparisons) reads as a training comparison.
  const Comparison stored = read_comparison(path);
  EXPECT_TRUE(stored.inference);
  ASSERT_EQ(stored.variants.size(), 3u);
  EXPECT_FALSE(stored.variants[1].scaler);
  ASSERT_EQ(stored.variants[2].repeats.size(), 2u);
  EXPECT_EQ(stored.variants[2].repeats[1][5].step_time_ms, c.variants[2].repeats[1][5].step_time_ms);
  EXPECT_TRUE(std::isnan(stored.variants[2].repeats[1][5].grad_norm));
  EXPECT_EQ(summarize(stored)[2].speedup.median, summary[2].speedup.median);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DELETE FROM meta WHERE key='mode'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_FALSE(read_comparison(path).inference);
}

TEST(ComparisonRunner, AStopKeepsTheRunsThatFinished) {
  test::ScratchDir dir;
  const std::string path = dir / "stopped.ampscope";
  ComparisonRunner runner(tiny_options(path));
  const Comparison c = runner.run([&](const ComparisonProgress& p) {
    if (!p.finished_message.empty()) runner.request_stop();  // after the first run
  });
  EXPECT_TRUE(runner.stopped());
  EXPECT_EQ(c.variants[0].repeats.size(), 1u);
  EXPECT_TRUE(c.variants[1].repeats.empty());
  const Comparison stored = read_comparison(path);
  EXPECT_EQ(stored.variants[0].repeats.size(), 1u);
  EXPECT_TRUE(stored.variants[1].repeats.empty());
}

TEST(ComparisonRunner, AFailingVariantIsRecordedAndTheOthersGoOn) {
  test::ScratchDir dir;
  const std::string path = dir / "failed.ampscope";
  ComparisonOptions o = tiny_options(path);
  // fp16 on the CPU with an absurd learning rate: the loss goes non-finite and
  // the scaler skips every step until the run is declared diverged.
  o.base.optim.lr = 1e30;
  o.base.max_consecutive_skips = 2;
  o.variants = {"fp32", "fp16"};
  o.repeats = 1;
  o.profile_steps = 0;
  const Comparison c = ComparisonRunner(o).run();
  ASSERT_EQ(c.variants.size(), 2u);
  const bool any_failed = !c.variants[0].error.empty() || !c.variants[1].error.empty();
  ASSERT_TRUE(any_failed) << "expected a diverged run with lr 1e30";
  const Comparison stored = read_comparison(path);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(stored.variants[i].error, c.variants[i].error);
}

TEST(ComparisonRunner, RefusesImpossibleSettingsBeforeTraining) {
  ComparisonOptions o = tiny_options("");
  o.variants = {"fp32", "tf32"};
  EXPECT_THROW(validate(o), engine::ConfigError);  // TF32 on the CPU
  o = tiny_options("");
  o.warmup_steps = 6;
  EXPECT_THROW(validate(o), engine::ConfigError);  // nothing left to time
  o = tiny_options("");
  o.repeats = 0;
  EXPECT_THROW(validate(o), engine::ConfigError);
  EXPECT_THROW(parse_variants("fp32,fp8"), engine::ConfigError);
  EXPECT_THROW(parse_variants("fp32, fp32"), engine::ConfigError);
  EXPECT_THROW(parse_variants(" , "), engine::ConfigError);
  EXPECT_EQ(parse_variants("fp32, bf16"), (std::vector<std::string>{"fp32", "bf16"}));
}

TEST(ComparisonRunner, VariantConfigsFollowEachPrecisionsRecipe) {
  engine::TrainConfig base = test::tiny_gpt(engine::Precision::kBF16, 4);
  base.use_scaler = true;
  EXPECT_TRUE(variant_config(base, "fp16").scaler_enabled());
  EXPECT_FALSE(variant_config(base, "bf16").scaler_enabled());
  EXPECT_FALSE(variant_config(base, "fp32").scaler_enabled());
  EXPECT_TRUE(variant_config(base, "tf32").allow_tf32);
  EXPECT_EQ(variant_config(base, "tf32").precision, engine::Precision::kFP32);
  EXPECT_FALSE(variant_config(base, "fp32").allow_tf32);
}

}  // namespace
}  // namespace ampscope::profiler
