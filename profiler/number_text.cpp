#include "profiler/number_text.h"

#include "engine/bytes_text.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ampscope::profiler::text {
namespace {

constexpr const char* kDash = "\u2013";

}  // namespace

std::string printf_string(const char* format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  std::string out;
  if (n < 0) {
    va_end(copy);
    return out;
  }
  if (static_cast<size_t>(n) < sizeof buffer) {
    out.assign(buffer, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), format, copy);
    out.resize(static_cast<size_t>(n));
  }
  va_end(copy);
  return out;
}

std::string sig3(double v) {
  if (!std::isfinite(v)) return kDash;
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a < 1e-3 || a >= 1e6) return printf_string("%.3g", v);
  const int digits = static_cast<int>(std::floor(std::log10(a)));  // -3..5
  const int decimals = std::max(0, 2 - digits);
  // Trailing zeros stay: "2.30" says three digits were measured.
  return printf_string("%.*f", decimals, v);
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return kDash;
  return printf_string("%.*f", decimals, v);
}

std::string grouped(int64_t v) {
  const auto magnitude =
      v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  const std::string digits = std::to_string(magnitude);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out += ',';
  }
  return v < 0 ? "-" + out : out;
}

std::string ms_text(double ms) {
  if (!std::isfinite(ms)) return kDash;
  const double a = std::fabs(ms);
  if (a >= 1000) return grouped(std::llround(ms)) + " ms";
  if (a >= 100) return printf_string("%.0f ms", ms);
  if (a >= 10) return printf_string("%.1f ms", ms);
  if (a >= 1) return printf_string("%.2f ms", ms);
  return printf_string("%.3f ms", ms);
}

std::string ns_as_ms(double ns) { return ms_text(ns / 1e6); }

std::string bytes_text(double bytes) { return engine::bytes_text(bytes); }

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return kDash;
  const double p = 100.0 * fraction;
  const double a = std::fabs(p);
  if (a == 0) return "0%";
  if (a < 0.01) return "<0.01%";
  if (a < 1) return printf_string("%.2f%%", p);
  if (a < 10) return printf_string("%.1f%%", p);
  return printf_string("%.0f%%", p);
}

std::string factor(double x) {
  if (!std::isfinite(x) || x <= 0) return kDash;
  if (x >= 10) return printf_string("%.0f\u00d7", x);
  if (x >= 1.1) return printf_string("%.1f\u00d7", x);
  if (x >= 0.95) return printf_string("%.2f\u00d7", x);
  return printf_string("%.2g\u00d7", x);  // two significant digits: "0.5×", "0.025×"
}

std::string power_of_two_text(double v) {
  if (!std::isfinite(v) || v <= 0) return sig3(v);
  const double e = std::log2(v);
  const double r = std::round(e);
  if (std::fabs(e - r) >= 1e-9) return sig3(v);
  return std::fabs(r) >= 4 ? printf_string("2^%.0f", r) : printf_string("%g", std::exp2(r));
}

std::string flops_text(double f) {
  if (!std::isfinite(f) || f <= 0) return kDash;
  const char* units[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  int u = 0;
  while (f >= 1000 && u < 5) {
    f /= 1000;
    ++u;
  }
  return sig3(f) + " " + units[u];
}

std::string loss_scale_text(double scale) {
  // GradScaler's scales are powers of two, printed whole as get_scale() prints them:
  // 65536 reads as what the user's script logs; 1.68e+07 does not.
  if (!std::isfinite(scale)) return kDash;
  if (scale >= 1 && scale < 1e15 && scale == std::floor(scale)) return printf_string("%.0f", scale);
  return sig3(scale);
}

std::string duration_text(double ns) {
  if (!std::isfinite(ns)) return kDash;
  const double a = std::fabs(ns);
  if (a < 1e3) return printf_string("%.0f ns", ns);
  if (a < 1e6) return printf_string("%.*f \u00b5s", a < 1e4 ? 2 : 1, ns / 1e3);
  if (a < 1e9) return printf_string("%.*f ms", a < 1e7 ? 2 : 1, ns / 1e6);
  return printf_string("%.2f s", ns / 1e9);
}

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string shapes_text(const std::vector<Shape>& shapes, size_t max_shown) {
  std::string out;
  size_t shown = 0, tensors = 0;
  for (const Shape& shape : shapes) {
    if (shape.empty()) continue;  // not a tensor
    ++tensors;
    if (shown == max_shown) continue;
    out += (out.empty() ? "" : " ") + shape_text(shape);
    ++shown;
  }
  if (tensors > shown) out += printf_string(" \u2026 (+%zu more)", tensors - shown);
  return out;
}

std::string short_dtype(const DtypeName& dtype) {
  if (dtype == "float32" || dtype == "float") return "fp32";
  if (dtype == "float16" || dtype == "half") return "fp16";
  if (dtype == "bfloat16") return "bf16";
  if (dtype == "float64" || dtype == "double") return "fp64";
  return dtype;
}

std::string dtype_flow_text(const std::vector<DtypeName>& inputs, const std::vector<DtypeName>& outputs) {
  const auto distinct = [](const std::vector<DtypeName>& dtypes) {
    std::vector<std::string> seen;
    std::string out;
    for (const DtypeName& d : dtypes) {
      if (d.empty()) continue;
      std::string s = short_dtype(d);
      if (std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      out += (out.empty() ? "" : ",") + s;
      seen.push_back(std::move(s));
    }
    return out;
  };
  const std::string in = distinct(inputs), out = distinct(outputs);
  if (in.empty()) return out.empty() ? std::string() : "\u2192 " + out;
  if (out.empty()) return in;
  return in + " \u2192 " + out;
}

size_t display_width(std::string_view utf8) {
  // Continuation bytes (10xxxxxx) add no column.
  return static_cast<size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

bool shows_gpu_time(const std::vector<OpStats>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const OpStats& r) { return r.gpu_time_ns > 0; });
}

int64_t shown_time_ns(const OpStats& row, bool gpu) { return gpu ? row.gpu_time_ns : row.cpu_time_ns; }

}  // namespace ampscope::profiler::text
