#include "ui/widgets/live_plots.h"

#include <QSvgGenerator>

#include <qcustomplot.h>

#include <QFontMetrics>
#include <QGridLayout>
#include <algorithm>
#include <cmath>
#include <vector>

#include "profiler/analysis/step_timing.h"
#include "ui/models/formatting.h"
#include "ui/models/run_series.h"
#include "ui/widgets/plot_fitting.h"
#include "ui/widgets/plot_style.h"

namespace ampscope::ui {
namespace {

// Log axes cannot show zero or negative values; QCustomPlot draws NaN as a gap.
double positiveOrNan(double v) { return v > 0 && std::isfinite(v) ? v : qQNaN(); }

void appendTail(QCPGraph* graph, const QVector<double>& keys, const QVector<double>& values,
                int from, bool positive_only = false) {
  const int n = keys.size() - from;
  if (n <= 0) return;
  QVector<double> k(keys.constBegin() + from, keys.constEnd());
  QVector<double> v(values.constBegin() + from, values.constEnd());
  if (positive_only)
    for (double& x : v) x = positiveOrNan(x);
  graph->addData(k, v, /*alreadySorted=*/true);
}

}  // namespace

LivePlots::LivePlots(QWidget* parent) : QWidget(parent), plots_(kMetricCount, nullptr) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->setSpacing(4);

  QCustomPlot* loss = makePlot(kLoss, tr("Loss"), tr("loss"),
                               tr("Training loss per optimizer step (unscaled) and its exponential "
                                  "moving average (smoothing 0.9, bias-corrected); with --eval-every, "
                                  "the validation loss at the steps after which it ran."));
  loss->addGraph()->setName(tr("raw"));
  loss->addGraph()->setName(tr("smoothed (EMA)"));
  QCPGraph* eval = loss->addGraph();
  eval->setName(tr("eval loss"));
  eval->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
  // Shown in the legend only once a validation ran: most runs have none.
  eval->removeFromLegend();
  loss->legend->setVisible(true);
  moveLegendToTitleRow(loss);

  QCustomPlot* scale = makePlot(kLossScale, tr("Loss scale"), tr("scale"),
                                QString::fromLatin1(glossary::kLossScale) + QLatin1Char('\n') +
                                    QString::fromLatin1(glossary::kSkippedStep));
  useLog2Axis(scale->yAxis);
  scale->addGraph()->setName(tr("loss scale"));
  scale->graph(0)->setLineStyle(QCPGraph::lsStepLeft);
  QCPGraph* skipped = scale->addGraph();
  skipped->setName(tr("skipped step"));
  skipped->setLineStyle(QCPGraph::lsNone);
  skipped->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, 8));
  // GradScaler decides per optimizer: with several, one may skip while another steps.
  QCPGraph* partly = scale->addGraph();
  partly->setName(tr("some optimizers skipped"));
  partly->setLineStyle(QCPGraph::lsNone);
  partly->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangle, 8));
  scale->legend->setVisible(true);
  moveLegendToTitleRow(scale);
  no_scaler_note_ = new QCPItemText(scale);
  no_scaler_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  no_scaler_note_->position->setCoords(0.5, 0.2);
  no_scaler_note_->setText(tr("no loss scaler in this run\n(fp32 and bf16 run at scale 1)"));
  no_scaler_note_->setVisible(false);

  QCustomPlot* norm = makePlot(kGradNorm, tr("Gradient norm"), tr("‖g‖₂"),
                               QString::fromLatin1(glossary::kGradNorm));
  norm->addGraph()->setName(tr("grad norm"));
  // A script that does not clip has no norm per step: the range samples' total, at their steps.
  QCPGraph* sampled = norm->addGraph();
  sampled->setName(tr("at range-sampled steps only"));
  sampled->setLineStyle(QCPGraph::lsLine);
  graph(kGradNorm, 0)->removeFromLegend();
  moveLegendToTitleRow(norm);
  no_grad_norm_note_ = new QCPItemText(norm);
  no_grad_norm_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  no_grad_norm_note_->position->setCoords(0.5, 0.4);
  setPlotNote(no_grad_norm_note_, tr("no finite gradient norm yet"));

  QCustomPlot* lr = makePlot(kLearningRate, tr("Learning rate"), tr("lr"),
                             tr("The learning rate the optimizer used at each step."));
  lr->yAxis->setNumberFormat(QStringLiteral("gb"));
  lr->addGraph()->setName(tr("lr"));
  lr_note_ = new QCPItemText(lr);
  lr_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  lr_note_->position->setCoords(0.5, 0.04);
  lr_note_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
  lr_note_->setVisible(false);

  QCustomPlot* time = makePlot(kStepTime, tr("Step time & throughput"), tr("step time (ms)"),
                               tr("Wall time of each optimizer step (device work included) and "
                                  "samples per second over the effective batch."));
  time->addGraph()->setName(tr("step time (ms)"));
  time->yAxis2->setVisible(true);
  time->yAxis2->setLabel(tr("samples/s"));
  time->addGraph(time->xAxis, time->yAxis2)->setName(tr("samples/s"));
  time->legend->setVisible(true);
  moveLegendToTitleRow(time);
  step_timing_note_ = new QCPItemText(time);
  step_timing_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  step_timing_note_->position->setCoords(0.5, 0.02);
  step_timing_note_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);  // wrapped lines grow downwards
  step_timing_note_->setVisible(false);
  off_scale_note_ = new QCPItemText(time);
  off_scale_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  off_scale_note_->position->setCoords(0.98, 0.96);
  off_scale_note_->setPositionAlignment(Qt::AlignBottom | Qt::AlignRight);
  off_scale_note_->setVisible(false);

  QCustomPlot* memory = makePlot(kMemory, tr("Memory"), tr("MiB"),
                                 tr("CUDA: allocated by live tensors, reserved by the caching "
                                    "allocator, and the peak. CPU: the process's resident set."));
  memory->addGraph()->setName(tr("allocated"));
  memory->addGraph()->setName(tr("reserved"));
  memory->addGraph()->setName(tr("peak"));
  memory->legend->setVisible(true);
  moveLegendToTitleRow(memory);
  memory_note_ = new QCPItemText(memory);
  memory_note_->position->setType(QCPItemPosition::ptAxisRectRatio);
  memory_note_->position->setCoords(0.5, 0.02);
  memory_note_->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
  memory_note_->setVisible(false);

  const Metric order[kMetricCount] = {kLoss,         kLossScale, kGradNorm,
                                      kLearningRate, kStepTime,  kMemory};
  for (int i = 0; i < kMetricCount; ++i) grid->addWidget(plots_[order[i]], i / 2, i % 2);
  applyPalette();
}

QCustomPlot* LivePlots::makePlot(Metric metric, const QString& title, const QString& y_label,
                                 const QString& tooltip) {
  auto* plot = new QCustomPlot(this);
  plot->setObjectName(QStringLiteral("plot_%1").arg(static_cast<int>(metric)));
  plot->setMinimumSize(260, 110);  // three rows of them fit a 768-pixel screen beside the docks
  plot->setProperty("explanation", tooltip);
  plot->setToolTip(tooltip);
  plot->setNoAntialiasingOnDrag(true);
  // Pens wider than 1 px over a long run (min/max zigzags per pixel column) make Qt's
  // polyline stroker cost seconds per replot (bench_ui_replot: 4 s for the six plots
  // at 1M steps); segment-wise lines cost ~60 ms. PDF export (vectorized) keeps polylines.
  plot->setPlottingHint(QCP::phFastPolylines, true);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  addPlotTitle(plot, title);
  plot->xAxis->setLabel(tr("step"));
  plot->yAxis->setLabel(y_label);
  plot->xAxis->setRange(0, 10);
  plot->legend->setVisible(false);
  plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot->axisRect()->setAutoMargins(QCP::msLeft | QCP::msBottom | QCP::msRight | QCP::msTop);
  connect(plot, &QCustomPlot::afterReplot, this, [this] { ++replots_; });
  // A resize rewraps a top note to more or fewer lines: its headroom is recomputed after the
  // layout and before the drawing, so the data never runs through the note at any size.
  connect(plot, &QCustomPlot::afterLayout, this, [this, plot] {
    const QSize size = plot->axisRect()->rect().size();
    if (plot->property("rescaledFor").toSize() == size) return;
    plot->setProperty("rescaledFor", size);
    if (topNoteShare(plot) > 0) rescalePlot(plot);
  });
  connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
          [this, plot] { syncKeyRange(plot); });
  // A drag or wheel zoom means the user wants to look somewhere: stop following.
  connect(plot, &QCustomPlot::mousePress, this, [this] { follow_ = false; });
  connect(plot, &QCustomPlot::mouseWheel, this, [this] { follow_ = false; });
  connect(plot, &QCustomPlot::mouseDoubleClick, this, &LivePlots::followLatest);
  connect(plot, &QCustomPlot::mouseMove, this,
          [this, plot](QMouseEvent* e) { plot->setToolTip(hoverText(plot, e->pos().x())); });
  plots_[metric] = plot;
  return plot;
}

QCPGraph* LivePlots::graph(Metric metric, int g) const { return plots_[metric]->graph(g); }

void LivePlots::setSeries(const RunSeries* series) {
  series_ = series;
  resetData();
}

void LivePlots::setScalerEnabled(bool enabled) {
  no_scaler_note_->setVisible(!enabled);
  plots_[kLossScale]->legend->setVisible(enabled);
  plots_[kLossScale]->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::setMemoryKind(profiler::MemoryKind kind) {
  const bool resident = kind == profiler::MemoryKind::kResidentSet;
  QCustomPlot* memory = plots_[kMemory];
  memory_kind_ = kind;
  graph(kMemory, 0)->setName(resident ? tr("resident set") : tr("allocated"));
  graph(kMemory, 1)->setVisible(!resident);
  if (resident)
    graph(kMemory, 1)->removeFromLegend();
  else
    graph(kMemory, 1)->addToLegend();
  graph(kMemory, 2)->setName(resident ? tr("peak resident set") : tr("peak"));
  // addToLegend appends: keep the legend in the lines' order.
  graph(kMemory, 2)->removeFromLegend();
  graph(kMemory, 2)->addToLegend();
  memory->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::setStepTimingNote(const QString& text) {
  setPlotNote(step_timing_note_, text);
  step_timing_note_->setVisible(!text.isEmpty());
  rescale();  // its headroom
  plots_[kStepTime]->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::setLearningRateNote(const QString& text) {
  setPlotNote(lr_note_, text);
  lr_note_->setVisible(!text.isEmpty());
  rescale();
  plots_[kLearningRate]->replot(QCustomPlot::rpQueuedReplot);
}

QString LivePlots::learningRateNote() const { return lr_note_->visible() ? plotNoteText(lr_note_) : QString(); }

QString LivePlots::offScaleNote() const {
  return off_scale_note_->visible() ? off_scale_note_->text() : QString();
}

std::optional<double> LivePlots::stepTimeCeiling(double key_lower, double key_upper) {
  const RunSeries& s = *series_;
  std::vector<std::pair<int64_t, double>> shown;  // the steps in view
  for (int i = 0; i < s.size(); ++i)
    if (s.steps()[i] >= key_lower && s.steps()[i] <= key_upper)
      shown.emplace_back(static_cast<int64_t>(s.steps()[i]), s.stepTimeMs()[i]);
  const auto scale = profiler::step_time_scale(shown);
  if (!scale) return std::nullopt;
  off_scale_note_->setText(tr("off the scale: %1").arg(QString::fromStdString(scale->describe())));
  return scale->ceiling_ms;
}

void LivePlots::setMemoryNote(const QString& text) {
  setPlotNote(memory_note_, text);
  memory_note_->setVisible(!text.isEmpty());
  rescale();
  plots_[kMemory]->replot(QCustomPlot::rpQueuedReplot);
}

QString LivePlots::memoryNote() const { return memory_note_->visible() ? plotNoteText(memory_note_) : QString(); }

QString LivePlots::stepTimingNote() const {
  return step_timing_note_->visible() ? plotNoteText(step_timing_note_) : QString();
}

void LivePlots::setSampledGradNorms(const QVector<double>& steps, const QVector<double>& norms,
                                    const QString& name) {
  graph(kGradNorm, kSampledGradNormGraph)->setData(steps, norms, true);
  graph(kGradNorm, kSampledGradNormGraph)->setName(name);
  plots_[kGradNorm]->legend->setVisible(!steps.isEmpty());
  no_grad_norm_note_->setVisible(!grad_norm_seen_ && steps.isEmpty());
  rescale();
  plots_[kGradNorm]->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::setGradNormAbsence(const QString& reason) {
  setPlotNote(no_grad_norm_note_, reason);
  plots_[kGradNorm]->replot(QCustomPlot::rpQueuedReplot);
}

QString LivePlots::gradNormNote() const {
  return no_grad_norm_note_->visible() ? plotNoteText(no_grad_norm_note_) : QString();
}

void LivePlots::resetData() {
  points_ = 0;
  grad_norm_seen_ = false;
  no_grad_norm_note_->setVisible(true);
  plots_[kGradNorm]->legend->setVisible(false);
  graph(kLoss, kEvalLossGraph)->removeFromLegend();
  for (QCustomPlot* plot : plots_) {
    for (int g = 0; g < plot->graphCount(); ++g) plot->graph(g)->data()->clear();
    plot->xAxis->setRange(0, 10);
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
  follow_ = true;
}

void LivePlots::appendSteps(int first_new) {
  if (!series_) return;
  // first_new is advisory: the graphs take every point they have not seen yet.
  if (first_new < points_) resetData();  // the series was replaced, not extended
  const RunSeries& s = *series_;
  const int start = points_;
  if (s.size() <= start) return;
  appendTail(graph(kLoss, 0), s.steps(), s.loss(), start);
  appendTail(graph(kLoss, 1), s.steps(), s.lossSmoothed(), start);
  appendTail(graph(kLossScale, 0), s.steps(), s.lossScale(), start, true);
  // Skipped steps and validations are sparse series: re-set them whole, they are short.
  graph(kLossScale, 1)->setData(s.skippedSteps(), s.skippedScales(), true);
  graph(kLossScale, 2)->setData(s.partlySkippedSteps(), s.partlySkippedScales(), true);
  graph(kLoss, kEvalLossGraph)->setData(s.evalSteps(), s.evalLoss(), true);
  if (!s.evalSteps().isEmpty()) graph(kLoss, kEvalLossGraph)->addToLegend();
  appendTail(graph(kGradNorm, 0), s.steps(), s.gradNorm(), start, true);
  for (int i = start; i < s.size() && !grad_norm_seen_; ++i) grad_norm_seen_ = std::isfinite(s.gradNorm()[i]);
  no_grad_norm_note_->setVisible(!grad_norm_seen_ && graph(kGradNorm, kSampledGradNormGraph)->dataCount() == 0);
  appendTail(graph(kLearningRate, 0), s.steps(), s.lr(), start);
  appendTail(graph(kStepTime, 0), s.steps(), s.stepTimeMs(), start);
  appendTail(graph(kStepTime, 1), s.steps(), s.samplesPerSecond(), start);
  appendTail(graph(kMemory, 0), s.steps(), s.memAllocatedMiB(), start);
  appendTail(graph(kMemory, 1), s.steps(), s.memReservedMiB(), start);
  appendTail(graph(kMemory, 2), s.steps(), s.memPeakMiB(), start);
  points_ = s.size();
  rescale();
  for (QCustomPlot* plot : plots_) plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::rescale() {
  for (QCustomPlot* plot : plots_) rescalePlot(plot);
}

void LivePlots::rescalePlot(QCustomPlot* plot) {
  if (!series_ || series_->empty()) return;
  if (follow_) {
    const double last = series_->steps().constLast();
    plot->xAxis->setRange(0, std::max(10.0, last * 1.03));
  }
  const QCPRange keys = plot->xAxis->range();
  for (QCPAxis* axis : {plot->yAxis, plot->yAxis2}) {
    if (!axis->visible()) continue;
    QCPRange range;
    bool any = false;
    for (QCPAbstractPlottable* p : axis->plottables()) {
      bool ok = false;
      const QCPRange r = p->getValueRange(ok, QCP::sdBoth, keys);
      if (!ok) continue;
      range = any ? QCPRange(std::min(range.lower, r.lower), std::max(range.upper, r.upper)) : r;
      any = true;
    }
    if (!any) continue;
    std::optional<double> ceiling;
    if (plot == plots_[kStepTime] && axis == plot->yAxis) {
      ceiling = stepTimeCeiling(keys.lower, keys.upper);
      off_scale_note_->setVisible(ceiling.has_value());
    }
    // A note at the plot's top (what the step times include, the memory peak) gets the
    // axis's top share it covers, so no line runs through its text.
    const double headroom = topNoteShare(plot);
    const auto above = [headroom](double lower, double upper) { return lower + (upper - lower) / (1.0 - headroom); };
    if (ceiling) {
      axis->setRange(0, above(0, *ceiling * 1.15));
    } else if (axis->scaleType() == QCPAxis::stLogarithmic) {
      axis->setRange(range.lower / 2.0, range.upper * 2.0);
    } else {
      const double pad =
          range.size() > 0 ? range.size() * 0.08 : std::max(1e-9, std::abs(range.upper) * 0.1);
      const bool non_negative = range.lower >= 0;
      const double lower = non_negative ? std::max(0.0, range.lower - pad) : range.lower - pad;
      axis->setRange(lower, above(lower, range.upper + pad));
    }
  }
}

double LivePlots::topNoteShare(const QCustomPlot* plot) const {
  for (const QCPItemText* note : {step_timing_note_, memory_note_, lr_note_}) {
    if (note->parentPlot() != plot || !note->visible()) continue;
    const int height = plot->axisRect()->height(), width = plot->axisRect()->width();
    if (height <= 0) return 0.0;
    // As the layout watcher wraps it (plot_fitting.h), which may not have run yet; it keeps
    // the note to the top 40 %.
    const QFontMetrics metrics(note->font());
    const QString text = width > 0 ? wrapToWidth(plotNoteText(note), metrics, width) : note->text();
    const double lines = static_cast<double>(text.count(QLatin1Char('\n')) + 1);
    return std::min(0.45, (lines * metrics.lineSpacing() + 6.0) / height);
  }
  return 0.0;
}

QString LivePlots::hoverText(QCustomPlot* plot, int x) const {
  const QString explanation = plot->property("explanation").toString();
  if (!series_ || series_->empty()) return explanation;
  const RunSeries& s = *series_;
  const double key = plot->xAxis->pixelToCoord(x);
  const auto& steps = s.steps();
  auto it = std::lower_bound(steps.constBegin(), steps.constEnd(), key);
  if (it == steps.constEnd()) --it;
  if (it != steps.constBegin() && key - *(it - 1) < *it - key) --it;
  const int i = static_cast<int>(it - steps.constBegin());
  auto row = [](const QString& name, const QString& value) {
    return QStringLiteral("<tr><td>%1</td><td align=right>&nbsp;%2</td></tr>").arg(name, value);
  };
  QString rows = row(tr("step"), QString::number(steps[i]));
  rows += row(tr("loss"), QString::number(s.loss()[i], 'g', 5));
  rows += row(tr("smoothed"), QString::number(s.lossSmoothed()[i], 'g', 5));
  if (const qsizetype e = s.evalSteps().indexOf(steps[i]); e >= 0)
    rows += row(tr("eval loss"), QString::number(s.evalLoss()[e], 'g', 5));
  rows += row(tr("loss scale"), QString::number(s.lossScale()[i], 'g', 8));
  if (std::isfinite(s.gradNorm()[i]) || graph(kGradNorm, kSampledGradNormGraph)->dataCount() == 0) {
    rows += row(tr("grad norm"), QString::number(s.gradNorm()[i], 'g', 4));
  } else if (const auto sampled = graph(kGradNorm, kSampledGradNormGraph)->data()->findBegin(steps[i], false);
             sampled != graph(kGradNorm, kSampledGradNormGraph)->data()->constEnd() && sampled->key == steps[i]) {
    rows += row(tr("grad norm"), tr("%1 (range sample)").arg(QString::number(sampled->value, 'g', 4)));
  }
  rows += row(tr("lr"), QString::number(s.lr()[i], 'g', 4));
  rows += row(tr("step time"), QStringLiteral("%1 ms").arg(s.stepTimeMs()[i], 0, 'f', 1));
  rows += row(tr("samples/s"), formatCount(s.samplesPerSecond()[i]));
  rows += row(memory_kind_ == profiler::MemoryKind::kResidentSet ? tr("resident set") : tr("memory"),
              QStringLiteral("%1 MiB").arg(s.memAllocatedMiB()[i], 0, 'f', 1));
  if (const QString which = s.skippedOptimizers(steps[i]); !which.isEmpty())
    rows += row(tr("skipped"), tr("%1: inf/NaN in its gradients").arg(which));
  else if (s.skippedSteps().contains(steps[i]))
    rows += row(tr("skipped"), tr("yes: inf/NaN gradient"));
  return QStringLiteral("<table>%1</table><p><i>%2</i></p>").arg(rows, explanation.toHtmlEscaped());
}

void LivePlots::syncKeyRange(QCustomPlot* source) {
  if (syncing_) return;
  syncing_ = true;
  for (QCustomPlot* plot : plots_) {
    if (plot == source) continue;
    plot->xAxis->setRange(source->xAxis->range());
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
  syncing_ = false;
}

void LivePlots::followLatest() {
  follow_ = true;
  rescale();
  for (QCustomPlot* plot : plots_) plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::applyPalette() {
  const QPalette pal = palette();
  for (QCustomPlot* plot : plots_) applyPlotStyle(plot, pal);
  no_scaler_note_->setColor(pal.color(QPalette::PlaceholderText));
  step_timing_note_->setColor(pal.color(QPalette::PlaceholderText));
  memory_note_->setColor(pal.color(QPalette::PlaceholderText));
  off_scale_note_->setColor(pal.color(QPalette::PlaceholderText));
  no_grad_norm_note_->setColor(pal.color(QPalette::PlaceholderText));
  lr_note_->setColor(seriesColors(pal).danger);
  // The notes sit over the data: a veil of the background under their text, as under the legends.
  QColor veil = pal.color(QPalette::Base);
  veil.setAlpha(200);
  for (QCPItemText* note : {step_timing_note_, lr_note_, off_scale_note_, memory_note_}) note->setBrush(veil);
  styleGraphs();
  for (QCustomPlot* plot : plots_) plot->replot(QCustomPlot::rpQueuedReplot);
}

void LivePlots::styleGraphs() {
  const SeriesColors c = seriesColors(palette());
  QColor raw = c.primary;
  raw.setAlpha(90);
  graph(kLoss, 0)->setPen(QPen(raw, 1));
  graph(kLoss, 1)->setPen(QPen(c.primary, 2));
  graph(kLoss, kEvalLossGraph)->setPen(QPen(c.secondary, 1.5));
  graph(kLoss, kEvalLossGraph)
      ->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(c.secondary, 1.5), c.secondary, 6));
  graph(kLossScale, 0)->setPen(QPen(c.tertiary, 2));
  graph(kLossScale, 1)->setPen(QPen(c.danger, 2));
  graph(kLossScale, 1)
      ->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssCross, QPen(c.danger, 2), Qt::NoBrush, 8));
  graph(kLossScale, 2)->setPen(QPen(c.warning, 2));
  graph(kLossScale, 2)
      ->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssTriangle, QPen(c.warning, 2), Qt::NoBrush, 8));
  graph(kGradNorm, 0)->setPen(QPen(c.accent, 1.5));
  graph(kGradNorm, kSampledGradNormGraph)->setPen(QPen(c.accent, 1));
  graph(kGradNorm, kSampledGradNormGraph)
      ->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(c.accent, 1.5), c.accent, 6));
  graph(kLearningRate, 0)->setPen(QPen(c.warning, 1.5));
  graph(kStepTime, 0)->setPen(QPen(c.primary, 1.5));
  graph(kStepTime, 1)->setPen(QPen(c.secondary, 1.5));
  graph(kMemory, 0)->setPen(QPen(c.primary, 1.5));
  QColor fill = c.primary;
  fill.setAlpha(35);
  graph(kMemory, 0)->setBrush(fill);
  graph(kMemory, 1)->setPen(QPen(c.tertiary, 1.5));
  graph(kMemory, 2)->setPen(QPen(c.danger, 1, Qt::DashLine));
  styleAxis(plots_[kStepTime]->yAxis2, palette());
  plots_[kStepTime]->yAxis->setLabelColor(c.primary);
  plots_[kStepTime]->yAxis2->setLabelColor(c.secondary);
}

void LivePlots::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QWidget::changeEvent(event);
}

bool LivePlots::exportImage(const QString& path) {
  // One page per plot would split the overview: vector formats get the plot under
  // focus (or the loss); raster formats get all six as they are on screen.
  QCustomPlot* plot = plots_[kLoss];
  for (QCustomPlot* p : plots_)
    if (p->hasFocus()) plot = p;
  if (path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)) return plot->savePdf(path);
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(plot->size());
    svg.setViewBox(QRect(QPoint(0, 0), plot->size()));
    svg.setTitle(QStringLiteral("ampscope plot"));
    QCPPainter painter;
    if (!painter.begin(&svg)) return false;
    plot->toPainter(&painter, plot->width(), plot->height());
    return painter.end();
  }
  return grab().save(path);
}

}  // namespace ampscope::ui
