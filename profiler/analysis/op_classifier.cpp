#include "profiler/analysis/op_classifier.h"

#include <algorithm>
#include <array>

namespace ampscope::profiler {

std::string_view op_base_name(std::string_view op) {
  if (auto p = op.rfind("::"); p != std::string_view::npos) op.remove_prefix(p + 2);
  if (auto p = op.find('.'); p != std::string_view::npos) op = op.substr(0, p);
  return op;
}

bool is_cast_op(std::string_view name) {
  // prims::convert_element_type: the cast of torch.compile's decomposed graphs.
  static constexpr std::array<std::string_view, 11> kCasts{
      "aten::to",   "aten::_to_copy", "aten::type_as", "aten::half",
      "aten::bfloat16", "aten::float", "aten::double", "aten::_autocast_to_reduced_precision",
      "aten::_autocast_to_full_precision", "aten::_to_dense",
      "prims::convert_element_type"};
  return std::find(kCasts.begin(), kCasts.end(), name) != kCasts.end();
}

int floating_width(std::string_view dtype) {
  if (dtype == "float32") return 32;
  if (dtype == "float16" || dtype == "bfloat16") return 16;
  if (dtype == "float64") return 64;
  return 0;
}

bool is_floating_dtype(std::string_view dtype) { return floating_width(dtype) > 0; }

bool is_reduced_precision_dtype(std::string_view dtype) {
  return dtype == "float16" || dtype == "bfloat16";
}

FloatKind float_kind(std::string_view dtype) { return {floating_width(dtype), dtype == "bfloat16"}; }

OpCategory classify_op(std::string_view name, const std::vector<DtypeName>& input_dtypes,
                       const std::vector<DtypeName>& output_dtypes, const CastContext& context) {
  // The inner steps of a cast (_to_copy, empty_strided, copy_) are the cast's, not decisions of their own.
  if (context.inside_cast) return OpCategory::kUnchanged;
  // FSDP's mixed-precision policy converts in its own scopes, in copies as much as in casts: the
  // parameters' shards copied into a param_dtype buffer to be gathered (aten::_foreach_copy_),
  // the gradients into a reduce_dtype one (fsdp::chunk_cat), the forward's inputs cast.
  if (context.in_sharding_scope) {
    std::string_view first;  // the first floating dtype: another one means a conversion
    for (const auto* dtypes : {&input_dtypes, &output_dtypes})
      for (const DtypeName& d : *dtypes) {
        if (!is_floating_dtype(d)) continue;
        if (first.empty()) {
          first = d;
        } else if (first != d) {
          return OpCategory::kShardingCast;
        }
      }
  }
  if (is_cast_op(name)) {
    // Only a change of floating-point precision is a cast in autocast's sense: aten::to to
    // the dtype it already has returns its input, and integer or wrapped-number
    // conversions (optimizer bookkeeping) are no precision decision.
    const bool converts = !input_dtypes.empty() && !output_dtypes.empty() &&
                          is_floating_dtype(input_dtypes.front()) && is_floating_dtype(output_dtypes.front()) &&
                          input_dtypes.front() != output_dtypes.front();
    if (!converts) return OpCategory::kUnchanged;
    if (context.parent_entered_under_autocast || context.backward_of_autocast_cast) return OpCategory::kAutocastCast;
    return context.backward_of_promotion ? OpCategory::kPromotionCast : OpCategory::kExplicitCast;
  }
  FloatMix mix;
  for (const auto& d : input_dtypes) mix.add(float_kind(d));
  const DtypeName* out = nullptr;
  for (const auto& d : output_dtypes) {
    if (is_floating_dtype(d)) {
      out = &d;
      break;
    }
  }
  if (output_dtypes.empty() && !context.autocast_cast_to.empty())
    return is_reduced_precision_dtype(context.autocast_cast_to) ? OpCategory::kDemoted : OpCategory::kKeptFp32;
  if (!mix.any || out == nullptr) return OpCategory::kUnchanged;
  if (context.autocast_turned_off) return OpCategory::kAutocastOff;
  if (mix.promotes_to(float_kind(*out)))
    return context.autocast_listed_not_promote && mix.reduced && *out == "float32" ? OpCategory::kKeptFp32
                                                                                  : OpCategory::kPromoted;
  if (!context.autocast_acted.value_or(true)) return OpCategory::kUnchanged;
  const int out_width = floating_width(*out);
  if (mix.widest > out_width && is_reduced_precision_dtype(*out)) return OpCategory::kDemoted;
  if (mix.reduced && mix.widest == 16 && *out == "float32") return OpCategory::kKeptFp32;
  return OpCategory::kUnchanged;
}

}  // namespace ampscope::profiler
