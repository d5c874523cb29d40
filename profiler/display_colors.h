#pragma once
// The colour each view gives an autocast category and a precision variant, as 0xRRGGBB: the
// GUI's plots and tables (QColor) and the HTML report's charts read these, so a category looks
// the same wherever a user meets it.
#include <cstdint>
#include <string_view>

#include "profiler/records.h"

namespace ampscope::profiler {

constexpr uint32_t category_color(OpCategory category) {
  switch (category) {
    case OpCategory::kDemoted:
      return 0x2e9e5b;  // green: the fast path
    case OpCategory::kKeptFp32:
      return 0x3b7dd8;  // blue: full precision
    case OpCategory::kPromoted:
      return 0x8e5cc9;  // violet
    case OpCategory::kUnchanged:
      return 0x8a8f98;  // grey
    case OpCategory::kExplicitCast:
      return 0xd98c1f;  // amber
    case OpCategory::kAutocastCast:
      return 0xd64545;  // red: overhead
    case OpCategory::kPromotionCast:
      return 0xc25b9a;  // rose: overhead, the promotion's
    case OpCategory::kAutocastOff:
      return 0x1f9bb0;  // teal: full precision, the script's choice
    case OpCategory::kShardingCast:
      return 0x9c6b30;  // brown: overhead, FSDP's policy's
  }
  return 0x8a8f98;
}

// fp32, tf32, fp16, bf16; 0 for another name (the caller picks one from its palette).
constexpr uint32_t variant_color(std::string_view variant) {
  if (variant == "fp32") return 0x6b7a90;  // slate: the baseline
  if (variant == "tf32") return 0x8e5cc9;  // violet
  if (variant == "fp16") return 0xe07b28;  // orange
  if (variant == "bf16") return 0x2e9e5b;  // green
  return 0;
}

}  // namespace ampscope::profiler
