#pragma once
// dtype names as ampscope records them ("float32", "bfloat16", ...), matching
// Python's torch.<name> spellings.
#include <c10/core/ScalarType.h>

#include <string>

namespace ampscope::profiler {

std::string dtype_name(c10::ScalarType t);

}  // namespace ampscope::profiler
