#include "ui/widgets/gradients_pane.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <cctype>
#include <cmath>
#include <map>

#include "profiler/analysis/activation_coverage.h"
#include "profiler/analysis/loss_scale_window.h"
#include "profiler/store/session_view.h"
#include "ui/models/formatting.h"
#include "ui/widgets/pane_hint.h"
#include "ui/widgets/plot_fitting.h"
#include "ui/widgets/plot_style.h"
#include "ui/widgets/scroll_area.h"

namespace ampscope::ui {
namespace {

using profiler::kGradBins;
using profiler::kGradLog2Min;

using profiler::FloatFormatLimits;

QString formatName(const FloatFormatLimits& f) {
  return QString::fromLatin1(f.name.data(), static_cast<qsizetype>(f.name.size()));
}

QCPColorGradient viridis() {
  QCPColorGradient g;
  g.clearColorStops();
  g.setColorStopAt(0.0, QColor(68, 1, 84));
  g.setColorStopAt(0.25, QColor(59, 82, 139));
  g.setColorStopAt(0.5, QColor(33, 145, 140));
  g.setColorStopAt(0.75, QColor(94, 201, 98));
  g.setColorStopAt(1.0, QColor(253, 231, 37));
  g.setColorInterpolation(QCPColorGradient::ciRGB);
  g.setNanHandling(QCPColorGradient::nhTransparent);
  return g;
}

using Histogram = std::array<int64_t, kGradBins>;

// The occupied log2 range of the histograms, widened to show the format's limits at
// every loss scale in [2^log2_scale_lo, 2^log2_scale_hi].
QCPRange occupiedRange(const std::vector<Histogram>& histograms, const FloatFormatLimits& format,
                       double log2_scale_lo, double log2_scale_hi) {
  int lo = kGradBins, hi = -1;
  for (const auto& h : histograms)
    for (int b = 0; b < kGradBins; ++b)
      if (h[b] > 0) {
        lo = std::min(lo, b);
        hi = std::max(hi, b);
      }
  double lower = profiler::log2_min_subnormal(format) - log2_scale_hi - 2;
  double upper = profiler::log2_max(format) - log2_scale_lo + 2;
  if (hi >= 0) {
    lower = std::min(lower, static_cast<double>(kGradLog2Min + lo) - 1);
    upper = std::max(upper, static_cast<double>(kGradLog2Min + hi) + 2);
  }
  return QCPRange(std::max<double>(lower, kGradLog2Min), std::min<double>(upper, -kGradLog2Min));
}

QCPRange occupiedRange(const std::vector<profiler::GradientSample>& samples, const FloatFormatLimits& format,
                       double log2_scale) {
  std::vector<Histogram> histograms;
  histograms.reserve(samples.size());
  for (const auto& s : samples) histograms.push_back(s.log2_histogram);
  return occupiedRange(histograms, format, log2_scale, log2_scale);
}

double log2Scale(double loss_scale) { return std::log2(std::max(1e-300, loss_scale)); }

// A colour-map cell: the bin's share of the row's (or column's) elements; empty
// bins stay transparent and tiny shares stay visible.
double cellShare(int64_t count, int64_t total) {
  const double share = total > 0 ? static_cast<double>(count) / static_cast<double>(total) : 0.0;
  return share > 0 ? std::max(share, 0.02) : qQNaN();
}

QString pct(double f) {
  if (std::isnan(f)) return QStringLiteral("—");  // not measured (an older session)
  return f > 0 && f < 0.001 ? QStringLiteral("<0.1 %")
                            : QStringLiteral("%1 %").arg(f * 100, 0, 'f', 1);
}

}  // namespace

GradientHistoryMap gradientHistoryMap(const std::vector<profiler::GradientSample>& history,
                                      const std::string& parameter) {
  // Grouped by step rather than trusting the order, so a session's samples work too.
  std::map<int64_t, std::pair<double, Histogram>> by_step;
  for (const auto& s : history) {
    auto it = by_step.try_emplace(s.step, s.loss_scale, Histogram{}).first;
    if (!parameter.empty() && s.parameter != parameter) continue;
    for (int b = 0; b < kGradBins; ++b) it->second.second[b] += s.log2_histogram[b];
  }
  GradientHistoryMap map;
  for (const auto& [step, entry] : by_step) {
    map.steps.push_back(step);
    map.loss_scales.push_back(entry.first);
    map.counts.push_back(entry.second);
  }
  return map;
}

GradientsPane::GradientsPane(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  stack_ = new QStackedWidget;
  layout->addWidget(stack_);
  hint_ = makeHintLabel(waitingHint());
  stack_->addWidget(hint_);

  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  parameter_ = new QComboBox;
  parameter_->setMinimumContentsLength(28);
  parameter_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  parameter_->setToolTip(
      tr("The parameter whose histogram is shown; a click on a heatmap row selects it too"));
  scale_label_ = new QLabel;
  scale_label_->setObjectName(QStringLiteral("gradientScaleLine"));
  scale_label_->setToolTip(
      QString::fromLatin1(glossary::kLossScale) +
      tr("\n\nThe plots show nonzero |g| only. Exact zeros are counted apart: no cast can lose them, "
         "and under fp16 autocast the backward computes in fp16, so what fp16 cannot hold is already "
         "0 before the unscale."));
  mode_ = new QComboBox;
  mode_->setObjectName(QStringLiteral("heatmapMode"));
  mode_->addItem(tr("latest sample"), static_cast<int>(HeatmapMode::kLatest));
  mode_->addItem(tr("over time · all parameters"), static_cast<int>(HeatmapMode::kOverTimeAll));
  mode_->addItem(tr("over time · selected parameter"),
                 static_cast<int>(HeatmapMode::kOverTimeSelected));
  mode_->setToolTip(
      tr("Latest sample: one row per parameter. Over time: one column per sampled step (the "
         "last 64), summed over all parameters or for the selected one"));
  format_ = new QComboBox;
  format_->setObjectName(QStringLiteral("rangeFormat"));
  for (const FloatFormatLimits& f : profiler::kFloatFormats) {
    format_->addItem(formatName(f), static_cast<int>(f.format));
    format_->setItemData(format_->count() - 1, glossary::formatDescription(f.format), Qt::ToolTipRole);
  }
  format_->setToolTip(tr("The format whose limits are drawn: where g * loss scale would flush to zero, "
                         "turn subnormal or overflow if cast to it"));
  bar->addWidget(new QLabel(tr("Heatmap")));
  bar->addWidget(mode_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Limits of")));
  bar->addWidget(format_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Parameter")));
  bar->addWidget(parameter_, 1);
  column->addLayout(bar);
  // On its own line, wrapped: beside the combos it set the pane's least width to 1,200 pixels.
  scale_label_->setWordWrap(true);
  column->addWidget(scale_label_);
  activation_label_ = new QLabel;
  activation_label_->setObjectName(QStringLiteral("activationOverflow"));
  activation_label_->setWordWrap(true);
  activation_label_->setToolTip(
      tr("Forward activations: each module's output at the sampled steps, against fp16's range. The first "
         "module to overflow is where the inf starts; the modules after it inherit it."));
  activation_label_->setVisible(false);
  column->addWidget(activation_label_);
  backward_label_ = new QLabel;
  backward_label_->setObjectName(QStringLiteral("backwardOrigin"));
  backward_label_->setWordWrap(true);
  backward_label_->setToolTip(
      tr("Backward: at the gradient-sampled steps and the steps after a skipped one or a growth of the loss scale, "
         "each module's input and "
         "output gradients are tested for inf/NaN as backward produces them. The first non-finite one names "
         "the module whose backward made it (its input gradient), or at whose output it arrived."));
  backward_label_->setVisible(false);
  column->addWidget(backward_label_);
  sampling_label_ = new QLabel;
  sampling_label_->setObjectName(QStringLiteral("rangeSampling"));
  sampling_label_->setWordWrap(true);
  sampling_label_->setForegroundRole(QPalette::PlaceholderText);
  sampling_label_->setToolTip(
      tr("Which steps were sampled: every K steps (--grad-every), spaced further when samples cost more than "
         "the budget's share of the run's time (--sample-budget), and on which samples precision readiness "
         "was measured (--readiness-every)"));
  sampling_label_->setVisible(false);
  column->addWidget(sampling_label_);

  auto* split = new QSplitter(Qt::Vertical);
  heatmap_ = new QCustomPlot;
  heatmap_->setObjectName(QStringLiteral("gradientHeatmap"));
  addPlotTitle(heatmap_, tr("Unscaled gradient magnitudes per parameter"));
  heatmap_->xAxis->setLabel(tr("log₂|g|"));
  heatmap_->yAxis->setTickLabelRotation(0);
  map_ = new QCPColorMap(heatmap_->xAxis, heatmap_->yAxis);
  map_->setInterpolate(false);
  map_->setTightBoundary(true);
  auto* scale_bar = new QCPColorScale(heatmap_);
  heatmap_->plotLayout()->addElement(1, 1, scale_bar);
  scale_bar->setLabel(tr("share of elements"));
  scale_bar->setBarWidth(10);
  // The map takes the scale's gradient when attached, so the gradient goes on the scale.
  map_->setColorScale(scale_bar);
  scale_bar->setGradient(viridis());
  scale_bar->setDataRange(QCPRange(0, 1));
  // Step lines, because the limits move with the loss scale from one sampled step to the next.
  for (QCPGraph*& graph : limit_graphs_) {
    graph = heatmap_->addGraph();
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setVisible(false);
  }
  updateLimitTooltips();
  connect(heatmap_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    if (heatmapMode() != HeatmapMode::kLatest) return;  // rows are log2 bins there
    const int row = static_cast<int>(std::lround(heatmap_->yAxis->pixelToCoord(e->pos().y())));
    if (row >= 0 && row < parameterCount()) selectParameter(row);
  });

  histogram_ = new QCustomPlot;
  histogram_->setObjectName(QStringLiteral("gradientHistogram"));
  addPlotTitle(histogram_, tr("Selected parameter"));
  histogram_->xAxis->setLabel(tr("log₂|g|"));
  histogram_->yAxis->setLabel(tr("elements"));
  bars_ = new QCPBars(histogram_->xAxis, histogram_->yAxis);
  bars_->setWidth(0.9);
  // The selected parameter's shares per format beside its histogram, not over its bars.
  auto* selected = new QWidget;
  auto* selected_row = new QHBoxLayout(selected);
  selected_row->setContentsMargins(0, 0, 0, 0);
  fractions_label_ = new QLabel;
  fractions_label_->setObjectName(QStringLiteral("gradientFractions"));
  fractions_label_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  fractions_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Six lines: clipped in a short dock rather than holding the dock (and the window) tall.
  fractions_label_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored);
  fractions_label_->setToolTip(
      tr("The selected parameter's unscaled gradient elements that a cast to each format at the current loss "
         "scale would flush to zero, leave subnormal or overflow"));
  selected_row->addWidget(fractions_label_);
  selected_row->addWidget(histogram_, 1);
  split->addWidget(heatmap_);
  split->addWidget(selected);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  column->addWidget(split, 1);
  stack_->addWidget(inScrollArea(content));

  connect(parameter_, &QComboBox::currentIndexChanged, this, [this] {
    if (heatmapMode() == HeatmapMode::kOverTimeSelected) rebuildHeatmap();
    rebuildHistogram();
  });
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] {
    if (snapshot_ && !snapshot_->latest_gradients.empty()) rebuildHeatmap();
  });
  connect(format_, &QComboBox::currentIndexChanged, this, [this] {
    updateLimitTooltips();
    if (!snapshot_ || snapshot_->latest_gradients.empty()) return;
    rebuildHeatmap();
    rebuildHistogram();
  });
  applyPalette();
}

int GradientsPane::parameterCount() const {
  return snapshot_ ? static_cast<int>(snapshot_->latest_gradients.size()) : 0;
}

QString GradientsPane::fractionsText() const { return fractions_; }

QString GradientsPane::activationText() const { return activation_label_->text(); }

QString GradientsPane::backwardText() const { return backward_label_->text(); }

QString GradientsPane::samplingText() const { return sampling_label_->text(); }

void GradientsPane::selectParameter(int index) { parameter_->setCurrentIndex(index); }

void GradientsPane::setHeatmapMode(HeatmapMode mode) {
  mode_->setCurrentIndex(mode_->findData(static_cast<int>(mode)));
}

GradientsPane::HeatmapMode GradientsPane::heatmapMode() const {
  return static_cast<HeatmapMode>(mode_->currentData().toInt());
}

void GradientsPane::setShownFormat(profiler::FloatFormat format) {
  format_->setCurrentIndex(format_->findData(static_cast<int>(format)));
}

profiler::FloatFormat GradientsPane::shownFormat() const {
  return static_cast<profiler::FloatFormat>(format_->currentData().toInt());
}

void GradientsPane::updateLimitTooltips() {
  const profiler::FloatFormat f = shownFormat();
  heatmap_->setToolTip(glossary::subnormalFloor(f) + QLatin1Char('\n') + glossary::smallestNormal(f) +
                       QLatin1Char('\n') + glossary::formatMax(f));
}

QString GradientsPane::waitingHint() const {
  return tr("%1\nGradient range statistics (log2|g| per parameter against fp16's limits) are "
            "sampled by the profiler during the run.")
      .arg(QString::fromLatin1(kProfilerHint));
}

void GradientsPane::setSnapshot(profiler::ProfileSnapshotPtr snapshot) {
  snapshot_ = std::move(snapshot);
  if (!snapshot_ || snapshot_->latest_gradients.empty()) {
    // A profile without samples says why (the run is shorter than the spacing, or sampling
    // is off), and still shows what the backward checks found.
    QString text = snapshot_ ? QString::fromStdString(profiler::no_gradient_sample_text(*snapshot_)) : QString();
    const std::string backward = snapshot_ ? profiler::backward_inf_text(snapshot_->backward_inf) : std::string();
    if (!backward.empty()) text += tr("\n\nBackward: %1").arg(QString::fromStdString(backward));
    hint_->setText(text.isEmpty() ? waitingHint() : text);
    stack_->setCurrentIndex(0);
    return;
  }
  stack_->setCurrentIndex(1);
  if (const auto& first = snapshot_->first_fp16_overflow) {
    activation_label_->setText(tr("Activations: the first module whose output overflowed fp16 is %1 (step %2, "
                                  "%3 output, %4 inf/NaN)")
                                   .arg(QString::fromStdString(first->module))
                                   .arg(first->step)
                                   .arg(shortDtype(first->dtype), pct(first->nonfinite_fraction)));
  } else {
    activation_label_->setText(
        snapshot_->latest_activations.empty()
            ? QString()
            : tr("Activations: no module output overflowed fp16 (%1 modules at step %2)")
                  .arg(snapshot_->latest_activations.size())
                  .arg(snapshot_->latest_activations.front().step));
  }
  // What the statement above cannot cover: the modules inside torch.compile'd graphs.
  QString unmeasured = QString::fromStdString(
      profiler::unmeasured_activations_text(profiler::modules_unmeasured_in_compiled_graphs(*snapshot_)));
  if (!unmeasured.isEmpty()) {
    unmeasured[0] = unmeasured[0].toUpper();
    activation_label_->setText(activation_label_->text() + QLatin1Char('\n') + unmeasured);
  }
  activation_label_->setVisible(!activation_label_->text().isEmpty());
  const std::string backward = profiler::backward_inf_text(snapshot_->backward_inf);
  backward_label_->setText(backward.empty() ? QString() : tr("Backward: %1").arg(QString::fromStdString(backward)));
  backward_label_->setVisible(!backward.empty());
  sampling_label_->setText(snapshot_->range_sampling.empty()
                               ? QString()
                               : tr("Samples: %1").arg(QString::fromStdString(snapshot_->range_sampling)));
  sampling_label_->setVisible(!sampling_label_->text().isEmpty());
  const QString selected = parameter_->currentText();
  QSignalBlocker block(parameter_);
  parameter_->clear();
  for (const auto& g : snapshot_->latest_gradients)
    parameter_->addItem(QString::fromStdString(g.parameter));
  const int keep = parameter_->findText(selected);
  parameter_->setCurrentIndex(keep >= 0 ? keep : 0);
  rebuildHeatmap();
  rebuildHistogram();
}

void GradientsPane::drawFormatLimits(QCustomPlot* plot, double log2_scale, bool with_labels) {
  const SeriesColors c = seriesColors(palette());
  const profiler::FloatFormat format = shownFormat();
  const FloatFormatLimits& f = profiler::float_format(format);
  const QString name = formatName(f);
  struct Limit {
    double log2;
    QString label;
    QColor color;
  };
  const Limit limits[] = {
      {profiler::log2_min_subnormal(f) - log2_scale, tr("%1 zero below").arg(name), c.danger},
      {profiler::log2_min_normal(f) - log2_scale, tr("%1 normal").arg(name), c.warning},
      {profiler::log2_max(f) - log2_scale, tr("%1 max").arg(name), c.danger}};
  for (const Limit& limit : limits) {
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(limit.log2, 0);
    line->point2->setCoords(limit.log2, 1);
    line->setPen(QPen(limit.color, 1.5, Qt::DashLine));
    if (!with_labels) continue;
    auto* text = new QCPItemText(plot);
    text->position->setTypeX(QCPItemPosition::ptPlotCoords);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(limit.log2, 0.0);
    text->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
    text->setText(limit.label);
    text->setColor(limit.color);
    text->setBrush(QBrush(palette().color(QPalette::Base)));
    text->setPadding(QMargins(2, 1, 2, 1));
    QFont f = text->font();
    f.setPointSizeF(8);
    text->setFont(f);
  }
}

void GradientsPane::rebuildHeatmap() {
  heatmap_->clearItems();
  if (heatmapMode() == HeatmapMode::kLatest)
    rebuildLatestHeatmap();
  else
    rebuildHistoryHeatmap();
  heatmap_->replot(QCustomPlot::rpQueuedReplot);
}

void GradientsPane::rebuildLatestHeatmap() {
  history_ = {};
  for (QCPGraph* graph : limit_graphs_) graph->setVisible(false);
  const auto& samples = snapshot_->latest_gradients;
  const int rows = static_cast<int>(samples.size());
  const double log2_scale = log2Scale(samples.front().loss_scale);
  map_->data()->setSize(kGradBins, rows);
  map_->data()->setRange(QCPRange(kGradLog2Min + 0.5, kGradLog2Min + kGradBins - 0.5),
                         QCPRange(0, std::max(0, rows - 1)));
  QVector<double> ticks;
  QVector<QString> labels;
  for (int r = 0; r < rows; ++r) {
    const auto& s = samples[static_cast<size_t>(r)];
    int64_t total = 0;
    for (int64_t count : s.log2_histogram) total += count;
    for (int b = 0; b < kGradBins; ++b)
      map_->data()->setCell(b, r, cellShare(s.log2_histogram[b], total));
    ticks << r;
    labels << QString::fromStdString(s.parameter);
  }
  heatmap_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  heatmap_->xAxis->setLabel(tr("log₂|g|"));
  setFittingTextTicks(heatmap_->yAxis, ticks, labels);  // as many names as the pane's height writes apart
  heatmap_->yAxis->setLabel(QString());
  heatmap_->yAxis->setRange(-0.5, rows - 0.5);
  heatmap_->yAxis->setRangeReversed(true);
  const FloatFormatLimits& format = profiler::float_format(shownFormat());
  heatmap_->xAxis->setRange(occupiedRange(samples, format, log2_scale));
  drawFormatLimits(heatmap_, log2_scale, true);
  if (auto* title = qobject_cast<QCPTextElement*>(heatmap_->plotLayout()->element(0, 0)))
    title->setText(tr("Unscaled gradient magnitudes per parameter"));
  scale_label_->setText(
      tr("step %1 · loss scale 2^%2 · %3 limits drawn at g = limit / scale")
          .arg(snapshot_->step)
          .arg(log2_scale, 0, 'f', std::abs(log2_scale - std::round(log2_scale)) < 1e-9 ? 0 : 1)
          .arg(formatName(format)) +
      zerosAndLossScaleWindowText());
}

void GradientsPane::rebuildHistoryHeatmap() {
  const bool selected = heatmapMode() == HeatmapMode::kOverTimeSelected;
  const std::string parameter = selected ? parameter_->currentText().toStdString() : std::string();
  // A snapshot without history (an older producer) still has its latest sample: one column.
  const auto& source =
      snapshot_->gradient_history.empty() ? snapshot_->latest_gradients : snapshot_->gradient_history;
  history_ = gradientHistoryMap(source, parameter);
  const int columns = static_cast<int>(history_.steps.size());
  map_->data()->setSize(columns, kGradBins);
  map_->data()->setRange(QCPRange(0, std::max(0, columns - 1)),
                         QCPRange(kGradLog2Min + 0.5, kGradLog2Min + kGradBins - 0.5));
  double lo_scale = 0, hi_scale = 0;
  QVector<double> ticks;
  QVector<QString> labels;
  for (int c = 0; c < columns; ++c) {
    const auto& counts = history_.counts[static_cast<size_t>(c)];
    int64_t total = 0;
    for (int64_t count : counts) total += count;
    for (int b = 0; b < kGradBins; ++b) map_->data()->setCell(c, b, cellShare(counts[b], total));
    const double l = log2Scale(history_.loss_scales[static_cast<size_t>(c)]);
    lo_scale = c == 0 ? l : std::min(lo_scale, l);
    hi_scale = c == 0 ? l : std::max(hi_scale, l);
    ticks << c;
    labels << QString::number(history_.steps[static_cast<size_t>(c)]);
  }
  setFittingTextTicks(heatmap_->xAxis, ticks, labels);
  heatmap_->xAxis->setLabel(tr("sampled step"));
  heatmap_->xAxis->setRange(-0.5, columns - 0.5);
  heatmap_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
  heatmap_->yAxis->setLabel(tr("log₂|g|"));
  heatmap_->yAxis->setRangeReversed(false);
  const FloatFormatLimits& format = profiler::float_format(shownFormat());
  heatmap_->yAxis->setRange(occupiedRange(history_.counts, format, lo_scale, hi_scale));

  // Each limit as a step line over the columns, at that step's scale; labelled at the right
  // end, i.e. at the current scale.
  const SeriesColors colors = seriesColors(palette());
  const double limits[] = {profiler::log2_min_subnormal(format), profiler::log2_min_normal(format),
                           profiler::log2_max(format)};
  const QString name = formatName(format);
  const QString names[] = {tr("%1 zero below").arg(name), tr("%1 normal").arg(name), tr("%1 max").arg(name)};
  const QColor pens[] = {colors.danger, colors.warning, colors.danger};
  for (int i = 0; i < 3; ++i) {
    QVector<double> keys, values;
    for (int c = 0; c < columns; ++c) {
      keys << c - 0.5;
      values << limits[i] - log2Scale(history_.loss_scales[static_cast<size_t>(c)]);
    }
    if (columns > 0) {
      keys << columns - 0.5;
      values << values.back();
    }
    limit_graphs_[i]->setData(keys, values, true);
    limit_graphs_[i]->setPen(QPen(pens[i], 1.5, Qt::DashLine));
    limit_graphs_[i]->setVisible(columns > 0);
    if (columns == 0) continue;
    auto* text = new QCPItemText(heatmap_);
    text->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    text->position->setTypeY(QCPItemPosition::ptPlotCoords);
    text->position->setCoords(1.0, values.back());
    text->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    text->setText(names[i]);
    text->setColor(pens[i]);
    text->setBrush(QBrush(palette().color(QPalette::Base)));
    text->setPadding(QMargins(2, 1, 2, 1));
    QFont f = text->font();
    f.setPointSizeF(8);
    text->setFont(f);
  }
  if (auto* title = qobject_cast<QCPTextElement*>(heatmap_->plotLayout()->element(0, 0)))
    title->setText(selected
                       ? tr("Unscaled gradient magnitudes of %1 over sampled steps")
                             .arg(QString::fromStdString(parameter))
                       : tr("Unscaled gradient magnitudes over sampled steps, all parameters"));
  const double current = columns > 0 ? log2Scale(history_.loss_scales.back()) : 0.0;
  scale_label_->setText(
      tr("%1 sampled steps up to %2 · loss scale 2^%3 · %4 limits drawn at g = limit / scale")
          .arg(columns)
          .arg(columns > 0 ? history_.steps.back() : snapshot_->step)
          .arg(current, 0, 'f', std::abs(current - std::round(current)) < 1e-9 ? 0 : 1)
          .arg(name) +
      zerosAndLossScaleWindowText());
}

void GradientsPane::setRunPrecision(const QString& precision) {
  if (precision == run_precision_) return;
  run_precision_ = precision;
  if (snapshot_ && !snapshot_->latest_gradients.empty()) rebuildHeatmap();
}

// The heatmaps and histogram show nonzero |g| only. Zeros are what no cast can lose, and
// where an fp16 backward's own flushed values are (it computes in fp16, before the unscale):
// at a collapsed loss scale every gradient is zero and the plots are empty.
QString GradientsPane::zerosAndLossScaleWindowText() const {
  if (snapshot_->latest_gradients.empty()) return {};
  const profiler::GradientStepSummary total = profiler::summarize_gradients(snapshot_->latest_gradients);
  if (total.all_zero()) return tr(" · every gradient element at step %1 is exactly 0").arg(total.step);
  QString text = tr(" · %1 of elements exactly 0 at step %2").arg(pct(total.zero_fraction)).arg(total.step);
  // In an fp16 run the backward flushed the small ones already: the window would read low.
  if (!run_precision_.isEmpty() && run_precision_ != QLatin1String("fp16"))
    if (const auto window = profiler::loss_scale_window(snapshot_->latest_gradients)) {
      std::string sentence = profiler::loss_scale_window_text(*window);
      sentence[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(sentence[0])));
      text += QLatin1Char('\n') + QString::fromStdString(sentence);
    }
  return text;
}

void GradientsPane::rebuildHistogram() {
  histogram_->clearItems();
  const int index = parameter_->currentIndex();
  if (!snapshot_ || index < 0 || index >= parameterCount()) {
    fractions_.clear();
    fractions_label_->clear();
    return;
  }
  const auto& s = snapshot_->latest_gradients[static_cast<size_t>(index)];
  const double log2_scale = std::log2(std::max(1e-300, s.loss_scale));
  QVector<double> keys, values;
  for (int b = 0; b < kGradBins; ++b) {
    keys << kGradLog2Min + b + 0.5;
    values << static_cast<double>(s.log2_histogram[b]);
  }
  bars_->setData(keys, values, true);
  const FloatFormatLimits& format = profiler::float_format(shownFormat());
  const QCPRange range = occupiedRange({s}, format, log2_scale);
  histogram_->xAxis->setRange(range);
  bool ok = false;
  const QCPRange counts = bars_->getValueRange(ok, QCP::sdBoth, range);
  histogram_->yAxis->setRange(0, ok ? counts.upper * 1.15 + 1 : 1);

  const SeriesColors c = seriesColors(palette());
  auto shade = [&](double x0, double x1, QColor color) {
    auto* rect = new QCPItemRect(histogram_);
    rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    rect->topLeft->setCoords(x0, 0);
    rect->bottomRight->setCoords(x1, 1);
    color.setAlpha(40);
    rect->setBrush(color);
    rect->setPen(Qt::NoPen);
    rect->setLayer(QStringLiteral("background"));
  };
  const double floor_log2 = profiler::log2_min_subnormal(format) - log2_scale;
  shade(kGradLog2Min, floor_log2, c.danger);
  shade(floor_log2, profiler::log2_min_normal(format) - log2_scale, c.warning);
  shade(profiler::log2_max(format) - log2_scale, -kGradLog2Min, c.danger);
  drawFormatLimits(histogram_, log2_scale, false);

  // The shown format in words, then every format's shares, one line each.
  const profiler::FormatRangeShares shown = profiler::range_shares(s, format.format);
  fractions_ = tr("underflow (→ 0 in %1) %2 · subnormal %3 · overflow (→ %4) %5\nzeros %6 · "
                  "non-finite %7 · %8 elements, max |g| %9")
                   .arg(formatName(format), pct(shown.underflow), pct(shown.subnormal),
                        format.has_inf ? QStringLiteral("inf") : QStringLiteral("NaN"), pct(shown.overflow),
                        pct(s.zero_fraction), pct(s.nonfinite_fraction),
                        formatCount(static_cast<double>(s.numel)))
                   .arg(s.max_abs, 0, 'g', 3);
  for (const FloatFormatLimits& f : profiler::kFloatFormats) {
    const profiler::FormatRangeShares r = profiler::range_shares(s, f.format);
    fractions_ += tr("\n%1: → 0 %2 · subnormal %3 · overflow %4")
                      .arg(formatName(f), pct(r.underflow), pct(r.subnormal), pct(r.overflow));
  }
  fractions_label_->setText(fractions_);
  if (auto* title = qobject_cast<QCPTextElement*>(histogram_->plotLayout()->element(0, 0)))
    title->setText(tr("%1 at step %2").arg(QString::fromStdString(s.parameter)).arg(s.step));
  histogram_->replot(QCustomPlot::rpQueuedReplot);
}

void GradientsPane::applyPalette() {
  applyPlotStyle(heatmap_, palette());
  applyPlotStyle(histogram_, palette());
  for (QCPAxis* axis : {map_->colorScale()->axis()}) styleAxis(axis, palette());
  const SeriesColors c = seriesColors(palette());
  bars_->setPen(Qt::NoPen);
  bars_->setBrush(c.primary);
  if (snapshot_ && !snapshot_->latest_gradients.empty()) {
    rebuildHeatmap();
    rebuildHistogram();
  }
}

void GradientsPane::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) applyPalette();
  QWidget::changeEvent(event);
}

}  // namespace ampscope::ui
