// The fp16 loss-scale window from gradient histograms: the least power-of-two scale that
// flushes at most 0.1% of the nonzero elements, the greatest at which the largest gradient
// stays finite, and the sentence the views give. (Against LibTorch's own casts:
// tests/profiler/test_gradient_stats.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "profiler/analysis/loss_scale_window.h"

namespace ampscope::profiler {
namespace {

// A parameter's gradient sample with `count` elements in the bin of [2^k, 2^(k+1)).
GradientSample with_bins(const std::vector<std::pair<int, int64_t>>& bins, double max_abs) {
  GradientSample g;
  g.step = 12;
  g.parameter = "p";
  for (const auto& [k, count] : bins) {
    g.log2_histogram[k - kGradLog2Min] += count;
    g.numel += count;
  }
  g.max_abs = max_abs;
  return g;
}

TEST(LossScaleWindow, FromTheScaleThatKeepsAllButATenthOfAPercentToTheOneThatOverflows) {
  // 1,000 elements in [2^-30, 2^-29), one in [2^-40, 2^-39). At 2^m a bin [2^k, 2^(k+1))
  // flushes (|g·2^m| <= 2^-25) when k + m + 1 <= -25: the 1,000 at m <= 4, the one at m <= 14,
  // which 0.1% of 1,001 allows. The largest, 0.9·2^-29, times 2^45 is 58982 < 65520; times 2^46, inf.
  const auto w = loss_scale_window({with_bins({{-30, 1000}, {-40, 1}}, 0.9 * std::ldexp(1.0, -29))});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->lowest_log2, 5);
  EXPECT_EQ(w->highest_log2, 45);
  EXPECT_TRUE(w->fits());
  EXPECT_EQ(w->step, 12);
  EXPECT_EQ(loss_scale_window_text(*w),
            "these gradients fit fp16 at loss scales from 2^5 to 2^45 (below 2^5 more than 0.10% of the "
            "nonzero elements flush to zero; above 2^45 the largest, |g| = 1.68e-09, overflows); GradScaler starts "
            "at 2^16");
  // Parameters add up: a second one's large gradient lowers the top, its small ones raise the bottom.
  GradientSample small = with_bins({{-30, 1000}, {-40, 1}}, 0.9 * std::ldexp(1.0, -29));
  GradientSample large = with_bins({{-3, 10}, {-45, 5}}, 0.2);
  small.norm = 1e-6;
  large.norm = 0.5;
  const auto two = loss_scale_window({small, large});
  ASSERT_TRUE(two);
  EXPECT_EQ(two->lowest_log2, 20);  // 5 + 1 of 1,016 flush at m <= 19: more than 1.016
  EXPECT_EQ(two->highest_log2, 18);  // 0.2·2^18 = 52429; 0.2·2^19 overflows
  EXPECT_FALSE(two->fits());
  // What 2^18 loses: the 5 elements below 2^-44 of 1,016, and at most sqrt(5·2^-88) of the
  // norm sqrt(1e-12 + 0.25).
  EXPECT_DOUBLE_EQ(two->flushed_at_highest, 5.0 / 1016);
  EXPECT_DOUBLE_EQ(two->flushed_norm_share_at_highest, std::sqrt(5 * std::ldexp(1.0, -88) / (1e-12 + 0.25)));
  EXPECT_EQ(loss_scale_window_text(*two),
            "no loss scale fits these gradients in fp16: keeping all but 0.10% of the nonzero elements from "
            "flushing to zero needs 2^20, and above 2^18 the largest (|g| = 0.200) overflows. At 2^18, 0.49% of the "
            "nonzero elements flush to zero, carrying at most <0.01% of the gradients' L2 norm; bf16 has fp32's "
            "range");
}

TEST(LossScaleWindow, GradScalersStartIsPlacedAgainstTheWindow) {
  // Large gradients: the window ends below 2^16, so GradScaler starts above it and backs off.
  auto w = loss_scale_window({with_bins({{-10, 100}}, 4.0)});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->highest_log2, 13);  // 4·2^13 = 32768; 4·2^14 = 65536 overflows
  EXPECT_NE(loss_scale_window_text(*w).find("GradScaler starts at 2^16, above which it backs off on overflowing "
                                            "steps"),
            std::string::npos);
  // Tiny gradients: the window starts above 2^16.
  w = loss_scale_window({with_bins({{-50, 100}}, std::ldexp(1.0, -49))});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->lowest_log2, 25);
  EXPECT_NE(loss_scale_window_text(*w).find("below the window: it grows only after growth_interval clean steps"),
            std::string::npos);
}

// The histogram's first bin holds everything below 2^-63: taken as small as the sample's
// smallest nonzero |g|, not as flushed at every scale (which read "more than 0.1% flush to
// zero at any float32 scale" for gradients a scale of 2^46 keeps).
TEST(LossScaleWindow, TheBottomBinFlushesWhileTheSmallestGradientDoes) {
  GradientSample g = with_bins({{-20, 1000}}, 0.5);
  g.log2_histogram[0] = 10;  // 1% of the elements, the smallest at 2^-70
  g.numel += 10;
  g.min_abs_nonzero = std::ldexp(1.0, -70);
  // 2^-70·2^m <= 2^-25 up to m = 45.
  auto w = loss_scale_window({g});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->lowest_log2, 46);
  g.min_abs_nonzero = 0;  // unknown: flushed at every scale
  w = loss_scale_window({g});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->lowest_log2, 128);
  EXPECT_NE(loss_scale_window_text(*w).find("more than 0.10% of the nonzero elements flush to zero at any float32 "
                                            "scale"),
            std::string::npos);
}

TEST(LossScaleWindow, NothingNonzeroNoWindow) {
  GradientSample zeros;
  zeros.numel = 100;
  zeros.zero_fraction = 1.0;
  EXPECT_FALSE(loss_scale_window({zeros}));
  EXPECT_FALSE(loss_scale_window({}));
}

}  // namespace
}  // namespace ampscope::profiler
