// How long one immediate replot takes with 1,000,000 steps on screen:
//  - a bare QCustomPlot set up like the loss plot (raw + smoothed, 2 graphs), 1400x400;
//  - the LivePlots pane itself (all six metric plots) fed from a RunSeries of 1M steps.
// Offscreen (QT_QPA_PLATFORM=offscreen unless set), so it measures QCustomPlot's
// drawing into the backing store, not a compositor. Figures go into docs/performance.md.
#include <benchmark/benchmark.h>
#include <qcustomplot.h>

#include <QApplication>
#include <cmath>
#include <cstdio>
#include <random>

#include "profiler/records.h"
#include "ui/models/run_series.h"
#include "ui/widgets/live_plots.h"

namespace {

constexpr int kPoints = 1'000'000;

// A loss curve that looks like training: exponential decay, noise, a few spikes.
std::vector<double> lossCurve() {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.08);
  std::vector<double> loss(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    const double base = 0.4 + 2.6 * std::exp(-i / 150'000.0);
    loss[static_cast<size_t>(i)] = base * (1.0 + noise(rng)) + (i % 97'331 == 0 ? 1.5 : 0.0);
  }
  return loss;
}

void BM_QCustomPlotLossReplot(benchmark::State& state) {
  QCustomPlot plot;
  plot.resize(1400, 400);
  // Arg 1: the plotting hint LivePlots sets (segment-wise lines for wide pens).
  plot.setPlottingHint(QCP::phFastPolylines, state.range(0) != 0);
  state.SetLabel(state.range(0) != 0 ? "phFastPolylines" : "default hints");
  QCPGraph* raw = plot.addGraph();
  QCPGraph* smooth = plot.addGraph();
  raw->setPen(QPen(QColor(120, 160, 220, 120), 1));
  smooth->setPen(QPen(QColor(30, 90, 200), 2));
  const std::vector<double> loss = lossCurve();
  QVector<double> keys(kPoints), raw_values(kPoints), smooth_values(kPoints);
  double ema = loss.front();
  for (int i = 0; i < kPoints; ++i) {
    keys[i] = i + 1;
    raw_values[i] = loss[static_cast<size_t>(i)];
    ema = 0.98 * ema + 0.02 * loss[static_cast<size_t>(i)];
    smooth_values[i] = ema;
  }
  raw->setData(keys, raw_values, true);
  smooth->setData(keys, smooth_values, true);
  plot.rescaleAxes();
  plot.show();
  QCoreApplication::processEvents();
  for (auto _ : state) plot.replot(QCustomPlot::rpImmediateRefresh);
  state.counters["points_per_graph"] = kPoints;
}

void BM_LivePlotsReplot(benchmark::State& state) {
  ampscope::ui::RunSeries series;
  const std::vector<double> loss = lossCurve();
  for (int i = 0; i < kPoints; ++i) {
    ampscope::profiler::StepRecord r;
    r.step = i + 1;
    r.loss = loss[static_cast<size_t>(i)];
    r.lr = 1e-3 * (0.5 + 0.5 * std::cos(i * M_PI / kPoints));
    r.loss_scale = std::ldexp(1.0, 16 - (i / 200'000));
    r.skipped = i % 50'000 == 0;
    r.found_inf = r.skipped;
    r.grad_norm = 1.0 + 0.1 * std::sin(i * 1e-3);
    r.step_time_ms = 12.0 + (i % 1000 == 0 ? 30.0 : 0.0);
    series.append(r);
  }
  ampscope::ui::LivePlots plots;
  plots.resize(1400, 1800);  // six plots in a column, ~300 px each
  plots.setSeries(&series);
  plots.setScalerEnabled(true);
  plots.show();
  plots.appendSteps(0);
  QCoreApplication::processEvents();
  // Arg: one metric's plot (LivePlots::Metric), or kMetricCount for all six.
  const int metric = static_cast<int>(state.range(0));
  const bool all = metric == ampscope::ui::LivePlots::kMetricCount;
  for (auto _ : state) {
    for (int m = 0; m < ampscope::ui::LivePlots::kMetricCount; ++m)
      if (all || m == metric)
        plots.plot(static_cast<ampscope::ui::LivePlots::Metric>(m))
            ->replot(QCustomPlot::rpImmediateRefresh);
  }
  static const char* const kNames[] = {"loss",      "loss scale", "grad norm",    "lr",
                                       "step time", "memory",     "all six plots"};
  const QSize size = plots
                         .plot(static_cast<ampscope::ui::LivePlots::Metric>(
                             all ? ampscope::ui::LivePlots::kLoss : metric))
                         ->size();
  state.SetLabel(QStringLiteral("%1 (plot %2x%3)")
                     .arg(QString::fromLatin1(kNames[metric]))
                     .arg(size.width())
                     .arg(size.height())
                     .toStdString());
  state.counters["points_per_graph"] = plots.graph(ampscope::ui::LivePlots::kLoss, 0)->dataCount();
}

BENCHMARK(BM_QCustomPlotLossReplot)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_LivePlotsReplot)
    ->DenseRange(0, ampscope::ui::LivePlots::kMetricCount)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) {
  // Widgets need a platform; offscreen works without a display (CI, SSH).
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
