#include "profiler/capture/gradient_stats.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <c10/core/TensorImpl.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/capture/format_counts.h"

namespace ampscope::profiler {
namespace {

// Columns of a pass's table, one row per parameter: counts, then three counts
// per format (FloatFormat order), then min/max/norm, then kGradBins histogram
// counts. float64 keeps counts exact (below 2^53) and tiny magnitudes representable.
enum Slot { kZeros, kNonfinite, kFormatCounts };
constexpr int kMinNonzero = kFormatCounts + kCountsPerFormat * kFloatFormatCount;
constexpr int kMaxAbs = kMinNonzero + 1, kNorm = kMinNonzero + 2, kScalars = kMinNonzero + 3;

// Gradient elements one pass takes at most (a larger parameter is a pass of its
// own): bounds the float64 copy and its masks (about 30 bytes an element) while
// the number of ops stays independent of the number of parameters.
constexpr int64_t kPassElements = int64_t{1} << 24;

// A gradient's elements as one dimension, without dispatching an op (a view op
// per parameter is what made the sample's cost grow with the model). Every
// statistic is order-free, so a dense tensor's storage span will do in any
// memory format; anything else is made contiguous first (one op, rare).
at::Tensor flat_elements(const at::Tensor& t) {
  const at::Tensor dense = t.is_non_overlapping_and_dense() ? t : t.contiguous();
  auto impl = c10::make_intrusive<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(dense.storage()),
                                                   dense.key_set(), dense.dtype());
  const int64_t size = dense.numel(), stride = 1;
  impl->set_sizes_and_strides(c10::IntArrayRef(size), c10::IntArrayRef(stride), dense.storage_offset());
  return at::Tensor(std::move(impl));
}

// The gradients of one pass end to end in float64. On the CPU one loop copies and
// widens them (at::cat's CPU kernel copies input by input, an op each, once the
// result is large); on other devices at::cat of same-dtype inputs is one kernel
// for many inputs, so it is one cat per dtype.
at::Tensor concatenate_as_double(const std::vector<at::Tensor>& flats, int64_t total) {
  const at::Device device = flats.front().device();
  if (device.is_cpu()) {
    at::Tensor out = at::empty({total}, at::TensorOptions(at::kDouble));
    double* dst = out.mutable_data_ptr<double>();
    for (const at::Tensor& f : flats) {
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, f.scalar_type(), "gradient_stats_copy", [&] {
        const scalar_t* src = f.const_data_ptr<scalar_t>();
        at::parallel_for(0, f.numel(), at::internal::GRAIN_SIZE, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<double>(src[i]);
        });
      });
      dst += f.numel();
    }
    return out;
  }
  std::vector<at::Tensor> by_dtype;
  for (size_t i = 0; i < flats.size();) {
    size_t j = i;
    while (j < flats.size() && flats[j].scalar_type() == flats[i].scalar_type()) ++j;
    const std::vector<at::Tensor> same(flats.begin() + static_cast<std::ptrdiff_t>(i),
                                       flats.begin() + static_cast<std::ptrdiff_t>(j));
    by_dtype.push_back(at::cat(same).to(at::kDouble));
    i = j;
  }
  return by_dtype.size() == 1 ? by_dtype.front() : at::cat(by_dtype);
}

// log2 histogram per parameter of the nonzero finite |g| without a host sync
// (at::bincount reads its input's max on the host): index_add_ into a fixed-size
// zero table, one row of kGradBins + 1 per parameter.
at::Tensor log2_histograms(const at::Tensor& a, const at::Tensor& nonzero, const at::Tensor& segment,
                           int64_t parameters) {
  // frexp: |x| = m * 2^e with m in [0.5, 1), so floor(log2|x|) = e - 1, exactly
  // (log2 can round up just below a power of two).
  const at::Tensor exponents = std::get<1>(at::frexp(at::where(nonzero, a, 1.0))).to(at::kLong) - 1;
  const at::Tensor in_range = exponents.clamp(kGradLog2Min, kGradLog2Max - 1) - kGradLog2Min;
  // Zeros and non-finite values go to an extra last bin, dropped below.
  const at::Tensor bins = at::where(nonzero, in_range, static_cast<int64_t>(kGradBins)) + segment * (kGradBins + 1);
  return at::zeros({parameters * (kGradBins + 1)}, a.options())
      .index_add_(0, bins, at::ones_like(a))
      .view({parameters, kGradBins + 1})
      .slice(1, 0, kGradBins);
}

// One pass: every column for every parameter in it, [parameters, kScalars + kGradBins],
// with a fixed number of ops whatever the number of parameters.
at::Tensor pass_table(const std::vector<at::Tensor>& flats, const std::vector<int64_t>& lengths, double loss_scale) {
  int64_t total = 0;
  for (int64_t n : lengths) total += n;
  const auto parameters = static_cast<int64_t>(lengths.size());
  const at::Tensor g = concatenate_as_double(flats, total);
  const at::Tensor lengths_on_device = at::tensor(lengths, at::kLong).to(g.device());
  // Each element's parameter (0, 0, ..., 1, ...); the output size given, so no host sync.
  const at::Tensor segment = at::repeat_interleave(lengths_on_device, std::optional<int64_t>(total));
  const auto reduce = [&](const at::Tensor& values, std::string_view how) {
    return at::segment_reduce(values, how, lengths_on_device, std::nullopt, std::nullopt, 0, /*unsafe=*/true);
  };
  const auto count = [&](const at::Tensor& mask) { return reduce(mask.to(at::kDouble), "sum"); };

  const at::Tensor a = g.abs();
  const at::Tensor finite = at::isfinite(g);
  const at::Tensor nonzero = (a > 0) & finite;
  std::vector<at::Tensor> columns{count((a == 0) & finite), count(~finite)};
  for (at::Tensor& c : format_counts(a * loss_scale, finite, nonzero, count)) columns.push_back(std::move(c));
  const double inf = std::numeric_limits<double>::infinity();
  columns.push_back(reduce(at::where(nonzero, a, inf), "min"));
  columns.push_back(reduce(at::where(finite, a, 0.0), "max"));
  columns.push_back(reduce(at::where(finite, g, 0.0).square(), "sum").sqrt());
  return at::cat({at::stack(columns, 1), log2_histograms(a, nonzero, segment, parameters)}, 1);
}

}  // namespace

std::vector<GradientSample> gradient_range_stats(
    int64_t step, const std::vector<std::pair<std::string, at::Tensor>>& parameters, double loss_scale) {
  // Passes in parameter order: a pass ends where the device changes or it is full.
  struct Pass {
    std::vector<const std::string*> names;
    std::vector<size_t> slots;  // where each parameter's sample goes: parameter order
    std::vector<at::Tensor> flats;
    std::vector<int64_t> lengths;
    int64_t elements = 0;
  };
  std::vector<Pass> passes;
  size_t sampled = 0;
  for (const auto& [name, param] : parameters) {
    const at::Tensor& grad = param.grad();
    if (!grad.defined() || grad.numel() == 0) continue;
    if (passes.empty() || passes.back().flats.front().device() != grad.device() ||
        passes.back().elements + grad.numel() > kPassElements)
      passes.emplace_back();
    Pass& pass = passes.back();
    pass.names.push_back(&name);
    pass.slots.push_back(sampled++);
    pass.flats.push_back(flat_elements(grad));
    pass.lengths.push_back(grad.numel());
    pass.elements += grad.numel();
  }
  std::vector<GradientSample> samples(sampled);
  for (Pass& pass : passes) {
    if (!pass.flats.front().device().is_cpu()) {
      // at::cat's one kernel wants equal dtypes: the pass's parameters grouped by dtype (stable).
      std::vector<size_t> order(pass.flats.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return pass.flats[x].scalar_type() < pass.flats[y].scalar_type();
      });
      Pass sorted;
      for (size_t i : order) {
        sorted.names.push_back(pass.names[i]);
        sorted.slots.push_back(pass.slots[i]);
        sorted.flats.push_back(pass.flats[i]);
        sorted.lengths.push_back(pass.lengths[i]);
      }
      pass = std::move(sorted);
    }
    const at::Tensor host = pass_table(pass.flats, pass.lengths, loss_scale).cpu();  // one transfer per pass
    const auto acc = host.accessor<double, 2>();
    for (size_t i = 0; i < pass.names.size(); ++i) {
      const auto row = static_cast<int64_t>(i);
      GradientSample& s = samples[pass.slots[i]];
      s.step = step;
      s.parameter = *pass.names[i];
      s.loss_scale = loss_scale;
      s.numel = pass.lengths[i];
      const auto n = static_cast<double>(std::max<int64_t>(1, s.numel));
      s.zero_fraction = acc[row][kZeros] / n;
      s.nonfinite_fraction = acc[row][kNonfinite] / n;
      for (const FloatFormatLimits& f : kFloatFormats) {
        const int base = kFormatCounts + kCountsPerFormat * static_cast<int>(f.format);
        set_range_shares(s, f.format, {acc[row][base] / n, acc[row][base + 1] / n, acc[row][base + 2] / n});
      }
      s.min_abs_nonzero = std::isfinite(acc[row][kMinNonzero]) ? acc[row][kMinNonzero] : 0.0;
      s.max_abs = acc[row][kMaxAbs];
      s.norm = acc[row][kNorm];
      for (int b = 0; b < kGradBins; ++b) s.log2_histogram[b] = static_cast<int64_t>(acc[row][kScalars + b]);
    }
  }
  return samples;
}

}  // namespace ampscope::profiler
