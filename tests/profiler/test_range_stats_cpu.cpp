// The range statistics' CPU loop (profiler/capture/range_stats_cpu.h, issue 27)
// against the ATen ops it replaces on the CPU (the path a GPU still takes): the
// gradient samples of parameters of every dtype, with zeros, NaN, inf, tiny and
// huge values and a gradient spread over several of the loop's tasks; the
// activation pass's columns on float32 and float64 members; and results that do
// not depend on the number of threads.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
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

// The ATen ops (a GPU build without ampscope's kernels) measure a gradient past one pass
// in pieces (table_in_pieces): each count, extreme, norm and histogram bin equals the
// loop's over the whole tensor. The extremes sit in the last piece, so a piece merged
// the wrong way (a minimum summed, a norm added) shows.
TEST(RangeStatsCpu, AGradientPastOnePassMeasuredInPiecesEqualsTheWhole) {
  at::Tensor g = wide_values(kPassElements + 4099, 7);
  g[-1] = 3e12;     // the largest |g|
  g[-2] = -1e-300;  // the smallest nonzero |g|
  const std::vector<std::pair<std::string, at::Tensor>> params{{"embedding", range_cases::parameter(g)}};
  for (const double scale : {1.0, 65536.0}) {
    SCOPED_TRACE(scale);
    const auto pieces = gradient_range_stats(5, params, scale, RangeKernel::aten);
    const auto whole = gradient_range_stats(5, params, scale, RangeKernel::best);
    expect_same_samples(pieces, whole);
    ASSERT_EQ(whole.size(), 1u);
    EXPECT_EQ(whole[0].max_abs, 3e12);
    EXPECT_EQ(whole[0].min_abs_nonzero, 1e-300);
  }
}

// What the ATen ops are handed at once: never a member past the bound, whatever the pass
// holds; rows come back in member order, a split member's merged as asked.
TEST(BatchedPass, TableInPiecesHandsTheOpsNoMemberPastTheBound) {
  const at::Tensor big = at::arange(1, 26, at::kDouble);  // 1..25: 4 pieces of 8, 8, 8, 1
  const std::vector<PassMember> members{{0, at::full({3}, 2.0, at::kDouble)}, {1, big}, {2, at::full({5}, -1.0, at::kDouble)}};
  int64_t largest = 0, calls = 0;
  // Per member: sum, min, max, root of the sum of squares.
  const auto table = [&](const std::vector<PassMember>& ms) {
    ++calls;
    std::vector<at::Tensor> rows;
    for (const PassMember& m : ms) {
      largest = std::max(largest, m.flat.numel());
      rows.push_back(at::stack({m.flat.sum(), m.flat.min(), m.flat.max(), m.flat.square().sum().sqrt()}));
    }
    return at::stack(rows);
  };
  const std::vector<PieceMerge> merge{PieceMerge::kSum, PieceMerge::kMin, PieceMerge::kMax,
                                      PieceMerge::kRootSumSquares};
  const at::Tensor got = table_in_pieces(members, merge, table, 8);
  EXPECT_EQ(largest, 8);
  EXPECT_EQ(calls, 1 + 4) << "the members within the bound together, then each piece";
  largest = 0;
  const at::Tensor want = table(members);  // each member whole
  EXPECT_EQ(largest, 25);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(at::allclose(got, want, 1e-15, 0)) << got << want;
  EXPECT_EQ(got[1][0].item<double>(), 325.0);
  EXPECT_EQ(got[1][1].item<double>(), 1.0);
  EXPECT_EQ(got[1][2].item<double>(), 25.0);
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
