#include "profiler/capture/activation_stats.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/dtype_names.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/range_stats_cpu.h"
#include "profiler/capture/range_stats_cuda.h"
#include "profiler/capture/own_work.h"

namespace ampscope::profiler {
namespace {

// Per output (a row of a pass's table): non-finite count, max finite |x|, then the
// format counts. The element count is known on the host.
enum Slot { kNonfinite, kMaxAbs, kFormatCounts };
constexpr int kRowSize = kFormatCounts + kCountsPerFormat * kFloatFormatCount;

// The table through ATen ops, members at most kPassElements (table_in_pieces).
at::Tensor aten_table(const std::vector<PassMember>& members, at::ScalarType compute) {
  const Segments seg(members, compute);
  const at::Tensor& x = seg.values();
  const auto count = [&](const at::Tensor& mask) { return seg.count_true(mask); };
  const at::Tensor a = x.abs();
  const at::Tensor finite = at::isfinite(x);
  const at::Tensor nonzero = (a > 0) & finite;
  std::vector<at::Tensor> columns{count(~finite), seg.reduce(at::where(finite, a, 0.0), "max").to(at::kDouble)};
  for (const at::Tensor& c : format_counts(a, nonzero, seg).unbind(1)) columns.push_back(c);
  return at::stack(columns, 1);
}

// One pass's table, [outputs, kRowSize] float64. float32 holds every bound of every
// format exactly (float_formats.h), so fp16 and bf16 outputs need no float64 copy; a
// float64 output makes the pass float64.
at::Tensor pass_table(const std::vector<PassMember>& members) {
  const bool any_double = std::any_of(members.begin(), members.end(),
                                      [](const PassMember& m) { return m.flat.scalar_type() == at::kDouble; });
  const at::ScalarType compute = any_double ? at::kDouble : at::kFloat;
  // One read of each element where a loop reads every member (range_stats_cuda.h), the same columns.
  const std::vector<double> bounds = format_bounds(compute);
  if (const at::Tensor t = range_stats_one_read(members, compute, 1.0, bounds); t.defined()) {
    const at::Tensor counts =
        format_counts_from_places(t.narrow(1, kRangePlaces, static_cast<int64_t>(bounds.size()) + 1), compute);
    return at::cat({t.select(1, kRangeNonfinite).unsqueeze(1), t.select(1, kRangeMaxAbs).unsqueeze(1), counts}, 1);
  }
  // Through ATen ops: an output past kPassElements elements in pieces (table_in_pieces).
  static const std::vector<PieceMerge> merge = [] {
    std::vector<PieceMerge> m(kRowSize, PieceMerge::kSum);
    m[kMaxAbs] = PieceMerge::kMax;
    return m;
  }();
  return table_in_pieces(members, merge, [compute](const std::vector<PassMember>& m) { return aten_table(m, compute); });
}

}  // namespace

void ActivationRecorder::on_module_output(const std::string& scope_name, const at::Tensor& output) {
  if (!output.defined() || !output.is_floating_point() || output.layout() != at::kStrided || output.numel() == 0 ||
      !holds_data(output))
    return;
  auto [named, added] = module_index_.try_emplace(scope_name, modules_.size());
  if (added) {
    std::string_view name(scope_name);
    if (name.starts_with(engine::kModuleScopePrefix)) name.remove_prefix(std::string_view(engine::kModuleScopePrefix).size());
    modules_.emplace_back(name);
    copy_when_seen_.push_back(false);
  }
  const size_t module = named->second;
  const int64_t bytes = output.numel() * static_cast<int64_t>(output.element_size());
  // Bound what is held: the outputs waiting go through a pass before this one would
  // take the total past the bound.
  if (!held_.empty() && held_bytes_ + bytes > held_bytes_bound_) run_pass();
  captures_.push_back({module, output.scalar_type(), output.numel()});
  Held h{captures_.size() - 1, at::Tensor(), output.unsafeGetTensorImpl()->version_counter(), 0};
  if (copy_when_seen_[module] || !widened_on_the_cpu(output.scalar_type())) {
    // A copy (an op): this module changes its outputs in place later, or the dtype
    // (fp8) has no host widening loop. No version to watch.
    at::NoGradGuard no_grad;
    OwnWork own(source_);
    h.flat = widened_on_the_cpu(output.scalar_type()) ? flat_elements(output).clone()
                                                         : flat_elements(output).to(at::kFloat);
    h.version = c10::VariableVersion(c10::VariableVersion::DISABLED);
  } else {
    h.flat = flat_elements(output);
    if (h.version.enabled()) h.seen_version = h.version.current_version();
  }
  held_.push_back(std::move(h));
  held_bytes_ += bytes;
  if (held_bytes_ > held_bytes_bound_) run_pass();  // a single output beyond the bound
}

void ActivationRecorder::run_pass() {
  if (held_.empty()) return;
  at::NoGradGuard no_grad;
  // The profiler's own ops: not the user's ops or kernels (inside a traced forward
  // when the bound forces a pass there).
  OwnWork own(source_);
  PassPlanner planner;
  for (size_t i = 0; i < held_.size(); ++i) {
    Held& h = held_[i];
    // Changed since its module returned it: measured as it is now (the module's own
    // values are gone); its later outputs are copied when seen.
    if (h.version.enabled() && h.version.current_version() != h.seen_version)
      copy_when_seen_[captures_[h.capture].module] = true;
    planner.add(i, std::move(h.flat));
  }
  for (const std::vector<PassMember>& pass : planner.take()) {
    Table& t = tables_.emplace_back();
    t.rows = pass_table(pass);
    for (const PassMember& m : pass) t.captures.push_back(held_[m.slot].capture);
  }
  held_.clear();
  held_bytes_ = 0;
}

void ActivationRecorder::discard() {
  captures_.clear();
  held_.clear();
  held_bytes_ = 0;
  tables_.clear();
}

std::vector<ActivationSample> ActivationRecorder::take(int64_t step) {
  std::vector<ActivationSample> out;
  if (captures_.empty()) return out;
  run_pass();
  // One transfer when every pass ran on one device (the usual case: one pass).
  std::vector<at::Tensor> host;
  {
    at::NoGradGuard no_grad;
    OwnWork own(source_);
    const bool one_device = std::all_of(tables_.begin(), tables_.end(), [&](const Table& t) {
      return t.rows.device() == tables_.front().rows.device();
    });
    if (one_device) {
      std::vector<at::Tensor> rows;
      for (const Table& t : tables_) rows.push_back(t.rows);
      host.push_back((rows.size() == 1 ? rows.front() : at::cat(rows)).cpu());
    } else {
      for (const Table& t : tables_) host.push_back(t.rows.cpu());
    }
  }
  std::vector<std::array<double, kRowSize>> rows(captures_.size());
  {
    size_t h = 0;
    int64_t r = 0;
    for (const Table& t : tables_) {
      if (r == host[h].size(0)) ++h, r = 0;  // per-table transfers
      const auto acc = host[h].accessor<double, 2>();
      for (size_t capture : t.captures) {
        for (int k = 0; k < kRowSize; ++k) rows[capture][k] = acc[r][k];
        ++r;
      }
    }
  }
  // Merge per module: counts add up, max of max; the first completion gives the order.
  std::map<size_t, size_t> index;  // module -> sample
  std::vector<std::array<double, kRowSize>> sums;
  std::vector<int64_t> numels;
  for (size_t i = 0; i < captures_.size(); ++i) {
    const Capture& c = captures_[i];
    auto [it, inserted] = index.try_emplace(c.module, out.size());
    if (inserted) {
      ActivationSample a;
      a.step = step;
      a.order = static_cast<int64_t>(out.size());
      a.module = modules_[c.module];
      a.dtype = dtype_name(c.dtype);
      out.push_back(std::move(a));
      sums.emplace_back().fill(0.0);
      numels.push_back(0);
    }
    auto& sum = sums[it->second];
    numels[it->second] += c.numel;
    for (int k = 0; k < kRowSize; ++k) sum[k] = k == kMaxAbs ? std::max(sum[k], rows[i][k]) : sum[k] + rows[i][k];
  }
  for (size_t m = 0; m < out.size(); ++m) {
    ActivationSample& a = out[m];
    const auto& sum = sums[m];
    a.numel = numels[m];
    const double n = static_cast<double>(std::max<int64_t>(1, a.numel));
    a.nonfinite_fraction = sum[kNonfinite] / n;
    a.max_abs = sum[kMaxAbs];
    FormatRangeShares* shares[] = {&a.fp16, &a.bf16, &a.fp8_e4m3, &a.fp8_e5m2};
    for (int f = 0; f < kFloatFormatCount; ++f) {
      const int base = kFormatCounts + kCountsPerFormat * f;
      *shares[f] = {sum[base] / n, sum[base + 1] / n, sum[base + 2] / n};
    }
  }
  discard();
  return out;
}

}  // namespace ampscope::profiler
