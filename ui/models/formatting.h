#pragma once
// How the UI writes profiler values, and the one-sentence explanations of
// mixed-precision terms that tooltips show. Shared by the models and the panes
// so a term reads the same everywhere.
#include <QColor>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::ui {

QString formatDuration(int64_t ns);            // profiler::text::duration_text: "850 ns", "12.4 µs", "3.21 ms"
QString formatBytes(int64_t bytes);            // profiler::text::bytes_text: "512 B", "3.2 KiB", "1.5 GiB"
QString formatCount(double value);             // "1234", "12.3k", "4.56M"; "—" when not finite
QString shortDtype(const std::string& dtype);  // "float16" -> "fp16"
// Distinct floating dtypes in argument order: "fp32 → bf16"; non-tensor arguments are left out.
QString dtypeFlow(const std::vector<profiler::DtypeName>& inputs,
                  const std::vector<profiler::DtypeName>& outputs);
QString shapesText(const std::vector<profiler::Shape>& shapes);  // "[32, 128] [128]", long lists counted
QString gridText(const std::array<int32_t, 3>& dims);            // "128×4×1"

QString categoryLabel(profiler::OpCategory category);    // "demoted"
QString categoryTooltip(profiler::OpCategory category);  // one sentence
QString phaseLabel(profiler::Phase phase);
// Colors readable on light and dark backgrounds alike.
QColor categoryColor(profiler::OpCategory category);

// A precision variant's color in the comparison's tables and loss plot.
QColor variantColor(const std::string& variant);
// The precisions a comparison can run, in the order its settings and tables list them:
// fp32, tf32, fp16, bf16.
const QStringList& precisionVariants();
// One sentence: "bf16: autocast to bfloat16, no loss scaler."
QString variantDescription(const QString& variant);
// Green for a speedup, red for a slowdown, grey within ±5 % of 1×.
QColor speedupColor(double speedup);

// The category's place in the filter combo and the summary strip.
inline constexpr int kCategoryCount = profiler::kOpCategoryCount;
profiler::OpCategory categoryAt(int index);

namespace glossary {
inline constexpr char kLossScale[] =
    "Loss scale: the loss is multiplied by it before backward so small fp16 gradients do not "
    "flush to zero; it halves when a gradient overflows and grows after a run of good steps.";
inline constexpr char kSkippedStep[] =
    "Skipped step: an inf/NaN gradient was found at this loss scale, so the optimizer step was "
    "not applied and the scale backed off.";
inline constexpr char kTensorCoreShare[] =
    "Tensor Core share: the part of this op's GPU time spent in kernels that use Tensor Cores.";
inline constexpr char kCastTax[] =
    "Cast tax: time autocast spent converting this op's inputs between fp32 and fp16/bf16.";
inline constexpr char kGradNorm[] =
    "Gradient norm: the L2 norm of all unscaled gradients before clipping.";
// Built from profiler/float_formats.h, so tooltips quote the numbers the statistics use.
QString formatDescription(profiler::FloatFormat f);  // "fp16: 5-bit exponent, 10-bit mantissa, ..."
QString subnormalFloor(profiler::FloatFormat f);     // "fp16 smallest subnormal 2^-24: ..."
QString smallestNormal(profiler::FloatFormat f);
QString formatMax(profiler::FloatFormat f);
// Every term above, one paragraph each: Help → Mixed-precision terms.
QString allTerms();
}  // namespace glossary

// "2^-24" for powers of two, else the number ("65504").
QString powerOfTwoText(double v);

}  // namespace ampscope::ui
