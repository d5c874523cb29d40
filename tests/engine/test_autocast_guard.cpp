// The autocast guard on the CPU: lower-precision ops come out in the region's
// dtype, ops on the CPU fp32 list stay fp32, and the state is restored.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "engine/autocast_guard.h"

namespace ampscope::engine {
namespace {

class AutocastGuardTest : public ::testing::TestWithParam<c10::ScalarType> {};

TEST_P(AutocastGuardTest, LinearAndMatmulAreDemotedFp32ListStaysFp32) {
  const c10::ScalarType dtype = GetParam();
  const at::Tensor x = at::randn({8, 16});
  const at::Tensor w = at::randn({4, 16});
  const at::Tensor target = at::randn({8, 4});
  {
    AutocastGuard guard(c10::kCPU, dtype);
    EXPECT_EQ(at::linear(x, w).scalar_type(), dtype);
    EXPECT_EQ(at::matmul(x, w.t()).scalar_type(), dtype);
    EXPECT_EQ(at::addmm(target, x, w.t()).scalar_type(), dtype);
    // mse_loss is on the CPU fp32 list: reduced-precision inputs, fp32 result.
    const at::Tensor low = at::linear(x, w);
    EXPECT_EQ(at::mse_loss(low, target).scalar_type(), at::kFloat);
    // Elementwise ops run in whatever their inputs are (not on any list).
    EXPECT_EQ(at::relu(low).scalar_type(), dtype);
    // cat is on the promote list: mixed inputs run at the widest type.
    EXPECT_EQ(at::cat({low, target}).scalar_type(), at::kFloat);
  }
  EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, AutocastGuardTest, ::testing::Values(at::kBFloat16, at::kHalf),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST(AutocastGuard, RestoresPreviousStateAndNests) {
  const bool was_enabled = at::autocast::is_autocast_enabled(c10::kCPU);
  const c10::ScalarType was_dtype = at::autocast::get_autocast_dtype(c10::kCPU);
  const at::Tensor x = at::randn({2, 3});
  const at::Tensor w = at::randn({5, 3});
  {
    AutocastGuard outer(c10::kCPU, at::kBFloat16);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::kCPU));
    {
      AutocastGuard inner(c10::kCPU, at::kBFloat16, /*enabled=*/false);
      EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));
      EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat);
    }
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::kCPU));
    EXPECT_EQ(at::linear(x, w).scalar_type(), at::kBFloat16);
    {
      AutocastGuard inner(c10::kCPU, at::kHalf);
      EXPECT_EQ(at::linear(x, w).scalar_type(), at::kHalf);
    }
    EXPECT_EQ(at::autocast::get_autocast_dtype(c10::kCPU), at::kBFloat16);
  }
  EXPECT_EQ(at::autocast::is_autocast_enabled(c10::kCPU), was_enabled);
  EXPECT_EQ(at::autocast::get_autocast_dtype(c10::kCPU), was_dtype);
}

TEST(AutocastGuard, CastCacheIsClearedWhenOutermostRegionExits) {
  // Within a region a leaf fp32 weight is cast once and the copy reused; after the
  // outermost exit the cache must be empty, or the next step would use stale weights.
  at::Tensor w = at::randn({4, 4}).set_requires_grad(true);
  const at::Tensor x = at::randn({2, 4});
  at::Tensor first;
  {
    AutocastGuard guard(c10::kCPU, at::kBFloat16);
    first = at::linear(x, w);
  }
  {
    at::NoGradGuard no_grad;
    w.mul_(2.0);
  }
  AutocastGuard guard(c10::kCPU, at::kBFloat16);
  const at::Tensor second = at::linear(x, w);
  EXPECT_TRUE(at::allclose(second.to(at::kFloat), first.to(at::kFloat) * 2.0, 5e-2, 5e-2));
}

TEST(AutocastGuard, PrecisionToDtype) {
  EXPECT_EQ(autocast_dtype(Precision::kFP16), at::kHalf);
  EXPECT_EQ(autocast_dtype(Precision::kBF16), at::kBFloat16);
  EXPECT_FALSE(autocast_dtype(Precision::kFP32).has_value());
}

}  // namespace
}  // namespace ampscope::engine
