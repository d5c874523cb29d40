// A compiling first step (15 s against 3 ms steps) flattens a step-time chart whose
// scale holds it: profiler::step_time_scale names such steps for the GUI's and the
// report's charts to leave off their scale; range-sampled steps, a few times slower,
// stay on it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "profiler/analysis/step_timing.h"

namespace ampscope::profiler {
namespace {

TEST(StepTimeScale, ACompilingFirstStepIsOffTheScaleAndNamed) {
  const auto scale = step_time_scale({{1, 15'021.0}, {2, 3.1}, {3, 2.9}, {4, 3.0}, {5, 3.4}});
  ASSERT_TRUE(scale.has_value());
  EXPECT_DOUBLE_EQ(scale->ceiling_ms, 3.4);
  ASSERT_EQ(scale->off_scale.size(), 1u);
  EXPECT_EQ(scale->off_scale.front().first, 1);
  EXPECT_EQ(scale->describe(), "step 1 (15.02 s)");
}

TEST(StepTimeScale, SampledStepsAFewTimesSlowerStayOnTheScale) {
  std::vector<std::pair<int64_t, double>> steps;
  for (int64_t s = 1; s <= 40; ++s) steps.emplace_back(s, s % 10 == 0 ? 9.0 : 3.0);  // a sample: 3 steps
  EXPECT_FALSE(step_time_scale(steps).has_value());
  steps[0].second = std::numeric_limits<double>::quiet_NaN();  // a step without a time is no outlier
  EXPECT_FALSE(step_time_scale(steps).has_value());
}

TEST(StepTimeScale, TooFewStepsToTellAndManyOutliersAreCounted) {
  EXPECT_FALSE(step_time_scale({{1, 15'000.0}, {2, 3.0}}).has_value()) << "two steps: no median to trust";
  std::vector<std::pair<int64_t, double>> steps{{1, 900.0}, {2, 800.0}, {3, 700.0}, {4, 1'200.0}};
  for (int64_t s = 5; s <= 12; ++s) steps.emplace_back(s, 2.0);
  const auto scale = step_time_scale(steps);
  ASSERT_TRUE(scale.has_value());
  EXPECT_EQ(scale->off_scale.size(), 4u);
  EXPECT_EQ(scale->describe(), "4 steps, the slowest step 4 (1.20 s)");
}

}  // namespace
}  // namespace ampscope::profiler
