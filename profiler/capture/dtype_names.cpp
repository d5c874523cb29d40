#include "profiler/capture/dtype_names.h"

#include <algorithm>
#include <cctype>

namespace ampscope::profiler {

std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    default: {
      std::string s = c10::toString(t);
      std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
      return s;
    }
  }
}

}  // namespace ampscope::profiler
