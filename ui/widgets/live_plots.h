#pragma once
// The run's live metrics, one small plot per metric on a shared step axis:
// loss (raw + smoothed, the eval loss where validation ran), loss scale (log2, a marker on every skipped step),
// gradient norm, learning rate, step time & throughput, memory.
//
// Repaint rule: appendSteps() only copies the new points into the graphs and
// asks for a queued replot (QCustomPlot::rpQueuedReplot), which Qt coalesces
// into one repaint per event-loop pass; the controller calls appendSteps at most
// once per ~33 ms tick, so the plots never repaint more than ~30 times a second.
#include <QPalette>
#include <QVector>
#include <QWidget>
#include <optional>

#include "profiler/memory_kind.h"

class QCustomPlot;
class QCPGraph;
class QCPItemText;

namespace ampscope::ui {

class RunSeries;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  enum Metric { kLoss, kLossScale, kGradNorm, kLearningRate, kStepTime, kMemory, kMetricCount };
  // The loss plot's graphs: 0 raw, 1 smoothed, then the validation loss (points at the
  // steps after which validation ran, joined by a line).
  static constexpr int kEvalLossGraph = 2;
  // The gradient-norm plot's graphs: 0 every step's norm, 1 the range-sampled steps' (points).
  static constexpr int kSampledGradNormGraph = 1;

  explicit LivePlots(QWidget* parent = nullptr);

  // The series the plots read; not owned, lives as long as the controller.
  void setSeries(const RunSeries* series);
  QCustomPlot* plot(Metric metric) const { return plots_[metric]; }
  // Graph g of a metric's plot; for tests and export.
  QCPGraph* graph(Metric metric, int g) const;
  // Replots actually drawn since construction, over all plots.
  int replotCount() const { return replots_; }
  void setScalerEnabled(bool enabled);
  // What the memory plot's lines are (profiler/memory_kind.h): CUDA's allocated, reserved
  // and peak, or the CPU's resident set and its peak (the reserved line hidden: it repeats it).
  void setMemoryKind(profiler::MemoryKind kind);
  // Under the step-time plot's title: what the times include (profiled steps are slower
  // by capture); "" hides it.
  void setStepTimingNote(const QString& text);
  QString stepTimingNote() const;  // the note's text while shown, else empty
  // Under the memory plot's title: the peak the steps outside range samples reached, where
  // the samples raised it (a high-water mark stays raised); "" hides it.
  void setMemoryNote(const QString& text);
  QString memoryNote() const;  // the note's text while shown, else empty
  // Steps far slower than the others in view (profiler::step_time_scale: a compiling
  // first step) are left off the step-time axis, so the others stay readable, and named
  // in a note on the plot: "off the scale: step 1 (15.02 s)". Empty while none is.
  QString offScaleNote() const;
  // On the learning-rate plot, in the warning colour: schedulers that advanced after
  // optimizer steps GradScaler skipped; "" hides it.
  void setLearningRateNote(const QString& text);
  QString learningRateNote() const;  // the note's text while shown, else empty
  // What the gradient-norm plot says while it has no finite point (a script that
  // does not clip gradients has no norm to show).
  void setGradNormAbsence(const QString& reason);
  // The gradient norm at the range-sampled steps (profiler::SessionView::sampled_gradient_norms), drawn
  // as points where the steps have no norm of their own; finite values only. Cleared with
  // the data (resetData): set it after the steps.
  void setSampledGradNorms(const QVector<double>& steps, const QVector<double>& norms,
                           const QString& name = tr("at range-sampled steps only"));
  QString gradNormNote() const;  // the note's text while shown, else empty
  bool exportImage(const QString& path);  // .png/.jpg (all plots), .pdf/.svg (vector, the focused plot)

 public slots:
  void resetData();
  void appendSteps(int first_new);
  void applyPalette();
  void followLatest();  // back to auto-ranging after a zoom or drag

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QCustomPlot* makePlot(Metric metric, const QString& title, const QString& y_label,
                        const QString& tooltip);
  void styleGraphs();
  void rescale();  // every plot
  void rescalePlot(QCustomPlot* plot);
  // The step-time axis's upper end without the outlying steps, and the note naming them;
  // nullopt when no step is an outlier among those in `keys`.
  std::optional<double> stepTimeCeiling(double key_lower, double key_upper);
  void syncKeyRange(QCustomPlot* source);
  // The share of the plot's height its visible top note takes (0 without one), kept free of data.
  double topNoteShare(const QCustomPlot* plot) const;
  // The run's values at the step nearest to pixel x, for the plot's tooltip.
  QString hoverText(QCustomPlot* plot, int x) const;

  const RunSeries* series_ = nullptr;
  QVector<QCustomPlot*> plots_;
  QCPItemText* no_scaler_note_ = nullptr;
  QCPItemText* step_timing_note_ = nullptr;
  QCPItemText* off_scale_note_ = nullptr;
  QCPItemText* lr_note_ = nullptr;
  QCPItemText* memory_note_ = nullptr;
  QCPItemText* no_grad_norm_note_ = nullptr;
  bool grad_norm_seen_ = false;  // a finite gradient norm among the points copied
  int points_ = 0;  // points already copied into the graphs
  int replots_ = 0;
  profiler::MemoryKind memory_kind_ = profiler::MemoryKind::kCudaAllocator;
  bool follow_ = true;
  bool syncing_ = false;
};

}  // namespace ampscope::ui
