#pragma once
// Precision readiness (issue #30): how a tensor would fare in the low-precision
// formats of FP8 training recipes, and a verdict per layer and format. Plain C++,
// no LibTorch: the simulated quantization runs on the tensor's device in
// profiler/capture/quantization_sim.h, which fills the sums below; the store, the
// summary and the views read them from here.
//
// The formats follow torchao's conversions (checked element for element against
// torchao 0.18 by tests/profiler/test_quantization_readiness.cpp):
//  - fp8 tensorwise: one scale fp8_max / amax (torchao float8 "tensorwise" recipe,
//    scales not rounded);
//  - fp8 rowwise: one scale per row, amax over the last dimension, rounded down to
//    a power of two (torchao float8 "rowwise" recipe);
//  - MXFP8: e4m3 elements in blocks of 32 along the last dimension, one E8M0
//    (power-of-two) scale per block by the RCEIL rule of NVIDIA's cuBLAS, the
//    default of torchao's MXFP8 training recipes (torchao to_mx);
//  - NVFP4: fp4 e2m1 elements in blocks of 16, an e4m3 scale per block and an
//    fp32 scale per tensor, amax / (448 * 6) (torchao nvfp4_quantize).
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ampscope::profiler {

enum class QuantElement { e4m3, e5m2, e2m1 };
enum class QuantScaling { tensorwise, rowwise, block };
// What a layer can go to: "FP8" is the best of the four fp8 recipes.
enum class QuantTarget { fp8, mxfp8, nvfp4 };
inline constexpr int kQuantTargetCount = 3;

enum class QuantFormat { fp8_e4m3_tensorwise, fp8_e4m3_rowwise, fp8_e5m2_tensorwise, fp8_e5m2_rowwise, mxfp8, nvfp4 };
inline constexpr int kQuantFormatCount = 6;

struct QuantFormatSpec {
  QuantFormat format;
  std::string_view key;   // column and JSON names: "fp8_e4m3_tensorwise", ...
  std::string_view name;  // what views show: "fp8 e4m3 tensorwise", ...
  QuantElement element;
  QuantScaling scaling;
  int block_size;          // elements per scale along the last dimension (block formats), else 0
  bool power_of_two_scales;
  QuantTarget target;
};

inline constexpr std::array<QuantFormatSpec, kQuantFormatCount> kQuantFormats{{
    {QuantFormat::fp8_e4m3_tensorwise, "fp8_e4m3_tensorwise", "fp8 e4m3 tensorwise", QuantElement::e4m3,
     QuantScaling::tensorwise, 0, false, QuantTarget::fp8},
    {QuantFormat::fp8_e4m3_rowwise, "fp8_e4m3_rowwise", "fp8 e4m3 rowwise", QuantElement::e4m3, QuantScaling::rowwise,
     0, true, QuantTarget::fp8},
    {QuantFormat::fp8_e5m2_tensorwise, "fp8_e5m2_tensorwise", "fp8 e5m2 tensorwise", QuantElement::e5m2,
     QuantScaling::tensorwise, 0, false, QuantTarget::fp8},
    {QuantFormat::fp8_e5m2_rowwise, "fp8_e5m2_rowwise", "fp8 e5m2 rowwise", QuantElement::e5m2, QuantScaling::rowwise,
     0, true, QuantTarget::fp8},
    {QuantFormat::mxfp8, "mxfp8", "MXFP8 (e4m3, 32-blocks)", QuantElement::e4m3, QuantScaling::block, 32, true,
     QuantTarget::mxfp8},
    {QuantFormat::nvfp4, "nvfp4", "NVFP4 (e2m1, 16-blocks)", QuantElement::e2m1, QuantScaling::block, 16, false,
     QuantTarget::nvfp4},
}};

constexpr const QuantFormatSpec& quant_format(QuantFormat f) { return kQuantFormats[static_cast<int>(f)]; }
// By QuantFormatSpec::key; nothing for a key this build does not know.
std::optional<QuantFormat> parse_quant_format(std::string_view key);
std::string_view quant_target_name(QuantTarget t);  // "FP8", "MXFP8", "NVFP4"
std::string_view element_name(QuantElement e);       // "e4m3", "e5m2", "e2m1"

// An element format's largest finite value and where a value saturates: the fp8
// numbers are float_formats.h's; e2m1 (no inf, no NaN) is {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
// A scaled value counts as saturated when the clamp to ±max changed where it would
// have rounded to, i.e. at or beyond max plus half an ulp of max, so the amax of a
// tensorwise scale, which lands on max give or take a float32 rounding, is not.
struct QuantElementLimits {
  double max;
  double saturation_bound;
  bool saturates_at_bound;  // the tie at the bound rounds away (odd mantissa of max)
};
QuantElementLimits quant_element_limits(QuantElement e);

// One tensor's simulated quantization to one format, as sums, so that tensors and
// micro-batches merge exactly. SQNR = 10 log10(signal / noise) with signal = sum x^2
// and noise = sum (x - dequantized)^2, torchao's compute_error.
struct QuantMetrics {
  int64_t elements = 0;
  int64_t nonzero = 0;
  int64_t flushed = 0;    // nonzero elements that dequantize to 0
  int64_t saturated = 0;  // elements clamped at the format's max (QuantElementLimits)
  double signal = 0.0;    // sum x^2
  double noise = 0.0;     // sum (x - dequantized)^2
  // log2 of the smallest and largest dequantization scale over the scaling groups
  // (rows, blocks) holding a nonzero element; min > max where there is none.
  double scale_log2_min = 1.0, scale_log2_max = 0.0;

  // +inf where the quantization is exact (no noise), including an all-zero tensor.
  double sqnr_db() const;
  double flushed_share() const;    // of the nonzero elements
  double saturated_share() const;  // of all elements
  // log2(largest / smallest group scale): how many binades the scales span; 0 for
  // a single scale (tensorwise) or no nonzero group.
  double scale_spread_log2() const;
  // Both tensors together (micro-batches of one operand).
  void merge(const QuantMetrics& other);
};

// ---- Verdicts ----
enum class Readiness { ready, borderline, keep };
std::string_view readiness_name(Readiness r);  // "ready", "borderline", "keep in bf16"
std::string_view readiness_key(Readiness r);   // "ready", "borderline", "keep"

// The thresholds, per element format, in one place (quantization_readiness.cpp
// says where each number comes from). A format is `ready` for a tensor when all
// three ready bounds hold, `borderline` when the borderline ones hold, else `keep`.
struct ReadinessThresholds {
  double ready_sqnr_db, borderline_sqnr_db;
  double ready_flushed_share, borderline_flushed_share;
  double ready_saturated_share, borderline_saturated_share;
};
const ReadinessThresholds& readiness_thresholds(QuantElement e);
Readiness readiness(QuantFormat f, const QuantMetrics& m);

// Which of a layer's tensors it is: the forward GEMM's operands (weight, input),
// and the weight's gradient, which the capture measures in place of the
// gradient of the layer's output (the backward GEMMs' operand it does not see).
enum class TensorRole { weight, input_activation, weight_gradient };
inline constexpr int kTensorRoleCount = 3;
std::string_view tensor_role_key(TensorRole r);   // "weight", "input", "weight_grad"
std::string_view tensor_role_name(TensorRole r);  // "weight", "input", "weight gradient"
std::optional<TensorRole> parse_tensor_role(std::string_view key);

struct TensorQuantization {
  TensorRole role;
  std::array<QuantMetrics, kQuantFormatCount> formats;
};

// A layer's verdicts: per format the worst over its tensors (every operand of the
// GEMM goes to that format); per target the best of the target's formats; and the
// lowest-precision target the layer is ready for.
struct LayerReadiness {
  std::string layer;
  std::vector<TensorQuantization> tensors;
  std::array<Readiness, kQuantFormatCount> formats{};
  std::array<Readiness, kQuantTargetCount> targets{};
  Readiness overall = Readiness::keep;  // the best target's verdict
  // The lowest-precision target at `overall` (NVFP4 before MXFP8 before FP8);
  // meaningless when overall is keep.
  QuantTarget best_target = QuantTarget::fp8;
};

LayerReadiness assess_layer(std::string layer, std::vector<TensorQuantization> tensors);

// One tensor of one layer on one sampled step: what the capture hands the store
// (a row per format there) and the store hands back.
struct ReadinessSample {
  int64_t step = 0;
  std::string layer;  // the module path, "blocks.0.attn.qkv"
  TensorQuantization tensor;
};

// Samples added up per layer and tensor over the sampled steps (the sums merge
// exactly, steps and micro-batches alike), layers in the order first seen: what
// every view shows, live or stored.
class ReadinessTotals {
 public:
  void add(const ReadinessSample& sample);
  bool empty() const { return layers_.empty(); }
  std::vector<LayerReadiness> layers() const;
  int64_t sampled_steps() const { return static_cast<int64_t>(steps_.size()); }
  // The tensors measured in any layer, in TensorRole order.
  std::vector<TensorRole> roles() const;

 private:
  struct Layer {
    std::string name;
    std::vector<TensorQuantization> tensors;  // one per role, merged
  };
  std::vector<Layer> layers_;
  std::map<std::string, size_t, std::less<>> index_;
  std::set<int64_t> steps_;
};

// What decided a verdict, for a view's cell: the format (a target's best), the
// tensor (the worst of the layer's for that format) and the metric. A ready cell
// names the lowest SQNR; another the first bound missed, SQNR before flushed
// share before saturated share.
enum class ReadinessMetric { sqnr, flushed, saturated };
struct ReadinessReason {
  Readiness verdict = Readiness::keep;
  QuantFormat format = QuantFormat::fp8_e4m3_tensorwise;
  TensorRole tensor = TensorRole::weight;
  ReadinessMetric metric = ReadinessMetric::sqnr;
  double value = 0.0;  // dB, or a share
  const QuantMetrics* metrics = nullptr;  // the deciding tensor's, in the LayerReadiness it came from
};
ReadinessReason format_reason(const LayerReadiness& layer, QuantFormat f);
ReadinessReason target_reason(const LayerReadiness& layer, QuantTarget t);
// "31.2 dB", "12.5% flushed", "0.40% saturated"; "exact" for an SQNR of +inf.
std::string describe_metric(ReadinessMetric metric, double value);
// SQNR, flushed and saturated share of one tensor in one format, on one line.
std::string describe_metrics(const QuantMetrics& m);
// The thresholds of one element format as a sentence, with the formats that use it:
// "e4m3 (fp8 e4m3, MXFP8): ready at >= 25 dB SQNR, <= 1% flushed, <= 0.1% saturated;
// borderline at >= 20 dB, <= 5%, <= 1%".
std::string describe_thresholds(QuantElement e);
inline constexpr std::array<QuantElement, 3> kQuantElements{QuantElement::e4m3, QuantElement::e5m2, QuantElement::e2m1};
// "Weights, inputs and weight gradients", from the roles measured; the weight
// gradient said to stand in for the output gradient.
std::string describe_measured_tensors(const std::vector<TensorRole>& roles);

}  // namespace ampscope::profiler
