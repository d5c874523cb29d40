// A session's memory peak with the range-sampled steps told apart (memory_peak.h): a
// sample holds the modules' outputs to its step's end and runs its passes there, and
// the high-water mark it raises stays raised for every later step.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "profiler/analysis/memory_peak.h"

namespace {

using ampscope::profiler::memory_peak;
using ampscope::profiler::StepRecord;

std::vector<StepRecord> marks(const std::vector<int64_t>& bytes) {
  std::vector<StepRecord> steps;
  for (size_t i = 0; i < bytes.size(); ++i) {
    StepRecord s;
    s.step = static_cast<int64_t>(i) + 1;
    s.mem_peak_bytes = bytes[i];
    steps.push_back(s);
  }
  return steps;
}

TEST(MemoryPeak, ASampleThatRaisesTheMarkLeavesThePeakTheOtherStepsReached) {
  // Step 1 allocates the optimizer state at its end: step 2 reaches the training's peak.
  // The sample at step 5 holds outputs (5) and its passes at the step's end land in 6.
  const auto m = memory_peak(marks({100, 120, 120, 120, 150, 170, 170, 170, 170, 170}), {5});
  EXPECT_EQ(m.peak_bytes, 170);
  ASSERT_TRUE(m.outside_samples_bytes);
  EXPECT_EQ(*m.outside_samples_bytes, 120);
  EXPECT_TRUE(m.raised_by_samples());
}

TEST(MemoryPeak, TrainingThatOutgrowsTheSamplesOwnsThePeak) {
  // After the sample's rise, an unsampled step sets a higher mark of its own (a longer batch).
  const auto m = memory_peak(marks({100, 120, 120, 120, 150, 170, 170, 200, 200, 200}), {5});
  EXPECT_EQ(m.peak_bytes, 200);
  EXPECT_EQ(m.outside_samples_bytes.value_or(0), 200);
  EXPECT_FALSE(m.raised_by_samples());
}

TEST(MemoryPeak, SamplesThatRaiseNothingAreNotBlamed) {
  const auto m = memory_peak(marks({100, 120, 120, 120, 120, 120, 120}), {3, 6});
  EXPECT_EQ(m.peak_bytes, 120);
  EXPECT_FALSE(m.raised_by_samples());
}

TEST(MemoryPeak, ARiseUnderOnePercentIsTheMarksOwnCreep) {
  // A CPU run's resident set creeps by kilobytes a step; the sampled step 4 crept too.
  const auto m = memory_peak(marks({700'000, 701'000, 702'000, 705'000, 705'000, 705'000}), {4});
  EXPECT_EQ(m.outside_samples_bytes.value_or(0), 702'000);
  EXPECT_FALSE(m.raised_by_samples()) << "3 kB of 705 kB";
}

TEST(MemoryPeak, WhereEveryStepIsSampledNothingIsKnownOutsideThem) {
  const auto m = memory_peak(marks({100, 150, 150}), {1, 2, 3});
  EXPECT_EQ(m.peak_bytes, 150);
  EXPECT_FALSE(m.outside_samples_bytes);
  EXPECT_FALSE(m.raised_by_samples());
}

TEST(MemoryPeak, AMarkTheScriptResetIsTheStepsOwn) {
  // torch.cuda.reset_peak_memory_stats() after step 6: step 7's mark is its own peak since.
  const auto m = memory_peak(marks({100, 120, 120, 150, 170, 170, 110, 110}), {4});
  EXPECT_EQ(m.peak_bytes, 170);
  EXPECT_EQ(m.outside_samples_bytes.value_or(0), 120);
  EXPECT_TRUE(m.raised_by_samples());
}

TEST(MemoryPeak, UnmeasuredMemoryHasNoPeak) {
  const auto m = memory_peak(marks({0, 0, 0}), {2});
  EXPECT_EQ(m.peak_bytes, 0);
  EXPECT_FALSE(m.raised_by_samples());
}

}  // namespace
