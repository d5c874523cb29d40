#pragma once
// The one spelling of each number a reader sees, for the CLI, the HTML report and
// (wrapped in QString) the GUI: durations, bytes, percentages, factors, FLOP/s, loss
// scales, tensor shapes, and which op time a table shows. printf-based, so the
// libraries need neither fmt nor Qt nor LibTorch. Non-finite values never print as
// "nan"/"inf": each helper says what it does with them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler::text {

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
// "512 B", "1.50 MiB", "12.0 GiB", "150 MiB" (powers of 1024).
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
// A loss scale as GradScaler.get_scale() prints it, whole ("65536"); sig3 otherwise.
std::string loss_scale_text(double scale);
// A duration from nanoseconds: "850 ns", "12.5 µs", "3.40 ms", "1.20 s".
std::string duration_text(double ns);
// "[32, 784]".
std::string shape_text(const Shape& shape);
// The tensors' shapes, non-tensor arguments left out; past `max_shown` the rest are
// counted: "[64, 128] [128] … (+118 more)" (a fused optimizer takes hundreds).
std::string shapes_text(const std::vector<Shape>& shapes, size_t max_shown = 4);
// A dtype as the tables spell it: "fp32", "fp16", "bf16", "fp64"; others as recorded
// ("long", "float8_e4m3fn").
std::string short_dtype(const DtypeName& dtype);
// An op's dtypes, inputs to outputs, each side its distinct dtypes in order of first
// appearance: "bf16,fp32 → bf16" (a fused optimizer's hundreds of inputs stay one
// word); "→ bf16" without inputs, "" without either. Non-tensor arguments ("") are
// left out.
std::string dtype_flow_text(const std::vector<DtypeName>& inputs, const std::vector<DtypeName>& outputs);
// Columns a UTF-8 string takes in a terminal (code points; every character the
// tables print is one column wide).
size_t display_width(std::string_view utf8);
// Whether an op table shows GPU time (kernels were traced for some row) or CPU time,
// and a row's time in it.
bool shows_gpu_time(const std::vector<OpStats>& rows);
int64_t shown_time_ns(const OpStats& row, bool gpu);

}  // namespace ampscope::profiler::text
