#pragma once
// Text helpers shared by the SVG charts, the verdict and the HTML report: escaping
// and the number spellings a reader sees. printf-based, so the report library needs
// neither fmt nor LibTorch. Non-finite values never print as "nan"/"inf" garbage:
// each helper says what it does with them.
#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/analysis/step_timing.h"

namespace ampscope::profiler::report_detail {

// For text and double-quoted attribute values in HTML and SVG (also valid XML):
// & < > " ' escaped; control characters other than tab/LF/CR dropped, since XML forbids them.
std::string escape(std::string_view text);

// The text with its first letter upper-case (ASCII): a clause made a sentence.
std::string capitalized(std::string text);

// printf into a std::string.
std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Three significant digits without an exponent for 0.001 <= |v| < 1e6 ("2.31", "0.0123",
// "1230"), else %.3g; "–" (an en dash) when not finite.
std::string sig3(double v);
// Fixed decimals; "–" when not finite.
std::string fixed(double v, int decimals);
// 1234567 -> "1,234,567".
std::string grouped(int64_t v);
// Milliseconds: "12.3 ms", "0.45 ms", "1,234 ms".
std::string ms_text(double ms);
// Nanoseconds as milliseconds, same spelling.
std::string ns_as_ms(double ns);
// "512 B", "1.5 MiB", "12.0 GiB".
std::string bytes_text(double bytes);
// A fraction as a percentage: "12%", "3.4%", "0.30%", "<0.01%", "0%".
std::string percent(double fraction);
// A speed factor: "15×", "2.4×", "1.03×", "0.5×", "0.025×"; "–" when not finite or <= 0.
std::string factor(double x);
// A power of two as "2^16" (or "1", "0.5", "8" below 2^4) when it is one (within rounding), else
// sig3.
std::string power_of_two_text(double v);
// FLOP/s: "12.3 TFLOP/s", "850 GFLOP/s".
std::string flops_text(double flops_per_second);
// A session's step time with capture told apart, one line: "median step 19.0 ms over 36
// unprofiled steps; 4 profiled steps 21.3 ms (capture overhead 1.12×)", or that every step
// was profiled, so its time includes capture.
std::string step_timing_text(const StepTiming& timing);

}  // namespace ampscope::profiler::report_detail
