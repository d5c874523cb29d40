#include "profiler/capture/activation_stats.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "profiler/capture/dtype_names.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/own_work.h"

namespace ampscope::profiler {
namespace {

// Per output: numel, non-finite count, max finite |x|, then the format counts.
enum Slot { kNumel, kNonfinite, kMaxAbs, kFormatCounts };
constexpr int kRowSize = kFormatCounts + kCountsPerFormat * kFloatFormatCount;

}  // namespace

void ActivationRecorder::on_module_output(const std::string& scope_name, const at::Tensor& output) {
  if (!output.defined() || !output.is_floating_point() || output.numel() == 0) return;
  at::NoGradGuard no_grad;
  // The profiler's own reductions, inside the user's traced forward: not the user's ops or kernels.
  OwnWork own(source_);
  // float32 holds every bound of every format exactly (float_formats.h), so fp16
  // and bf16 outputs need no float64 copy.
  at::Tensor x = output.detach().reshape({-1});
  if (x.scalar_type() != at::kDouble) x = x.to(at::kFloat);
  const at::Tensor a = x.abs();
  const at::Tensor finite = at::isfinite(x);
  const at::Tensor nonzero = (a > 0) & finite;
  std::vector<at::Tensor> parts{at::full({1}, static_cast<double>(x.numel()), x.options().dtype(at::kDouble)),
                                (~finite).sum().to(at::kDouble).reshape({1}),
                                at::where(finite, a, 0.0).max().to(at::kDouble).reshape({1})};
  const auto count = [](const at::Tensor& mask) { return mask.sum().to(at::kDouble).reshape({1}); };
  for (at::Tensor& c : format_counts(a, finite, nonzero, count)) parts.push_back(std::move(c));
  rows_.push_back(at::cat(parts));
  std::string_view name(scope_name);
  if (name.starts_with(engine::kModuleScopePrefix)) name.remove_prefix(std::string_view(engine::kModuleScopePrefix).size());
  modules_.emplace_back(name);
  dtypes_.push_back(dtype_name(output.scalar_type()));
}

std::vector<ActivationSample> ActivationRecorder::take(int64_t step) {
  std::vector<ActivationSample> out;
  if (rows_.empty()) return out;
  const at::Tensor host = at::stack(rows_).cpu();  // the one transfer
  const auto acc = host.accessor<double, 2>();
  // Merge per module: counts add up, max of max; the first completion gives the order.
  std::map<std::string, size_t> index;
  std::vector<std::array<double, kRowSize>> sums;
  for (size_t i = 0; i < modules_.size(); ++i) {
    auto [it, inserted] = index.try_emplace(modules_[i], out.size());
    if (inserted) {
      ActivationSample a;
      a.step = step;
      a.order = static_cast<int64_t>(out.size());
      a.module = modules_[i];
      a.dtype = dtypes_[i];
      out.push_back(std::move(a));
      sums.emplace_back();
      sums.back().fill(0.0);
    }
    auto& sum = sums[it->second];
    for (int k = 0; k < kRowSize; ++k)
      sum[k] = k == kMaxAbs ? std::max(sum[k], acc[static_cast<int64_t>(i)][k]) : sum[k] + acc[static_cast<int64_t>(i)][k];
  }
  for (size_t m = 0; m < out.size(); ++m) {
    ActivationSample& a = out[m];
    const auto& sum = sums[m];
    a.numel = static_cast<int64_t>(sum[kNumel]);
    const double n = std::max(1.0, sum[kNumel]);
    a.nonfinite_fraction = sum[kNonfinite] / n;
    a.max_abs = sum[kMaxAbs];
    FormatRangeShares* shares[] = {&a.fp16, &a.bf16, &a.fp8_e4m3, &a.fp8_e5m2};
    for (int f = 0; f < kFloatFormatCount; ++f) {
      const int base = kFormatCounts + kCountsPerFormat * f;
      *shares[f] = {sum[base] / n, sum[base + 1] / n, sum[base + 2] / n};
    }
  }
  rows_.clear();
  modules_.clear();
  dtypes_.clear();
  return out;
}

}  // namespace ampscope::profiler
