#include "profiler/analysis/quantization_readiness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <utility>

#include "profiler/float_formats.h"

namespace ampscope::profiler {

std::string_view quant_target_name(QuantTarget t) {
  switch (t) {
    case QuantTarget::fp8: return "FP8";
    case QuantTarget::mxfp8: return "MXFP8";
    case QuantTarget::nvfp4: return "NVFP4";
  }
  return "?";
}

QuantElementLimits quant_element_limits(QuantElement e) {
  switch (e) {
    case QuantElement::e4m3: {
      const FloatFormatLimits& f = float_format(FloatFormat::fp8_e4m3fn);
      return {f.max, f.overflow_bound, f.overflow_at_bound};
    }
    case QuantElement::e5m2: {
      const FloatFormatLimits& f = float_format(FloatFormat::fp8_e5m2);
      return {f.max, f.overflow_bound, f.overflow_at_bound};
    }
    case QuantElement::e2m1:
      // max 6 = 1.5 * 2^2, an ulp of 2 there: 7 is the tie between 6 (odd
      // mantissa) and 8, which rounds away from 6.
      return {6.0, 7.0, true};
  }
  return {0.0, 0.0, false};
}

double QuantMetrics::sqnr_db() const {
  if (noise <= 0.0) return std::numeric_limits<double>::infinity();
  if (signal <= 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

double QuantMetrics::flushed_share() const {
  return nonzero > 0 ? static_cast<double>(flushed) / static_cast<double>(nonzero) : 0.0;
}

double QuantMetrics::saturated_share() const {
  return elements > 0 ? static_cast<double>(saturated) / static_cast<double>(elements) : 0.0;
}

double QuantMetrics::scale_spread_log2() const {
  return scale_log2_max >= scale_log2_min ? scale_log2_max - scale_log2_min : 0.0;
}

void QuantMetrics::merge(const QuantMetrics& other) {
  elements += other.elements;
  nonzero += other.nonzero;
  flushed += other.flushed;
  saturated += other.saturated;
  signal += other.signal;
  noise += other.noise;
  if (other.scale_log2_max >= other.scale_log2_min) {
    if (scale_log2_max >= scale_log2_min) {
      scale_log2_min = std::min(scale_log2_min, other.scale_log2_min);
      scale_log2_max = std::max(scale_log2_max, other.scale_log2_max);
    } else {
      scale_log2_min = other.scale_log2_min;
      scale_log2_max = other.scale_log2_max;
    }
  }
}

std::optional<QuantFormat> parse_quant_format(std::string_view key) {
  for (const QuantFormatSpec& spec : kQuantFormats)
    if (spec.key == key) return spec.format;
  return std::nullopt;
}

std::optional<TensorRole> parse_tensor_role(std::string_view key) {
  for (TensorRole r : {TensorRole::weight, TensorRole::input_activation, TensorRole::weight_gradient})
    if (tensor_role_key(r) == key) return r;
  return std::nullopt;
}

std::string_view element_name(QuantElement e) {
  switch (e) {
    case QuantElement::e4m3: return "e4m3";
    case QuantElement::e5m2: return "e5m2";
    case QuantElement::e2m1: return "e2m1";
  }
  return "?";
}

std::string_view readiness_name(Readiness r) {
  switch (r) {
    case Readiness::ready: return "ready";
    case Readiness::borderline: return "borderline";
    case Readiness::keep: return "keep in bf16";
  }
  return "?";
}

std::string_view readiness_key(Readiness r) {
  switch (r) {
    case Readiness::ready: return "ready";
    case Readiness::borderline: return "borderline";
    case Readiness::keep: return "keep";
  }
  return "?";
}

std::string_view tensor_role_key(TensorRole r) {
  switch (r) {
    case TensorRole::weight: return "weight";
    case TensorRole::input_activation: return "input";
    case TensorRole::weight_gradient: return "weight_grad";
  }
  return "?";
}

std::string_view tensor_role_name(TensorRole r) {
  switch (r) {
    case TensorRole::weight: return "weight";
    case TensorRole::input_activation: return "input";
    case TensorRole::weight_gradient: return "weight gradient";
  }
  return "?";
}

// Where the numbers come from.
//
// SQNR. torchao's own tests accept a cast of N(0,1) data at >= 20 dB for e4m3
// elements and >= 14 dB for the narrower ones (e5m2, fp4): _test_mx in
// test/prototype/mx_formats/test_mx_tensor.py; test/float8/test_base.py accepts a
// Float8Linear's output at >= 18 dB and its weight gradient at >= 17 dB. Those
// floors are the `borderline` bounds: below them torchao itself calls the cast
// broken. Well-scaled data does much better (torchao 0.18, 256 x 512, N(0,1) and
// uniform): e4m3 31.5-32.5 dB in every scaling; e5m2 25.5-26.5 dB; NVFP4 19.9-20.4 dB.
// `ready` asks for that less one mantissa bit (6 dB) for fp8, 25 and 19.5 dB, and
// less half a bit (3 dB) for e2m1, whose single mantissa bit is a third of its
// SQNR: 17 dB.
//
// SQNR is an energy ratio, so a few large values (an outlier channel) hold it up
// while the rest of the tensor drops below the format's range: the flushed share
// is what shows that. fp8 casts of N(0,1) flush nothing (scales put amax at the
// top of a range of 2^17 or more), so any flushing is the tensor's range: ready
// up to 1% of the nonzero values, borderline up to 5%. NVFP4 flushes 6.9% of
// N(0,1) (a value under 1/24 of its block's max rounds to 0; 4.0% uniform, 17% for
// Student-t with 2 degrees of freedom): ready up to 10%, borderline up to 20%.
//
// Saturation. Scales from the tensor's own amax (all of these recipes) put no
// element past the max, but for the rounding of a scale (NVFP4's e4m3 block scale,
// within the top ulp: not counted, QuantElementLimits). The share stays in the
// verdict for what it would catch, a scale that does not fit its tensor: ready up
// to 0.1%, borderline up to 1%.
const ReadinessThresholds& readiness_thresholds(QuantElement e) {
  static const ReadinessThresholds e4m3{25.0, 20.0, 0.01, 0.05, 0.001, 0.01};
  static const ReadinessThresholds e5m2{19.5, 14.0, 0.01, 0.05, 0.001, 0.01};
  static const ReadinessThresholds e2m1{17.0, 14.0, 0.10, 0.20, 0.001, 0.01};
  switch (e) {
    case QuantElement::e4m3: return e4m3;
    case QuantElement::e5m2: return e5m2;
    case QuantElement::e2m1: return e2m1;
  }
  return e4m3;
}

Readiness readiness(QuantFormat f, const QuantMetrics& m) {
  const ReadinessThresholds& t = readiness_thresholds(quant_format(f).element);
  const double sqnr = m.sqnr_db(), flushed = m.flushed_share(), saturated = m.saturated_share();
  if (sqnr >= t.ready_sqnr_db && flushed <= t.ready_flushed_share && saturated <= t.ready_saturated_share)
    return Readiness::ready;
  if (sqnr >= t.borderline_sqnr_db && flushed <= t.borderline_flushed_share &&
      saturated <= t.borderline_saturated_share)
    return Readiness::borderline;
  return Readiness::keep;
}

LayerReadiness assess_layer(std::string layer, std::vector<TensorQuantization> tensors) {
  LayerReadiness out;
  out.layer = std::move(layer);
  out.tensors = std::move(tensors);
  // Readiness is ordered best (ready) to worst (keep).
  for (const QuantFormatSpec& spec : kQuantFormats) {
    Readiness worst = Readiness::ready;
    for (const TensorQuantization& t : out.tensors)
      worst = std::max(worst, readiness(spec.format, t.formats[static_cast<int>(spec.format)]));
    out.formats[static_cast<int>(spec.format)] = out.tensors.empty() ? Readiness::keep : worst;
  }
  out.targets.fill(Readiness::keep);
  for (const QuantFormatSpec& spec : kQuantFormats) {
    Readiness& target = out.targets[static_cast<int>(spec.target)];
    target = std::min(target, out.formats[static_cast<int>(spec.format)]);
  }
  out.overall = *std::min_element(out.targets.begin(), out.targets.end());
  // Lowest precision first: the first target at the overall verdict.
  for (QuantTarget t : {QuantTarget::nvfp4, QuantTarget::mxfp8, QuantTarget::fp8}) {
    if (out.targets[static_cast<int>(t)] == out.overall) {
      out.best_target = t;
      break;
    }
  }
  return out;
}

// ---- Samples over steps, and what the views say about them ----

void ReadinessTotals::add(const ReadinessSample& sample) {
  steps_.insert(sample.step);
  auto [it, added] = index_.try_emplace(sample.layer, layers_.size());
  if (added) layers_.push_back({sample.layer, {}});
  std::vector<TensorQuantization>& tensors = layers_[it->second].tensors;
  const auto same_role = [&](const TensorQuantization& t) { return t.role == sample.tensor.role; };
  auto found = std::find_if(tensors.begin(), tensors.end(), same_role);
  if (found == tensors.end()) {
    tensors.push_back(sample.tensor);
    std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.role < b.role; });
    return;
  }
  for (int f = 0; f < kQuantFormatCount; ++f) found->formats[f].merge(sample.tensor.formats[f]);
}

std::vector<LayerReadiness> ReadinessTotals::layers() const {
  std::vector<LayerReadiness> out;
  out.reserve(layers_.size());
  for (const Layer& l : layers_) out.push_back(assess_layer(l.name, l.tensors));
  return out;
}

std::vector<TensorRole> ReadinessTotals::roles() const {
  std::set<TensorRole> seen;
  for (const Layer& l : layers_)
    for (const TensorQuantization& t : l.tensors) seen.insert(t.role);
  return {seen.begin(), seen.end()};
}

namespace {

ReadinessMetric deciding_metric(QuantFormat f, const QuantMetrics& m, Readiness verdict) {
  if (verdict == Readiness::ready) return ReadinessMetric::sqnr;
  const ReadinessThresholds& t = readiness_thresholds(quant_format(f).element);
  // The bounds of the level the tensor missed: ready's for a borderline one, borderline's for a kept one.
  const bool missed_ready = verdict == Readiness::borderline;
  if (m.sqnr_db() < (missed_ready ? t.ready_sqnr_db : t.borderline_sqnr_db)) return ReadinessMetric::sqnr;
  if (m.flushed_share() > (missed_ready ? t.ready_flushed_share : t.borderline_flushed_share))
    return ReadinessMetric::flushed;
  return ReadinessMetric::saturated;
}

// snprintf into a string (the core library goes without fmt).
template <typename... Args>
std::string printf_string(const char* format, Args... args) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

double metric_value(ReadinessMetric metric, const QuantMetrics& m) {
  switch (metric) {
    case ReadinessMetric::sqnr: return m.sqnr_db();
    case ReadinessMetric::flushed: return m.flushed_share();
    case ReadinessMetric::saturated: return m.saturated_share();
  }
  return 0.0;
}

std::string percent(double share) {
  const double p = share * 100.0;
  return p == 0.0 ? "0%" : p >= 10.0 ? printf_string("%.0f%%", p) : printf_string("%.2g%%", p);
}

}  // namespace

ReadinessReason format_reason(const LayerReadiness& layer, QuantFormat f) {
  ReadinessReason r;
  r.format = f;
  r.verdict = layer.formats[static_cast<int>(f)];
  // The worst tensor: its verdict is the layer's; among equals, the lowest SQNR.
  const TensorQuantization* worst = nullptr;
  for (const TensorQuantization& t : layer.tensors) {
    const QuantMetrics& m = t.formats[static_cast<int>(f)];
    if (readiness(f, m) != r.verdict) continue;
    if (!worst || m.sqnr_db() < worst->formats[static_cast<int>(f)].sqnr_db()) worst = &t;
  }
  if (!worst) return r;  // no tensor measured
  r.tensor = worst->role;
  r.metrics = &worst->formats[static_cast<int>(f)];
  r.metric = deciding_metric(f, *r.metrics, r.verdict);
  r.value = metric_value(r.metric, *r.metrics);
  return r;
}

ReadinessReason target_reason(const LayerReadiness& layer, QuantTarget t) {
  // The target's best format: the best verdict; among equals, the highest SQNR of its worst tensor.
  std::optional<ReadinessReason> best;
  for (const QuantFormatSpec& spec : kQuantFormats) {
    if (spec.target != t) continue;
    const ReadinessReason r = format_reason(layer, spec.format);
    const auto sqnr = [](const ReadinessReason& x) { return x.metrics ? x.metrics->sqnr_db() : -1e300; };
    if (!best || r.verdict < best->verdict || (r.verdict == best->verdict && sqnr(r) > sqnr(*best))) best = r;
  }
  return best.value_or(ReadinessReason{});
}

std::string describe_metric(ReadinessMetric metric, double value) {
  switch (metric) {
    case ReadinessMetric::sqnr:
      return std::isinf(value) ? (value > 0 ? "exact" : "no signal") : printf_string("%.1f dB", value);
    case ReadinessMetric::flushed: return percent(value) + " flushed";
    case ReadinessMetric::saturated: return percent(value) + " saturated";
  }
  return "";
}

std::string describe_metrics(const QuantMetrics& m) {
  std::string out = "SQNR " + describe_metric(ReadinessMetric::sqnr, m.sqnr_db()) + ", " +
                    describe_metric(ReadinessMetric::flushed, m.flushed_share()) + ", " +
                    describe_metric(ReadinessMetric::saturated, m.saturated_share());
  if (m.scale_spread_log2() > 0) out += printf_string(", scales over %.0f binades", m.scale_spread_log2());
  return out;
}

std::string describe_thresholds(QuantElement e) {
  std::string formats;
  for (const QuantFormatSpec& spec : kQuantFormats) {
    if (spec.element != e) continue;
    // The fp8 recipes by element only (tensorwise and rowwise share the thresholds).
    const std::string name = spec.scaling == QuantScaling::block ? std::string(quant_target_name(spec.target))
                                                                 : "fp8 " + std::string(element_name(e));
    if (formats.find(name) == std::string::npos) formats += (formats.empty() ? "" : ", ") + name;
  }
  const ReadinessThresholds& t = readiness_thresholds(e);
  return std::string(element_name(e)) + " (" + formats + "): ready at >= " + printf_string("%g", t.ready_sqnr_db) +
         " dB SQNR, <= " + percent(t.ready_flushed_share) + " flushed, <= " + percent(t.ready_saturated_share) +
         " saturated; borderline at >= " + printf_string("%g", t.borderline_sqnr_db) + " dB, <= " +
         percent(t.borderline_flushed_share) + ", <= " + percent(t.borderline_saturated_share);
}

std::string describe_measured_tensors(const std::vector<TensorRole>& roles) {
  std::vector<std::string> names;
  bool gradient = false;
  for (TensorRole r : roles) {
    switch (r) {
      case TensorRole::weight: names.emplace_back("weights"); break;
      case TensorRole::input_activation: names.emplace_back("layer inputs"); break;
      case TensorRole::weight_gradient: names.emplace_back("weight gradients"); gradient = true; break;
    }
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  if (gradient) out += " (standing in for the gradients of the layers' outputs, which are not captured)";
  return out;
}

}  // namespace ampscope::profiler
