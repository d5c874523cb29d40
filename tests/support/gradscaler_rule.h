#pragma once
// GradScaler's rule, checked on what a session recorded of a script's scaler: the tests of
// `ampscope run` on examples/ (torch.amp.GradScaler, FSDP's ShardedGradScaler).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/records.h"

namespace ampscope::test {

// GradScaler's rule (torch.amp.GradScaler.update): an inf/NaN anywhere backs the
// scale off; otherwise the growth_interval-th clean step in a row grows it.
inline void expect_gradscaler_rule(const std::vector<profiler::StepRecord>& steps,
                                   const std::vector<profiler::OptimizerStepRecord>& rows,
                            double growth_interval, int* backoffs, int* growths) {
  std::map<int64_t, std::vector<profiler::OptimizerStepRecord>> by_step;
  for (const auto& r : rows) by_step[r.step].push_back(r);
  ASSERT_EQ(by_step.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const profiler::StepRecord& s = steps[i];
    const auto& opt = by_step[s.step];
    ASSERT_FALSE(opt.empty());
    bool any_inf = false;
    for (const auto& r : opt) {
      any_inf |= r.found_inf;
      EXPECT_EQ(r.skipped, r.found_inf) << "step " << s.step;
      EXPECT_EQ(r.stepped, !r.skipped) << "step " << s.step << " optimizer " << r.optimizer;
      EXPECT_EQ(r.loss_scale, s.loss_scale) << "step " << s.step;
    }
    EXPECT_EQ(s.found_inf, any_inf);
    const double after = opt.front().loss_scale_after;
    double expected = s.loss_scale;
    if (any_inf) {
      expected = s.loss_scale * 0.5;
      ++*backoffs;
    } else if (s.growth_tracker + 1 == growth_interval) {
      expected = s.loss_scale * 2.0;
      ++*growths;
    }
    EXPECT_EQ(after, expected) << "step " << s.step << " scale " << s.loss_scale << " tracker " << s.growth_tracker;
    if (i + 1 < steps.size()) {
      EXPECT_EQ(steps[i + 1].loss_scale, after) << "step " << steps[i + 1].step;
    }
  }
}

}  // namespace ampscope::test
