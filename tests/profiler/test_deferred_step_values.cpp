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
  deferred.hold(step(1), host(2.5, 0.75), first.fn());
  StepRecord second = step(2);
  second.loss = 1.25;  // known on the host (a loss given as a float)
  deferred.hold(second);
  EXPECT_TRUE(deferred.take_ready(false).empty()) << "step 2 left before step 1";
  EXPECT_EQ(first.waited, 0) << "the training thread waited for the device";

  first.arrived = true;
  const auto ready = deferred.take_ready(false);
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
    deferred.hold(step(static_cast<int64_t>(i) + 1), host(double(i), 0), arrivals[i].fn());
  const auto ready = deferred.take_ready(false);
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1}));
  EXPECT_EQ(arrivals[0].waited, 1);
  for (size_t i = 1; i < arrivals.size(); ++i) EXPECT_EQ(arrivals[i].waited, 0) << "step " << i + 1;
  EXPECT_EQ(deferred.waiting(), DeferredStepValues::kMaxWaiting);
}

TEST(DeferredStepValues, TheRunsEndReadsEveryStepInOrder) {
  DeferredStepValues deferred;
  std::vector<FakeArrival> arrivals(3);
  for (size_t i = 0; i < arrivals.size(); ++i)
    deferred.hold(step(static_cast<int64_t>(i) + 1), host(10.0 + double(i), 0.5), arrivals[i].fn());
  const auto ready = deferred.take_ready(true);
  ASSERT_EQ(step_numbers(ready), (std::vector<int64_t>{1, 2, 3}));
  for (size_t i = 0; i < ready.size(); ++i) EXPECT_EQ(ready[i].loss, 10.0 + double(i));
}

TEST(DeferredStepValues, AFailedDeviceCostsTheValuesNotTheSteps) {
  DeferredStepValues deferred;
  deferred.hold(step(1), host(3.0, 1.0), [](bool) -> Arrival { throw std::runtime_error("CUDA error"); });
  deferred.hold(step(2), host(4.0, 1.0), [](bool) { return Arrival::kLost; });
  deferred.hold(step(3), host(5.0, 1.0), [](bool) { return Arrival::kArrived; });
  const auto ready = deferred.take_ready(false);
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
  deferred.hold(step(1), values);
  const auto ready = deferred.take_ready(false);
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
  deferred.hold(r, only_norm);
  const auto ready = deferred.take_ready(false);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].loss, 0.5);
  EXPECT_EQ(ready[0].grad_norm, 2.0);
}

}  // namespace
