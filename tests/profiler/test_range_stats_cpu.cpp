// The range statistics' CPU loop (profiler/capture/range_stats_cpu.h, issue 27)
// against the ATen ops it replaces on the CPU (the path a GPU still takes): the
// gradient samples of parameters of every dtype, with zeros, NaN, inf, tiny and
// huge values and a gradient spread over several of the loop's tasks; the
// activation pass's columns on float32 and float64 members; and results that do
// not depend on the number of threads.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/gradient_stats.h"
#include "profiler/capture/range_stats_cpu.h"
#include "tests/support/range_stats_cases.h"

namespace ampscope::profiler {
namespace {

using range_cases::expect_same_samples;
using range_cases::parameters;
using range_cases::wide_values;

TEST(RangeStatsCpu, GradientSamplesEqualTheAtenOps) {
  const auto params = parameters();
  for (const double scale : {1.0, 65536.0}) {
    SCOPED_TRACE(scale);
    const auto aten = gradient_range_stats(3, params, scale, RangeKernel::aten);
    const auto cpu = gradient_range_stats(3, params, scale, RangeKernel::best);
    expect_same_samples(cpu, aten);
    // What the comparison covers: every outcome somewhere.
    double flushed = 0, subnormal = 0, overflow = 0;
    for (const GradientSample& s : cpu) {
      const FormatRangeShares fp16 = range_shares(s, FloatFormat::fp16);
      flushed += fp16.underflow;
      subnormal += fp16.subnormal;
      overflow += fp16.overflow;
    }
    EXPECT_GT(flushed, 0);
    EXPECT_GT(subnormal, 0);
    EXPECT_GT(overflow, 0);
  }
}

TEST(RangeStatsCpu, ActivationColumnsEqualTheAtenOps) {
  // The activation pass's columns (non-finite count, max |x|, format counts of |x|)
  // in float32, as a pass of float32/bf16/fp16 outputs computes them, and in float64.
  for (const at::ScalarType compute : {at::kFloat, at::kDouble}) {
    SCOPED_TRACE(compute);
    std::vector<PassMember> members{{0, wide_values(4000, 5).to(compute)},
                                    {1, wide_values(100, 6).to(compute == at::kFloat ? at::kBFloat16 : compute)},
                                    {2, (at::randn({70000}) * 100).to(compute)}};
    const std::vector<double> bounds = format_bounds(compute);
    const at::Tensor t = range_stats_cpu(members, compute, 1.0, bounds);
    const at::Tensor counts =
        format_counts_from_places(t.narrow(1, kRangePlaces, static_cast<int64_t>(bounds.size()) + 1), compute);

    const Segments seg(members, compute);
    const at::Tensor a = seg.values().abs();
    const at::Tensor finite = at::isfinite(seg.values());
    const at::Tensor nonzero = (a > 0) & finite;
    EXPECT_TRUE(at::equal(counts, format_counts(a, nonzero, seg)));
    EXPECT_TRUE(at::equal(t.select(1, kRangeNonfinite), seg.count_true(~finite)));
    EXPECT_TRUE(at::equal(t.select(1, kRangeMaxAbs), seg.reduce(at::where(finite, a, 0.0), "max").to(at::kDouble)));
    EXPECT_GT(counts.sum().item<double>(), 0);
  }
}

TEST(RangeStatsCpu, ResultsDoNotDependOnTheNumberOfThreads) {
  const auto params = parameters();
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = gradient_range_stats(1, params, 1024.0);
  at::set_num_threads(4);
  const auto four = gradient_range_stats(1, params, 1024.0);
  at::set_num_threads(threads);
  ASSERT_EQ(one.size(), four.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i].norm, four[i].norm) << one[i].parameter;
  expect_same_samples(four, one);
}

}  // namespace
}  // namespace ampscope::profiler
