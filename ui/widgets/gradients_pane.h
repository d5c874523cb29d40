#pragma once
// Where the unscaled gradients lie against the range of fp16 (or bf16, fp8 e4m3,
// fp8 e5m2: a combo picks whose limits are drawn), from the profiler's
// GradientSample statistics:
//  - a heatmap: parameters (rows) × log2|g| bins (columns), each row normalized
//    to its own element count, with fp16's subnormal floor 2^-24, smallest normal
//    2^-14 and max 65504 drawn at the current loss scale, i.e. divided by it,
//    because the heatmap shows unscaled gradients and fp16 holds g * scale;
//  - or the heatmap over time: sampled steps (columns) × log2|g| bins (rows), from
//    the snapshot's gradient_history, summed over all parameters or for the
//    selected one, with the fp16 limits following each step's loss scale;
//  - the selected parameter's histogram with the underflow, subnormal and
//    overflow zones shaded and their fractions written.
#include <QWidget>
#include <array>
#include <string>
#include <vector>

#include "profiler/analysis/profile_snapshot.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPGraph;
class QCPBars;
class QLabel;
class QStackedWidget;

namespace ampscope::ui {

// The over-time heatmap's data: one column per sampled step (ascending), raw
// element counts per log2|g| bin.
struct GradientHistoryMap {
  std::vector<int64_t> steps;
  std::vector<double> loss_scales;  // per column: the scale in force at that step
  std::vector<std::array<int64_t, profiler::kGradBins>> counts;
};

// Sums the samples' histograms per step; only `parameter`'s when it is not empty.
GradientHistoryMap gradientHistoryMap(const std::vector<profiler::GradientSample>& history,
                                      const std::string& parameter = {});

class GradientsPane : public QWidget {
  Q_OBJECT
 public:
  enum class HeatmapMode { kLatest, kOverTimeAll, kOverTimeSelected };

  explicit GradientsPane(QWidget* parent = nullptr);

  void setSnapshot(profiler::ProfileSnapshotPtr snapshot);
  // The shown run's precision ("fp32", "fp16", "bf16"; "" unknown): a run in another precision
  // than fp16 is told which fp16 loss scales would carry its gradients (loss_scale_window.h).
  void setRunPrecision(const QString& precision);
  void selectParameter(int index);
  int parameterCount() const;
  void setHeatmapMode(HeatmapMode mode);
  HeatmapMode heatmapMode() const;
  // The format whose limits the plots draw (fp16 at first); the text lists every format.
  void setShownFormat(profiler::FloatFormat format);
  profiler::FloatFormat shownFormat() const;
  QCustomPlot* heatmapPlot() const { return heatmap_; }
  QCPColorMap* heatmapMap() const { return map_; }
  // What the over-time heatmap shows (empty in the latest-sample mode).
  const GradientHistoryMap& historyMap() const { return history_; }
  QCustomPlot* histogramPlot() const { return histogram_; }
  QString fractionsText() const;  // what the histogram writes about the selected parameter
  // Where forward activations overflowed fp16 (the first module), or that none did.
  QString activationText() const;
  // Beside it: where a non-finite gradient started in backward, at the checked steps.
  QString backwardText() const;
  // Below them: which steps were sampled, and readiness on which samples ("" when unknown).
  QString samplingText() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QString waitingHint() const;  // before any profile: the profiler has not reported yet
  void rebuildHeatmap();
  void rebuildLatestHeatmap();
  void rebuildHistoryHeatmap();
  void rebuildHistogram();
  void drawFormatLimits(QCustomPlot* plot, double log2_scale, bool with_labels);
  void updateLimitTooltips();
  void applyPalette();
  QString zerosAndLossScaleWindowText() const;

  profiler::ProfileSnapshotPtr snapshot_;
  QString run_precision_;
  QStackedWidget* stack_ = nullptr;
  QLabel* hint_ = nullptr;  // page 0: why there is nothing to show
  QComboBox* parameter_ = nullptr;
  QComboBox* mode_ = nullptr;
  QComboBox* format_ = nullptr;  // whose limits are drawn
  QLabel* scale_label_ = nullptr;
  QLabel* activation_label_ = nullptr;
  QLabel* backward_label_ = nullptr;
  QLabel* sampling_label_ = nullptr;  // how the range samples were taken
  QLabel* fractions_label_ = nullptr;  // fractions_, beside the histogram
  QCustomPlot* heatmap_ = nullptr;
  QCPColorMap* map_ = nullptr;
  QCPGraph* limit_graphs_[3] = {};  // the shown format's limits per step, over-time mode only
  GradientHistoryMap history_;
  QCustomPlot* histogram_ = nullptr;
  QCPBars* bars_ = nullptr;
  QString fractions_;
};

}  // namespace ampscope::ui
