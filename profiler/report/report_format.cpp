#include "profiler/report/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ampscope::profiler::report_detail {
namespace {

constexpr const char* kDash = "\u2013";

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;
        out += ch;
    }
  }
  return out;
}

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

std::string bytes_text(double bytes) {
  if (!std::isfinite(bytes)) return kDash;
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? printf_string("%.0f B", v) : printf_string("%.1f %s", v, units[u]);
}

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

std::string step_timing_text(const StepTiming& t) {
  if (t.recorded_steps + t.unrecorded_steps == 0) return "no steps";
  if (t.recorded_steps == 0) return "median step " + ms_text(t.unrecorded_median_ms) + " (no step was profiled)";
  if (t.every_step_recorded())
    return "median step " + ms_text(t.recorded_median_ms) + "; every step was profiled, so this includes capture";
  return "median step " + ms_text(t.unrecorded_median_ms) + " over " + grouped(t.unrecorded_steps) +
         " unprofiled steps; " + grouped(t.recorded_steps) + " profiled steps " + ms_text(t.recorded_median_ms) +
         " (capture overhead " + factor(t.capture_overhead().value_or(0.0)) + ")";
}

std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

}  // namespace ampscope::profiler::report_detail
