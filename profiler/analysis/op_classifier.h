#pragma once
// Reads what autocast did to an op call from its dtypes alone: the same
// evidence a user would see in PyTorch's profiler with record_shapes.
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// The op's name without namespace and overload: "aten::mm.out" -> "mm". Overloads
// do not change what an op computes, so families of ops are matched on this.
std::string_view op_base_name(std::string_view op);

// Whether an op converts its input's dtype (aten::to, _to_copy, .half(), ...).
bool is_cast_op(std::string_view name);

bool is_floating_dtype(std::string_view dtype);
bool is_reduced_precision_dtype(std::string_view dtype);  // float16, bfloat16
// Bits of a floating dtype (64, 32, 16); 0 for others.
int floating_width(std::string_view dtype);

struct CastContext {
  // The op is directly under an op that was entered with autocast on for its
  // device: a cast there was inserted by autocast (its kernel casts the inputs).
  bool parent_entered_under_autocast = false;
  // The op is an inner step of another: of a cast (its _to_copy, copy_ are the outer cast's),
  // or of a compiled graph's decomposed op (the cast to the precision GELU computes in).
  bool inside_cast = false;
  // The op runs in the backward node of a cast autocast inserted (the gradient
  // cast back to the weight's dtype): cast tax paid in the backward pass.
  bool backward_of_autocast_cast = false;
};

// Category of one call. Rules, in order:
//  - a cast (outermost): autocast's if its parent ran under autocast, else explicit;
//  - floating inputs of several widths and an output of the widest: promoted;
//  - a floating input wider than a reduced-precision output: demoted;
//  - only reduced-precision floating inputs and a float32 output: kept fp32;
//  - anything else ran in its inputs' precision: unchanged.
OpCategory classify_op(std::string_view name, const std::vector<DtypeName>& input_dtypes,
                       const std::vector<DtypeName>& output_dtypes, const CastContext& context);

}  // namespace ampscope::profiler
