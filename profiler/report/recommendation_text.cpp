#include "profiler/report/recommendation_text.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "profiler/analysis/op_classifier.h"
#include "profiler/analysis/op_family.h"

namespace ampscope::profiler::report_text {

std::string printf_string(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

std::string percent(double fraction) {
  const double p = fraction * 100.0;
  if (p >= 9.95 || p == 0) return printf_string("%.0f%%", p);
  if (p >= 0.995) return printf_string("%.1f%%", p);
  return printf_string("%.2g%%", p);
}

std::string duration(double ns) {
  if (ns >= 1e9) return printf_string("%.3g s", ns / 1e9);
  if (ns >= 1e6) return printf_string("%.3g ms", ns / 1e6);
  if (ns >= 1e3) return printf_string("%.3g µs", ns / 1e3);
  return printf_string("%.0f ns", ns);
}

std::string count(double n) {
  if (n >= 1e9) return printf_string("%.3gG", n / 1e9);
  if (n >= 1e6) return printf_string("%.3gM", n / 1e6);
  if (n >= 1e4) return printf_string("%.3gk", n / 1e3);
  return printf_string("%.0f", n);
}

std::string bytes(double n) {
  if (n >= 1024.0 * 1024 * 1024) return printf_string("%.3g GB", n / (1024.0 * 1024 * 1024));
  if (n >= 1024.0 * 1024) return printf_string("%.3g MB", n / (1024.0 * 1024));
  if (n >= 1024.0) return printf_string("%.3g KB", n / 1024.0);
  return printf_string("%.0f B", n);
}

std::string number(double x) { return printf_string("%.3g", x); }

std::string loss_scale(double s) {
  // Scales are powers of two: 16777216 reads better than 1.68e+07.
  if (s >= 1 && s < 1e15 && s == std::floor(s)) return printf_string("%.0f", s);
  return number(s);
}

std::string shape(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string op_label(const OpStats& row) {
  return row.module.empty() ? row.name : row.module + " " + row.name;
}

bool is_reduced_float(std::string_view d) {
  if (d.substr(0, 5) == "c10::") d.remove_prefix(5);
  return d == "float16" || d == "Half" || d == "half" || d == "bfloat16" || d == "BFloat16";
}

std::string operand_shapes(const OpStats& row) {
  std::string out;
  const size_t first = first_operand_index(op_family(row.name));
  for (size_t i = first; i < first + 2 && i < row.input_shapes.size(); ++i) {
    if (row.input_shapes[i].empty()) continue;
    if (!out.empty()) out += " x ";
    out += shape(row.input_shapes[i]);
  }
  return out;
}

bool runs_in_reduced_precision(const OpStats& row) {
  if (row.category == OpCategory::kDemoted) return true;
  const size_t first = first_operand_index(op_family(row.name));
  for (size_t i = first; i < first + 2 && i < row.input_dtypes.size(); ++i) {
    if (is_reduced_float(row.input_dtypes[i])) return true;
  }
  return false;
}

}  // namespace ampscope::profiler::report_text
