#pragma once
// The one definition of the limits of the floating-point formats that
// mixed-precision training keeps values in (fp16, bf16, fp8 e4m3fn, fp8 e5m2),
// and of what a cast to each does to a value out of its range. Plain C++, no
// LibTorch or Qt: the gradient statistics, the exports, the report and the GUI
// all read these. tests/profiler_core/test_float_formats.cpp checks every number
// against Python's torch.finfo and every rounding bound against LibTorch's casts.
#include <array>
#include <cmath>
#include <string_view>

namespace ampscope::profiler {

enum class FloatFormat { fp16, bf16, fp8_e4m3fn, fp8_e5m2 };
inline constexpr int kFloatFormatCount = 4;

struct FloatFormatLimits {
  FloatFormat format;
  std::string_view name;         // "fp16", "bf16", "fp8 e4m3", "fp8 e5m2": what views show
  std::string_view key;          // "fp16", "bf16", "fp8_e4m3", "fp8_e5m2": column and JSON names
  std::string_view torch_dtype;  // torch.float16, ...: the dtype the test compares with
  int exponent_bits;
  int mantissa_bits;             // stored (explicit) mantissa bits
  double max;                    // torch.finfo(dtype).max
  double min_normal;             // torch.finfo(dtype).smallest_normal (= tiny)
  double min_subnormal;          // smallest positive subnormal: min_normal * finfo.eps
  bool has_inf;                  // e4m3fn has none: a cast out of range gives NaN
                                 // (fp8 recipes clamp to ±max first, i.e. saturate)
  // Round to nearest even, as every cast does: a finite value whose magnitude is
  // >= overflow_bound (fp16, bf16, e5m2, whose max has an odd mantissa, so the tie
  // rounds away) or > overflow_bound (e4m3fn: its tie rounds down to 448) becomes
  // inf (NaN for e4m3fn). overflow_bound = max + half an ulp of max.
  double overflow_bound;
  bool overflow_at_bound;
};

// Hex literals: 0x1p-24 = 2^-24. Every value is exact.
inline constexpr std::array<FloatFormatLimits, kFloatFormatCount> kFloatFormats{{
    {FloatFormat::fp16, "fp16", "fp16", "float16", 5, 10, 0x1.ffcp15 /* 65504 */, 0x1p-14, 0x1p-24, true,
     0x1.ffep15 /* 65520 */, true},
    {FloatFormat::bf16, "bf16", "bf16", "bfloat16", 8, 7, 0x1.fep127 /* 3.39e38 */, 0x1p-126, 0x1p-133, true,
     0x1.ffp127, true},
    {FloatFormat::fp8_e4m3fn, "fp8 e4m3", "fp8_e4m3", "float8_e4m3fn", 4, 3, 0x1.cp8 /* 448 */, 0x1p-6, 0x1p-9,
     false, 0x1.dp8 /* 464 */, false},
    {FloatFormat::fp8_e5m2, "fp8 e5m2", "fp8_e5m2", "float8_e5m2", 5, 2, 0x1.cp15 /* 57344 */, 0x1p-14, 0x1p-16,
     true, 0x1.ep15 /* 61440 */, true},
}};

constexpr const FloatFormatLimits& float_format(FloatFormat f) { return kFloatFormats[static_cast<int>(f)]; }

// Where a finite magnitude |x| lands when cast to the format (round to nearest
// even), for |x| representable in float32, as fp32 gradients (times a power-of-two
// loss scale) and activations are. LibTorch casts float64 through float32, so a
// float64 within half a float32 step of a bound can land on the other side.
enum class CastOutcome { zero, flushed_to_zero, subnormal, normal, overflow };

constexpr CastOutcome cast_outcome(const FloatFormatLimits& f, double magnitude) {
  if (magnitude == 0) return CastOutcome::zero;
  // Half the smallest subnormal is a tie between 0 (even) and it: rounds to 0.
  if (magnitude <= f.min_subnormal / 2) return CastOutcome::flushed_to_zero;
  // Half a subnormal step below min_normal ties between the largest subnormal
  // (odd mantissa) and min_normal (even): rounds up to normal.
  if (magnitude < f.min_normal - f.min_subnormal / 2) return CastOutcome::subnormal;
  if (f.overflow_at_bound ? magnitude >= f.overflow_bound : magnitude > f.overflow_bound) {
    return CastOutcome::overflow;
  }
  return CastOutcome::normal;
}

// log2 of the landmarks, for plots on a log2|x| axis.
inline double log2_max(const FloatFormatLimits& f) { return std::log2(f.max); }
inline double log2_min_normal(const FloatFormatLimits& f) { return std::log2(f.min_normal); }
inline double log2_min_subnormal(const FloatFormatLimits& f) { return std::log2(f.min_subnormal); }

}  // namespace ampscope::profiler
