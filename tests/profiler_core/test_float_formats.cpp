// The format limits in profiler/float_formats.h against Python's torch.finfo,
// and its cast rules against what LibTorch's casts do to values at and beside
// every bound.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/float_formats.h"
#include "tests/support/test_support.h"

namespace ampscope::profiler {
namespace {

at::ScalarType torch_type(FloatFormat f) {
  switch (f) {
    case FloatFormat::fp16: return at::kHalf;
    case FloatFormat::bf16: return at::kBFloat16;
    case FloatFormat::fp8_e4m3fn: return at::kFloat8_e4m3fn;
    case FloatFormat::fp8_e5m2: return at::kFloat8_e5m2;
  }
  return at::kFloat;
}

// What LibTorch's cast makes of a finite positive float32 value (fp32 is what
// gradients and activations are cast from; LibTorch casts float64 through
// float32, rounding twice, so float64 inputs would test that instead).
CastOutcome torch_cast_outcome(const FloatFormatLimits& f, float x) {
  const double y = at::tensor({x}, at::kFloat).to(torch_type(f.format)).to(at::kDouble).item<double>();
  if (x == 0) return CastOutcome::zero;
  if (!std::isfinite(y)) return CastOutcome::overflow;
  if (y == 0) return CastOutcome::flushed_to_zero;
  if (y < f.min_normal) return CastOutcome::subnormal;
  return CastOutcome::normal;
}

TEST(FloatFormats, LimitsMatchPythonTorchFinfo) {
  const auto python = test::python_with_torch();
  if (!python) GTEST_SKIP() << "no Python with torch configured (AMPSCOPE_PYTHON)";
  std::string out;
  const std::string cmd =
      fmt::format("'{}' '{}'", *python, test::test_source_path("python/float_formats_reference.py").string());
  ASSERT_EQ(test::run_command(cmd, &out), 0) << cmd;
  std::istringstream lines(out);
  std::string dtype, max, normal, subnormal;
  int has_inf = 0, mantissa = 0, seen = 0;
  while (lines >> dtype >> max >> normal >> subnormal >> has_inf >> mantissa) {
    const FloatFormatLimits* f = nullptr;
    for (const auto& candidate : kFloatFormats)
      if (candidate.torch_dtype == dtype) f = &candidate;
    ASSERT_NE(f, nullptr) << dtype;
    EXPECT_EQ(f->max, std::strtod(max.c_str(), nullptr)) << dtype;  // hex floats: exact
    EXPECT_EQ(f->min_normal, std::strtod(normal.c_str(), nullptr)) << dtype;
    EXPECT_EQ(f->min_subnormal, std::strtod(subnormal.c_str(), nullptr)) << dtype;
    EXPECT_EQ(f->has_inf, has_inf != 0) << dtype;
    EXPECT_EQ(f->mantissa_bits, mantissa) << dtype;
    ++seen;
  }
  EXPECT_EQ(seen, kFloatFormatCount) << out;
}

TEST(FloatFormats, TheNumbersTheIssueNames) {
  // fp8 e4m3fn: max 448, min normal 2^-6, min subnormal 2^-9, no inf; e5m2: 57344, 2^-14, 2^-16.
  const auto& e4m3 = float_format(FloatFormat::fp8_e4m3fn);
  EXPECT_EQ(e4m3.max, 448.0);
  EXPECT_EQ(e4m3.min_normal, std::ldexp(1.0, -6));
  EXPECT_EQ(e4m3.min_subnormal, std::ldexp(1.0, -9));
  EXPECT_FALSE(e4m3.has_inf);
  const auto& e5m2 = float_format(FloatFormat::fp8_e5m2);
  EXPECT_EQ(e5m2.max, 57344.0);
  EXPECT_EQ(e5m2.min_normal, std::ldexp(1.0, -14));
  EXPECT_EQ(e5m2.min_subnormal, std::ldexp(1.0, -16));
  EXPECT_EQ(float_format(FloatFormat::fp16).max, 65504.0);
  EXPECT_EQ(float_format(FloatFormat::fp16).min_subnormal, std::ldexp(1.0, -24));
}

TEST(FloatFormats, CastOutcomeMatchesLibTorchCastsAtEveryBound) {
  for (const FloatFormatLimits& f : kFloatFormats) {
    const double bounds[] = {f.min_subnormal / 2,
                             f.min_subnormal,
                             f.min_normal - f.min_subnormal / 2,
                             f.min_normal,
                             f.max,
                             f.overflow_bound,
                             std::min(f.max * 2, static_cast<double>(std::numeric_limits<float>::max()))};
    for (double bound : bounds) {
      const auto b = static_cast<float>(bound);
      ASSERT_EQ(static_cast<double>(b), bound) << f.name << ": every bound is a float32";
      for (float x : {std::nextafter(b, 0.0f), b, std::nextafter(b, std::numeric_limits<float>::infinity())}) {
        EXPECT_EQ(cast_outcome(f, x), torch_cast_outcome(f, x)) << f.name << " at " << fmt::format("{:a}", x);
      }
    }
    // A sweep over the whole range, 64 values per octave.
    for (double e = std::log2(f.min_subnormal) - 4; e < std::log2(f.max) + 2; e += 1.0 / 64) {
      const auto x = static_cast<float>(std::exp2(e));
      ASSERT_EQ(cast_outcome(f, x), torch_cast_outcome(f, x)) << f.name << " at " << fmt::format("{:a}", x);
    }
  }
}

TEST(FloatFormats, E4m3CastsOutOfRangeToNanNotInf) {
  // What "no inf" means for a plain cast: NaN; recipes that saturate clamp first.
  const auto& f = float_format(FloatFormat::fp8_e4m3fn);
  const at::Tensor y = at::tensor({1000.0}, at::kDouble).to(at::kFloat8_e4m3fn).to(at::kDouble);
  EXPECT_TRUE(std::isnan(y.item<double>()));
  EXPECT_EQ(cast_outcome(f, 1000.0), CastOutcome::overflow);
}

}  // namespace
}  // namespace ampscope::profiler
