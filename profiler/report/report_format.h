#pragma once
// Text helpers shared by the SVG charts, the verdict and the HTML report: escaping
// and the number spellings a reader sees. printf-based, so the report library needs
// neither fmt nor LibTorch. Non-finite values never print as "nan"/"inf" garbage:
// each helper says what it does with them.
#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/analysis/memory_peak.h"
#include "profiler/analysis/step_timing.h"
#include "profiler/number_text.h"

namespace ampscope::profiler::report_detail {

// For text and double-quoted attribute values in HTML and SVG (also valid XML):
// & < > " ' escaped; control characters other than tab/LF/CR dropped, since XML forbids them.
std::string escape(std::string_view text);

// The number spellings (sig3, ms_text, bytes_text, ...) are profiler/number_text.h's.
using text::bytes_text;
using text::factor;
using text::fixed;
using text::flops_text;
using text::grouped;
using text::ms_text;
using text::ns_as_ms;
using text::percent;
using text::power_of_two_text;
using text::printf_string;
using text::shapes_text;
using text::sig3;

// The text with its first letter upper-case (ASCII): a clause made a sentence.
std::string capitalized(std::string text);

// A session's step time with capture told apart, one line: "median step 19.0 ms over 36
// unprofiled steps; 4 profiled steps 21.3 ms (capture overhead 1.12×)", or that every step
// was profiled, so its time includes capture.
std::string step_timing_text(const StepTiming& timing);

// A session's memory high-water mark, and where range samples raised it, what the other
// steps reached: "2.10 GB; 1.62 GB outside range-sampled steps (...)". Empty where
// no step measured memory.
std::string memory_peak_text(const MemoryPeak& peak);

}  // namespace ampscope::profiler::report_detail
