// row_codec.h's gradient, activation, readiness and backward-check rows.
#include "profiler/store/row_codec.h"

#include <cmath>

#include "profiler/store/row_codec_cursor.h"
#include "profiler/store/session_schema.h"

namespace ampscope::profiler::store_detail {

void bind_gradient(Stmt& s, int first, const GradientSample& g, std::string& histogram) {
  histogram = encode_histogram(g.log2_histogram);
  BindCursor b(s, first);
  b.value(g.step).text(g.parameter).value(g.loss_scale).value(g.numel).blob(histogram);
  b.value(g.zero_fraction).value(g.nonfinite_fraction);
  b.value(g.fp16_underflow_fraction).value(g.fp16_subnormal_fraction).value(g.fp16_overflow_fraction);
  b.value(g.min_abs_nonzero).value(g.max_abs).value(g.norm);
  for (const FormatRangeShares& r : {g.bf16, g.fp8_e4m3, g.fp8_e5m2})
    b.value(r.underflow).value(r.subnormal).value(r.overflow);
  b.done(kGradientColumns);
}

GradientSample read_gradient(const Stmt& s, int first) {
  ReadCursor c(s, first);
  GradientSample g;
  g.step = c.i64();
  g.parameter = c.text();
  g.loss_scale = c.real();
  g.numel = c.i64();
  g.log2_histogram = decode_histogram(c.blob());
  g.zero_fraction = c.real();
  g.nonfinite_fraction = c.real();
  g.fp16_underflow_fraction = c.real();
  g.fp16_subnormal_fraction = c.real();
  g.fp16_overflow_fraction = c.real();
  g.min_abs_nonzero = c.real();
  g.max_abs = c.real();
  g.norm = c.real();
  for (FormatRangeShares* r : {&g.bf16, &g.fp8_e4m3, &g.fp8_e5m2}) {
    r->underflow = c.real();
    r->subnormal = c.real();
    r->overflow = c.real();
  }
  c.done(kGradientColumns);
  return g;
}

void bind_activation(Stmt& s, int first, const ActivationSample& a) {
  BindCursor b(s, first);
  b.value(a.step).value(a.order).text(a.module).text(a.dtype).value(a.numel).value(a.nonfinite_fraction);
  b.value(a.max_abs);
  for (const FormatRangeShares& r : {a.fp16, a.bf16, a.fp8_e4m3, a.fp8_e5m2})
    b.value(r.underflow).value(r.subnormal).value(r.overflow);
  b.done(kActivationColumns);
}

ActivationSample read_activation(const Stmt& s, int first) {
  ReadCursor c(s, first);
  ActivationSample a;
  a.step = c.i64();
  a.order = c.i64();
  a.module = c.text();
  a.dtype = c.text();
  a.numel = c.i64();
  a.nonfinite_fraction = c.real();
  a.max_abs = c.real();
  for (FormatRangeShares* r : {&a.fp16, &a.bf16, &a.fp8_e4m3, &a.fp8_e5m2}) {
    r->underflow = c.real();
    r->subnormal = c.real();
    r->overflow = c.real();
  }
  c.done(kActivationColumns);
  return a;
}

void bind_readiness(Stmt& s, int first, const ReadinessSample& sample, QuantFormat format) {
  const QuantMetrics& m = sample.tensor.formats[static_cast<int>(format)];
  BindCursor b(s, first);
  b.value(sample.step).text(sample.layer).text(tensor_role_key(sample.tensor.role)).text(quant_format(format).key);
  b.value(m.elements).value(m.nonzero).value(m.flushed).value(m.saturated).value(m.signal).value(m.noise);
  if (m.scale_log2_max >= m.scale_log2_min) {
    b.value(m.scale_log2_min).value(m.scale_log2_max);
  } else {
    b.null().null();
  }
  b.done(kReadinessColumns);
}

std::optional<ReadinessSample> read_readiness(const Stmt& s, int first) {
  ReadCursor c(s, first);
  ReadinessSample sample;
  sample.step = c.i64();
  sample.layer = c.text();
  const std::optional<TensorRole> role = parse_tensor_role(c.text());
  const std::optional<QuantFormat> format = parse_quant_format(c.text());
  if (!role || !format) return std::nullopt;
  sample.tensor.role = *role;
  QuantMetrics& m = sample.tensor.formats[static_cast<int>(*format)];
  m.elements = c.i64();
  m.nonzero = c.i64();
  m.flushed = c.i64();
  m.saturated = c.i64();
  m.signal = c.real();
  m.noise = c.real();
  const double scale_log2_min = c.real(), scale_log2_max = c.real();
  // NULL (read as NaN) where no scaling group held a nonzero value: the metrics' empty range stays.
  if (!std::isnan(scale_log2_min) && !std::isnan(scale_log2_max)) {
    m.scale_log2_min = scale_log2_min;
    m.scale_log2_max = scale_log2_max;
  }
  c.done(kReadinessColumns);
  return sample;
}

void bind_backward_check(Stmt& s, int first, const BackwardCheck& r) {
  BindCursor b(s, first);
  b.value(r.step).value(r.skipped).value(r.gradients).value(r.nonfinite);
  // NULL module and side when every gradient was finite.
  b.text(r.found() ? std::string_view(r.module) : std::string_view());
  b.text(r.found() ? to_string(r.side) : std::string_view());
  b.value(r.position);
  b.text(r.found() ? std::string_view(r.dtype) : std::string_view());
  b.done(kBackwardCheckColumns);
}

BackwardCheck read_backward_check(const Stmt& s, int first) {
  ReadCursor c(s, first);
  BackwardCheck r;
  r.step = c.i64();
  r.skipped = c.boolean();
  r.gradients = c.i64();
  r.nonfinite = c.i64();
  r.module = c.text();
  r.side = parse_gradient_side(c.text()).value_or(GradientSide::kInput);
  r.position = c.i64();
  r.dtype = c.text();
  c.done(kBackwardCheckColumns);
  return r;
}

}  // namespace ampscope::profiler::store_detail
