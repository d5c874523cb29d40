#pragma once
// Compact figures for recommendation text ("12%", "3.4 ms", "1.5M", "64 KB"),
// and the reading of op rows the rules share. Internal to profiler/report.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler::report_text {

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));

// A fraction as a percentage with 2 significant digits where it is small: 0.123 -> "12%",
// 0.0123 -> "1.2%", 0.00123 -> "0.12%".
std::string percent(double fraction);
std::string duration(double ns);    // "850 ns", "12 µs", "3.4 ms", "1.25 s"
std::string count(double n);        // "950", "12.3k", "1.5M", "2.1G"
std::string bytes(double n);        // "512 B", "64 KB", "2.1 MB", "1.3 GB" (powers of 1024)
std::string number(double x);       // up to 3 significant digits, exponent when tiny: "3.1e-12"
std::string loss_scale(double s);   // whole scales in full ("65536"), others as number()
std::string shape(const Shape& s);  // "[32, 784]"
std::string op_label(const OpStats& row);  // "fc1 aten::linear", or the op alone without a module
bool is_reduced_float(std::string_view dtype);  // float16 / bfloat16, in profiler or c10 spelling

// The multiplied operands' shapes: "[64, 784] x [100, 784]".
std::string operand_shapes(const OpStats& row);
// "fp16/bf16 inputs" as autocast leaves them: a demoted op (fp32 in, lowered
// inside), or multiplied operands already in fp16/bf16.
bool runs_in_reduced_precision(const OpStats& row);

}  // namespace ampscope::profiler::report_text
