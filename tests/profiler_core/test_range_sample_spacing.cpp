// Range samples every K steps, spaced further when they cost more than the budget
// of the run's time (issue 27: on an H200 one sample of a 12-layer GPT cost 1.1 s
// against a 20 ms step, so every 10th step made the training 5x slower).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "profiler/range_sample_phases.h"
#include "profiler/range_sample_spacing.h"

namespace ampscope::profiler {
namespace {

// Steps 1..last with `unsampled_ms` for the steps it does not sample and
// `sampled_ms` for those it does; the steps it sampled.
std::vector<int64_t> run(RangeSampleSpacing& spacing, int64_t last, double unsampled_ms, double sampled_ms) {
  std::vector<int64_t> sampled;
  for (int64_t step = 1; step <= last; ++step) {
    const bool s = spacing.selects(step);
    if (s) sampled.push_back(step);
    spacing.on_step_end(step, s ? sampled_ms : unsampled_ms, s);
  }
  return sampled;
}

TEST(RangeSampleSpacing, WithoutABudgetEveryKthStepSamplesWhateverItCosts) {
  RangeSampleSpacing spacing(10, 0);
  EXPECT_EQ(run(spacing, 40, 20.0, 1120.0), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_TRUE(spacing.changes().empty());
  RangeSampleSpacing off(0, 5);
  EXPECT_TRUE(run(off, 40, 20.0, 20.0).empty());
}

// A first look at a script (--max-steps 5) ends before step K: without its last step
// sampled it showed no gradient, activation or readiness at all.
TEST(RangeSampleSpacing, ARunEndingBeforeStepKSamplesItsLastStep) {
  RangeSampleSpacing short_run(10, 5);
  short_run.set_last_step(5);
  EXPECT_EQ(short_run.early_last_step(), 5);
  EXPECT_EQ(run(short_run, 5, 20.0, 30.0), (std::vector<int64_t>{5}));
  // A run that reaches step K samples as any: its last step is not special.
  for (const int64_t last : {10, 25}) {
    RangeSampleSpacing long_run(10, 5);
    long_run.set_last_step(last);
    EXPECT_EQ(long_run.early_last_step(), 0);
    const std::vector<int64_t> every_tenth = last == 10 ? std::vector<int64_t>{10} : std::vector<int64_t>{10, 20};
    EXPECT_EQ(run(long_run, last, 20.0, 30.0), every_tenth);
  }
  RangeSampleSpacing unknown(10, 5);  // a script without --max-steps
  unknown.set_last_step(0);
  EXPECT_TRUE(run(unknown, 5, 20.0, 30.0).empty());
  RangeSampleSpacing off(0, 5);  // --grad-every 0: never
  off.set_last_step(5);
  EXPECT_TRUE(run(off, 5, 20.0, 30.0).empty());
  EXPECT_EQ(RangeSampleSpacing::describe_sampling(10, 5, {}, 5, 5),
            "every 10 steps (within the 5 % budget); the run's last step (5) too, as the run ends before step 10; "
            "precision readiness on one sample in 5, the first included");
  EXPECT_EQ(RangeSampleSpacing::describe_sampling(10, 5, {}, 5, 0),
            "every 10 steps (within the 5 % budget); precision readiness on one sample in 5, the first included");
}

TEST(RangeSampleSpacing, SamplesWithinTheBudgetKeepEveryKthStep) {
  // A sample adds 10 ms to a 20 ms step: 10 / (0.05 * 20) = 10 steps, K itself.
  RangeSampleSpacing spacing(10, 5);
  EXPECT_EQ(run(spacing, 40, 20.0, 30.0), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_TRUE(spacing.changes().empty());
}

TEST(RangeSampleSpacing, AnExpensiveSampleSpacesTheNextInMultiplesOfK) {
  // 1,100 ms over a 20 ms step within 5 %: 1,100 steps' time (a multiple of 10) between samples.
  RangeSampleSpacing spacing(10, 5);
  const std::vector<int64_t> sampled = run(spacing, 2300, 20.0, 1120.0);
  EXPECT_EQ(sampled, (std::vector<int64_t>{10, 1110, 2210}));
  ASSERT_EQ(spacing.changes().size(), 1u);
  EXPECT_EQ(spacing.changes()[0].from_step, 11);
  EXPECT_EQ(spacing.changes()[0].every, 1100);
  EXPECT_DOUBLE_EQ(spacing.changes()[0].cost_ms, 1100.0);
  EXPECT_DOUBLE_EQ(spacing.changes()[0].step_ms, 20.0);
  // The samples' cost stays within the budget of the time between them.
  for (size_t i = 1; i < sampled.size(); ++i)
    EXPECT_LE(1100.0, 0.05 * 20.0 * static_cast<double>(sampled[i] - sampled[i - 1]));
}

TEST(RangeSampleSpacing, ACheaperSampleNarrowsTheSpacingBackToK) {
  RangeSampleSpacing spacing(10, 5);
  for (int64_t step = 1; step <= 9; ++step) spacing.on_step_end(step, 20.0, false);
  ASSERT_TRUE(spacing.selects(10));
  EXPECT_TRUE(spacing.on_step_end(10, 220.0, true));  // 200 ms: 200 steps
  EXPECT_EQ(spacing.current_every(), 200);
  EXPECT_FALSE(spacing.selects(20));
  EXPECT_TRUE(spacing.selects(210));
  // Cheap samples from then on (5 ms each): the mean of the last four narrows the
  // spacing step by step, back to K once the expensive one has left it.
  EXPECT_TRUE(spacing.on_step_end(210, 25.0, true));  // mean 102.5 ms: 110 steps
  EXPECT_EQ(spacing.current_every(), 110);
  EXPECT_TRUE(spacing.selects(320));
  EXPECT_TRUE(spacing.on_step_end(320, 25.0, true));  // 70 ms: 70 steps
  EXPECT_EQ(spacing.current_every(), 70);
  EXPECT_TRUE(spacing.on_step_end(390, 25.0, true));  // 53.75 ms: 60 steps
  EXPECT_TRUE(spacing.on_step_end(450, 25.0, true));  // 5 ms: within K
  EXPECT_EQ(spacing.current_every(), 10);
  EXPECT_TRUE(spacing.selects(460));
  ASSERT_EQ(spacing.changes().size(), 5u);
}

TEST(RangeSampleSpacing, ReadinessOnOneSampleInNIsPaidForAsItsShareOfN) {
  // Readiness on one sample in 8: those cost 800 ms over a 20 ms step, the others 10 ms.
  // The mean over a readiness cycle, (800 + 7 * 10) / 8 = 108.75 ms, asks for 110 steps
  // between samples; over four samples (the window without readiness's cadence) it swung
  // between 207.5 ms (one costly sample in the window) and 10 ms (none) as samples went by.
  const auto costs = [](int64_t sample) { return sample % 8 == 0 ? 820.0 : 30.0; };
  for (const int64_t readiness_every : {1, 8}) {
    RangeSampleSpacing spacing(10, 5, readiness_every);
    std::vector<int64_t> every_after;
    int64_t samples = 0;
    for (int64_t step = 1; step <= 40'000; ++step) {
      const bool s = spacing.selects(step);
      spacing.on_step_end(step, s ? costs(samples) : 20.0, s);
      if (s && ++samples > 16) every_after.push_back(spacing.current_every());
    }
    ASSERT_FALSE(every_after.empty());
    const auto [least, most] = std::minmax_element(every_after.begin(), every_after.end());
    if (readiness_every == 8) {
      EXPECT_EQ(*least, 110);
      EXPECT_EQ(*most, 110);
    } else {
      EXPECT_LT(*least, 30);   // no costly sample in the last four
      EXPECT_GT(*most, 200);   // one
    }
  }
}

TEST(RangeSampleSpacing, WithNoUnsampledStepToCompareEveryStepSamples) {
  // K = 1: every step samples, so no step says what a step costs without one.
  RangeSampleSpacing spacing(1, 5);
  EXPECT_EQ(run(spacing, 5, 20.0, 1120.0), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  // An unknown step time (a Python loop that did not say) is ignored.
  RangeSampleSpacing unknown(10, 5);
  EXPECT_EQ(run(unknown, 20, std::nan(""), std::nan("")), (std::vector<int64_t>{10, 20}));
}

TEST(RangeSampleSpacing, TheStoredChangesReadBackAndAreSaid) {
  RangeSampleSpacing spacing(10, 5);
  run(spacing, 30, 20.0, 1120.0);
  const std::vector<RangeSampleSpacing::Change> back = RangeSampleSpacing::decode(spacing.encode());
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].from_step, 11);
  EXPECT_EQ(back[0].every, 1100);
  EXPECT_DOUBLE_EQ(back[0].cost_ms, 1100.0);
  EXPECT_DOUBLE_EQ(back[0].step_ms, 20.0);
  EXPECT_EQ(RangeSampleSpacing::describe(10, 5, back),
            "every 10 steps, spaced to every 1100 from step 11 to keep samples within 5 % of the run's time "
            "(a sample cost 1100 ms against a 20.0 ms step)");
  EXPECT_EQ(RangeSampleSpacing::describe(10, 5, {}), "every 10 steps (within the 5 % budget)");
  EXPECT_EQ(RangeSampleSpacing::describe(10, 0, {}), "every 10 steps");
  EXPECT_EQ(RangeSampleSpacing::describe(0, 5, {}), "off");
  for (const char* damaged : {"", "x", "1:2", "1:0:3:4", "a:b:c:d;"})
    EXPECT_TRUE(RangeSampleSpacing::decode(damaged).empty()) << damaged;
}

// Where the samples' time went: the sums read back as stored, said as a mean per sample
// with the costliest pass first; a damaged value is no figure at all.
TEST(RangeSamplePhases, TheStoredSumsReadBackAndAreSaidPerSample) {
  RangeSamplePhases run;
  run.add({1, 0.5, 10.0, 100.0});
  run.add({1, 1.5, 30.0, 20.0});
  const auto back = RangeSamplePhases::decode(run.encode());
  ASSERT_TRUE(back.has_value()) << run.encode();
  EXPECT_EQ(back->samples, 2);
  EXPECT_DOUBLE_EQ(back->gradients_ms, 2.0);
  EXPECT_DOUBLE_EQ(back->activations_ms, 40.0);
  EXPECT_DOUBLE_EQ(back->readiness_ms, 120.0);
  EXPECT_EQ(back->describe(),
            "a sample's own passes on the training thread (mean of 2): readiness 60.0 ms, activations 20.0 ms, "
            "gradients 1.0 ms");
  EXPECT_EQ(RangeSamplePhases{}.describe(), "");
  // A pass a later version adds is skipped; the known ones still read.
  const auto newer = RangeSamplePhases::decode("samples:1;gradients:1;activations:2;readiness:3;packing:4");
  ASSERT_TRUE(newer.has_value());
  EXPECT_DOUBLE_EQ(newer->readiness_ms, 3.0);
  for (const char* damaged : {"", "x", "gradients:1", "samples:x", "samples:1;readiness:y", "samples:1;readiness:-2"})
    EXPECT_FALSE(RangeSamplePhases::decode(damaged).has_value()) << damaged;
}

}  // namespace
}  // namespace ampscope::profiler
