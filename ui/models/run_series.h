#pragma once
// The per-step metrics of one run, stored column-wise for the plots. Only the
// GUI thread touches it: the controller appends what it drained from the event
// queue, and the plots read the columns (each remembers how many points it has
// already taken, so an update costs only the new points).
#include <QHash>
#include <QString>
#include <QVector>
#include <cstdint>
#include <vector>

#include "profiler/records.h"

namespace ampscope::ui {

class RunSeries {
 public:
  // TensorBoard-style exponential moving average with bias correction, so the
  // smoothed curve starts at the first loss instead of rising from zero.
  explicit RunSeries(double smoothing = 0.9) : smoothing_(smoothing) {}

  void clear();
  void append(const profiler::StepRecord& record);
  // GradScaler's per-optimizer decisions, for steps of several optimizers (multi-loss, Python
  // loops), after those steps' records: a step where some optimizers skipped and others
  // stepped moves from the skipped series to the partly skipped one.
  void appendOptimizerSteps(const std::vector<profiler::OptimizerStepRecord>& records);

  int size() const { return static_cast<int>(steps_.size()); }
  bool empty() const { return steps_.isEmpty(); }
  const profiler::StepRecord& last() const { return last_; }
  int64_t skippedCount() const { return static_cast<int64_t>(skipped_steps_.size()); }
  double smoothing() const { return smoothing_; }

  const QVector<double>& steps() const { return steps_; }
  const QVector<double>& loss() const { return loss_; }
  const QVector<double>& lossSmoothed() const { return loss_smoothed_; }
  const QVector<double>& lossScale() const { return loss_scale_; }
  const QVector<double>& lr() const { return lr_; }
  const QVector<double>& gradNorm() const { return grad_norm_; }
  const QVector<double>& stepTimeMs() const { return step_time_ms_; }
  const QVector<double>& samplesPerSecond() const { return samples_per_second_; }
  const QVector<double>& memAllocatedMiB() const { return mem_allocated_mib_; }
  const QVector<double>& memReservedMiB() const { return mem_reserved_mib_; }
  const QVector<double>& memPeakMiB() const { return mem_peak_mib_; }
  // Steps whose optimizer update was skipped (an inf/NaN gradient), with the scale they used.
  const QVector<double>& skippedSteps() const { return skipped_steps_; }
  const QVector<double>& skippedScales() const { return skipped_scales_; }
  // Steps where only some of the optimizers skipped, with the scale they used.
  const QVector<double>& partlySkippedSteps() const { return partly_skipped_steps_; }
  const QVector<double>& partlySkippedScales() const { return partly_skipped_scales_; }
  // The optimizers that skipped at `step` ("adamw (model B)"), when the step had several; else empty.
  QString skippedOptimizers(double step) const { return skipped_optimizers_.value(step); }
  // Steps after which validation ran (--eval-every), with their eval loss: a sparse series.
  const QVector<double>& evalSteps() const { return eval_steps_; }
  const QVector<double>& evalLoss() const { return eval_loss_; }
  // Mean step time over the last `window` steps, in ms; 0 when empty.
  double recentStepTimeMs(int window = 20) const;

 private:
  double smoothing_;
  double ema_ = 0.0;
  int ema_count_ = 0;
  profiler::StepRecord last_;
  QVector<double> steps_, loss_, loss_smoothed_, loss_scale_, lr_, grad_norm_, step_time_ms_,
      samples_per_second_, mem_allocated_mib_, mem_reserved_mib_, mem_peak_mib_, skipped_steps_,
      skipped_scales_, partly_skipped_steps_, partly_skipped_scales_, eval_steps_, eval_loss_;
  QHash<double, QString> skipped_optimizers_;
};

}  // namespace ampscope::ui
