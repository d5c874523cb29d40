#include "ui/models/formatting.h"

#include <QStringList>
#include <cmath>

#include "profiler/display_colors.h"
#include "profiler/number_text.h"

namespace ampscope::ui {

using profiler::OpCategory;

QString formatDuration(int64_t ns) {
  return QString::fromStdString(profiler::text::duration_text(static_cast<double>(ns)));
}

QString formatBytes(int64_t bytes) {
  return QString::fromStdString(profiler::text::bytes_text(static_cast<double>(bytes)));
}

QString formatCount(double value) {
  if (!std::isfinite(value)) return QStringLiteral("—");  // no such figure, never "nan"
  const double a = std::abs(value);
  if (a < 1e4) return QString::number(value, 'f', a < 10 && value != std::floor(value) ? 2 : 0);
  if (a < 1e6) return QStringLiteral("%1k").arg(value / 1e3, 0, 'f', 1);
  if (a < 1e9) return QStringLiteral("%1M").arg(value / 1e6, 0, 'f', 2);
  return QStringLiteral("%1G").arg(value / 1e9, 0, 'f', 2);
}

QString shortDtype(const std::string& dtype) { return QString::fromStdString(profiler::text::short_dtype(dtype)); }

QString dtypeFlow(const std::vector<profiler::DtypeName>& inputs,
                  const std::vector<profiler::DtypeName>& outputs) {
  return QString::fromStdString(profiler::text::dtype_flow_text(inputs, outputs));
}

QString shapesText(const std::vector<profiler::Shape>& shapes) {
  return QString::fromStdString(profiler::text::shapes_text(shapes));
}

QString gridText(const std::array<int32_t, 3>& dims) {
  if (dims[0] == 0) return {};
  return QStringLiteral("%1×%2×%3").arg(dims[0]).arg(dims[1]).arg(dims[2]);
}

QString categoryLabel(OpCategory category) {
  switch (category) {
    case OpCategory::kDemoted:
      return QStringLiteral("demoted");
    case OpCategory::kKeptFp32:
      return QStringLiteral("kept fp32");
    case OpCategory::kPromoted:
      return QStringLiteral("promoted");
    case OpCategory::kUnchanged:
      return QStringLiteral("unchanged");
    case OpCategory::kExplicitCast:
      return QStringLiteral("explicit cast");
    case OpCategory::kAutocastCast:
      return QStringLiteral("autocast cast");
    case OpCategory::kPromotionCast:
      return QStringLiteral("promotion cast");
    case OpCategory::kAutocastOff:
      return QStringLiteral("autocast off");
    case OpCategory::kShardingCast:
      return QStringLiteral("FSDP cast");
  }
  return {};
}

QString categoryTooltip(OpCategory category) {
  switch (category) {
    case OpCategory::kDemoted:
      return QStringLiteral(
          "demoted: autocast ran this op in fp16/bf16 although its inputs were fp32.");
    case OpCategory::kKeptFp32:
      return QStringLiteral(
          "kept fp32: autocast ran this op in fp32 for accuracy although some or all of its inputs "
          "were fp16/bf16 (its fp32 list: an fp16 output against an fp32 target too).");
    case OpCategory::kPromoted:
      return QStringLiteral(
          "promoted: the inputs mixed precisions, so the op ran at the widest one (autocast's promote "
          "list, or PyTorch's type promotion: an fp32 residual plus an fp16 branch).");
    case OpCategory::kUnchanged:
      return QStringLiteral(
          "unchanged: autocast did not act on the op; it ran in the precision of its inputs (a "
          "batch norm's fp32 parameters on an fp16 activation included).");
    case OpCategory::kExplicitCast:
      return QStringLiteral(
          "explicit cast: a conversion your code asked for (.to(), .half(), .float(), "
          "custom_fwd(cast_inputs=...), and the gradient's cast back), or GradScaler's own "
          "(module \"(GradScaler)\": the fp64 reciprocal of its scale).");
    case OpCategory::kAutocastCast:
      return QStringLiteral(
          "autocast cast: a conversion autocast inserted before an op — the cast tax — and, in the "
          "backward, the gradient's cast back, or autograd's cast of a gradient a kernel autocast "
          "ran in fp16/bf16 handed back in fp32 (the CPU's LSTM layers).");
    case OpCategory::kPromotionCast:
      return QStringLiteral(
          "promotion cast: autograd casting the gradient of a promoted op's fp16/bf16 input back "
          "to its dtype (an fp32 residual plus an fp16 branch) — the promotion's price in the backward.");
    case OpCategory::kAutocastOff:
      return QStringLiteral(
          "autocast off: an op autocast would have decided, run where the code (yours or a library's) "
          "turned autocast off inside its region (autocast(enabled=False), custom_fwd(cast_inputs=...)) — "
          "in the precision the code gave it.");
    case OpCategory::kShardingCast:
      return QStringLiteral(
          "FSDP cast: a conversion FSDP's mixed-precision policy made (fully_shard's MixedPrecisionPolicy, "
          "FSDP1's MixedPrecision): the parameters cast to param_dtype as they are gathered, for the forward "
          "and again for the backward, the forward's inputs cast to it, the gradients cast to reduce_dtype.");
  }
  return {};
}

QString phaseLabel(profiler::Phase phase) {
  switch (phase) {
    case profiler::Phase::kForward:
      return QStringLiteral("forward");
    case profiler::Phase::kForwardNoGrad:
      return QStringLiteral("forward (no grad)");
    case profiler::Phase::kBackward:
      return QStringLiteral("backward");
    case profiler::Phase::kRecompute:
      return QStringLiteral("recompute");
    case profiler::Phase::kOptimizer:
      return QStringLiteral("optimizer");
    case profiler::Phase::kOther:
      return QStringLiteral("other");
  }
  return {};
}

// profiler/display_colors.h: the HTML report's colours too.
QColor categoryColor(OpCategory category) { return QColor::fromRgb(0xff000000u | profiler::category_color(category)); }

QColor variantColor(const std::string& variant) {
  const uint32_t rgb = profiler::variant_color(variant);
  return rgb != 0 ? QColor::fromRgb(0xff000000u | rgb) : QColor(0x3b, 0x7d, 0xd8);
}

const QStringList& precisionVariants() {
  static const QStringList variants{QStringLiteral("fp32"), QStringLiteral("tf32"), QStringLiteral("fp16"),
                                    QStringLiteral("bf16")};
  return variants;
}

QString variantDescription(const QString& variant) {
  if (variant == QLatin1String("fp32")) return QStringLiteral("fp32: full precision, no autocast (the baseline).");
  if (variant == QLatin1String("tf32"))
    return QStringLiteral("tf32: fp32 with TF32 matmuls and convolutions on Tensor Cores (CUDA only).");
  if (variant == QLatin1String("fp16"))
    return QStringLiteral("fp16: autocast to float16 with a GradScaler (dynamic loss scale).");
  if (variant == QLatin1String("bf16")) return QStringLiteral("bf16: autocast to bfloat16, no loss scaler.");
  return variant;
}

QColor speedupColor(double speedup) {
  if (speedup > 1.05) return QColor(0x2e, 0x9e, 0x5b);
  if (speedup < 0.95) return QColor(0xd6, 0x45, 0x45);
  return QColor(0x8a, 0x8f, 0x98);
}

namespace {

constexpr OpCategory kCategoryOrder[kCategoryCount] = {
    OpCategory::kDemoted,      OpCategory::kKeptFp32,     OpCategory::kAutocastOff,  OpCategory::kPromoted,
    OpCategory::kUnchanged,    OpCategory::kExplicitCast, OpCategory::kAutocastCast, OpCategory::kPromotionCast,
    OpCategory::kShardingCast};
// Every category once: a new one left out of the order would read as a second "demoted".
static_assert([] {
  bool seen[kCategoryCount] = {};
  for (const OpCategory c : kCategoryOrder) {
    if (seen[static_cast<int>(c)]) return false;
    seen[static_cast<int>(c)] = true;
  }
  return true;
}());

}  // namespace

OpCategory categoryAt(int index) { return kCategoryOrder[index]; }

QString powerOfTwoText(double v) {
  int exponent = 0;
  if (v > 0 && std::frexp(v, &exponent) == 0.5) return QStringLiteral("2^%1").arg(exponent - 1);
  return QString::number(v, 'g', 6);
}

namespace glossary {

using profiler::float_format;
using profiler::FloatFormat;

namespace {
QString name(FloatFormat f) { return QString::fromLatin1(float_format(f).name.data(), float_format(f).name.size()); }
}  // namespace

QString formatDescription(FloatFormat f) {
  const auto& l = float_format(f);
  QString why;
  switch (f) {
    case FloatFormat::fp16: why = QStringLiteral("so gradients need a loss scaler to stay in range."); break;
    case FloatFormat::bf16: why = QStringLiteral("fp32's range with fewer digits, so it rarely needs a loss scaler."); break;
    case FloatFormat::fp8_e4m3fn:
      why = QStringLiteral("no inf: a cast above the max gives NaN, fp8 recipes clamp (saturate) first.");
      break;
    case FloatFormat::fp8_e5m2: why = QStringLiteral("fp16's exponent range with 2 mantissa bits."); break;
  }
  return QStringLiteral("%1 has a %2-bit exponent and %3-bit mantissa (range %4 … %5): %6")
      .arg(name(f))
      .arg(l.exponent_bits)
      .arg(l.mantissa_bits)
      .arg(powerOfTwoText(l.min_subnormal), QString::number(l.max, 'g', 5), why);
}

QString subnormalFloor(FloatFormat f) {
  const auto& l = float_format(f);
  return QStringLiteral("%1 smallest subnormal %2: scaled gradients at or below half of it become zero.")
      .arg(name(f), powerOfTwoText(l.min_subnormal));
}

QString smallestNormal(FloatFormat f) {
  return QStringLiteral("%1 smallest normal %2: scaled gradients below it are subnormal and lose precision.")
      .arg(name(f), powerOfTwoText(float_format(f).min_normal));
}

QString formatMax(FloatFormat f) {
  const auto& l = float_format(f);
  return QStringLiteral("%1 max %2: scaled gradients beyond it become %3%4.")
      .arg(name(f), QString::number(l.max, 'g', 6), l.has_inf ? QStringLiteral("inf") : QStringLiteral("NaN"),
           f == FloatFormat::fp16 ? QStringLiteral(" and the step is skipped") : QString());
}

QString allTerms() {
  return QStringList{formatDescription(FloatFormat::fp16),
                     formatDescription(FloatFormat::bf16),
                     formatDescription(FloatFormat::fp8_e4m3fn),
                     formatDescription(FloatFormat::fp8_e5m2),
                     QString::fromLatin1(kLossScale),
                     QString::fromLatin1(kSkippedStep),
                     subnormalFloor(FloatFormat::fp16),
                     smallestNormal(FloatFormat::fp16),
                     formatMax(FloatFormat::fp16),
                     categoryTooltip(profiler::OpCategory::kDemoted),
                     categoryTooltip(profiler::OpCategory::kKeptFp32),
                     QString::fromLatin1(kCastTax),
                     QString::fromLatin1(kTensorCoreShare)}
      .join(QStringLiteral("\n\n"));
}

}  // namespace glossary

}  // namespace ampscope::ui
