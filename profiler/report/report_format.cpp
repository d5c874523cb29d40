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
  if (t.recorded_steps + t.unrecorded_steps + t.sampled_steps == 0) return "no steps";
  if (!t.any_recorded()) return "median step " + ms_text(t.unrecorded_median_ms) + " (no step was profiled)";
  const auto steps = [](int64_t n, const char* kind) {
    return grouped(n) + " " + kind + (n == 1 ? " step" : " steps");
  };
  std::string s;
  if (t.every_step_recorded()) {
    s = "median step " + ms_text(t.step_ms()) + "; every step was profiled, so this includes capture";
  } else {
    s = "median step " + ms_text(t.unrecorded_median_ms) + " over " + steps(t.unrecorded_steps, "unprofiled");
    if (t.recorded_steps > 0)
      s += "; " + steps(t.recorded_steps, "profiled") + " " + ms_text(t.recorded_median_ms) + " (capture overhead " +
           factor(t.capture_overhead().value_or(0.0)) + ")";
  }
  if (const auto cost = t.sample_cost())
    s += "; " + steps(t.sampled_steps, "gradient-sampled") + " " + ms_text(t.sampled_median_ms) +
         // No faster than the others: a difference within the steps' spread, not a gain.
         (*cost <= 0.0 ? " (a sample adds no measurable time)"
                       : " (a sample adds " + sig3(*cost) + (*cost == 1.0 ? " step)" : " steps)"));
  return s;
}

std::string memory_peak_text(const MemoryPeak& m) {
  if (m.peak_bytes <= 0) return "";
  std::string s = bytes_text(static_cast<double>(m.peak_bytes));
  if (m.raised_by_samples())
    s += "; " + bytes_text(static_cast<double>(*m.outside_samples_bytes)) +
         " outside range-sampled steps (a sample holds the modules' outputs to its step's end and runs its passes "
         "there)";
  return s;
}

std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

}  // namespace ampscope::profiler::report_detail
