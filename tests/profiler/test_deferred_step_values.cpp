// A Python loop's step records wait for their device values (deferred_step_values.h)
// without the training thread waiting for the device: they leave in step order, as
// their values arrive; a host far ahead waits for the oldest only; the run's end reads
// them all; a failed device costs the values, never the step.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "profiler/capture/deferred_step_values.h"

namespace {

using ampscope::profiler::DeferredStepValues;
using ampscope::profiler::StepDeviceValues;
using ampscope::profiler::StepRecord;
using Arrival = DeferredStepValues::ArrivalState;

StepRecord step(int64_t n) {
  StepRecord r;
  r.step = n;
  r.loss = std::nan("");
  r.grad_norm = std::nan("");
  return r;
}

at::Tensor host(double loss, double grad_norm) { return at::tensor({loss, grad_norm}, at::kDouble); }

// A device's arrival the test controls; `waited` counts the waits asked for.
struct FakeArrival {
  bool arrived = false;
  int waited = 0;
  DeferredStepValues::Arrival fn() {
    return [this](bool wait) {
      if (wait) {
        ++waited;
        arrived = true;
      }
      return arrived ? Arrival::kArrived : Arrival::kNotYet;
    };
  }
};

std::vector<int64_t> step_numbers(const std::vector<StepRecord>& records) {
  std::vector<int64_t> out;
  for (const auto& r : records) out.push_back(r.step);
  return out;
}

TEST(DeferredStepValues, ARecordWaitsForItsValuesAndTheStepsAfterItWaitBehindIt) {
  DeferredStepValues deferred;
  FakeArrival first;
  deferred.hold(step(1), {}, host(2.5, 0.75), first.fn());
  StepRecord second = step(2);
  second.loss = 1.25;  // known on the host (a loss given as a float)
  deferred.hold(second);
  EXPECT_TRUE(deferred.take_ready(false).steps.empty()) << "step 2 left before step 1";
  EXPECT_EQ(first.waited, 0) << "the training thread waited for the device";

  first.arrived = true;
  const auto ready = deferred.take_ready(false).steps;
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ready[0].loss, 2.5);
  EXPECT_EQ(ready[0].grad_norm, 0.75);
  EXPECT_EQ(ready[1].loss, 1.25);
  EXPECT_EQ(deferred.waiting(), 0u);
}

TEST(DeferredStepValues, AHostFarAheadWaitsForTheOldestStepOnly) {
  DeferredStepValues deferred;
  std::vector<FakeArrival> arrivals(DeferredStepValues::kMaxWaiting + 1);
  for (size_t i = 0; i < arrivals.size(); ++i)
    deferred.hold(step(static_cast<int64_t>(i) + 1), {}, host(double(i), 0), arrivals[i].fn());
  const auto ready = deferred.take_ready(false).steps;
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1}));
  EXPECT_EQ(arrivals[0].waited, 1);
  for (size_t i = 1; i < arrivals.size(); ++i) EXPECT_EQ(arrivals[i].waited, 0) << "step " << i + 1;
  EXPECT_EQ(deferred.waiting(), DeferredStepValues::kMaxWaiting);
}

TEST(DeferredStepValues, TheRunsEndReadsEveryStepInOrder) {
  DeferredStepValues deferred;
  std::vector<FakeArrival> arrivals(3);
  for (size_t i = 0; i < arrivals.size(); ++i)
    deferred.hold(step(static_cast<int64_t>(i) + 1), {}, host(10.0 + double(i), 0.5), arrivals[i].fn());
  const auto ready = deferred.take_ready(true).steps;
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1, 2, 3}));
  for (size_t i = 0; i < ready.size(); ++i) EXPECT_EQ(ready[i].loss, 10.0 + double(i));
}

TEST(DeferredStepValues, AFailedDeviceCostsTheValuesNotTheSteps) {
  DeferredStepValues deferred;
  deferred.hold(step(1), {}, host(3.0, 1.0), [](bool) -> Arrival { throw std::runtime_error("CUDA error"); });
  deferred.hold(step(2), {}, host(4.0, 1.0), [](bool) { return Arrival::kLost; });
  deferred.hold(step(3), {}, host(5.0, 1.0), [](bool) { return Arrival::kArrived; });
  const auto ready = deferred.take_ready(false).steps;
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(std::isnan(ready[0].loss));
  EXPECT_TRUE(std::isnan(ready[1].loss));
  EXPECT_EQ(ready[2].loss, 5.0);
}

// On the CPU the values are read at once, and the loss is what the script's Python sums:
// each micro-batch's loss in float32, added in float32 in the order they came.
TEST(DeferredStepValues, CpuValuesAreReadAtOnceAsTheScriptSumsThem) {
  at::manual_seed(3);
  const at::Tensor a = at::randn({7}, at::kHalf), b = at::randn({}, at::kBFloat16), c = at::randn({3, 5});
  const at::Tensor norm = at::randn({}, at::kBFloat16).abs();
  DeferredStepValues deferred;
  StepDeviceValues values;
  values.loss_parts = {a, b, c};
  values.grad_norm = norm;
  deferred.hold(step(1), {}, values);
  const auto ready = deferred.take_ready(false).steps;
  ASSERT_EQ(ready.size(), 1u);
  const float expected = (a.to(at::kFloat).sum() + b.to(at::kFloat).sum() + c.sum()).item<float>();
  EXPECT_EQ(ready[0].loss, static_cast<double>(expected));
  EXPECT_EQ(ready[0].grad_norm, static_cast<double>(norm.item<float>()));
}

TEST(DeferredStepValues, AStepWithoutDeviceValuesKeepsTheOnesItCameWith) {
  DeferredStepValues deferred;
  StepRecord r = step(1);
  r.loss = 0.5;
  StepDeviceValues only_norm;
  only_norm.grad_norm = at::tensor(2.0f);
  deferred.hold(r, {}, only_norm);
  const auto ready = deferred.take_ready(false).steps;
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].loss, 0.5);
  EXPECT_EQ(ready[0].grad_norm, 2.0);
}

using ampscope::profiler::OptimizerStepRecord;
using ampscope::profiler::SchedulerStepRecord;
using Slot = DeferredStepValues::Slot;

OptimizerStepRecord row(int64_t step, int32_t optimizer, bool skipped = false) {
  OptimizerStepRecord r;
  r.step = step;
  r.optimizer = optimizer;
  r.stepped = true;
  r.found_inf = r.skipped = skipped;
  return r;
}

SchedulerStepRecord call(int64_t n, int32_t optimizer, int64_t step) {
  SchedulerStepRecord c;
  c.call = n;
  c.optimizer = optimizer;
  c.step = step;
  return c;
}

// GradScaler's state arrives with the loss: the scale the backward used, the growth
// tracker before update(), the scale update() left, and each optimizer's found-inf flags.
// One optimizer may skip while the other steps; the step skipped if either did.
TEST(DeferredStepValues, GradScalersStateFillsTheStepAndEachOptimizersRow) {
  DeferredStepValues deferred;
  const double nan = std::nan("");
  const at::Tensor slots = at::tensor({1.5, nan, 1024.0, 7.0, 512.0, 0.0, 2.0}, at::kDouble);
  deferred.hold(step(1), {row(1, 0), row(1, 1)}, slots, [](bool) { return Arrival::kArrived; });
  const auto ready = deferred.take_ready(false);
  ASSERT_EQ(ready.steps.size(), 1u);
  const StepRecord& s = ready.steps[0];
  EXPECT_EQ(s.loss, 1.5);
  EXPECT_TRUE(std::isnan(s.grad_norm)) << "a norm the step never had was invented";
  EXPECT_EQ(s.loss_scale, 1024.0);
  EXPECT_EQ(s.growth_tracker, 7);
  EXPECT_TRUE(s.found_inf && s.skipped);
  ASSERT_EQ(ready.optimizer_steps.size(), 2u);
  EXPECT_FALSE(ready.optimizer_steps[0].found_inf || ready.optimizer_steps[0].skipped);
  EXPECT_TRUE(ready.optimizer_steps[1].found_inf && ready.optimizer_steps[1].skipped);
  for (const OptimizerStepRecord& r : ready.optimizer_steps) {
    EXPECT_EQ(r.loss_scale, 1024.0);
    EXPECT_EQ(r.loss_scale_after, 512.0);
  }
}

// On the CPU (torch.amp.GradScaler("cpu")) the same state is read at once, from the copy
// made before update(): update() halves the scale in place, resets the tracker and adds
// the second optimizer's flag into the first one's, none of which the rows may see.
TEST(DeferredStepValues, CpuGradScalerStateIsReadAtOnceFromTheCopyMadeBeforeUpdate) {
  at::Tensor scale = at::full({1}, 65536.0f);
  at::Tensor tracker = at::full({1}, 3, at::kInt);
  at::Tensor first_flag = at::zeros({1});
  const std::vector<at::Tensor> second_flags{at::zeros({1}), at::ones({1})};  // two devices
  const at::Tensor before = ampscope::profiler::scaler_state_copy(scale, tracker, {{first_flag}, second_flags, {}});
  ASSERT_EQ(before.numel(), 5);
  scale.mul_(0.5);  // update() after an overflow
  tracker.zero_();
  first_flag.add_(second_flags[1]);  // update()'s found_inf_combined
  StepDeviceValues values;
  values.loss_scale = before[0];
  values.growth_tracker = before[1];
  values.loss_scale_after = scale;
  values.found_inf = {{before[2]}, {before[3]}, {before[4]}};
  DeferredStepValues deferred;
  deferred.hold(step(4), {row(4, 0), row(4, 1), row(4, 2)}, values);
  const auto ready = deferred.take_ready(false);
  ASSERT_EQ(ready.steps.size(), 1u);
  EXPECT_EQ(ready.steps[0].loss_scale, 65536.0);
  EXPECT_EQ(ready.steps[0].growth_tracker, 3);
  EXPECT_TRUE(ready.steps[0].skipped);
  ASSERT_EQ(ready.optimizer_steps.size(), 3u);
  EXPECT_FALSE(ready.optimizer_steps[0].skipped) << "the first optimizer took the others' flags";
  EXPECT_TRUE(ready.optimizer_steps[1].skipped);
  EXPECT_FALSE(ready.optimizer_steps[2].skipped) << "a row without flags was decided";
  EXPECT_EQ(ready.optimizer_steps[1].loss_scale_after, 32768.0);
}

// A scheduler call says whether GradScaler skipped the optimizer step it followed: it
// waits until that step's flags are read, and the calls keep the order they were made in.
// A call after step 1 (skipped) must not take step 2's decision (not skipped), though
// both steps leave together.
TEST(DeferredStepValues, SchedulerCallsWaitForTheStepTheyFollowedAndKeepTheirOrder) {
  DeferredStepValues deferred;
  FakeArrival first;
  const double nan = std::nan("");
  deferred.hold(step(1), {row(1, 0)}, at::tensor({nan, nan, nan, nan, nan, 1.0}, at::kDouble), first.fn());
  deferred.hold_scheduler_steps({call(0, 0, 1)});
  EXPECT_TRUE(deferred.take_ready(false).scheduler_steps.empty()) << "a call left before its step's flags";
  deferred.hold(step(2), {row(2, 0, /*skipped=*/false)});
  deferred.hold_scheduler_steps({call(1, 0, 2), call(2, 1, 0)});  // optimizer 1 never stepped
  first.arrived = true;
  const auto ready = deferred.take_ready(false);
  ASSERT_EQ(ready.scheduler_steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(ready.scheduler_steps[i].call, static_cast<int64_t>(i));
  EXPECT_TRUE(ready.scheduler_steps[0].after_skipped);
  EXPECT_FALSE(ready.scheduler_steps[1].after_skipped);
  EXPECT_FALSE(ready.scheduler_steps[2].after_skipped);
  EXPECT_EQ(first.waited, 0);
}

}  // namespace
