#include "ui/models/run_series.h"

#include <algorithm>
#include <cmath>

namespace ampscope::ui {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

void RunSeries::clear() { *this = RunSeries(smoothing_); }

void RunSeries::append(const profiler::StepRecord& r) {
  const double step = static_cast<double>(r.step);
  steps_.append(step);
  loss_.append(r.loss);
  // A non-finite loss would poison the average for the rest of the run.
  if (std::isfinite(r.loss)) {
    ema_ = smoothing_ * ema_ + (1.0 - smoothing_) * r.loss;
    ++ema_count_;
  }
  const double debias = 1.0 - std::pow(smoothing_, ema_count_);
  loss_smoothed_.append(ema_count_ > 0 && debias > 0 ? ema_ / debias : r.loss);
  loss_scale_.append(r.loss_scale);
  lr_.append(r.lr);
  grad_norm_.append(r.grad_norm);
  step_time_ms_.append(r.step_time_ms);
  samples_per_second_.append(r.samples_per_second);
  mem_allocated_mib_.append(static_cast<double>(r.mem_allocated_bytes) / kMiB);
  mem_reserved_mib_.append(static_cast<double>(r.mem_reserved_bytes) / kMiB);
  mem_peak_mib_.append(static_cast<double>(r.mem_peak_bytes) / kMiB);
  if (r.skipped) {
    skipped_steps_.append(step);
    skipped_scales_.append(r.loss_scale);
  }
  if (profiler::has_eval_loss(r)) {
    eval_steps_.append(step);
    eval_loss_.append(r.eval_loss);
  }
  last_ = r;
}

void RunSeries::appendOptimizerSteps(const std::vector<profiler::OptimizerStepRecord>& records) {
  for (size_t begin = 0; begin < records.size();) {
    size_t end = begin;
    int skipped = 0;
    QString names;
    while (end < records.size() && records[end].step == records[begin].step) {
      if (records[end].skipped) {
        ++skipped;
        names += (names.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(records[end].name);
      }
      ++end;
    }
    const double step = static_cast<double>(records[begin].step);
    const auto count = static_cast<int>(end - begin);
    if (skipped > 0) skipped_optimizers_.insert(step, names);
    if (skipped > 0 && skipped < count) {
      const auto it = std::lower_bound(skipped_steps_.begin(), skipped_steps_.end(), step);
      if (it != skipped_steps_.end() && *it == step) {
        const auto i = static_cast<int>(it - skipped_steps_.begin());
        partly_skipped_steps_.append(step);
        partly_skipped_scales_.append(skipped_scales_[i]);
        skipped_steps_.remove(i);
        skipped_scales_.remove(i);
      }
    }
    begin = end;
  }
}

double RunSeries::recentStepTimeMs(int window) const {
  const int n = std::min(window, size());
  if (n == 0) return 0.0;
  double sum = 0.0;
  for (int i = size() - n; i < size(); ++i) sum += step_time_ms_[i];
  return sum / n;
}

}  // namespace ampscope::ui
