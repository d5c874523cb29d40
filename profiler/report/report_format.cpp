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
